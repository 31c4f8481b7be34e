"""Releases of torch_xla on the package index, each paired with its torch.

The pairing and the per-release pins are data (``data/releases.yaml``);
:func:`published_versions` asks the index (PEP 691 JSON or PEP 503 HTML) which releases exist, so the
table can be checked against the index (``xlakb releases --check``).
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

import yaml
from packaging.version import InvalidVersion, Version

from ..errors import XlakbError
from ..pkgindex import project_page
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
    """Final releases of ``project`` on a simple-API index (PEP 691 JSON or PEP 503 HTML), oldest first."""
    return project_page(index_url, project, timeout=timeout).versions(final_only=True)
