"""Run a reproducer across releases: the affected-versions table, as measured."""

from __future__ import annotations

from .candidates import Candidate
from .envs import Backend
from .progress import NullProgress, Progress
from .records import Record
from .runner import ProbeResult, Verdict, VerdictCache, try_probe


def run_matrix(
    record: Record,
    candidates: list[Candidate],
    backend: Backend,
    *,
    progress: Progress | None = None,
    cache: VerdictCache | None = None,
    find_links: tuple[str, ...] = (),
    index_url: str | None = None,
) -> list[ProbeResult]:
    """One probe per candidate; a candidate whose environment cannot be built is an
    error result (with the reason), not the end of the run."""
    progress = progress or NullProgress()
    out: list[ProbeResult] = []
    for i, cand in enumerate(candidates):
        progress.step(i, len(candidates), f"{record.id} on torch_xla {cand.label} ({len(candidates) - i} left)")
        res = try_probe(record, cand, backend, progress=progress, cache=cache, find_links=find_links, index_url=index_url)
        out.append(res)
        progress.step(i + 1, len(candidates), f"{cand.label}: {res.verdict.value}")
    return out


def disagreements(record: Record, results: list[ProbeResult]) -> list[str]:
    """Where what was measured contradicts what the record claims."""
    out = []
    for res in results:
        if res.kind != "release":
            continue
        claim = record.claims(res.candidate)
        if claim is True and res.verdict is Verdict.NOT_REPRODUCED:
            out.append(f"{res.candidate}: record claims affected, measured not-reproduced")
        if claim is False and res.verdict is Verdict.REPRODUCED:
            out.append(f"{res.candidate}: record claims fixed, measured reproduced")
    return out
