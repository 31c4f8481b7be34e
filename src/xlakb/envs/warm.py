"""Warm starts: a probe forked from an interpreter that has imported torch and torch_xla once.

A probe is mostly ``import torch, torch_xla`` (8 of 9 seconds on 2.7.0). A :class:`WarmPool` keeps one server
per (interpreter, import-time settings) — ``data/warm_server.py`` run by the environment's own Python — and
each probe is a child forked from it, judged exactly like a cold one: its exit code (the interpreter's way:
SystemExit, 1 after an uncaught exception, -N for a signal), its output (stdout and stderr in one log, in
order), a timeout that kills its whole process group.

Correct first. The server is started with the probe's values of every variable torch and torch_xla read
while they are imported (``data/import_time.yaml``, measured per release by :func:`scan_import_time`): two
probes that differ in one of them use two servers; the rest of the probe's environment is set in the child
before the reproducer runs.

One server also serves the environments that only add packages to its own (a record's ``packages``: a test
layer, ``rich``): a :class:`Host` says which, and the child becomes that environment's interpreter (its
prefix, executable and site folders). That is sound only where the server's import could not have seen the
additions, and :func:`refusal` checks it against what the server reports its import looked at: no added
top-level module was looked for, no added distribution's metadata was read (nor, when all were walked, does
one declare entry points), no added ``.pth`` file, no pkg_resources scan. Otherwise the environment gets a
server of its own. The threads the imports started (an idle OpenBLAS pool; torch's compile-worker
pool on some releases) are reported, not forked: a fork copies only the forking thread, as every fork-based
DataLoader worker does after ``import torch``. That warm and cold probes judge alike is measured for every
record and release (``benchmarks/bench_warm.py``), not assumed. An interpreter whose server fails to start
runs cold. Servers start on first use, stop after ``idle`` seconds without a probe, when the process that
started them ends (they watch their parent), and when the pool is closed (at exit of the command).

Library code: raises XlakbError; prints nothing.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

from packaging.utils import canonicalize_name

from ..errors import XlakbError
from ..proc import RunResult, kill_group

SERVER = "warm_server.py"
PRELOAD = ("torch", "torch_xla")
#: variables a server is always started with when the probe has them (how Python itself behaves)
INTERPRETER = (
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONHASHSEED",
    "PYTHONPATH",
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "VIRTUAL_ENV",
    "TMPDIR",
)


def enabled() -> bool:
    """Warm starts are on unless XLAKB_WARM=0 (the switch that turns them off for everything)."""
    return os.environ.get("XLAKB_WARM", "1").strip().lower() not in ("0", "no", "off", "false")


@lru_cache(maxsize=1)
def import_time_table() -> dict:
    """``data/import_time.yaml``: per torch_xla release, the variables read while ``import torch, torch_xla``
    runs (measured with :func:`scan_import_time`), and the prefixes treated as import-time for a release not
    measured yet."""
    import yaml

    return yaml.safe_load((resources.files("xlakb") / "data" / "import_time.yaml").read_text("utf-8"))


def walked_prefixes() -> tuple[str, ...]:
    """The prefixes kept by the code that walks the whole environment during the import (``walkers`` in
    ``data/import_time.yaml``, each site reviewed by hand): any variable with one is read at import."""
    return tuple(sorted({p for ps in (import_time_table().get("walkers") or {}).values() for p in ps}))


def import_time_names(release: str | None, env: Mapping[str, str]) -> tuple[str, ...]:
    """The variables of ``env`` (and those absent from it that matter) a server must be started with: the
    release's measured list and every variable a reviewed walker keeps, or, for a release not measured,
    every variable with a known prefix."""
    table = import_time_table()
    measured = (table.get("releases") or {}).get(release or "")
    walked = walked_prefixes()
    if measured is not None:
        return tuple(sorted(set(measured) | {k for k in env if k in INTERPRETER or k.startswith(walked)}))
    prefixes = tuple(table.get("unmeasured_prefixes") or ()) + walked
    return tuple(sorted({k for k in env if k.startswith(prefixes) or k in INTERPRETER}))


#: what a server imports with unless the probe sets it: torch (2.4, 2.7, 2.8) starts inductor's compile-worker
#: process and its reader thread at import, which a forked child would share without the thread; with this,
#: a child that compiles starts its own, as a cold process does on first use
SERVER_DEFAULTS = {"TORCH_WARM_POOL": "0"}


def server_env(release: str | None, env: Mapping[str, str]) -> dict[str, str]:
    """The environment a server for a probe with ``env`` is started with."""
    out = {k: env[k] for k in import_time_names(release, env) if k in env}
    for k, v in SERVER_DEFAULTS.items():
        out.setdefault(k, v)
    return out


@dataclass(frozen=True)
class Dist:
    """An installed distribution as a host decision needs it: its normalised name and version, the top-level
    names it installs (modules, packages, extensions), whether it installs a ``.pth`` file (run at start-up)
    and the entry-point groups it declares."""

    name: str
    version: str
    tops: tuple[str, ...] = ()
    pth: bool = False
    groups: tuple[str, ...] = ()


def site_dists(site: Path) -> dict[str, Dist]:
    """The distributions installed in the site folder ``site`` (its ``*.dist-info``), by normalised name."""
    out: dict[str, Dist] = {}
    for info in sorted(Path(site).glob("*.dist-info")):
        meta = {}
        try:
            for line in (info / "METADATA").read_text("utf-8", "replace").splitlines():
                if not line.strip():
                    break
                key, _, value = line.partition(":")
                meta.setdefault(key.strip().lower(), value.strip())
        except OSError:
            pass
        stem = info.name[: -len(".dist-info")]
        name = meta.get("name") or stem.rpartition("-")[0] or stem
        version = meta.get("version") or stem.rpartition("-")[2]
        tops, pth = set(), False
        try:
            record = (info / "RECORD").read_text("utf-8", "replace").splitlines()
        except OSError:
            record = []
        for row in record:
            path = row.split(",", 1)[0].strip().strip('"')
            if not path or path.startswith(("..", "/")):
                continue
            first = path.split("/", 1)[0]
            if "/" not in path and path.endswith(".pth"):
                pth = True
            if first.endswith((".dist-info", ".data")) or first in ("__pycache__", "bin"):
                continue
            top = first.split(".", 1)[0] if "/" not in path else first
            if top:
                tops.add(top)
        groups = ()
        try:
            groups = tuple(sorted(re.findall(r"^\[([^\]]+)\]", (info / "entry_points.txt").read_text("utf-8", "replace"), re.M)))
        except OSError:
            pass
        out[canonicalize_name(name)] = Dist(canonicalize_name(name), version, tuple(sorted(tops)), pth, groups)
    return out


#: entry-point groups nothing reads while torch and torch_xla are imported (they name commands to install)
SCRIPT_GROUPS = ("console_scripts", "gui_scripts")


@dataclass(frozen=True)
class Host:
    """A server of another environment that may serve this probe: ``python`` is that environment's
    interpreter, ``env`` the probe's variables as a probe of that environment would have them (its
    VIRTUAL_ENV and PATH); the child becomes the probe's own environment (``prefix``, ``executable``), which
    holds all the host's distributions at the same versions, and ``extras`` more."""

    python: str
    env: Mapping[str, str]
    prefix: str
    executable: str
    extras: tuple[Dist, ...]


