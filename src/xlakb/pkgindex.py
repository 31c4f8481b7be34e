"""A small client of the "simple" repository API that installers read.

Asks for PEP 691 JSON and accepts PEP 503 HTML, as pip and uv do: some indexes
(and mirrors or proxies in front of PyPI) answer the HTML page whatever the
request asks for.  Whichever comes back is parsed by its declared content
type, file names with :mod:`packaging`, HTML with the standard library's parser
(no regular expressions over markup).  Anything else is one clear error that
names the URL and what came back.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from html.parser import HTMLParser

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from .errors import XlakbError

JSON_TYPES = ("application/vnd.pypi.simple.v1+json", "application/vnd.pypi.simple.latest+json")
HTML_TYPES = ("application/vnd.pypi.simple.v1+html", "application/vnd.pypi.simple.latest+html", "text/html")
#: JSON preferred, HTML accepted (PEP 691's content negotiation)
ACCEPT = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"


@dataclass(frozen=True)
class ProjectPage:
    """What the index lists for one project: file names (and the versions it states, PEP 700)."""

    url: str
    content_type: str
    filenames: tuple[str, ...]
    stated_versions: tuple[str, ...] = ()

    def versions(self, *, final_only: bool = True) -> list[str]:
        """Versions with at least one file (or stated by the index), oldest first."""
        found: set[Version] = set()
        for name in self.filenames:
            version = version_of(name)
            if version is not None:
                found.add(version)
        for text in self.stated_versions:
            try:
                found.add(Version(text))
            except InvalidVersion:
                continue
        if final_only:
            found = {v for v in found if not (v.is_prerelease or v.is_devrelease)}
        return [str(v) for v in sorted(found)]


def version_of(filename: str) -> Version | None:
    """The version in a wheel or sdist file name, None when the name is neither."""
    try:
        if filename.endswith(".whl"):
            return parse_wheel_filename(filename)[1]
        if filename.endswith((".tar.gz", ".zip")):
            return parse_sdist_filename(filename)[1]
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None
    return None


class _Anchors(HTMLParser):
    """The anchors of a PEP 503 page: their text is the file name, their href points at the file."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.files: list[str] = []
        self._href: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self._href = dict(attrs).get("href") or ""
            self._text = []

    def handle_data(self, data):
        if self._href is not None:
            self._text.append(data)

    def handle_endtag(self, tag):
        if tag == "a" and self._href is not None:
            text = "".join(self._text).strip()
            if not text:  # fall back on the href's last path segment, without its #hash
                text = self._href.split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1]
            self.files.append(text)
            self._href = None


def _media_type(header: str | None) -> str:
    return (header or "").split(";", 1)[0].strip().lower()


def _preview(body: bytes) -> str:
    text = body[:60].decode("utf-8", "replace")
    return repr(" ".join(text.split()))


def parse_page(url: str, content_type: str, body: bytes) -> ProjectPage:
    """Parse a project page by its declared content type; XlakbError for anything else."""
    media = _media_type(content_type)
    if media in JSON_TYPES:
        try:
            data = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as err:
            raise XlakbError(
                f"cannot read the package index at {url}: it says {media} but the body is not JSON "
                f"({err.__class__.__name__}; it starts {_preview(body)})"
            ) from None
        if not isinstance(data, dict) or not isinstance(data.get("files", []), list):
            raise XlakbError(f"cannot read the package index at {url}: the JSON has no 'files' list")
        names = tuple(str(f.get("filename", "")) for f in data.get("files", []) if isinstance(f, dict))
        stated = tuple(str(v) for v in data.get("versions") or [])
        return ProjectPage(url, media, names, stated)
    if media in HTML_TYPES:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise XlakbError(
                f"cannot read the package index at {url}: it says {media} but the body is not UTF-8 text "
                f"(it starts {_preview(body)})"
            ) from None
        parser = _Anchors()
        parser.feed(text)
        parser.close()
        return ProjectPage(url, media, tuple(parser.files))
    raise XlakbError(
        f"cannot read the package index at {url}: it answered with content type {content_type or '(none)'!r}, "
        f"neither PEP 691 JSON nor PEP 503 HTML (the body starts {_preview(body)})",
        hint="pass --index-url with the index's simple API root, e.g. https://pypi.org/simple",
    )


def project_page(index_url: str, project: str, *, timeout: float = 30) -> ProjectPage:
    """Fetch and parse ``<index_url>/<project>/``."""
    url = f"{index_url.rstrip('/')}/{canonicalize_name(project)}/"
    request = urllib.request.Request(url, headers={"Accept": ACCEPT, "User-Agent": "xlakb"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            content_type = response.headers.get("Content-Type", "")
            body = response.read()
    except urllib.error.HTTPError as err:
        raise XlakbError(f"cannot read the package index at {url}: HTTP {err.code} {err.reason}") from None
    except (urllib.error.URLError, OSError) as err:
        reason = getattr(err, "reason", err)
        raise XlakbError(f"cannot read the package index at {url}: {reason}") from None
    return parse_page(url, content_type, body)
