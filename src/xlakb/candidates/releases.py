"""Releases of torch_xla on the package index, each paired with its torch; the releases source.

The pairing and the per-release pins are data (``data/releases.yaml``);
:func:`published_versions` asks the index (PEP 691 JSON or PEP 503 HTML) which releases exist, so the
table can be checked against the index (``xlakb releases --check``).
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING

import yaml
from packaging.version import InvalidVersion, Version

from ..errors import XlakbError
from ..pkgindex import project_page
from ..runner import Verdict
from . import Candidate, Source

if TYPE_CHECKING:
    from ..bisection.engine import Engine

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


# --------------------------------------------------------------------------- the releases source
JUDGED = (Verdict.REPRODUCED, Verdict.NOT_REPRODUCED)


class ReleaseSource(Source):
    """Releases from the table; ``--start``/``--end`` are versions, either may be left out
    (:func:`release_ranges` says how the range is found then)."""

    name = "releases"
    noun = "release"

    def ranges(self, engine, start, end, direction):
        return release_ranges(engine, start, end, direction)


def walk_back(engine: Engine, candidates: list[Candidate], end: int) -> int:
    """Only the end is known: step back over earlier candidates (1, 2, 4... back) until
    one behaves differently; return its index (untestable ones are stepped over)."""
    end_res = engine.judge(candidates[end])
    if end_res.verdict not in JUDGED:
        raise XlakbError(f"the end {candidates[end].label} could not be judged ({end_res.verdict.value}: {end_res.detail})")
    step, idx = 1, end
    while idx > 0:
        idx = max(0, end - step)
        engine.progress.info(f"looking for a start: trying {candidates[idx].label}")
        res = engine.judge(candidates[idx])
        if res.verdict in JUDGED and res.verdict is not end_res.verdict:
            return idx
        step *= 2
    raise XlakbError(
        f"no candidate before {candidates[end].label} behaves differently (all are {end_res.verdict.value} or untestable)",
        hint="the change is older than the oldest candidate",
    )


def _testable(engine: Engine, cand: Candidate) -> bool:
    """Whether the reproducer can judge ``cand``; an error (not an untestable API) stops the search for a range."""
    res = engine.judge(cand)
    if res.verdict is Verdict.ERROR:
        raise XlakbError(
            f"{cand.label} could not be judged while looking for the range ({res.detail})",
            hint=f"pass --start/--end, or check the reproducer; log: {res.log or 'none'}",
        )
    return res.verdict in JUDGED


def _edge(engine: Engine, cands: list[Candidate], guess: int, toward: int) -> int:
    """The testable candidate nearest to ``toward`` (0: the oldest, len-1: the newest), found from a guess.

    Testability is taken as monotone (an API appears once, or goes once): from a testable ``guess``,
    check the far end, then halve the gap between testable and untestable; from an untestable guess,
    step away from ``toward`` until one is testable."""
    away = 1 if toward == 0 else -1
    if not _testable(engine, cands[guess]):
        idx = guess + away
        while 0 <= idx < len(cands):
            if _testable(engine, cands[idx]):
                return idx
            idx += away
        raise XlakbError(
            f"the reproducer cannot run on any release from {cands[guess].label} "
            f"{'on' if toward == 0 else 'back'} (all untestable)",
            hint="check the reproducer's exit 125 rule",
        )
    good = guess
    if good == toward or _testable(engine, cands[toward]):
        return toward
    bad = toward  # untestable; the edge lies between bad and good
    while abs(good - bad) > 1:
        mid = (good + bad) // 2
        if _testable(engine, cands[mid]):
            good = mid
        else:
            bad = mid
    return good


def release_ranges(
    engine: Engine, start: str | None = None, end: str | None = None, direction: str | None = None
) -> list[list[Candidate]]:
    """The release ranges to bisect for what the user named (each oldest first; usually one).

    * both ends named: that range;
    * only ``end``: walk back from it to a start that behaves differently;
    * no ``start``: the oldest release the reproducer can run on (an untestable oldest release moves the
      start forward, noted in the report); the record's claimed versions are the first guess, verified.
      No ``end``: likewise the newest release it can run on.
    * when neither end was named and the two agree (a window: the bug came and went, or it is in every
      release), a release the record claims otherwise is probed; if it differs, the ranges on both of its
      sides are returned (introduced, then fixed), or the one ``direction`` asks for.
    """
    record = engine.record
    if start and end:
        return [releases_between(start, end)]
    if end and not start:
        everything = releases_between(None, end)
        first = walk_back(engine, everything, len(everything) - 1)
        engine.notes.append(f"Start found by walking back from {end}: {everything[first].label}.")
        return [everything[first:]]
    cands = releases_between(start, None)
    labels = [c.label for c in cands]
    claimed = [i for i, c in enumerate(cands) if record.claims(c.label) is not None]
    if start:
        lo = 0
    else:
        guess = next((i for i in claimed if record.claims(cands[i].label)), claimed[0] if claimed else 0)
        lo = _edge(engine, cands, guess, toward=0)
        if lo > 0:
            skipped = engine.range_probes[labels[lo - 1]]
            engine.notes.append(
                f"Start moved forward to {labels[lo]}, the oldest release the reproducer runs on "
                f"({labels[lo - 1]} is untestable: {skipped.detail})."
            )
    hi = _edge(engine, cands, len(cands) - 1, toward=len(cands) - 1) if not end else len(cands) - 1
    if hi < len(cands) - 1:
        skipped = engine.range_probes[labels[hi + 1]]
        engine.notes.append(
            f"End moved back to {labels[hi]}, the newest release the reproducer runs on "
            f"({labels[hi + 1]} is untestable: {skipped.detail})."
        )
    if hi <= lo:
        raise XlakbError(f"the reproducer runs on one release only ({labels[lo]}): nothing to bisect")
    first, last = engine.judge(cands[lo]).verdict, engine.judge(cands[hi]).verdict
    if first is not last or start:  # a named start: the engine verifies the ends itself
        return [cands[lo : hi + 1]]
    # the ends agree: look for a release in between that the record claims behaves otherwise
    other = Verdict.NOT_REPRODUCED if first is Verdict.REPRODUCED else Verdict.REPRODUCED
    wanted = other is Verdict.REPRODUCED
    inside = [i for i in claimed if lo < i < hi and record.claims(labels[i]) is wanted]
    if inside:
        mid = inside[len(inside) // 2]
        if engine.judge(cands[mid]).verdict is other:
            engine.notes.append(
                f"{labels[lo]} and {labels[hi]} are both {first.value}; {labels[mid]} is {other.value}, "
                f"so the bug {'came and went' if wanted else 'went and came back'} between them."
            )
            halves = [cands[lo : mid + 1], cands[mid : hi + 1]]
            if direction:
                pick = 0 if (direction == "introduced") == wanted else 1
                return [halves[pick]]
            return halves
    state = "shows the bug" if first is Verdict.REPRODUCED else "does not show the bug"
    raise XlakbError(
        f"nothing to bisect: {labels[lo]} and {labels[hi]} are both {first.value}"
        + (f", and so is {labels[inside[len(inside) // 2]]}" if inside else "")
        + f" (every release tested {state})",
        hint="name a range with --start/--end, or check the record's claimed versions",
    )
