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
import shlex
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
            "probes": [{"candidate": p.candidate, "verdict": p.verdict.value, "detail": p.detail, "duration_s": round(p.duration_s, 2),
                        "cached": p.cached, "measured_at": p.measured_at} for p in self.probes],
            "probes_run": self.probes_run,
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
        lines.append(f"Searched {len(self.candidates)} {kind} candidates ({self.candidates[0].label} .. {self.candidates[-1].label}) "
                     f"with {len(self.probes)} probes ({self.probes_run} run now, {self.runner} runner).")
        lines.append(f"Confidence: {self.confidence}" + (f" ({'; '.join(self.confidence_reasons)})" if self.confidence_reasons else ""))
        if self.flaky:
            lines.append(f"Flaky (disagreeing runs, not counted): {', '.join(self.flaky)}")
        lines.append(f"Reproduce: {self.command}")
        return "\n".join(lines)


def _short(value: str) -> str:
    return Path(value).name if value.endswith(".whl") else value


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


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
        blob = json.dumps({"record": self.record.id, "reproducer": self.record.reproducer_sha256(), "source": source,
                           "direction": direction, "repeat": self.options.repeat,
                           "candidates": [c.label for c in candidates], "runner": self.backend.name}, sort_keys=True)
        return self.state_root / f"{self.record.id}-{source}-{hashlib.sha256(blob.encode()).hexdigest()[:16]}.json"

    def _load_state(self, path: Path) -> dict[str, ProbeResult]:
        data = read_json(path) or {}
        return {label: ProbeResult.from_json(p, cached=True) for label, p in data.get("probes", {}).items()}

    def _save_state(self, path: Path, done: dict[str, ProbeResult]) -> None:
        write_json(path, {"record": self.record.id, "probes": {k: v.to_json() for k, v in done.items()}})

    # -- probing ------------------------------------------------------------------
    def probe(self, cand: Candidate) -> ProbeResult:
        """One candidate, ``repeat`` times; disagreeing runs make it flaky (an error)."""
        try:
            real = self.resolved(cand)
        except XlakbError as err:
            return ProbeResult(self.record.id, cand.label, cand.kind, cand.torch_xla, cand.torch, Verdict.UNTESTABLE,
                               f"no build: {err}", None, 0.0, _now(), "", self.backend.name, "")
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
        pool = cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="xlakb-prepare") if self.options.prepare_ahead else None
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
                if pool is not None:
                    for i in search.lookahead():
                        if i not in prepared and candidates[i].label not in done:
                            prepared.add(i)
                            pool.submit(self._prepare, candidates[i])
                results = self._map(run_probe, batch)
                for i, res in zip(batch, results):
                    order.append(res)
                    search.record(i, outcome_of(res.verdict, direction))
                    self.progress.info(f"{res.candidate}: {res.verdict.value}{' (cached)' if res.cached else ''}")
        finally:
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
        result = search.result()
        report = Report(
            record=self.record.id, source=source, direction=direction, candidates=candidates,
            last_old=result.last_old, first_new=result.first_new, exact=result.exact, unknown=list(result.unknown),
            probes=order, probes_run=self.probes_run, flaky=list(self.flaky), runner=self.backend.name,
            command=self.options.command, measured_at=_now(),
        )
        if self.flaky:
            report.confidence_reasons.append(f"flaky candidates: {', '.join(self.flaky)}")
        if not result.exact:
            report.confidence_reasons.append(f"{len(result.unknown)} untestable candidate(s) between the ends of the answer")
        report.confidence = "high" if not report.confidence_reasons else "medium"
        self.progress.step(len(order), len(order), "done")
        return report

    def _map(self, fn: Callable[[int], ProbeResult], indexes: list[int]) -> list[ProbeResult]:
        if self.options.jobs == 1 or len(indexes) == 1:
            return [fn(i) for i in indexes]
        with cf.ThreadPoolExecutor(max_workers=min(self.options.jobs, len(indexes))) as ex:
            return list(ex.map(fn, indexes))


