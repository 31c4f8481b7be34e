"""The Docker runner against a real daemon: same verdicts as uv, containment, failure paths.

Needs a Docker daemon (``.ci/setup-docker.sh`` starts one) and a base image
(``$XLAKB_DOCKER_IMAGE``, default the local ``xlakb-base:bookworm``, built
from Debian packages when missing).  Every image and container a test makes
carries the label ``xlakb.test=<run id>`` or names this session's wheelhouse,
and is removed at the end.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

import pytest

from fakewheels import FAKE_REPRODUCER, fake_record, fake_torch, fake_torch_xla
from xlakb.candidates import Candidate
from xlakb.candidates.releases import release
from xlakb.envs import EnvSpec, get_backend, warm
from xlakb.envs.uv import UvBackend
from xlakb.errors import XlakbError
from xlakb.progress import RecordingProgress
from xlakb.records import load_record
from xlakb.runner import Verdict, probe, run_env

pytestmark = pytest.mark.docker

RUN_ID = uuid.uuid4().hex[:12]
TEST_LABEL = {"xlakb.test": RUN_ID}
DEFAULT_TEST_IMAGE = "xlakb-base:bookworm"


# -- fixtures ---------------------------------------------------------------------------
@pytest.fixture(scope="session")
def docker_client():
    from xlakb.envs.docker import connect

    try:
        client = connect(timeout=600)
    except XlakbError as err:
        pytest.skip(
            f"!!! NO DOCKER DAEMON — the Docker runner tests did NOT run: {err}. "
            "Run .ci/setup-docker.sh (CI does) to install and start one."
        )
    return client


@pytest.fixture(scope="session")
def base_image(docker_client) -> str:
    """The base image the tests use: $XLAKB_DOCKER_IMAGE, else a local one built from Debian (reused when present)."""
    from xlakb.envs.docker_image import build_base_image

    tag = os.environ.get("XLAKB_DOCKER_IMAGE") or DEFAULT_TEST_IMAGE
    build_base_image(tag, client=docker_client)  # returns at once when present
    return tag


@pytest.fixture(scope="session")
def _cleanup(docker_client, wheelhouse):
    """At the end: remove what this session made (labelled, or an environment over its wheelhouse)."""
    yield
    from xlakb.envs.docker import gc

    gc(docker_client, labels=TEST_LABEL)
    for image in docker_client.images.list(filters={"label": ["xlakb=1", "xlakb.kind=env"]}):
        if str(wheelhouse) in (image.labels or {}).get("xlakb.info", ""):
            docker_client.images.remove(image.id, force=True)


@pytest.fixture
def docker_env(base_image, monkeypatch, _cleanup):
    monkeypatch.setenv("XLAKB_DOCKER_IMAGE", base_image)
    return base_image


@pytest.fixture
def backend(docker_env, docker_client):
    from xlakb.envs.docker import DockerBackend

    return DockerBackend(labels=TEST_LABEL, client=docker_client)


def _containers(client, **labels) -> list:
    wanted = [f"{k}={v}" for k, v in {**TEST_LABEL, **labels}.items()]
    return client.containers.list(all=True, filters={"label": wanted})


def _probe(kb: Path, backend, version: str, wheelhouse: Path, record_id: str = "fake-bug", **kw):
    rec = load_record(kb, record_id)
    return probe(rec, release(version), backend, find_links=(str(wheelhouse),), index_url="none", **kw)


# -- same verdicts as the uv runner ---------------------------------------------------------
CRASH = FAKE_REPRODUCER.replace("bug = torch_xla.BUG", 'bug = "crash" if torch_xla.BUG == "present" else torch_xla.BUG')
ABORT = FAKE_REPRODUCER.replace("bug = torch_xla.BUG", 'bug = "abort" if torch_xla.BUG == "present" else torch_xla.BUG')


@pytest.mark.parametrize(
    "reproducer,version,expected",
    [
        (FAKE_REPRODUCER, "2.1.0", Verdict.UNTESTABLE),  # the API is missing in that release
        (FAKE_REPRODUCER, "2.3.0", Verdict.NOT_REPRODUCED),  # before the bug
        (FAKE_REPRODUCER, "2.5.1", Verdict.REPRODUCED),
        (FAKE_REPRODUCER, "2.6.0", Verdict.NOT_REPRODUCED),  # fixed
        (CRASH, "2.5.1", Verdict.ERROR),  # exit 1, but an unrelated crash
        (ABORT, "2.5.1", Verdict.ERROR),  # killed by a signal
    ],
    ids=["untestable", "before", "reproduced", "fixed", "unrelated-crash", "abort"],
)
def test_same_verdict_as_uv(kb, wheelhouse, backend, reproducer, version, expected):
    fake_record(kb, reproducer=reproducer)
    under_uv = _probe(kb, UvBackend(), version, wheelhouse)
    under_docker = _probe(kb, backend, version, wheelhouse)
    assert under_uv.verdict is expected, under_uv.detail
    assert under_docker.verdict is expected, under_docker.detail
    assert under_docker.exit_code == under_uv.exit_code
    assert under_docker.runner == "docker" and under_uv.runner == "uv"
    assert under_docker.env_key == under_uv.env_key  # the same environment spec
    log = Path(under_docker.log).read_text()
    assert f"torch_xla {version} PJRT_DEVICE CPU devices 4" in log  # run variables reach the container


def test_cached_environment_starts_fast(kb, wheelhouse, backend, docker_client):
    fake_record(kb)
    _probe(kb, backend, "2.5.0", wheelhouse)
    second = RecordingProgress()
    start = time.monotonic()
    res = _probe(kb, backend, "2.5.0", wheelhouse, progress=second)
    elapsed = time.monotonic() - start
    assert res.verdict is Verdict.REPRODUCED
    assert not [e for e in second.events if e[0] == "info" and "building" in e[1]]  # nothing rebuilt
    assert elapsed < 5, f"a probe on a cached environment took {elapsed:.1f} s"
    image = docker_client.images.get(
        backend.ensure(EnvSpec("3.11", ("torch_xla==2.5.0", "torch==2.5.0"), (str(wheelhouse),), "none")).location
    )
    assert image.labels["xlakb"] == "1" and image.labels["xlakb.kind"] == "env"
    assert image.attrs["Config"]["User"] != "0:0"
    assert res.start == "warm" and [c.labels["xlakb.kind"] for c in _containers(docker_client)] == ["warm"]
    warm.close_pool()
    assert not _containers(docker_client)  # build, probe and warm server containers are gone


def test_half_built_leftovers_are_removed(kb, wheelhouse, backend, docker_client, base_image):
    spec = EnvSpec("3.11", ("torch_xla==2.6.1", "torch==2.6.0"), (str(wheelhouse),), "none")
    stale = docker_client.containers.create(base_image, ["true"], labels={**backend._labels("build", key=spec.key())})
    progress = RecordingProgress()
    prepared = backend.ensure(spec, progress)
    assert any("half-built" in e[1] for e in progress.events if e[0] == "info")
    with pytest.raises(Exception):
        docker_client.containers.get(stale.id)
    assert prepared.location.startswith("xlakb-env:")


def test_install_failure_is_clear(tmp_path, backend):
    house = tmp_path / "house"
    fake_torch_xla(house, "2.5.1")
    fake_torch(house, "2.5.1")
    spec = EnvSpec("3.11", ("torch_xla==2.5.1", "torch==2.4.0"), (str(house),), "none")
    with pytest.raises(XlakbError, match="torch"):
        backend.ensure(spec)


# -- containment ------------------------------------------------------------------------------
NETWORK = textwrap.dedent("""\
    import socket, sys, os
    reached = []
    print("interfaces", sorted(name for _, name in socket.if_nameindex()))
    try:
        socket.getaddrinfo("pypi.org", 443)
        reached.append("dns")
    except OSError as err:
        print("dns failed:", err)
    gateway = os.environ.get("GATEWAY", "172.17.0.1")
    try:
        socket.create_connection((gateway, int(os.environ["PORT"])), timeout=3).close()
        reached.append("host")
    except OSError as err:
        print("connect to host failed:", err)
    if reached:
        print("ESCAPED: network reached:", reached); sys.exit(1)
    sys.exit(0)
