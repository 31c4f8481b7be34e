"""Warm starts: probes forked from a server that imported torch and torch_xla, judged like cold ones, with
real uv environments of fake wheels (the real-wheel comparison is in test_realwheels.py and
benchmarks/bench_warm.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from fakewheels import build_wheel, fake_record, fake_torch, fake_torch_xla
from xlakb.candidates.releases import release
from xlakb.envs import warm
from xlakb.envs.uv import UvBackend
from xlakb.records import load_record
from xlakb.runner import probe

IMPORT_SEES = '''\
import os, sys
import torch_xla
print("at import", torch_xla.AT_IMPORT, "now", os.environ.get("XLA_FLAGS"), "other", os.environ.get("OTHER"))
sys.exit(0)
'''


@pytest.fixture
def house(tmp_path):
    """Fake releases whose torch_xla remembers XLA_FLAGS as it was when imported (a variable read at import)."""
    dest = tmp_path / "house"
    read = "import os\nAT_IMPORT = os.environ.get('XLA_FLAGS')\n"
    for version, bug in (("2.4.0", "present"), ("2.5.1", "present"), ("2.6.0", "none"), ("2.3.0", "hang")):
        fake_torch_xla(dest, version, bug=bug, extra={"torch_xla/__init__.py": f"__version__ = {version!r}\nBUG = {bug!r}\n{read}"})
        fake_torch(dest, version)
    build_wheel(dest, "numpy", "1.26.4", {"numpy/__init__.py": "__version__ = '1.26.4'\n"})  # pins of old releases
    build_wheel(dest, "setuptools", "69.5.1", {"setuptools/__init__.py": "__version__ = '69.5.1'\n"})
    return dest


def _probe(kb, rid, version, house, monkeypatch, warm_on=True):
    monkeypatch.setenv("XLAKB_WARM", "1" if warm_on else "0")
    backend = UvBackend()
    return probe(load_record(kb, rid), release(version), backend, find_links=(str(house),), index_url="none")


def _servers() -> list[str]:
    out = subprocess.run(["pgrep", "-af", "warm_server.py"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "pgrep" not in line]


@pytest.fixture(autouse=True)
def _own_pool():
    warm.close_pool()
    yield
    warm.close_pool()


def test_warm_and_cold_probes_judge_alike(kb, house, monkeypatch):
    fake_record(kb)
    for version, want in (("2.5.1", "reproduced"), ("2.6.0", "not-reproduced")):
        cold = _probe(kb, "fake-bug", version, house, monkeypatch, warm_on=False)
        hot = _probe(kb, "fake-bug", version, house, monkeypatch)
        assert (cold.verdict.value, hot.verdict.value) == (want, want)
        assert (cold.start, hot.start) == ("cold", "warm")
        assert cold.detail == hot.detail and cold.exit_code == hot.exit_code
        assert Path(cold.log).read_text() == Path(hot.log).read_text()  # the same output, in the same order


def test_a_variable_read_at_import_gets_its_own_server(kb, house, monkeypatch):
    """XLA_FLAGS is read while torch_xla is imported (data/import_time.yaml): a probe with another value must
    not be forked from a server that imported with the first one; a variable read later is set in the child."""
    assert "XLA_FLAGS" in warm.import_time_names("2.4.0", {})
    fake_record(kb, reproducer=IMPORT_SEES, env={"XLA_FLAGS": "--a", "OTHER": "1"})
    first = _probe(kb, "fake-bug", "2.4.0", house, monkeypatch)
    path = kb / "issues" / "fake-bug.yaml"
    data = yaml.safe_load(path.read_text())
    data["environment"]["env"] = {"XLA_FLAGS": "--b", "OTHER": "2"}
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    second = _probe(kb, "fake-bug", "2.4.0", house, monkeypatch)
    assert first.start == second.start == "warm"
    assert "at import --a now --a other 1" in Path(first.log).read_text()
    assert "at import --b now --b other 2" in Path(second.log).read_text()
    assert len(warm.pool().servers) == 2


def test_a_record_can_ask_for_cold_starts_and_xlakb_warm_0_turns_them_off(kb, house, monkeypatch):
    path = fake_record(kb)
    assert _probe(kb, "fake-bug", "2.5.1", house, monkeypatch, warm_on=False).start == "cold"
    data = yaml.safe_load(path.read_text())
    data["environment"]["cold_start"] = True
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    assert _probe(kb, "fake-bug", "2.5.1", house, monkeypatch).start == "cold"


def test_a_warm_timeout_kills_the_whole_tree(kb, house, monkeypatch):
    fake_record(kb, timeout=3)
    started = time.monotonic()
    res = _probe(kb, "fake-bug", "2.3.0", house, monkeypatch)  # the fake reproducer sleeps and leaves a child
    assert res.start == "warm" and res.verdict.value == "error" and "timed out" in res.detail
    assert time.monotonic() - started < 60
    time.sleep(0.5)
    left = subprocess.run(["pgrep", "-f", "time.sleep\\(600\\)"], capture_output=True, text=True).stdout.split()
    assert left == [], "the probe's own child outlived its timeout"


def test_no_server_is_left_behind_when_the_command_ends(kb, house):
    fake_record(kb)
    before = _servers()
    r = subprocess.run([sys.executable, "-m", "xlakb", "--root", str(kb), "matrix", "fake-bug", "--versions", "2.4.0",
                        "2.5.1", "--runner", "uv", "--find-links", str(house), "--index-url", "none", "-q"],
                       capture_output=True, text=True, env={**os.environ, "XLAKB_WARM": "1"})
    assert r.returncode == 0, r.stderr
    time.sleep(0.5)
    assert _servers() == before
    data = (kb / "bisect" / "fake-bug" / "matrix.json").read_text()
    assert '"start": "warm"' in data


def test_a_server_that_cannot_start_runs_the_probe_cold(tmp_path):
    pool = warm.WarmPool(root=tmp_path / "pool", preload=("no_such_module_here",), start_timeout=30)
    script = tmp_path / "ok.py"
    script.write_text("print('ran')\n")
    calls = []

    def cold():
        calls.append(1)
        from xlakb.proc import run

        return run([sys.executable, str(script)], timeout=30, log_path=tmp_path / "log")

    res = pool.run(sys.executable, script, args=(), env={"PATH": os.environ["PATH"]}, release=None, cwd=tmp_path,
                   timeout=30, log_path=tmp_path / "log", cold=cold)
    assert calls == [1] and res.output == "ran\n" and not res.warm
    assert "did not start" in next(iter(pool.cold.values()))
    pool.close()


def test_scan_finds_the_variables_read_at_import(tmp_path):
    pkg = tmp_path / "site" / "fakemod"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("import os\nA = os.environ.get('FAKE_READ_AT_IMPORT')\n"
                                     "def later():\n    return os.environ.get('FAKE_READ_LATER')\n")
    names = warm.scan_import_time(sys.executable, {"PATH": os.environ["PATH"], "PYTHONPATH": str(tmp_path / "site")},
                                  preload=("fakemod",))
    assert "FAKE_READ_AT_IMPORT" in names and "FAKE_READ_LATER" not in names
    assert "HOME" in names or "PYTHONPATH" in names  # C-level reads of the interpreter itself are seen too
