"""Bisecting a script without a record (``xlakb bisect --script``, ``xlakb repro --script``, ``xlakb new
--from-bisect``): real uv environments from fake release wheels, a real git history for commits."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from fakewheels import fake_record, fake_wheelhouse
from xlakb.cli import main
from xlakb.proc import RunResult
from xlakb.runner import Verdict, classify, crash_signal

ALL = ["2.1.0", "2.2.0", "2.3.0", "2.4.0", "2.5.0", "2.5.1", "2.6.0", "2.6.1", "2.7.0", "2.8.0", "2.8.1", "2.9.0"]

#: fails (a Python exception) where the fake torch_xla has the bug, passes elsewhere; skips without the API
SCRIPT = """\
import sys
import torch_xla
if torch_xla.BUG == "missing-api":
    print("untestable: no such API"); sys.exit(125)
if torch_xla.BUG == "present":
    raise TypeError("unhashable type: 'list'")
if torch_xla.BUG == "crash":
    raise RuntimeError("an unrelated failure")
if torch_xla.BUG == "abort":
    import os; os.abort()
print("fine on", torch_xla.__version__)
"""


def house_of(tmp_path, behaviour: dict[str, str]) -> Path:
    return fake_wheelhouse(tmp_path / "house", behaviour)


def script_file(tmp_path, text: str = SCRIPT, name: str = "repro.py") -> Path:
    path = tmp_path / "work" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def xlakb(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "xlakb", *args], capture_output=True, text=True, cwd=cwd)


def bisect(house, *args, cwd=None):
    return xlakb("bisect", "--runner", "uv", "--find-links", str(house), "--index-url", "none", *args, cwd=cwd)


def report_of(path: Path) -> dict:
    return json.loads(path.read_text())


# ------------------------------------------------------------------------------ the rule
def run(code=0, output="", timed_out=False) -> RunResult:
    return RunResult(("python",), code, timed_out, 1.0, output)


@pytest.mark.parametrize(
    "regress,result,verdict",
    [
        ("error", run(1, "Traceback\nValueError: x"), Verdict.REPRODUCED),
        ("error", run(0), Verdict.NOT_REPRODUCED),
        ("error", run(-11), Verdict.REPRODUCED),
        ("success", run(0), Verdict.REPRODUCED),
        ("success", run(2), Verdict.NOT_REPRODUCED),
        ("crash", run(-6, "F0000 Check failed: x"), Verdict.REPRODUCED),  # a fatal check failure aborts
        ("crash", run(134, "Aborted (core dumped)"), Verdict.REPRODUCED),  # a shell's 128+SIGABRT
        ("crash", run(1, "RuntimeError: Check failed: x"), Verdict.NOT_REPRODUCED),  # a Python exception
        ("non-crash", run(1), Verdict.REPRODUCED),
        ("non-crash", run(-11), Verdict.NOT_REPRODUCED),
        ("hang", run(None, timed_out=True), Verdict.REPRODUCED),
        ("hang", run(1), Verdict.NOT_REPRODUCED),
        ("error", run(None, timed_out=True), Verdict.ERROR),
        ("error", run(125, "untestable: no API"), Verdict.UNTESTABLE),
        ("success", run(125), Verdict.UNTESTABLE),
    ],
)
def test_regress_rules(regress, result, verdict):
    assert classify(result, [], regress)[0] is verdict


def test_match_counts_an_unrelated_failure_good():
    bad, why = classify(run(1, "TypeError: unhashable type: 'list'"), ["unhashable"], "error")
    assert bad is Verdict.REPRODUCED and "matched: unhashable" in why
    good, why = classify(run(1, "ImportError: something else"), ["unhashable"], "error")
    assert good is Verdict.NOT_REPRODUCED and "does not show --match" in why


def test_crash_signal():
    assert [crash_signal(c) for c in (None, 0, 1, -6, 134, 139, 255)] == [None, None, None, 6, 6, 11, None]


# ------------------------------------------------------------------------------ releases
def test_plain_script_bisected_over_releases_like_a_record(kb, tmp_path):
    """Fails on older releases, passes on newer: the whole known range, ends first, the right release, no more
    probes than the record of the same behaviour; a second run runs none."""
    house = house_of(tmp_path, {v: "present" if v < "2.6" else "none" for v in ALL})
    script = script_file(tmp_path)
    out = tmp_path / "out"
    r = bisect(house, "--script", str(script), "--report", str(out / "r.json"), "--report", str(out / "r.md"))
    assert r.returncode == 0, r.stderr
    assert "releases: last bad 2.5.1, first good 2.6.0" in r.stdout
    assert "The change (fixed) is in 2.6.0: 2.5.1 is bad, 2.6.0 is good." in r.stdout
    assert "verifying the ends: 2.1.0 and 2.9.0" in r.stderr
    data = report_of(out / "r.json")
    (stage,) = data["stages"]
    assert stage["answer"] == {"last_bad": "2.5.1", "first_good": "2.6.0", "exact": True}
    assert data["script"]["name"] == "repro.py" and data["script"]["text"] == SCRIPT
    assert data["command"].startswith("xlakb bisect ") and "--script repro.py --report r.json" in data["command"]
    assert {p["verdict"] for p in stage["probes"]} == {"bad", "good"}
    assert "unhashable type" in data["failing_log"]["excerpt"] and data["failing_log"]["candidate"] == "2.5.1"
    assert 'File "repro.py", line 6' in data["failing_log"]["excerpt"]  # the copy probes ran: named as the user named it
    assert "  2.5.1: bad" in r.stderr and "  2.9.0: good" in r.stderr  # progress in the script's words
    md = (out / "r.md").read_text()
    assert "| 2.5.1 | 2.5.1 | bad |" in md and "```python" in md and "Reproduce: `xlakb bisect --runner uv" in md
    assert not (kb / "bisect").exists() or not any((kb / "bisect").iterdir())
    script_probes = stage["probes_run"]
    assert script_probes <= 2 + math.ceil(math.log2(len(ALL)))

    # the record of the same behaviour over the same releases: the same answer, no fewer probes
    fake_record(kb, affected=">=2.1,<2.6", fixed_in="2.6.0")
    rec = bisect(house, "fake-bug", cwd=kb)
    assert rec.returncode == 0, rec.stderr
    rec_data = report_of(kb / "bisect" / "fake-bug" / "bisect-releases-fixed.json")
    assert rec_data["first_new"]["label"] == "2.6.0" and script_probes <= rec_data["probes_run"]

    again = bisect(house, "--script", str(script), "--report", str(out / "again.json"))
    assert again.returncode == 0, again.stderr
    assert report_of(out / "again.json")["stages"][0]["probes_run"] == 0
    assert "(0 run now" in again.stdout


def test_regress_success_finds_when_it_started_working(tmp_path):
    house = house_of(
        tmp_path, {v: "present" if v < "2.6" else "none" for v in ("2.4.0", "2.5.0", "2.5.1", "2.6.0", "2.6.1", "2.7.0")}
    )
    r = bisect(house, "--script", str(script_file(tmp_path)), "--regress", "success", "--start", "2.4.0", "--end", "2.7.0")
    assert r.returncode == 0, r.stderr
    assert "releases: last good 2.5.1, first bad 2.6.0" in r.stdout
    assert "The change (introduced) is in 2.6.0: 2.5.1 is good, 2.6.0 is bad." in r.stdout


def test_match_ignores_an_unrelated_failure(tmp_path):
    house = house_of(tmp_path, {"2.2.0": "crash", "2.3.0": "crash", "2.4.0": "present", "2.5.0": "present", "2.5.1": "present"})
    script = str(script_file(tmp_path))
    plain = bisect(house, "--script", script, "--start", "2.2.0", "--end", "2.5.1")
    assert plain.returncode == 1 and "do not bracket a change: 2.2.0 and 2.5.1 are both reproduced" in plain.stderr
    r = bisect(house, "--script", script, "--start", "2.2.0", "--end", "2.5.1", "--match", r"unhashable type")
    assert r.returncode == 0, r.stderr
    assert "releases: last good 2.3.0, first bad 2.4.0" in r.stdout
    assert "good (error, but the output does not show --match)" in r.stdout


def test_regress_crash_tells_a_signal_from_an_exception(tmp_path):
    house = house_of(tmp_path, {"2.3.0": "none", "2.4.0": "present", "2.5.0": "abort", "2.5.1": "abort"})
    script = str(script_file(tmp_path))
    r = bisect(house, "--script", script, "--regress", "crash", "--start", "2.3.0", "--end", "2.5.1")
    assert r.returncode == 0, r.stderr
    assert "releases: last good 2.4.0, first bad 2.5.0" in r.stdout  # 2.4.0 raises: not a crash
    assert "killed by signal 6 (SIGABRT)" in r.stdout
    plain = bisect(house, "--script", script, "--start", "2.3.0", "--end", "2.5.1")
    assert "releases: last good 2.3.0, first bad 2.4.0" in plain.stdout  # any failure is bad by default


def test_exit_125_skips(tmp_path):
    house = house_of(
        tmp_path, {"2.5.1": "present", "2.6.0": "missing-api", "2.6.1": "missing-api", "2.7.0": "none", "2.8.0": "none"}
    )
    out = tmp_path / "r.json"
    r = bisect(house, "--script", str(script_file(tmp_path)), "--start", "2.5.1", "--end", "2.8.0", "--report", str(out))
    assert r.returncode == 0, r.stderr
    stage = report_of(out)["stages"][0]
    assert stage["answer"] == {"last_bad": "2.5.1", "first_good": "2.7.0", "exact": False}
    assert stage["unknown"] == ["2.6.0", "2.6.1"] and {"skip"} <= {p["verdict"] for p in stage["probes"]}
    assert stage["confidence"] == "medium"


def test_shell_script_arguments_and_settings(tmp_path):
    """A shell script runs with the probe's python first on PATH; arguments after -- and --setting reach it."""
    house = house_of(tmp_path, {v: "present" if v < "2.6" else "none" for v in ("2.5.0", "2.5.1", "2.6.0", "2.6.1")})
    sh = script_file(
        tmp_path,
        '#!/bin/sh\ntest "$MY_SETTING" = on || exit 3\n'
        'python -c "import sys, torch_xla; sys.exit(1 if torch_xla.BUG == sys.argv[1] else 0)" "$1"\n',
        "check.sh",
    )
    out = tmp_path / "r.json"
    args = ("--script", str(sh), "--setting", "MY_SETTING=on", "--start", "2.5.0", "--end", "2.6.1", "--report", str(out))
    r = bisect(house, *args, "--", "present")
    assert r.returncode == 0, r.stderr
    data = report_of(out)
    assert data["stages"][0]["answer"]["first_good"] == "2.6.0"
    assert data["script"]["kind"] == "shell" and data["script"]["args"] == ["present"]
    assert data["script"]["settings"] == ["MY_SETTING=on"] and data["command"].endswith("-- present")
    other = bisect(house, *args, "--", "none")  # other arguments: another script, another bisection
    assert other.returncode == 0 and "releases: last good 2.5.1, first bad 2.6.0" in other.stdout


