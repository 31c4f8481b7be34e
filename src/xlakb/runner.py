"""Run a record's reproducer on one candidate and judge the run.

The rule for what a run means lives in :func:`classify`, in one place:

* exit 0                         -> not-reproduced
* exit 1 and a signature matches -> reproduced
* exit 1, no signature matches   -> error (an unrelated crash is never taken for the bug)
* exit 125                       -> untestable
* timeout, signal, anything else -> error

A script bisected without a record (``xlakb bisect --script``) is judged by the rule it was given instead
(:data:`REGRESS`, as cargo-bisect-rustc's ``--regress``): "reproduced" is then *bad*, "not-reproduced" *good*.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import enum
import hashlib
import itertools
import json
import os
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from filelock import FileLock

from .candidate import Candidate
from .envs import Backend, EnvSpec, cache_dir
from .envs.cache import cap_from_environment, enforce_cap, in_use
from .errors import XlakbError
from .proc import RunResult
from .progress import NullProgress, Progress
from .published import scrub
from .records import Record
from .regress import REGRESS

DEFAULT_PYTHON = "3.11"


class Verdict(str, enum.Enum):
    REPRODUCED = "reproduced"
    NOT_REPRODUCED = "not-reproduced"
    UNTESTABLE = "untestable"
    ERROR = "error"


def classify(result: RunResult, signatures: list[str], regress: str | None = None) -> tuple[Verdict, str]:
    """The verdict of one run and a one-line reason: a record's rule, or a script's ``regress`` rule
    (``signatures`` then are its ``--match`` patterns)."""
    if regress is not None:
        return judge_script(result, regress, signatures)
    if result.timed_out:
        return Verdict.ERROR, f"timed out after {result.duration_s:.0f} s; the whole process tree was killed"
    code = result.exit_code
    if result.note:
        return Verdict.ERROR, result.note
    if code == 0:
        return Verdict.NOT_REPRODUCED, "exit 0"
    if code == 125:
        return Verdict.UNTESTABLE, "exit 125: " + _last_line(result.output, prefer="untestable")
    if code == 1:
        for pattern in signatures:
            match = re.search(pattern, result.output, re.MULTILINE)
            if match:
                return Verdict.REPRODUCED, f"exit 1, signature matched: {match.group(0)[:120]}"
        return Verdict.ERROR, "exit 1 but the output matched no signature: " + _last_line(result.output)
    if code is not None and code < 0:
        return Verdict.ERROR, f"killed by signal {-code}: " + _last_line(result.output)
    return Verdict.ERROR, f"exit {code}: " + _last_line(result.output)


def crash_signal(code: int | None) -> int | None:
    """The signal that ended a run: a negative exit code, or 128+N as a shell or a container's init reports it
    (a fatal check failure aborts: SIGABRT); None for an exit the program chose (a Python exception's 1)."""
    if code is None:
        return None
    if code < 0:
        return -code
    return code - 128 if 128 < code <= 128 + 64 else None


def judge_script(result: RunResult, regress: str, patterns: list[str]) -> tuple[Verdict, str]:
    """A script's run under its rule: bad is "reproduced", good "not-reproduced". With ``patterns``
    (``--match``) a run is bad only when its output also shows one; a run the rule calls bad that does not
    show it is an unrelated failure, counted good."""
    if regress not in REGRESS:
        raise XlakbError(f"--regress {regress!r}: unknown rule", hint=f"choose {', '.join(REGRESS)}")
    if result.note:
        return Verdict.ERROR, result.note
    code = result.exit_code
    if code == 125:
        return Verdict.UNTESTABLE, "exit 125: " + _last_line(result.output, prefer="untestable")
    if result.timed_out:
        if regress != "hang":
            return Verdict.ERROR, f"timed out after {result.duration_s:.0f} s; the whole process tree was killed"
        what, bad = f"timed out after {result.duration_s:.0f} s", True
    else:
        sig = crash_signal(code)
        what = f"killed by signal {sig} ({_signal_name(sig)})" if sig is not None else f"exit {code}"
        bad = {"error": code != 0, "success": code == 0, "crash": sig is not None, "non-crash": sig is None}.get(regress, False)
    if code not in (0, None):
        what += ": " + _last_line(result.output)
    if bad and patterns:
        found = next((m for p in patterns if (m := re.search(p, result.output, re.MULTILINE))), None)
        if found is None:
            return Verdict.NOT_REPRODUCED, f"good ({regress}, but the output does not show --match): {what}"
        what += f"; matched: {found.group(0)[:120]}"
    return (Verdict.REPRODUCED, f"bad ({regress}): {what}") if bad else (Verdict.NOT_REPRODUCED, f"good ({regress}): {what}")


def _signal_name(number: int) -> str:
    import signal

    try:
        return signal.Signals(number).name
    except ValueError:
        return "unknown signal"


def _last_line(output: str, prefer: str | None = None) -> str:
    """The last line of the output (the last one mentioning ``prefer``, when one does):
    runtimes log after the script's own last word, so its reason may not be the last line."""
    lines = [ln.strip() for ln in output.strip().splitlines() if ln.strip()]
    if prefer:
        chosen = [ln for ln in lines if prefer in ln.lower()]
        if chosen:
            return chosen[-1][:200]
    return lines[-1][:200] if lines else "(no output)"


@dataclass(frozen=True)
class ProbeResult:
    record: str
    candidate: str
    kind: str
    torch_xla: str
    torch: str
    verdict: Verdict
    detail: str
    exit_code: int | None
    duration_s: float
    measured_at: str
    env_key: str
    runner: str
    log: str
    cached: bool = False
    start: str = "cold"  # "warm": forked from a warm server (xlakb.envs.warm); "cold": a new interpreter

    def to_json(self) -> dict:
        data = asdict(self)
        data["verdict"] = self.verdict.value
        data["duration_s"] = round(self.duration_s, 2)
        data.pop("cached")
        return data

    @classmethod
    def from_json(cls, data: dict, cached: bool = False) -> ProbeResult:
        fields = {k: data[k] for k in cls.__dataclass_fields__ if k in data and k != "cached"}
        fields["verdict"] = Verdict(data["verdict"])
        return cls(**fields, cached=cached)


def env_spec(record: Record, candidate: Candidate, *, find_links: tuple[str, ...] = (), index_url: str | None = None) -> EnvSpec:
    """What the environment for ``record`` on ``candidate`` must hold."""
    xla = "torch_xla[tpu]" if record.run_on == "tpu" else "torch_xla"  # a TPU host needs libtpu too
    reqs = [_requirement(xla, candidate.torch_xla), _requirement("torch", candidate.torch)]
    reqs += list(candidate.pins) + list(record.packages)
    return EnvSpec(
        python=record.python or DEFAULT_PYTHON,
        requirements=tuple(reqs),
        find_links=find_links,
        index_url=index_url,
        overlay=candidate.overlay,
    )


def _requirement(name: str, what: str) -> str:
    return what if what.endswith(".whl") else f"{name}=={what}"


def warm_allowed(record: Record, candidate: Candidate) -> bool:
    """Whether this probe may start warm: warm starts are on (XLAKB_WARM), the record does not ask for cold
    starts (``environment.cold_start``), and a settings candidate changes no variable read at import time
    (a server per configuration would cost more than it saves)."""
    from .envs import warm

    if not warm.enabled() or record.cold_start:
        return False
    if candidate.kind == "settings" and candidate.settings:
        names = {k for k, _ in candidate.settings}
        release = candidate.torch_xla if re.fullmatch(r"\d+\.\d+\.\d+", candidate.torch_xla) else None
        if names & set(warm.import_time_names(release, dict(candidate.settings))):
            return False
    return True


def scan_releases(
    candidates: list[Candidate],
    backend: Backend,
    *,
    progress: Progress | None = None,
    find_links: tuple[str, ...] = (),
    index_url: str | None = None,
) -> dict[str, list[str]]:
    """``xlakb warm scan``: per release, the variables read while ``import torch, torch_xla`` runs in an
    environment with those two alone and a probe's base variables (see :func:`xlakb.envs.warm.scan_import_time`)."""
    from .envs.warm import scan_import_time, unreviewed_walkers

    progress = progress or NullProgress()
    if backend.name != "uv":
        raise XlakbError("xlakb warm scan needs the uv runner", hint="pass --runner uv")
    bare = Record(Path("scan.yaml"), {"id": "scan", "environment": {"devices": 1}, "reproducer": {}})
    found = {}
    for n, cand in enumerate(candidates):
        progress.step(n, len(candidates), f"torch_xla {cand.label}: environment")
        prepared = backend.ensure(env_spec(bare, cand, find_links=find_links, index_url=index_url), progress)
        progress.step(n, len(candidates), f"torch_xla {cand.label}: import torch, torch_xla with a getenv shim")
        found[cand.label], walkers = scan_import_time(prepared.python, run_env(bare))
        new = unreviewed_walkers(walkers)
        if new:
            raise XlakbError(
                f"torch_xla {cand.label}: {', '.join(new)} walks the whole environment at import",
                hint="read what it keeps and add it to walkers in src/xlakb/data/import_time.yaml "
                "with the prefixes it reads (a variable with one is then read at import)",
            )
        progress.info(f"torch_xla {cand.label}: {len(found[cand.label])} variables read at import")
    return found


def reproducer_argv(record: Record, candidate: Candidate) -> tuple[Path, tuple[str, ...]]:
    """The script a probe runs and its arguments: the record's reproducer, or for a mined record xlakb's
    runner of its upstream test in a folder made from a pytorch/xla clone (:mod:`xlakb.mining.bundle`)."""
    if record.trigger:
        from .mining.bundle import bundle

        return bundle(record.trigger, cache_dir())
    return record.reproducer_path, run_args(record, candidate)


def run_args(record: Record, candidate: Candidate) -> tuple[str, ...]:
    """The reproducer's arguments: none, or the record's workaround variant's for a workaround candidate."""
    if candidate.kind != "workaround":
        return tuple(record.reproducer.get("args", ()))  # a script's own arguments (xlakb bisect --script F -- ARGS)
    if not record.workaround:
        raise XlakbError(
            f"{record.path.name}: reproducer.workaround is not declared",
            hint="declare the workaround's variant of the reproducer (args, env) to measure it",
        )
    return tuple(record.workaround.get("args", ()))


def run_env(
    record: Record, settings: tuple[tuple[str, str], ...] | None = None, candidate: Candidate | None = None
) -> dict[str, str]:
    """The variables a reproducer runs with: a small clean base plus the record's ``environment.env``,
    or ``settings`` in its place (a settings bisection's candidate: the probe's whole configuration), plus
    the workaround variant's variables for a workaround candidate."""
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    # a TPU-only record runs on the host's chips (PJRT_DEVICE=TPU); every other one on virtual CPU devices
    env.update(
        {"PJRT_DEVICE": "TPU"} if record.run_on == "tpu" else {"PJRT_DEVICE": "CPU", "CPU_NUM_DEVICES": str(record.devices)}
    )
    env.update(
        {
            "PYTHONUNBUFFERED": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            "TF_CPP_MIN_LOG_LEVEL": "0",
        }
    )
    env.update(_variables(record, settings))
    if candidate is not None and candidate.kind == "workaround" and record.workaround:
        env.update(record.workaround.get("env", {}))
    return env


def named_files(record: Record, candidate: Candidate) -> list[str]:
    """The files a probe's own variables name by absolute path (upstream's ``PT_XLA_DEBUG_FILE=/tmp/
    pt_xla_debug.txt``, ``XLA_METRICS_FILE``): not a folder that exists, not a list of paths."""
    values = dict(_variables(record, candidate.settings))
    if candidate.kind == "workaround" and record.workaround:
        values.update(record.workaround.get("env", {}))
    return sorted({v for v in values.values() if v.startswith("/") and ":" not in v and " " not in v and not os.path.isdir(v)})


@contextlib.contextmanager
def taking_turns(paths: list[str]):
    """Probes that name the same file take turns with it, across the threads and processes of this machine:
    run side by side, two tests that both truncate, write and count the lines of /tmp/pt_xla_debug.txt see
    each other's lines, which no run of either alone does (upstream's CI runs them one after the other)."""
    folder = cache_dir() / "locks"
    with contextlib.ExitStack() as stack:
        if paths:
            folder.mkdir(parents=True, exist_ok=True)
        for path in paths:  # sorted: two probes naming the same two files take them in the same order
            stack.enter_context(FileLock(str(folder / f"file-{hashlib.sha256(path.encode()).hexdigest()[:16]}.lock")))
        yield


def _variables(record: Record, settings: tuple[tuple[str, str], ...] | None) -> dict[str, str]:
    """The record's own variables, or a settings candidate's in their place."""
    return record.env_vars if settings is None else dict(settings)


class VerdictCache:
    """Verdicts keyed by (reproducer content, environment, run variables): a repeated
    probe of the same thing costs nothing."""

    def __init__(self, root: Path | None = None, *, refresh: bool = False) -> None:
        """``refresh``: verdicts kept before this object was made are not read (a fresh run); what it keeps
        is written as always, so the next command reuses the fresh measurement."""
        self.root = (root or cache_dir()) / "verdicts"
        self.refresh = refresh
        self._kept: set[str] = set()

    @staticmethod
    def key(
        record: Record, spec: EnvSpec, runner: str, settings: tuple[tuple[str, str], ...] | None = None, variant: str = ""
    ) -> str:
        what = {
            "reproducer": record.reproducer_sha256(),
            "env": spec.key(),
            "vars": run_env_fingerprint(record, settings),
            "signatures": record.signatures,
            "runner": runner,
        }
        if variant == "workaround":  # the bug's own probes keep the keys they had before variants existed
            what["workaround"] = record.workaround
        blob = json.dumps(what, sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:24]

    def get(self, key: str) -> ProbeResult | None:
        if self.refresh and key not in self._kept:
            return None
        path = self.root / f"{key}.json"
        try:
            return ProbeResult.from_json(json.loads(path.read_text()), cached=True)
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, key: str, result: ProbeResult) -> None:
        """Keep ``result`` under ``key``; an error is not kept: it is worth another try."""
        if result.verdict is Verdict.ERROR:
            return
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.root / f"{key}.json"
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(result.to_json(), indent=1))
        os.replace(tmp, path)
        self._kept.add(key)


