"""The CLI as users meet it: one-line errors, exit codes, outputs."""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

from fakewheels import FAKE_REPRODUCER, fake_record
from xlakb.cli import main

REPO = Path(__file__).resolve().parent.parent


def xlakb(*args, root=None, stdin=None, cwd=None):
    """Run the real console entry point in a subprocess."""
    argv = [sys.executable, "-m", "xlakb"] + (["--root", str(root)] if root else []) + list(args)
    return subprocess.run(argv, capture_output=True, text=True, input=stdin, cwd=cwd, env=os.environ.copy())


def one_line_error(result):
    assert result.returncode == 1, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("xlakb: error: "), result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    return lines[0]


def test_validate_repository():
    r = xlakb("validate", root=REPO)
    assert r.returncode == 0 and "record(s) valid" in r.stdout


def test_validate_reports_every_problem_with_file_and_line(kb):
    fake_record(kb)
    fake_record(kb, "second")
    (kb / "issues" / "broken.yaml").write_text("id: broken\ntitle: [\n")
    (kb / "reproducers" / "second.py").unlink()
    r = xlakb("validate", root=kb)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    out = r.stdout.splitlines()
    assert any(line.startswith("issues/broken.yaml:") and "malformed YAML" in line for line in out)
    assert any(line.startswith("issues/second.yaml:") and "reproducer.path" in line for line in out)
    assert "2 problem(s) in 2 file(s); 1 record(s) valid" in r.stderr


def test_root_found_from_cwd_and_clear_error_outside(kb, tmp_path_factory):
    fake_record(kb)
    assert xlakb("list", cwd=kb / "reproducers").returncode == 0
    outside = tmp_path_factory.mktemp("elsewhere")
    assert "not inside an xlakb checkout" in one_line_error(xlakb("list", cwd=outside))


def test_list_filters(kb):
    fake_record(kb)
    path = fake_record(kb, "open-one")
    data = yaml.safe_load(path.read_text())
    data["status"], data["tags"] = "open", ["dtensor"]
    data["versions"].pop("fixed_in")
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    assert xlakb("list", "--status", "open", root=kb).stdout.split()[0] == "open-one"
    assert "fake-bug" in xlakb("list", "--tag", "fake", root=kb).stdout
    assert "open-one" not in xlakb("list", "--tag", "fake", root=kb).stdout
    assert "测试用的假问题" in xlakb("list", "--lang", "zh", root=kb).stdout


def test_show_both_languages_and_unknown_id(kb):
    fake_record(kb)
    en = xlakb("show", "fake-bug", root=kb)
    assert en.returncode == 0 and "Workaround" in en.stdout and "https://github.com/pytorch/xla/issues/1" in en.stdout
    zh = xlakb("show", "fake-bug", "--lang", "zh", root=kb)
    assert "规避方法" in zh.stdout and "升级假包" in zh.stdout
    assert "unknown record id 'nope'" in one_line_error(xlakb("show", "nope", root=kb))


def test_new_scaffolds_a_valid_record_and_refuses_to_overwrite(kb):
    r = xlakb("new", "my-new-bug", "--component", "spmd", root=kb)
    assert r.returncode == 0, r.stderr
    assert (kb / "issues" / "my-new-bug.yaml").read_text().startswith("# yaml-language-server: $schema=")
    assert xlakb("validate", root=kb).returncode == 0
    before = (kb / "reproducers" / "my-new-bug.py").read_text()
    assert "already exists" in one_line_error(xlakb("new", "my-new-bug", root=kb))
    assert (kb / "reproducers" / "my-new-bug.py").read_text() == before
    assert "bad id" in one_line_error(xlakb("new", "Bad_ID", root=kb))


def test_repro_and_expectations(kb, wheelhouse):
    fake_record(kb)
    common = ["--runner", "uv", "--find-links", str(wheelhouse), "--index-url", "none"]
    r = xlakb("repro", "fake-bug", "--torch-xla", "2.5.1", *common, root=kb)
    assert r.returncode == 0, r.stderr
    assert "fake-bug on torch_xla 2.5.1: reproduced" in r.stdout
    assert "time:" in r.stdout and "log: " in r.stdout
    log = Path(r.stdout.split("log: ")[1].strip())
    assert "TypeError: unhashable type: 'list'" in log.read_text()
    assert "[0/1]" in r.stderr  # progress
    assert xlakb("repro", "fake-bug", "--torch-xla", "2.6.0", "--expect", "claim", *common, root=kb).returncode == 0
    bad = xlakb("repro", "fake-bug", "--torch-xla", "2.6.0", "--expect", "reproduced", *common, root=kb)
    assert bad.returncode == 1 and "expected reproduced, measured not-reproduced" in bad.stderr


