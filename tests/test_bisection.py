"""The bisection engine over real uv environments built from fake release wheels."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from fakewheels import fake_record, fake_torch, fake_torch_xla, fake_wheelhouse
from xlakb.bisection import Engine, Options, outcome_of, save_report
from xlakb.candidates.releases import releases_between, walk_back
from xlakb.envs.uv import UvBackend
from xlakb.errors import XlakbError
from xlakb.progress import RecordingProgress
from xlakb.records import load_record
from xlakb.runner import Verdict, VerdictCache
from xlakb.search import Outcome

HERE = Path(__file__).parent


def engine(kb, house, **opts):
    options = Options(find_links=(str(house),), index_url="none", command="xlakb bisect fake-bug", **opts)
    return Engine(load_record(kb, "fake-bug"), UvBackend(), progress=RecordingProgress(), options=options)


def test_outcome_rule():
    assert outcome_of(Verdict.REPRODUCED, "introduced") is Outcome.NEW
    assert outcome_of(Verdict.NOT_REPRODUCED, "introduced") is Outcome.OLD
    assert outcome_of(Verdict.REPRODUCED, "fixed") is Outcome.OLD
    assert outcome_of(Verdict.NOT_REPRODUCED, "fixed") is Outcome.NEW
    assert outcome_of(Verdict.UNTESTABLE, "fixed") is Outcome.SKIP
    assert outcome_of(Verdict.ERROR, "introduced") is Outcome.ERROR


def test_finds_introducing_and_fixing_release(kb, wheelhouse):
    fake_record(kb)
    eng = engine(kb, wheelhouse)
    report = eng.run(releases_between("2.2.0", "2.5.1"), source="releases")
    assert (report.direction, report.last_old_candidate.label, report.first_new_candidate.label) == (
        "introduced",
        "2.3.0",
        "2.4.0",
    )
    assert report.exact and report.confidence == "high"
    report = engine(kb, wheelhouse).run(releases_between("2.4.0", "2.9.0"), source="releases")
    assert (report.direction, report.last_old_candidate.label, report.first_new_candidate.label) == ("fixed", "2.5.1", "2.6.0")
    assert report.probes_run <= 2 + 3  # ends + ceil(log2(6))
    path = save_report(kb, report)
    data = json.loads(path.read_text())
    assert data["first_new"]["label"] == "2.6.0" and data["old_label"] == "reproduced" and data["probes"]


def test_repeated_bisect_runs_zero_probes(kb, wheelhouse):
    fake_record(kb)
    first = engine(kb, wheelhouse).run(releases_between("2.4.0", "2.9.0"), source="releases")
    assert first.probes_run > 0
    again = engine(kb, wheelhouse)
    second = again.run(releases_between("2.4.0", "2.9.0"), source="releases")
    assert second.probes_run == 0 and second.first_new_candidate.label == first.first_new_candidate.label


def test_ends_must_bracket_and_be_judged(kb, wheelhouse):
    fake_record(kb)
    with pytest.raises(XlakbError, match="do not bracket a change: 2.6.0 and 2.9.0 are both not-reproduced"):
        engine(kb, wheelhouse).run(releases_between("2.6.0", "2.9.0"), source="releases")
    with pytest.raises(XlakbError, match="start 2.1.0 could not be judged"):
        engine(kb, wheelhouse).run(releases_between("2.1.0", "2.5.1"), source="releases")
    with pytest.raises(XlakbError, match="use --direction introduced"):
        engine(kb, wheelhouse).run(releases_between("2.2.0", "2.5.1"), source="releases", direction="fixed")


def test_walk_back_finds_a_start(kb, wheelhouse):
    fake_record(kb)
    eng = engine(kb, wheelhouse)
    cands = releases_between(None, "2.5.1")
    start = walk_back(eng, cands, len(cands) - 1)
    assert cands[start].label in ("2.2.0", "2.3.0")
    report = eng.run(cands[start:], source="releases")
    assert report.first_new_candidate.label == "2.4.0"


def test_untestable_candidates_are_stepped_around(kb, tmp_path):
    house = tmp_path / "house"
    behaviour = {"2.5.1": "present", "2.6.0": "missing-api", "2.6.1": "missing-api", "2.7.0": "none", "2.8.0": "none"}
    for v, bug in behaviour.items():
        fake_torch_xla(house, v, bug=bug)
        fake_torch(house, {"2.6.1": "2.6.0"}.get(v, v))
    fake_record(kb)
    report = engine(kb, house).run(releases_between("2.5.1", "2.8.0"), source="releases")
    assert not report.exact and report.last_old_candidate.label == "2.5.1" and report.first_new_candidate.label == "2.7.0"
    assert [report.candidates[i].label for i in report.unknown] == ["2.6.0", "2.6.1"]
    assert report.confidence == "medium" and "untestable" in report.confidence_reasons[0]


def test_flaky_reproducer_is_reported_not_counted(kb, tmp_path):
    house = tmp_path / "house"
    for v in ("2.5.1", "2.6.0", "2.6.1", "2.7.0"):
        fake_torch_xla(house, v, bug="present" if v == "2.5.1" else "none")
        fake_torch(house, {"2.6.1": "2.6.0"}.get(v, v))
    flaky = """import os, sys, torch_xla
