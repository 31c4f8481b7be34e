"""Executors: probes on this machine or as tasks of a real Ray cluster (two nodes of this machine, in a
loopback-only network namespace), with fake torch_xla wheels; a node lost mid-batch, a driver killed, a probe
that keeps killing its worker."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from fakewheels import fake_record
from raycluster import LoopbackCluster, answer_line, read_answer
from xlakb import __version__
from xlakb.candidates.releases import release
from xlakb.errors import XlakbError
from xlakb.executors import RAY_RETRIES, LocalExecutor, code_fingerprint, get_executor, task_resources
from xlakb.records import load_record
from xlakb.runner import env_spec, run_env, run_env_fingerprint

REPO = Path(__file__).resolve().parent.parent

#: a fake reproducer that says where and when it ran (one line per run into $RUNS), takes $NAP seconds,
#: then behaves as the fake torch_xla's BUG says; with KILL_WORKER set it kills the process that runs it
RAY_REPRODUCER = """\
import os, signal, sys, time
try:
    import torch_xla
except ImportError as err:
    print("untestable:", err); sys.exit(125)
with open(os.environ["RUNS"], "a") as fh:
    fh.write(f"{torch_xla.__version__} {sys.executable} {os.getpid()}\\n")
if os.environ.get("KILL_WORKER"):
    os.kill(os.getppid(), signal.SIGKILL)
    sys.exit(3)
time.sleep(float(os.environ.get("NAP", "0")))
if torch_xla.BUG == "present":
    print("TypeError: unhashable type: 'list'"); sys.exit(1)