def test_a_shell_script_is_one_self_contained_python_file(tmp_path):
    """What a probe runs for a shell script carries it inside (a container or a Ray worker gets one file), runs it
    with the probe's python first on PATH, and ends as it ended: its exit code, or its signal."""
    import shutil

    from xlakb.scripts import Script

    sh = script_file(
        tmp_path,
        'test "$(command -v python)" = "$EXPECTED" || exit 9\ncase "$1" in abort) kill -ABRT $$;; esac\nexit "$1"\n',
        "t.sh",
    )
    staged = Script.load(str(sh)).record().reproducer_path
    alone = tmp_path / "elsewhere" / staged.name
    alone.parent.mkdir()
    shutil.copy(staged, alone)
    sh.unlink()
    env = {"PATH": "/usr/bin:/bin", "EXPECTED": str(Path(sys.executable).parent / "python")}
    for arg, code in (("0", 0), ("3", 3), ("125", 125), ("abort", -6)):
        assert subprocess.run([sys.executable, str(alone), arg], env=env, cwd=alone.parent).returncode == code, arg


def test_settings_bisection_of_a_script_minimises_its_settings(tmp_path):
    house = house_of(tmp_path, {"2.5.1": "none"})
    script = script_file(
        tmp_path, "import os, sys\nsys.exit(1 if os.environ.get('A') == '1' and os.environ.get('C') == '3' else 0)\n"
    )
    out = tmp_path / "r.json"
    r = bisect(
        house,
        "--script",
        str(script),
        "--source",
        "settings",
        "--torch-xla",
        "2.5.1",
        "--report",
        str(out),
        "--setting",
        "A=1",
        "--setting",
        "B=2",
        "--setting",
        "C=3",
    )
    assert r.returncode == 0, r.stderr
    assert "On torch_xla 2.5.1 the bug needs 2 of the 3 settings: A=1 C=3." in r.stdout
    data = report_of(out)
    assert data["stages"][0]["answer"]["first_bad"] == "A=1 C=3" and data["script"]["settings"] == ["A=1", "B=2", "C=3"]


