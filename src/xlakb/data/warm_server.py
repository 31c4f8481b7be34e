"""xlakb's warm start: one interpreter per environment that has imported torch and torch_xla once, and forks
a child per probe. It runs inside the probe environment's own Python (torch_xla's, not xlakb's), so it
imports nothing of xlakb: it is a plain script, started by xlakb.envs.warm.

    python -u warm_server.py --socket PATH --preload torch,torch_xla --idle SECONDS --parent PID [--contained 1]

Protocol, one JSON object a line on a Unix socket, one connection per probe:
    request  {"script": path, "args": [...], "env": {...}, "cwd": dir, "log": path, "become": {...}?}
    reply    {"pid": N}                  the child runs; its process group is N (kill it to time it out)
    reply    {"exit": code, "oom_kills": n}   code as a shell sees it: N, or -SIGNAL when a signal ended it;
                                         n: processes the kernel killed for memory during the probe (--contained)
    request  {"kill": N}                 (another connection) kill process group N (Docker: the host cannot)
A child starts its own session, takes the probe's environment, writes stdout and stderr to the log (one file
description: their order is kept), runs the script as __main__ with the probe's argv and exits as the
interpreter would: SystemExit's code, 1 after an uncaught exception (traceback printed), atexit handlers run.

"become" ({"prefix": venv, "executable": python}) makes the child the interpreter of another environment that
holds everything this one does, at the same versions, and more (xlakb.envs.warm.Host decides when that is
sound): its sys.prefix, sys.executable and site folders replace this one's before the script runs.

The "ready" line says what the imports looked at, for that decision: every top-level module name the import
system was asked to find ("looked_for"), the distributions whose metadata was read by name or "*" when all
were walked ("metadata"), and which of pkg_resources / importlib_metadata (their own scans of sys.path) they
loaded ("scanners").

When a child has ended, what is left of its process group is killed. With --contained (the server is alone in
a container of its own, serving one probe at a time) the server also puts the container back as the imports
left it before it answers: every other process is killed and /tmp is emptied of what the probe made, so a
probe meets what a fresh container would show it.

Before it serves, the server freezes the collector's view of what the imports made (gc.freeze), so a child
does not walk and copy the server's whole heap when it collects or exits.

The server itself starts no thread (it waits for children through SIGCHLD) and exits when idle, when its
parent is gone, or on SIGTERM. What the imports start (OpenBLAS's idle pool, torch's compile-worker pool on
some releases) is reported in its "ready" line; a fork copies only the forking thread, as every fork-based
DataLoader worker does after `import torch`. That warm and cold probes judge alike is measured, record by
record and release by release (benchmarks/bench_warm.py), not assumed.
"""

import json
import os
import selectors
import signal
import socket
import sys
import time


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        import threading

        return threading.active_count()


def _forget_parent_state() -> None:
    """What the server's imports started (torch's compile-worker pool on some releases, made with
    multiprocessing) belongs to the server: the child neither joins those processes at exit nor sends them
    work; a child that compiles starts its own pool, as a cold process would on first use."""
    try:
        import multiprocessing.process as mp

        mp._children.clear()
    except (ImportError, AttributeError):
        pass
    futures = sys.modules.get("concurrent.futures.process")
    if futures is not None and hasattr(futures, "_threads_wakeups"):
        futures._threads_wakeups.clear()
    for name in ("torch._inductor.async_compile", "torch._inductor.codecache"):
        compile_ = getattr(sys.modules.get(name), "AsyncCompile", None)
        for attr in ("process_pool", "pool"):
            cached = getattr(compile_, attr, None)
            if hasattr(cached, "cache_clear"):
                cached.cache_clear()


#: what the imports did outside the interpreter that a cold process's import would do again, as the server's
#: import left it: the temporary files they made (torch_xla with PT_XLA_DEBUG makes one with mkstemp and each
#: process removes its own at exit) and the variables they set in os.environ (the same import sets
#: XLA_FNTRACKER_FILE to that file). Each child gets both back before its script runs.
MADE: dict = {}
ENV_SET: dict = {}
ENV_GONE: list = []
#: made files the server can put back: regular files, at most this many bytes in all
MADE_LIMIT = 4 << 20


class _Made:
    """While the imports run: the files this process makes through tempfile (mkstemp, NamedTemporaryFile: the
    names a cold process would make anew, each its own), not whatever other processes put in the same folder
    meanwhile."""

    def __init__(self) -> None:
        self.paths: list = []
        self._inner = None

    def __enter__(self) -> "_Made":
        import tempfile

        inner = getattr(tempfile, "_mkstemp_inner", None)
        if inner is not None:
            made = self

            def record(*args, **kwargs):
                fd, name = inner(*args, **kwargs)
                made.paths.append(os.path.abspath(name))
                return fd, name

            tempfile._mkstemp_inner = record
            self._inner = inner
        return self

    def __exit__(self, *exc) -> None:
        if self._inner is not None:
            import tempfile

            tempfile._mkstemp_inner = self._inner