def refusal(view: Mapping, extras: Sequence[Dist]) -> str | None:
    """Why a server whose import reported ``view`` (its "ready" line) cannot stand for an environment that adds
    ``extras`` to its own, or None when its import could not have seen them: it looked for none of their
    top-level names, read none of their metadata (and, when it walked all distributions, none declares entry
    points other than commands), none installs a ``.pth`` file (run when an interpreter starts), and it loaded
    no scanner that lists sys.path's distributions once and keeps the list (pkg_resources)."""
    if not extras:
        return None
    if "looked_for" not in view:
        return "the server did not say what its import looked at"
    if view.get("scanners"):
        return f"its import loaded {', '.join(view['scanners'])}, which lists the installed distributions once"
    looked = set(view.get("looked_for") or ())
    metadata = {canonicalize_name(n) if n != "*" else n for n in view.get("metadata") or ()}
    for dist in extras:
        seen = sorted(looked.intersection(dist.tops))
        if seen:
            return f"its import looked for {', '.join(seen)}, which {dist.name} {dist.version} adds"
        if dist.name in metadata:
            return f"its import read the metadata of {dist.name}"
        if "*" in metadata and set(dist.groups) - set(SCRIPT_GROUPS):
            return (
                f"its import walked the distributions' entry points, and {dist.name} declares "
                f"{', '.join(sorted(set(dist.groups) - set(SCRIPT_GROUPS)))}"
            )
        if dist.pth:
            return f"{dist.name} installs a .pth file, which an interpreter runs when it starts"
    return None