""")


def test_no_network(kb, wheelhouse, backend, docker_client):
    import socketserver

    class Hello(socketserver.BaseRequestHandler):
        def handle(self):
            self.request.sendall(b"hi")

    import ipaddress

    ipam = docker_client.networks.get("bridge").attrs["IPAM"]["Config"][0]
    gateway = ipam.get("Gateway") or str(next(ipaddress.ip_network(ipam["Subnet"]).hosts()))
    with socketserver.TCPServer((gateway, 0), Hello) as server:  # on the host side of the docker bridge
        threading.Thread(target=server.serve_forever, daemon=True).start()
        port = server.server_address[1]
        import socket

        socket.create_connection((gateway, port), timeout=3).close()  # reachable from the host: the probe below can fail
        fake_record(kb, reproducer=NETWORK, signatures=("ESCAPED",), env={"GATEWAY": gateway, "PORT": str(port)})
        res = _probe(kb, backend, "2.5.1", wheelhouse)
        server.shutdown()
    log = Path(res.log).read_text()
    assert res.verdict is Verdict.NOT_REPRODUCED, log
    assert "interfaces ['lo']" in log
    assert "dns failed" in log and "connect to host failed" in log


WRITES = textwrap.dedent("""\
    import os, sys
    escaped = []
    print("uid", os.getuid(), "gid", os.getgid())
    if os.path.exists("/tmp/scratch.txt"):
        escaped.append("a previous probe's /tmp")
    targets = ["/escape.txt", "/etc/escape.txt", "/var/tmp/escape.txt", "/usr/escape.txt", os.path.abspath(__file__),
               os.path.join(os.path.dirname(os.path.abspath(__file__)), "new.py"), sys.prefix + "/escape.txt",
               os.path.join(os.path.dirname(os.__file__), "escape.py")]
    for target in targets:
        try:
            with open(target, "a") as f:
                f.write("x")
            escaped.append(target)
        except OSError as err:
            print("refused", target, err.strerror)
    with open("/tmp/scratch.txt", "w") as f:
        f.write("scratch is fine")
    print("scratch ok", open(os.path.expanduser("~/../tmp/scratch.txt")).read())
    if os.getuid() == 0:
        escaped.append("running as root")
    if escaped:
        print("ESCAPED:", escaped); sys.exit(1)