sys.exit(0)
"""
VERSIONS = ("2.3.0", "2.4.0", "2.5.1", "2.6.0")
EXPECTED = {"2.3.0": "not-reproduced", "2.4.0": "reproduced", "2.5.1": "reproduced", "2.6.0": "not-reproduced"}


def runs(path: Path) -> list[tuple[str, str]]:
    """(torch_xla version, interpreter) of every run the reproducer logged."""
    return [tuple(line.split()[:2]) for line in path.read_text().splitlines()] if path.exists() else []


def ray_record(kb: Path, runs_file: Path, record_id: str = "fake-bug", **env: str) -> Path:
    return fake_record(kb, record_id, reproducer=RAY_REPRODUCER, env={"RUNS": str(runs_file), **env})


# -- no cluster ----------------------------------------------------------------------------------------
def test_resources_come_from_the_record(kb):
    fake_record(kb)
    cpu = load_record(kb, "fake-bug")
    assert task_resources(cpu) == {"num_cpus": 1, "memory": 2 * 2**30}
    assert run_env(cpu)["PJRT_DEVICE"] == "CPU" and run_env(cpu)["CPU_NUM_DEVICES"] == "4"
    assert "run_on" not in run_env_fingerprint(cpu)  # verdicts cached before run_on existed stay valid

    path = kb / "issues" / "fake-bug.yaml"
    data = yaml.safe_load(path.read_text())
    data["environment"].update(run_on="tpu", resources={"cpus": 8, "memory_gb": 32})
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    tpu = load_record(kb, "fake-bug")
    assert task_resources(tpu) == {"num_cpus": 8, "memory": 32 * 2**30, "resources": {"TPU": 4}}
    env = run_env(tpu)
    assert env["PJRT_DEVICE"] == "TPU" and "CPU_NUM_DEVICES" not in env
    assert run_env_fingerprint(tpu)["run_on"] == "tpu"
    assert "torch_xla[tpu]==2.5.1" in env_spec(tpu, release("2.5.1")).requirements  # libtpu comes with it
    assert "torch_xla==2.5.1" in env_spec(cpu, release("2.5.1")).requirements


def test_executor_choice_and_clear_errors(monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert isinstance(get_executor(None, 3), LocalExecutor) and get_executor("local", 3).slots == 3
    with pytest.raises(XlakbError, match="-j must be at least 1, got 0"):
        get_executor("local", 0)
    with pytest.raises(XlakbError, match="--cluster 'nowhere': not an executor or Ray address"):
        get_executor("nowhere")
    monkeypatch.setenv("RAY_ADDRESS", "not an address")
    with pytest.raises(XlakbError, match="--cluster 'not an address'"):
        get_executor(None)
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    with pytest.raises(XlakbError) as err:
        get_executor("ray://127.0.0.1:10001")
    assert str(err.value) == "--cluster ray://127.0.0.1:10001 needs Ray, which is not installed (hint: pip install 'xlakb[ray]')"


def test_a_ray_client_head_whose_server_failed_to_start_is_tried_again(monkeypatch):
    """Ray Client's "Initialization failure from server" (ConnectionAbortedError: the head answered, its server
    for this client did not come up) gets CONNECT_TRIES tries; any other failure ends at the first."""
    import types

    from xlakb import executors

    calls: list[str] = []

    def fake_ray(failures: list[BaseException]):
        def init(**options):
            calls.append(options["address"])
            if failures:
                raise failures.pop(0)

        return types.SimpleNamespace(
            is_initialized=lambda: False,
            init=init,
            remote=lambda f: f,
            nodes=lambda: [{"Alive": True, "Resources": {"CPU": 2.0}}],
            shutdown=lambda: None,
        )

    monkeypatch.setattr(executors.time, "sleep", lambda s: None)
    monkeypatch.setitem(sys.modules, "ray", fake_ray([ConnectionAbortedError("Initialization failure from server:")] * 2))
    assert executors.RayExecutor("ray://127.0.0.1:10001").slots == 2 and len(calls) == 3
    calls.clear()
    monkeypatch.setitem(sys.modules, "ray", fake_ray([ConnectionAbortedError("Initialization failure from server:")] * 3))
    with pytest.raises(XlakbError, match="cannot connect to the Ray cluster: ConnectionAbortedError"):
        executors.RayExecutor("ray://127.0.0.1:10001")
    assert len(calls) == executors.CONNECT_TRIES
    calls.clear()
    monkeypatch.setitem(sys.modules, "ray", fake_ray([ConnectionError("refused")]))
    with pytest.raises(XlakbError, match="ConnectionError: refused"):
        executors.RayExecutor("ray://127.0.0.1:10001")
    assert len(calls) == 1


def test_cli_names_a_bad_cluster_in_one_line(kb):
    fake_record(kb)
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "xlakb",
            "--root",
            str(kb),
            "matrix",
            "fake-bug",
            "--versions",
            "2.5.1",
            "--runner",
            "uv",
            "--cluster",
            "nowhere",
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 1 and r.stderr.strip().splitlines() == [
        "xlakb: error: --cluster 'nowhere': not an executor or Ray address "
        "(hint: use local, local-ray, ray://HOST:PORT or HOST:PORT (a Ray head's GCS address))"
    ]


def test_the_node_probe_finds_its_answer_among_ray_lines():
    """Ray's core prints to stdout after a node is lost (seen in CI); the cluster helper still reads its node list."""
    noise = (
        "(raylet) A worker died or was killed while executing a task by an unexpected system error.\n"
        f"{answer_line([{'ip': '127.0.0.1', 'cpus': 1.0}])}\n"
        "\t(2) raylet has lagging heartbeats due to slow network or busy workload.\n"
    )
    assert read_answer(noise) == [{"ip": "127.0.0.1", "cpus": 1.0}]
    with pytest.raises(ValueError, match="no line starting with"):
        read_answer("\t(2) raylet has lagging heartbeats due to slow network or busy workload.\n")


# -- a real cluster of two nodes -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    pytest.importorskip("ray")
    c = LoopbackCluster(tmp_path_factory.mktemp("raycluster"))
    try:
        c.add_node("head")
        c.add_node("worker")
        yield c
    finally:
        c.stop()


def driver(cluster: LoopbackCluster, kb: Path, *args: str, wheelhouse: Path) -> list[str]:
    """``xlakb matrix`` run inside the cluster's namespace (argv)."""
    return cluster.cmd(
        [
            sys.executable,
            "-m",
            "xlakb",
            "--root",
            str(kb),
            "matrix",
            *args,
            "--runner",
            "uv",
            "--find-links",
            str(wheelhouse),
            "--index-url",
            "none",
        ]
    )


def written(kb: Path, record_id: str = "fake-bug") -> dict[str, str]:
    """The rows of the matrix written so far (none before its file exists)."""
    try:
        return matrix_rows(kb, record_id)
    except (OSError, ValueError):
        return {}


def matrix_rows(kb: Path, record_id: str = "fake-bug") -> dict[str, str]:
    data = json.loads((kb / "bisect" / record_id / "matrix.json").read_text())
    return {row["candidate"]: row["verdict"] for row in data["results"]}