def run_env_fingerprint(record: Record, settings: tuple[tuple[str, str], ...] | None = None) -> dict:
    fingerprint = {"devices": record.devices, "env": _variables(record, settings), "timeout": record.timeout}
    if record.run_on != "cpu":  # CPU records keep the keys they had before run_on existed
        fingerprint["run_on"] = record.run_on
    return fingerprint


def verdict_key(
    record: Record, candidate: Candidate, runner: str, *, find_links: tuple[str, ...] = (), index_url: str | None = None
) -> str:
    """The :class:`VerdictCache` key of probing ``record`` on ``candidate`` with the runner called ``runner``."""
    return VerdictCache.key(
        record,
        env_spec(record, candidate, find_links=find_links, index_url=index_url),
        runner,
        candidate.settings,
        candidate.kind,
    )


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


_LOG_SEQ = itertools.count(1)  # two probes of one record and build in the same second keep two logs


def probe(
    record: Record,
    candidate: Candidate,
    backend: Backend,
    *,
    progress: Progress | None = None,
    cache: VerdictCache | None = None,
    find_links: tuple[str, ...] = (),
    index_url: str | None = None,
    log_dir: Path | None = None,
) -> ProbeResult:
    """Prepare the environment for ``candidate``, run the reproducer once, judge it.

    Failures to build the environment propagate as XlakbError (the caller decides
    whether that makes the candidate untestable); the reproducer's own failures
    become verdicts.
    """
    progress = progress or NullProgress()
    if not record.trigger and not record.reproducer_path.is_file():
        raise XlakbError(f"{record.path.name}: reproducer {record.reproducer['path']} does not exist")
    spec = env_spec(record, candidate, find_links=find_links, index_url=index_url)
    key = VerdictCache.key(record, spec, backend.name, candidate.settings, candidate.kind) if cache else ""
    if cache:
        hit = cache.get(key)
        if hit is not None:
            return hit
    script, args = reproducer_argv(record, candidate)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", candidate.label) + ("-workaround" if candidate.kind == "workaround" else "")
    if len(safe) > 80:  # a settings configuration can be long: keep file names short and still distinct
        safe = f"{safe[:60]}-{hashlib.sha256(candidate.label.encode()).hexdigest()[:12]}"
    log_path = (log_dir or cache_dir() / "logs") / record.id / f"{stamp}-{safe}-{os.getpid()}-{next(_LOG_SEQ)}.log"
    cap = cap_from_environment()
    asked = time.time()
    keys = [spec.key()] + ([spec.base().key()] if spec.overlay else [])
    env = run_env(record, candidate.settings, candidate)
    with in_use(backend.cache, backend.name, keys):  # `xlakb env prune` and the size cap leave it alone
        prepared = backend.ensure(spec, progress)
        with taking_turns(named_files(record, candidate)):
            result = backend.run(
                prepared,
                script,
                env=env,
                timeout=record.timeout,
                log_path=log_path,
                args=args,
                warm=warm_allowed(record, candidate),
            )
        if cap is not None and float(prepared.info.get("built_at") or 0) >= asked:  # a new environment: keep the cap
            enforce_cap(backend, cap, keep=keys, progress=progress)
    verdict, detail = classify(result, record.signatures, record.regress)
    detail = scrub(detail, record.root)  # kept in matrices and reports: no path of this machine
    probe_result = ProbeResult(
        record=record.id,
        candidate=candidate.label,
        kind=candidate.kind,
        torch_xla=candidate.torch_xla if not candidate.torch_xla.endswith(".whl") else Path(candidate.torch_xla).name,
        torch=candidate.torch if not candidate.torch.endswith(".whl") else Path(candidate.torch).name,
        verdict=verdict,
        detail=detail,
        exit_code=result.exit_code,
        duration_s=result.duration_s,
        measured_at=_now(),
        env_key=prepared.key,
        runner=backend.name,
        log=str(log_path),
        start="warm" if result.warm else "cold",
    )
    if cache:
        cache.put(key, probe_result)
    return probe_result