def _restore_made() -> None:
    """Put the files the imports made back as they left them (a child before this one removed or wrote one)."""
    for path, data in MADE.items():
        try:
            with open(path, "rb") as f:
                if f.read() == data:
                    continue
        except OSError:
            pass
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)


def _child(request: dict, listener: socket.socket, conns: list) -> None:
    """In the forked child: become the probe, run it, exit as the interpreter would. Never returns."""
    for c in [listener, *conns]:
        try:
            c.close()
        except OSError:
            pass
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL if sig != signal.SIGINT else signal.default_int_handler)
    signal.set_wakeup_fd(-1)
    os.setsid()
    _forget_parent_state()
    fd = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    os.close(null)
    os.environ.clear()
    os.environ.update(request["env"])
    for name in ENV_GONE:  # what the imports did to the environment, as they did it in the server
        os.environ.pop(name, None)
    os.environ.update(ENV_SET)
    _restore_made()
    if request.get("become"):
        _become(request["become"])
    os.chdir(request["cwd"])
    script = request["script"]
    sys.argv = [script, *request.get("args", [])]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    import runpy

    code = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exit_:
        code = exit_.code
    except BaseException as err:  # as the interpreter does: print it (from the script's frames on), exit 1
        import traceback

        tb = err.__traceback__
        while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != os.path.abspath(script):
            tb = tb.tb_next
        traceback.print_exception(type(err), err, tb or err.__traceback__)
        code = 1
    sys.exit(code)


def _become(where: dict) -> None:
    """Be the interpreter of the environment at ``where["prefix"]`` (a virtualenv holding all this one holds,
    at the same versions, and more): what its own interpreter would have in sys.prefix, sys.executable, the
    site folders of sys.path, and for the processes it starts (multiprocessing's spawn). What the server
    imported stays as it is: the same files of the same distributions."""
    import importlib

    old, new = sys.prefix, where["prefix"]
    sys.path[:] = [new + p[len(old):] if p == old or p.startswith(old + os.sep) else p for p in sys.path]
    sys.prefix = sys.exec_prefix = new
    sys.executable = where["executable"]
    site = sys.modules.get("site")
    if site is not None and hasattr(site, "PREFIXES"):
        site.PREFIXES = [new]
    spawn = sys.modules.get("multiprocessing.spawn")
    if spawn is not None:
        spawn.set_executable(sys.executable)
    importlib.invalidate_caches()


class _Watch:
    """While the imports run: the top-level names the import system is asked to find (a finder first on
    sys.meta_path that finds nothing), and the distributions whose metadata is read (importlib.metadata's
    one way in, Distribution.discover: a name, or "*" when all are walked, as entry_points() does)."""

    def __init__(self) -> None:
        self.names: set = set()
        self.metadata: set = set()
        self._discover = None

    def find_spec(self, fullname, path=None, target=None):
        self.names.add(fullname.partition(".")[0])
        return None

    def __enter__(self) -> "_Watch":
        sys.meta_path.insert(0, self)
        try:
            import importlib.metadata as md

            original = md.Distribution.__dict__["discover"]
            watch = self

            def discover(cls, **kwargs):
                context = kwargs.get("context")
                name = kwargs.get("name") if context is None else getattr(context, "name", None)
                watch.metadata.add(name or "*")
                return original.__func__(cls, **kwargs)

            md.Distribution.discover = classmethod(discover)
            self._discover = (md.Distribution, original)
        except (ImportError, AttributeError, KeyError):
            self.metadata.add("*")  # not watched: taken as all walked
        return self

    def __exit__(self, *exc) -> None:
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        if self._discover is not None:
            cls, original = self._discover
            cls.discover = original


def _oom_kills() -> int:
    """The kernel's out-of-memory kills in this container's memory cgroup so far (cgroup v2, then v1)."""
    for path in ("/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control"):
        try:
            with open(path) as f:
                for line in f:
                    name, _, value = line.partition(" ")
                    if name == "oom_kill":
                        return int(value)
        except (OSError, ValueError):
            continue
    return 0


def _processes() -> set:
    return {int(name) for name in os.listdir("/proc") if name.isdigit()}


def _reset(keep_tmp: set, keep_pids: set) -> None:
    """Put the container back as the imports left it: kill every process but init, this server and what its
    imports started, empty /tmp of what was made since (only in a container of our own: --contained)."""
    me = os.getpid()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        others = []
        for name in os.listdir("/proc"):
            if name.isdigit() and int(name) not in (1, me) and int(name) not in keep_pids:
                try:
                    with open(f"/proc/{name}/stat") as f:
                        state = f.read().rsplit(")", 1)[1].split()[0]
                except (OSError, IndexError):
                    continue
                if state != "Z":
                    others.append(int(name))
        if not others:
            break
        for pid in others:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.05)
    import shutil

    for name in os.listdir("/tmp"):
        if name not in keep_tmp:
            path = os.path.join("/tmp", name)
            try:
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    os.unlink(path)
            except OSError:
                pass