class WarmServer:
    """One running server: its process, its socket. ``exclusive``: it serves one probe at a time (a server in
    a container puts the container back after each probe, so it cannot share it; a server whose imports made
    files in the temporary folder puts them back for each child, so two children cannot share them)."""

    exclusive = False

    def __init__(self, python: str, env: Mapping[str, str], folder: Path, idle: float, preload: Sequence[str]):
        self.python = python
        self.folder = folder
        self.socket = folder / "s"
        self.log = folder / "server.log"
        self.ready = False
        self.view: dict = {}
        script = resources.files("xlakb") / "data" / SERVER
        argv = [
            python,
            str(script),
            "--socket",
            str(self.socket),
            "--preload",
            ",".join(preload),
            "--idle",
            str(idle),
            "--parent",
            str(os.getpid()),
        ]
        self.proc = subprocess.Popen(
            argv,
            env=dict(env),
            stdout=subprocess.PIPE,
            stderr=open(self.log, "wb"),
            stdin=subprocess.DEVNULL,
            cwd=str(folder),
            start_new_session=True,
        )

    def wait_ready(self, timeout: float) -> None:
        """Block until the server has imported and listens; XlakbError with its reason when it will not."""
        deadline = time.monotonic() + timeout
        assert self.proc.stdout is not None
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if "ready" in msg:
                if msg.get("unrestorable"):  # a child could not be given what a cold import would make
                    self.stop()
                    raise XlakbError(f"warm server of {self.python}: {msg['unrestorable']}")
                self.ready = True
                self.threads = msg.get("python_threads", [])
                self.view = msg
                if msg.get("made_files"):  # each child gets them back as the import left them: one at a time
                    self.exclusive = True
                return
        self.stop()
        tail = self.log.read_text("utf-8", "replace")[-300:].strip() if self.log.exists() else ""
        raise XlakbError(f"warm server of {self.python} did not start" + (f": {tail.splitlines()[-1]}" if tail else ""))

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=5)
            except (ProcessLookupError, PermissionError, subprocess.TimeoutExpired):
                kill_group(self.proc.pid)
                self.proc.wait()

    def kill(self, pid: int) -> None:
        """Kill a probe's process group (the server's children are ours: same machine, same user)."""
        kill_group(pid)

    def note(self, code: int | None, reply: Mapping) -> str:
        """What the runner knows more of a probe that ended with ``code`` (a container: an out-of-memory kill)."""
        return ""

    def run(
        self,
        script: Path,
        args: Sequence[str],
        env: Mapping[str, str],
        cwd: Path,
        timeout: float,
        log_path: Path,
        become: Mapping[str, str] | None = None,
    ) -> Reply:
        """One probe (``become``: the prefix and executable of the environment the child is to be)."""
        probe = {"script": str(script), "args": list(args), "env": dict(env), "cwd": str(cwd), "log": str(log_path)}
        if become:
            probe["become"] = dict(become)
        return request(self.socket, probe, timeout, self.kill, self.python)


class ServerGone(XlakbError):
    """The server ended while a probe ran (killed from outside, or its container stopped)."""


@dataclass
class Reply:
    """How a probe ended: its exit code (None when timed out), whether it timed out, its seconds, and the
    server's last word on it (``oom_kills`` from a contained server)."""

    exit_code: int | None
    timed_out: bool
    duration_s: float
    info: dict = field(default_factory=dict)