def test_find_links_may_be_a_url(kb, wheelhouse):
    """--find-links http://...: a wheel index page on a server (as Google's libtpu index is) is passed on as a
    URL, not made into a local path; the environment installs from it."""
    import functools
    import http.server
    import threading

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(wheelhouse))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        fake_record(kb)
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        r = xlakb(
            "repro", "fake-bug", "--torch-xla", "2.5.1", "--runner", "uv", "--find-links", url, "--index-url", "none", root=kb
        )
        assert r.returncode == 0, r.stderr
        assert "fake-bug on torch_xla 2.5.1: reproduced" in r.stdout
    finally:
        server.shutdown()
        server.server_close()


def test_repro_unknown_version_and_missing_reproducer(kb):
    fake_record(kb)
    assert "unknown torch_xla release '2.4.9'" in one_line_error(
        xlakb("repro", "fake-bug", "--torch-xla", "2.4.9", "--runner", "uv", root=kb)
    )
    assert "not a version number" in one_line_error(
        xlakb("repro", "fake-bug", "--torch-xla", "latest", "--runner", "uv", root=kb)
    )
    (kb / "reproducers" / "fake-bug.py").unlink()
    assert "does not exist" in one_line_error(xlakb("repro", "fake-bug", "--torch-xla", "2.5.1", "--runner", "uv", root=kb))


def test_repro_malformed_record_names_file_and_line(kb):
    path = fake_record(kb)
    path.write_text(path.read_text().replace("timeout: 60", "timeout: [60"))
    msg = one_line_error(xlakb("repro", "fake-bug", "--torch-xla", "2.5.1", "--runner", "uv", root=kb))
    assert "issues/fake-bug.yaml:" in msg and "malformed YAML" in msg


def test_matrix_table_data_and_nothing_lost(kb, wheelhouse):
    fake_record(kb)
    common = ["--runner", "uv", "--find-links", str(wheelhouse), "--index-url", "none"]
    r = xlakb("matrix", "fake-bug", "--versions", "2.1.0", "2.5.1", "2.6.0", *common, root=kb)
    assert r.returncode == 0, r.stderr
    assert "[3/3]" in r.stderr and "1 left" in r.stderr
    table = {line.split()[0]: line.split()[2] for line in r.stdout.splitlines() if line[:1].isdigit()}
    assert table == {"2.1.0": "untestable", "2.5.1": "reproduced", "2.6.0": "not-reproduced"}
    data = json.loads((kb / "bisect" / "fake-bug" / "matrix.json").read_text())
    assert [x["candidate"] for x in data["results"]] == ["2.1.0", "2.5.1", "2.6.0"]
    assert all(x["measured_at"].endswith("Z") for x in data["results"])
    # a later run on other releases keeps what was measured before
    r = xlakb("matrix", "fake-bug", "--versions", "2.4.0", *common, root=kb)
    data = json.loads((kb / "bisect" / "fake-bug" / "matrix.json").read_text())
    assert [x["candidate"] for x in data["results"]] == ["2.1.0", "2.4.0", "2.5.1", "2.6.0"]


def test_matrix_default_is_every_known_release(kb, wheelhouse):
    fake_record(kb)
    r = xlakb(
        "matrix", "fake-bug", "--runner", "uv", "--find-links", str(wheelhouse), "--index-url", "none", "-q", "--no-save", root=kb
    )
    from xlakb.candidates.releases import all_releases

    rows = [line.split()[0] for line in r.stdout.splitlines() if line[:1].isdigit()]
    assert rows == all_releases()
    assert not (kb / "bisect" / "fake-bug" / "matrix.json").exists()


def test_matrix_warns_when_measurement_contradicts_claim(kb, wheelhouse):
    fake_record(kb, affected=">=2.6")  # wrong on purpose: 2.6.0 is fixed in the fake wheels
    path = kb / "issues" / "fake-bug.yaml"
    data = yaml.safe_load(path.read_text())
    data["versions"].pop("fixed_in")
    data["status"] = "open"
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    r = xlakb(
        "matrix",
        "fake-bug",
        "--versions",
        "2.6.0",
        "--runner",
        "uv",
        "--find-links",
        str(wheelhouse),
        "--index-url",
        "none",
        root=kb,
    )
    assert "warning: fake-bug: versions.affected: claims 2.6.0 affected ('>=2.6'), measured not-reproduced" in r.stderr
    assert "warning: fake-bug: status: is open, but the newest measured release 2.6.0 is not-reproduced" in r.stderr
    assert xlakb("validate", root=kb).returncode == 1  # and validate says so too, from the matrix just written


