"""Nightly wheels of torch_xla (and the matching torch) as bisection candidates.

Nightlies are addressed by date.  Where they live is a URL template with
three placeholders: ``{date}`` (YYYYMMDD), ``{version}`` (the dev base
version, e.g. ``2.7.0``) and ``{py}`` (the CPython tag, e.g. ``cp311``).  The
defaults follow the public naming:

* torch_xla — the pytorch/xla README ("Use nightly build after 08/20/2024"):
  ``https://storage.googleapis.com/pytorch-xla-releases/wheels/tpuvm/torch_xla-2.5.0.dev20240820-cp310-cp310-linux_x86_64.whl``
* torch — the PyTorch nightly CPU index, whose wheels are named
  ``torch-<version>.dev<date>+cpu-<py>-<py>-manylinux_2_28_x86_64.whl`` (the
  ``+`` URL-encoded; before late 2024 the platform tag was ``linux_x86_64``).

Override them with the arguments ``torch_xla_url=``/``torch_url=`` or the
environment variables ``XLAKB_NIGHTLY_TORCH_XLA_URL``/``XLAKB_NIGHTLY_TORCH_URL``
(arguments win).  Templates may point at a mirror or a ``file://`` directory.

**Missing dates.**  A day whose torch_xla or torch wheel does not exist (HTTP
404/410) is *left out* of :func:`list_nightlies`' result by default, so the
search never spends a probe on it; its date is reported through
``progress.info`` and kept in the ``missing`` list of
:class:`NightlyRange`.  Pass ``include_missing=True`` to keep such days as
candidates with ``meta["missing"] = True`` and empty wheel paths (the engine
must then record them as SKIP without probing).

Listing only checks that the wheels exist (HEAD requests); :func:`fetch_nightly`
downloads them through a :class:`WheelCache` when a probe needs them.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import http.client
import json
import os
import re
import string
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

from filelock import FileLock, Timeout

from xlakb.candidates import Arg, Candidate, Source
from xlakb.errors import WheelNotFound, XlakbError
from xlakb.progress import NullProgress, Progress

__all__ = [
    "DEFAULT_TORCH_XLA_URL",
    "DEFAULT_TORCH_URL",
    "ENV_TORCH_XLA_URL",
    "ENV_TORCH_URL",
    "WheelNotFound",
    "WheelCache",
    "NightlyRange",
    "nightly_templates",
    "format_url",
    "url_exists",
    "list_nightlies",
    "fetch_nightly",
]

DEFAULT_TORCH_XLA_URL = (
    "https://storage.googleapis.com/pytorch-xla-releases/wheels/tpuvm/torch_xla-{version}.dev{date}-{py}-{py}-linux_x86_64.whl"
)
DEFAULT_TORCH_URL = (
    "https://download.pytorch.org/whl/nightly/cpu/torch-{version}.dev{date}%2Bcpu-{py}-{py}-manylinux_2_28_x86_64.whl"
)
ENV_TORCH_XLA_URL = "XLAKB_NIGHTLY_TORCH_XLA_URL"
ENV_TORCH_URL = "XLAKB_NIGHTLY_TORCH_URL"

_PLACEHOLDERS = {"date", "version", "py"}
_SHA256_RE = re.compile(r"^[0-9a-fA-F]{64}$")
_MISSING_STATUS = (404, 410)
_USER_AGENT = "xlakb (https://github.com/pytorch/xla bug knowledge base)"


# --------------------------------------------------------------------------- URLs
def nightly_templates(torch_xla_url: str | None = None, torch_url: str | None = None) -> tuple[str, str]:
    """The (torch_xla, torch) URL templates in force: argument, else environment, else default."""
    xla = torch_xla_url or os.environ.get(ENV_TORCH_XLA_URL) or DEFAULT_TORCH_XLA_URL
    torch = torch_url or os.environ.get(ENV_TORCH_URL) or DEFAULT_TORCH_URL
    for template in (xla, torch):
        _check_template(template)
    return xla, torch


def _check_template(template: str) -> None:
    try:
        fields = {f for _, f, _, _ in string.Formatter().parse(template) if f is not None}
    except ValueError as err:
        raise XlakbError(f"nightly URL template {template!r} is malformed: {err}") from err
    unknown = fields - _PLACEHOLDERS
    if unknown:
        raise XlakbError(
            f"nightly URL template {template!r} uses unknown placeholder(s) {sorted(unknown)}",
            hint="use only {date} (YYYYMMDD), {version} (e.g. 2.7.0) and {py} (e.g. cp311)",
        )
    if "date" not in fields:
        raise XlakbError(f"nightly URL template {template!r} has no {{date}} placeholder")


def format_url(template: str, *, date: _dt.date | str, version: str, py: str) -> str:
    """Fill a template; ``date`` is a date or YYYY-MM-DD / YYYYMMDD string."""
    _check_template(template)
    day = _as_date(date, "date")
    return template.format(date=day.strftime("%Y%m%d"), version=version, py=py)


def _as_date(value: _dt.date | str, what: str) -> _dt.date:
    if isinstance(value, _dt.datetime):
        return value.date()
    if isinstance(value, _dt.date):
        return value
    text = str(value).strip()
    for fmt in ("%Y-%m-%d", "%Y%m%d"):
        try:
            return _dt.datetime.strptime(text, fmt).date()
        except ValueError:
            pass
    raise XlakbError(f"{what} {value!r} is not a date", hint="write it as YYYY-MM-DD")


def _request(url: str, method: str = "GET") -> urllib.request.Request:
    return urllib.request.Request(url, method=method, headers={"User-Agent": _USER_AGENT})


def url_exists(url: str, *, timeout: float = 30.0) -> tuple[bool, int | None]:
    """Whether ``url`` exists, and its size when the server says (HEAD request;
    a GET that is closed at once when HEAD is not allowed).  404/410 -> False;
    other failures raise XlakbError."""
    url, _ = urllib.parse.urldefrag(url)
    for method in ("HEAD", "GET"):
        try:
            with urllib.request.urlopen(_request(url, method), timeout=timeout) as resp:
                length = resp.headers.get("Content-Length")
                return True, int(length) if length and length.isdigit() else None
        except urllib.error.HTTPError as err:
            if err.code in _MISSING_STATUS:
                return False, None
            if method == "HEAD" and err.code in (405, 501):
                continue
            raise XlakbError(f"checking {url} failed: HTTP {err.code} {err.reason}") from err
        except (urllib.error.URLError, OSError) as err:
            if isinstance(err, urllib.error.URLError) and isinstance(err.reason, FileNotFoundError):
                return False, None  # file:// URL of an absent file
            raise XlakbError(
                f"checking {url} failed: {getattr(err, 'reason', err)}", hint="check the network or the nightly URL template"
            ) from err
    return False, None  # pragma: no cover - the loop always returns or raises


# --------------------------------------------------------------------------- cache
class WheelCache:
    """Downloads each URL once into ``cache_dir``, verified, atomically.

    A file is only ever cached complete: it is streamed into a temporary file
    beside its final place, its size checked against ``Content-Length`` (and
    ``size=`` when given) and its sha256 against the first of: ``sha256=``,
    a ``#sha256=<hex>`` URL fragment (PEP 503), a ``<url>.sha256`` sidecar
    file; then renamed into place.  A file lock makes concurrent callers (in
    threads or processes) download it once.  A failed check raises
    XlakbError and leaves nothing behind.
    """

    def __init__(
        self,
        cache_dir: str | os.PathLike,
        *,
        timeout: float = 60.0,
        chunk_size: int = 1 << 20,
        lock_timeout: float = 3600.0,
    ) -> None:
        self.cache_dir = Path(cache_dir)
        self.timeout = timeout
        self.chunk_size = chunk_size
        self.lock_timeout = lock_timeout

    def path_for(self, url: str) -> Path:
        """Where ``url`` is (or would be) cached: ``<cache>/wheels/<hash of url>/<file name>``."""
        bare, _ = urllib.parse.urldefrag(url)
        key = hashlib.sha256(bare.encode()).hexdigest()[:16]
        name = urllib.parse.unquote(urllib.parse.urlsplit(bare).path.rsplit("/", 1)[-1])
        name = name.replace("/", "_").replace(os.sep, "_").lstrip(".") or "download"
        return self.cache_dir / "wheels" / key / name

    def cached(self, url: str) -> Path | None:
        """The cached file for ``url``, or None when it is not downloaded yet."""
        path = self.path_for(url)
        return path if path.is_file() else None

    def record(self, url: str) -> dict | None:
        """What was verified when ``url`` was cached (url, size, sha256), or None."""
        meta = self.path_for(url).parent / "download.json"
        try:
            return json.loads(meta.read_text())
        except (OSError, ValueError):
            return None

    def get(
        self,
        url: str,
        *,
        sha256: str | None = None,
        size: int | None = None,
        sidecar: bool = True,
        progress: Progress | None = None,
    ) -> Path:
        """The local path of ``url``, downloading it first unless cached.

        Raises :class:`WheelNotFound` for HTTP 404/410, XlakbError for any
        other failure, a short/long download or a checksum mismatch.
        """
        progress = progress or NullProgress()
        final = self.path_for(url)
        if final.is_file():
            progress.info(f"cached: {final.name}")
            return final
        final.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(final.parent / (final.name + ".lock")), timeout=self.lock_timeout)
        try:
            with lock:
                if final.is_file():  # another process finished it while we waited
                    progress.info(f"cached: {final.name}")
                    return final
                self._download(url, final, sha256=sha256, size=size, sidecar=sidecar, progress=progress)
        except Timeout as err:
            raise XlakbError(
                f"timed out after {self.lock_timeout:.0f}s waiting for the lock on {final}",
                hint="another xlakb process is downloading it; wait, or delete the .lock file if none runs",
            ) from err
        return final

    # ------------------------------------------------------------------ internals
    def _expected_sha256(self, url: str, given: str | None, sidecar: bool) -> tuple[str | None, str | None]:
        """(hex digest, where it came from) or (None, None)."""
        if given:
            return _check_hex(given, "sha256 argument"), "argument"
        bare, fragment = urllib.parse.urldefrag(url)
        frag = urllib.parse.parse_qs(fragment)
        if "sha256" in frag:
            return _check_hex(frag["sha256"][0], f"#sha256 fragment of {url}"), "url fragment"
        if sidecar and urllib.parse.urlsplit(bare).scheme in ("http", "https"):
            side = bare + ".sha256"
            try:
                with urllib.request.urlopen(_request(side), timeout=self.timeout) as resp:
                    text = resp.read(4096).decode("ascii", "replace")
            except urllib.error.HTTPError:
                return None, None  # no sidecar published
            except (urllib.error.URLError, OSError) as err:
                raise XlakbError(f"fetching checksum {side} failed: {getattr(err, 'reason', err)}") from err
            token = text.split()[0] if text.split() else ""
            return _check_hex(token, f"checksum file {side}"), side
        return None, None

    def _download(
        self, url: str, final: Path, *, sha256: str | None, size: int | None, sidecar: bool, progress: Progress
    ) -> None:
        bare, _ = urllib.parse.urldefrag(url)
        expected, source = self._expected_sha256(url, sha256, sidecar)
        try:
            resp = urllib.request.urlopen(_request(bare), timeout=self.timeout)
        except urllib.error.HTTPError as err:
            if err.code in _MISSING_STATUS:
                raise WheelNotFound(f"{bare} does not exist (HTTP {err.code})") from err
            raise XlakbError(f"downloading {bare} failed: HTTP {err.code} {err.reason}") from err
        except (urllib.error.URLError, OSError) as err:
            reason = getattr(err, "reason", err)
            if isinstance(reason, FileNotFoundError):
                raise WheelNotFound(f"{bare} does not exist") from err
            raise XlakbError(f"downloading {bare} failed: {reason}", hint="check the network") from err
        name = final.name
        fd, tmp_name = tempfile.mkstemp(prefix=".part-", dir=final.parent)
        tmp = Path(tmp_name)
        try:
            with resp, os.fdopen(fd, "wb") as out:
                header = resp.headers.get("Content-Length")
                total = int(header) if header and header.isdigit() else None
                if size is not None and total is not None and total != size:
                    raise XlakbError(f"{bare} is {total} bytes on the server, expected {size}")
                digest = hashlib.sha256()
                done = 0
                progress.download(name, 0, total)
                while True:
                    try:
                        chunk = resp.read(self.chunk_size)
                    except (http.client.IncompleteRead, OSError) as err:
                        raise XlakbError(
                            f"download of {bare} broke off after {done} of {total or '?'} bytes: {err}",
                            hint="retry; the partial file was not kept",
                        ) from err
                    if not chunk:
                        break
                    out.write(chunk)
                    digest.update(chunk)
                    done += len(chunk)
                    progress.download(name, done, total)
            if total is not None and done != total:
                raise XlakbError(
                    f"download of {bare} is truncated: got {done} of {total} bytes",
                    hint="retry; the partial file was not kept",
                )
            if size is not None and done != size:
                raise XlakbError(f"download of {bare} has {done} bytes, expected {size}")
            actual = digest.hexdigest()
            if expected is not None and actual != expected:
                raise XlakbError(
                    f"download of {bare} is corrupt: sha256 {actual} differs from {expected} ({source})",
                    hint="retry; the file was not kept",
                )
            os.replace(tmp, final)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        record = {"url": bare, "size": done, "sha256": actual, "verified_against": source}
        (final.parent / "download.json").write_text(json.dumps(record, indent=1))


def _check_hex(value: str, what: str) -> str:
    if not _SHA256_RE.match(value.strip()):
        raise XlakbError(f"{what} is not a sha256 hex digest: {value[:80]!r}")
    return value.strip().lower()


# --------------------------------------------------------------------------- listing
class NightlyRange(list):
    """The candidates of :func:`list_nightlies` (a list), plus ``missing``:
    the dates (YYYY-MM-DD) left out or marked because a wheel was absent."""

    missing: list[str]

    def __init__(self, items=(), missing: Sequence[str] = ()) -> None:
        super().__init__(items)
        self.missing = list(missing)


def list_nightlies(
    start_date: _dt.date | str,
    end_date: _dt.date | str,
    *,
    versions: str | Sequence[str],
    py: str = "cp311",
    torch_versions: Mapping[str, str] | None = None,
    torch_xla_url: str | None = None,
    torch_url: str | None = None,
    include_missing: bool = False,
    check: bool = True,
    timeout: float = 30.0,
    progress: Progress | None = None,
    max_days: int = 400,
) -> NightlyRange:
    """One candidate per day from ``start_date`` to ``end_date`` (both included), oldest first.

    ``versions`` is the dev base version of torch_xla nightlies (``"2.7.0"``)
    or several to try in order, for ranges across a version bump: the first
    whose torch_xla wheel exists that day wins.  The matching torch nightly
    has the same version unless ``torch_versions`` maps it to another.  With
    ``check`` (default) each day's two wheels are checked with HEAD requests;
    a day missing either is left out (or kept and marked, see the module
    docstring).  Candidates carry ``torch_xla=""``/``torch=""`` until
    :func:`fetch_nightly` downloads them; ``meta`` holds date, urls, versions,
    sizes and ``missing``.
    """
    progress = progress or NullProgress()
    start, end = _as_date(start_date, "start date"), _as_date(end_date, "end date")
    if end < start:
        raise XlakbError(f"end date {end} is before start date {start}", hint="swap them")
    days = (end - start).days + 1
    if days < 2:
        raise XlakbError(f"nightly range {start}..{end} holds a single day", hint="widen the range")
    if days > max_days:
        raise XlakbError(
            f"nightly range {start}..{end} spans {days} days (more than {max_days})",
            hint="bisect releases first to narrow the range",
        )
    version_list = [versions] if isinstance(versions, str) else list(versions)
    if not version_list:
        raise XlakbError("list_nightlies needs at least one torch_xla dev version (e.g. 2.7.0)")
    xla_template, torch_template = nightly_templates(torch_xla_url, torch_url)
    torch_versions = dict(torch_versions or {})

    out: list[Candidate] = []
    missing: list[str] = []
    for offset in range(days):
        day = start + _dt.timedelta(days=offset)
        iso = day.isoformat()
        progress.step(offset, days, f"checking nightly {iso}")
        meta: dict = {"date": iso, "missing": False}
        found = None
        for version in version_list:
            xla = format_url(xla_template, date=day, version=version, py=py)
            tver = torch_versions.get(version, version)
            torch = format_url(torch_template, date=day, version=tver, py=py)
            if not check:
                found = (version, tver, xla, torch, None)
                break
            ok, xla_size = url_exists(xla, timeout=timeout)
            if ok:
                found = (version, tver, xla, torch, xla_size)
                break
        if found is None:
            meta.update(
                missing=True,
                why="no torch_xla wheel",
                torch_xla_url=format_url(xla_template, date=day, version=version_list[0], py=py),
            )
        else:
            version, tver, xla, torch, xla_size = found
            stamp = day.strftime("%Y%m%d")
            meta.update(
                torch_xla_url=xla,
                torch_url=torch,
                torch_xla_version=f"{version}.dev{stamp}",
                torch_version=f"{tver}.dev{stamp}",
                torch_xla_size=xla_size,
            )
            if check:
                ok, torch_size = url_exists(torch, timeout=timeout)
                meta["torch_size"] = torch_size
                if not ok:
                    meta.update(missing=True, why="no torch wheel")
        if meta["missing"]:
            missing.append(iso)
            if not include_missing:
                continue
        out.append(Candidate(kind="nightly", label=f"nightly {iso}", torch_xla="", torch="", meta=meta))
    progress.step(days, days, "checked nightlies")
    if missing:
        shown = ", ".join(missing[:5]) + (f" ... {missing[-1]}" if len(missing) > 5 else "")
        progress.info(f"no nightly wheel for {len(missing)} day(s): {shown}")
    return NightlyRange(out, missing)


def fetch_nightly(candidate: Candidate, cache: WheelCache, *, progress: Progress | None = None) -> Candidate:
    """``candidate`` with ``torch_xla``/``torch`` set to downloaded wheel paths.

    Raises :class:`WheelNotFound` for a day marked missing or whose wheel has
    vanished (treat as SKIP), XlakbError for other download failures.
    """
    if candidate.kind != "nightly":
        raise XlakbError(f"fetch_nightly got a {candidate.kind} candidate ({candidate.label})")
    meta = candidate.meta
    if meta.get("missing"):
        raise WheelNotFound(f"{candidate.label} has {meta.get('why', 'no wheel')}")
    xla = cache.get(meta["torch_xla_url"], size=meta.get("torch_xla_size"), progress=progress)
    torch = cache.get(meta["torch_url"], size=meta.get("torch_size"), progress=progress)
    new_meta = dict(meta)
    for key, url in (("torch_xla_sha256", meta["torch_xla_url"]), ("torch_sha256", meta["torch_url"])):
        rec = cache.record(url)
        if rec:
            new_meta[key] = rec.get("sha256")
    return dataclasses.replace(candidate, torch_xla=str(xla), torch=str(torch), meta=new_meta)


def nightly_candidate(
    date: str, *, versions: Sequence[str], torch_xla_url: str | None = None, torch_url: str | None = None
) -> Candidate:
    """The nightly of one day (``YYYY-MM-DD``), e.g. a commit bisection's base ("nightly:2025-01-16")."""
    try:
        day = _dt.date.fromisoformat(date)
    except ValueError:
        raise XlakbError(f"nightly base {date!r} is not a YYYY-MM-DD date", hint="e.g. --base nightly:2025-01-16") from None
    if not versions:
        raise XlakbError(f"nightly base {date} needs --nightly-version", hint="e.g. --nightly-version 2.7.0")
    found = [
        c
        for c in list_nightlies(
            day,
            day + _dt.timedelta(days=1),
            versions=list(versions),
            torch_xla_url=torch_xla_url,
            torch_url=torch_url,
            progress=NullProgress(),
        )
        if c.meta["date"] == day.isoformat()
    ]
    if not found:
        raise XlakbError(f"no nightly wheels for {date} (versions {', '.join(versions)})", hint="pick a day whose nightly exists")
    return found[0]