def request(sock: Path, probe: dict, timeout: float, kill: Callable[[int], None], who: str) -> Reply:
    """Send one probe to a server listening on ``sock`` and wait for its end. On timeout ``kill(pid)`` ends the
    probe's whole process group. ServerGone when the server ends first (its probe's group is killed)."""
    start = time.monotonic()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    buf = bytearray()

    def line(deadline: float | None) -> bytes | None:
        """The next line from the server, or None when ``deadline`` passes first."""
        while b"\n" not in buf:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                conn.settimeout(left)
            else:
                conn.settimeout(None)
            try:
                chunk = conn.recv(65536)
            except TimeoutError:
                return None
            except OSError:
                return b""
            if not chunk:
                return b""
            buf.extend(chunk)
        head, _, rest = bytes(buf).partition(b"\n")
        buf[:] = rest
        return head

    pid = None
    try:
        conn.connect(str(sock))
        conn.sendall((json.dumps(probe) + "\n").encode())
        first = line(time.monotonic() + 60)
        pid = json.loads(first).get("pid") if first else None
        if pid is None:
            raise XlakbError(f"warm server of {who} did not start the probe")
        done = line(start + timeout)
        if done is None:  # the timeout: kill the whole tree the probe made, as a cold probe's does
            kill(int(pid))
            line(time.monotonic() + 30)  # the server has reaped it (and, contained, reset its container)
            return Reply(None, True, time.monotonic() - start)
        if not done:
            kill(int(pid))
            raise ServerGone(f"warm server of {who} ended during the probe")
        reply = json.loads(done)
        return Reply(int(reply["exit"]), False, time.monotonic() - start, reply)
    except OSError as err:
        raise XlakbError(f"warm server of {who}: {err}") from None
    finally:
        conn.close()


