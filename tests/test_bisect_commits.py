"""Bisecting commits end to end: a real git history, fake wheels built at known commits as
bases, overlays in real uv environments, the CLI and the library."""

from __future__ import annotations

import json
import math
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from fakewheels import FAKE_REPRODUCER, fake_record
from fakexla import BASE_NEW, BASE_OLD, CULPRIT, CULPRIT2, FIX, NATIVE, SKIP, FakeHistory, torch_wheel
from xlakb.bisection import Context, Options
from xlakb.candidates.commits import CommitSource, list_commits
from xlakb.candidates.releases import release
from xlakb.envs import cache_dir
from xlakb.envs.uv import UvBackend
from xlakb.progress import RecordingProgress
from xlakb.records import load_record
from xlakb.runner import Verdict, VerdictCache, env_spec

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def xla(tmp_path_factory):
    """The fake history, and a wheelhouse where 2.5.1 was built at commit 2 and 2.6.0 at commit 26."""
    root = tmp_path_factory.mktemp("fakexla")
    hist = FakeHistory(root)
    house = root / "house"
    hist.torch_xla_wheel(house, "2.5.1", BASE_OLD)
    hist.torch_xla_wheel(house, "2.6.0", BASE_NEW)
    torch_wheel(house, "2.5.1")
    torch_wheel(house, "2.6.0")
    return hist, house


def cli(kb, *args, check=True):
    r = subprocess.run([sys.executable, "-m", "xlakb", "--root", str(kb), "bisect", *args], capture_output=True, text=True)
    if check:
        assert r.returncode == 0, r.stderr[-3000:]
    return r


def commit_args(hist, house, record="fake-bug", *bases):
    return [
        record,
        "--source",
        "commits",
        "--repo",
        str(hist.path),
        *[a for b in (bases or ("2.5.1", "2.6.0")) for a in ("--base", b)],
        "--runner",
        "uv",
        "--find-links",
        str(house),
        "--index-url",
        "none",
    ]


def report(kb, record="fake-bug"):
    return json.loads(next((kb / "bisect" / record).glob("bisect-commits-*.json")).read_text())


def bound(n: int) -> int:
    return math.ceil(math.log2(n)) + 2


def library_run(kb, hist, house, start, end, *, record="fake-bug", bases=("2.5.1", "2.6.0"), cache=None, state_root=None):
    rec = load_record(kb, record)
    options = Options(find_links=(str(house),), index_url="none", command="test", prepare_ahead=False)
    progress = RecordingProgress()
    backend = UvBackend()
    ctx = Context(rec, backend, progress=progress, options=options, cache=cache, state_root=state_root)
    resolver = CommitSource(ctx, hist.path, [release(b) for b in bases])
    resolver.prepare()
    eng = ctx.engine(resolver)
    rep = eng.run(list_commits(hist.path, start, end), source="commits")
    resolver.finish(rep)
    return rep, resolver, eng


# ------------------------------------------------------------------------ the answers
def test_cli_names_the_introducing_and_the_fixing_commit(kb, xla):
    hist, house = xla
    fake_record(kb)
    r = cli(kb, *commit_args(hist, house), "--start", "#108", "--end", "#120")
    assert f"The change (introduced) is in {hist.label(CULPRIT)}: {hist.label(CULPRIT - 1)} is not-reproduced" in r.stdout
    assert "Culprit: Cache sharding specs by list (#112) https://github.com/pytorch/xla/pull/112" in r.stdout
    assert (
        f"2.5.1 was built from {hist.sha[BASE_OLD][:12]}" in r.stderr
        and f"2.6.0 was built from {hist.sha[BASE_NEW][:12]}" in r.stderr
    )
    data = report(kb)
    assert data["direction"] == "introduced" and data["exact"] and data["range"]["count"] == 13
    assert data["first_new"]["meta"]["sha"] == hist.sha[CULPRIT] and data["first_new"]["meta"]["pr"] == 112
    assert data["first_new"]["meta"]["python_only"] is True and data["first_new"]["meta"]["base"] == "2.5.1"
    assert data["last_old"]["meta"]["sha"] == hist.sha[CULPRIT - 1]
    assert data["between"] == [
        {
            "sha": hist.sha[CULPRIT],
            "subject": "Cache sharding specs by list (#112)",
            "pr": 112,
            "url": f"https://github.com/pytorch/xla/commit/{hist.sha[CULPRIT]}",
            "pr_url": "https://github.com/pytorch/xla/pull/112",
            "date": "2024-11-07T10:00:00+00:00",
            "python_only": True,
        }
    ]
    assert data["confidence"] == "high", data["confidence_reasons"]
    assert data["probes_run"] == len(data["probes"]) <= bound(13)
    # each commit ran over its nearest base: before the native change 2.5.1, from it on 2.6.0
    by_label = {hist.label(i): i for i in range(len(hist.sha))}
    for p in data["probes"]:
        assert p["torch_xla"] == ("2.5.1" if by_label[p["candidate"]] < NATIVE else "2.6.0"), p

    # the fix, with the range given by dates: the last commits of 2024-11-07 and 2024-11-15
    r = cli(kb, *commit_args(hist, house), "--start", "2024-11-07", "--end", "2024-11-15", "--no-prepare")
    data = report(kb)
    assert data["range"] == {"first": hist.label(13), "last": hist.label(29), "count": 17}
    assert data["direction"] == "fixed" and data["old_label"] == "reproduced" and data["exact"]
    assert data["first_new"]["meta"]["sha"] == hist.sha[FIX] and data["first_new"]["meta"]["pr_url"].endswith("/pull/122")
    assert data["last_old"]["label"] == hist.label(FIX - 1)
    assert data["confidence"] == "high" and data["probes_run"] <= bound(17)
    assert "Hash sharding specs as tuples (#122)" in r.stdout