counter = os.path.join(os.environ["TMPDIR"], "flaky-count")
n = int(open(counter).read()) if os.path.exists(counter) else 0
open(counter, "w").write(str(n + 1))
if torch_xla.BUG == "present" or (torch_xla.__version__ == "2.6.0" and n % 2 == 0):
    print("TypeError: unhashable type: 'list'"); sys.exit(1)
sys.exit(0)
"""
    fake_record(kb, reproducer=flaky)
    os.environ["TMPDIR"] = str(tmp_path)
    try:
        report = engine(kb, house, repeat=2).run(releases_between("2.5.1", "2.7.0"), source="releases")
    finally:
        os.environ.pop("TMPDIR")
    assert "2.6.0" in report.flaky
    assert any(p.candidate == "2.6.0" and "flaky" in p.detail for p in report.probes)
    assert report.confidence != "high"


def test_parallel_jobs_give_the_same_answer(kb, wheelhouse):
    fake_record(kb)
    report = engine(kb, wheelhouse, jobs=2).run(releases_between("2.4.0", "2.9.0"), source="releases")
    assert report.exact and report.first_new_candidate.label == "2.6.0"
    assert len(report.probes) <= 2 + 2 * 2  # ends + two rounds of two parallel probes


def test_resume_after_kill_repeats_no_probe(kb, wheelhouse, tmp_path):
    """Kill a bisection (SIGKILL) after its second probe; the rerun continues from the saved state."""
    fake_record(kb)
    code = f"""
import sys
sys.path.insert(0, {str(HERE)!r})
from pathlib import Path
from xlakb.bisection import Engine, Options
from xlakb.candidates.releases import releases_between
from xlakb.envs.uv import UvBackend
from xlakb.records import load_record
from xlakb.runner import VerdictCache
import xlakb.bisection as b
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
eng = Engine(load_record(Path({str(kb)!r}), "fake-bug"), UvBackend(), cache=VerdictCache(Path({str(tmp_path / "vc")!r})),
             options=Options(find_links=({str(wheelhouse)!r},), index_url="none", prepare_ahead=False))