@pytest.mark.ray
def test_matrix_on_a_two_node_cluster(cluster, kb, wheelhouse, tmp_path):
    """Each probe a task on one of two nodes; each node builds environments in its own cache; the verdicts,
    table and matrix.json are those of a local run; log excerpts come back; a second run probes nothing."""
    runs_file = tmp_path / "runs"
    ray_record(kb, runs_file, NAP="1")
    argv = driver(cluster, kb, "fake-bug", "--versions", *VERSIONS, "--cluster", cluster.address, wheelhouse=wheelhouse)
    r = subprocess.run(argv, capture_output=True, text=True, env=cluster.env(), timeout=600)
    assert r.returncode == 0, r.stderr
    assert "executor: ray at 127.0.0.1:6379 (2 CPU(s) in the cluster)" in r.stderr and "[4/4]" in r.stderr
    # what the tasks reported came back while they ran: each start (with what is left) and the nodes' builds
    starts = re.findall(r"^\[\d/4\] fake-bug on torch_xla (\S+) \(\d left", r.stderr, re.M)
    assert sorted(starts) == sorted(VERSIONS), r.stderr
    assert re.search(r"^  node [0-9a-f]{6}: creating virtualenv \(torch==", r.stderr, re.M), r.stderr
    table = {line.split()[0]: line.split()[2] for line in r.stdout.splitlines() if line[:1].isdigit()}
    assert table == EXPECTED and matrix_rows(kb) == EXPECTED
    ran = runs(runs_file)
    assert sorted(v for v, _ in ran) == sorted(VERSIONS)  # each probe ran once
    by_node = {name: [v for v, exe in ran if exe.startswith(str(cluster.node_cache(name)))] for name in ("head", "worker")}
    assert by_node["head"] and by_node["worker"], by_node  # both nodes worked, each in its own environments
    logs = sorted((Path(os.environ["XLAKB_CACHE_DIR"]) / "logs" / "fake-bug").glob("*-ray-*.log"))
    assert len(logs) == 4
    assert all(p.read_text().startswith("# ray: run on 127.0.0.1 (node ") for p in logs)
    assert any("unhashable type: 'list'" in p.read_text() for p in logs)  # the reproducer's own output came back

    r = subprocess.run(argv, capture_output=True, text=True, env=cluster.env(), timeout=600)
    assert r.returncode == 0 and len(runs(runs_file)) == 4  # every verdict from the driver's cache


@pytest.mark.ray
def test_bisection_through_the_same_seam(cluster, kb, wheelhouse, tmp_path):
    """xlakb bisect --cluster: the probes of a release bisection (two at a time with -j 2) are tasks of the
    cluster, the answer is a local run's, and the driver alone keeps the verdict cache: a second run probes nothing."""
    runs_file = tmp_path / "runs"
    ray_record(kb, runs_file)
    argv = cluster.cmd(
        [
            sys.executable,
            "-m",
            "xlakb",
            "--root",
            str(kb),
            "bisect",
            "fake-bug",
            "--start",
            "2.2.0",
            "--end",
            "2.5.1",
            "-j",
            "2",
            "--cluster",
            cluster.address,
            "--runner",
            "uv",
            "--find-links",
            str(wheelhouse),
            "--index-url",
            "none",
        ]
    )
    r = subprocess.run(argv, capture_output=True, text=True, env=cluster.env(), timeout=600)
    assert r.returncode == 0, r.stderr
    assert "The change (introduced) is in 2.4.0: 2.3.0 is not-reproduced, 2.4.0 is reproduced." in r.stdout
    ran = runs(runs_file)
    assert ran and all(not exe.startswith(sys.prefix) for _, exe in ran)  # every probe ran in a node's environment
    assert len({v for v, _ in ran}) == len(ran)  # none twice
    again = subprocess.run(argv, capture_output=True, text=True, env=cluster.env(), timeout=600)
    assert again.returncode == 0 and "(0 run now" in again.stdout and len(runs(runs_file)) == len(ran)


@pytest.mark.ray
def test_a_probe_that_keeps_killing_its_worker_is_an_error_not_a_loop(cluster, kb, wheelhouse, tmp_path):
    runs_file = tmp_path / "runs"
    path = ray_record(kb, runs_file, KILL_WORKER="1")
    data = yaml.safe_load(path.read_text())
    data["environment"]["cold_start"] = True  # its parent must be the Ray worker, not a warm server
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False))
    argv = driver(cluster, kb, "fake-bug", "--versions", "2.5.1", "--cluster", cluster.address, wheelhouse=wheelhouse)
    r = subprocess.run(argv, capture_output=True, text=True, env=cluster.env(), timeout=600)
    assert r.returncode == 0, r.stderr
    row = json.loads((kb / "bisect" / "fake-bug" / "matrix.json").read_text())["results"][0]
    assert row["verdict"] == "error" and row["detail"].startswith(f"ray: WorkerCrashedError after {1 + RAY_RETRIES} tries")
    assert len(runs(runs_file)) == 1 + RAY_RETRIES
    assert not list((Path(os.environ["XLAKB_CACHE_DIR"]) / "verdicts").glob("*.json"))  # an error is not cached