""")


@pytest.fixture(params=["cold", "warm"])
def start(request, monkeypatch) -> str:
    """A probe in a container of its own (cold), or forked in a warm server's container (warm)."""
    monkeypatch.setenv("XLAKB_WARM", "1" if request.param == "warm" else "0")
    return request.param


def test_no_writes_outside_scratch(kb, wheelhouse, backend, start):
    fake_record(kb, reproducer=WRITES, signatures=("ESCAPED",))
    script = kb / "reproducers" / "fake-bug.py"
    before = script.read_bytes()
    for _ in range(2):  # the second probe in the same warm container meets a fresh /tmp too
        res = _probe(kb, backend, "2.5.1", wheelhouse)
        log = Path(res.log).read_text()
        assert res.verdict is Verdict.NOT_REPRODUCED, log
        assert res.start == start
    assert log.count("refused") == 8
    assert "scratch ok scratch is fine" in log
    assert "uid 65534" in log
    assert script.read_bytes() == before and not (kb / "reproducers" / "new.py").exists()


FORK_BOMB = textwrap.dedent("""\
    import os, time
    told = False
    while True:
        try:
            os.fork()
        except OSError as err:
            if not told:
                print("fork refused:", err.strerror, flush=True)
                told = True
            time.sleep(0.05)
""")


def _processes(marker: bytes) -> int:
    """Processes on the host whose command line holds ``marker`` (a container's processes are visible here)."""
    count = 0
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                argv = (p / "cmdline").read_bytes()
                if marker in argv and b"docker-init" not in argv.split(b"\0")[0]:  # not the container's init
                    count += 1
            except OSError:
                pass
    return count


def _bomb_processes(start: str) -> int:
    """Processes of the fork bomb: a cold probe's run the script; a warm probe's are forks of the warm server
    (the server itself, one more, is not counted)."""
    if start == "cold":
        return _processes(b"/xlakb/repro/fake-bug.py")
    return max(0, _processes(b"/xlakb/warm/warm_server.py") - 1)


