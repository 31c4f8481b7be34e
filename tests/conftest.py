"""Shared fixtures. Every test gets its own xlakb and uv caches: none touches the user's."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fakewheels import fake_torch, fake_torch_xla  # noqa: E402
from keptcache import kept_test_cache  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _private_caches(tmp_path_factory, monkeypatch, request):
    """Point XLAKB_CACHE_DIR (and uv's cache, for hermetic tests) at temporary folders, removed after the test.

    The real-wheel suites share one uv cache across tests and runs (``kept_test_cache()/uv``), never the user's;
    the environments a test builds (gigabytes with real torch) go with the test."""
    cache = tmp_path_factory.mktemp("xlakb-cache")
    monkeypatch.setenv("XLAKB_CACHE_DIR", str(cache))
    if request.node.get_closest_marker("realwheels"):
        monkeypatch.setenv("UV_CACHE_DIR", str(kept_test_cache() / "uv"))
    else:
        monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "uv-cache"))
    monkeypatch.setenv("UV_PYTHON_DOWNLOADS", "never")
    monkeypatch.delenv("XLAKB_ROOT", raising=False)
    monkeypatch.delenv("XLAKB_CACHE_MAX_SIZE", raising=False)
    yield
    from xlakb.envs import warm

    warm.close_pool()  # a test's warm servers (and their containers) end with it
    shutil.rmtree(cache, ignore_errors=True)


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory) -> Path:
    """Fake releases: bug absent in 2.1-2.3 (API missing in 2.1), present in 2.4-2.5.1, fixed from 2.6."""
    house = tmp_path_factory.mktemp("wheelhouse")
    behaviour = {
        "2.1.0": "missing-api",
        "2.2.0": "none",
        "2.3.0": "none",
        "2.4.0": "present",
        "2.5.0": "present",
        "2.5.1": "present",
        "2.6.0": "none",
        "2.6.1": "none",
        "2.7.0": "none",
        "2.8.0": "none",
        "2.8.1": "none",
        "2.9.0": "none",
    }
    torches = {"2.6.1": "2.6.0", "2.8.1": "2.8.0"}
    for version, bug in behaviour.items():
        fake_torch_xla(house, version, bug=bug)
        fake_torch(house, torches.get(version, version))
    # pins the oldest releases ask for in data/releases.yaml
    from fakewheels import build_wheel

    build_wheel(house, "numpy", "1.26.4", {"numpy/__init__.py": "__version__ = '1.26.4'\n"})
    build_wheel(house, "setuptools", "69.5.1", {"setuptools/__init__.py": "__version__ = '69.5.1'\n"})
    return house


@pytest.fixture
def kb(tmp_path) -> Path:
    """An empty knowledge-base checkout layout in a temp dir."""
    for d in ("issues", "reproducers", "bisect"):
        (tmp_path / d).mkdir()
    return tmp_path


@pytest.fixture
def repo_copy(tmp_path) -> Path:
    """A copy of this repository's records, reproducers and results to change freely."""
    dest = tmp_path / "repo"
    for d in ("issues", "reproducers", "bisect"):
        if (REPO / d).exists():
            shutil.copytree(REPO / d, dest / d)
        else:
            (dest / d).mkdir(parents=True)
    return dest