@pytest.mark.ray
def test_a_tpu_record_on_a_cluster_without_tpus_is_an_error_with_the_reason(cluster, kb, wheelhouse, tmp_path):
    path = ray_record(kb, tmp_path / "runs")
    data = yaml.safe_load(path.read_text())
    data["environment"]["run_on"] = "tpu"
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    argv = driver(cluster, kb, "fake-bug", "--versions", "2.5.1", "--cluster", cluster.address, wheelhouse=wheelhouse)
    r = subprocess.run(argv, capture_output=True, text=True, env=cluster.env(), timeout=120)
    assert r.returncode == 0, r.stderr
    row = json.loads((kb / "bisect" / "fake-bug" / "matrix.json").read_text())["results"][0]
    assert row["verdict"] == "error"
    assert re.fullmatch(
        r"ray: no node of the cluster offers CPU 1, memory 2\.0 GiB, TPU 4 "
        r"\(nodes: CPU 1, memory [0-9.]+ GiB, TPU 0; CPU 1, memory [0-9.]+ GiB, TPU 0\)",
        row["detail"],
    ), row
    assert not runs(tmp_path / "runs")


@pytest.mark.ray
def test_nodes_whose_xlakb_is_not_the_drivers_probe_nothing(cluster, kb, wheelhouse, tmp_path):
    """The driver runs a copy of xlakb changed by one line; the nodes run this checkout's: every probe is an
    error that names both, no reproducer runs, nothing is cached, and the driver still ends its batch."""
    other = tmp_path / "other-src"
    shutil.copytree(REPO / "src", other, ignore=shutil.ignore_patterns("__pycache__"))
    with (other / "xlakb" / "runner.py").open("a") as fh:
        fh.write("# changed on the driver only\n")
    runs_file = tmp_path / "runs"
    ray_record(kb, runs_file)
    argv = driver(cluster, kb, "fake-bug", "--versions", "2.4.0", "2.5.1", "--cluster", cluster.address, wheelhouse=wheelhouse)
    r = subprocess.run(argv, capture_output=True, text=True, env=cluster.env(PYTHONPATH=str(other)), timeout=300)
    assert r.returncode == 0, r.stderr
    rows = json.loads((kb / "bisect" / "fake-bug" / "matrix.json").read_text())["results"]
    ours = code_fingerprint()
    for row in rows:
        assert row["verdict"] == "error", row
        assert re.fullmatch(
            rf"ray: node 127\.0\.0\.1 [0-9a-f]{{12}} runs xlakb {re.escape(ours)}, the driver xlakb "
            rf"{re.escape(__version__)}\+(?!{ours[-12:]})[0-9a-f]{{12}}; install the driver's xlakb on every node of the cluster",
            row["detail"],
        ), row
    assert len(rows) == 2 and not runs(runs_file)
    assert not list((Path(os.environ["XLAKB_CACHE_DIR"]) / "verdicts").glob("*.json"))


@pytest.mark.ray
def test_a_killed_driver_resumes_from_the_verdict_cache(cluster, kb, wheelhouse, tmp_path):
    runs_file = tmp_path / "runs"
    ray_record(kb, runs_file, NAP="3")
    versions = VERSIONS + ("2.7.0", "2.8.0")
    argv = driver(cluster, kb, "fake-bug", "--versions", *versions, "--cluster", cluster.address, wheelhouse=wheelhouse)
    verdicts = Path(os.environ["XLAKB_CACHE_DIR"]) / "verdicts"
    first = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=cluster.env(), start_new_session=True
    )
    try:
        deadline = time.monotonic() + 300
        while len(written(kb)) < 2 and time.monotonic() < deadline and first.poll() is None:
            time.sleep(0.2)
        os.kill(first.pid, signal.SIGKILL)
    finally:
        first.wait()
    measured = matrix_rows(kb)
    # a SIGKILL can land between keeping a verdict and writing its row: what the next run skips is what was kept
    kept = {json.loads(p.read_text())["candidate"] for p in verdicts.glob("*.json")}
    assert 2 <= len(measured) and set(measured) <= kept < set(versions), (measured, kept)  # killed mid-batch
    time.sleep(4)  # the killed driver's last probes end (Ray stops a dead driver's tasks)
    before = runs(runs_file)

    r = subprocess.run(argv, capture_output=True, text=True, env=cluster.env(), timeout=600)
    assert r.returncode == 0, r.stderr
    again = [v for v, _ in runs(runs_file)[len(before) :]]
    assert not set(again) & kept, (kept, again)  # nothing kept before ran again
    assert sorted(again) == sorted(set(versions) - kept)
    assert matrix_rows(kb) == {**EXPECTED, "2.7.0": "not-reproduced", "2.8.0": "not-reproduced"}