eng.run(releases_between("2.4.0", "2.9.0"), source="releases")
"""
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    probed = [child.stdout.readline().split()[1] for _ in range(4)][:3]  # the 4th prints, then pauses unsaved
    child.send_signal(signal.SIGKILL)
    child.wait()
    # the third probe finished (and was saved) before the pause; a fresh verdict cache proves the state file did the work
    eng = Engine(
        load_record(kb, "fake-bug"),
        UvBackend(),
        cache=VerdictCache(tmp_path / "other-vc"),
        progress=RecordingProgress(),
        options=Options(find_links=(str(wheelhouse),), index_url="none", prepare_ahead=False),
    )
    report = eng.run(releases_between("2.4.0", "2.9.0"), source="releases")
    assert any(e[0] == "info" and e[1].startswith("resuming: 3 probe(s)") for e in eng.progress.events), eng.progress.events
    newly = [p.candidate for p in report.probes if not p.cached]
    assert not set(newly) & set(probed)
    assert report.first_new_candidate.label == "2.6.0"
    # the report counts every probe the answer rests on: the three saved ones and those run now
    assert report.probes_run == len(newly) >= 1
    assert [p.candidate for p in report.probes][:3] == probed
    assert len(report.probes) == 3 + report.probes_run
    assert f"with {3 + report.probes_run} probes ({report.probes_run} run now" in report.summary()


def test_cli_bisect_writes_report(kb, wheelhouse):
    fake_record(kb)
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "xlakb",
            "--root",
            str(kb),
            "bisect",
            "fake-bug",
            "--start",
            "2.4.0",
            "--runner",
            "uv",
            "--find-links",
            str(wheelhouse),
            "--index-url",
            "none",
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert "The change (fixed) is in 2.6.0: 2.5.1 is reproduced, 2.6.0 is not-reproduced." in r.stdout
    assert "candidate(s) left" in r.stderr and "step(s)" in r.stderr
    data = json.loads(next((kb / "bisect" / "fake-bug").glob("bisect-releases-*.json")).read_text())
    assert data["direction"] == "fixed" and data["command"].startswith("xlakb ")
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "xlakb",
            "--root",
            str(kb),
            "bisect",
            "fake-bug",
            "--start",
            "2.7.0",
            "--end",
            "2.6.0",
            "--runner",
            "uv",
        ],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 1 and "is after its end" in bad.stderr


def _house(tmp_path, behaviour):
    return fake_wheelhouse(tmp_path / "house", behaviour)


def _bisect_cli(kb, house, *extra):
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "xlakb",
            "--root",
            str(kb),
            "bisect",
            "fake-bug",
            "--runner",
            "uv",
            "--find-links",
            str(house),
            "--index-url",
            "none",
            *extra,
        ],
        capture_output=True,
        text=True,
    )


ALL = ["2.1.0", "2.2.0", "2.3.0", "2.4.0", "2.5.0", "2.5.1", "2.6.0", "2.6.1", "2.7.0", "2.8.0", "2.8.1", "2.9.0"]


@pytest.mark.parametrize(
    "affected,fixed_in",
    [
        (">=2.2,<2.7", "2.7.0"),  # the claim is right
        (">=2.4,<2.6", "2.6.0"),
    ],
)  # the claim is wrong: verified, not trusted
def test_no_range_starts_at_the_oldest_release_that_runs(kb, tmp_path, affected, fixed_in):
    """No --start/--end: 2.1.0 lacks the API (untestable), so the start moves to 2.2.0 and the report says so."""
    house = _house(tmp_path, {v: ("missing-api" if v == "2.1.0" else "present" if v < "2.7" else "none") for v in ALL})
    fake_record(kb, affected=affected, fixed_in=fixed_in)
    r = _bisect_cli(kb, house)
    assert r.returncode == 0, r.stderr
    assert "The change (fixed) is in 2.7.0: 2.6.1 is reproduced, 2.7.0 is not-reproduced." in r.stdout
    assert "Start moved forward to 2.2.0, the oldest release the reproducer runs on (2.1.0 is untestable: exit 125" in r.stdout
    data = json.loads((kb / "bisect" / "fake-bug" / "bisect-releases-fixed.json").read_text())
    assert data["range"]["first"] == "2.2.0" and data["range"]["last"] == "2.9.0"
    assert any(n.startswith("Start moved forward to 2.2.0") for n in data["notes"])
    assert {p["candidate"] for p in data["probes"]} >= {"2.1.0", "2.2.0", "2.9.0"}


def test_no_range_newest_untestable_moves_the_end_back(kb, tmp_path):
    house = _house(
        tmp_path, {**{v: ("present" if v < "2.6" else "none") for v in ALL}, "2.9.0": "missing-api", "2.8.1": "missing-api"}
    )
    fake_record(kb, affected=">=2.1,<2.6", fixed_in="2.6.0")
    r = _bisect_cli(kb, house)
    assert r.returncode == 0, r.stderr
    assert "The change (fixed) is in 2.6.0" in r.stdout
    assert "End moved back to 2.8.0, the newest release the reproducer runs on (2.8.1 is untestable" in r.stdout


def test_no_range_window_gives_both_changes(kb, wheelhouse):
    """Bad only in 2.4.0-2.5.1: the oldest and newest releases agree, the claimed-affected release between
    them does not, so both the introducing and the fixing release are found (or the one asked for)."""
    fake_record(kb)  # claims >=2.4,<2.6
    r = _bisect_cli(kb, wheelhouse)
    assert r.returncode == 0, r.stderr
    assert "The change (introduced) is in 2.4.0: 2.3.0 is not-reproduced, 2.4.0 is reproduced." in r.stdout
    assert "The change (fixed) is in 2.6.0: 2.5.1 is reproduced, 2.6.0 is not-reproduced." in r.stdout
    assert "2.2.0 and 2.9.0 are both not-reproduced; 2.5.0 is reproduced, so the bug came and went between them." in r.stdout
    assert {p.name for p in (kb / "bisect" / "fake-bug").iterdir()} == {
        "bisect-releases-introduced.json",
        "bisect-releases-fixed.json",
    }
    only = _bisect_cli(kb, wheelhouse, "--direction", "fixed", "--no-save")
    assert only.returncode == 0 and "(fixed) is in 2.6.0" in only.stdout and "(introduced)" not in only.stdout


def test_no_range_nothing_to_bisect_is_one_line(kb, tmp_path):
    house = _house(tmp_path, {v: "present" for v in ALL})
    path = fake_record(kb, affected=">=2.1", fixed_in=None)
    path.write_text(path.read_text().replace("status: fixed", "status: open"))
    r = _bisect_cli(kb, house)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines()[-1].startswith("xlakb: error: nothing to bisect: 2.1.0 and 2.9.0 are both reproduced")