def save_report(root: Path, report: Report) -> Path:
    path = results_dir(root, report.record) / f"bisect-{report.source}.json"
    write_json(path, report.to_json())
    return path


# -- commits: a commit is its Python files laid over the nearest binary build -------------
_GITREV = """
import importlib.util, os, re, sys
spec = importlib.util.find_spec("torch_xla")
path = os.path.join(spec.submodule_search_locations[0], "version.py")
text = open(path).read() if os.path.exists(path) else ""
m = re.search(r"__xla_gitrev__\\s*=\\s*['\"]([0-9a-f]{7,40})['\"]", text)
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

    def __call__(self, cand: Candidate) -> Candidate:
        sha = cand.meta["sha"]
        label = self.commits.nearest_base(self.repo, sha, {k: v[1] for k, v in self.bases.items()})
        base, gitrev = self.bases[label]
        native = self.commits.native_changes(self.repo, gitrev, sha)
        meta = dict(cand.meta, base=label, base_gitrev=gitrev, native_differences=native[:50], native_difference_count=len(native))
        return dataclasses.replace(cand, torch_xla=base.torch_xla, torch=base.torch, pins=base.pins, overlay=(str(self.repo), sha), meta=meta)


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
    if report.exact and culprit.meta.get("sha"):
        if commits.is_python_only(repo, culprit.meta["sha"]):
            reasons.append("the culprit's own diff is Python-only, which the overlay reproduces exactly")
            culprit.meta["python_only"] = True
        else:
            reasons.append("the culprit changes native code, which an overlay on a binary build cannot include")
            culprit.meta["python_only"] = False
    if resolver is not None:
        native_counts = []
        for idx in (lo, hi):
            sha = report.candidates[idx].meta.get("sha")
            if sha:
                try:
                    c = resolver(report.candidates[idx])
                except XlakbError:
                    continue
                native_counts.append((report.candidates[idx].label, c.meta["base"], c.meta["native_difference_count"]))
        for label, base, count in native_counts:
            if count:
                reasons.append(f"{label} differs from its base build {base} in {count} native file(s) (C++/build/pins): its binary part is the base's")
    python_only_culprit = "Python-only" in " ".join(reasons)
    native_noise = any("native file" in r or "changes native code" in r for r in reasons)
    if not report.exact or report.flaky:
        report.confidence = "low" if native_noise else "medium"
    elif native_noise:
        report.confidence = "medium" if python_only_culprit else "low"
    else:
        report.confidence = "high"


# -- sources: from what the user names to ordered candidates --------------------------------
def walk_back(engine: Engine, candidates: list[Candidate], end: int) -> int:
    """Only the end is known: step back over earlier candidates (1, 2, 4... back) until
    one behaves differently; return its index (untestable ones are stepped over)."""
    end_res = engine.probe(candidates[end])
    if end_res.verdict not in (Verdict.REPRODUCED, Verdict.NOT_REPRODUCED):
        raise XlakbError(f"the end {candidates[end].label} could not be judged ({end_res.verdict.value}: {end_res.detail})")
    step, idx = 1, end
    while idx > 0:
        idx = max(0, end - step)
        engine.progress.info(f"looking for a start: trying {candidates[idx].label}")
        res = engine.probe(candidates[idx])
        if res.verdict in (Verdict.REPRODUCED, Verdict.NOT_REPRODUCED) and res.verdict is not end_res.verdict:
            return idx
        step *= 2
    raise XlakbError(f"no candidate before {candidates[end].label} behaves differently (all are {end_res.verdict.value} or untestable)",
                     hint="the change is older than the oldest candidate")


def nightly_resolver(progress: Progress) -> Resolver:
    from .candidates.nightlies import WheelCache, fetch_nightly

    wheels = WheelCache(cache_dir() / "nightlies")
    return lambda cand: fetch_nightly(cand, wheels, progress=progress)


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