@pytest.mark.parametrize("save", [True, False])
def test_matrix_judges_claims_against_the_whole_matrix_not_this_run_alone(kb, wheelhouse, save):
    """An open bug measured reproduced on 2.5.1 before; a run on 2.3.0 alone (not reproduced, not claimed
    affected) contradicts nothing: the newest measured release is still 2.5.1."""
    path = fake_record(kb, affected=">=2.4")
    data = yaml.safe_load(path.read_text())
    data["versions"].pop("fixed_in")
    data["status"] = "open"
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    common = ("--runner", "uv", "--find-links", str(wheelhouse), "--index-url", "none")
    first = xlakb("matrix", "fake-bug", "--versions", "2.5.1", *common, root=kb)
    assert first.returncode == 0 and "warning" not in first.stderr, first.stderr
    r = xlakb("matrix", "fake-bug", "--versions", "2.3.0", *common, *(() if save else ("--no-save",)), root=kb)
    assert r.returncode == 0 and "2.3.0" in r.stdout and "not-reproduced" in r.stdout
    assert "warning" not in r.stderr, r.stderr
    # and what this run measured still counts: claimed affected, measured not reproduced
    data["versions"]["affected"] = ">=2.3"
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    r = xlakb("matrix", "fake-bug", "--versions", "2.3.0", *common, *(() if save else ("--no-save",)), root=kb)
    assert "warning: fake-bug: versions.affected: claims 2.3.0 affected ('>=2.3'), measured not-reproduced" in r.stderr


#: the fake reproducer, logging each run (its torch_xla version) into $RUNS
COUNTING_REPRODUCER = FAKE_REPRODUCER.replace(
    "bug = torch_xla.BUG\n", "bug = torch_xla.BUG\nopen(os.environ['RUNS'], 'a').write(torch_xla.__version__ + '\\n')\n"
)


def test_fresh_runs_ignore_what_was_cached_and_keep_what_they_measure(kb, wheelhouse, tmp_path):
    """--fresh (matrix, bisect) and repro without --cached run the reproducer again, and keep the new verdict:
    the next command reuses it instead of measuring a third time. A fresh bisection leaves no state behind."""
    runs_file = tmp_path / "runs"
    fake_record(kb, reproducer=COUNTING_REPRODUCER, env={"RUNS": str(runs_file)})
    common = ("--runner", "uv", "--find-links", str(wheelhouse), "--index-url", "none", "-q")

    def runs() -> list[str]:
        return runs_file.read_text().split() if runs_file.exists() else []

    assert xlakb("matrix", "fake-bug", "--versions", "2.5.1", *common, root=kb).returncode == 0
    assert runs() == ["2.5.1"]
    assert xlakb("matrix", "fake-bug", "--versions", "2.5.1", *common, root=kb).returncode == 0
    assert runs() == ["2.5.1"]  # cached
    r = xlakb("matrix", "fake-bug", "--versions", "2.5.1", "2.6.0", "--fresh", *common, root=kb)
    assert r.returncode == 0 and sorted(runs()) == ["2.5.1", "2.5.1", "2.6.0"]  # run again despite the cache
    assert xlakb("matrix", "fake-bug", "--versions", "2.5.1", "2.6.0", *common, root=kb).returncode == 0
    assert len(runs()) == 3  # what the fresh run measured was kept

    r = xlakb("repro", "fake-bug", "--torch-xla", "2.4.0", *common, root=kb)
    assert r.returncode == 0 and runs()[-1] == "2.4.0" and len(runs()) == 4
    r = xlakb("repro", "fake-bug", "--torch-xla", "2.4.0", *common, root=kb)
    assert len(runs()) == 5 and "(cached verdict)" not in r.stdout  # repro runs unless told --cached
    r = xlakb("repro", "fake-bug", "--torch-xla", "2.4.0", "--cached", *common, root=kb)
    assert len(runs()) == 5 and "(cached verdict)" in r.stdout

    before = set(Path(tempfile.gettempdir()).glob("xlakb-fresh-*"))
    bisect = ("bisect", "fake-bug", "--start", "2.4.0", "--end", "2.6.0", "--no-prepare", *common)
    r = xlakb(*bisect, "--fresh", root=kb)
    assert r.returncode == 0, r.stderr
    fresh = runs()[5:]
    assert sorted(fresh) == ["2.4.0", "2.5.1", "2.6.0"] or sorted(fresh) == ["2.4.0", "2.5.0", "2.5.1", "2.6.0"], fresh
    assert set(Path(tempfile.gettempdir()).glob("xlakb-fresh-*")) == before  # its state folder is gone
    r = xlakb(*bisect, root=kb)
    assert r.returncode == 0 and "(0 run now" in r.stdout and runs()[5:] == fresh  # all from the fresh run