def test_ranges_by_pr_tag_date_and_sha_name_the_same_commits(xla):
    hist, _ = xla
    by_pr = list_commits(hist.path, "#102", "#120")
    assert [c.meta["sha"] for c in by_pr] == hist.sha[BASE_OLD:21]
    assert list_commits(hist.path, "v2.5.1", "#120") == by_pr
    assert list_commits(hist.path, "2024-11-02", "2024-11-11") == list_commits(hist.path, "#103", "#121")
    assert list_commits(hist.path, hist.sha[BASE_OLD][:10], "pr:120") == by_pr
    merge = by_pr[6 - BASE_OLD]
    assert merge.meta["pr"] == 106 and merge.meta["subject"].startswith("Merge pull request #106")


def test_overlay_wins_over_the_installed_package(kb, xla):
    """A commit's Python on PYTHONPATH shadows the base's torch_xla in site-packages;
    the base's generated version.py and binary stay."""
    hist, house = xla
    fake_record(kb)
    rec = load_record(kb, "fake-bug")
    options = Options(find_links=(str(house),), index_url="none")
    backend = UvBackend()
    resolver = CommitSource(
        Context(rec, backend, progress=RecordingProgress(), options=options), hist.path, [release("2.5.1"), release("2.6.0")]
    )
    culprit = next(c for c in list_commits(hist.path, "#111", "#113") if c.meta["pr"] == 112)
    real = resolver.resolve(culprit)
    assert (real.torch_xla, real.meta["base"], real.meta["native_difference_count"]) == ("2.5.1", "2.5.1", 0)
    prepared = backend.ensure(env_spec(rec, real, find_links=options.find_links, index_url="none"), RecordingProgress())
    probe_script = kb / "where.py"
    probe_script.write_text(
        "import torch_xla, torch_xla.feature, os\n"
        "print(torch_xla.__file__, torch_xla.BUG, torch_xla.__xla_gitrev__)\n"
        "print(sorted(os.listdir(os.path.dirname(torch_xla.__file__))))\n"
    )
    out = backend.run(prepared, probe_script, env={"PATH": "/usr/bin:/bin"}, timeout=60, log_path=kb / "where.log")
    assert out.exit_code == 0, out.output
    first, listing = out.output.strip().splitlines()[-2:]
    path, bug, gitrev = first.split()
    assert path.startswith(str(Path(prepared.location) / "overlay" / "torch_xla"))
    assert bug == "present" and gitrev == hist.sha[BASE_OLD]  # the commit's Python, the base's version.py
    assert "_XLAC.cpython-311-x86_64-linux-gnu.so" in listing and "feature.py" in listing
    base = backend.ensure(env_spec(rec, release("2.5.1"), find_links=options.find_links, index_url="none"))
    out = backend.run(base, probe_script, env={"PATH": "/usr/bin:/bin"}, timeout=60, log_path=kb / "base.log")
    assert out.exit_code == 1 and "feature" in out.output  # the base itself (commit 2) has no feature.py


