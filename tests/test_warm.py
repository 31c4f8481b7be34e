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
from xlakb.errors import XlakbError
from xlakb.records import load_record
from xlakb.runner import probe

IMPORT_SEES = """\
import os, sys
import torch_xla
print("at import", torch_xla.AT_IMPORT, "now", os.environ.get("XLA_FLAGS"), "other", os.environ.get("OTHER"))
sys.exit(0)
"""


@pytest.fixture
def house(tmp_path):
    """Fake releases whose torch_xla remembers XLA_FLAGS as it was when imported (a variable read at import)."""
    dest = tmp_path / "house"
    read = "import os\nAT_IMPORT = os.environ.get('XLA_FLAGS')\n"
    for version, bug in (("2.4.0", "present"), ("2.5.1", "present"), ("2.6.0", "none"), ("2.3.0", "hang")):
        fake_torch_xla(
            dest, version, bug=bug, extra={"torch_xla/__init__.py": f"__version__ = {version!r}\nBUG = {bug!r}\n{read}"}
        )
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


FREEZE_SEES = """\
import atexit, gc, sys
import torch_xla
atexit.register(lambda: print("exit handlers ran", flush=True))
print("frozen" if gc.get_freeze_count() > 0 and gc.isenabled() else "not frozen", flush=True)
sys.exit(0)
"""


def test_a_warm_child_leaves_the_servers_heap_to_the_server_and_still_exits_in_full(kb, house, monkeypatch):
    """The server freezes what its imports made before it forks (so the child's collections and its exit
    do not walk and copy the whole heap), the child's collector is on, and the child still exits as an
    interpreter does: handlers run."""
    fake_record(kb, reproducer=FREEZE_SEES)
    hot = _probe(kb, "fake-bug", "2.5.1", house, monkeypatch)
    cold = _probe(kb, "fake-bug", "2.5.1", house, monkeypatch, warm_on=False)
    assert hot.start == "warm" and cold.start == "cold"
    assert Path(hot.log).read_text().split() == ["frozen", "exit", "handlers", "ran"]
    assert Path(cold.log).read_text().split() == ["not", "frozen", "exit", "handlers", "ran"]


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
    # servers of other xlakb commands running on this machine are not this command's (each server names
    # the process it serves: --parent PID)
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "xlakb",
            "--root",
            str(kb),
            "matrix",
            "fake-bug",
            "--versions",
            "2.4.0",
            "2.5.1",
            "--runner",
            "uv",
            "--find-links",
            str(house),
            "--index-url",
            "none",
            "-q",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "XLAKB_WARM": "1"},
    )
    _, err = p.communicate(timeout=600)
    assert p.returncode == 0, err
    time.sleep(0.5)
    assert [s for s in _servers() if s.endswith(f"--parent {p.pid}")] == []
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

    res = pool.run(
        sys.executable,
        script,
        args=(),
        env={"PATH": os.environ["PATH"]},
        release=None,
        cwd=tmp_path,
        timeout=30,
        log_path=tmp_path / "log",
        cold=cold,
    )
    assert calls == [1] and res.output == "ran\n" and not res.warm
    assert "did not start" in next(iter(pool.cold.values()))
    pool.close()


