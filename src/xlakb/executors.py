"""Where probes run: the executor seam under the runner.

An :class:`Executor` takes probes (:class:`ProbeTask`: a record on a candidate) and gives back futures of
:class:`~xlakb.runner.ProbeResult` that never raise: a probe that could not run is an error result with the
reason.  Executors live in the :data:`EXECUTORS` registry:

* ``local`` (the default): the probes run in this process, ``jobs`` at a time (``-j``);
* ``ray``: each probe is a Ray task on a cluster (``ray://host:port``, ``host:port``, ``RAY_ADDRESS``, or
  ``local-ray``: a cluster of this machine, started for the run).  The task asks for the record's resources
  (:func:`task_resources`), builds or reuses the environment in the worker's own cache (the same backends,
  by name) and sends back the result and an excerpt of its log.  A task whose worker or node dies runs again
  elsewhere (at most :data:`RAY_RETRIES` more times); one that still fails is an error result naming why.
  What a task reports while it runs (that it started, its environment build, its downloads) comes back to
  the driver's progress through :class:`_Relay`.  A node whose xlakb is not the driver's (another version
  or other code: :func:`code_fingerprint`) runs nothing: each probe sent there is an error result saying so,
  since its verdicts, environments and pins could differ from the driver's.

Executors never see the verdict cache: the caller (the driver, :func:`xlakb.matrix.run_batch`) alone reads
and writes it, and ``bisect/``.
"""

from __future__ import annotations

import concurrent.futures as cf
import functools
import hashlib
import os
import re
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from . import __version__
from .candidate import Candidate
from .envs import Backend, cache_dir
from .errors import XlakbError
from .progress import NullProgress, Progress
from .records import Record
from .runner import ProbeResult, error_result, prestart, try_probe

#: how many more times Ray runs a probe whose worker process or node died
RAY_RETRIES = 2
#: how many times the driver tries to connect to a Ray Client head whose server for it failed to start
CONNECT_TRIES = 3
#: the largest log excerpt a Ray worker sends back: its first and last bytes
EXCERPT_HEAD = 16 * 1024
EXCERPT_TAIL = 112 * 1024


@dataclass(frozen=True)
class ProbeTask:
    """One probe to run: ``record``'s reproducer on ``candidate``, its environment built from these sources."""

    record: Record
    candidate: Candidate
    find_links: tuple[str, ...] = ()
    index_url: str | None = None


class Executor(Protocol):
    """What every executor provides."""

    name: str
    slots: int  # probes that can run at once (for time estimates)

    def submit(
        self, task: ProbeTask, backend: Backend, *, progress: Progress | None = None, on_start: Callable[[], None] | None = None
    ) -> cf.Future[ProbeResult]:
        """Start one probe with ``backend`` (remote executors use the backend of that name on the worker).
        The future never raises. ``on_start`` is called when the probe starts, where the executor can tell."""

    def prestart(self, task: ProbeTask, backend: Backend, *, progress: Progress | None = None) -> None:
        """Get ``task``'s probe ready ahead, where probes run and the executor can (its environment, its warm
        server), while other probes run; never blocks and never fails the batch."""

    def close(self) -> None:
        """Wait for nothing more; release what the executor holds (threads, a cluster it started)."""


def run_task(task: ProbeTask, backend: Backend, progress: Progress | None = None) -> ProbeResult:
    """Run one probe here, without the verdict cache (the driver keeps it)."""
    return try_probe(
        task.record, task.candidate, backend, progress=progress, cache=None, find_links=task.find_links, index_url=task.index_url
    )


class LocalExecutor:
    """Probes in this process: with ``jobs`` 1 in the calling thread (Ctrl-C stops the probe at once), else
    ``jobs`` threads."""

    name = "local"

    def __init__(self, jobs: int = 1) -> None:
        if jobs < 1:
            raise XlakbError(f"-j must be at least 1, got {jobs}")
        self.slots = jobs
        self._pool = cf.ThreadPoolExecutor(max_workers=jobs) if jobs > 1 else None
        self._ahead: list[threading.Thread] = []

    def submit(
        self, task: ProbeTask, backend: Backend, *, progress: Progress | None = None, on_start: Callable[[], None] | None = None
    ) -> cf.Future[ProbeResult]:
        def one() -> ProbeResult:
            if on_start is not None:
                on_start()
            return run_task(task, backend, progress)

        if self._pool is not None:
            return self._pool.submit(one)
        done: cf.Future[ProbeResult] = cf.Future()
        done.set_result(one())
        return done

    def prestart(self, task: ProbeTask, backend: Backend, *, progress: Progress | None = None) -> None:
        """In a thread of its own, beside the probes' slots."""
        ahead = threading.Thread(
            target=prestart,
            args=(task.record, task.candidate, backend),
            kwargs=dict(progress=progress, find_links=task.find_links, index_url=task.index_url),
            name="xlakb-prestart",
            daemon=True,
        )
        ahead.start()
        self._ahead.append(ahead)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        for ahead in self._ahead:
            ahead.join()