def test_fork_bomb_is_contained(kb, wheelhouse, docker_env, docker_client, start):
    from xlakb.envs.docker import DockerBackend

    backend = DockerBackend(labels=TEST_LABEL, client=docker_client, pids_limit=64)
    fake_record(kb, reproducer=FORK_BOMB, timeout=6)
    peak = [0]
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            peak[0] = max(peak[0], _bomb_processes(start))
            time.sleep(0.1)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        res = _probe(kb, backend, "2.5.1", wheelhouse)
    finally:
        stop.set()
        watcher.join()
    log = Path(res.log).read_text()
    assert res.verdict is Verdict.ERROR and "timed out" in res.detail and res.start == start
    assert "fork refused: Resource temporarily unavailable" in log
    assert 10 < peak[0] <= 64, f"{peak[0]} processes of the fork bomb seen on the host"
    assert not _containers(docker_client, **{"xlakb.kind": "probe"})
    assert _bomb_processes(start) == 0  # every process of the bomb is gone (a warm server outlives its probe)
    if start == "warm":
        fake_record(kb)
        assert _probe(kb, backend, "2.5.1", wheelhouse).verdict is Verdict.REPRODUCED  # the server still serves


ALLOCATE = textwrap.dedent("""\
    import sys, subprocess
    if len(sys.argv) > 1:
        hoard = []
        while True:
            hoard.append(b"\\x01" * (32 << 20))
    if "CHILD" in __import__("os").environ:
        subprocess.run([sys.executable, __file__, "child"])
        print("TypeError: unhashable type: 'list'"); sys.exit(1)  # would count as the bug
    hoard = []
    while True:
        hoard.append(b"\\x01" * (32 << 20))
""")


@pytest.mark.parametrize("who", ["main", "child"])
def test_out_of_memory_is_an_error(kb, wheelhouse, docker_env, docker_client, who, start):
    from xlakb.envs.docker import DockerBackend

    backend = DockerBackend(labels=TEST_LABEL, client=docker_client, mem_limit="256m")
    fake_record(kb, reproducer=ALLOCATE, env={"CHILD": "1"} if who == "child" else {})
    res = _probe(kb, backend, "2.5.1", wheelhouse)
    assert res.verdict is Verdict.ERROR, res.detail
    assert res.detail == "killed: out of memory (limit 256 MiB)" and res.start == start
    assert not _containers(docker_client, **{"xlakb.kind": "probe"})
    fake_record(kb)  # the next probe is judged on its own: no out-of-memory note carried over
    after = _probe(kb, backend, "2.5.1", wheelhouse)
    assert after.verdict is Verdict.REPRODUCED and after.start == start, after.detail


HANG = FAKE_REPRODUCER.replace("bug = torch_xla.BUG", 'bug = "hang"')


def test_hang_times_out_and_leaves_nothing(kb, wheelhouse, backend, docker_client, monkeypatch):
    monkeypatch.setenv("XLAKB_WARM", "0")
    fake_record(kb, reproducer=HANG, timeout=3)
    rec = load_record(kb, "fake-bug")
    prepared = backend.ensure(EnvSpec("3.11", ("torch_xla==2.5.1", "torch==2.5.1"), (str(wheelhouse),), "none"))
    lines: list[str] = []
    start = time.monotonic()
    result = backend.run(
        prepared, rec.reproducer_path, env=run_env(rec), timeout=3, log_path=kb / "hang.log", on_line=lines.append
    )
    assert result.timed_out and result.exit_code is None
    assert 2.5 < time.monotonic() - start < 20
    assert lines and lines[0].startswith("torch_xla 2.5.1"), (lines, (kb / "hang.log").read_text())  # streamed line by line
    assert (kb / "hang.log").read_text().startswith("torch_xla 2.5.1")
    assert not _containers(docker_client)
    res = _probe(kb, backend, "2.5.1", wheelhouse)
    assert res.verdict is Verdict.ERROR and res.detail.startswith("timed out after 3 s"), res.detail


def test_warm_hang_times_out_and_the_server_goes_on(kb, wheelhouse, backend, docker_client, monkeypatch):
    monkeypatch.setenv("XLAKB_WARM", "1")
    fake_record(kb, reproducer=HANG, timeout=3)
    start = time.monotonic()
    res = _probe(kb, backend, "2.5.1", wheelhouse)
    assert res.verdict is Verdict.ERROR and res.detail.startswith("timed out after 3 s"), res.detail
    assert res.start == "warm" and time.monotonic() - start < 30
    assert Path(res.log).read_text().startswith("torch_xla 2.5.1")
    assert _bomb_processes("warm") == 0  # the hung probe is gone, the server stays
    fake_record(kb)
    assert _probe(kb, backend, "2.5.1", wheelhouse).verdict is Verdict.REPRODUCED
    warm.close_pool()
    assert not _containers(docker_client)


SLEEPER = textwrap.dedent("""\
    import time
    print("started", flush=True)
    time.sleep(120)
""")


