"""Bisecting nightlies end to end (a real HTTP server on 127.0.0.1 serving fake wheels by date),
and narrowing releases -> nightlies -> commits (``xlakb bisect --narrow``)."""

from __future__ import annotations

import datetime as _dt
import json
import math
import shutil
import subprocess
import sys

import pytest

from fakewheels import build_wheel, fake_record
from fakexla import BASE_OLD, CULPRIT, FakeHistory, NightlyServer, publish_nightly, torch_wheel
from xlakb.bisection import Context, Options
from xlakb.bisection.narrow import NarrowStopped, narrow
from xlakb.candidates.nightlies import ENV_TORCH_URL, ENV_TORCH_XLA_URL, NightlySource, list_nightlies
from xlakb.envs import cache_dir
from xlakb.envs.uv import UvBackend
from xlakb.progress import RecordingProgress
from xlakb.records import load_record
from xlakb.runner import Verdict

JAN = [_dt.date(2025, 1, d) for d in range(10, 25)]  # served: 2025-01-10 .. 2025-01-24
FIRST_BAD = _dt.date(2025, 1, 16)
NO_NIGHTLY, NO_TORCH = _dt.date(2025, 1, 15), _dt.date(2025, 1, 12)
NEXT_VERSION = {_dt.date(2025, 1, 23), _dt.date(2025, 1, 24)}  # published as 2.8.0 only (after a version bump)


@pytest.fixture(autouse=True)
def _hermetic(monkeypatch):
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.delenv(ENV_TORCH_XLA_URL, raising=False)
    monkeypatch.delenv(ENV_TORCH_URL, raising=False)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """Nightlies 2025-01-10..24; the bug is in every nightly from 2025-01-16; 01-15 has no wheels,
    01-12 no torch wheel; 01-23 and 01-24 exist as 2.8.0 only."""
    house = tmp_path_factory.mktemp("nightly-house")
    server = NightlyServer()

    def wheel_of(day):
        bug = "present" if day >= FIRST_BAD else "none"
        return lambda dest, version, tag: build_wheel(
            dest, "torch_xla", version, {"torch_xla/__init__.py": f"__version__ = {version!r}\nBUG = {bug!r}\n"}, tag=tag
        )

    for day in JAN:
        if day != NO_NIGHTLY:
            publish_nightly(server, house, day, "2.8.0" if day in NEXT_VERSION else "2.7.0", wheel_of(day), torch=day != NO_TORCH)
    yield server
    server.close()


def cli(kb, *args, check=True):
    r = subprocess.run([sys.executable, "-m", "xlakb", "--root", str(kb), "bisect", *args], capture_output=True, text=True)
    if check:
        assert r.returncode == 0, r.stderr[-3000:]
    return r


def nightly_args(server):
    return [
        "--source",
        "nightlies",
        "--nightly-version",
        "2.7.0",
        "--nightly-version",
        "2.8.0",
        "--torch-xla-url",
        server.torch_xla_url,
        "--torch-url",
        server.torch_url,
        "--runner",
        "uv",
        "--index-url",
        "none",
    ]


def test_cli_names_the_first_bad_nightly_and_downloads_once(kb, site):
    fake_record(kb)
    before = site.wheel_gets()
    r = cli(kb, "fake-bug", "--start", "2025-01-08", "--end", "2025-01-26", *nightly_args(site))
    assert (
        "The change (introduced) is in nightly 2025-01-16: nightly 2025-01-14 is not-reproduced, nightly 2025-01-16 is reproduced."
        in r.stdout
    )
    assert "no nightly wheel for 6 day(s): 2025-01-08, 2025-01-09, 2025-01-12, 2025-01-15, 2025-01-25 ... 2025-01-26" in r.stderr
    assert "downloading torch_xla-2.7.0.dev20250116-cp311-cp311-linux_x86_64.whl" in r.stderr
    assert "downloading torch-2.7.0.dev20250116+cpu-cp311-cp311-manylinux_2_28_x86_64.whl" in r.stderr
    data = json.loads(next((kb / "bisect" / "fake-bug").glob("bisect-nightlies-*.json")).read_text())
    assert data["exact"] and data["direction"] == "introduced" and data["range"]["count"] == 13
    assert data["first_new"]["meta"]["date"] == "2025-01-16" and data["last_old"]["meta"]["date"] == "2025-01-14"
    assert data["first_new"]["meta"]["torch_xla_version"] == "2.7.0.dev20250116"
    assert data["range"]["last"] == "nightly 2025-01-24"  # found under the second version
    assert data["probes_run"] == len(data["probes"]) <= math.ceil(math.log2(13)) + 2
    assert {p["torch_xla"] for p in data["probes"]} >= {
        "torch_xla-2.7.0.dev20250116-cp311-cp311-linux_x86_64.whl",
        "torch_xla-2.8.0.dev20250124-cp311-cp311-linux_x86_64.whl",
    }
    got = site.wheel_gets() - before
    assert got and set(got.values()) == {1}, got  # each wheel fetched once
    probed = {p["candidate"].split()[1].replace("-", "") for p in data["probes"]}
    fetched = {path.split(".dev")[1][:8] for path in got}
    assert probed <= fetched and "20250115" not in fetched and "20250112" not in fetched

    # again, without the saved progress: the verdict cache answers, nothing is downloaded
    shutil.rmtree(cache_dir() / "bisect-state")
    before = site.wheel_gets()
    r = cli(kb, "fake-bug", "--start", "2025-01-08", "--end", "2025-01-26", *nightly_args(site))
    assert "(0 run now, uv runner)" in r.stdout and "downloading" not in r.stderr
    assert site.wheel_gets() == before
    assert (
        json.loads(next((kb / "bisect" / "fake-bug").glob("bisect-nightlies-*.json")).read_text())["first_new"]["label"]
        == "nightly 2025-01-16"
    )