def test_scan_finds_the_variables_read_at_import(tmp_path):
    pkg = tmp_path / "site" / "fakemod"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        "import os\nA = os.environ.get('FAKE_READ_AT_IMPORT')\ndef later():\n    return os.environ.get('FAKE_READ_LATER')\n"
    )
    (pkg / "walk.py").write_text("import os\nMINE = {k: v for k, v in os.environ.items() if k.startswith('FAKE_')}\n")
    names, walkers = warm.scan_import_time(
        sys.executable, {"PATH": os.environ["PATH"], "PYTHONPATH": str(tmp_path / "site")}, preload=("fakemod",)
    )
    assert "FAKE_READ_AT_IMPORT" in names and "FAKE_READ_LATER" not in names and walkers == []
    _, walkers = warm.scan_import_time(
        sys.executable, {"PATH": os.environ["PATH"], "PYTHONPATH": str(tmp_path / "site")}, preload=("fakemod", "fakemod.walk")
    )
    assert walkers == [str(pkg / "walk.py")]  # outside site-packages: the whole path
    assert warm.unreviewed_walkers(walkers) == walkers and warm.unreviewed_walkers(["fsspec/config.py"]) == []
    assert "HOME" in names or "PYTHONPATH" in names  # C-level reads of the interpreter itself are seen too
    # a walk reads every variable's value (items(), dict(os.environ)) but keeps only its own: those values
    # are no reads by name; the walker is named, and its prefixes are a reviewed list
    (pkg / "copy.py").write_text(
        "import os\nALL = dict(os.environ)\nMINE = {k: v for k, v in ALL.items() if k.startswith('FAKE_')}\n"
        "B = os.environ.get('FAKE_B')\n"
    )
    names, walkers = warm.scan_import_time(
        sys.executable,
        {"PATH": os.environ["PATH"], "PYTHONPATH": str(tmp_path / "site"), "FAKE_ONLY_WALKED": "1", "FAKE_B": "2"},
        preload=("fakemod.walk", "fakemod.copy"),
    )
    assert "FAKE_ONLY_WALKED" not in names and "FAKE_B" in names
    assert walkers == [str(pkg / "copy.py"), str(pkg / "walk.py")]


def test_scan_of_releases_names_what_each_one_reads(house, tmp_path):
    """xlakb warm scan over two fake releases: each environment built, its import scanned, the table written."""
    from xlakb.runner import scan_releases

    found = scan_releases([release("2.4.0"), release("2.6.0")], UvBackend(), find_links=(str(house),), index_url="none")
    assert set(found) == {"2.4.0", "2.6.0"}
    assert all("XLA_FLAGS" in names for names in found.values())  # the fake torch_xla reads it at import
    table = tmp_path / "import_time.yaml"
    table.write_text('# head\nunmeasured_prefixes: [XLA_]\nreleases:\n  "2.1.0": ["A"]\n')
    warm.write_import_time(found, table)
    data = yaml.safe_load(table.read_text())
    assert table.read_text().startswith("# head\n") and list(data["releases"]) == ["2.1.0", "2.4.0", "2.6.0"]
    assert data["releases"]["2.1.0"] == ["A"] and "XLA_FLAGS" in data["releases"]["2.6.0"]
    with pytest.raises(XlakbError, match="uv runner"):
        scan_releases([release("2.4.0")], _NotUv())


def test_a_prefix_a_reviewed_walker_keeps_is_read_at_import():
    """fsspec reads every FSSPEC_* variable at import by walking os.environ: such a variable gets its server."""
    assert "FSSPEC_S3_ANON" in warm.import_time_names("2.7.0", {"FSSPEC_S3_ANON": "1", "MY_OWN": "x"})
    assert "MY_OWN" not in warm.import_time_names("2.7.0", {"FSSPEC_S3_ANON": "1", "MY_OWN": "x"})
    assert warm.server_env("2.7.0", {})["TORCH_WARM_POOL"] == "0"  # no compile-worker process started at import
    assert warm.server_env("2.7.0", {"TORCH_WARM_POOL": "1"})["TORCH_WARM_POOL"] == "1"


def test_scan_stops_at_code_that_walks_the_environment_unreviewed(tmp_path):
    """A release whose import walks os.environ in a file nobody reviewed: the scan says which, writes nothing."""
    from xlakb.runner import scan_releases

    house = tmp_path / "house"
    fake_torch_xla(
        house,
        "2.5.1",
        extra={
            "torch_xla/__init__.py": "__version__ = '2.5.1'\nBUG = 'none'\nimport os\n"
            "SEEN = [k for k in os.environ if k.startswith('ZZ_')]\n"
        },
    )
    fake_torch(house, "2.5.1")
    with pytest.raises(XlakbError, match=r"torch_xla 2.5.1: torch_xla/__init__.py walks the whole environment"):
        scan_releases([release("2.5.1")], UvBackend(), find_links=(str(house),), index_url="none")


class _NotUv:
    name = "docker"


class _FakeServer:
    """A stand-in server for the pool's own logic: it answers after ``nap`` seconds."""

    def __init__(self, exclusive: bool, started: list, nap: float = 0.3):
        self.exclusive, self.nap, self.stopped = exclusive, nap, False
        started.append(self)

    def wait_ready(self, timeout):
        pass

    def alive(self):
        return not self.stopped

    def stop(self):
        self.stopped = True

    def note(self, code, reply):
        return ""

    def run(self, script, args, env, cwd, timeout, log_path, become=None):
        time.sleep(self.nap)
        log_path.write_text("ok\n")
        return warm.Reply(0, False, self.nap)