def task_resources(record: Record) -> dict:
    """What one probe of ``record`` asks of a Ray cluster, as ``ray.remote(...).options`` arguments: its CPU
    cores and memory (``environment.resources``), and for a TPU-only record (``run_on: tpu``) its chips."""
    asked: dict = {"num_cpus": record.cpus, "memory": int(record.memory_gb * 2**30)}
    if record.run_on == "tpu":
        asked["resources"] = {"TPU": record.devices}
    return asked


def wanted(asked: dict) -> dict[str, float]:
    """``task_resources`` as Ray's resource names and amounts."""
    return {"CPU": asked["num_cpus"], "memory": asked["memory"], **asked.get("resources", {})}


def fits(asked: dict, offered: dict[str, float]) -> bool:
    """Whether a node offering ``offered`` (Ray's resource totals) can run a task asking ``asked``."""
    return all(offered.get(name, 0) >= amount for name, amount in wanted(asked).items())


class _WorkerProgress(NullProgress):
    """A Ray task's progress: its notes and downloads go on the relay's queue, tagged with the task's id and
    node. Best effort: a queue that cannot be reached costs the lines, never the probe."""

    def __init__(self, queue, tid: str, node: str) -> None:
        self.queue, self.tid, self.node = queue, tid, node
        self._last_download = 0.0

    def put(self, kind: str, *payload) -> None:
        if self.queue is None:
            return
        try:
            self.queue.put_nowait((kind, self.tid, self.node, *payload))
        except Exception:  # noqa: BLE001 - the queue's actor lost with its node, or full: the probe goes on without lines
            self.queue = None

    def info(self, message: str) -> None:
        self.put("info", message)

    def download(self, name: str, done_bytes: int, total_bytes: int | None) -> None:
        now = time.monotonic()
        if now - self._last_download >= 1.0 or (total_bytes is not None and done_bytes >= total_bytes):
            self._last_download = now
            self.put("download", name, done_bytes, total_bytes)


class _Relay:
    """Progress from Ray tasks to the driver: tasks put events on a Ray queue (an actor that takes no CPU);
    a driver thread hands each to the progress and ``on_start`` of the probe it belongs to. Events of a probe
    whose result already arrived are dropped (a late start line would count it twice)."""

    def __init__(self) -> None:
        from ray.util.queue import Queue

        self.queue = Queue(maxsize=10_000, actor_options={"num_cpus": 0})
        self._probes: dict[str, tuple[Progress, Callable[[], None] | None]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="xlakb-ray-progress", daemon=True)
        self._thread.start()

    def expect(self, progress: Progress, on_start: Callable[[], None] | None) -> str:
        tid = uuid.uuid4().hex
        with self._lock:
            self._probes[tid] = (progress, on_start)
        return tid

    def forget(self, tid: str) -> None:
        with self._lock:
            self._probes.pop(tid, None)

    def _run(self) -> None:
        from ray.util.queue import Empty

        while not self._stop.is_set():
            try:
                event = self.queue.get(timeout=0.5)
            except Empty:
                continue
            except Exception:  # noqa: BLE001 - the queue's actor is gone (its node died, or the cluster): no more lines
                return
            self._handle(*event)

    def _handle(self, kind: str, tid: str, node: str, *payload) -> None:
        with self._lock:
            probe = self._probes.get(tid)
            if probe is not None and kind == "start":
                self._probes[tid] = (probe[0], None)  # a retried task starts again: one start line
        if probe is None:
            return
        progress, on_start = probe
        if kind == "start" and on_start is not None:
            on_start()
        elif kind == "info":
            progress.info(f"{node}: {payload[0]}")
        elif kind == "download":
            progress.download(*payload)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        try:
            self.queue.shutdown()
        except Exception:  # noqa: BLE001 - already gone with the cluster
            pass


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """This xlakb: its version and a digest of every file of its package (code, release pins, schema), which
    together decide how a probe's environment is built and what verdict its run gets."""
    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return f"{__version__}+{digest.hexdigest()[:12]}"


def foreign_code(node: str, driver_code: str | None) -> str | None:
    """Why a node running this xlakb must not probe for a driver running ``driver_code``, or None."""
    mine = code_fingerprint()
    if driver_code is None or driver_code == mine:
        return None
    return (
        f"ray: node {node} runs xlakb {mine}, the driver xlakb {driver_code}; "
        "install the driver's xlakb on every node of the cluster"
    )


