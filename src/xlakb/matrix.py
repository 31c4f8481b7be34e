"""Run a reproducer across releases: the affected-versions table, as measured."""

from __future__ import annotations

import concurrent.futures as cf
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .candidate import Candidate, workaround_of
from .envs import Backend
from .envs.warm import server_env
from .errors import XlakbError
from .executors import Executor, LocalExecutor, ProbeTask
from .progress import NullProgress, Progress
from .records import Record
from .runner import ProbeResult, Verdict, VerdictCache, run_env, verdict_key


def batch_pairs(records: list[Record], candidates: list[Candidate], variants: str = "both") -> list[tuple[Record, Candidate]]:
    """The (record, candidate) probes of a matrix batch: the bug on every candidate and, for a record that
    declares its workaround as a variant of its reproducer, the workaround on the same candidates
    (``variants``: "bug", "workaround" or "both")."""
    out = []
    for r in records:
        if variants in ("bug", "both"):
            out.extend((r, c) for c in candidates)
        if variants in ("workaround", "both") and r.workaround:
            out.extend((r, workaround_of(c)) for c in candidates)
    return out


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
    return run_batch(
        [(record, c) for c in candidates], backend, progress=progress, cache=cache, find_links=find_links, index_url=index_url
    )


def run_batch(
    pairs: list[tuple[Record, Candidate]],
    backend: Backend,
    *,
    jobs: int = 1,
    progress: Progress | None = None,
    cache: VerdictCache | None = None,
    find_links: tuple[str, ...] = (),
    index_url: str | None = None,
    on_result: Callable[[Record, ProbeResult], None] | None = None,
    executor: Executor | None = None,
) -> list[ProbeResult]:
    """Probe many (record, release) pairs on ``executor`` (default: this machine, ``jobs`` at a time), release
    after release, so the probes of one release share its environment (built once: the others wait on its
    lock); within a release, one probe per warm server (:mod:`xlakb.envs.warm`) first, so the servers start
    side by side, then the probes that share an environment and its variables in a row. This function is the driver: it alone reads and writes the verdict cache, and calls ``on_result``
    in the calling thread as each result arrives, so a caller can write it at once (an interrupted batch keeps
    what it measured, and the next run takes it from the cache). Results come back in the order of ``pairs``."""
    own = executor is None
    executor = executor or LocalExecutor(jobs)
    try:
        return _drive(pairs, backend, executor, progress or NullProgress(), cache, find_links, index_url, on_result)
    finally:
        if own:
            executor.close()


def time_left(elapsed: float, durations: list[float], left: int, slots: int) -> float | None:
    """Seconds until a batch ends, ``left`` probes still to finish, ``slots`` running at once: the wall time
    per finished probe so far (it already counts the probes running side by side, and environment builds)
    times what is left, once at least ``slots`` probes have finished; before that, the finished probes' mean
    duration times what is left over the slots. None before any probe has finished."""
    if not durations:
        return None
    if len(durations) >= slots:
        return elapsed / len(durations) * left
    return sum(durations) / len(durations) * left / slots


def _alike(record: Record, cand: Candidate) -> tuple:
    """What decides which warm server a probe can use: the environment's extra packages and the variables."""
    return tuple(record.packages), tuple(sorted(run_env(record, cand.settings, cand).items()))


def _server(record: Record, cand: Candidate) -> tuple:
    """Which warm server a probe is likely forked from: the variables read at import. A record's extra
    packages are left out: the release's server serves the environments that only add packages where its
    import could not have seen them (:class:`xlakb.envs.warm.Host`); where it cannot, the order is only less
    good."""
    return (record.run_on, tuple(sorted(server_env(cand.torch_xla, run_env(record, cand.settings, cand)).items())))