def _pool_run(pool, tmp_path, name, python="py", start=None):
    return pool.run(
        python,
        tmp_path / "s.py",
        args=(),
        env={},
        release=None,
        cwd=tmp_path,
        timeout=10,
        log_path=tmp_path / f"{name}.log",
        cold=lambda: pytest.fail("ran cold"),
        start=start,
    )


@pytest.mark.parametrize("exclusive,servers", [(True, 2), (False, 1)])
def test_an_exclusive_server_takes_one_probe_at_a_time(tmp_path, exclusive, servers):
    """A container's server (exclusive) serves one probe at a time: two at once on one key start two servers;
    a shared one takes both."""
    import threading

    pool = warm.WarmPool(root=tmp_path / "pool", max_servers=4)
    started: list = []
    runs = [
        threading.Thread(
            target=_pool_run, args=(pool, tmp_path, n), kwargs={"start": lambda folder: _FakeServer(exclusive, started)}
        )
        for n in "ab"
    ]
    for t in runs:
        t.start()
    for t in runs:
        t.join()
    assert len(started) == servers and _pool_run(pool, tmp_path, "c", start=lambda f: _FakeServer(exclusive, started)).warm
    assert len(started) == servers  # the third probe reused one
    pool.close()
    assert all(s.stopped for s in started)


def test_the_pool_stops_the_least_recently_used_server_beyond_its_limit(tmp_path):
    pool = warm.WarmPool(root=tmp_path / "pool", max_servers=2)
    started: list = []
    for python in ("a", "b", "a", "c"):
        _pool_run(pool, tmp_path, python, python=python, start=lambda f: _FakeServer(False, started, nap=0))
    by_python = dict(zip("abc", started))
    assert len(started) == 3 and by_python["b"].stopped and not by_python["a"].stopped and not by_python["c"].stopped
    pool.close()
    assert (tmp_path / "pool").exists()  # a root the caller gave is the caller's to remove


def test_the_default_pool_folder_goes_with_the_pool():
    pool = warm.WarmPool()
    assert pool.root.is_dir()
    pool.close()
    assert not pool.root.exists()


def test_what_the_imports_started_stays_the_servers(kb, tmp_path, monkeypatch):
    """A torch whose import starts a worker process (torch 2.2's compile-worker pool): a warm child neither
    kills nor joins it at exit (it is the server's), and says nothing about it."""
    house = tmp_path / "house"
    pidfile = tmp_path / "worker.pid"
    starts_worker = (
        "import multiprocessing as _mp, os as _os, time as _time\n"
        "def _idle():\n    _time.sleep(600)\n"
        "_worker = _mp.get_context('fork').Process(target=_idle, daemon=True)\n_worker.start()\n"
        f"open({str(pidfile)!r}, 'a').write(str(_worker.pid) + '\\n')\n"
    )
    fake_torch_xla(house, "2.6.0", extra={"torch_xla/__init__.py": "__version__ = '2.6.0'\nBUG = 'none'\n" + starts_worker})
    fake_torch(house, "2.6.0")
    fake_record(kb)
    for _ in range(2):
        res = _probe(kb, "fake-bug", "2.6.0", house, monkeypatch)
        assert res.start == "warm" and res.verdict.value == "not-reproduced", res.detail
        assert "can only join a child process" not in Path(res.log).read_text()
    server_worker = int(pidfile.read_text().split()[0])  # the server's import wrote first
    os.kill(server_worker, 0)  # still alive after two probes


