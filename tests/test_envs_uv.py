"""The uv environment cache, against real uv virtualenvs built from fake wheels."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from xlakb.envs import EnvSpec, cache_dir, get_backend
from xlakb.envs.uv import MARKER, UvBackend
from xlakb.errors import XlakbError
from xlakb.progress import RecordingProgress


def spec_for(house, version="2.5.1", extra=()):
    return EnvSpec("3.11", (f"torch_xla=={version}", f"torch=={version}", *extra), (str(house),), "none")


def test_cache_dir_honours_env(tmp_path, monkeypatch):
    monkeypatch.setenv("XLAKB_CACHE_DIR", str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c"
    monkeypatch.delenv("XLAKB_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert cache_dir() == tmp_path / "x" / "xlakb"


def test_key_is_exactly_what_is_installed(wheelhouse):
    a = spec_for(wheelhouse)
    assert a.key() == EnvSpec("3.11", ("torch==2.5.1", "torch_xla==2.5.1"), (str(wheelhouse),), "none").key()
    assert a.key() != spec_for(wheelhouse, extra=("numpy<2",)).key()
    assert a.key() != spec_for(wheelhouse, "2.5.0").key()
    assert a.key() != EnvSpec("3.10", a.requirements, a.find_links, "none").key()


def test_build_then_reuse_fast(wheelhouse):
    backend = UvBackend()
    progress = RecordingProgress()
    first = backend.ensure(spec_for(wheelhouse), progress)
    assert any(e[0] == "info" and "creating virtualenv" in e[1] for e in progress.events)
    marker = json.loads((Path(first.location) / MARKER).read_text())
    assert marker["key"] == first.key
    out = subprocess.run(
        [first.python, "-c", "import torch_xla, torch; print(torch_xla.__version__, torch.__version__)"],
        capture_output=True,
        text=True,
    )
    assert out.stdout.split() == ["2.5.1", "2.5.1"]
    start = time.perf_counter()
    again = backend.ensure(spec_for(wheelhouse), RecordingProgress())
    assert time.perf_counter() - start < 0.5
    assert again.location == first.location


def test_half_built_environment_is_removed_not_used(wheelhouse):
    backend = UvBackend()
    spec = spec_for(wheelhouse)
    where = backend.path_for(spec)
    (where / "venv" / "bin").mkdir(parents=True)
    (where / "venv" / "bin" / "python").write_text("not a python")
    assert backend.cached(spec) is None
    progress = RecordingProgress()
    prepared = backend.ensure(spec, progress)
    assert any("half-built" in e[1] for e in progress.events if e[0] == "info")
    assert subprocess.run([prepared.python, "-c", "import torch_xla"]).returncode == 0


def test_failed_install_leaves_nothing(wheelhouse):
    backend = UvBackend()
    spec = spec_for(wheelhouse, "9.9.9")
    with pytest.raises(XlakbError, match="torch.*9.9.9|9.9.9"):
        backend.ensure(spec)
    assert not backend.path_for(spec).exists()


def test_interrupted_build_is_not_reused(wheelhouse, tmp_path):
    """Kill a build mid-way (SIGKILL: no cleanup runs), then ask again: rebuilt, healthy."""
    code = f"""
import sys, time
sys.path.insert(0, {str(Path(__file__).parent)!r})
from xlakb.envs import EnvSpec
from xlakb.envs import uv as uvmod
real = uvmod.UvBackend._health_check
def slow(self, spec, where):
    print("BUILDING", flush=True); time.sleep(60)
uvmod.UvBackend._health_check = slow
uvmod.UvBackend().ensure(EnvSpec("3.11", ("torch_xla==2.4.0", "torch==2.4.0"), ({str(wheelhouse)!r},), "none"))
"""
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=os.environ.copy())
    assert child.stdout.readline().strip() == "BUILDING"
    child.send_signal(signal.SIGKILL)
    child.wait()
    backend = UvBackend()
    spec = EnvSpec("3.11", ("torch_xla==2.4.0", "torch==2.4.0"), (str(wheelhouse),), "none")
    assert backend.path_for(spec).exists() and backend.cached(spec) is None
    prepared = backend.ensure(spec)
    assert (Path(prepared.location) / MARKER).exists()


def test_concurrent_requests_build_once(wheelhouse):
    spec = spec_for(wheelhouse, "2.6.0")
    results, builds = [], []
    original = UvBackend._build

    def counting(self, *a, **k):
        builds.append(1)
        return original(self, *a, **k)

    UvBackend._build = counting
    try:
        threads = [threading.Thread(target=lambda: results.append(UvBackend().ensure(spec))) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        UvBackend._build = original
    assert len(builds) == 1 and len({r.location for r in results}) == 1


def test_health_check_catches_wrong_version(tmp_path):
    """A wheelhouse whose torch_xla wheel lies about its version fails the health check."""
    from fakewheels import build_wheel, fake_torch

    house = tmp_path / "house"
    fake_torch(house, "2.5.1")
    build_wheel(house, "torch_xla", "2.5.1", {"torch_xla/__init__.py": ""})
    spec = EnvSpec("3.11", ("torch_xla==2.5.1", "torch==2.5.1"), (str(house),), "none")
    backend = UvBackend()
    original = UvBackend._health_check

    def tamper(self, spec, where):
        site = next((where / "venv" / "lib").glob("python*/site-packages"))
        meta = next(site.glob("torch_xla-*.dist-info")) / "METADATA"
        meta.write_text(meta.read_text().replace("Version: 2.5.1", "Version: 2.5.0"))
        return original(self, spec, where)

    UvBackend._health_check = tamper
    try:
        with pytest.raises(XlakbError, match="torch-xla is 2.5.0, wanted 2.5.1"):
            backend.ensure(spec)
    finally:
        UvBackend._health_check = original
    assert not backend.path_for(spec).exists()


def test_unknown_runner():
    with pytest.raises(XlakbError, match="unknown runner 'podman'"):
        get_backend("podman")
