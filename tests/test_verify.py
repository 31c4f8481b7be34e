"""`xlakb verify`: the pull-request check, against a real git repository made in the test."""

import subprocess
import sys

import git
import yaml

from fakewheels import fake_record
from xlakb.records import load_record
from xlakb.verify import changed_record_ids, claimed_pair


def run(kb, *args):
    return subprocess.run([sys.executable, "-m", "xlakb", "--root", str(kb), *args], capture_output=True, text=True)


def test_claimed_pair(kb):
    fake_record(kb)
    assert claimed_pair(load_record(kb, "fake-bug")) == ("2.5.1", "2.6.0")


def test_changed_records_and_verify(kb, wheelhouse):
    repo = git.Repo.init(kb)
    fake_record(kb, "old-bug")
    repo.index.add(["issues", "reproducers"])
    repo.index.commit("base")
    fake_record(kb, "fake-bug")
    from xlakb.records import load_records

    assert changed_record_ids(kb, "HEAD", load_records(kb)) == []  # untracked files are not in git diff
    repo.index.add(["issues", "reproducers"])
    assert changed_record_ids(kb, "HEAD", load_records(kb)) == ["fake-bug"]
    common = ["--runner", "uv", "--find-links", str(wheelhouse), "--index-url", "none"]
    ok = run(kb, "verify", "--changed-since", "HEAD", *common)
    assert ok.returncode == 0, ok.stderr
    assert "fake-bug on torch_xla 2.5.1: reproduced (claimed reproduced) ok" in ok.stdout
    assert "fake-bug on torch_xla 2.6.0: not-reproduced (claimed not-reproduced) ok" in ok.stdout
    # a record whose claim the reproducer contradicts fails the PR
    path = kb / "issues" / "fake-bug.yaml"
    data = yaml.safe_load(path.read_text())
    data["versions"] = {"affected": ">=2.6,<2.7", "fixed_in": "2.7.0"}
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    bad = run(kb, "verify", "fake-bug", *common)
    assert bad.returncode == 1 and "MISMATCH" in bad.stdout and "did not behave as their records claim" in bad.stderr
    assert "unknown record id 'nope'" in run(kb, "verify", "nope", *common).stderr
    assert "git diff against 'no-such-ref' failed" in run(kb, "verify", "--changed-since", "no-such-ref", *common).stderr