def prestart(
    record: Record,
    candidate: Candidate,
    backend: Backend,
    *,
    progress: Progress | None = None,
    find_links: tuple[str, ...] = (),
    index_url: str | None = None,
) -> None:
    """Get a probe of ``record`` on ``candidate`` ready ahead of it: its environment built and, where it will
    start warm, its warm server started (:meth:`Backend.prestart`). Best effort: what goes wrong is left for
    the probe itself to meet and report."""
    spec = env_spec(record, candidate, find_links=find_links, index_url=index_url)
    keys = [spec.key()] + ([spec.base().key()] if spec.overlay else [])
    try:
        with in_use(backend.cache, backend.name, keys):
            prepared = backend.ensure(spec, progress or NullProgress())
            if warm_allowed(record, candidate):
                backend.prestart(prepared, run_env(record, candidate.settings, candidate))
    except (XlakbError, OSError):
        pass


def try_probe(record: Record, candidate: Candidate, backend: Backend, **kwargs) -> ProbeResult:
    """:func:`probe`, but a candidate whose environment cannot be built becomes an
    error result with the reason (so one broken build never ends a matrix or bisection)."""
    try:
        return probe(record, candidate, backend, **kwargs)
    except XlakbError as err:
        return error_result(record, candidate, backend.name, f"environment: {err}")


def error_result(record: Record, candidate: Candidate, runner: str, detail: str) -> ProbeResult:
    """An error verdict for a probe that never ran its reproducer to the end, with the reason."""
    return ProbeResult(
        record.id,
        candidate.label,
        candidate.kind,
        candidate.torch_xla,
        candidate.torch,
        Verdict.ERROR,
        scrub(detail, record.root),
        None,
        0.0,
        _now(),
        "",
        runner,
        "",
    )