def test_triage_file_stdin_and_languages(kb, tmp_path):
    path = fake_record(kb)
    data = yaml.safe_load(path.read_text())
    data["signatures"] = [
        {"message": "unhashable type: 'list'"},
        {"frame": {"file": r"xla_sharding\.py", "function": "get_op_sharding"}},
        {"call": r"mark_sharding\("},
    ]
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    log = tmp_path / "crash.log"
    log.write_text(
        "step 1\nTraceback (most recent call last):\n"
        '  File "/home/u/train.py", line 3, in <module>\n    xs.mark_sharding(t, mesh, spec)\n'
        '  File "/venv/site-packages/torch_xla/distributed/spmd/xla_sharding.py", line 9, in get_op_sharding\n'
        "    x = cache[spec]\nTypeError: unhashable type: 'list'\n"
    )
    r = xlakb("triage", str(log), root=kb)
    assert r.returncode == 0 and "1. fake-bug [fixed]" in r.stdout and "(line 7)" in r.stdout
    assert "Fixed in 2.6.0" in r.stdout and "Upgrade the fake package." in r.stdout
    zh = xlakb("triage", "-", "--lang", "zh", stdin=log.read_text(), root=kb)
    assert "升级假包" in zh.stdout and "修复" in zh.stdout
    none = xlakb("triage", "-", stdin="import torch_xla\nall good\n", root=kb)
    assert none.returncode == 1 and "no known record matches" in none.stdout
    missing = xlakb("triage", str(tmp_path / "missing.log"), root=kb)
    assert missing.returncode == 2 and "cannot read" in missing.stderr and len(missing.stderr.strip().splitlines()) == 1


def test_triage_real_records_on_real_error_strings():
    """A bare generic message is not enough: with no torch_xla in the log, nothing; with torch_xla, only related."""
    r = xlakb("triage", "-", stdin="TypeError: unhashable type: 'list'\n", root=REPO)
    assert r.returncode == 1 and r.stdout.startswith("nothing in standard input is known to come from torch_xla")
    r = xlakb("triage", "-", stdin="import torch_xla\nTypeError: unhashable type: 'list'\n", root=REPO)
    assert r.returncode == 1 and "Related records" in r.stdout and "fsdpv2-scalar-param-unhashable-list" in r.stdout
    r = xlakb(
        "triage", "-", stdin="F0000 external/xla/xla/hlo/ir/hlo_instruction.h:1901] Check failed: has_sharding()\n", root=REPO
    )
    assert r.returncode == 1 and "Possible matches" in r.stdout and "1. fsdpv2-nofunc-has-sharding" in r.stdout
    r = xlakb(
        "triage",
        "-",
        stdin="XLA_DISABLE_FUNCTIONALIZATION=1 python train.py\n"
        "F0000 external/xla/xla/hlo/ir/hlo_instruction.h:1901] Check failed: has_sharding()\n",
        root=REPO,
    )
    assert r.returncode == 0 and "1. fsdpv2-nofunc-has-sharding" in r.stdout and "(strong" in r.stdout
    r = xlakb(
        "triage",
        "-",
        stdin=(
            '  File "/x/torch_xla/distributed/spmd/xla_sharded_tensor.py", line 169, in __torch_dispatch__\n'
            "RuntimeError: !at::functionalization::impl::isFunctionalTensor(t) INTERNAL ASSERT FAILED\n"
        ),
        root=REPO,
    )
    assert r.returncode == 0 and "1. dtensor-parallelize-module-functional-assert" in r.stdout


def test_internal_error_gives_exit_3_and_a_log(kb, monkeypatch, capsys):
    fake_record(kb)
    import xlakb.cli as cli

    def boom(args):
        raise RuntimeError("unexpected")

    monkeypatch.setattr(cli, "cmd_list", boom)
    assert main(["--root", str(kb), "list"]) == 3
    err = capsys.readouterr().err
    assert "internal error" in err and "crash-" in err
    crash = Path(err.split("details in ")[1].split(")")[0])
    assert "RuntimeError: unexpected" in crash.read_text()