def test_interrupted_script_bisection_resumes(tmp_path, monkeypatch, capsys):
    house = house_of(tmp_path, {v: "present" if v < "2.6" else "none" for v in ALL})
    script = str(script_file(tmp_path))
    import xlakb.bisection.engine as engine

    real, calls = engine.Engine.probe, []

    def probe(self, cand):
        calls.append(cand.label)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(self, cand)

    monkeypatch.setattr(engine.Engine, "probe", probe)
    argv = ["bisect", "--script", script, "--start", "2.2.0", "--end", "2.9.0", "--runner", "uv", "--find-links", str(house)]
    argv += ["--index-url", "none", "--no-prepare", "--report", str(tmp_path / "r.json")]
    assert main(argv) == 130
    assert "interrupted" in capsys.readouterr().err
    monkeypatch.setattr(engine.Engine, "probe", real)
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "resuming: 2 probe(s) already done" in captured.err
    assert "releases: last bad 2.5.1, first good 2.6.0" in captured.out
    assert calls[2] not in calls[:2]


# ------------------------------------------------------------------------------ commits
def test_script_bisected_over_commits_names_the_pr(tmp_path):
    from fakexla import BASE_NEW, BASE_OLD, CULPRIT, FakeHistory, torch_wheel

    hist = FakeHistory(tmp_path / "xla")
    house = tmp_path / "house"
    hist.torch_xla_wheel(house, "2.5.1", BASE_OLD)
    hist.torch_xla_wheel(house, "2.6.0", BASE_NEW)
    torch_wheel(house, "2.5.1")
    torch_wheel(house, "2.6.0")
    out = tmp_path / "r.json"
    r = bisect(
        house,
        "--script",
        str(script_file(tmp_path)),
        "--source",
        "commits",
        "--repo",
        str(hist.path),
        "--base",
        "2.5.1",
        "--base",
        "2.6.0",
        "--start",
        "#108",
        "--end",
        "#120",
        "--report",
        str(out),
    )
    assert r.returncode == 0, r.stderr
    assert f"commits: last good {hist.label(CULPRIT - 1)}, first bad {hist.label(CULPRIT)}" in r.stdout
    assert "Culprit: Cache sharding specs by list (#112) https://github.com/pytorch/xla/pull/112" in r.stdout
    stage = report_of(out)["stages"][0]
    assert stage["answer"]["pr"] == 112 and stage["answer"]["pr_url"].endswith("/pull/112")
    assert stage["confidence"] == "high" and any("Python-only" in why for why in stage["confidence_reasons"])