def kill_request(sock: Path, pid: int) -> None:
    """Ask a server to kill one of its probes' process group (a server in a container: its pids are not ours)."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(10)
        conn.connect(str(sock))
        conn.sendall((json.dumps({"kill": pid}) + "\n").encode())
        conn.recv(100)
    except OSError:
        pass
    finally:
        conn.close()


def _max_servers() -> int:
    """How many servers may live at once: $XLAKB_WARM_SERVERS, else one per 3 GiB of memory (a server holds an
    imported torch and torch_xla, and its probes grow from it), between 2 and 8."""
    raw = os.environ.get("XLAKB_WARM_SERVERS")
    if raw is None:
        try:
            memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError):
            return 2
        return max(2, min(8, memory // (3 << 30)))
    try:
        return max(1, int(raw))
    except ValueError:
        raise XlakbError(f"XLAKB_WARM_SERVERS={raw!r} is not a number of servers") from None


class WarmPool:
    """Servers by (interpreter, import-time settings), started on first use, stopped when more than
    ``max_servers`` live (the least recently used idle one first) and at close. A shared server takes probes
    side by side; an exclusive one (a container's) one at a time, so a second probe on the same key starts a
    second server."""

    def __init__(
        self,
        root: Path | None = None,
        idle: float = 300.0,
        preload: Sequence[str] = PRELOAD,
        start_timeout: float = 300.0,
        max_servers: int | None = None,
    ):
        self._own_root = root is None
        self.root = Path(root or tempfile.mkdtemp(prefix="xlakb-warm-"))
        self.idle = idle
        self.preload = tuple(preload)
        self.start_timeout = start_timeout
        self.max_servers = max_servers or _max_servers()
        self.servers: dict[str, list[WarmServer]] = {}
        self.busy: dict[int, int] = {}  # id(server) -> probes running on it
        self.used: dict[int, float] = {}  # id(server) -> when it last finished a probe
        self.cold: dict[str, str] = {}  # key -> why this interpreter runs cold
        self.refused: dict[tuple, str] = {}  # (host's key, environment prefix) -> why that host cannot serve it
        self.lock = threading.Lock()
        self.key_locks: dict[str, threading.Lock] = {}
        self._count = 0
        atexit.register(self.close)

    def key(self, python: str, env: Mapping[str, str]) -> str:
        return hashlib.sha256(json.dumps([python, sorted(env.items()), self.preload]).encode()).hexdigest()[:16]

    def _take(self, key: str) -> WarmServer | None:
        """A live server of ``key`` free to take a probe, marked busy (self.lock held)."""
        live = []
        for srv in self.servers.get(key, []):
            if srv.alive():
                live.append(srv)
            elif not self.busy.get(id(srv)):
                srv.stop()
        self.servers[key] = live
        for srv in live:
            if not srv.exclusive or not self.busy.get(id(srv)):
                self.busy[id(srv)] = self.busy.get(id(srv), 0) + 1
                return srv
        return None

    def acquire(
        self, python: str, env: Mapping[str, str], start: Callable[[Path], WarmServer] | None = None
    ) -> WarmServer | None:
        """A server for this interpreter and import-time environment, marked busy (give it back with
        :meth:`release`): a free one, or one started now by ``start`` (a folder in, a server out; default a
        process of this machine). None when this interpreter runs cold (its server failed to start)."""
        key = self.key(python, env)
        with self.lock:
            if key in self.cold:
                return None
            srv = self._take(key)
            if srv is not None:
                return srv
            lock = self.key_locks.setdefault(key, threading.Lock())
        with lock:  # one start at a time per key, even with probes arriving side by side
            with self.lock:
                srv = self._take(key)
                if srv is not None:
                    return srv
                self._count += 1
                folder = self.root / f"{key}-{self._count}"
            folder.mkdir(parents=True, exist_ok=True)
            try:
                srv = start(folder) if start else WarmServer(python, env, folder, self.idle, self.preload)
                srv.wait_ready(self.start_timeout)
            except XlakbError as err:
                with self.lock:
                    self.cold[key] = str(err)
                return None
            with self.lock:
                self.servers.setdefault(key, []).append(srv)
                self.busy[id(srv)] = 1
            self._trim()
            return srv

    def start(self, python: str, env: Mapping[str, str]) -> None:
        """Have a server for this interpreter and import-time environment running (started now when there is
        none), without a probe."""
        srv = self.acquire(python, env)
        if srv is not None:
            self.release(srv)

    def release(self, srv: WarmServer) -> None:
        with self.lock:
            self.busy[id(srv)] = max(0, self.busy.get(id(srv), 1) - 1)
            self.used[id(srv)] = time.monotonic()
        self._trim()

    def _trim(self) -> None:
        """Stop idle servers, least recently used first, while more than ``max_servers`` live."""
        with self.lock:
            everyone = [s for group in self.servers.values() for s in group]
            idle = sorted((s for s in everyone if not self.busy.get(id(s))), key=lambda s: self.used.get(id(s), 0))
            extra = idle[: max(0, len(everyone) - self.max_servers)]
            for group in self.servers.values():
                group[:] = [s for s in group if s not in extra]
        for srv in extra:
            srv.stop()

    @property
    def started(self) -> int:
        """How many servers this pool has started."""
        return self._count

    def _hosted(
        self, host: Host, release: str | None, start: Callable[[Path], WarmServer] | None
    ) -> tuple[WarmServer | None, dict | None]:
        """The host's server, marked busy, and what the child is to become, when its import could not have seen
        what the probe's environment adds (:func:`refusal`); else (None, None), remembered per environment."""
        host_env = server_env(release, host.env)
        key = (self.key(host.python, host_env), host.prefix)
        with self.lock:
            if key in self.refused:
                return None, None
        srv = self.acquire(host.python, host_env, start)
        if srv is None:
            return None, None
        why = refusal(srv.view, host.extras)
        if why is not None:
            self.release(srv)
            with self.lock:
                self.refused[key] = why
            return None, None
        return srv, {"prefix": host.prefix, "executable": host.executable}

    def run(
        self,
        python: str,
        script: Path,
        *,
        args: Sequence[str],
        env: Mapping[str, str],
        release: str | None,
        cwd: Path,
        timeout: float,
        log_path: Path,
        on_line: Callable[[str], None] | None = None,
        cold: Callable[[], RunResult],
        start: Callable[[Path], WarmServer] | None = None,
        host: Host | None = None,
    ) -> RunResult:
        """Run the probe warm (forked from ``host``'s server where it may stand for this environment, else from
        this interpreter's own), or call ``cold`` when this interpreter cannot be warmed."""
        srv, become = self._hosted(host, release, start) if host is not None else (None, None)
        if srv is None:
            srv = self.acquire(python, server_env(release, env), start)
        if srv is None:
            return cold()
        log_path.parent.mkdir(parents=True, exist_ok=True)
        note = ""
        began = time.monotonic()
        try:
            reply = srv.run(script, args, env, cwd, timeout, log_path, become)
        except ServerGone as err:  # the probe died with its server: an error, as a killed cold probe is
            reply = Reply(-9, False, time.monotonic() - began)
            note = f"killed: {err}"
        finally:
            self.release(srv)
        output = log_path.read_text("utf-8", "replace") if log_path.exists() else ""
        if on_line is not None:
            for line in output.splitlines():
                on_line(line)
        return RunResult(
            argv=(python, str(script), *args),
            exit_code=reply.exit_code,
            timed_out=reply.timed_out,
            duration_s=reply.duration_s,
            output=output,
            log_path=log_path,
            note=note or srv.note(reply.exit_code, reply.info),
            warm=True,
        )

    def close(self) -> None:
        with self.lock:
            servers = [s for group in self.servers.values() for s in group]
            self.servers, self.busy, self.used = {}, {}, {}
        for srv in servers:
            srv.stop()
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)