def _drive(pairs, backend, executor, progress, cache, find_links, index_url, on_result) -> list[ProbeResult]:
    order = {c.label: i for i, c in enumerate(dict.fromkeys(c for _, c in pairs))}
    groups: dict[tuple, int] = {}
    alike = [groups.setdefault(_alike(r, c), len(groups)) for r, c in pairs]
    # within a release, the first probe of each warm server goes first: the servers start side by side (an
    # import each, one core each) instead of one probe waiting, its core idle, for the server another starts
    servers: set = set()
    later = []
    for r, c in pairs:
        key = (c.label, _server(r, c))
        later.append(key in servers)
        servers.add(key)
    queue = sorted(range(len(pairs)), key=lambda i: (order[pairs[i][1].label], later[i], alike[i], i))
    results: list[ProbeResult | None] = [None] * len(pairs)
    lock = threading.Lock()
    # once a release's first probe starts, the next release's servers start beside its probes (their
    # environments built first if need be): no core waits for an import when the batch moves on
    firsts: dict[str, list[int]] = {}
    for i in queue:
        firsts.setdefault(pairs[i][1].label, [])
        if not later[i]:
            firsts[pairs[i][1].label].append(i)
    after = dict(zip(list(firsts), list(firsts)[1:]))
    ahead: set = set()

    def ahead_of(label: str) -> None:
        following = after.get(label)
        with lock:
            if following is None or following in ahead:
                return
            ahead.add(following)
        for i in firsts[following]:
            record, cand = pairs[i]
            if cache and cache.get(verdict_key(record, cand, backend.name, find_links=find_links, index_url=index_url)):
                continue
            executor.prestart(ProbeTask(record, cand, find_links, index_url), backend, progress=progress)

    done: list[float] = []
    started = time.monotonic()
    slots = executor.slots

    def starting(i: int) -> None:
        record, cand = pairs[i]
        ahead_of(cand.label)
        with lock:
            left = len(pairs) - len(done)
            eta = ""
            secs = time_left(time.monotonic() - started, done, left, slots)
            if secs is not None:
                eta = f", about {secs / 60:.0f} min left" if secs >= 60 else f", about {secs:.0f} s left"
            progress.step(len(done), len(pairs), f"{record.id} on torch_xla {cand.label} ({left} left{eta})")

    def finish(i: int, res: ProbeResult, key: str) -> None:
        record, cand = pairs[i]
        if key and not res.cached:
            cache.put(key, res)
        with lock:
            results[i] = res
            done.append(res.duration_s)
            progress.step(len(done), len(pairs), f"{record.id} on {cand.label}: {res.verdict.value}")
        if on_result is not None:
            on_result(record, res)

    pending: dict[cf.Future, tuple[int, str]] = {}

    def drain(wait: bool) -> None:
        ready = cf.as_completed(list(pending)) if wait else [f for f in list(pending) if f.done()]
        for future in ready:
            i, key = pending.pop(future)
            finish(i, future.result(), key)

    for i in queue:
        record, cand = pairs[i]
        key = verdict_key(record, cand, backend.name, find_links=find_links, index_url=index_url) if cache else ""
        hit = cache.get(key) if cache else None
        if hit is not None:
            finish(i, hit, key)
            continue
        task = ProbeTask(record, cand, find_links, index_url)
        pending[executor.submit(task, backend, progress=progress, on_start=lambda i=i: starting(i))] = (i, key)
        drain(wait=False)
    drain(wait=True)
    return [r for r in results if r is not None]


@dataclass
class Measured:
    """A batch measured by :func:`measure`: per record, the bug's results and the workaround's (in the order
    of the candidates), and where the record's claims disagree with its whole matrix."""

    records: list[Record]
    bug: dict[str, list[ProbeResult]]
    workaround: dict[str, list[ProbeResult]]
    disagree: dict[str, list[tuple[str, str]]]


def measure(
    root: Path,
    records: list[Record],
    candidates: list[Candidate],
    backend: Backend,
    *,
    variants: str = "both",
    save: bool = True,
    executor: Executor | None = None,
    jobs: int = 1,
    progress: Progress | None = None,
    cache: VerdictCache | None = None,
    find_links: tuple[str, ...] = (),
    index_url: str | None = None,
) -> Measured:
    """``xlakb matrix``: probe ``records`` on ``candidates`` (the bug, its workaround variant or both), write
    each result into ``bisect/<id>/matrix.json`` or ``workaround.json`` as it arrives when ``save`` (an
    interrupted batch keeps what it measured), and judge each record's claims against its whole matrix (what
    was measured before, with this run over it: a run on old releases says nothing of the newest one)."""
    from .results import load_matrix, save_matrix

    pairs = batch_pairs(records, candidates, variants)
    if not pairs:
        raise XlakbError(
            "nothing to measure: no record of this batch declares reproducer.workaround",
            hint="--variants bug (the default both) measures the bug itself",
        )
    lock = threading.Lock()

    def write(rec: Record, res: ProbeResult) -> None:
        if save:
            with lock:
                save_matrix(root, rec, [res], backend.name)

    results = run_batch(
        pairs,
        backend,
        jobs=jobs,
        progress=progress,
        cache=cache,
        find_links=find_links,
        index_url=index_url,
        on_result=write,
        executor=executor,
    )
    bug = {r.id: [x for x in results if x.record == r.id and x.kind != "workaround"] for r in records}
    workaround = {r.id: [x for x in results if x.record == r.id and x.kind == "workaround"] for r in records}
    disagree = {}
    for rec in records:
        rows = {row["candidate"]: row for row in (load_matrix(root, rec.id) or {}).get("results", [])}
        rows.update({r.candidate: {"candidate": r.candidate, "kind": r.kind, "verdict": r.verdict.value} for r in bug[rec.id]})
        disagree[rec.id] = disagreements(rec, list(rows.values()))
    return Measured(records, bug, workaround, disagree)