@pytest.mark.parametrize("how", ["kill", "remove"])
def test_container_killed_mid_run(kb, wheelhouse, backend, docker_client, how, start):
    fake_record(kb, reproducer=SLEEPER, signatures=("never",), timeout=60)
    kind = "probe" if start == "cold" else "warm"

    def assassin():
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            running = start == "cold" or _bomb_processes("warm") > 0  # a warm server's probe has been forked
            for c in _containers(docker_client, **{"xlakb.kind": kind}) if running else ():
                if c.status == "running":
                    time.sleep(0.5)
                    c.kill() if how == "kill" else c.remove(force=True)
                    return
            time.sleep(0.1)

    killer = threading.Thread(target=assassin)
    killer.start()
    began = time.monotonic()
    res = _probe(kb, backend, "2.5.1", wheelhouse)
    killer.join()
    assert res.verdict is Verdict.ERROR
    assert time.monotonic() - began < 30
    if how == "kill" and start == "cold":
        assert res.exit_code == -9 and "killed by signal 9" in res.detail
    if start == "warm":
        assert res.exit_code == -9 and res.detail == "killed: warm server of docker:" + res.detail.split("docker:")[1]
        assert res.detail.endswith("ended during the probe")
        fake_record(kb)  # a new server takes its place
        assert _probe(kb, backend, "2.5.1", wheelhouse).verdict is Verdict.REPRODUCED
        warm.close_pool()
    assert not _containers(docker_client)


# -- failure paths -------------------------------------------------------------------------
def test_no_daemon(monkeypatch, tmp_path):
    from xlakb.envs.docker import DockerBackend

    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/nothing-here.sock")
    reason = DockerBackend().available()
    assert reason is not None and "no Docker daemon answers" in reason and "nothing-here.sock" in reason
    with pytest.raises(XlakbError) as err:
        get_backend("docker")
    assert "--runner uv" in str(err.value)
    assert get_backend("auto").name == "uv"


def test_no_daemon_cli(monkeypatch, tmp_path, kb, wheelhouse, capsys):
    from xlakb.cli import main

    fake_record(kb)
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/nothing-here.sock")
    code = main(
        [
            "--root",
            str(kb),
            "repro",
            "fake-bug",
            "--torch-xla",
            "2.5.1",
            "--runner",
            "docker",
            "--find-links",
            str(wheelhouse),
            "--index-url",
            "none",
        ]
    )
    err = capsys.readouterr().err
    assert code == 1 and "no Docker daemon answers" in err and "--runner uv" in err


def test_base_image_missing(kb, wheelhouse, docker_env, docker_client):
    from xlakb.envs.docker import DockerBackend

    fake_record(kb)
    backend = DockerBackend(image=f"xlakb-test-missing-{RUN_ID}:nope", labels=TEST_LABEL, client=docker_client)
    with pytest.raises(XlakbError) as err:
        _probe(kb, backend, "2.5.1", wheelhouse)
    text = str(err.value)
    assert f"xlakb-test-missing-{RUN_ID}:nope is not present and cannot be pulled" in text
    assert "XLAKB_DOCKER_IMAGE" in text


def test_image_without_python(kb, wheelhouse, docker_env, docker_client, base_image):
    """An image without the record's Python: the build fails with a clear message."""
    from xlakb.envs.docker import DockerBackend

    backend = DockerBackend(labels=TEST_LABEL, client=docker_client)
    spec = EnvSpec("3.7", ("torch_xla==2.5.1", "torch==2.5.1"), (str(wheelhouse),), "none")
    with pytest.raises(XlakbError, match=r"python3\.7"):
        backend.ensure(spec)
    assert not _containers(docker_client)


# -- through the command line, and auto ----------------------------------------------------
def test_cli_repro_docker_and_auto(kb, wheelhouse, docker_env, capsys):
    from xlakb.cli import main

    fake_record(kb)
    base = ["--root", str(kb), "repro", "fake-bug", "--find-links", str(wheelhouse), "--index-url", "none"]
    assert main(base + ["--torch-xla", "2.5.1", "--runner", "docker", "--expect", "reproduced"]) == 0
    out = capsys.readouterr()
    assert "fake-bug on torch_xla 2.5.1: reproduced" in out.out
    assert "runner docker" in out.err
    assert main(base + ["--torch-xla", "2.6.0", "--runner", "auto", "--expect", "not-reproduced"]) == 0
    out = capsys.readouterr()
    assert "runner: docker (auto)" in out.err
    assert "fake-bug on torch_xla 2.6.0: not-reproduced" in out.out