_POOL: WarmPool | None = None
_POOL_LOCK = threading.Lock()


def pool() -> WarmPool:
    """This process's pool (one per process: a Ray worker keeps its own across tasks)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = WarmPool()
        return _POOL


def close_pool() -> None:
    global _POOL
    with _POOL_LOCK:
        p, _POOL = _POOL, None
    if p is not None:
        p.close()


# -- which variables are read at import time (a maintainer's measurement, kept as data) ----------------------
_GETENV_SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
static char *(*real_getenv)(const char *) = 0;
static __thread int inside = 0;
static void note(const char *name) {
  if (inside || !real_getenv) return;
  inside = 1;
  const char *path = real_getenv("XLAKB_GETENV_LOG");
  if (path) { FILE *f = fopen(path, "a"); if (f) { fputs(name, f); fputc('\n', f); fclose(f); } }
  inside = 0;
}
char *getenv(const char *name) {
  if (!real_getenv) real_getenv = (char *(*)(const char *))dlsym(RTLD_NEXT, "getenv");
  note(name);
  return real_getenv(name);
}
char *secure_getenv(const char *name) { return getenv(name); }
"""

_PY_WATCH = r"""
import os, sys
seen, walkers = set(), set()
walk = [None]  # (frame, line) of the newest walk: what it reads of each variable is no read by name
def origin(depth):
    f = sys._getframe(depth)
    while f is not None and f.f_code.co_filename.endswith(("os.py", "_collections_abc.py", "<frozen os>",
                                                            "<frozen _collections_abc>")):
        f = f.f_back
    return f
def read(key):
    f = origin(3)  # read <- Watched's method <- its caller
    if f is None or walk[0] != (id(f), f.f_lineno):
        seen.add(key)
class Watched(type(os.environ)):
    def __getitem__(self, key):
        read(key); return super().__getitem__(key)
    def __contains__(self, key):
        read(key); return super().__contains__(key)
    def get(self, key, default=None):
        read(key); return super().get(key, default)
    def __iter__(self):
        f = origin(2)
        walk[0] = (id(f), f.f_lineno) if f is not None else None
        walkers.add(f.f_code.co_filename.split("site-packages/", 1)[-1] if f is not None else "?")
        return super().__iter__()
os.environ = Watched(os.environ._data, os.environ.encodekey, os.environ.decodekey, os.environ.encodevalue,
                     os.environ.decodevalue)
for name in sys.argv[1].split(","):
    __import__(name)
with open(os.environ["XLAKB_GETENV_LOG"], "a") as f:
    f.write("\n".join(sorted(seen)) + "\n" + "".join(f"walker: {w}\n" for w in sorted(walkers)))
"""