def disagreements(record: Record, results: list[ProbeResult] | list[dict]) -> list[tuple[str, str]]:
    """Where what was measured on releases contradicts what the record claims: (field, message) pairs,
    one per disagreement.  ``results`` are probe results or the rows of a ``matrix.json``.

    * a release measured reproduced must be claimed affected (``versions.affected``);
    * a release claimed affected must not measure not-reproduced;
    * a release at or after ``fixed_in`` must not measure reproduced (``versions.fixed_in``);
    * ``status``: "fixed" needs the newest measured release not-reproduced; "open", "workaround-only"
      and "regressed" need it reproduced."""
    from packaging.version import InvalidVersion, Version

    rows = []
    for res in results:
        row = res if isinstance(res, dict) else {"candidate": res.candidate, "kind": res.kind, "verdict": res.verdict.value}
        if row.get("kind", "release") != "release":
            continue
        try:
            rows.append((Version(row["candidate"]), row["candidate"], row["verdict"]))
        except (InvalidVersion, KeyError):
            continue
    rows.sort()
    out: list[tuple[str, str]] = []
    affected = record.data["versions"]["affected"]
    for _, label, verdict in rows:
        claim = record.claims(label)
        if verdict == Verdict.REPRODUCED.value and claim is False:
            out.append(("versions.fixed_in", f"claims {label} fixed (fixed_in {record.fixed_in}), measured reproduced"))
        elif verdict == Verdict.REPRODUCED.value and claim is None:
            out.append(("versions.affected", f"{label} measured reproduced, but is not in affected {affected!r}"))
        elif verdict == Verdict.NOT_REPRODUCED.value and claim is True:
            out.append(("versions.affected", f"claims {label} affected ({affected!r}), measured not-reproduced"))
    judged = [
        (label, verdict) for _, label, verdict in rows if verdict in (Verdict.REPRODUCED.value, Verdict.NOT_REPRODUCED.value)
    ]
    if judged:
        newest, verdict = judged[-1]
        if record.status == "fixed" and verdict == Verdict.REPRODUCED.value:
            out.append(("status", f"is fixed, but the newest measured release {newest} is reproduced"))
        if record.status in ("open", "workaround-only", "regressed") and verdict == Verdict.NOT_REPRODUCED.value:
            out.append(("status", f"is {record.status}, but the newest measured release {newest} is not-reproduced"))
    return out


def drift(record: Record, rows: list[dict], releases: list[str]) -> list[tuple[str, str]]:
    """What keeps a record's claims from being fresh: (kind, message) with kind "regression" (claimed fixed,
    reproduced on a release at or after fixed_in), "claim" (any other disagreement, see :func:`disagreements`)
    or "unmeasured" (a known release with no judged verdict). Regressions first."""
    from packaging.version import Version

    out: list[tuple[str, str]] = []
    fixed = record.fixed_in
    judged = _judged(rows)
    if fixed:
        back = [v for v, verdict in judged.items() if verdict == Verdict.REPRODUCED.value and Version(v) >= Version(fixed)]
        if back:
            out.append(("regression", f"claimed fixed in {fixed}, but reproduced on {', '.join(sorted(back, key=Version))}"))
    for where, message in disagreements(record, rows):
        if not (fixed and where == "versions.fixed_in"):  # already said as a regression
            out.append(("claim", f"{where}: {message}"))
    missing = unmeasured(rows, releases)
    if missing:
        out.append(("unmeasured", f"not measured on {', '.join(missing)}"))
    return out


def unmeasured(rows: list[dict], releases: list[str]) -> list[str]:
    """Known releases without a judged verdict (reproduced, not-reproduced or untestable) in ``rows``."""
    judged = _judged(rows)
    return [v for v in releases if v not in judged]


def _judged(rows: list[dict]) -> dict[str, str]:
    """Release label -> verdict, for the releases ``rows`` judged (an error is no judgement)."""
    return {
        r["candidate"]: r["verdict"]
        for r in rows
        if r.get("kind", "release") == "release"
        and r["verdict"] in (Verdict.REPRODUCED.value, Verdict.NOT_REPRODUCED.value, Verdict.UNTESTABLE.value)
    }