# torch_xla with PT_XLA_DEBUG=1 (2.8.0): its import makes a file with mkstemp, names it in XLA_FNTRACKER_FILE, and
# each process reads and removes it at exit, failing when it is gone
MAKES_A_FILE = """
import atexit as _atexit, os as _os, tempfile as _tempfile
_fd, _tmp_fname = _tempfile.mkstemp('.ptxla', text=True)
_os.environ.setdefault('XLA_FNTRACKER_FILE', _tmp_fname)
open(_os.path.join(_tempfile.gettempdir(), 'not-a-temporary-file.txt'), 'w').write('any process may write this')
def _summarize():
    with open(_tmp_fname) as f:
        f.read()
    _os.close(_fd)
    _os.remove(_tmp_fname)
_atexit.register(_summarize)
"""
SEES_THE_FILE = """\
import os, sys
import torch_xla
print("tracker", os.environ.get("XLA_FNTRACKER_FILE") == torch_xla._tmp_fname, os.path.exists(torch_xla._tmp_fname))
sys.exit(0)
"""


def test_what_the_imports_made_outside_the_interpreter_each_child_gets_back(kb, tmp_path, monkeypatch):
    """The file an import made in the temporary folder, and the variable it set, are each child's as a cold
    import would make them, though the child before removed the file at its exit (mined-pr9086 on 2.8.0:
    the second probe of the server failed at exit). Such a server serves one child at a time."""
    house = tmp_path / "house"
    fake_torch_xla(house, "2.6.0", extra={"torch_xla/__init__.py": "__version__ = '2.6.0'\nBUG = 'none'\n" + MAKES_A_FILE})
    fake_torch(house, "2.6.0")
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    fake_record(kb, reproducer=SEES_THE_FILE)
    cold = _probe(kb, "fake-bug", "2.6.0", house, monkeypatch, warm_on=False)
    assert Path(cold.log).read_text().split() == ["tracker", "True", "True"] and cold.exit_code == 0
    for _ in range(3):
        hot = _probe(kb, "fake-bug", "2.6.0", house, monkeypatch)
        assert hot.start == "warm" and hot.exit_code == 0, Path(hot.log).read_text()
        assert Path(hot.log).read_text() == Path(cold.log).read_text()
    (srv,) = [s for group in warm.pool().servers.values() for s in group]
    assert srv.exclusive and srv.view["env_set"] == ["XLA_FNTRACKER_FILE"]
    # only what this process made through tempfile: a file by a fixed name is anyone's (and was there before)
    assert [Path(p).suffix for p in srv.view["made_files"]] == [".ptxla"]


COUNTS_ITS_LINES = """\
import os, sys, time
import torch_xla
path = os.environ["PT_XLA_DEBUG_FILE"]
open(path, "w").close()  # as upstream's debug test does in setUpClass
for _ in range(5):
    with open(path, "a") as f:
        f.write("step\\n")
    time.sleep(0.1)
lines = open(path).read().splitlines()
print("lines", len(lines))
sys.exit(0 if len(lines) == 5 else 1)
"""


@pytest.mark.parametrize("warm_on", [True, False])
def test_probes_that_name_one_file_take_turns(kb, house, monkeypatch, tmp_path, warm_on):
    """Two upstream debug tests both truncate, write and count /tmp/pt_xla_debug.txt (the file their
    environment names): run side by side they saw each other's lines (mined-pr9086 cold on 2.8.0, "2 != 1").
    Probes naming one file take turns; each sees what a run alone sees."""
    from xlakb.matrix import run_batch

    shared = str(tmp_path / "pt_xla_debug.txt")
    for rid in ("counts-a", "counts-b"):
        fake_record(kb, rid, reproducer=COUNTS_ITS_LINES, env={"PT_XLA_DEBUG_FILE": shared}, signatures=("lines",))
    monkeypatch.setenv("XLAKB_WARM", "1" if warm_on else "0")
    pairs = [(load_record(kb, rid), release("2.6.0")) for rid in ("counts-a", "counts-b")]
    results = run_batch(pairs, UvBackend(), jobs=2, cache=None, find_links=(str(house),), index_url="none")
    assert [r.verdict.value for r in results] == ["not-reproduced", "not-reproduced"], [Path(r.log).read_text() for r in results]


BECOMES = """\
import os, subprocess, sys
import torch_xla
import extrapkg
venv = os.environ["VIRTUAL_ENV"]
print("executable", sys.executable == os.path.join(venv, "bin", "python"), "prefix", sys.prefix == venv,
      "extra", extrapkg.X, "torch_xla saw it", getattr(torch_xla, "SAW", None))
child = subprocess.run([sys.executable, "-c", "import extrapkg, sys; print('child', extrapkg.X, sys.prefix == %r)" % venv],
                       capture_output=True, text=True)
print(child.stdout.strip(), child.stderr.strip()[-200:])
sys.exit(0)
"""