def test_native_differences_from_the_base_lower_confidence(kb, xla, tmp_path):
    """With only 2.5.1 (built before the C++ change) as base, every commit from #117 on runs
    over an older binary: the answer stands, the confidence drops and names the file.
    With both bases there is no such doubt, and a repeat costs nothing (verdict cache)."""
    hist, house = xla
    fake_record(kb)
    cache = VerdictCache(tmp_path / "vc")
    rep, resolver, _ = library_run(kb, hist, house, "#112", "#126", bases=("2.5.1",), cache=cache, state_root=tmp_path / "s")
    assert rep.exact and rep.first_new_candidate.meta["sha"] == hist.sha[FIX]
    assert rep.confidence != "high"
    native = [r for r in rep.confidence_reasons if "native file" in r]
    assert native and all("torch_xla/csrc/x.cpp" in r and "base build 2.5.1" in r for r in native), rep.confidence_reasons
    assert rep.first_new_candidate.meta["native_differences"] == ["torch_xla/csrc/x.cpp"]
    # the same range with both bases has no such doubt (and is another bisection: other builds)
    both, _, _ = library_run(kb, hist, house, "#112", "#126", cache=cache, state_root=tmp_path / "s")
    assert both.confidence == "high" and both.probes_run > 0 and not any("native file" in r for r in both.confidence_reasons)
    assert both.first_new_candidate.meta["sha"] == hist.sha[FIX]
    again, _, _ = library_run(kb, hist, house, "#112", "#126", cache=cache, state_root=tmp_path / "other-state")
    assert again.probes_run == 0 and all(p.cached for p in again.probes)
    assert again.first_new_candidate.label == both.first_new_candidate.label


def test_untestable_commit_is_stepped_around(kb, xla, tmp_path):
    """#107 exits 125 (API missing) and is the first midpoint of #101..#113."""
    hist, house = xla
    fake_record(kb)
    rep, _, _ = library_run(kb, hist, house, "#101", "#113", state_root=tmp_path / "s")
    verdicts = {p.candidate: p.verdict for p in rep.probes}
    assert verdicts[hist.label(SKIP)] is Verdict.UNTESTABLE
    assert rep.exact and rep.first_new_candidate.meta["sha"] == hist.sha[CULPRIT] and rep.confidence == "high"
    assert len(rep.probes) <= bound(13) + 1


def test_inexact_answer_lists_the_commits_in_between(kb, xla):
    """The second bug: #116 and #117 cannot be tested, so the answer is #116..#118, with #117 native."""
    hist, house = xla
    fake_record(kb, "fake-bug2", reproducer=FAKE_REPRODUCER.replace("torch_xla.BUG", "torch_xla.BUG2"))
    r = cli(kb, *commit_args(hist, house, "fake-bug2"), "--start", "#110", "--end", "#125", "--no-prepare")
    data = report(kb, "fake-bug2")
    assert (
        not data["exact"] and data["last_old"]["label"] == hist.label(15) and data["first_new"]["label"] == hist.label(CULPRIT2)
    )
    assert data["unknown"] == [hist.label(16), hist.label(NATIVE)]
    assert [(c["pr"], c["python_only"], c["pr_url"]) for c in data["between"]] == [
        (116, True, "https://github.com/pytorch/xla/pull/116"),
        (117, False, "https://github.com/pytorch/xla/pull/117"),
        (118, True, "https://github.com/pytorch/xla/pull/118"),
    ]
    assert data["confidence"] != "high" and "untestable" in " ".join(data["confidence_reasons"])
    assert f"{hist.sha[NATIVE][:10]} #117 Speed up the C++ lowering (#117)  [native]" in r.stdout
    assert "lies between" in r.stdout and "Commits in range: 3" in r.stdout


def test_resume_after_kill(kb, xla):
    """SIGKILL a commit bisection after its third saved probe; the rerun (verdict cache wiped)
    resumes from the state file and repeats no probe."""
    hist, house = xla
    fake_record(kb)
    args = commit_args(hist, house) + ["--start", "#108", "--end", "#120", "--no-prepare"]
    code = f"""
import sys
import xlakb.bisection as b
from xlakb.cli import main
real = b.Engine.probe
count = [0]
def probe(self, cand):
    res = real(self, cand)
    count[0] += 1
    print("PROBED", cand.label, flush=True)
    if count[0] == 4:
        import time; time.sleep(120)
    return res
b.Engine.probe = probe
sys.exit(main(["--root", {str(kb)!r}, "bisect", *{args!r}]))
"""
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        lines = [child.stdout.readline() for _ in range(4)]
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    probed = [ln.split(" ", 1)[1].strip() for ln in lines if ln.startswith("PROBED")]
    assert len(probed) == 4, lines
    shutil.rmtree(cache_dir() / "verdicts")
    r = cli(kb, *args)
    assert "resuming: 3 probe(s) already done" in r.stderr
    data = report(kb)
    fresh = [p["candidate"] for p in data["probes"] if not p["cached"]]
    assert fresh and not set(fresh) & set(probed[:3])
    assert data["probes_run"] == len(fresh)
    assert data["first_new"]["meta"]["sha"] == hist.sha[CULPRIT]