def test_keyboard_interrupt_exit_130(kb, monkeypatch, capsys):
    fake_record(kb)
    import xlakb.cli as cli

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "cmd_list", interrupted)
    assert main(["--root", str(kb), "list"]) == 130
    assert "interrupted" in capsys.readouterr().err


def test_drift_regressions_first_then_claims_then_unmeasured(kb):
    import json

    fake_record(kb)  # claims >=2.4,<2.6 fixed in 2.6.0
    releases = ["2.1.0", "2.2.0", "2.3.0", "2.4.0", "2.5.0", "2.5.1", "2.6.0", "2.6.1", "2.7.0", "2.8.0", "2.8.1", "2.9.0"]
    verdicts = {v: ("reproduced" if "2.4.0" <= v < "2.6" else "not-reproduced") for v in releases}
    verdicts["2.1.0"] = "untestable"

    def write(rows):
        (kb / "bisect" / "fake-bug").mkdir(parents=True, exist_ok=True)
        (kb / "bisect" / "fake-bug" / "matrix.json").write_text(
            json.dumps({"results": [{"candidate": v, "kind": "release", "verdict": r} for v, r in rows.items()]})
        )

    write(verdicts)
    r = xlakb("drift", root=kb)
    assert r.returncode == 0 and r.stdout.startswith("no drift"), r.stdout + r.stderr
    write({**verdicts, "2.8.0": "reproduced", "2.3.0": "reproduced", "2.9.0": "error"})
    r = xlakb("drift", root=kb)
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert lines[0] == "REGRESSION fake-bug: claimed fixed in 2.6.0, but reproduced on 2.8.0"
    assert "CLAIM      fake-bug: versions.affected: 2.3.0 measured reproduced, but is not in affected '>=2.4,<2.6'" in lines
    assert lines[-1] == "UNMEASURED fake-bug: not measured on 2.9.0"
    assert "1 regression" in r.stderr


def test_matrix_of_many_records_in_parallel(kb, wheelhouse):
    """Several records (by component, or --all) over releases with -j 2: one table line per record,
    progress over the whole batch, every result written as it arrives."""
    import json

    fake_record(kb)
    fake_record(kb, "fake-bug-two")
    common = ["--versions", "2.3.0", "2.5.1", "2.6.0", "--runner", "uv", "--find-links", str(wheelhouse), "--index-url", "none"]
    r = xlakb("matrix", "--component", "testing", "-j", "2", *common, root=kb)
    assert r.returncode == 0, r.stderr
    assert "fake-bug      NRN" in r.stdout and "fake-bug-two  NRN" in r.stdout
    assert "[6/6]" in r.stderr and "6 left" in r.stderr
    for rid in ("fake-bug", "fake-bug-two"):
        data = json.loads((kb / "bisect" / rid / "matrix.json").read_text())
        assert [x["candidate"] for x in data["results"]] == ["2.3.0", "2.5.1", "2.6.0"]
    assert "which records?" in one_line_error(xlakb("matrix", root=kb))
    assert "-j must be at least 1" in one_line_error(xlakb("matrix", "--all", "-j", "0", *common, root=kb))


def test_time_left_of_a_batch_counts_the_probes_running_side_by_side():
    """The batch's estimate: wall time per finished probe times what is left (not divided by the slots again:
    that wall time already counts the probes running at once); before as many probes as slots have finished,
    the mean probe's own duration spread over the slots."""
    from xlakb.matrix import time_left

    assert time_left(0.0, [], 10, 2) is None
    assert time_left(200.0, [4.0] * 100, 100, 2) == 200.0  # 2 s of wall a probe, 100 left
    assert time_left(200.0, [2.0] * 100, 100, 1) == 200.0
    assert time_left(10.0, [10.0], 9, 2) == 45.0  # one finished, two at a time: 10 s each, 9 left


WORKAROUND_REPRODUCER = FAKE_REPRODUCER.replace(
    """if bug == "present":
    print("TypeError: unhashable type: 'list'"); sys.exit(1)""",
    """if bug == "present":
    if "--workaround" in sys.argv and os.environ.get("FAKE_WORKAROUND") == "on" and torch_xla.__version__ != "2.5.1":
        print("workaround holds"); sys.exit(0)  # the fake workaround does not hold on 2.5.1
    print("TypeError: unhashable type: 'list'"); sys.exit(1)""",
)