def test_vanished_wheel_is_stepped_around(kb, site):
    """A nightly listed but gone when its probe downloads it is untestable; the search goes around it."""
    fake_record(kb)
    cands = list_nightlies(
        "2025-01-10", "2025-01-24", versions=["2.7.0", "2.8.0"], torch_xla_url=site.torch_xla_url, torch_url=site.torch_url
    )
    assert [c.meta["date"] for c in cands][6] == "2025-01-18"  # the first midpoint
    gone = "/xla/torch_xla-2.7.0.dev20250118-cp311-cp311-linux_x86_64.whl"
    data = site.files.pop(gone)
    try:
        progress = RecordingProgress()
        ctx = Context(
            load_record(kb, "fake-bug"), UvBackend(), progress=progress, options=Options(index_url="none", prepare_ahead=False)
        )
        eng = ctx.engine(NightlySource(ctx))
        rep = eng.run(cands, source="nightlies")
    finally:
        site.files[gone] = data
    verdicts = {p.candidate: p for p in rep.probes}
    assert verdicts["nightly 2025-01-18"].verdict is Verdict.UNTESTABLE and "no build" in verdicts["nightly 2025-01-18"].detail
    assert rep.exact and rep.first_new_candidate.label == "nightly 2025-01-16"
    assert any(e[0] == "download" for e in progress.events)


# ---------------------------------------------------------------------------------- narrowing
@pytest.fixture(scope="module")
def narrowing(tmp_path_factory):
    """Releases 2.5.0/2.5.1 (no bug) and 2.6.0/2.6.1 (bug) built from the fake history; nightlies
    2024-11-02..11 built from it (the last commit before each day), 11-08 missing, 11-04 without
    torch, 11-10 and 11-11 published as 2.7.0 (main after the 2.6 branch cut)."""
    root = tmp_path_factory.mktemp("narrow")
    hist = FakeHistory(root)
    house = root / "house"
    for version, at in (("2.5.0", 0), ("2.5.1", BASE_OLD), ("2.6.0", 20), ("2.6.1", 21)):
        hist.torch_xla_wheel(house, version, at)
        torch_wheel(house, {"2.6.1": "2.6.0"}.get(version, version))
    server = NightlyServer()
    nightly_house = root / "nightly-house"
    served = {}
    for d in range(2, 12):
        day = _dt.date(2024, 11, d)
        if d == 8:
            continue
        at = hist.nightly_index(day)
        served[day.isoformat()] = at
        publish_nightly(
            server,
            nightly_house,
            day,
            "2.7.0" if d >= 10 else "2.6.0",
            lambda dest, version, tag, at=at: hist.torch_xla_wheel(dest, version, at, tag=tag),
            torch=d != 4,
        )
    yield hist, house, server, served
    server.close()


