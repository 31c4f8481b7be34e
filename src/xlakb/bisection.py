"""Running a bisection: verify the ends, search, cache, resume, report.

The search itself is :mod:`xlakb.search` (pure); this module connects it to the
world: candidates (releases, nightlies, commits) are *resolved* into something
installable, probed with :func:`xlakb.runner.probe` through a backend, and the
outcomes fed to the search.  Every probe is saved at once (atomically) in a state
file, so an interrupted bisection resumes without repeating a probe, and every
verdict lands in the verdict cache, so bisecting the same thing again runs none.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import datetime as _dt
import hashlib
import json
import math
import re
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .candidates import Candidate
from .envs import Backend, cache_dir
from .errors import XlakbError
from .progress import NullProgress, Progress
from .records import Record
from .results import read_json, results_dir, write_json
from .runner import ProbeResult, Verdict, VerdictCache, env_spec, try_probe
from .search import Bisection, Outcome

DIRECTIONS = ("introduced", "fixed")

Resolver = Callable[[Candidate], Candidate]


def outcome_of(verdict: Verdict, direction: str) -> Outcome:
    """The one rule mapping a reproducer verdict to a search outcome."""
    if verdict is Verdict.UNTESTABLE:
        return Outcome.SKIP
    if verdict is Verdict.ERROR:
        return Outcome.ERROR
    reproduced = verdict is Verdict.REPRODUCED
    if direction == "introduced":
        return Outcome.NEW if reproduced else Outcome.OLD
    return Outcome.OLD if reproduced else Outcome.NEW


def labels_for(direction: str) -> tuple[str, str]:
    """(what OLD means, what NEW means) in verdict words."""
    return ("not-reproduced", "reproduced") if direction == "introduced" else ("reproduced", "not-reproduced")


@dataclass
class Options:
    repeat: int = 1
    jobs: int = 1
    prepare_ahead: bool = True
    find_links: tuple[str, ...] = ()
    index_url: str | None = None
    command: str = ""


@dataclass
class Report:
    record: str
    source: str
    direction: str
    candidates: list[Candidate]
    last_old: int
    first_new: int
    exact: bool
    unknown: list[int]
    probes: list[ProbeResult]
    probes_run: int
    flaky: list[str]
    runner: str
    command: str
    between: list[dict] = field(default_factory=list)
    confidence: str = "high"
    confidence_reasons: list[str] = field(default_factory=list)
    measured_at: str = ""
    notes: list[str] = field(default_factory=list)  # how the range was chosen (untestable ends moved...)

    @property
    def last_old_candidate(self) -> Candidate:
        return self.candidates[self.last_old]

    @property
    def first_new_candidate(self) -> Candidate:
        return self.candidates[self.first_new]

    def to_json(self) -> dict:
        old, new = labels_for(self.direction)

        def cand(c: Candidate) -> dict:
            meta = {k: v for k, v in c.meta.items() if isinstance(v, (str, int, float, bool, type(None), list))}
            return {"label": c.label, "kind": c.kind, "torch_xla": _short(c.torch_xla), "torch": _short(c.torch), "meta": meta}

        return {
            "record": self.record,
            "kind": "bisect",
            "source": self.source,
            "direction": self.direction,
            "old_label": old,
            "new_label": new,
            "range": {"first": self.candidates[0].label, "last": self.candidates[-1].label, "count": len(self.candidates)},
            "last_old": cand(self.last_old_candidate),
            "first_new": cand(self.first_new_candidate),
            "exact": self.exact,
            "unknown": [self.candidates[i].label for i in self.unknown],
            "between": self.between,
            "confidence": self.confidence,
            "confidence_reasons": self.confidence_reasons,
            "flaky": self.flaky,
            "probes": [{"candidate": p.candidate, "torch_xla": _short(p.torch_xla), "torch": _short(p.torch),
                        "verdict": p.verdict.value, "detail": p.detail, "duration_s": round(p.duration_s, 2),
                        "cached": p.cached, "measured_at": p.measured_at} for p in self.probes],
            "probes_run": self.probes_run,
            "notes": self.notes,
            "runner": self.runner,
            "command": self.command,
            "measured_at": self.measured_at,
        }

    def summary(self) -> str:
        """A paragraph ready to paste into an upstream issue."""
        old, new = labels_for(self.direction)
        verb = "introduced" if self.direction == "introduced" else "fixed"
        lo, hi = self.last_old_candidate, self.first_new_candidate
        lines = []
        if self.exact:
            lines.append(f"The change ({verb}) is in {hi.label}: {lo.label} is {old}, {hi.label} is {new}.")
        else:
            lines.append(f"The change ({verb}) lies between {lo.label} ({old}) and {hi.label} ({new}); "
                         f"{len(self.unknown)} candidate(s) in between could not be tested.")
        if hi.meta.get("pr_url"):
            lines.append(f"Culprit: {hi.meta.get('subject', '')} {hi.meta['pr_url']}")
        if self.between and not self.exact:
            lines.append(f"Commits in range: {len(self.between)}")
        kind = {"releases": "release", "nightlies": "nightly", "commits": "commit"}.get(self.source, self.source)
        lines.extend(self.notes)
        lines.append(f"Searched {len(self.candidates)} {kind} candidates ({self.candidates[0].label} .. {self.candidates[-1].label}) "
                     f"with {len(self.probes)} probes ({self.probes_run} run now, {self.runner} runner).")
        lines.append(f"Confidence: {self.confidence}" + (f" ({'; '.join(self.confidence_reasons)})" if self.confidence_reasons else ""))
        if self.flaky:
            lines.append(f"Flaky (disagreeing runs, not counted): {', '.join(self.flaky)}")
        lines.append(f"Reproduce: {self.command}")
        return "\n".join(lines)


def _identity(c: Candidate) -> list:
    return [c.label, c.torch_xla, c.torch, list(c.pins), list(c.overlay or ()),
            c.meta.get("torch_xla_url"), c.meta.get("torch_url")]


def _short(value: str) -> str:
    return Path(value).name if value.endswith(".whl") else value


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


class _Preparer:
    """Builds environments of possible next midpoints on one daemon thread while probes run.

    A daemon thread, so neither the end of a bisection nor Ctrl-C waits for a build nobody
    needs any more; a build cut off that way has no marker and is never reused."""

    def __init__(self, work: Callable[[Candidate], None]) -> None:
        import queue

        self._queue: "queue.Queue[Candidate | None]" = queue.Queue()
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
        except Exception:
            pass
        self._queue.put(None)


class Engine:
    """Bisects one record's reproducer over ordered candidates with one backend."""

    def __init__(self, record: Record, backend: Backend, *, progress: Progress | None = None,
                 cache: VerdictCache | None = None, options: Options | None = None,
                 resolve: Resolver | None = None, state_root: Path | None = None) -> None:
        if options and options.repeat < 1:
            raise XlakbError(f"--repeat must be at least 1, got {options.repeat}")
        if options and options.jobs < 1:
            raise XlakbError(f"-j must be at least 1, got {options.jobs}")
        self.record = record
        self.backend = backend
        self.progress = progress or NullProgress()
        self.cache = cache if cache is not None else VerdictCache()
        self.options = options or Options()
        self.resolve = resolve or (lambda c: c)
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
            self.progress.info(f"{cand.label}: {res.verdict.value}{' (cached)' if res.cached else ''}")
        return res

    # -- candidates ------------------------------------------------------------
    def resolved(self, cand: Candidate) -> Candidate:
        with self._lock:
            hit = self._resolved.get(cand.label)
        if hit is None:
            hit = self.resolve(cand)
            with self._lock:
                self._resolved[cand.label] = hit
        return hit

    # -- state (resume) -----------------------------------------------------------
    def state_path(self, candidates: list[Candidate], direction: str | None, source: str) -> Path:
        # What is installed for each candidate belongs to the key too: the same labels over other
        # wheels (another wheelhouse, nightly URL template or set of commit bases) are another bisection.
        blob = json.dumps({"record": self.record.id, "reproducer": self.record.reproducer_sha256(), "source": source,
                           "direction": direction, "repeat": self.options.repeat,
                           "candidates": [_identity(c) for c in candidates], "runner": self.backend.name,
                           "find_links": list(self.options.find_links), "index_url": self.options.index_url,
                           "resolver": getattr(self.resolve, "fingerprint", None)}, sort_keys=True)
        return self.state_root / f"{self.record.id}-{source}-{hashlib.sha256(blob.encode()).hexdigest()[:16]}.json"

    def _load_state(self, path: Path) -> dict[str, ProbeResult]:
        """Saved probes; errors (a failed download, a crash) are left out so a resumed run retries them."""
        data = read_json(path) or {}
        saved = {label: ProbeResult.from_json(p, cached=True) for label, p in data.get("probes", {}).items()}
        return {label: res for label, res in saved.items() if res.verdict is not Verdict.ERROR}

    def _save_state(self, path: Path, done: dict[str, ProbeResult]) -> None:
        write_json(path, {"record": self.record.id, "probes": {k: v.to_json() for k, v in done.items()}})

    # -- probing ------------------------------------------------------------------
    def probe(self, cand: Candidate) -> ProbeResult:
        """One candidate, ``repeat`` times; disagreeing runs make it flaky (an error)."""
        from .candidates.nightlies import WheelNotFound

        try:
            real = self.resolved(cand)
        except WheelNotFound as err:  # no build exists for this candidate: untestable
            return ProbeResult(self.record.id, cand.label, cand.kind, cand.torch_xla, cand.torch, Verdict.UNTESTABLE,
                               f"no build: {err}", None, 0.0, _now(), "", self.backend.name, "")
        except XlakbError as err:  # the build exists but could not be had now: an error, retried on resume
            with self._lock:
                self._resolved.pop(cand.label, None)
            return ProbeResult(self.record.id, cand.label, cand.kind, cand.torch_xla, cand.torch, Verdict.ERROR,
                               f"build unavailable: {err}", None, 0.0, _now(), "", self.backend.name, "")
        kwargs = dict(progress=self.progress, find_links=self.options.find_links, index_url=self.options.index_url)
        first = try_probe(self.record, real, self.backend, cache=self.cache, **kwargs)
        if not first.cached:
            with self._lock:
                self.probes_run += 1
        if self.options.repeat == 1 or first.verdict is Verdict.ERROR:
            return first
        runs = [first]
        for _ in range(self.options.repeat - 1):
            runs.append(try_probe(self.record, real, self.backend, cache=None, **kwargs))
            with self._lock:
                self.probes_run += 1
        verdicts = {r.verdict for r in runs}
        if len(verdicts) == 1:
            return first
        seen = ", ".join(r.verdict.value for r in runs)
        with self._lock:
            self.flaky.append(cand.label)
        return dataclasses.replace(first, verdict=Verdict.ERROR, detail=f"flaky: {len(runs)} runs disagreed ({seen})", cached=False)

    def _will_run(self, cand: Candidate, done: dict[str, ProbeResult]) -> bool:
        """Whether probing ``cand`` would run the reproducer: no saved probe, no cached verdict.
        Looks the verdict up without downloading anything (the resolver's ``peek`` when it has one)."""
        if cand.label in done:
            return False
        if self.cache is None:
            return True
        try:
            peek = getattr(self.resolve, "peek", None)
            real = peek(cand) if peek is not None else self.resolved(cand)
            spec = env_spec(self.record, real, find_links=self.options.find_links, index_url=self.options.index_url)
        except XlakbError:
            return True
        return self.cache.get(VerdictCache.key(self.record, spec, self.backend.name)) is None

    def _prepare(self, cand: Candidate) -> None:
        """Build the environment a candidate needs (used ahead of time)."""
        try:
            real = self.resolved(cand)
            self.backend.ensure(env_spec(self.record, real, find_links=self.options.find_links,
                                         index_url=self.options.index_url), NullProgress())
        except XlakbError:
            pass  # the probe itself will report it

    # -- the whole run ---------------------------------------------------------------
    def run(self, candidates: list[Candidate], *, source: str, direction: str | None = None) -> Report:
        if len(candidates) < 2:
            raise XlakbError(f"a bisection needs at least two {source} candidates, got {len(candidates)}")
        if direction not in (None, *DIRECTIONS):
            raise XlakbError(f"unknown direction {direction!r}", hint="introduced or fixed")
        n = len(candidates)
        state_file = self.state_path(candidates, direction, source)
        done = self._load_state(state_file)
        if done:
            self.progress.info(f"resuming: {len(done)} probe(s) already done ({state_file})")
        order: list[ProbeResult] = []

        def run_probe(idx: int) -> ProbeResult:
            cand = candidates[idx]
            if cand.label in done:
                return done[cand.label]
            res = self.probe(cand)
            with self._lock:
                done[cand.label] = res
                self._save_state(state_file, done)
            return res

        # 1. both ends
        self.progress.step(0, 2, f"verifying the ends: {candidates[0].label} and {candidates[-1].label}")
        ends = self._map(run_probe, [0, n - 1])
        order += ends
        first, last = ends
        for res, name in ((first, "start"), (last, "end")):
            if res.verdict in (Verdict.UNTESTABLE, Verdict.ERROR):
                raise XlakbError(f"the {name} {res.candidate} could not be judged ({res.verdict.value}: {res.detail})",
                                 hint=f"choose another {name}; log: {res.log or 'none'}")
        inferred = "introduced" if last.verdict is Verdict.REPRODUCED else "fixed"
        if first.verdict is last.verdict:
            raise XlakbError(f"the ends do not bracket a change: {first.candidate} and {last.candidate} are both {first.verdict.value}",
                             hint="widen the range or check the reproducer")
        if direction and direction != inferred:
            raise XlakbError(f"asked for where the bug was {direction}, but {first.candidate} is {first.verdict.value} "
                             f"and {last.candidate} is {last.verdict.value}", hint=f"use --direction {inferred}")
        direction = inferred

        # 2. search; outcomes already known (state, cache) cost nothing
        known = {i: outcome_of(done[c.label].verdict, direction) for i, c in enumerate(candidates) if c.label in done}
        search = Bisection(n, known=known)
        pool = _Preparer(self._prepare) if self.options.prepare_ahead else None
        prepared: set[int] = set()
        try:
            while not search.done:
                batch = search.next_probes(self.options.jobs)
                if not batch:
                    break
                left = search.first_new - search.last_old - 1
                steps = math.ceil(math.log2(left + 1)) if left > 0 else 0
                self.progress.step(len(order), len(order) + steps,
                                   f"{left} candidate(s) left, ~{steps} step(s): probing {', '.join(candidates[i].label for i in batch)}")
                # Building ahead pays only while a probe really runs; when this batch is answered
                # by saved or cached verdicts it would just download and install for nothing.
                if pool is not None and any(self._will_run(candidates[i], done) for i in batch):
                    for i in search.lookahead():
                        if i not in prepared and self._will_run(candidates[i], done):
                            prepared.add(i)
                            pool.submit(candidates[i])
                results = self._map(run_probe, batch)
                for i, res in zip(batch, results):
                    order.append(res)
                    search.record(i, outcome_of(res.verdict, direction))
                    self.progress.info(f"{res.candidate}: {res.verdict.value}{' (cached)' if res.cached else ''}")
        finally:
            if pool is not None:
                pool.stop()
        result = search.result()
        # every probe the answer rests on, once: range finding, saved state (a resumed run), this run
        used = {label: res for label, res in self.range_probes.items()}
        for res in list(done.values()) + order:
            used.setdefault(res.candidate, res)
        report = Report(
            record=self.record.id, source=source, direction=direction, candidates=candidates,
            last_old=result.last_old, first_new=result.first_new, exact=result.exact, unknown=list(result.unknown),
            probes=list(used.values()), probes_run=self.probes_run, notes=list(self.notes), flaky=list(self.flaky), runner=self.backend.name,
            command=self.options.command, measured_at=_now(),
        )
        if self.flaky:
            report.confidence_reasons.append(f"flaky candidates: {', '.join(self.flaky)}")
        if not result.exact:
            report.confidence_reasons.append(f"{len(result.unknown)} untestable candidate(s) between the ends of the answer")
        report.confidence = "high" if not report.confidence_reasons else "medium"
        self.progress.step(len(used), len(used), "done")
        return report

    def _map(self, fn: Callable[[int], ProbeResult], indexes: list[int]) -> list[ProbeResult]:
        if self.options.jobs == 1 or len(indexes) == 1:
            return [fn(i) for i in indexes]
        with cf.ThreadPoolExecutor(max_workers=min(self.options.jobs, len(indexes))) as ex:
            return list(ex.map(fn, indexes))