def _status(status: int) -> int:
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def main() -> int:
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    path = args["--socket"]
    idle = float(args.get("--idle", "300"))
    parent = int(args.get("--parent", "0"))
    contained = args.get("--contained", "0") == "1"
    # Python's advice for servers that fork without exec: the collector off while the imports run (they make
    # millions of objects; collecting as they go costs a fifth of the import), one collection after them,
    # then what they made is moved out of the collector's reach. A child's collections, and the interpreter's
    # teardown when it exits, then no longer walk (and copy, page by page) the server's whole heap: on 2.7.0
    # the child's exit takes 0.3 s, not 1.3 s. The child still exits in full, as a cold process does: atexit
    # handlers, modules torn down, C++ destructors; its collector is on.
    import gc

    gc.disable()
    env_before = dict(os.environ)
    started = time.monotonic()
    with _Watch() as watch, _Made() as made:
        for name in [m for m in args.get("--preload", "").split(",") if m]:
            __import__(name)
    loaded = time.monotonic() - started
    unrestorable = ""
    for name in dict.fromkeys(made.paths):
        if not os.path.isfile(name):
            continue  # made and removed by the imports themselves
        try:
            with open(name, "rb") as f:
                MADE[name] = f.read()
        except OSError as err:
            unrestorable = f"its imports made {name}, which it cannot read: {err}"
    if sum(len(v) for v in MADE.values()) > MADE_LIMIT:
        unrestorable = f"its imports made {len(MADE)} file(s) over {MADE_LIMIT} bytes"
    ENV_SET.update({k: v for k, v in os.environ.items() if env_before.get(k) != v})
    ENV_GONE.extend(k for k in env_before if k not in os.environ)
    gc.collect()
    gc.freeze()
    gc.enable()
    keep_tmp = set(os.listdir("/tmp")) if contained else set()
    keep_pids = _processes() if contained else set()  # what the imports started is the server's
    import threading

    python_threads = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *a: None)
    stop = []
    signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    listener.bind(path)
    listener.listen(16)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, "accept")
    sel.register(wake_r, selectors.EVENT_READ, "wake")
    conns: dict = {}      # socket -> buffered bytes
    children: dict = {}   # pid -> (the socket to tell, out-of-memory kills when it started)
    last = time.monotonic()
    print(json.dumps({"ready": os.getpid(), "import_s": round(loaded, 3), "threads": _threads(),
                      "python_threads": python_threads, "prefix": sys.prefix, "looked_for": sorted(watch.names),
                      "metadata": sorted(watch.metadata),
                      "scanners": [m for m in ("pkg_resources", "importlib_metadata") if m in sys.modules],
                      "made_files": sorted(MADE) if not unrestorable else [], "unrestorable": unrestorable,
                      "env_set": sorted(ENV_SET), "env_gone": sorted(ENV_GONE)}),
          flush=True)
    while not stop:
        if parent and os.getppid() != parent:
            break  # the xlakb process that started us is gone
        if not children and not conns and time.monotonic() - last > idle:
            break
        for key, _ in sel.select(timeout=1.0):
            if key.data == "accept":
                conn, _ = listener.accept()
                conns[conn] = b""
                sel.register(conn, selectors.EVENT_READ, "conn")
            elif key.data == "wake":
                try:
                    os.read(wake_r, 4096)
                except BlockingIOError:
                    pass
            else:
                conn = key.fileobj
                try:
                    chunk = conn.recv(65536)
                except OSError:
                    chunk = b""
                if not chunk:
                    sel.unregister(conn)
                    conns.pop(conn, None)
                    conn.close()
                    continue
                conns[conn] += chunk
                if b"\n" not in conns[conn]:
                    continue
                line, _, rest = conns[conn].partition(b"\n")
                conns[conn] = rest
                request = json.loads(line)
                last = time.monotonic()
                if "kill" in request:
                    try:
                        os.killpg(int(request["kill"]), signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
                    conn.sendall(b'{"killed": true}\n')
                    continue
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    _child(request, listener, list(conns))
                children[pid] = (conn, _oom_kills() if contained else 0)
                conn.sendall((json.dumps({"pid": pid}) + "\n").encode())
        while children:  # reap: tell each client how its child ended
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            conn, oom_before = children.pop(pid, (None, 0))
            try:
                os.killpg(pid, signal.SIGKILL)  # what the probe left running in its group
            except (ProcessLookupError, PermissionError):
                pass
            reply = {"exit": _status(status)}
            if contained:
                reply["oom_kills"] = _oom_kills() - oom_before
                _reset(keep_tmp, keep_pids)
            last = time.monotonic()
            if conn is not None:
                try:
                    conn.sendall((json.dumps(reply) + "\n").encode())
                except OSError:
                    pass
    for pid in list(children):
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        os.unlink(path)
    except OSError:  # gone already, or its folder is not ours to write (a container's, made read-only)
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
