"""The settings source: delta debugging over a failing configuration, with real uv environments
built from fake wheels whose bug needs two settings together."""

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from fakewheels import fake_record

SETTINGS_REPRODUCER = """\
import os, sys
try:
    import torch_xla
except ImportError as err:
    print("untestable:", err); sys.exit(125)
flags = os.environ.get("XLA_FLAGS", "").split()
if torch_xla.BUG == "present" and os.environ.get("FAKE_A") == "1" and "--xla_two" in flags:
    print("TypeError: unhashable type: 'list'"); sys.exit(1)
print("fine with", sorted(k for k in os.environ if k.startswith(("FAKE", "XLA", "PT_"))))
sys.exit(0)
"""

JOB = """\
# copied from a user's job
export FAKE_A=1
FAKE_B=2
XLA_IR_DEBUG=1
XLA_HLO_DEBUG=1
PT_XLA_DEBUG_LEVEL=1
XLA_FLAGS="--xla_one --xla_two --xla_dump_to=dump"
FAKE_C='a b'
FAKE_D=4
FAKE_E="{long}"
""".format(long="x" * 300)  # a long value: file names made from configurations stay short


def bisect(kb, house, *args):
    cmd = [
        sys.executable,
        "-m",
        "xlakb",
        "--root",
        str(kb),
        "bisect",
        "fake-bug",
        "--source",
        "settings",
        "--runner",
        "uv",
        "--find-links",
        str(house),
        "--index-url",
        "none",
        "--no-prepare",
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True)


def report(kb, release="2.5.1"):
    return json.loads((kb / "bisect" / "fake-bug" / f"bisect-settings-{release}.json").read_text())


def test_finds_the_two_settings_that_matter_among_ten(kb, wheelhouse):
    fake_record(kb, reproducer=SETTINGS_REPRODUCER)
    job = kb / "job.env"
    job.write_text(JOB)
    r = bisect(kb, wheelhouse, "--settings-file", str(job), "--torch-xla", "2.5.1")
    assert r.returncode == 0, r.stderr
    assert "needs 2 of the 11 settings: FAKE_A=1 XLA_FLAGS=--xla_two" in r.stdout
    data = report(kb)
    assert data["minimal"] == ["FAKE_A=1", "XLA_FLAGS=--xla_two"]
    assert len(data["settings"]) == 11 and "FAKE_C='a b'" in data["settings"]
    assert data["confidence"] == "high" and data["release"] == "2.5.1"
    verdicts = {tuple(t["settings"]): t["verdict"] for t in data["tests"]}
    assert verdicts[tuple(data["settings"])] == "reproduced" and verdicts[()] == "not-reproduced"
    assert verdicts[("FAKE_A=1", "XLA_FLAGS=--xla_two")] == "reproduced"
    # one-minimal: each of the two alone was judged and does not show the bug
    assert verdicts[("FAKE_A=1",)] == "not-reproduced" and verdicts[("XLA_FLAGS=--xla_two",)] == "not-reproduced"
    assert len(data["tests"]) == data["probes_run"] <= data["probe_bound"] == 11 * 11 + 3 * 11 + 2
    assert len(data["tests"]) == len(verdicts), "no configuration probed twice"

    # the same bisection again: every verdict comes from the cache, no probe runs
    again = bisect(kb, wheelhouse, "--settings-file", str(job), "--torch-xla", "2.5.1", "-q")
    assert again.returncode == 0, again.stderr
    assert report(kb)["minimal"] == data["minimal"] and report(kb)["probes_run"] == 0


def test_record_environment_is_the_default_and_jobs_agree(kb, wheelhouse):
    fake_record(kb, reproducer=SETTINGS_REPRODUCER, env={"FAKE_B": "2", "FAKE_A": "1", "XLA_FLAGS": "--xla_one --xla_two"})
    r = bisect(kb, wheelhouse, "--torch-xla", "2.5.1", "-j", "2", "--repeat", "2")
    assert r.returncode == 0, r.stderr
    data = report(kb)
    assert data["minimal"] == ["FAKE_A=1", "XLA_FLAGS=--xla_two"] and data["settings"][0] == "FAKE_B=2"
    assert data["flaky"] == [] and data["confidence"] == "high"