def _probe_on_worker(
    task: ProbeTask, reproducer: bytes, runner: str, queue=None, tid: str = "", driver_code: str | None = None
) -> tuple[ProbeResult, str, str]:
    """The Ray task: lay the reproducer out in a temporary checkout, probe it with the worker's backend called
    ``runner`` (its environment cache is the worker's own), and return the result, an excerpt of the log
    and which node ran it. Its progress goes on ``queue`` (the driver's relay), tagged ``tid``. A worker whose
    xlakb is not the driver's (``driver_code``, see :func:`code_fingerprint`) probes nothing."""
    import ray

    from .envs import get_backend

    ip, node_id = ray.util.get_node_ip_address(), ray.get_runtime_context().get_node_id()
    node = f"{ip} (node {node_id[:12]}, pid {os.getpid()})"
    why = foreign_code(f"{ip} {node_id[:12]}", driver_code)
    if why is not None:
        return error_result(task.record, task.candidate, runner, why), "", node
    progress = _WorkerProgress(queue, tid, f"node {node_id[:6]}")
    progress.put("start")
    with tempfile.TemporaryDirectory(prefix="xlakb-probe-") as tmp:
        root = Path(tmp)
        if not task.record.trigger:  # a mined record's test comes from the node's clone ($XLAKB_XLA_REPO)
            script = root / task.record.reproducer["path"]
            script.parent.mkdir(parents=True)
            script.write_bytes(reproducer)
        record = Record(root / "issues" / task.record.path.name, task.record.data)
        try:
            backend = get_backend(runner)
        except XlakbError as err:
            return error_result(record, task.candidate, runner, f"environment: {err}"), "", node
        result = run_task(replace(task, record=record), backend, progress)
    return result, log_excerpt(Path(result.log)) if result.log else "", node


def log_excerpt(path: Path) -> str:
    """The log at ``path``, or its first and last bytes with how much was left out between them."""
    try:
        with path.open("rb") as fh:
            data = fh.read(EXCERPT_HEAD + EXCERPT_TAIL + 1)
            if len(data) <= EXCERPT_HEAD + EXCERPT_TAIL:
                return data.decode("utf-8", "replace")
            size = path.stat().st_size
            fh.seek(size - EXCERPT_TAIL)
            tail = fh.read()
    except OSError as err:
        return f"(log unreadable on the worker: {err})\n"
    left_out = size - EXCERPT_HEAD - EXCERPT_TAIL
    return (
        data[:EXCERPT_HEAD].decode("utf-8", "replace")
        + f"\n[... {left_out} bytes left out ...]\n"
        + tail.decode("utf-8", "replace")
    )


