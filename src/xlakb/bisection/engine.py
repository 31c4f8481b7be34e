"""The bisection engine: verify the ends, search, cache, resume.

The search itself is :mod:`xlakb.search` (pure); this module connects it to the world.  Candidates
come from a :class:`~xlakb.candidates.Source`, which also *resolves* each into something installable;
the engine probes them with :func:`xlakb.runner.try_probe` through a backend and feeds the outcomes to
the search.  Every probe is saved at once in the resume state (:mod:`.state`) and every verdict lands
in the verdict cache, so an interrupted bisection resumes without repeating a probe and bisecting the
same thing again runs none.  What a probe could not judge becomes "unknown" to the search in one
place, :func:`outcome_of` (:func:`trial_of` for delta debugging).
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from ..candidate import Candidate
from ..ddmin import Trial
from ..envs import Backend, cache_dir
from ..errors import WheelNotFound, XlakbError
from ..executors import Executor, LocalExecutor, ProbeTask
from ..progress import NullProgress, Progress
from ..records import Record
from ..runner import ProbeResult, Verdict, VerdictCache, env_spec, error_result, verdict_key
from ..search import Bisection, Outcome
from .report import Report, now
from .source import Source
from .state import SavedProbes, identity

DIRECTIONS = ("introduced", "fixed")
T = TypeVar("T")


def outcome_of(verdict: Verdict, direction: str) -> Outcome:
    """The one rule mapping a reproducer verdict to a search outcome (untestable and error: unknown)."""
    if verdict is Verdict.UNTESTABLE:
        return Outcome.SKIP
    if verdict is Verdict.ERROR:
        return Outcome.ERROR
    reproduced = verdict is Verdict.REPRODUCED
    if direction == "introduced":
        return Outcome.NEW if reproduced else Outcome.OLD
    return Outcome.OLD if reproduced else Outcome.NEW


def trial_of(verdict: Verdict) -> Trial:
    """The same rule for delta debugging: a configuration showing the bug fails, unknown is unresolved."""
    outcome = outcome_of(verdict, "introduced")
    return {Outcome.NEW: Trial.FAIL, Outcome.OLD: Trial.PASS}.get(outcome, Trial.UNRESOLVED)


@dataclass
class Options:
    repeat: int = 1
    jobs: int = 1
    prepare_ahead: bool = True
    find_links: tuple[str, ...] = ()
    index_url: str | None = None
    command: str = ""
    words: dict[str, str] = dataclasses.field(default_factory=dict)  # verdicts' names in progress and reports (a script's)


@dataclass
class Context:
    """What every engine of one command shares: the record, where probes run, caches, options."""

    record: Record
    backend: Backend
    progress: Progress = dataclasses.field(default_factory=NullProgress)
    cache: VerdictCache | None = dataclasses.field(default_factory=VerdictCache)
    options: Options = dataclasses.field(default_factory=Options)
    state_root: Path | None = None
    executor: Executor | None = None  # where probes run (default: this machine)

    def engine(self, source: Source | None = None) -> Engine:
        return Engine(
            self.record,
            self.backend,
            progress=self.progress,
            cache=self.cache,
            options=self.options,
            source=source,
            state_root=self.state_root,
            executor=self.executor,
        )


class _Preparer:
    """Builds environments of possible next midpoints on one daemon thread while probes run.

    A daemon thread, so neither the end of a bisection nor Ctrl-C waits for a build nobody
    needs any more; a build cut off that way has no marker and is never reused."""

    def __init__(self, work: Callable[[Candidate], None]) -> None:
        import queue

        self._queue: queue.Queue[Candidate | None] = queue.Queue()
        self._work = work
        self._thread = threading.Thread(target=self._loop, name="xlakb-prepare", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while True:
            cand = self._queue.get()
            if cand is None:
                return
            self._work(cand)

    def submit(self, cand: Candidate) -> None:
        self._queue.put(cand)

    def stop(self) -> None:
        """Drop what is queued; the build under way (if any) finishes in the background."""
        try:
            while True:
                self._queue.get_nowait()
        except Exception:  # noqa: BLE001 - draining a queue: whatever stops it ends the drain
            pass
        self._queue.put(None)


class Engine:
    """Bisects one record's reproducer over ordered candidates with one backend."""

    def __init__(
        self,
        record: Record,
        backend: Backend,
        *,
        progress: Progress | None = None,
        cache: VerdictCache | None = None,
        options: Options | None = None,
        source: Source | None = None,
        state_root: Path | None = None,
        executor: Executor | None = None,
    ) -> None:
        if options and options.repeat < 1:
            raise XlakbError(f"--repeat must be at least 1, got {options.repeat}")
        if options and options.jobs < 1:
            raise XlakbError(f"-j must be at least 1, got {options.jobs}")
        self.record = record
        self.backend = backend
        self.progress = progress or NullProgress()
        self.cache = cache if cache is not None else VerdictCache()
        self.options = options or Options()
        self.source = source or Source()
        # Probes go through the executor seam (a Ray cluster, or this machine); the engine alone keeps the
        # verdict cache and the resume state. -j threads each wait on one probe at a time.
        self.executor = executor or LocalExecutor(1)
        self.state_root = state_root or cache_dir() / "bisect-state"
        self._resolved: dict[str, Candidate] = {}
        self._lock = threading.Lock()
        self.probes_run = 0
        self.flaky: list[str] = []
        self.range_probes: dict[str, ProbeResult] = {}  # probes made to choose the range, by label
        self.notes: list[str] = []

    def judge(self, cand: Candidate) -> ProbeResult:
        """A probe made to choose the range (kept for the report)."""
        res = self.range_probes.get(cand.label)
        if res is None:
            res = self.range_probes[cand.label] = self.probe(cand)
            self.progress.info(self.said(res))
        return res

    def said(self, res: ProbeResult) -> str:
        """One probe's verdict as progress tells it, in the bisection's words."""
        verdict = self.options.words.get(res.verdict.value, res.verdict.value)
        return f"{res.candidate}: {verdict}{' (cached)' if res.cached else ''}"

    # -- candidates ------------------------------------------------------------
    def resolved(self, cand: Candidate) -> Candidate:
        with self._lock:
            hit = self._resolved.get(cand.label)
        if hit is None:
            hit = self.source.resolve(cand)
            with self._lock:
                self._resolved[cand.label] = hit
        return hit

    # -- state (resume) -----------------------------------------------------------
    def saved_probes(self, candidates: list[Candidate], direction: str | None, source: str) -> SavedProbes:
        """The resume state of bisecting ``candidates``. What is installed for each candidate belongs to
        the key too: the same labels over other wheels (another wheelhouse, nightly URL template or set of
        commit bases) are another bisection."""
        key = {
            "record": self.record.id,
            "reproducer": self.record.reproducer_sha256(),
            "source": source,
            "direction": direction,
            "repeat": self.options.repeat,
            "candidates": [identity(c) for c in candidates],
            "runner": self.backend.name,
            "find_links": list(self.options.find_links),
            "index_url": self.options.index_url,
            "resolver": self.source.fingerprint(),
        }
        saved = SavedProbes.open(self.state_root, self.record.id, source, key)
        if saved.resumed:
            self.progress.info(f"resuming: {saved.resumed} probe(s) already done ({saved.path})")
        return saved

    def probe_saved(self, cand: Candidate, saved: SavedProbes) -> ProbeResult:
        """The saved probe of ``cand``, or a new one, saved at once."""
        res = saved.get(cand.label)
        if res is None:
            res = self.probe(cand)
            saved.put(cand.label, res)
        return res

    # -- probing ------------------------------------------------------------------
    def probe(self, cand: Candidate) -> ProbeResult:
        """One candidate, ``repeat`` times; disagreeing runs make it flaky (an error)."""
        try:
            real = self.resolved(cand)
        except WheelNotFound as err:  # no build exists for this candidate: untestable
            return ProbeResult(
                self.record.id,
                cand.label,
                cand.kind,
                cand.torch_xla,
                cand.torch,
                Verdict.UNTESTABLE,
                f"no build: {err}",
                None,
                0.0,
                now(),
                "",
                self.backend.name,
                "",
            )
        except XlakbError as err:  # the build exists but could not be had now: an error, retried on resume
            with self._lock:
                self._resolved.pop(cand.label, None)
            return error_result(self.record, cand, self.backend.name, f"build unavailable: {err}")
        key = (
            verdict_key(
                self.record, real, self.backend.name, find_links=self.options.find_links, index_url=self.options.index_url
            )
            if self.cache is not None
            else None
        )
        first = self.cache.get(key) if key else None
        if first is None:
            first = self._run(real)
            with self._lock:
                self.probes_run += 1
            if key:
                self.cache.put(key, first)  # errors are not kept: worth another try
        if self.options.repeat == 1 or first.verdict is Verdict.ERROR:
            return first
        runs = [first]
        for _ in range(self.options.repeat - 1):
            runs.append(self._run(real))
            with self._lock:
                self.probes_run += 1
        verdicts = {r.verdict for r in runs}
        if len(verdicts) == 1:
            return first
        seen = ", ".join(r.verdict.value for r in runs)
        with self._lock:
            self.flaky.append(cand.label)
        return dataclasses.replace(
            first, verdict=Verdict.ERROR, detail=f"flaky: {len(runs)} runs disagreed ({seen})", cached=False
        )

    def _run(self, real: Candidate) -> ProbeResult:
        """One run of the reproducer on ``real`` (resolved), on the executor, without the cache."""
        task = ProbeTask(self.record, real, self.options.find_links, self.options.index_url)
        return self.executor.submit(task, self.backend, progress=self.progress).result()

    def _will_run(self, cand: Candidate, saved: SavedProbes) -> bool:
        """Whether probing ``cand`` would run the reproducer: no saved probe, no cached verdict.
        Looks the verdict up without downloading anything (the source's ``peek``)."""
        if cand.label in saved:
            return False
        if self.cache is None:
            return True
        try:
            real = self.source.peek(cand)
        except XlakbError:
            return True
        return (
            self.cache.get(
                verdict_key(
                    self.record, real, self.backend.name, find_links=self.options.find_links, index_url=self.options.index_url
                )
            )
            is None
        )

    def _prepare(self, cand: Candidate) -> None:
        """Build the environment a candidate needs (used ahead of time)."""
        try:
            real = self.resolved(cand)
            self.backend.ensure(
                env_spec(self.record, real, find_links=self.options.find_links, index_url=self.options.index_url), NullProgress()
            )
        except (XlakbError, OSError):
            pass  # ahead of time only: the probe builds it again and reports what goes wrong

    # -- the whole run ---------------------------------------------------------------
    def run(self, candidates: list[Candidate], *, source: str | None = None, direction: str | None = None) -> Report:
        """Bisect ``candidates`` (oldest first): verify both ends, then search between them."""
        source = source or self.source.name
        if len(candidates) < 2:
            raise XlakbError(f"a bisection needs at least two {source} candidates, got {len(candidates)}")
        if direction not in (None, *DIRECTIONS):
            raise XlakbError(f"unknown direction {direction!r}", hint="introduced or fixed")
        n = len(candidates)
        saved = self.saved_probes(candidates, direction, source)
        order: list[ProbeResult] = []

        def run_probe(idx: int) -> ProbeResult:
            return self.probe_saved(candidates[idx], saved)

        # 1. both ends
        self.progress.step(0, 2, f"verifying the ends: {candidates[0].label} and {candidates[-1].label}")
        ends = self.map(run_probe, [0, n - 1])
        order += ends
        first, last = ends
        for res, name in ((first, "start"), (last, "end")):
            if res.verdict in (Verdict.UNTESTABLE, Verdict.ERROR):
                raise XlakbError(
                    f"the {name} {res.candidate} could not be judged ({res.verdict.value}: {res.detail})",
                    hint=f"choose another {name}; log: {res.log or 'none'}",
                )
        inferred = "introduced" if last.verdict is Verdict.REPRODUCED else "fixed"
        if first.verdict is last.verdict:
            raise XlakbError(
                f"the ends do not bracket a change: {first.candidate} and {last.candidate} are both {first.verdict.value}",
                hint="widen the range or check the reproducer",
            )
        if direction and direction != inferred:
            raise XlakbError(
                f"asked for where the bug was {direction}, but {first.candidate} is {first.verdict.value} "
                f"and {last.candidate} is {last.verdict.value}",
                hint=f"use --direction {inferred}",
            )
        direction = inferred

        # 2. search; outcomes already known (state, cache) cost nothing
        known = {i: outcome_of(res.verdict, direction) for i, c in enumerate(candidates) if (res := saved.get(c.label))}
        search = Bisection(n, known=known)
        # building ahead helps only where the probes run: on this machine
        pool = _Preparer(self._prepare) if self.options.prepare_ahead and self.executor.name == "local" else None
        prepared: set[int] = set()
        try:
            while not search.done:
                batch = search.next_probes(self.options.jobs)
                if not batch:
                    break
                left = search.first_new - search.last_old - 1
                steps = math.ceil(math.log2(left + 1)) if left > 0 else 0
                self.progress.step(
                    len(order),
                    len(order) + steps,
                    f"{left} candidate(s) left, ~{steps} step(s): probing {', '.join(candidates[i].label for i in batch)}",
                )
                # Building ahead pays only while a probe really runs; when this batch is answered
                # by saved or cached verdicts it would just download and install for nothing.
                if pool is not None and any(self._will_run(candidates[i], saved) for i in batch):
                    for i in search.lookahead():
                        if i not in prepared and self._will_run(candidates[i], saved):
                            prepared.add(i)
                            pool.submit(candidates[i])
                results = self.map(run_probe, batch)
                for i, res in zip(batch, results):
                    order.append(res)
                    search.record(i, outcome_of(res.verdict, direction))
                    self.progress.info(self.said(res))
        finally:
            if pool is not None:
                pool.stop()
        result = search.result()
        # every probe the answer rests on, once: range finding, saved state (a resumed run), this run
        used = {label: res for label, res in self.range_probes.items()}
        for res in saved.values() + order:
            used.setdefault(res.candidate, res)
        report = Report(
            record=self.record.id,
            source=source,
            direction=direction,
            candidates=candidates,
            last_old=result.last_old,
            first_new=result.first_new,
            exact=result.exact,
            unknown=list(result.unknown),
            probes=list(used.values()),
            probes_run=self.probes_run,
            notes=list(self.notes),
            flaky=list(self.flaky),
            runner=self.backend.name,
            command=self.options.command,
            measured_at=now(),
            noun=self.source.noun,
            words=dict(self.options.words),
        )
        self.progress.step(len(used), len(used), "done")
        return report

    def map(self, fn: Callable[[T], ProbeResult], items: list[T]) -> list[ProbeResult]:
        """``fn`` over ``items``, ``jobs`` at a time, results in order."""
        if self.options.jobs == 1 or len(items) == 1:
            return [fn(i) for i in items]
        with cf.ThreadPoolExecutor(max_workers=min(self.options.jobs, len(items))) as ex:
            return list(ex.map(fn, items))
