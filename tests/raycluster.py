"""A real Ray cluster of this machine for the tests and benchmarks, in a network namespace with only loopback.

Ray advertises the machine's interface address even with ``--node-ip-address=127.0.0.1``; inside a namespace
that has only ``lo`` every node reports and listens on 127.0.0.1, so no test traffic leaves the machine. The
namespace is held by a ``sleep`` this module starts; every command of the cluster (``ray start``, the driver)
runs inside it through ``nsenter``. :meth:`LoopbackCluster.stop` stops every process of the namespace by its
pid (TERM, then KILL), then the holder, and removes the cluster's temporary folders.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GCS_PORT = 6379
# A process run inside the cluster answers with one line that starts with this mark. Ray's core writes its
# own lines to stdout too (after a node is lost: "(2) raylet has lagging heartbeats ..."), before or after it.
ANSWER_MARK = "xlakb-answer: "


def answer_line(value) -> str:
    """The line a process in the cluster prints to answer ``value`` (JSON)."""
    return ANSWER_MARK + json.dumps(value)


def read_answer(stdout: str):
    """The value of the last answer line in ``stdout``, whatever else Ray printed around it."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(ANSWER_MARK):
            return json.loads(line[len(ANSWER_MARK) :])
    raise ValueError(f"no line starting with {ANSWER_MARK!r} in the output: {stdout[-500:]!r}")


def _netns(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/net")
    except OSError:
        return None


def _environ(pid: int) -> dict[str, str]:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    return dict(item.split("=", 1) for item in raw.decode("utf-8", "replace").split("\0") if "=" in item)


class LoopbackCluster:
    """Ray nodes in a loopback-only network namespace. Each node has its own xlakb cache (``node_cache``)."""

    def __init__(self, base: Path, uv_cache: Path | None = None, node_env: dict[str, str] | None = None) -> None:
        """``uv_cache``: the uv package cache every node shares (default: one under ``base``); ``node_env``:
        more variables for every node (e.g. ``UV_OFFLINE=1``: the namespace has no network)."""
        self.base = base
        self.uv_cache = uv_cache or base / "uv-cache"
        self.node_env = dict(node_env or {})
        self.base.mkdir(parents=True, exist_ok=True)
        self.temp = Path(tempfile.mkdtemp(prefix="xr-", dir="/tmp"))  # short: Ray's socket paths must fit 107 bytes
        self.holder = subprocess.Popen(
            ["unshare", "-n", "--", "sh", "-c", "ip link set lo up && echo ready && exec sleep 100000"],
            stdout=subprocess.PIPE,
            start_new_session=True,
            text=True,
        )
        assert self.holder.stdout is not None and self.holder.stdout.readline().strip() == "ready"
        self.ns = _netns(self.holder.pid)
        self.nodes: list[str] = []
        self.address = f"127.0.0.1:{GCS_PORT}"

    def cmd(self, argv: list[str]) -> list[str]:
        """``argv`` to run inside the namespace."""
        return ["nsenter", "-t", str(self.holder.pid), "-n", "--", *argv]

    def env(self, **extra: str) -> dict[str, str]:
        env = dict(os.environ)
        # a home of its own: Ray writes under ~/.ray (ray.init of a new local cluster: ~/.ray/auth_token) and
        # reads it at every `ray start`; the namespace needs no token (only loopback, only this test's processes)
        home = self.base / "home"
        home.mkdir(exist_ok=True)
        env.update(
            PYTHONPATH=str(REPO / "src"),
            RAY_USAGE_STATS_ENABLED="0",
            RAY_TMPDIR=str(self.temp),
            HOME=str(home),
            RAY_AUTH_MODE="disabled",
        )
        env.update(extra)
        return env

    def node_cache(self, name: str) -> Path:
        return self.base / f"{name}-cache"

    def add_node(self, name: str, num_cpus: int = 1) -> None:
        """``ray start`` a node (the first is the head) with its own xlakb cache; raises when it fails."""
        head = not self.nodes
        argv = [
            "ray",
            "start",
            "--node-ip-address",
            "127.0.0.1",
            "--num-cpus",
            str(num_cpus),
            "--object-store-memory",
            "100000000",
            "--disable-usage-stats",
            "--temp-dir",
            str(self.temp),
        ]
        argv += ["--head", "--port", str(GCS_PORT), "--include-dashboard", "false"] if head else ["--address", self.address]
        cache = self.node_cache(name)
        cache.mkdir(parents=True, exist_ok=True)
        env = self.env(XLAKB_CACHE_DIR=str(cache), UV_CACHE_DIR=str(self.uv_cache), UV_PYTHON_DOWNLOADS="never", **self.node_env)
        for name_ in ("XLAKB_ROOT", "XLAKB_CACHE_MAX_SIZE", "RAY_ADDRESS"):
            env.pop(name_, None)
        r = subprocess.run(
            self.cmd([sys.executable, "-m", "ray.scripts.scripts", *argv[1:]]),
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            start_new_session=True,
        )
        if r.returncode != 0:
            raise RuntimeError(f"ray start of {name} failed:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
        self.nodes.append(name)
        self.wait_nodes(len(self.nodes))

    def alive_nodes(self) -> list[dict]:
        code = (
            "import json, ray; ray.init(address=%r, logging_level='ERROR', log_to_driver=False); "  # noqa: UP031
            "print(%r + json.dumps([{'ip': n['NodeManagerAddress'], 'cpus': n['Resources'].get('CPU', 0)} "
            "for n in ray.nodes() if n['Alive']]), flush=True)" % (self.address, ANSWER_MARK)
        )
        r = subprocess.run(self.cmd([sys.executable, "-c", code]), capture_output=True, text=True, env=self.env(), timeout=60)
        return read_answer(r.stdout) if r.returncode == 0 else []

    def wait_nodes(self, count: int, timeout: float = 60) -> list[dict]:
        deadline = time.monotonic() + timeout
        while True:
            nodes = self.alive_nodes()
            if len(nodes) == count or time.monotonic() > deadline:
                return nodes
            time.sleep(0.5)

    def pids(self) -> list[int]:
        """Every process in the namespace but its holder."""
        out = []
        for entry in os.listdir("/proc"):
            if entry.isdigit() and int(entry) != self.holder.pid and _netns(int(entry)) == self.ns:
                out.append(int(entry))
        return out

    def raylet_of(self, name: str) -> int:
        """The pid of node ``name``'s raylet (found by the node's own cache in its environment)."""
        cache = str(self.node_cache(name))
        for pid in self.pids():
            try:
                comm = Path(f"/proc/{pid}/comm").read_text().strip()
            except OSError:
                continue
            if comm == "raylet" and _environ(pid).get("XLAKB_CACHE_DIR") == cache:
                return pid
        raise LookupError(f"no raylet of node {name}")

    def stop(self) -> None:
        """Stop every process of the namespace by its pid, then the holder; remove the temporary folder."""
        for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            for pid in self.pids():
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + grace
            while self._running() and time.monotonic() < deadline:
                time.sleep(0.1)
        self.holder.kill()
        self.holder.wait()
        shutil.rmtree(self.base, ignore_errors=True)
        shutil.rmtree(self.temp, ignore_errors=True)

    def _running(self) -> list[int]:
        """Processes of the namespace that have not exited (zombies waiting for their reaper are gone)."""
        alive = []
        for pid in self.pids():
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if state not in ("Z", "X"):
                alive.append(pid)
        return alive