def test_matrix_measures_a_declared_workaround_beside_the_bug(kb, wheelhouse):
    path = fake_record(kb, reproducer=WORKAROUND_REPRODUCER)
    data = yaml.safe_load(path.read_text())
    data["workaround"]["en"] = "Upgrade the fake package; the reproducer checks the workaround with --workaround."
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    # a claim that the workaround was checked, with no variant declared: validate names it
    r = xlakb("validate", root=kb)
    assert r.returncode == 1 and "workaround.en: says the workaround was checked ('reproducer checks')" in r.stdout
    assert "reproducer.workaround is not declared" in r.stdout
    data["reproducer"]["workaround"] = {"args": ["--workaround"], "env": {"FAKE_WORKAROUND": "on"}}
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    r = xlakb("validate", root=kb)
    assert r.returncode == 1 and "no measured verdict shows it holding" in r.stdout
    common = ["--versions", "2.4.0", "2.5.1", "2.6.0", "--runner", "uv", "--find-links", str(wheelhouse), "--index-url", "none"]
    r = xlakb("matrix", "fake-bug", *common, root=kb)
    assert r.returncode == 0, r.stderr
    assert (
        "its workaround (--workaround FAKE_WORKAROUND=on)" in r.stdout and "written: bisect/fake-bug/workaround.json" in r.stdout
    )
    bug = json.loads((kb / "bisect" / "fake-bug" / "matrix.json").read_text())
    held = json.loads((kb / "bisect" / "fake-bug" / "workaround.json").read_text())
    assert {x["candidate"]: x["verdict"] for x in bug["results"]} == {
        "2.4.0": "reproduced",
        "2.5.1": "reproduced",
        "2.6.0": "not-reproduced",
    }
    assert {x["candidate"]: x["verdict"] for x in held["results"]} == {
        "2.4.0": "not-reproduced",
        "2.5.1": "reproduced",
        "2.6.0": "not-reproduced",
    }
    assert held["kind"] == "workaround" and all(x["kind"] == "workaround" for x in held["results"])
    from xlakb.results import workaround_holds

    assert workaround_holds(bug, held) == ["2.4.0"]
    assert xlakb("validate", root=kb).returncode == 0
    # measured again: both variants come from the verdict cache, and neither overwrites the other
    r = xlakb("matrix", "fake-bug", *common, "--variants", "workaround", root=kb)
    assert r.returncode == 0 and "written: bisect/fake-bug/matrix.json" not in r.stdout
    assert json.loads((kb / "bisect" / "fake-bug" / "matrix.json").read_text())["results"] == bug["results"]


def test_triage_reads_a_compiled_index_rebuilt_only_when_an_input_changes(kb):
    """`xlakb triage` answers from an index kept beside the cache: built once from the records, catalog and
    reports, read again while they are unchanged, built again when a record changes (the new answer shows)."""
    from xlakb import compiled

    path = fake_record(kb)
    data = yaml.safe_load(path.read_text())
    data["signatures"] = [{"message": "unhashable type: 'list'"}, {"frame": {"file": r"xla_sharding\.py"}}]
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    paste = kb / "paste.log"
    paste.write_text(
        'Traceback (most recent call last):\n  File "/x/site-packages/torch_xla/distributed/spmd/xla_sharding.py", '
        "line 10, in mark_sharding\nTypeError: unhashable type: 'list'\n"
    )
    first = xlakb("triage", str(paste), root=kb)
    folder = Path(os.environ["XLAKB_CACHE_DIR"]) / "index"
    built = sorted(folder.glob("triage-*.json"))
    assert len(built) == 1 and "fake-bug" in first.stdout
    stamp = built[0].stat().st_mtime_ns
    assert xlakb("triage", str(paste), root=kb).stdout == first.stdout
    assert sorted(folder.glob("triage-*.json")) == built and built[0].stat().st_mtime_ns == stamp  # read, not rebuilt
    path.write_text(path.read_text().replace("Fake bug for tests", "A renamed fake bug"))
    again = xlakb("triage", str(paste), root=kb)
    assert "A renamed fake bug" in again.stdout
    now = sorted(folder.glob("triage-*.json"))
    assert len(now) == 1 and now != built  # the stale index is gone
    assert compiled.load(kb)["triage"]["records"][0]["title"]["en"] == "A renamed fake bug"
    # it keeps what lets a big log skip a pattern, worked out once instead of on every call
    assert compiled.load(kb)["needles"]["unhashable type: 'list'"] == ["unhashable type: 'list'"]