@pytest.mark.ray
def test_a_node_lost_mid_batch_loses_no_probe_and_counts_none_twice(kb, wheelhouse, tmp_path):
    """The worker node's raylet is killed while a probe runs there: that probe runs again on the head, every
    probe has exactly one result, and the batch ends with the verdicts of a quiet run."""
    pytest.importorskip("ray")
    lost = LoopbackCluster(tmp_path / "cluster")
    try:
        lost.add_node("head")
        lost.add_node("worker")
        runs_file = tmp_path / "runs"
        ray_record(kb, runs_file, NAP="4")
        argv = driver(lost, kb, "fake-bug", "--versions", *VERSIONS, "--cluster", lost.address, wheelhouse=wheelhouse)
        batch = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=lost.env(), start_new_session=True
        )
        try:
            worker_cache = str(lost.node_cache("worker"))
            deadline = time.monotonic() + 300
            while not any(exe.startswith(worker_cache) for _, exe in runs(runs_file)):
                assert time.monotonic() < deadline and batch.poll() is None, "no probe ran on the worker node"
                time.sleep(0.1)
            victim = next(v for v, exe in runs(runs_file) if exe.startswith(worker_cache))
            os.kill(lost.raylet_of("worker"), signal.SIGKILL)
            out, err = batch.communicate(timeout=600)
        finally:
            if batch.poll() is None:
                batch.kill()
                batch.wait()
        assert batch.returncode == 0, err
        assert len(lost.wait_nodes(1)) == 1  # the worker node is gone
        table = {line.split()[0]: line.split()[2] for line in out.splitlines() if line[:1].isdigit()}
        assert table == EXPECTED and matrix_rows(kb) == EXPECTED
        assert err.count(": reproduced") + err.count(": not-reproduced") == 4 and "[4/4]" in err and "[5/" not in err
        again = [exe for v, exe in runs(runs_file) if v == victim]
        assert len(again) == 2 and again[-1].startswith(str(lost.node_cache("head"))), again  # ran again elsewhere
    finally:
        lost.stop()


@pytest.mark.ray
def test_local_ray_starts_and_stops_a_cluster_of_this_machine(kb, wheelhouse, tmp_path):
    pytest.importorskip("ray")
    ns = LoopbackCluster(tmp_path / "ns")  # only the namespace: the driver starts its own cluster in it
    try:
        ray_record(kb, tmp_path / "runs")
        argv = driver(ns, kb, "fake-bug", "--versions", "2.5.1", "2.6.0", "--cluster", "local-ray", wheelhouse=wheelhouse)
        r = subprocess.run(argv, capture_output=True, text=True, env=ns.env(), timeout=600)
        assert r.returncode == 0, r.stderr
        assert "executor: ray at local-ray" in r.stderr
        assert matrix_rows(kb) == {"2.5.1": "reproduced", "2.6.0": "not-reproduced"}
        time.sleep(2)
        assert not ns._running(), "the cluster local-ray started outlived the run"
    finally:
        ns.stop()


@pytest.mark.ray
def test_the_ray_client_address_works_too(cluster, kb, wheelhouse, tmp_path):
    """``ray://host:port`` (Ray Client, the way to reach a cluster from outside it, e.g. KubeRay's head service)."""
    ray_record(kb, tmp_path / "runs")
    argv = driver(
        cluster, kb, "fake-bug", "--versions", "2.5.1", "2.6.0", "--cluster", "ray://127.0.0.1:10001", wheelhouse=wheelhouse
    )
    r = subprocess.run(argv, capture_output=True, text=True, env=cluster.env(), timeout=600)
    assert r.returncode == 0, r.stderr
    assert matrix_rows(kb) == {"2.5.1": "reproduced", "2.6.0": "not-reproduced"}
    assert len(runs(tmp_path / "runs")) == 2
