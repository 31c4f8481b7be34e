"""Verdicts from real runs of reproducers in real uv environments."""

import time
from pathlib import Path

import pytest

from fakewheels import fake_record
from xlakb import proc
from xlakb.candidates.releases import release
from xlakb.envs.uv import UvBackend
from xlakb.proc import RunResult
from xlakb.records import load_record
from xlakb.runner import Verdict, VerdictCache, classify, env_spec, probe, run_env

SIG = ["unhashable type: 'list'"]


def rr(code, out="", timed_out=False, note=""):
    return RunResult(("python",), code, timed_out, 1.0, out, None, note)


@pytest.mark.parametrize(
    "result,verdict",
    [
        (rr(0), Verdict.NOT_REPRODUCED),
        (rr(1, "TypeError: unhashable type: 'list'"), Verdict.REPRODUCED),
        (rr(1, "Segmentation fault"), Verdict.ERROR),
        (rr(125, "no API"), Verdict.UNTESTABLE),
        (rr(2, "Traceback"), Verdict.ERROR),
        (rr(-6, "Check failed"), Verdict.ERROR),
        (rr(None, "", timed_out=True), Verdict.ERROR),
        (rr(1, "unhashable type: 'list'", note="killed: out of memory"), Verdict.ERROR),
    ],
)
def test_classify(result, verdict):
    assert classify(result, SIG)[0] is verdict


def test_untestable_reason_is_the_scripts_line_not_runtime_noise():
    verdict, detail = classify(rr(125, "UNTESTABLE: no DTensor API\nI0000 cpu_client.cc:373] TfrtCpuClient destroyed.\n"), SIG)
    assert verdict is Verdict.UNTESTABLE and detail == "exit 125: UNTESTABLE: no DTensor API"


def test_unrelated_crash_is_error_with_reason():
    verdict, detail = classify(rr(1, "boom\nRuntimeError: something else"), SIG)
    assert verdict is Verdict.ERROR and "matched no signature" in detail and "something else" in detail


def alive(pid: int) -> bool:
    """Running (a zombie waiting for its reaper counts as dead)."""
    for _ in range(50):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return False
        if state in ("Z", "X"):
            return False
        time.sleep(0.1)
    return True


def test_timeout_kills_the_whole_tree(tmp_path):
    script = tmp_path / "hang.py"
    pidfile = tmp_path / "child.pid"
    script.write_text(f"""
import subprocess, sys, time
p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
open({str(pidfile)!r}, "w").write(str(p.pid))
print("started", flush=True)
time.sleep(300)
""")
    start = time.monotonic()
    result = proc.run(["python3", str(script)], timeout=2, log_path=tmp_path / "log")
    assert result.timed_out and time.monotonic() - start < 15
    assert "started" in (tmp_path / "log").read_text()
    child = int(pidfile.read_text())
    assert not alive(child)
    assert classify(result, SIG)[0] is Verdict.ERROR


def test_run_env_is_clean_and_has_record_vars(kb, monkeypatch):
    fake_record(kb, env={"XLA_DISABLE_FUNCTIONALIZATION": "1"})
    monkeypatch.setenv("SOME_SECRET_TOKEN", "x")
    env = run_env(load_record(kb, "fake-bug"))
    assert env["PJRT_DEVICE"] == "CPU" and env["CPU_NUM_DEVICES"] == "4"
    assert env["XLA_DISABLE_FUNCTIONALIZATION"] == "1" and "SOME_SECRET_TOKEN" not in env


def test_env_spec_pairs_torch_and_pins(kb):
    fake_record(kb, packages=("numpy",))
    rec = load_record(kb, "fake-bug")
    assert set(env_spec(rec, release("2.1.0")).requirements) == {
        "torch_xla==2.1.0",
        "torch==2.1.0",
        "numpy<2",
        "setuptools<70",
        "numpy",
    }
    assert set(env_spec(rec, release("2.6.1")).requirements) == {"torch_xla==2.6.1", "torch==2.6.0", "numpy"}


@pytest.mark.parametrize(
    "version,verdict", [("2.1.0", Verdict.UNTESTABLE), ("2.5.1", Verdict.REPRODUCED), ("2.6.0", Verdict.NOT_REPRODUCED)]
)
def test_probe_real_env(kb, wheelhouse, version, verdict):
    fake_record(kb)
    res = probe(load_record(kb, "fake-bug"), release(version), UvBackend(), find_links=(str(wheelhouse),), index_url="none")
    assert res.verdict is verdict
    log = Path(res.log).read_text()
    assert f"torch_xla {version}" in log and "PJRT_DEVICE CPU devices 4" in log


def test_probe_hang_is_error_not_bad(kb, tmp_path):
    from fakewheels import fake_torch, fake_torch_xla

    house = tmp_path / "house"
    fake_torch_xla(house, "2.5.1", bug="hang")
    fake_torch(house, "2.5.1")
    fake_record(kb, timeout=3)
    res = probe(load_record(kb, "fake-bug"), release("2.5.1"), UvBackend(), find_links=(str(house),), index_url="none")
    assert res.verdict is Verdict.ERROR and "timed out" in res.detail


def test_probe_abort_and_unrelated_crash_are_errors(kb, tmp_path):
    from fakewheels import fake_torch, fake_torch_xla

    house = tmp_path / "house"
    fake_torch_xla(house, "2.5.0", bug="abort")
    fake_torch(house, "2.5.0")
    fake_torch_xla(house, "2.5.1", bug="crash")
    fake_torch(house, "2.5.1")
    fake_record(kb)
    rec = load_record(kb, "fake-bug")
    aborted = probe(rec, release("2.5.0"), UvBackend(), find_links=(str(house),), index_url="none")
    assert aborted.verdict is Verdict.ERROR and "signal 6" in aborted.detail
    crashed = probe(rec, release("2.5.1"), UvBackend(), find_links=(str(house),), index_url="none")
    assert crashed.verdict is Verdict.ERROR and crashed.exit_code == 1


def test_verdict_cache_hits_and_invalidates_on_reproducer_change(kb, wheelhouse):
    fake_record(kb)
    rec = load_record(kb, "fake-bug")
    cache = VerdictCache()
    args = dict(find_links=(str(wheelhouse),), index_url="none", cache=cache)
    first = probe(rec, release("2.5.1"), UvBackend(), **args)
    second = probe(rec, release("2.5.1"), UvBackend(), **args)
    assert not first.cached and second.cached and second.verdict is first.verdict
    script = kb / "reproducers" / "fake-bug.py"
    script.write_text(script.read_text() + "\n# changed\n")
    third = probe(rec, release("2.5.1"), UvBackend(), **args)
    assert not third.cached