@pytest.fixture
def extra_house(house):
    """The fake releases and a package a record adds (``extrapkg``); torch_xla 2.2.0 looks for it at import."""
    build_wheel(house, "extrapkg", "1.0", {"extrapkg/__init__.py": "X = 'here'\n"})
    looks = "try:\n    import extrapkg\n    SAW = True\nexcept ImportError:\n    SAW = False\n"
    fake_torch_xla(
        house, "2.2.0", bug="present", extra={"torch_xla/__init__.py": f"__version__ = '2.2.0'\nBUG = 'present'\n{looks}"}
    )
    fake_torch(house, "2.2.0")
    return house


def _two_records(kb):
    fake_record(kb, "fake-base", reproducer="import torch_xla\n")
    fake_record(kb, "fake-extra", reproducer=BECOMES, packages=("extrapkg",))


def test_one_server_serves_an_environment_that_only_adds_packages(kb, extra_house, monkeypatch):
    """A record's extra packages make an environment of their own, but not a server of their own: the
    release's server forks the probe, which becomes that environment's interpreter (prefix, executable, the
    processes it starts) and prints what a cold probe of it prints."""
    _two_records(kb)
    assert _probe(kb, "fake-base", "2.4.0", extra_house, monkeypatch).start == "warm"
    hot = _probe(kb, "fake-extra", "2.4.0", extra_house, monkeypatch)
    cold = _probe(kb, "fake-extra", "2.4.0", extra_house, monkeypatch, warm_on=False)
    assert (hot.start, cold.start, hot.verdict.value) == ("warm", "cold", "not-reproduced")
    assert Path(hot.log).read_text() == Path(cold.log).read_text()
    assert "executable True prefix True extra here torch_xla saw it None\nchild here True" in Path(hot.log).read_text()
    assert warm.pool().started == 1 and warm.pool().refused == {}


def test_a_server_whose_import_looked_for_an_added_package_does_not_serve_it(kb, extra_house, monkeypatch):
    """torch_xla 2.2.0 looks for ``extrapkg`` while it is imported: the release's server imported without it,
    so the environment that adds it gets a server of its own, and the probe sees what a cold one sees."""
    _two_records(kb)
    _probe(kb, "fake-base", "2.2.0", extra_house, monkeypatch)
    hot = _probe(kb, "fake-extra", "2.2.0", extra_house, monkeypatch)
    cold = _probe(kb, "fake-extra", "2.2.0", extra_house, monkeypatch, warm_on=False)
    assert hot.start == "warm" and Path(hot.log).read_text() == Path(cold.log).read_text()
    assert "torch_xla saw it True" in Path(hot.log).read_text()
    assert warm.pool().started == 2
    assert list(warm.pool().refused.values()) == ["its import looked for extrapkg, which extrapkg 1.0 adds"]


def test_a_host_needs_every_one_of_its_distributions_at_the_same_version(kb, extra_house, monkeypatch, tmp_path):
    """An environment that holds another version of one of the host's distributions is not hosted by it."""
    _two_records(kb)
    _probe(kb, "fake-base", "2.4.0", extra_house, monkeypatch)
    backend = UvBackend()
    from xlakb.runner import env_spec

    extra = backend.ensure(
        env_spec(load_record(kb, "fake-extra"), release("2.4.0"), find_links=(str(extra_house),), index_url="none")
    )
    assert backend.host(extra, {"PATH": "/bin"}) is not None
    site = next(Path(extra.location).glob("venv/lib/python*/site-packages"))
    info = next(site.glob("torch-*.dist-info"))
    meta = info / "METADATA"
    text = meta.read_text()
    meta.unlink()  # uv links it from its cache, and the host's environment with it
    meta.write_text(text.replace("Version: 2.4.0", "Version: 2.4.1"))
    assert UvBackend().host(extra, {"PATH": "/bin"}) is None


