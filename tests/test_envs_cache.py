"""The environment cache as a whole: list, prune (least recently used first, never in use), size cap.

Real uv virtualenvs built from fake wheels; a second process holds an environment in use."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fakewheels import fake_record
from xlakb.candidates.releases import release
from xlakb.envs import EnvSpec, cache_dir
from xlakb.envs.cache import Entry, disk_usage, parse_age, parse_size, plan_prune
from xlakb.envs.uv import LAST_USED, UvBackend
from xlakb.errors import XlakbError
from xlakb.progress import RecordingProgress
from xlakb.records import load_record
from xlakb.runner import Verdict, probe

DAY = 86400.0


def entry(key, size, age_days, in_use=False, kind="env"):
    return Entry("uv", key, kind, key, size, 1_000_000.0 - age_days * DAY, in_use, f"/x/{key}")


# -- the pure planner ------------------------------------------------------------------------
def test_plan_least_recently_used_first_never_in_use():
    now = 1_000_000.0
    es = [entry("new", 10, 1), entry("old", 10, 40), entry("mid", 10, 10), entry("busy", 10, 90, in_use=True)]
    assert [e.key for e in plan_prune(es, older_than=30 * DAY, now=now)] == ["old"]
    assert [e.key for e in plan_prune(es, max_size=25, now=now)] == ["old", "mid"]  # 40 -> 20: busy is never removed
    assert [e.key for e in plan_prune(es, max_size=0, now=now)] == ["old", "mid", "new"]
    assert [e.key for e in plan_prune(es, max_size=0, now=now, keep=["new"])] == ["old", "mid"]
    assert plan_prune(es, max_size=40, now=now) == []
    assert [e.key for e in plan_prune(es, remove_all=True, now=now)] == ["old", "mid", "new"]
    partial = entry("half", 5, 0, kind="partial")
    assert [e.key for e in plan_prune(es + [partial], older_than=30 * DAY, now=now)] == ["old", "half"]


@pytest.mark.parametrize(
    "text,value",
    [("40G", 40 << 30), ("512M", 512 << 20), ("1.5T", int(1.5 * (1 << 40))), ("100", 100), ("2GiB", 2 << 30), ("7k", 7 << 10)],
)
def test_parse_size(text, value):
    assert parse_size(text) == value


def test_parse_bad_size_and_age_name_the_value():
    with pytest.raises(XlakbError, match="size 'lots' is not understood"):
        parse_size("lots")
    with pytest.raises(XlakbError, match="age '30 days' is not understood"):
        parse_age("30 days")
    assert parse_age("30d") == 30 * DAY and parse_age("12h") == 12 * 3600 and parse_age("2w") == 14 * DAY


def test_hard_links_are_counted_once(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "big").write_bytes(os.urandom(1 << 20))
    os.link(tmp_path / "a" / "big", tmp_path / "b" / "big")
    seen: set = set()
    first, second = disk_usage(tmp_path / "a", seen), disk_usage(tmp_path / "b", seen)
    assert first >= 1 << 20 and second < 64 << 10  # the linked file is charged to the first folder only
    assert disk_usage(tmp_path) < 2 * (1 << 20)


# -- real environments --------------------------------------------------------------------------
def spec_for(house, version):
    return EnvSpec("3.11", (f"torch_xla=={version}", f"torch=={version}"), (str(house),), "none")


def _build(house, versions, ages_days):
    backend = UvBackend()
    now = time.time()
    keys = {}
    for version, age in zip(versions, ages_days):
        prepared = backend.ensure(spec_for(house, version))
        stamp = now - age * DAY
        os.utime(Path(prepared.location) / LAST_USED, (stamp, stamp))
        keys[version] = prepared.key
    return backend, keys


def _xlakb(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "xlakb", *args], capture_output=True, text=True, env={**os.environ, **(env or {})}
    )


def test_env_list_shows_key_holdings_size_and_last_use(wheelhouse):
    backend, keys = _build(wheelhouse, ["2.5.1", "2.6.0"], [3, 0])
    r = _xlakb("env", "list", "--runner", "uv")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split()[:3] == ["uv", keys["2.6.0"], "env"] and "torch==2.6.0 torch_xla==2.6.0" in lines[0]
    assert "3 d ago" in lines[1] and keys["2.5.1"] in lines[1]
    assert lines[-1].startswith("2 environment(s),") and str(cache_dir() / "envs") in lines[-1]
    data = json.loads(_xlakb("env", "list", "--runner", "uv", "--json").stdout)
    assert {d["key"] for d in data} == set(keys.values()) and all(d["size"] > 0 for d in data)


def test_prune_older_than_and_max_size(wheelhouse):
    backend, keys = _build(wheelhouse, ["2.5.0", "2.5.1", "2.6.0"], [60, 10, 0])
    r = _xlakb("env", "prune", "--older-than", "30d", "--runner", "uv")
    assert r.returncode == 0, r.stderr
    assert f"removed uv {keys['2.5.0']}" in r.stdout and not (backend.root / keys["2.5.0"]).exists()
    assert (backend.root / keys["2.5.1"]).exists()
    sizes = {e.key: e.size for e in backend.entries()}
    dry = _xlakb("env", "prune", "--max-size", str(sizes[keys["2.6.0"]] + 1), "--dry-run", "--runner", "uv")
    assert f"would remove uv {keys['2.5.1']}" in dry.stdout and keys["2.6.0"] not in dry.stdout
    assert (backend.root / keys["2.5.1"]).exists()  # a dry run removes nothing
    assert _xlakb("env", "prune", "--max-size", str(sizes[keys["2.6.0"]] + 1), "--runner", "uv").returncode == 0
    assert {e.key for e in backend.entries()} == {keys["2.6.0"]}


def test_prune_needs_a_criterion_and_bad_values_are_one_line():
    r = _xlakb("env", "prune", "--runner", "uv")
    assert r.returncode == 1 and "say what to prune" in r.stderr and "--max-size" in r.stderr
    r = _xlakb("env", "prune", "--max-size", "huge", "--runner", "uv")
    assert r.returncode == 1 and r.stderr.strip() == "xlakb: error: size 'huge' is not understood (hint: e.g. 40G, 512M, 1.5T)"


def test_an_environment_in_use_is_never_removed(wheelhouse):
    """Another process holds the oldest environment in use (as a running probe does): prune skips it."""
    backend, keys = _build(wheelhouse, ["2.5.0", "2.6.0"], [90, 0])
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"""
import sys, time
from pathlib import Path
from xlakb.envs.cache import in_use
with in_use(Path({str(backend.cache)!r}), "uv", [{keys["2.5.0"]!r}]):
    print("holding", flush=True)
    time.sleep(60)