@pytest.mark.parametrize(
    "image,why",
    [
        (f"xlakb-test-missing-{RUN_ID}:nope", "is not present and cannot be pulled"),  # no registry reachable
        (f"xlakb-base:missing-{RUN_ID}", "is not built (python3 -m xlakb.envs.docker_image"),  # xlakb's own, not built
    ],
)
def test_auto_uses_uv_when_docker_cannot_run_the_probe(kb, wheelhouse, docker_env, monkeypatch, capsys, image, why):
    """A daemon answers but its image is absent and cannot be had: auto picks uv and says why in one
    line; an explicit --runner docker still fails with the clear message."""
    from xlakb.cli import main
    from xlakb.envs import choose_backend

    monkeypatch.setenv("XLAKB_DOCKER_IMAGE", image)
    backend, reason = choose_backend("auto")
    assert backend.name == "uv" and why in reason and image in reason
    fake_record(kb)
    base = [
        "--root",
        str(kb),
        "repro",
        "fake-bug",
        "--torch-xla",
        "2.5.1",
        "--find-links",
        str(wheelhouse),
        "--index-url",
        "none",
    ]
    assert main(base + ["--runner", "auto", "--expect", "reproduced"]) == 0
    err = capsys.readouterr().err
    chosen = [ln for ln in err.splitlines() if ln.startswith("runner: ")]
    assert chosen == [f"runner: uv (auto: not docker: {reason.split(': ', 1)[1]})"], err
    if image.startswith("xlakb-test-missing"):
        assert main(base + ["--runner", "docker"]) == 1
        err = capsys.readouterr().err
        assert f"{image} is not present and cannot be pulled" in err and "XLAKB_DOCKER_IMAGE" in err


# -- commit overlays -------------------------------------------------------------------------
def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout.strip()