class RayExecutor:
    """Each probe a Ray task on the cluster at ``address`` (``local-ray``: a cluster of this machine, started
    here and stopped by :meth:`close`)."""

    name = "ray"

    def __init__(self, address: str) -> None:
        try:
            import ray
        except ImportError:
            raise XlakbError(f"--cluster {address} needs Ray, which is not installed", hint="pip install 'xlakb[ray]'") from None
        import logging

        self._ray = ray
        self.address = address
        self._owned = not ray.is_initialized()
        if self._owned:
            options = dict(logging_level=logging.WARNING, log_to_driver=False)
            if address == "local-ray":
                options.update(address="local", object_store_memory=200 * 10**6, include_dashboard=False)
            else:
                options.update(address=address)
            for attempt in range(1, CONNECT_TRIES + 1):
                try:
                    ray.init(**options)
                    break
                except Exception as err:  # noqa: BLE001 - ConnectionError, ValueError, RuntimeError...: any way of not reaching it
                    # a Ray Client head that answered but whose server for this client failed to start (seen
                    # on a loaded head) is worth another try; any other failure is not
                    if isinstance(err, ConnectionAbortedError) and attempt < CONNECT_TRIES:
                        time.sleep(2.0 * attempt)
                        continue
                    raise XlakbError(
                        f"--cluster {address}: cannot connect to the Ray cluster: {_one_line(err)}",
                        hint="start one with `ray start --head`, or check the address",
                    ) from None
        self._remote = ray.remote(_probe_on_worker)
        self._relay: _Relay | None = None
        self._feasible: dict[tuple, str | None] = {}
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        self.slots = max(1, int(sum(n["Resources"].get("CPU", 0) for n in nodes)))

    def prestart(self, task: ProbeTask, backend: Backend, *, progress: Progress | None = None) -> None:
        """Nothing: which node runs the next probe is Ray's choice (a worker keeps its own servers)."""

    def submit(
        self, task: ProbeTask, backend: Backend, *, progress: Progress | None = None, on_start: Callable[[], None] | None = None
    ) -> cf.Future[ProbeResult]:
        asked = task_resources(task.record)
        outer: cf.Future[ProbeResult] = cf.Future()
        why = self._infeasible(asked)
        if why is not None:  # Ray would wait for such a node forever
            outer.set_result(error_result(task.record, task.candidate, backend.name, f"ray: {why}"))
            return outer
        if self._relay is None:
            self._relay = _Relay()
        relay = self._relay
        tid = relay.expect(progress or NullProgress(), on_start)
        ref = self._remote.options(max_retries=RAY_RETRIES, retry_exceptions=False, **asked).remote(
            task,
            b"" if task.record.trigger else task.record.reproducer_path.read_bytes(),
            backend.name,
            relay.queue,
            tid,
            code_fingerprint(),
        )

        def arrived(inner: cf.Future) -> None:
            relay.forget(tid)
            try:
                outer.set_result(self._result(task, backend, inner))
            except BaseException as err:  # noqa: BLE001 - never leave the driver waiting
                outer.set_result(error_result(task.record, task.candidate, backend.name, f"ray: {_one_line(err)}"))

        ref.future().add_done_callback(arrived)
        return outer

    def _result(self, task: ProbeTask, backend: Backend, inner: cf.Future) -> ProbeResult:
        """The worker's result with its log excerpt written under this machine's logs, or an error naming why
        the task failed (after its retries, when the failure was of a worker or node)."""
        err = inner.exception()
        if err is not None:
            if isinstance(err, self._ray.exceptions.RayTaskError):
                reason = f"ray: the task raised {_one_line(err)}"
            else:
                reason = f"ray: {type(err).__name__} after {1 + RAY_RETRIES} tries: {_one_line(err, named=False)}"
            return error_result(task.record, task.candidate, backend.name, reason)
        result, excerpt, node = inner.result()
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", task.candidate.label)
        log = cache_dir() / "logs" / task.record.id / f"{time.strftime('%Y%m%dT%H%M%S')}-{safe}-ray-{os.getpid()}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(f"# ray: run on {node}; the full log there: {result.log or '(none)'}\n{excerpt}")
        return replace(result, log=str(log))

    def _infeasible(self, asked: dict) -> str | None:
        """Why no live node of the cluster can ever run a task asking ``asked``, or None."""
        want = wanted(asked)
        key = tuple(sorted(want.items()))
        if key not in self._feasible:
            nodes = [n["Resources"] for n in self._ray.nodes() if n.get("Alive")]
            ok = any(fits(asked, res) for res in nodes)
            shown = ", ".join(f"{k} {_amount(k, v)}" for k, v in want.items())
            offered = "; ".join(", ".join(f"{k} {_amount(k, res.get(k, 0))}" for k in want) for res in nodes)
            self._feasible[key] = None if ok else f"no node of the cluster offers {shown} (nodes: {offered or 'none'})"
        return self._feasible[key]

    def close(self) -> None:
        if self._relay is not None:
            self._relay.close()
            self._relay = None
        if self._owned and self._ray.is_initialized():
            self._ray.shutdown()


def _amount(name: str, value: float) -> str:
    return f"{value / 2**30:.1f} GiB" if name == "memory" else f"{value:g}"


def _one_line(err: BaseException, named: bool = True) -> str:
    """The first line of ``err``'s message (after its type's name, unless ``named`` is False)."""
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    first = lines[0][:300] if lines else "(no message)"
    return f"{type(err).__name__}: {first}" if named else first


#: ``--cluster`` value -> executor; any other value is a Ray address (``ray://host:port`` or ``host:port``)
EXECUTORS: dict[str, Callable[[str, int], Executor]] = {
    "local": lambda _address, jobs: LocalExecutor(jobs),
    "local-ray": lambda address, _jobs: RayExecutor(address),
}
_RAY_ADDRESS = re.compile(r"^(ray://)?[A-Za-z0-9_.\-\[\]:]+:[0-9]{1,5}$")


def get_executor(cluster: str | None = None, jobs: int = 1) -> Executor:
    """The executor for ``--cluster cluster``; None means ``$RAY_ADDRESS`` when set, else ``local``."""
    cluster = cluster or os.environ.get("RAY_ADDRESS") or "local"
    if cluster in EXECUTORS:
        return EXECUTORS[cluster](cluster, jobs)
    if not _RAY_ADDRESS.match(cluster):
        raise XlakbError(
            f"--cluster {cluster!r}: not an executor or Ray address",
            hint="use local, local-ray, ray://HOST:PORT or HOST:PORT (a Ray head's GCS address)",
        )
    return RayExecutor(cluster)


def probe_all(
    executor: Executor, tasks: list[ProbeTask], backend: Backend, *, progress: Progress | None = None
) -> list[ProbeResult]:
    """Run ``tasks`` on ``executor`` and return their results in the order of ``tasks`` (for a caller that
    wants a batch at once, such as a bisection step probing ``-j`` candidates)."""
    progress = progress or NullProgress()
    futures = [executor.submit(t, backend, progress=progress) for t in tasks]
    return [f.result() for f in futures]