def save_report(root: Path, report: Report) -> Path:
    path = results_dir(root, report.record) / f"bisect-{report.source}-{report.direction}.json"
    write_json(path, report.to_json())
    return path


# -- commits: a commit is its Python files laid over the nearest binary build -------------
_GITREV = r"""
import importlib.util, os, re, sys
spec = importlib.util.find_spec("torch_xla")
path = os.path.join(spec.submodule_search_locations[0], "version.py")
text = open(path).read() if os.path.exists(path) else ""
m = re.search(r"__xla_gitrev__\s*=\s*[\x27\x22]([0-9a-f]{7,40})[\x27\x22]", text)
print("GITREV", m.group(1) if m else "unknown")
"""


def base_gitrev(record: Record, base: Candidate, backend: Backend, options: Options, progress: Progress) -> str:
    """The commit a binary build was made from (``torch_xla.version.__xla_gitrev__``)."""
    spec = env_spec(record, base, find_links=options.find_links, index_url=options.index_url)
    prepared = backend.ensure(spec, progress)
    with tempfile.TemporaryDirectory(prefix="xlakb-gitrev-") as tmp:
        script = Path(tmp) / "gitrev.py"
        script.write_text(_GITREV)
        result = backend.run(prepared, script, env={"PATH": "/usr/bin:/bin"}, timeout=120, log_path=Path(tmp) / "log")
    m = re.search(r"GITREV (\S+)", result.output)
    if result.exit_code != 0 or not m or m.group(1) == "unknown":
        raise XlakbError(f"cannot read __xla_gitrev__ of base build {base.label}: {result.output.strip()[-160:]}")
    return m.group(1)


