"""Releases of torch_xla on the package index, each paired with its torch.

The pairing and the per-release pins are data (``data/releases.yaml``);
:func:`published_versions` asks a PEP 691 index which releases exist, so the
table can be checked against the index (``xlakb releases --check``).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from functools import lru_cache
from importlib import resources

import yaml
from packaging.version import InvalidVersion, Version

from ..errors import XlakbError
from . import Candidate

DEFAULT_INDEX = "https://pypi.org/simple"


@lru_cache(maxsize=1)
def release_table() -> dict[str, dict]:
    text = resources.files("xlakb").joinpath("data/releases.yaml").read_text("utf-8")
    table = yaml.safe_load(text)["releases"]
    return dict(sorted(table.items(), key=lambda kv: Version(kv[0])))


def all_releases() -> list[str]:
    return list(release_table())


def release(version: str) -> Candidate:
    """The candidate for torch_xla ``version``, or an error naming the known ones."""
    try:
        Version(version)
    except InvalidVersion:
        raise XlakbError(f"{version!r} is not a version number", hint="e.g. --torch-xla 2.5.1") from None
    entry = release_table().get(version)
    if entry is None:
        raise XlakbError(f"unknown torch_xla release {version!r}", hint=f"known releases: {', '.join(all_releases())}")
    return Candidate(
        kind="release",
        label=version,
        torch_xla=version,
        torch=entry["torch"],
        pins=tuple(entry.get("pins", ())),
        meta={"url": f"https://github.com/pytorch/xla/releases/tag/v{version}", "date": str(entry.get("released", ""))},
    )


def releases_between(first: str | None = None, last: str | None = None) -> list[Candidate]:
    """Releases from ``first`` to ``last`` inclusive, oldest first."""
    versions = all_releases()
    lo = Version(release(first).label) if first else None
    hi = Version(release(last).label) if last else None
    if lo and hi and lo > hi:
        raise XlakbError(f"range start {first} is after its end {last}")
    return [release(v) for v in versions if (lo is None or Version(v) >= lo) and (hi is None or Version(v) <= hi)]


def published_versions(index_url: str = DEFAULT_INDEX, project: str = "torch-xla", timeout: float = 30) -> list[str]:
    """Final releases of ``project`` on a PEP 691 (JSON simple API) index, oldest first."""
    url = f"{index_url.rstrip('/')}/{project}/"
    request = urllib.request.Request(url, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            data = json.load(response)
    except (urllib.error.URLError, OSError, ValueError) as err:
        raise XlakbError(f"cannot read the package index at {url}: {err}") from None
    versions = set(data.get("versions") or [])
    if not versions:  # older PEP 691 servers: derive from file names
        for item in data.get("files", []):
            parts = item.get("filename", "").split("-")
            if len(parts) > 2 and item["filename"].endswith(".whl"):
                versions.add(parts[1])
    final = []
    for v in versions:
        try:
            parsed = Version(v)
        except InvalidVersion:
            continue
        if not parsed.is_prerelease and not parsed.is_devrelease:
            final.append(v)
    return sorted(final, key=Version)