def test_a_bug_needing_no_setting_and_a_configuration_that_does_not_fail(kb, wheelhouse):
    fake_record(kb)  # the plain fake reproducer: the bug shows on 2.5.1 whatever the settings
    r = bisect(kb, wheelhouse, "--setting", "FAKE_A=1", "--setting", "XLA_IR_DEBUG=1", "--torch-xla", "2.5.1")
    assert r.returncode == 0, r.stderr
    assert "shows with none of the 2 settings" in r.stdout and report(kb)["minimal"] == []
    fixed = bisect(kb, wheelhouse, "--setting", "FAKE_A=1", "--torch-xla", "2.6.0")
    assert fixed.returncode == 1
    assert (
        "the failing configuration does not fail: on 2.6.0 with all 1 settings the reproducer says not-reproduced" in fixed.stderr
    )


def test_bad_input_names_the_line_or_option(kb, wheelhouse):
    fake_record(kb, reproducer=SETTINGS_REPRODUCER)
    job = kb / "job.env"
    job.write_text("FAKE_A=1\n\nnot a setting\n")
    cases = [
        (["--settings-file", str(job), "--torch-xla", "2.5.1"], f"{job}:3: 'not a setting' is not NAME=VALUE"),
        (["--setting", "FAKE_A=1", "--setting", "FAKE_A=2", "--torch-xla", "2.5.1"], "FAKE_A is set twice"),
        (["--settings-file", str(kb / "missing.env"), "--torch-xla", "2.5.1"], "missing.env: cannot be read"),
        (["--setting", "FAKE_A=1"], "needs --torch-xla VERSION"),
        (["--setting", "FAKE_A=1", "--torch-xla", "2.5.1", "--start", "2.4.0"], "takes one release (--torch-xla), not --start"),
        (["--setting", "FAKE_A=1", "--torch-xla", "9.9.9"], "unknown torch_xla release '9.9.9'"),
    ]
    for args, message in cases:
        r = bisect(kb, wheelhouse, *args)
        assert r.returncode == 1 and message in r.stderr, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    fake_record(kb, reproducer=SETTINGS_REPRODUCER, env={})
    r = bisect(kb, wheelhouse, "--torch-xla", "2.5.1")
    assert r.returncode == 1 and "no settings to minimize: the record's environment.env is empty" in r.stderr


def test_a_killed_settings_bisection_resumes_without_repeating_a_probe(kb, wheelhouse, tmp_path):
    """SIGKILL after the fourth probe (the third saved); the rerun, with the verdict cache wiped, resumes
    from the saved state, repeats none of the saved probes and gives the same answer."""
    fake_record(kb, reproducer=SETTINGS_REPRODUCER)
    job = kb / "job.env"
    job.write_text(JOB)
    code = f"""
import sys
import xlakb.bisection.engine as e
from xlakb.cli import main
real = e.Engine.probe
count = [0]
def probe(self, cand):
    res = real(self, cand)
    count[0] += 1
    print("PROBED", " ".join(cand.meta["settings"]) or "-", flush=True)
    if count[0] == 4:
        import time; time.sleep(120)
    return res
e.Engine.probe = probe
sys.exit(main(["--root", {str(kb)!r}, "bisect", "fake-bug", "--source", "settings", "--settings-file", {str(job)!r},
               "--torch-xla", "2.5.1", "--runner", "uv", "--find-links", {str(wheelhouse)!r}, "--index-url", "none", "-q"]))
"""
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    probed = [child.stdout.readline().split(" ", 1)[1].strip() for _ in range(4)][:3]
    child.send_signal(signal.SIGKILL)
    child.wait()
    shutil.rmtree(Path(os.environ["XLAKB_CACHE_DIR"]) / "verdicts")  # only the saved state can answer the three probes now
    r = bisect(kb, wheelhouse, "--settings-file", str(job), "--torch-xla", "2.5.1")
    assert r.returncode == 0, r.stderr
    assert "resuming: 3 probe(s) already done" in r.stderr
    data = report(kb)
    assert data["minimal"] == ["FAKE_A=1", "XLA_FLAGS=--xla_two"]
    ran_now = [" ".join(t["settings"]) or "-" for t, p in zip(data["tests"], data["probes"]) if not p["cached"]]
    assert not set(ran_now) & set(probed) and data["probes_run"] == len(ran_now) == len(data["tests"]) - 3