def scan_import_time(
    python: str, env: Mapping[str, str], preload: Sequence[str] = PRELOAD, cc: str = "gcc"
) -> tuple[list[str], list[str]]:
    """What ``python`` reads of its environment while it imports ``preload`` (as a server does: with
    :data:`SERVER_DEFAULTS`): the variables read by name, from C/C++ (``getenv``, through a preloaded shim
    built with ``cc``) and Python (``os.environ``), and the files that walk the whole environment (whose
    choice of variables a maintainer reviews: ``walkers`` in ``data/import_time.yaml``). A maintainer runs
    this per release (``xlakb warm scan``); the names go into ``data/import_time.yaml``."""
    with tempfile.TemporaryDirectory(prefix="xlakb-scan-") as tmp:
        shim_c = Path(tmp) / "getenv_log.c"
        shim = Path(tmp) / "getenv_log.so"
        shim_c.write_text(_GETENV_SHIM)
        built = subprocess.run(
            [cc, "-shared", "-fPIC", "-O1", "-o", str(shim), str(shim_c), "-ldl"], capture_output=True, text=True
        )
        if built.returncode != 0:
            raise XlakbError(
                f"cannot build the getenv shim with {cc}: {built.stderr.strip()[:200]}",
                hint="install a C compiler (apt-get install gcc)",
            )
        log = Path(tmp) / "names"
        run_env = {**SERVER_DEFAULTS, **env, "LD_PRELOAD": str(shim), "XLAKB_GETENV_LOG": str(log)}
        done = subprocess.run(
            [python, "-c", _PY_WATCH, ",".join(preload)], env=run_env, capture_output=True, text=True, timeout=600
        )
        if done.returncode != 0:
            raise XlakbError(f"{python}: importing {', '.join(preload)} failed: {done.stderr.strip()[-300:]}")
        lines = [n.strip() for n in log.read_text().splitlines() if n.strip()] if log.exists() else []
    names = {n for n in lines if not n.startswith("walker: ")} - {"XLAKB_GETENV_LOG", "LD_PRELOAD"}
    return sorted(names), sorted({n[len("walker: ") :] for n in lines if n.startswith("walker: ")})


def unreviewed_walkers(found: Sequence[str]) -> list[str]:
    """The files of ``found`` that walk the environment at import and are not reviewed in ``walkers``."""
    reviewed = import_time_table().get("walkers") or {}
    return [w for w in found if w not in reviewed]


def write_import_time(found: Mapping[str, Sequence[str]], path: Path | None = None) -> Path:
    """Merge measured releases into ``data/import_time.yaml`` (sorted, one release a line: a readable diff)."""
    import yaml

    path = path or Path(str(resources.files("xlakb") / "data" / "import_time.yaml"))
    text = path.read_text("utf-8")
    data = yaml.safe_load(text) or {}
    releases = dict(data.get("releases") or {})
    releases.update({v: sorted(set(n)) for v, n in found.items()})
    head = text[: text.index("unmeasured_prefixes:")] if "unmeasured_prefixes:" in text else ""
    body = yaml.safe_dump({"unmeasured_prefixes": data.get("unmeasured_prefixes") or []}, default_flow_style=None, width=200)
    if data.get("walkers"):
        body += "walkers:\n" + "".join(f"  {w}: [{', '.join(ps)}]\n" for w, ps in sorted(data["walkers"].items()))

    def order(v: str) -> tuple:
        return tuple(int(x) for x in v.split("."))

    lines = [f'  "{v}": [{", ".join(json.dumps(n) for n in releases[v])}]' for v in sorted(releases, key=order)]
    path.write_text(head + body + "releases:\n" + "\n".join(lines) + "\n", "utf-8")
    import_time_table.cache_clear()
    return path