""",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "holding"
        listed = _xlakb("env", "list", "--runner", "uv").stdout
        assert "[in use]" in next(ln for ln in listed.splitlines() if keys["2.5.0"] in ln)
        r = _xlakb("env", "prune", "--all", "--runner", "uv")
        assert r.returncode == 0, r.stderr
        assert (backend.root / keys["2.5.0"]).exists() and not (backend.root / keys["2.6.0"]).exists()
        assert "1 in use, never removed" in r.stdout
        assert backend.remove(keys["2.5.0"]) is False  # not even when asked by key
    finally:
        holder.kill()
        holder.wait()
    assert backend.remove(keys["2.5.0"]) is True


def test_size_cap_kept_by_the_cache_itself(kb, wheelhouse, monkeypatch):
    """With XLAKB_CACHE_MAX_SIZE set, building a new environment removes the least recently used ones."""
    backend, keys = _build(wheelhouse, ["2.5.0", "2.5.1"], [5, 1])
    one = max(e.size for e in backend.entries())
    monkeypatch.setenv("XLAKB_CACHE_MAX_SIZE", str(int(one * 2.5)))
    fake_record(kb)
    progress = RecordingProgress()
    res = probe(
        load_record(kb, "fake-bug"), release("2.6.0"), backend, find_links=(str(wheelhouse),), index_url="none", progress=progress
    )
    assert res.verdict is Verdict.NOT_REPRODUCED
    left = {e.key for e in backend.entries()}
    assert keys["2.5.0"] not in left and keys["2.5.1"] in left and res.env_key in left
    assert any(e[0] == "info" and "over its cap" in e[1] for e in progress.events)
    monkeypatch.setenv("XLAKB_CACHE_MAX_SIZE", "a lot")
    with pytest.raises(XlakbError, match="XLAKB_CACHE_MAX_SIZE='a lot'"):
        probe(load_record(kb, "fake-bug"), release("2.6.0"), backend, find_links=(str(wheelhouse),), index_url="none")


def test_probe_holds_its_environment_in_use(kb, wheelhouse):
    fake_record(kb)
    backend = UvBackend()
    seen = {}
    real_run = backend.run

    def run(prepared, *a, **kw):
        seen["busy"] = [e.in_use for e in backend.entries() if e.key == prepared.key]
        return real_run(prepared, *a, **kw)

    backend.run = run
    probe(load_record(kb, "fake-bug"), release("2.5.1"), backend, find_links=(str(wheelhouse),), index_url="none")
    assert seen["busy"] == [True]
    assert [e.in_use for e in backend.entries()] == [False]


def test_probes_in_threads_keep_the_cap_together(wheelhouse):
    """Probes running in threads of one process (-j 2) each keep the cap after building: they must not list
    an environment another is removing, nor remove one twice (xlakb mine met both)."""
    from threads import at_once
    from xlakb.envs.cache import enforce_cap
    from xlakb.progress import NullProgress

    for _ in range(3):
        backend, _keys = _build(wheelhouse, ["2.5.0", "2.5.1", "2.6.0", "2.7.0"], [4, 3, 2, 1])
        assert at_once(lambda: enforce_cap(backend, 1, keep=(), progress=NullProgress())) == []
        assert backend.entries() == []