class CommitResolver:
    """Turns a commit candidate into base build + overlay, choosing the nearest base."""

    def __init__(self, repo: Path, bases: dict[str, tuple[Candidate, str]]) -> None:
        from .candidates import commits

        self.commits = commits
        self.repo = repo
        self.bases = bases  # label -> (candidate, gitrev)
        self._memo: dict[str, Candidate] = {}  # sha -> resolved (git diffs are not cheap)

    @property
    def fingerprint(self) -> list:
        """What the resolution depends on (part of the engine's resume-state key)."""
        return sorted([label, c.torch_xla, c.torch, list(c.pins), gitrev] for label, (c, gitrev) in self.bases.items())

    def __call__(self, cand: Candidate) -> Candidate:
        sha = cand.meta["sha"]
        hit = self._memo.get(sha)
        if hit is None:
            label = self.commits.nearest_base(self.repo, sha, {k: v[1] for k, v in self.bases.items()})
            base, gitrev = self.bases[label]
            native = self.commits.native_changes(self.repo, gitrev, sha)
            meta = dict(cand.meta, base=label, base_gitrev=gitrev, native_differences=native[:50], native_difference_count=len(native))
            hit = dataclasses.replace(cand, torch_xla=base.torch_xla, torch=base.torch, pins=base.pins, overlay=(str(self.repo), sha), meta=meta)
            self._memo[sha] = hit
        return hit