def next_minor(version: str) -> str:
    from packaging.version import Version

    v = Version(version)
    return f"{v.major}.{v.minor + 1}.0"


# --------------------------------------------------------------------------- the nightlies source
NIGHTLY_ARGUMENTS = (
    Arg(
        ("--nightly-version",),
        {
            "action": "append",
            "metavar": "X.Y.Z",
            "help": "nightlies: the dev version of the nightly wheels (repeatable, tried in order); "
            "--narrow default: the first-new release and the next minor",
        },
    ),
    Arg(("--torch-xla-url",), {"help": "nightlies: URL template with {date} {version} {py}"}),
    Arg(("--torch-url",), {"help": "nightlies: URL template for the matching torch"}),
)


class NightlySource(Source):
    """Nightly wheels by day: ``--start``/``--end`` are dates; each candidate's two wheels are
    downloaded once into the cache when it is probed (a missing day is untestable)."""

    name = "nightlies"
    noun = "nightly"
    arguments = NIGHTLY_ARGUMENTS
    follows = "releases"

    def __init__(
        self, ctx=None, *, versions: Sequence[str] = (), torch_xla_url: str | None = None, torch_url: str | None = None
    ) -> None:
        super().__init__(ctx)
        from ..envs import cache_dir

        self.versions = list(versions)
        self.torch_xla_url, self.torch_url = torch_xla_url, torch_url
        self.progress = ctx.progress if ctx is not None else NullProgress()
        self.wheels = WheelCache(cache_dir() / "nightlies")

    @classmethod
    def from_options(cls, ctx, opts):
        return cls(
            ctx,
            versions=opts.get("nightly_version") or (),
            torch_xla_url=opts.get("torch_xla_url"),
            torch_url=opts.get("torch_url"),
        )

    def ranges(self, engine, start, end, direction):
        if not (start and end and self.versions):
            raise XlakbError(
                "nightlies need --start and --end dates and --nightly-version",
                hint="e.g. --start 2025-01-01 --end 2025-02-01 --nightly-version 2.7.0",
            )
        return [
            list(
                list_nightlies(
                    start,
                    end,
                    versions=self.versions,
                    torch_xla_url=self.torch_xla_url,
                    torch_url=self.torch_url,
                    progress=self.progress,
                )
            )
        ]

    def resolve(self, cand: Candidate) -> Candidate:
        return fetch_nightly(cand, self.wheels, progress=self.progress)

    def peek(self, cand: Candidate) -> Candidate:
        meta = cand.meta
        if cand.kind != "nightly" or meta.get("missing"):
            return self.resolve(cand)  # raises the right error
        return dataclasses.replace(
            cand, torch_xla=str(self.wheels.path_for(meta["torch_xla_url"])), torch=str(self.wheels.path_for(meta["torch_url"]))
        )

    @classmethod
    def after(cls, ctx, opts, report):
        """The nightlies between the release dates of the two releases of ``report``."""
        a, b = report.last_old_candidate, report.first_new_candidate
        lo_date, hi_date = a.meta.get("date"), b.meta.get("date")
        if not lo_date or not hi_date:
            raise XlakbError(f"release {a.label if not lo_date else b.label} has no release date in the table")
        versions = list(opts.get("nightly_version") or ()) or list(dict.fromkeys([b.label, next_minor(b.label)]))
        source = cls(ctx, versions=versions, torch_xla_url=opts.get("torch_xla_url"), torch_url=opts.get("torch_url"))
        source.stage = f"nightlies {lo_date} .. {hi_date} (versions {', '.join(versions)})"
        source.stop_hint = (
            f"the change may predate {a.label}'s release date (release branches are cut earlier), or the nightlies "
            "carry other versions: pass --nightly-version, or bisect --source nightlies with your own --start/--end"
        )
        return source, lo_date, hi_date