def test_commit_overlay_same_verdict_as_uv(kb, wheelhouse, backend, tmp_path):
    """A commit laid over release 2.5.1 that fixes the bug: not-reproduced under both runners."""
    repo = tmp_path / "xla"
    (repo / "torch_xla").mkdir(parents=True)
    _git(repo, "init", "-q")
    (repo / "torch_xla" / "__init__.py").write_text("__version__ = '2.5.1+fix'\nBUG = 'none'\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "fix the fake bug (#3)")
    sha = _git(repo, "rev-parse", "HEAD")
    fake_record(kb)
    rec = load_record(kb, "fake-bug")
    cand = Candidate(kind="commit", label=sha[:8], torch_xla="2.5.1", torch="2.5.1", overlay=(str(repo), sha))
    results = {}
    for b in (UvBackend(), backend):
        results[b.name] = probe(rec, cand, b, find_links=(str(wheelhouse),), index_url="none")
    assert results["uv"].verdict is Verdict.NOT_REPRODUCED, results["uv"].detail
    assert results["docker"].verdict is Verdict.NOT_REPRODUCED, results["docker"].detail
    assert "torch_xla 2.5.1+fix" in Path(results["docker"].log).read_text()
    # and the base release itself still shows the bug
    assert probe(rec, release("2.5.1"), backend, find_links=(str(wheelhouse),), index_url="none").verdict is Verdict.REPRODUCED


# -- gc --------------------------------------------------------------------------------------
def test_gc_removes_what_xlakb_made(tmp_path, docker_env, docker_client, base_image):
    from xlakb.envs.docker import DockerBackend, gc

    label = {"xlakb.test": f"gc-{RUN_ID}"}
    house = tmp_path / "house"
    fake_torch_xla(house, "2.7.0")
    fake_torch(house, "2.7.0")
    backend = DockerBackend(labels=label, client=docker_client)
    backend.ensure(EnvSpec("3.11", ("torch_xla==2.7.0", "torch==2.7.0"), (str(house),), "none"))
    docker_client.containers.create(base_image, ["true"], labels={"xlakb": "1", **label})
    docker_client.volumes.create(f"xlakb-test-{RUN_ID}", labels={"xlakb": "1", **label})
    counts = gc(docker_client, labels=label)
    assert counts == {"containers": 1, "volumes": 1, "images": 1}
    wanted = [f"{k}={v}" for k, v in label.items()]
    assert not docker_client.images.list(filters={"label": wanted})
    assert not docker_client.containers.list(all=True, filters={"label": wanted})
    docker_client.images.get(base_image)  # the base image is kept
    assert gc(docker_client, labels=label) == {"containers": 0, "volumes": 0, "images": 0}


# -- real torch_xla releases ----------------------------------------------------------------
@pytest.mark.realwheels
@pytest.mark.parametrize("which", ["affected", "fixed"])
def test_real_release_same_verdict_as_uv(which, docker_env, docker_client):
    """A real record on the real releases it claims: the same verdict under both runners.

    The wheels (~4 GB a release) go to a wheelhouse shared by test runs (``$XLAKB_TEST_CACHE/wheelhouse``),
    never the user's; the environment images are removed."""
    from xlakb.envs.docker import DockerBackend
    from xlakb.verify import claimed_pair

    repo = Path(__file__).resolve().parent.parent
    record = load_record(repo, "fsdpv2-scalar-param-unhashable-list")
    affected, fixed = claimed_pair(record)
    version = affected if which == "affected" else fixed
    expected = Verdict.REPRODUCED if which == "affected" else Verdict.NOT_REPRODUCED
    from keptcache import kept_test_cache

    house = kept_test_cache() / "wheelhouse"
    backend = DockerBackend(labels=TEST_LABEL, client=docker_client, wheelhouse=house)
    try:
        under_docker = probe(record, release(version), backend)
    finally:
        from xlakb.envs.docker import gc

        gc(docker_client, labels=TEST_LABEL)
    under_uv = probe(record, release(version), UvBackend())
    log = Path(under_docker.log).read_text()
    assert under_docker.verdict is expected, f"{version}: {under_docker.detail}\n{log[-3000:]}"
    assert under_uv.verdict is expected, under_uv.detail
    assert under_docker.exit_code == under_uv.exit_code


# -- the wheelhouse ---------------------------------------------------------------------------
def _serve_index(root: Path, wheels: list[Path]):
    """A PEP 503 simple index of ``wheels`` on 127.0.0.1; returns (server, url, requests seen)."""
    import functools
    import http.server
    import re as _re
    import shutil

    for wheel in wheels:
        project = _re.sub(r"[-_.]+", "-", wheel.name.split("-")[0]).lower()
        folder = root / "simple" / project
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(wheel, folder / wheel.name)
        with open(folder / "index.html", "a") as page:
            page.write(f'<a href="{wheel.name}">{wheel.name}</a>\n')
    seen: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            seen.append(self.path)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/simple", seen


def test_wheelhouse_filled_once_from_the_index(kb, tmp_path, monkeypatch, docker_env, docker_client):
    """Without --find-links the host downloads the wheels once; builds read them with no network."""
    from xlakb.envs.docker import DockerBackend

    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)  # this test's index only, not the machine's pip config
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
    house = tmp_path / "dist"
    wheels = [fake_torch_xla(house, "2.8.0", bug="present"), fake_torch(house, "2.8.0")]
    server, url, seen = _serve_index(tmp_path / "index", wheels)
    try:
        fake_record(kb)
        rec = load_record(kb, "fake-bug")
        backend = DockerBackend(labels=TEST_LABEL, client=docker_client)
        progress = RecordingProgress()
        first = probe(rec, release("2.8.0"), backend, index_url=url, progress=progress)
        assert first.verdict is Verdict.REPRODUCED, first.detail
        assert any(e[0] == "download" and e[1].startswith("torch_xla-2.8.0") for e in progress.events)
        assert sorted(p.name for p in backend.wheelhouse.glob("*.whl")) == sorted(w.name for w in wheels)
        fetched = len(seen)
        assert fetched >= 2
        backend.remove(first.env_key)  # the environment goes; the wheelhouse stays
        again = probe(rec, release("2.8.0"), DockerBackend(labels=TEST_LABEL, client=docker_client), index_url=url)
        assert again.verdict is Verdict.REPRODUCED
        assert len(seen) == fetched  # rebuilt from the wheelhouse: the index was not asked again
    finally:
        server.shutdown()


def test_docker_runner_from_an_environment_made_by_uv(kb, tmp_path, docker_env, docker_client):
    """xlakb installed by uv into a virtualenv uv made (no pip of its own): the Docker runner still fills its
    wheelhouse from an index, because pip comes in as a dependency of xlakb."""
    from xlakb.envs.uv import find_uv

    repo = Path(__file__).resolve().parent.parent
    venv = tmp_path / "venv"
    env = {**os.environ, "PIP_CONFIG_FILE": os.devnull}
    env.pop("PIP_FIND_LINKS", None)
    env.pop("VIRTUAL_ENV", None)
    uv = find_uv()
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True, env=env)
    python = venv / "bin" / "python"
    assert subprocess.run([str(python), "-c", "import pip"], capture_output=True).returncode != 0  # uv makes no pip
    r = subprocess.run([uv, "pip", "install", "-q", "--python", str(python), str(repo)], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    house = tmp_path / "dist"
    wheels = [fake_torch_xla(house, "2.8.0", bug="present"), fake_torch(house, "2.8.0")]
    server, url, seen = _serve_index(tmp_path / "index", wheels)
    try:
        fake_record(kb)
        r = subprocess.run(
            [
                str(venv / "bin" / "xlakb"),
                "--root",
                str(kb),
                "repro",
                "fake-bug",
                "--torch-xla",
                "2.8.0",
                "--runner",
                "docker",
                "--index-url",
                url,
                "--expect",
                "reproduced",
            ],
            capture_output=True,
            text=True,
            env=env,
        )
        assert r.returncode == 0, r.stdout + r.stderr
        assert "fake-bug on torch_xla 2.8.0: reproduced" in r.stdout
        assert "No module named pip" not in r.stderr and seen  # the wheels came from the index, through pip
    finally:
        server.shutdown()
        for image in docker_client.images.list(filters={"label": ["xlakb=1", "xlakb.kind=env"]}):
            if url in (image.labels or {}).get("xlakb.info", ""):
                docker_client.images.remove(image.id, force=True)


def test_env_list_and_prune_cover_docker_images(tmp_path, docker_env, docker_client, backend):
    """Docker environments are in `xlakb env list` (their own layer's size) and pruned like uv's, never in use."""
    from xlakb.envs.cache import in_use, list_entries

    house = tmp_path / "house"
    fake_torch_xla(house, "2.7.0")
    fake_torch(house, "2.7.0")
    prepared = backend.ensure(EnvSpec("3.11", ("torch_xla==2.7.0", "torch==2.7.0"), (str(house),), "none"))
    volume = docker_client.volumes.create(f"xlakb-test-vol-{RUN_ID}", labels={"xlakb": "1", **TEST_LABEL})
    entries, notes = list_entries([backend])
    mine = next(e for e in entries if e.key == prepared.key)
    assert not notes and mine.runner == "docker" and mine.kind == "env"
    assert (
        "torch==2.7.0 torch_xla==2.7.0" == mine.holds
        and 0 < mine.size < docker_client.images.get(prepared.location).attrs["Size"]
    )
    assert any(e.kind == "volume" and e.key == f"volume:{volume.name}" for e in entries)
    with in_use(backend.cache, "docker", [prepared.key]):
        assert next(e for e in list_entries([backend])[0] if e.key == prepared.key).in_use
        assert backend.remove(prepared.key) is False
        docker_client.images.get(prepared.location)  # still there
    assert backend.remove(prepared.key) is True and backend.remove(f"volume:{volume.name}") is True
    assert not [e for e in list_entries([backend])[0] if e.key in (prepared.key, f"volume:{volume.name}")]


def test_a_script_runs_in_a_container_as_in_a_virtualenv(kb, wheelhouse, docker_env, capsys, tmp_path):
    """`repro --script` in a container: a Python script and a shell script (carried as one self-contained file, run
    with the environment's python first on PATH) get the verdicts they get in a virtualenv."""
    from fakewheels import FAKE_REPRODUCER
    from xlakb.cli import main

    py = tmp_path / "repro.py"
    py.write_text(FAKE_REPRODUCER)
    sh = tmp_path / "check.sh"
    sh.write_text("#!/bin/sh\npython -c 'import sys, torch_xla; sys.exit(1 if torch_xla.BUG == \"present\" else 0)'\n")
    for script in (py, sh):
        for version, verdict in (("2.5.1", "bad"), ("2.6.0", "good")):
            common = ["--find-links", str(wheelhouse), "--index-url", "none", "--torch-xla", version]
            assert main(["--root", str(kb), "repro", "--script", str(script), "--runner", "docker", *common]) == 0
            out = capsys.readouterr().out
            assert f"{script.name} on torch_xla {version}: {verdict}" in out, out