def annotate_commits(report: Report, repo: Path, resolver: CommitResolver | None) -> None:
    """Commits between the answer's ends, python-only culprits, native differences → confidence."""
    from .candidates import commits

    lo, hi = report.last_old, report.first_new
    for cand in report.candidates[lo + 1: hi + 1]:
        sha = cand.meta.get("sha")
        if not sha:
            continue
        report.between.append({
            "sha": sha, "subject": cand.meta.get("subject", ""), "pr": cand.meta.get("pr"),
            "url": cand.meta.get("url"), "pr_url": cand.meta.get("pr_url"), "date": cand.meta.get("date"),
            "python_only": commits.is_python_only(repo, sha),
        })
    reasons = report.confidence_reasons
    culprit = report.candidates[hi]
    culprit_python_only: bool | None = None
    if report.exact and report.between and report.between[-1]["sha"] == culprit.meta.get("sha"):
        culprit_python_only = culprit.meta["python_only"] = report.between[-1]["python_only"]
        reasons.append("the culprit's own diff is Python-only, which the overlay reproduces exactly" if culprit_python_only
                       else "the culprit changes native code, which an overlay on a binary build cannot include")
    native_ends = False
    if resolver is not None:
        for idx in (lo, hi):
            cand = report.candidates[idx]
            if not cand.meta.get("sha"):
                continue
            try:
                c = resolver(cand)
            except XlakbError:
                continue
            count, files = c.meta["native_difference_count"], c.meta["native_differences"]
            cand.meta.update(base=c.meta["base"], base_gitrev=c.meta["base_gitrev"], native_differences=files[:20])
            if count:
                native_ends = True
                shown = ", ".join(files[:5]) + (f" and {count - 5} more" if count > 5 else "")
                reasons.append(f"{cand.label} differs from its base build {c.meta['base']} in {count} native file(s) "
                               f"({shown}): its binary part is the base's")
    native_noise = native_ends or culprit_python_only is False
    if not report.exact or report.flaky:
        report.confidence = "low" if native_noise else "medium"
    elif native_noise:
        report.confidence = "medium" if culprit_python_only else "low"
    else:
        report.confidence = "high"