@pytest.mark.parametrize(
    "view,extra,why",
    [
        ({"looked_for": ["torch", "rich"]}, warm.Dist("rich", "13", ("rich",)), "looked for rich"),
        ({"looked_for": [], "metadata": ["Rich"]}, warm.Dist("rich", "13", ("rich",)), "read the metadata of rich"),
        (
            {"looked_for": [], "metadata": ["*"]},
            warm.Dist("plug", "1", ("plug",), groups=("torch.backends",)),
            "declares torch.backends",
        ),
        ({"looked_for": [], "metadata": ["*"]}, warm.Dist("pytest", "8", ("pytest",), groups=("console_scripts",)), None),
        ({"looked_for": []}, warm.Dist("editable", "1", ("editable",), pth=True), "installs a .pth file"),
        ({"looked_for": [], "scanners": ["pkg_resources"]}, warm.Dist("rich", "13", ("rich",)), "loaded pkg_resources"),
        ({}, warm.Dist("rich", "13", ("rich",)), "did not say"),
    ],
)
def test_what_keeps_a_server_from_standing_for_an_environment_that_adds_packages(view, extra, why):
    got = warm.refusal(view, [extra])
    assert (got is None) if why is None else (why in got)
    assert warm.refusal({}, []) is None  # nothing added: the same environment


def test_site_dists_reads_names_versions_top_level_names_pth_and_entry_points(tmp_path):
    site = tmp_path / "site-packages"
    info = site / "My_Pkg-1.2.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: My_Pkg\nVersion: 1.2\n\nName: not this\n")
    (info / "RECORD").write_text(
        "my_pkg/__init__.py,,\nhelper.py,,\n_speed.cpython-311-x86_64-linux-gnu.so,,\n"
        "my_pkg.pth,,\nbin/tool,,\n../../bin/tool,,\nMy_Pkg-1.2.dist-info/RECORD,,\n"
    )
    (info / "entry_points.txt").write_text("[console_scripts]\ntool = my_pkg:main\n\n[torch.backends]\nx = my_pkg\n")
    got = warm.site_dists(site)
    assert got == {
        "my-pkg": warm.Dist("my-pkg", "1.2", ("_speed", "helper", "my_pkg"), True, ("console_scripts", "torch.backends"))
    }


def test_prestart_starts_the_server_a_probe_then_forks_from(kb, house, monkeypatch):
    """Ahead of a probe: its environment is built and its server started; the probe then starts no other."""
    from xlakb.runner import prestart

    monkeypatch.setenv("XLAKB_WARM", "1")
    fake_record(kb)
    record, cand, backend = load_record(kb, "fake-bug"), release("2.5.1"), UvBackend()
    prestart(record, cand, backend, find_links=(str(house),), index_url="none")
    assert warm.pool().started == 1
    res = probe(record, cand, backend, find_links=(str(house),), index_url="none")
    assert (res.start, res.verdict.value, warm.pool().started) == ("warm", "reproduced", 1)


def test_a_batch_starts_the_next_releases_server_while_this_ones_probes_run(kb, house, monkeypatch, tmp_path):
    """Each release after the first is prestarted once, when the batch reaches the release before it, and not
    when what it would probe first is in the verdict cache already."""
    from xlakb.executors import LocalExecutor
    from xlakb.matrix import run_batch
    from xlakb.runner import VerdictCache

    monkeypatch.setenv("XLAKB_WARM", "1")
    fake_record(kb)
    fake_record(kb, "fake-other")
    asked = []

    class Recording(LocalExecutor):
        def prestart(self, task, backend, *, progress=None):
            asked.append((task.record.id, task.candidate.label))
            super().prestart(task, backend, progress=progress)

    pairs = [(load_record(kb, rid), release(v)) for rid in ("fake-bug", "fake-other") for v in ("2.4.0", "2.5.1", "2.6.0")]
    cache = VerdictCache(tmp_path / "verdicts")
    results = run_batch(pairs, UvBackend(), executor=Recording(2), cache=cache, find_links=(str(house),), index_url="none")
    assert asked == [("fake-bug", "2.5.1"), ("fake-bug", "2.6.0")]
    assert [r.verdict.value for r in results] == ["reproduced", "reproduced", "not-reproduced"] * 2
    assert {r.start for r in results} == {"warm"} and warm.pool().started == 3  # one server per release
    asked.clear()
    run_batch(pairs, UvBackend(), executor=Recording(2), cache=cache, find_links=(str(house),), index_url="none")
    assert asked == []