# ------------------------------------------------------------------------------ repro, new, bad input
def test_repro_script_prints_the_verdict(tmp_path):
    house = house_of(tmp_path, {"2.5.1": "present", "2.6.0": "none"})
    script = str(script_file(tmp_path))
    common = ("--runner", "uv", "--find-links", str(house), "--index-url", "none")
    bad = xlakb("repro", "--script", script, "--torch-xla", "2.5.1", *common)
    assert bad.returncode == 0, bad.stderr
    assert "repro.py on torch_xla 2.5.1: bad (bad (error): exit 1: TypeError: unhashable type: 'list')" in bad.stdout
    good = xlakb("repro", "--script", script, "--torch-xla", "2.6.0", "--regress", "success", *common)
    assert "repro.py on torch_xla 2.6.0: bad (bad (success): exit 0)" in good.stdout


def test_new_from_bisect_drafts_a_record_validate_accepts(kb, tmp_path):
    house = house_of(tmp_path, {v: "present" if v < "2.6" else "none" for v in ("2.4.0", "2.5.0", "2.5.1", "2.6.0", "2.6.1")})
    out = tmp_path / "r.json"
    r = bisect(house, "--script", str(script_file(tmp_path)), "--start", "2.4.0", "--end", "2.6.1", "--report", str(out))
    assert r.returncode == 0, r.stderr
    made = xlakb("--root", str(kb), "new", "scalar-list-crash", "--component", "spmd", "--from-bisect", str(out))
    assert made.returncode == 0, made.stderr
    text = (kb / "issues" / "scalar-list-crash.yaml").read_text()
    assert (kb / "reproducers" / "scalar-list-crash.py").read_text() == SCRIPT
    assert "Drafted by `xlakb new --from-bisect` from r.json" in text
    assert 'affected: ">=2.4.0,<2.6.0"' in text and 'fixed_in: "2.6.0"' in text and "status: fixed" in text
    assert "unhashable type" in text  # the reproducer's and triage's signatures, from the failing log
    valid = xlakb("--root", str(kb), "validate")
    assert valid.returncode == 0, valid.stdout + valid.stderr
    again = xlakb("--root", str(kb), "new", "other-id", "--from-bisect", str(tmp_path / "missing.json"))
    assert again.returncode == 1 and "--from-bisect" in again.stderr and "missing.json" in again.stderr


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--script", "nope.py"], "--script nope.py: no such file"),
        (["--script", "{s}", "--match", "(unclosed"], "--match '(unclosed': bad regex"),
        (["--script", "{s}", "--regress", "sometimes"], "--regress 'sometimes': unknown rule"),
        (["fake-bug", "--script", "{s}"], "a record id (fake-bug) and --script"),
        (["fake-bug", "--match", "x"], "--match is for --script FILE"),
        (["--script", "{s}", "--report", "{kb}/bisect/x.json"], "bisect/ holds records' results"),
        (["--script", "{s}", "--report", "out.txt"], "--report out.txt: name a .json or .md file"),
        (["--script", "{s}", "--timeout", "0"], "--timeout 0: must be at least 1 second"),
        ([], "which record? name an id, or --script FILE"),
    ],
)
def test_bad_input_is_one_line(kb, tmp_path, extra, message):
    fake_record(kb)
    script = script_file(tmp_path)
    args = [a.format(s=script, kb=kb) for a in extra]
    r = xlakb("--root", str(kb), "bisect", *args, "--runner", "uv", cwd=tmp_path)
    assert r.returncode == 1, r.stdout
    lines = r.stderr.strip().splitlines()
    assert lines[-1].startswith("xlakb: error: ") and message in lines[-1], r.stderr