# -- sources: from what the user names to ordered candidates --------------------------------
JUDGED = (Verdict.REPRODUCED, Verdict.NOT_REPRODUCED)


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
    raise XlakbError(f"no candidate before {candidates[end].label} behaves differently (all are {end_res.verdict.value} or untestable)",
                     hint="the change is older than the oldest candidate")


def _testable(engine: Engine, cand: Candidate) -> bool:
    """Whether the reproducer can judge ``cand``; an error (not an untestable API) stops the search for a range."""
    res = engine.judge(cand)
    if res.verdict is Verdict.ERROR:
        raise XlakbError(f"{cand.label} could not be judged while looking for the range ({res.detail})",
                         hint=f"pass --start/--end, or check the reproducer; log: {res.log or 'none'}")
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
        raise XlakbError(f"the reproducer cannot run on any release from {cands[guess].label} "
                         f"{'on' if toward == 0 else 'back'} (all untestable)", hint="check the reproducer's exit 125 rule")
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


def release_ranges(engine: Engine, start: str | None = None, end: str | None = None,
                   direction: str | None = None) -> list[list[Candidate]]:
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
    from .candidates.releases import releases_between

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
            engine.notes.append(f"Start moved forward to {labels[lo]}, the oldest release the reproducer runs on "
                                f"({labels[lo - 1]} is untestable: {skipped.detail}).")
    hi = _edge(engine, cands, len(cands) - 1, toward=len(cands) - 1) if not end else len(cands) - 1
    if hi < len(cands) - 1:
        skipped = engine.range_probes[labels[hi + 1]]
        engine.notes.append(f"End moved back to {labels[hi]}, the newest release the reproducer runs on "
                            f"({labels[hi + 1]} is untestable: {skipped.detail}).")
    if hi <= lo:
        raise XlakbError(f"the reproducer runs on one release only ({labels[lo]}): nothing to bisect")
    first, last = engine.judge(cands[lo]).verdict, engine.judge(cands[hi]).verdict
    if first is not last or start:  # a named start: the engine verifies the ends itself
        return [cands[lo:hi + 1]]
    # the ends agree: look for a release in between that the record claims behaves otherwise
    other = Verdict.NOT_REPRODUCED if first is Verdict.REPRODUCED else Verdict.REPRODUCED
    wanted = other is Verdict.REPRODUCED
    inside = [i for i in claimed if lo < i < hi and record.claims(labels[i]) is wanted]
    if inside:
        mid = inside[len(inside) // 2]
        if engine.judge(cands[mid]).verdict is other:
            engine.notes.append(f"{labels[lo]} and {labels[hi]} are both {first.value}; {labels[mid]} is {other.value}, "
                                f"so the bug {'came and went' if wanted else 'went and came back'} between them.")
            halves = [cands[lo:mid + 1], cands[mid:hi + 1]]
            if direction:
                pick = 0 if (direction == "introduced") == wanted else 1
                return [halves[pick]]
            return halves
    state = "shows the bug" if first is Verdict.REPRODUCED else "does not show the bug"
    raise XlakbError(f"nothing to bisect: {labels[lo]} and {labels[hi]} are both {first.value}"
                     + (f", and so is {labels[inside[len(inside) // 2]]}" if inside else "")
                     + f" (every release tested {state})",
                     hint="name a range with --start/--end, or check the record's claimed versions")


class NightlyResolver:
    """Downloads a nightly candidate's wheels (once, into the cache); ``peek`` says where they
    are or will be without downloading (to look verdicts up)."""

    def __init__(self, progress: Progress) -> None:
        from .candidates.nightlies import WheelCache

        self.wheels = WheelCache(cache_dir() / "nightlies")
        self.progress = progress

    def __call__(self, cand: Candidate) -> Candidate:
        from .candidates.nightlies import fetch_nightly

        return fetch_nightly(cand, self.wheels, progress=self.progress)

    def peek(self, cand: Candidate) -> Candidate:
        meta = cand.meta
        if cand.kind != "nightly" or meta.get("missing"):
            return self(cand)  # raises the right error
        return dataclasses.replace(cand, torch_xla=str(self.wheels.path_for(meta["torch_xla_url"])),
                                   torch=str(self.wheels.path_for(meta["torch_url"])))


def nightly_resolver(progress: Progress) -> NightlyResolver:
    return NightlyResolver(progress)


def commit_resolver(record: Record, backend: Backend, options: Options, progress: Progress, repo: Path,
                    bases: list[Candidate], resolve_base: Resolver | None = None) -> CommitResolver:
    """Prepare each base build, read the commit it was built from, return the resolver."""
    table: dict[str, tuple[Candidate, str]] = {}
    for i, base in enumerate(bases):
        progress.step(i, len(bases), f"base build {base.label}: preparing and reading its gitrev")
        real = resolve_base(base) if resolve_base else base
        table[base.label] = (real, base_gitrev(record, real, backend, options, progress))
        progress.info(f"{base.label} was built from {table[base.label][1][:12]}")
    return CommitResolver(repo, table)


def nightly_candidate(date: str, *, versions: list[str] | tuple[str, ...], torch_xla_url: str | None = None,
                      torch_url: str | None = None) -> Candidate:
    """The nightly of one day (``YYYY-MM-DD``), e.g. a commit bisection's base ("nightly:2025-01-16")."""
    from .candidates.nightlies import list_nightlies

    try:
        day = _dt.date.fromisoformat(date)
    except ValueError:
        raise XlakbError(f"nightly base {date!r} is not a YYYY-MM-DD date", hint="e.g. --base nightly:2025-01-16") from None
    if not versions:
        raise XlakbError(f"nightly base {date} needs --nightly-version", hint="e.g. --nightly-version 2.7.0")
    found = [c for c in list_nightlies(day, day + _dt.timedelta(days=1), versions=list(versions), torch_xla_url=torch_xla_url,
                                       torch_url=torch_url, progress=NullProgress()) if c.meta["date"] == day.isoformat()]
    if not found:
        raise XlakbError(f"no nightly wheels for {date} (versions {', '.join(versions)})", hint="pick a day whose nightly exists")
    return found[0]


# -- narrowing: releases, then nightlies between them, then commits between those -------------
class NarrowStopped(XlakbError):
    """Narrowing could not go on to the next source; ``reports`` holds the stages that finished."""

    def __init__(self, message: str, *, reports: list[Report], hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.reports = list(reports)


def _finding(report: Report) -> str:
    old, new = labels_for(report.direction)
    lo, hi = report.last_old_candidate.label, report.first_new_candidate.label
    where = f"in {hi}" if report.exact else f"between {lo} and {hi}"
    return f"{report.source}: {report.direction} {where} ({lo} {old}, {hi} {new})"


def next_minor(version: str) -> str:
    from packaging.version import Version

    v = Version(version)
    return f"{v.major}.{v.minor + 1}.0"


def narrow(record: Record, backend: Backend, *, start: str | None = None, end: str | None = None,
           direction: str | None = None, repo: Path | None = None, branch: str | None = None,
           nightly_versions: list[str] | tuple[str, ...] | None = None, torch_xla_url: str | None = None,
           torch_url: str | None = None, progress: Progress | None = None, cache: VerdictCache | None = None,
           options: Options | None = None, state_root: Path | None = None) -> list[Report]:
    """Bisect releases, then the nightlies between the two releases' dates, then (with ``repo``)
    the commits between the gitrevs of the two nightlies, laid over those nightlies.

    Returns one report per finished stage (releases, nightlies[, commits]); every stage verifies its
    own ends.  Raises :class:`NarrowStopped` (with the finished reports) when a later stage cannot
    run or its ends do not bracket the change; plain XlakbError when the release stage fails.
    ``nightly_versions`` defaults to the first-new release's version and the next minor.
    """
    from .candidates.commits import list_commits
    from .candidates.nightlies import list_nightlies

    progress = progress or NullProgress()
    options = options or Options()
    cache = cache if cache is not None else VerdictCache()

    def engine(resolve: Resolver | None = None) -> Engine:
        return Engine(record, backend, progress=progress, cache=cache, options=options, resolve=resolve, state_root=state_root)

    reports: list[Report] = []

    def stop(stage: str, err: XlakbError, hint: str | None = None) -> NarrowStopped:
        so_far = "; ".join(_finding(r) for r in reports)
        return NarrowStopped(f"narrowing stopped at {stage}: {err.message}; found so far: {so_far}",
                             reports=reports, hint=hint or err.hint)

    # 1. releases
    progress.info("narrowing 1/3: releases")
    first_engine = engine()
    ranges = release_ranges(first_engine, start, end, direction)
    if len(ranges) > 1:
        raise XlakbError("narrowing follows one change, and the releases show two (the bug came and went): "
                         + " ".join(first_engine.notes), hint="pass --direction introduced or fixed")
    rel = first_engine.run(ranges[0], source="releases", direction=direction)
    reports.append(rel)

    # 2. nightlies between the two releases' dates
    a, b = rel.last_old_candidate, rel.first_new_candidate
    lo_date, hi_date = a.meta.get("date"), b.meta.get("date")
    versions = list(nightly_versions) if nightly_versions else list(dict.fromkeys([b.label, next_minor(b.label)]))
    progress.info(f"narrowing 2/3: nightlies {lo_date} .. {hi_date} (versions {', '.join(versions)})")
    if not lo_date or not hi_date:
        raise stop("nightlies", XlakbError(f"release {a.label if not lo_date else b.label} has no release date in the table"))
    resolve_nightly = nightly_resolver(progress)
    try:
        nightlies = list_nightlies(lo_date, hi_date, versions=versions, torch_xla_url=torch_xla_url, torch_url=torch_url,
                                   progress=progress)
        night = engine(resolve_nightly).run(nightlies, source="nightlies", direction=rel.direction)
    except XlakbError as err:
        raise stop(f"nightlies {lo_date} .. {hi_date} (versions {', '.join(versions)})", err,
                   hint=f"the change may predate {a.label}'s release date (release branches are cut earlier), or the nightlies "
                        f"carry other versions: pass --nightly-version, or bisect --source nightlies with your own --start/--end") from err
    reports.append(night)
    if repo is None:
        return reports

    # 3. commits between the gitrevs the two nightlies were built from, over those nightlies
    lo_n, hi_n = night.last_old_candidate, night.first_new_candidate
    progress.info(f"narrowing 3/3: commits between {lo_n.label} and {hi_n.label}")
    repo = Path(repo).resolve()
    try:
        resolver = commit_resolver(record, backend, options, progress, repo, [lo_n, hi_n], resolve_base=resolve_nightly)
        lo_rev, hi_rev = resolver.bases[lo_n.label][1], resolver.bases[hi_n.label][1]
        commits = list_commits(repo, lo_rev, hi_rev, branch=branch)
        com = engine(resolver).run(commits, source="commits", direction=rel.direction)
    except XlakbError as err:
        raise stop(f"commits between {lo_n.label} and {hi_n.label}", err) from err
    annotate_commits(com, repo, resolver)
    reports.append(com)
    return reports