def test_narrow_goes_from_releases_to_nightlies_to_the_commit(kb, narrowing):
    hist, house, server, served = narrowing
    fake_record(kb)
    common = [
        "fake-bug",
        "--narrow",
        "--start",
        "2.5.0",
        "--end",
        "2.6.1",
        "--runner",
        "uv",
        "--find-links",
        str(house),
        "--index-url",
        "none",
        "--torch-xla-url",
        server.torch_xla_url,
        "--torch-url",
        server.torch_url,
    ]
    r = cli(kb, *common, "--repo", str(hist.path))
    out = kb / "bisect" / "fake-bug"
    rel = json.loads(next((out).glob("bisect-releases-*.json")).read_text())
    night = json.loads(next((out).glob("bisect-nightlies-*.json")).read_text())
    com = json.loads(next((out).glob("bisect-commits-*.json")).read_text())
    assert (rel["last_old"]["label"], rel["first_new"]["label"], rel["exact"]) == ("2.5.1", "2.6.0", True)
    # nightlies between the releases' dates, versions 2.6.0 then 2.7.0
    assert night["range"] == {"first": "nightly 2024-11-02", "last": "nightly 2024-11-11", "count": 8}
    assert (night["last_old"]["label"], night["first_new"]["label"], night["exact"]) == (
        "nightly 2024-11-07",
        "nightly 2024-11-09",
        True,
    )
    assert "checking nightly 2024-10-31" in r.stderr and "checking nightly 2025-01-30" in r.stderr
    # commits between the gitrevs of those two nightlies, laid over them
    lo, hi = served["2024-11-07"], served["2024-11-09"]
    assert com["range"] == {"first": hist.label(lo), "last": hist.label(hi), "count": hi - lo + 1}
    assert com["exact"] and com["first_new"]["meta"]["sha"] == hist.sha[CULPRIT] and com["first_new"]["meta"]["pr"] == 112
    assert com["first_new"]["meta"]["base"] in ("nightly 2024-11-07", "nightly 2024-11-09")
    assert {p["torch_xla"] for p in com["probes"]} <= {
        "torch_xla-2.6.0.dev20241107-cp311-cp311-linux_x86_64.whl",
        "torch_xla-2.6.0.dev20241109-cp311-cp311-linux_x86_64.whl",
    }
    assert com["confidence"] == "high" and all(d["direction"] == "introduced" for d in (rel, night, com))
    assert r.stdout.count("The change (introduced) is in") == 3 and "Cache sharding specs by list (#112)" in r.stdout
    assert f"was built from {hist.sha[lo][:12]}" in r.stderr

    # the commit stage is the plain commit bisection over nightly bases: same answer, nothing to run again
    r = cli(
        kb,
        "fake-bug",
        "--source",
        "commits",
        "--repo",
        str(hist.path),
        "--start",
        hist.sha[lo],
        "--end",
        hist.sha[hi],
        "--base",
        "nightly:2024-11-07",
        "--base",
        "nightly:2024-11-09",
        "--nightly-version",
        "2.6.0",
        "--torch-xla-url",
        server.torch_xla_url,
        "--torch-url",
        server.torch_url,
        "--runner",
        "uv",
        "--index-url",
        "none",
        "--find-links",
        str(house),
        "--no-save",
    )
    assert f"The change (introduced) is in {hist.label(CULPRIT)}" in r.stdout and "(0 run now" in r.stdout

    # without --repo it stops, as asked, after the nightlies (all cached now: no probe runs)
    r = cli(kb, *common, "--no-save")
    assert r.stdout.count("(0 run now") == 2 and "no --repo given: narrowing stopped at nightlies" in r.stdout

    # nightlies that do not bracket the change stop it with what was found so far
    r = cli(kb, *common, "--nightly-version", "2.7.0", "--repo", str(hist.path), check=False)
    assert r.returncode == 1
    assert (
        "narrowing stopped at nightlies 2024-10-31 .. 2025-01-30 (versions 2.7.0): the ends do not bracket a change: "
        "nightly 2024-11-10 and nightly 2024-11-11 are both reproduced; found so far: releases: introduced in 2.6.0 "
        "(2.5.1 not-reproduced, 2.6.0 reproduced)"
    ) in r.stderr
    assert "The change (introduced) is in 2.6.0" in r.stdout

    # the library function says the same and hands back the finished stage
    rec = load_record(kb, "fake-bug")
    with pytest.raises(NarrowStopped, match="ends do not bracket") as err:
        narrow(
            Context(rec, UvBackend(), options=Options(find_links=(str(house),), index_url="none")),
            {"nightly_version": ["2.7.0"], "torch_xla_url": server.torch_xla_url, "torch_url": server.torch_url},
            start="2.5.0",
            end="2.6.1",
        )
    assert [r.source for r in err.value.reports] == ["releases"] and err.value.reports[0].probes_run == 0


def test_a_script_narrows_from_releases_to_the_commit_like_a_record(kb, narrowing, tmp_path):
    """`bisect --script --narrow` walks the same chain as a record (releases, then nightlies, then the commits
    laid over them) and names the same PR; its report goes where --report says, never into bisect/."""
    from fakewheels import FAKE_REPRODUCER

    hist, house, server, served = narrowing
    script = tmp_path / "repro.py"
    script.write_text(FAKE_REPRODUCER)
    report = tmp_path / "narrow.json"
    r = cli(
        kb,
        "--script",
        str(script),
        "--match",
        "unhashable type",
        "--narrow",
        "--start",
        "2.5.0",
        "--end",
        "2.6.1",
        "--repo",
        str(hist.path),
        "--runner",
        "uv",
        "--find-links",
        str(house),
        "--index-url",
        "none",
        "--torch-xla-url",
        server.torch_xla_url,
        "--torch-url",
        server.torch_url,
        "--report",
        str(report),
    )
    assert "Cache sharding specs by list (#112)" in r.stdout, r.stdout[-2000:]
    saved = report.read_text()
    assert hist.sha[CULPRIT][:10] in saved and "112" in saved
    assert not any((kb / "bisect").iterdir())  # a script's bisection is the user's, not a record's
