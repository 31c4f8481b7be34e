"""xlakb mine against a pytorch/xla-shaped git repository made in the test (tags, release branches, a
cherry-pick, upstream's CPU test script) and fake torch_xla wheels whose BUG is present in 2.4.0-2.5.1:
candidates found and classified, first releases by ancestry and by cherry-pick, a fix's test proved on the
release before it and the first with it, its record written with a 12-release matrix and a release
bisection, the table kept and taken up again; and xlakb's runner of one test on its own."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fakewheels import build_wheel
from xlakb.errors import XlakbError
from xlakb.mining import history, runscript, triggers
from xlakb.mining.mine import find

RUN_TESTS = """#!/bin/bash
set -exo pipefail
CDIR="$(cd "$(dirname "$0")" ; pwd -P)"
export PYTORCH_TEST_WITH_SLOW=1
export CPU_NUM_DEVICES=4
function run_test {
  python3 "$@"
}
function run_test_without_functionalization {
  XLA_DISABLE_FUNCTIONALIZATION=1 run_test "$@"
}
function run_xla_op_tests {
  run_test "$CDIR/test_bug.py"
  XLA_METRICS_FILE=/tmp/m.txt run_test "$CDIR/test_metrics.py"
  run_test_without_functionalization "$CDIR/test_func.py"
}
"""

FIXED_TEST = """\
import unittest
import torch_xla


class TestBug(unittest.TestCase):

  def test_old(self):
    self.assertTrue(True)

  @unittest.skipIf(False, "never")
  def test_bug_is_gone(self):
    # the fix made BUG go away
    self.assertNotEqual(torch_xla.BUG, "present", "BUG is still there")


if __name__ == "__main__":
  unittest.main()
"""

TPU_TEST = """\
import unittest
import torch_xla.runtime as xr


class TestTpu(unittest.TestCase):

  @unittest.skipIf(xr.device_type() != 'TPU', "TPU only")
  def test_tpu_thing(self):
    pass
"""


def git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "GIT_AUTHOR_DATE": "2024-01-01T00:00:00",
        "GIT_COMMITTER_DATE": "2024-01-01T00:00:00",
    }
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout.strip()


def commit(repo: Path, message: str, files: dict[str, str]) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def release(repo: Path, branch: str, tag: str) -> None:
    """Cut release branch ``branch`` here and tag its first commit ``tag`` (as upstream does)."""
    git(repo, "branch", branch)
    git(repo, "checkout", "-q", branch)
    commit(repo, f"Update version for {tag}", {"version.txt": tag})
    git(repo, "tag", tag)
    git(repo, "checkout", "-q", "master")


@pytest.fixture
def upstream(tmp_path) -> dict:
    """A pytorch/xla-shaped repository: v2.1.0 and v2.5.1 cut before the fix, v2.6.0 after it; a second fix
    cherry-picked onto r2.6 as v2.6.1 before v2.7.0 was cut; a docs commit; a TPU-only test."""
    repo = tmp_path / "xla"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "master")
    shas = {}
    shas["base"] = commit(
        repo,
        "Initial (#1)",
        {
            "test/run_tests.sh": RUN_TESTS,
            "test/test_bug.py": FIXED_TEST.replace(
                '  @unittest.skipIf(False, "never")\n  def test_bug_is_gone(self):\n    # the fix made BUG go away\n'
                '    self.assertNotEqual(torch_xla.BUG, "present", "BUG is still there")\n\n',
                "",
            ),
        },
    )
    release(repo, "r2.1", "v2.1.0")
    release(repo, "r2.5", "v2.5.1")
    shas["fix"] = commit(
        repo,
        "Fix the BUG attribute on XLA tensors (#101)",
        {"test/test_bug.py": FIXED_TEST, "torch_xla/csrc/tensor.cpp": "// BUG gone\n"},  # a fix changes what ships
    )
    shas["docs"] = commit(repo, "Update docs for the op guide (#102)", {"test/test_bug.py": FIXED_TEST + "# docs\n"})
    shas["tpu"] = commit(repo, "Fix a crash on TPU v5 (#103)", {"test/tpu/test_tpu_thing.py": TPU_TEST})
    release(repo, "r2.6", "v2.6.0")
    shas["second"] = commit(
        repo,
        "Fix wrong dtype of foo (#104)",
        {"test/test_metrics.py": "import unittest\n\n\nclass T(unittest.TestCase):\n\n  def test_dtype(self):\n    pass\n"},
    )
    git(repo, "checkout", "-q", "r2.6")
    commit(
        repo,
        "[Cherry-pick] Fix wrong dtype of foo (#104) (#105)",
        {"test/test_metrics.py": "import unittest\n\n\nclass T(unittest.TestCase):\n\n  def test_dtype(self):\n    pass\n"},
    )
    git(repo, "tag", "v2.6.1")
    git(repo, "checkout", "-q", "master")
    release(repo, "r2.7", "v2.7.0")
    commit(repo, "Later work (#106)", {"README.md": "x"})
    release(repo, "r2.9", "v2.9.0")
    return {"repo": repo, **shas}


def test_the_history_names_each_fix_and_its_first_release(upstream):
    hist = history.test_commits(upstream["repo"], "2.1.0", "2.9.0")
    subjects = [c.subject for c in hist.commits]
    assert subjects == [
        "Fix the BUG attribute on XLA tensors (#101)",
        "Update docs for the op guide (#102)",
        "Fix a crash on TPU v5 (#103)",
        "Fix wrong dtype of foo (#104)",
    ]
    shipped = history.first_releases(upstream["repo"], hist)
    assert shipped[upstream["fix"]].release == "2.6.0" and shipped[upstream["fix"]].how == "ancestry"
    second = shipped[upstream["second"]]
    assert second.release == "2.6.1" and second.how.startswith("cherry-pick ") and "PR #104" in second.how
    assert second.releases == ("2.6.1", "2.7.0", "2.9.0")


def test_candidates_are_classified_and_what_a_cpu_cannot_run_is_left_out(upstream):
    published = ["2.1.0", "2.5.1", "2.6.0", "2.6.1", "2.7.0", "2.9.0"]
    rows = {(m.subject, m.test): m for m in find(upstream["repo"], "2.1.0", "2.9.0", published)}
    fix = rows["Fix the BUG attribute on XLA tensors (#101)", "TestBug.test_bug_is_gone"]
    assert (fix.status, fix.cls, fix.before, fix.fixed_in, fix.pr) == ("pending", "bug", "2.5.1", "2.6.0", 101)
    assert fix.line == 10 and fix.env == {"PYTORCH_TEST_WITH_SLOW": "1", "CPU_NUM_DEVICES": "4"}
    assert ("Fix the BUG attribute on XLA tensors (#101)", "TestBug.test_old") not in rows  # not changed by the fix
    docs = rows["Update docs for the op guide (#102)", ""]
    assert docs.status == "excluded" and docs.reason.startswith("class docs-ci-infra")
    tpu = rows["Fix a crash on TPU v5 (#103)", "TestTpu.test_tpu_thing"]
    assert tpu.status == "excluded" and tpu.reason == "needs tpu"
    second = rows["Fix wrong dtype of foo (#104)", "T.test_dtype"]
    assert second.fixed_in == "2.6.1" and second.before == "2.6.0" and second.cls == "dtype-precision"
    assert second.env["XLA_METRICS_FILE"] == "/tmp/m.txt"  # what upstream's script puts before the file's line


def test_a_file_the_cpu_script_does_not_list_is_tried_with_its_common_settings(tmp_path):
    """A test file upstream's CPU script does not run (its TPU job may) is still a candidate: it runs with the
    settings the script exports for every test, and the probe decides (a skip is untestable)."""
    repo = tmp_path / "xla"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "master")
    commit(repo, "Initial (#1)", {"test/run_tests.sh": RUN_TESTS})
    release(repo, "r2.5", "v2.5.1")
    commit(
        repo,
        "Make sure an in-place update keeps its view (#201)",
        {"test/test_inplace_update.py": "import unittest\n\n\nclass T(unittest.TestCase):\n\n  def test_view(self):\n    pass\n"},
    )
    release(repo, "r2.6", "v2.6.0")
    rows = find(repo, "2.5.1", "2.6.0", ["2.5.1", "2.6.0"])
    [row] = [m for m in rows if m.test]
    assert (row.status, row.cls, row.test) == ("pending", "bug", "T.test_view")
    assert row.env == {"PYTORCH_TEST_WITH_SLOW": "1", "CPU_NUM_DEVICES": "4"}


@pytest.mark.parametrize(
    "subject, cls",
    [
        ("Make sure printing a tensor keeps its sharding (#5)", "bug"),
        ("should_donate should not propagate to the output data (#7585)", "bug"),
        ("Add missing shape metadata for the last replaced fx node (#6805)", "bug"),
        ("Workaround that einsum with FakeTensor input (#5597)", "bug"),
        ("Do manual type conversion for isnan op (#6110)", "dtype-precision"),
        ("`mul`: convert inputs to result type. (#7130)", "dtype-precision"),
        ("Added softmax to autocast policy (#8509)", "dtype-precision"),
        ("Add API to assemble CPU shards to a sharded tensor (#5630)", "other"),
        ("Introduce the `scan` interface (#7848)", "other"),
        ("Ensure the docs build on CI (#9)", "docs-ci-infra"),
    ],
)
def test_fix_words_beyond_fix_name_a_fix(subject, cls):
    assert triggers.classify(subject)[0] == cls


def test_upstream_test_script_is_read_for_each_file():
    assert runscript.test_env(RUN_TESTS, "test/test_func.py") == {
        "PYTORCH_TEST_WITH_SLOW": "1",
        "CPU_NUM_DEVICES": "4",
        "XLA_DISABLE_FUNCTIONALIZATION": "1",
    }
    assert runscript.test_env(RUN_TESTS, "test/test_never.py") is None
    # upstream exports `TORCH_TEST_DEVICES="$CDIR/pytorch_test_base.py"` (PyTorch's device-generic tests make
    # their XLA classes from it): $CDIR is the test folder a probe's bundle holds; other paths are the CI's own
    script = (
        'CDIR="$(cd "$(dirname "$0")" ; pwd -P)"\nexport TORCH_TEST_DEVICES="$CDIR/pytorch_test_base.py"\n'
        'export XLA_CACHE_DIR="/home/ci/.cache"\nexport PYTORCH_TEST_WITH_SLOW=1\n'
    )
    assert runscript.exported(script) == {"TORCH_TEST_DEVICES": "test/pytorch_test_base.py", "PYTORCH_TEST_WITH_SLOW": "1"}


def test_what_a_test_needs_counts_what_its_helpers_import():
    """pytorch/xla #9311: test/test_profiler.py imports the helper test_profile_mp_mnist, which imports
    torchvision; test/dynamo/test_dynamo_dynamic_shape.py imports examples/decoder_only_model.py."""
    from xlakb.mining.mine import _imports_with_helpers

    tree = {
        "test/test_profile_mp_mnist.py": "import args_parse\nimport torchvision\n",
        "test/args_parse.py": "import argparse\n",
        "examples/decoder_only_model.py": "import jax\n",
    }
    assert {"torchvision", "argparse", "unittest"} <= _imports_with_helpers(
        "import unittest\nimport test_profile_mp_mnist\n", "test/test_profiler.py", tree.get
    )
    assert "jax" in _imports_with_helpers("from decoder_only_model import Model\n", "test/dynamo/test_x.py", tree.get)
    assert _imports_with_helpers("import os\n", "test/test_y.py", tree.get) == {"os"}
    # a helper that imports tensorflow only inside a function, or guarded, does not make its tests need it
    # (test/stablehlo/utils.py's has_tf_package(), #6592)
    tree["test/stablehlo/utils.py"] = (
        "import functools\ntry:\n  import jax\nexcept ImportError:\n  jax = None\n\n"
        "def has_tf_package():\n  try:\n    import tensorflow\n    return True\n"
        "  except ImportError:\n    return False\n"
    )
    assert _imports_with_helpers("from utils import has_tf_package\n", "test/stablehlo/test_pt2e_qdq.py", tree.get) == {
        "utils",
        "functools",
    }


def test_changed_lines_map_to_their_test_functions():
    source = FIXED_TEST
    first = source.splitlines().index('  @unittest.skipIf(False, "never")') + 1
    found = triggers.changed_tests(source, "test/test_bug.py", [first])  # a decorator line counts
    assert [t.test for t in found] == ["TestBug.test_bug_is_gone"] and found[0].first_line == first
    assert triggers.changed_tests(source, "test/test_bug.py", [1]) == []  # an import: no test function
    assert triggers.classify('Revert "Fix x" (#9)') == ("revert", False)
    assert triggers.classify("Add data-type promotion to `stack`. (#7091)") == ("dtype-precision", True)


def test_a_fix_that_only_takes_a_skip_off_a_test_names_that_test(tmp_path):
    """Upstream's op fixes often change no test line but remove the `@unittest.skip` above the test that now
    passes (pytorch/xla #6110, #6214): the removed line belongs to that test in the copy before the fix. A
    line removed from a test's body counts too; a test removed altogether is no trigger."""
    repo = tmp_path / "xla"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "master")
    before = (
        "import unittest\n\n\nclass AtenOpTest(unittest.TestCase):\n\n  def test_a(self):\n    x = 1\n"
        "    self.assertTrue(x)\n\n  @unittest.skip\n  def test_b(self):\n    pass\n\n  def test_c(self):\n"
        "    y = 2\n    self.assertTrue(y)\n\n  def test_gone(self):\n    pass\n"
    )
    commit(repo, "Initial (#1)", {"test/test_core_aten_ops.py": before})
    after = (
        before.replace("  @unittest.skip\n", "").replace("    y = 2\n", "").replace("\n  def test_gone(self):\n    pass\n", "")
    )
    sha = commit(repo, "Do manual type conversion for the op (#2)", {"test/test_core_aten_ops.py": after})
    added, removed = history.changed_lines(repo, sha, "test/test_core_aten_ops.py")
    assert added == [] and removed
    parent = history.show_file(repo, f"{sha}^1", "test/test_core_aten_ops.py")
    found = triggers.changed_tests(after, "test/test_core_aten_ops.py", added, parent, removed)
    assert [t.test for t in found] == ["AtenOpTest.test_b", "AtenOpTest.test_c"]
    assert triggers.changed_tests(after, "test/test_core_aten_ops.py", added) == []  # the new copy alone: none


def test_a_moved_test_file_changes_only_the_tests_its_diff_touches(tmp_path):
    """pytorch/xla #7017 moved test_mark_pattern.py to test_composite.py (390 lines, none changed): a moved
    file is no new file; only a test whose lines the move changed is the commit's, and a removed line is
    read in the copy at the old path."""
    repo = tmp_path / "xla"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "master")
    body = "".join(f"  def test_{n}(self):\n    x = {n}\n    self.assertTrue(x)\n\n" for n in range(1, 9))
    before = "import unittest\n\n\nclass T(unittest.TestCase):\n\n  @unittest.skip\n" + body
    commit(repo, "Initial (#1)", {"test/test_old_name.py": before})
    git(repo, "mv", "test/test_old_name.py", "test/test_new_name.py")
    sha = commit(repo, "Support a new thing (#2)", {})
    assert history.renamed_from(repo, sha, "test/test_new_name.py") == "test/test_old_name.py"
    assert history.changed_lines(repo, sha, "test/test_new_name.py") == ([], [])
    after = before.replace("  @unittest.skip\n", "").replace("x = 5\n", "x = 50\n")
    git(repo, "mv", "test/test_new_name.py", "test/test_third.py")
    sha = commit(repo, "Fix the op (#3)", {"test/test_third.py": after})
    added, removed = history.changed_lines(repo, sha, "test/test_third.py")
    parent = history.show_file(repo, f"{sha}^1", history.renamed_from(repo, sha, "test/test_third.py"))
    found = triggers.changed_tests(after, "test/test_third.py", added, parent, removed)
    assert [t.test for t in found] == ["T.test_1", "T.test_5"]
    assert history.renamed_from(repo, sha, "test/test_other.py") is None


def test_a_fix_reverted_before_it_shipped_is_not_the_fix_its_re_land_is(tmp_path):
    """pytorch/xla #6342 was reverted (#6377) and re-applied (#6387) before v2.3.0 was cut: the release has
    the re-land's change, so the re-land is the fix, and the reverted original is left out, whichever way the
    revert names it (git's "This reverts commit", a quoted subject cut short by GitHub). A fix reverted only
    after its release shipped it stays a fix of that release."""
    repo = tmp_path / "xla"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "master")
    test = lambda n: f"import unittest\n\n\nclass T(unittest.TestCase):\n\n  def test_op(self):\n    x = {n}\n"  # noqa: E731
    commit(repo, "Initial (#1)", {"test/run_tests.sh": RUN_TESTS, "test/test_ops.py": test(0)})
    release(repo, "r2.1", "v2.1.0")
    first = commit(repo, "Fix some more core aten ops (#10)", {"test/test_ops.py": test(1)})
    commit(repo, 'Revert "Fix some more core aten ops (#10)" (#11)', {"test/test_ops.py": test(0)})
    commit(repo, 'Reapply "Fix some more core aten ops (#10)" (#11) (#12)', {"test/test_ops.py": test(1)})
    long = commit(
        repo, "Fix the wrong result of a long-named op in the lowering of everything (#13)", {"test/test_ops.py": test(2)}
    )
    git(repo, "revert", "--no-edit", long)
    git(
        repo,
        "commit",
        "-q",
        "--amend",
        "-m",
        f'Revert "Fix the wrong result of a long-named op in the lowering\u2026 (#14)\n\nThis reverts commit {long}.',
    )
    commit(
        repo,
        "Re-land: Fix the wrong result of a long-named op in the lowering of everything (#15)",
        {"test/test_ops.py": test(2)},
    )
    release(repo, "r2.2", "v2.2.0")
    shipped = commit(repo, "Fix a crash in the op (#16)", {"test/test_ops.py": test(3)})
    release(repo, "r2.3", "v2.3.0")
    commit(repo, 'Revert "Fix a crash in the op" (#17)', {"test/test_ops.py": test(2)})
    release(repo, "r2.4", "v2.4.0")
    undone = history.reverts(history.test_commits(repo, "2.1.0", "2.4.0"))
    assert first in undone and long in undone and shipped in undone
    rows = {m.pr: m for m in find(repo, "2.1.0", "2.4.0", ["2.1.0", "2.2.0", "2.3.0", "2.4.0"])}
    assert rows[10].status == rows[13].status == "excluded" and "reverted by" in rows[10].reason
    assert rows[12].status == rows[15].status == "pending" and rows[15].cls == "bug"  # the re-lands
    assert rows[16].status == "pending" and rows[16].fixed_in == "2.3.0"  # reverted after 2.3.0 shipped it
    assert rows[11].status == rows[17].status == "excluded" and rows[11].cls == "revert"


# -- xlakb's runner of one test, on its own ------------------------------------------------------------------
RUNNER_CASES = {
    "passes": ("self.assertTrue(True)", 0, "XLAKB-TRIGGER PASSED"),
    "fails": ("self.assertEqual(1, 2)", 1, "XLAKB-TRIGGER FAILED T.test_it: AssertionError: 1 != 2"),
    "raises": ("raise RuntimeError('bad lowering')", 1, "XLAKB-TRIGGER ERROR T.test_it: RuntimeError: bad lowering"),
    "crashes": ("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", 1, "XLAKB-TRIGGER CRASHED T.test_it: signal 11"),
    "skipped": ("self.skipTest('TPU only')", 125, "untestable: skipped: TPU only"),
    "missing-api": ("import torch; torch.no_such_api()", 125, "untestable: the test calls an API this release lacks"),
    # what the release before a fix says when the fix's test uses what the fix added (seen mining: a new
    # binding, a new keyword of an op, a new argument, a class attribute the fix's patch sets)
    "missing-binding": (
        "raise AttributeError(\"module '_XLAC' has no attribute '_get_ir_debug'\")",
        125,
        "untestable: the test calls an API this release lacks",
    ),
    "missing-keyword": (
        "raise RuntimeError(\"Unknown keyword argument 'int4_weight' for operator 'xla::quantized_matmul'\")",
        125,
        "untestable: the test calls an API this release lacks",
    ),
    "missing-argument": (
        "raise TypeError('quantized_matmul_xla() takes from 3 to 4 positional arguments but 5 were given')",
        125,
        "untestable: the test calls an API this release lacks",
    ),
    "missing-class-attribute": (
        "raise AttributeError(\"type object 'GRU' has no attribute '_orig'\")",
        125,
        "untestable: the test calls an API this release lacks",
    ),
    # a method the fix added to a torch_xla class (XLAShardedTensor.redistribute): an API, not the bug
    "missing-method": (
        "X = type('XLAShardedTensor', (), {'__module__': 'torch_xla.distributed.spmd'}); X().redistribute()",
        125,
        "untestable: the test calls an API this release lacks",
    ),
    "missing-method-in-subtest": (
        "X = type('XLAShardedTensor', (), {'__module__': 'torch_xla.distributed.spmd'})\n"
        "    for p in (1, 2):\n      with self.subTest(placement=p):\n        X().redistribute()",
        125,
        "untestable: the test calls an API this release lacks",
    ),
    # ... but an attribute of None, or a property of such a class that failed, is the test's failure
    "none-attribute": ("None.device", 1, "XLAKB-TRIGGER ERROR T.test_it: AttributeError: 'NoneType' object has no attribute"),
    "failing-property": (
        'ns = {}; exec(compile(\'class S:\\n  __module__ = "torch_xla.x"\\n  @property\\n  def spec(self):\\n'
        "    return self.gone\\n', '/site-packages/torch_xla/x.py', 'exec'), ns); ns['S']().spec",
        1,
        "XLAKB-TRIGGER ERROR T.test_it: AttributeError: 'S' object has no attribute 'gone'",
    ),
    # upstream's core-aten-op tests also assert the op did not run through the CPU fallback (#6588): that alone
    # failing is speed; with the export failing too, the export's error is the failure
    # pytorch/xla #9086 renamed "mark_step" to "sync" in PT_XLA_DEBUG's report: a test of that wording is words
    "wording-only": (
        "self.assertIn('sync in parallel loader at step end', 'Execution Analysis:   mark_step in parallel loader at step end')",
        0,
        "XLAKB-TRIGGER PASSED T.test_it (only its checks of a message's wording",
    ),
    "short-strings-are-behaviour": (
        "self.assertEqual('f16', 'f64')",
        1,
        "XLAKB-TRIGGER FAILED T.test_it: AssertionError: 'f16' != 'f64'",
    ),
    "hlo-text-is-behaviour": (
        "self.assertIn('%add = f32[] add(', 'HloModule m, entry_computation_layout={}')",
        1,
        "XLAKB-TRIGGER FAILED T.test_it: AssertionError: '%add = f32[] add(' not found in",
    ),
    "fallback-only": (
        "with self.subTest('torch_xla_metric'):\n      self.assertNotIn('aten::reflection_pad1d', "
        "'Metric: X\\nCounter: aten::reflection_pad1d\\n  Value: 1')",
        0,
        "XLAKB-TRIGGER PASSED T.test_it (only its checks that no op ran through the CPU fallback failed",
    ),
    "fallback-and-export": (
        "with self.subTest('torch_xla_metric'):\n      self.assertNotIn('aten::pad', 'Metric: X aten::pad')\n"
        "    with self.subTest('can_convert_to_stablehlo'):\n      raise RuntimeError("
        "'This model contains ops not capturable by Pytorch/XLA: aten::pad=1')",
        1,
        "XLAKB-TRIGGER ERROR T.test_it: RuntimeError: This model contains ops not capturable",
    ),
    # a name a star import of a later release would bring (from torch_xla.experimental.x import *): an API
    "unknown-name": ("replace_dynamic_view_with_xla_op(None)", 125, "untestable: the test calls an API this release lacks"),
    "unknown-name-in-torch-xla": (
        "ns = {}; exec(compile('def f():\\n  return gone_helper\\n', '/site-packages/torch_xla/x.py', 'exec'), ns); ns['f']()",
        1,
        "XLAKB-TRIGGER ERROR T.test_it: NameError: name 'gone_helper'",
    ),
    "pybind-signature": (
        "raise TypeError('__init__(): incompatible constructor arguments. The following argument types')",
        125,
        "untestable: the test calls an API this release lacks",
    ),
}


@pytest.mark.parametrize("case", list(RUNNER_CASES))
def test_the_runner_of_one_test_speaks_in_exit_codes(tmp_path, case):
    body, code, last = RUNNER_CASES[case]
    (tmp_path / "test").mkdir()
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "torch.py").write_text("")
    (tmp_path / "test" / "test_x.py").write_text(
        f"import unittest\n\n\nclass T(unittest.TestCase):\n\n  def test_it(self):\n    {body}\n\n  def test_other(self):\n"
        "    raise SystemExit('only the named test runs')\n"
    )
    runner = Path(__file__).resolve().parent.parent / "src" / "xlakb" / "data" / "trigger_runner.py"
    r = subprocess.run(
        [sys.executable, str(runner), "test/test_x.py", "T.test_it"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path / "site")},
        timeout=60,
    )
    out = r.stdout.strip().splitlines()
    assert r.returncode == code, r.stdout + r.stderr
    assert out[-1].startswith(last), out[-3:]


# -- a careful maintainer's reading: the same message, raised by the test's own code or by the release's ---------
RELEASE_CODE = {
    "torch_xla/__init__.py": "",
    "torch_xla/_XLAC.py": (
        "def _xla_mark_sharding(*args):\n"
        "  raise TypeError('_xla_mark_sharding(): incompatible function arguments. The following "
        "argument types are supported')\n"
    ),
    "torch_xla/sharding.py": (
        "from torch_xla import _XLAC\n\n\ndef mark_sharding(t, spec, *, new=None):\n"
        "  return _XLAC._xla_mark_sharding(t, spec, 'extra')\n\n\n"
        "def helper(t):\n  return old_helper(t, unknown_keyword=1)\n\n\n"
        "def old_helper(t):\n  return t\n\n\n"
        "def uses_gone_binding():\n  return _XLAC._xla_gone()\n\n\n"
        "def through_dispatch():\n  import torch._ops\n  return torch._ops.call(1, int4_weight=True)\n"
    ),
    "torch/__init__.py": ("def __getattr__(name):\n  raise AttributeError(f\"module 'torch' has no attribute '{name}'\")\n"),
    "torch/_ops.py": (
        "def call(*args, **kwargs):\n  for k in kwargs:\n"
        "    raise RuntimeError(f\"Unknown keyword argument '{k}' for operator 'xla::quantized_matmul'\")\n"
    ),
}


@pytest.mark.parametrize(
    "body, code, last",
    [
        # the test's own call of an API with a keyword, a binding or an argument the release lacks: untestable
        ("sharding.old_helper(1, unknown_keyword=1)", 125, "untestable: the test calls an API this release lacks"),
        ("torch_xla._XLAC._xla_new_binding()", 125, "untestable: the test calls an API this release lacks"),
        ("torch._ops.call(1, int4_weight=True)", 125, "untestable: the test calls an API this release lacks"),
        # a name the release lacks, found missing by a module's lookup hook or by unittest.mock's patching
        ("torch.uint16", 125, "untestable: the test calls an API this release lacks"),
        (
            "from unittest import mock\n    with mock.patch.object(torch_xla._XLAC, '_xla_new', lambda: 1):\n      pass",
            125,
            "untestable: the test calls an API this release lacks",
        ),
        # the same messages raised from the release's own code: the release's failure
        (
            "sharding.mark_sharding(1, ())",
            1,
            "XLAKB-TRIGGER ERROR T.test_it: TypeError: _xla_mark_sharding(): incompatible function arguments",
        ),
        ("sharding.helper(1)", 1, "XLAKB-TRIGGER ERROR T.test_it: TypeError: old_helper() got an unexpected keyword argument"),
        (
            "sharding.uses_gone_binding()",
            1,
            "XLAKB-TRIGGER ERROR T.test_it: AttributeError: module 'torch_xla._XLAC' has no attribute '_xla_gone'",
        ),
        ("sharding.through_dispatch()", 1, "XLAKB-TRIGGER ERROR T.test_it: RuntimeError: Unknown keyword argument"),
    ],
)
def test_an_api_gap_is_the_tests_own_call_an_error_of_the_releases_code_is_its_failure(tmp_path, body, code, last):
    site = tmp_path / "site"
    for rel, text in RELEASE_CODE.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text)
    source = (
        "import unittest\nimport torch\nimport torch._ops\nimport torch_xla\nimport torch_xla._XLAC\n"
        "from torch_xla import sharding\n\n\nclass T(unittest.TestCase):\n\n"
        f"  def test_it(self):\n    {body}\n"
    )
    r = _run_one(tmp_path, source, "T.test_it", pythonpath=site)
    assert r.returncode == code, r.stdout + r.stderr
    assert r.stdout.strip().splitlines()[-1].startswith(last), r.stdout[-600:]


@pytest.mark.parametrize(
    "where, sig, code, last",
    [
        ("test", "SIGABRT", 1, "XLAKB-TRIGGER CRASHED T.test_it: signal 6 (SIGABRT)"),
        ("test", "SIGSEGV", 1, "XLAKB-TRIGGER CRASHED T.test_it: signal 11 (SIGSEGV)"),
        # the out-of-memory killer's SIGKILL, a SIGTERM: the system's doing, never a proof
        ("test", "SIGKILL", 3, "XLAKB-TRIGGER KILLED T.test_it: signal 9 (SIGKILL) sent from outside the test"),
        ("test", "SIGTERM", 3, "XLAKB-TRIGGER KILLED T.test_it: signal 15 (SIGTERM) sent from outside the test"),
        # a crash while the test module is imported proves nothing about its tests
        ("module", "SIGSEGV", 3, "XLAKB-TRIGGER BROKEN T.test_it: signal 11 (SIGSEGV) while the test module was imported"),
    ],
)
def test_a_crash_signal_of_the_test_is_a_failure_a_kill_from_outside_is_not(tmp_path, where, sig, code, last):
    kill = f"import os, signal; os.kill(os.getpid(), signal.{sig})"
    source = (
        kill + "\n" if where == "module" else ""
    ) + f"import unittest\n\n\nclass T(unittest.TestCase):\n\n  def test_it(self):\n    {kill if where == 'test' else 'pass'}\n"
    r = _run_one(tmp_path, source, "T.test_it")
    assert r.returncode == code, r.stdout + r.stderr
    assert r.stdout.strip().splitlines()[-1].startswith(last), r.stdout[-600:]


@pytest.mark.parametrize(
    "expected, actual, code",
    [
        # the same message in other words (PT_XLA_DEBUG's "mark_step" renamed "sync"): words, not behaviour
        ("sync in parallel loader at step end", "Execution Analysis: mark_step in parallel loader at step end", 0),
        ("Compilation Cause: user sync", "Compilation Cause: user mark_step", 0),
        # a negation, a number or most of the words differ: what the text says differs
        ("graph is not cached", "Execution Analysis: graph is cached", 1),
        ("graph is cached again", "Execution Analysis: graph is cached 2 times", 1),
        ("most frequent graph hash", "Execution Analysis: compile took long", 1),
    ],
)
def test_a_wording_check_passes_only_where_the_texts_say_the_same(tmp_path, expected, actual, code):
    source = (
        f"import unittest\n\n\nclass T(unittest.TestCase):\n\n  def test_it(self):\n    self.assertIn({expected!r}, {actual!r})\n"
    )
    r = _run_one(tmp_path, source, "T.test_it")
    assert r.returncode == code, r.stdout + r.stderr


def _run_one(tmp_path, source: str, test: str, pythonpath: Path | None = None):
    (tmp_path / "test").mkdir(exist_ok=True)
    (tmp_path / "test" / "test_y.py").write_text(source)
    runner = Path(__file__).resolve().parent.parent / "src" / "xlakb" / "data" / "trigger_runner.py"
    env = {**os.environ, "PYTHONPATH": str(pythonpath)} if pythonpath else None
    return subprocess.run(
        [sys.executable, str(runner), "test/test_y.py", test], cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env
    )


def test_a_package_the_environment_lacks_is_the_runners_problem_not_the_bugs(tmp_path):
    """torch 2.9 no longer brings setuptools: a test module that imports it cannot be judged there (3); a
    torch_xla module missing is an API the release lacks (125); an error raised by the module is the bug's (1)."""
    body = "import unittest\n\n\nclass T(unittest.TestCase):\n\n  def test_it(self):\n    pass\n"
    r = _run_one(tmp_path, "import setuptools_gone_here\n" + body, "T.test_it")
    assert r.returncode == 3, r.stdout + r.stderr
    assert (
        r.stdout.strip()
        .splitlines()[-1]
        .startswith(
            "XLAKB-TRIGGER BROKEN T.test_it: the test module imports a package this environment lacks: ModuleNotFoundError"
        )
    )
    r = _run_one(tmp_path, "import torch_xla.no_such_module\n" + body, "T.test_it")
    assert r.returncode == 125 and "untestable: the test module needs an API this release lacks" in r.stdout
    # a module that cannot be imported proves nothing about its tests: no test of it ran
    r = _run_one(tmp_path, "raise ValueError('module-level bug')\n" + body, "T.test_it")
    assert (
        r.returncode == 3
        and (
            "XLAKB-TRIGGER BROKEN T.test_it: the test module cannot be imported on this release, "
            "which proves nothing about its tests: ValueError: module-level bug"
        )
        in r.stdout
    )


DEFERRED_MODULE = (
    "import unittest\n"
    "import torch_xla\n"
    "import torch_xla.utils.dlpack as xdlpack\n"  # a module of a later release
    "import torch_xla.utils.dlpack as xdlpack, torch_xla.experimental.scan as xscan\n"  # bound twice, on one line
    "import torch_xla.backends as backends\n"  # another
    "from torch_xla.experimental.scan import scan, value_and_grad_partitioned\n"  # a name of a later release
    "try:\n  from torch_xla.experimental.scan import guarded\nexcept ImportError:\n  guarded = None\n"
    "{extra}\n\n"
    "class T(unittest.TestCase):\n\n"
    "  def test_plain(self):\n    self.assertEqual(scan(), 1)\n    self.assertIsNone(guarded)\n"
    "    import torch_xla.experimental.scan as s\n    self.assertFalse(hasattr(s, 'value_and_grad_partitioned'))\n\n"
    "  def test_fails(self):\n    self.assertEqual(scan(), 2)\n\n"
    "  def test_uses_module(self):\n    xdlpack.to_dlpack(1)\n\n"
    "  def test_uses_name(self):\n    self.assertEqual(value_and_grad_partitioned(1), 1)\n\n"
    "  def test_swallows_it(self):\n    try:\n      backends.set_mat_mul_precision('high')\n"
    "    except Exception:\n      pass\n\n"
    # a test that only lists or compares a stand-in never calls it, yet its verdict would be the stand-in's
    "  def test_lists_it(self):\n    self.assertIn('forward', dir(value_and_grad_partitioned))\n\n"
    "  def test_compares_it(self):\n    self.assertIsNot(scan, value_and_grad_partitioned)\n\n"
    "  def _helper(self):\n    return [xdlpack]\n\n"
    "  def test_through_a_helper(self):\n    self.assertEqual(len(self._helper()), 1)\n\n"
    "  def test_reaches_it_unseen(self):\n    self.assertEqual(getattr(globals()['xd' + 'lpack'], 'x'), 1)\n\n"
    # the release's own error, raised before the stand-in is reached, is the failure
    "  def test_fails_before_it(self):\n    import torch_xla.experimental.scan as s\n    s.boom()\n"
    "    self.assertEqual(value_and_grad_partitioned(1), 1)\n"
)


@pytest.mark.parametrize(
    "test, extra, code, last",
    [
        ("T.test_plain", "", 0, "XLAKB-TRIGGER PASSED T.test_plain"),
        ("T.test_fails", "", 1, "XLAKB-TRIGGER FAILED T.test_fails: AssertionError: 1 != 2"),
        ("T.test_uses_module", "", 125, "untestable: the test calls an API this release lacks: torch_xla.utils.dlpack.to_dlpack"),
        (
            "T.test_uses_name",
            "",
            125,
            "untestable: the test calls an API this release lacks: torch_xla.experimental.scan.value_and_grad_partitioned",
        ),
        ("T.test_swallows_it", "", 125, "untestable: the test calls an API this release lacks: torch_xla.backends"),
        ("T.test_lists_it", "", 125, "untestable: the test uses value_and_grad_partitioned, which this release lacks"),
        ("T.test_compares_it", "", 125, "untestable: the test uses value_and_grad_partitioned, which this release lacks"),
        ("T.test_through_a_helper", "", 125, "untestable: the test uses xdlpack, which this release lacks"),
        ("T.test_fails_before_it", "", 1, "XLAKB-TRIGGER ERROR T.test_fails_before_it: RuntimeError: Error while lowering"),
        ("T.test_reaches_it_unseen", "", 125, "untestable: the test calls an API this release lacks: torch_xla.utils.dlpack.x"),
        ("T.test_plain", "value_and_grad_partitioned(0)", 125, "untestable: the test module needs an API this release lacks"),
        (
            "T.test_plain",
            "from torch_xla.utils.dlpack import *",
            125,
            "untestable: the test module needs an API this release lacks: torch_xla.utils.dlpack",
        ),
        (
            "T.test_fails",
            "from torch_xla.experimental.scan import *\nscan_all = scan_all_later",
            125,
            "untestable: the test module needs an API this release lacks",
        ),
        # a plain import is imported for what importing does (registering an op): no stand-in can do that
        (
            "T.test_plain",
            "import torch_xla.experimental.registers_an_op",
            125,
            "untestable: the test module needs an API this release lacks: ModuleNotFoundError: No module named "
            "'torch_xla.experimental.registers_an_op'",
        ),
        (
            "T.test_plain",
            "raise ValueError('the module fails on its own')",
            3,
            "XLAKB-TRIGGER BROKEN T.test_plain: the test module cannot be imported on this release",
        ),
    ],
)
def test_a_name_the_release_lacks_is_untestable_only_for_a_test_that_uses_it(tmp_path, test, extra, code, last):
    """A test module imports modules and names of later releases (test_operations.py's torch_xla.utils.dlpack):
    its other tests run as written, a test that uses one (even inside a try) is untestable, and the torch_xla
    modules themselves are left as the release has them."""
    site = tmp_path / "site"
    for pkg in ("torch_xla", "torch_xla/utils", "torch_xla/experimental"):
        (site / pkg).mkdir(parents=True)
        (site / pkg / "__init__.py").write_text("")
    (site / "torch_xla" / "experimental" / "scan.py").write_text(
        "def scan():\n  return 1\n\n\ndef boom():\n  raise RuntimeError('Error while lowering: [] aten::view')\n"
    )
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "test_y.py").write_text(DEFERRED_MODULE.format(extra=extra))
    runner = Path(__file__).resolve().parent.parent / "src" / "xlakb" / "data" / "trigger_runner.py"
    r = subprocess.run(
        [sys.executable, str(runner), "test/test_y.py", test],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(site)},
        timeout=60,
    )
    assert r.returncode == code, r.stdout + r.stderr
    assert r.stdout.strip().splitlines()[-1].startswith(last), r.stdout[-600:]


def test_a_device_generic_test_runs_as_its_xla_instances(tmp_path):
    """PyTorch's instantiate_device_type_tests replaces TestOps by TestOpsXLA with test_put_xla_<dtype>: the
    runner runs those (and not test_put_accumulate_xla), and a name it cannot find is its own problem (3),
    never the bug's (1)."""
    source = (
        "import unittest\n\n\nclass TestOpsXLA(unittest.TestCase):\n\n"
        "  def test_put_xla_float32(self):\n    pass\n\n  def test_put_xla_int64(self):\n    self.assertEqual(1, 2)\n\n"
        "  def test_put_accumulate_xla_float32(self):\n    raise SystemExit('not this one')\n"
    )
    r = _run_one(tmp_path, source, "TestOps.test_put")
    assert (
        r.returncode == 1 and r.stdout.strip().splitlines()[-1] == "XLAKB-TRIGGER FAILED TestOps.test_put: AssertionError: 1 != 2"
    )
    assert "Ran 2 tests" in r.stdout + r.stderr
    r = _run_one(tmp_path, source, "TestOps.test_missing")
    assert r.returncode == 3 and "XLAKB-TRIGGER BROKEN TestOps.test_missing: no such test" in r.stdout


def test_a_parameterised_test_runs_as_its_cases(tmp_path):
    """absl's parameterized (and the parameterized package) replace test_fp8 by one method per case,
    test_fp80 and test_fp81 or test_fp8_<name>, each a functools.wraps wrapper of the test: the runner runs
    those cases, not test_fp8_hlo (another parameterised test whose name starts the same)."""
    source = (
        "import functools\nimport unittest\n\n\n"
        "def cases(*values):\n"
        "  def deco(fn):\n"
        "    made = {}\n"
        "    for i, v in enumerate(values):\n"
        "      @functools.wraps(fn)\n"
        "      def case(self, v=v):\n"
        "        return fn(self, v)\n"
        "      made[f'{fn.__name__}{i}'] = case\n"
        "    return made\n"
        "  return deco\n\n\n"
        "class Fp8Test(unittest.TestCase):\n  pass\n\n\n"
        "def test_fp8(self, v):\n  self.assertEqual(v, 1)\n\n"
        "def test_fp8_hlo(self, v):\n  raise SystemExit('not this one')\n\n"
        "for name, fn in {**cases(1, 2)(test_fp8), **cases(3)(test_fp8_hlo)}.items():\n"
        "  setattr(Fp8Test, name, fn)\n"
    )
    r = _run_one(tmp_path, source, "Fp8Test.test_fp8")
    assert (
        r.returncode == 1 and r.stdout.strip().splitlines()[-1] == "XLAKB-TRIGGER FAILED Fp8Test.test_fp8: AssertionError: 2 != 1"
    )
    assert "Ran 2 tests" in r.stdout + r.stderr


def test_probes_in_threads_refresh_a_cached_bundle_together(upstream, tmp_path):
    """A bundle cached by an older xlakb gets this xlakb's runner; probes running in threads of one process
    (-j 2) may refresh it at the same moment and must not trip over each other's temporary file."""
    from threads import at_once
    from xlakb.mining.bundle import RUNNER, bundle, runner_bytes

    trigger = {"repo": "pytorch/xla", "commit": upstream["fix"], "path": "test/test_bug.py", "test": "TestBug.test_bug_is_gone"}
    runner, _ = bundle(trigger, tmp_path, upstream["repo"])
    errors = []
    for _ in range(5):
        runner.write_text("# an older runner\n")
        errors += at_once(lambda: bundle(trigger, tmp_path, upstream["repo"]))
    assert errors == [] and runner.read_bytes() == runner_bytes() and runner.name == RUNNER
    assert not [p for p in runner.parent.iterdir() if p.name.startswith(f".{RUNNER}.")]  # no temporary file left


def test_a_bundle_holds_the_example_models_upstreams_tests_import(upstream, tmp_path):
    """Upstream's dynamo tests put `examples/` on sys.path (decoder_only_model.py): a bundle holds it beside
    `test/`; a bundle an older xlakb made of `test/` alone is made again."""
    import json as json_

    from xlakb.mining.bundle import MARKER, bundle

    repo = upstream["repo"]
    (repo / "examples" / "scan").mkdir(parents=True)
    (repo / "examples" / "scan" / "README.md").symlink_to("../../docs/scan.md")  # upstream links docs there
    sha = commit(repo, "Fix the decoder (#107)", {"examples/decoder_only_model.py": "class DecoderOnlyModel: pass\n"})
    trigger = {"repo": "pytorch/xla", "commit": sha, "path": "test/test_bug.py", "test": "TestBug.test_bug_is_gone"}
    runner, _ = bundle(trigger, tmp_path, repo)
    assert (runner.parent / "examples" / "decoder_only_model.py").is_file() and (runner.parent / "test" / "test_bug.py").is_file()
    marker = runner.parent / MARKER
    marker.write_text(json_.dumps({"repo": "pytorch/xla", "commit": sha}) + "\n")  # as an older xlakb left it
    (runner.parent / "examples" / "decoder_only_model.py").unlink()
    runner, _ = bundle(trigger, tmp_path, repo)
    assert (runner.parent / "examples" / "decoder_only_model.py").is_file()
    without = {**trigger, "commit": upstream["fix"]}  # a commit with no examples/ folder: test/ alone
    runner, _ = bundle(without, tmp_path, repo)
    assert (runner.parent / "test" / "test_bug.py").is_file() and not (runner.parent / "examples").exists()


# -- the whole command, fake wheels ---------------------------------------------------------------------------
@pytest.fixture
def test_packages(tmp_path) -> Path:
    house = tmp_path / "testpkgs"
    for name in ("expecttest", "absl-py", "pytest"):
        build_wheel(house, name, "1.0", {f"{name.replace('-', '_')}_fake/__init__.py": ""})
    return house


def test_mine_proves_a_fix_and_writes_its_record(kb, upstream, wheelhouse, test_packages, monkeypatch):
    from xlakb.cli import main

    monkeypatch.delenv("XLAKB_XLA_REPO", raising=False)
    argv = [
        "--root",
        str(kb),
        "mine",
        "--repo",
        str(upstream["repo"]),
        "--runner",
        "uv",
        "-j",
        "2",
        "-q",
        "--find-links",
        str(wheelhouse),
        "--find-links",
        str(test_packages),
        "--index-url",
        "none",
    ]
    assert main(argv) == 0
    table = json.loads((kb / "mined" / "candidates.json").read_text())
    rows = {(r["subject"], r["test"]): r for r in table["candidates"]}
    fix = rows["Fix the BUG attribute on XLA tensors (#101)", "TestBug.test_bug_is_gone"]
    assert fix["status"] == "proved", fix
    assert fix["failure"].startswith("XLAKB-TRIGGER FAILED TestBug.test_bug_is_gone: AssertionError: 'present' == 'present'")
    assert fix["record"] == "mined-pr101-bug-is-gone"
    # the verdict before the fix keeps the runner's whole line (its error), not only what the signature matched
    assert fix["verdicts"][fix["before"]] == ["reproduced", "exit 1: " + fix["failure"]], fix["verdicts"]
    second = rows["Fix wrong dtype of foo (#104)", "T.test_dtype"]
    assert second["status"] == "passes-before" and second["record"] == ""  # kept, with why
    assert not (kb / "issues" / "mined-pr101-bug-is-gone.yaml").exists()  # a draft until a person writes it up
    rec = yaml.safe_load((kb / "mined" / "drafts" / "mined-pr101-bug-is-gone.yaml").read_text())
    assert rec["source"] == "mined" and rec["mined"]["draft"] is True and rec["upstream"]["fixed_by"] == [101]
    assert rec["versions"] == {"affected": ">=2.4.0,<2.6.0", "fixed_in": "2.6.0"}  # from its own 12-release matrix
    assert rec["reproducer"]["trigger"]["commit"] == upstream["fix"] and rec["environment"]["devices"] == 4
    matrix = json.loads((kb / "bisect" / "mined-pr101-bug-is-gone" / "matrix.json").read_text())
    assert [r["verdict"] for r in matrix["results"]].count("reproduced") == 3 and len(matrix["results"]) == 12
    report = json.loads((kb / "bisect" / "mined-pr101-bug-is-gone" / "bisect-releases-fixed.json").read_text())
    assert (report["last_old"]["label"], report["first_new"]["label"], report["exact"]) == ("2.5.1", "2.6.0", True)
    assert report["probes_run"] == 0  # the matrix's verdicts answered it
    assert main(["--root", str(kb), "validate"]) == 0
    assert not any(p.name.endswith(".py") for p in (kb / "issues").iterdir())  # upstream's code is not kept here
    run = table["last_run"]  # what the run spent, kept for the benchmark: proofs, matrices, bisections
    assert run["records_now"] == 1 and run["proved_now"] >= 1 and run["seconds"] > 0
    assert run["probes"] == 2 * sum(1 for r in table["candidates"] if r["verdicts"]) + 12 + report["probes_run"]

    logs = sorted((Path(os.environ["XLAKB_CACHE_DIR"]) / "logs").rglob("*.log"))
    assert main(argv) == 0  # a second run takes up where the first stopped: nothing probed again
    assert sorted((Path(os.environ["XLAKB_CACHE_DIR"]) / "logs").rglob("*.log")) == logs
    # --retry takes up the candidates with that outcome again (after the runner or the rules changed): the
    # one that passed before is proved again, with the same outcome; the others are left as they were
    path = kb / "mined" / "candidates.json"
    table = json.loads(path.read_text())
    for r in table["candidates"]:
        if r["test"] == "T.test_dtype":
            r["reason"] = "stale"
    path.write_text(json.dumps(table))
    assert main(argv + ["--retry", "passes-before"]) == 0
    rows = {(r["subject"], r["test"]): r for r in json.loads(path.read_text())["candidates"]}
    again = rows["Fix wrong dtype of foo (#104)", "T.test_dtype"]
    assert again["status"] == "passes-before" and again["reason"] != "stale"
    assert rows["Fix the BUG attribute on XLA tensors (#101)", "TestBug.test_bug_is_gone"]["status"] == "proved"
    # the test's own assertion names no bug a user would paste: the record offers triage nothing
    assert rows["Fix the BUG attribute on XLA tensors (#101)", "TestBug.test_bug_is_gone"]["triage"] == "none"
    assert "signatures" not in yaml.safe_load((kb / "mined" / "drafts" / "mined-pr101-bug-is-gone.yaml").read_text())

    # a record made before mined records carried triage signatures: run once more on its last failing
    # release (2.5.1), the signatures read from that log go in after the symptoms, and validate accepts it
    import xlakb.mining.mine as mine_mod

    table = json.loads(path.read_text())
    for r in table["candidates"]:
        r["triage"] = ""
    path.write_text(json.dumps(table))
    seen = []
    sig = [{"message": "RuntimeError: BUG is present"}, {"frame": {"file": r"bug\.py", "function": "check"}}]
    monkeypatch.setattr(mine_mod, "triage_signatures", lambda log: seen.append(log) or sig)
    assert main(argv) == 0
    assert len(seen) == 1 and "XLAKB-TRIGGER FAILED TestBug.test_bug_is_gone" in seen[0]  # the log of 2.5.1's run
    assert not (kb / "issues" / "mined-pr101-bug-is-gone.yaml").exists()  # a draft until a person writes it up
    rec = yaml.safe_load((kb / "mined" / "drafts" / "mined-pr101-bug-is-gone.yaml").read_text())
    assert list(rec).index("signatures") == list(rec).index("symptoms") + 1 and rec["signatures"] == sig
    assert main(["--root", str(kb), "validate"]) == 0
    assert main(argv) == 0 and len(seen) == 1  # done once: the table remembers it

    # --rejudge runs every measured candidate again (after a change of the runner or the rules) and lists
    # what changed: an outcome the table had wrong goes back to what a run shows, and nothing else moves
    table = json.loads(path.read_text())
    for r in table["candidates"]:
        if r["test"] == "TestBug.test_bug_is_gone":
            r["status"], r["reason"] = "passes-before", "stale"
    path.write_text(json.dumps(table))
    assert main(argv + ["--rejudge"]) == 0
    changed = json.loads((kb / "mined" / "rejudged.json").read_text())
    assert [(c["test"], c["was"], c["now"]) for c in changed["changes"]] == [
        ("TestBug.test_bug_is_gone", "passes-before", "proved")
    ]
    assert changed["candidates"] == sum(1 for r in table["candidates"] if r["status"] not in ("excluded", "pending"))
    rows = {(r["subject"], r["test"]): r for r in json.loads(path.read_text())["candidates"]}
    assert rows["Fix the BUG attribute on XLA tensors (#101)", "TestBug.test_bug_is_gone"]["status"] == "proved"


def test_a_mined_proof_of_an_existing_record_is_attached_and_compared(kb, upstream, wheelhouse, test_packages, monkeypatch):
    from fakewheels import fake_record
    from xlakb.cli import main

    monkeypatch.delenv("XLAKB_XLA_REPO", raising=False)
    path = fake_record(kb, affected=">=2.4,<2.7", fixed_in="2.7.0")  # a claim the mined proof contradicts
    data = yaml.safe_load(path.read_text())
    data["upstream"]["fixed_by"] = [101]
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False))
    argv = [
        "--root",
        str(kb),
        "mine",
        "--repo",
        str(upstream["repo"]),
        "--runner",
        "uv",
        "-q",
        "--find-links",
        str(wheelhouse),
        "--find-links",
        str(test_packages),
        "--index-url",
        "none",
    ]
    assert main(argv) == 0
    proof = json.loads((kb / "bisect" / "fake-bug" / "proofs.json").read_text())["proofs"][0]
    assert proof["pr"] == 101 and proof["verdicts"]["2.5.1"][0] == "reproduced"
    assert proof["agreement"] == "the record says fixed in 2.7.0, the fix first shipped in 2.6.0"
    assert not (kb / "mined" / "drafts" / "mined-pr101-bug-is-gone.yaml").exists()  # no second record of the same fix


def test_a_new_run_keeps_what_was_measured_and_not_what_old_rules_left_out():
    from xlakb.mining.mine import Mined, merge

    def row(test, status, reason=""):
        return Mined(
            commit="a" * 40,
            pr=1,
            subject="s",
            date="2024-01-01",
            cls="bug",
            path="test/test_x.py",
            test=test,
            status=status,
            reason=reason,
        )

    old = [
        row("T.test_measured", "passes-before", "passes on 2.5.1"),
        row("T.test_left_out", "excluded", "old rule"),
        row("T.test_proved", "proved"),
    ]
    old[2].record, old[2].triage = "mined-pr1-proved", "none"
    new = merge(old, [row("T.test_measured", "pending"), row("T.test_left_out", "pending"), row("T.test_proved", "pending")])
    assert [(m.test, m.status, m.reason) for m in new] == [
        ("T.test_measured", "passes-before", "passes on 2.5.1"),
        ("T.test_left_out", "pending", ""),
        ("T.test_proved", "proved", ""),
    ]
    assert (new[2].record, new[2].triage) == ("mined-pr1-proved", "none")  # its record is not run again for triage


def test_a_mined_record_offers_triage_the_error_and_torch_xla_frame_it_measured_never_the_tests_own():
    from xlakb.mining.mine import triage_signatures

    crash = """ERROR: test_index_copy (__main__.TestOps.test_index_copy)
Traceback (most recent call last):
  File "/tmp/xlakb-trigger/test/test_ops.py", line 88, in test_index_copy
    out = torch.index_copy(t, 0, idx, src)
  File "/home/me/.cache/xlakb/envs/uv/ab/venv/lib/python3.11/site-packages/torch_xla/core/xla_op_registry.py", line 41, in lower_index_copy
    return torch_xla._XLAC._xla_index_copy(a, b)
RuntimeError: torch_xla/csrc/tensor_methods.cpp:1204 : Check failed: index->shape().rank() == 1 (2 vs. 1)
XLAKB-TRIGGER ERROR TestOps.test_index_copy: RuntimeError: torch_xla/csrc/tensor_methods.cpp:1204 : Check failed
"""
    sigs = triage_signatures(crash)
    kinds = [next(iter(s)) for s in sigs]
    assert "check" in kinds or "frame" in kinds, sigs
    assert not any("call" in s or "env" in s for s in sigs)  # upstream's test code is not a user's call
    assert any(s.get("frame", {}).get("function") == "lower_index_copy" for s in sigs)
    assert {"check": "Check failed"} not in sigs  # nothing of the runner's own summary line
    assertion = """FAIL: test_dtype (__main__.T.test_dtype)
Traceback (most recent call last):
  File "/tmp/xlakb-trigger/test/test_ops.py", line 12, in test_dtype
    self.assertEqual(a.dtype, torch.float32)
AssertionError: torch.bfloat16 != torch.float32
XLAKB-TRIGGER FAILED T.test_dtype: AssertionError: torch.bfloat16 != torch.float32
"""
    assert triage_signatures(assertion) == []  # the test's own assertion names no bug a user would paste
    # two failures in one test (the shape of upstream's core-aten-op tests, pytorch/xla #6588 on 2.2.0): the
    # signatures come from the one our runner reported, never from the test's fallback assertion
    two = (
        "=" * 70
        + "\nERROR: test_pad (test_core_aten_ops.AtenOpTest.test_pad) [can_convert_to_stablehlo]\n"
        + "-" * 70
        + "\nTraceback (most recent call last):\n"
        '  File "/home/me/.cache/xlakb/envs/uv/ab/venv/lib/python3.11/site-packages/torch_xla/stablehlo.py", line 312, '
        "in _exported_program_to_stablehlo_bundle\n    raise RuntimeError(\n"
        "RuntimeError: This model contains ops not capturable by Pytorch/XLA: aten::reflection_pad1d=1\n\n"
        + "=" * 70
        + "\nFAIL: test_pad (test_core_aten_ops.AtenOpTest.test_pad) [torch_xla_metric]\n"
        + "-" * 70
        + "\nTraceback (most recent call last):\n"
        '  File "/tmp/xlakb-trigger/test/test_core_aten_ops.py", line 59, in run_export_and_compare\n'
        "AssertionError: 'aten::reflection_pad1d' unexpectedly found in 'Metric: DeviceLockWait\\n  TotalSamples: 2'\n\n"
        + "-"
        * 70
        + "\nRan 1 test in 0.211s\n\nFAILED (failures=1, errors=1)\n"
        "XLAKB-TRIGGER ERROR AtenOpTest.test_pad: RuntimeError: This model contains ops not capturable by Pytorch/XLA: "
        "aten::reflection_pad1d=1\n"
    )
    sigs = triage_signatures(two)
    assert any("not capturable" in str(s.get("message", "")) for s in sigs), sigs
    assert any(s.get("frame", {}).get("function") == "_exported_program_to_stablehlo_bundle" for s in sigs), sigs
    assert not any("unexpectedly found" in str(s) or "AssertionError" in str(s) for s in sigs)


def test_a_release_the_matrix_could_not_judge_is_not_an_end_of_the_bisection():
    from xlakb.mining.mine import _bisect_ends

    def rows(verdicts):
        versions = ["2.1.0", "2.2.0", "2.3.0", "2.4.0"]
        return [{"candidate": v, "kind": "release", "verdict": x} for v, x in zip(versions, verdicts)]

    assert _bisect_ends(rows(["reproduced", "reproduced", "not-reproduced", "not-reproduced"])) == (None, None)
    assert _bisect_ends(rows(["untestable", "reproduced", "not-reproduced", "error"])) == (None, "2.3.0")
    assert _bisect_ends(rows(["error", "reproduced", "not-reproduced", "not-reproduced"])) == ("2.2.0", None)


def test_a_test_that_checks_an_op_no_longer_falls_back_is_speed_not_a_failure():
    source = (
        "import unittest\n\n\nclass T(unittest.TestCase):\n\n"
        "  def test_shift_no_fallback(self):\n    self._test_no_fallback(torch.bitwise_left_shift, (a, b))\n\n"
        "  def test_shift(self):\n    self.assertEqual(shift(a), b)\n"
    )
    found = {t.test: t for t in triggers.changed_tests(source, "test/test_operations.py", list(range(1, 12)))}
    assert triggers.fallback_only(found["T.test_shift_no_fallback"])
    assert not triggers.fallback_only(found["T.test_shift"])


def test_one_test_proved_by_two_changes_of_one_release_is_one_record():
    """pytorch/xla #6653 added `test_embedding`, #6781 made `aten.embedding` export, both before 2.4.0: the
    release wheels prove the test once; the later change owns the record, unless one was written already."""
    from xlakb.mining.mine import Mined, same_proof

    def row(sha, pr, test="UnboundedDynamismExportTest.test_embedding", record="", fixed="2.4.0", copy="f" * 40):
        return Mined(
            commit=sha * 40,
            pr=pr,
            subject=f"x (#{pr})",
            date="2024-03-01",
            cls="op-now-works",
            path="test/stablehlo/test_unbounded_dynamism.py",
            test=test,
            fixed_in=fixed,
            status="proved",
            record=record,
            test_commit=copy,
        )

    first, later, other = row("a", 6653), row("b", 6781), row("a", 6653, test="UnboundedDynamismExportTest.test_var")
    assert same_proof([first, later, other]) == {first.key: later}
    elsewhere = row("c", 7000, fixed="2.5.0")
    assert same_proof([first, elsewhere]) == {}
    written = row("a", 6653, record="mined-pr6653-embedding")
    assert same_proof([written, later]) == {later.key: written}
    assert same_proof([written, row("b", 6781, record="mined-pr6781-embedding")]) == {}  # two written: both stay
    first.status = "untestable"
    assert same_proof([first, later]) == {}
    # each commit's own copy of the test: #7842 added fp8e4m3fn cases to #7740's fp8e5m2 test, two proofs
    assert same_proof([row("a", 7740, copy=""), row("b", 7842, copy="")]) == {}


# -- bug, limitation or neither: what a proved test shows ---------------------------------------------------
@pytest.mark.parametrize(
    "failure, source, env, path, kind, rule",
    [
        (
            "XLAKB-TRIGGER ERROR T.test_fp8: RuntimeError: torch_xla/csrc/dtype.cpp:161 : Type not supported: Float8_e5m2",
            "",
            (),
            "test/test_fp8.py",
            "limitation",
            "unsupported-dtype",
        ),
        (
            "XLAKB-TRIGGER ERROR A.test_pad: RuntimeError: This model contains ops not capturable by Pytorch/XLA: aten::pad=1",
            "",
            (),
            "test/test_core_aten_ops.py",
            "limitation",
            "export-refuses-unlowered-op",
        ),
        (
            "XLAKB-TRIGGER CRASHED U.test_x: signal 6 (SIGABRT)",
            "",
            ("EXPERIMENTAL_XLA_UNBOUNDED_DYNAMISM",),
            "test/stablehlo/test_unbounded.py",
            "limitation",
            "experimental-flag",
        ),
        (
            "XLAKB-TRIGGER ERROR D.test_gt: RuntimeError: XLASymNodeImpl::gt has not been implemented.",
            "",
            (),
            "test/ds/t.py",
            "limitation",
            "not-implemented",
        ),
        (
            "XLAKB-TRIGGER FAILED T.test_softmax: AssertionError: Regex didn't match: '.*f32' not found in 'HloModule m'",
            "",
            (),
            "test/test_autocast_xla.py",
            "limitation",
            "autocast-policy",
        ),
        (
            "XLAKB-TRIGGER FAILED T.test_patch: AssertionError: False is not true",
            "    self.assertEqual(dir(GRU), dir(ScanGRU))\n",
            (),
            "test/scan/test_gru.py",
            "neither",
            "class-shape",
        ),
        (
            "XLAKB-TRIGGER FAILED T.test_alias: AssertionError: 0.0 != 1.0",
            "    self.assertEqual(met.metric_data('InputOutputAliasCount')[1], 1.0)\n",
            (),
            "test/t.py",
            "neither",
            "counter",
        ),
        (
            "XLAKB-TRIGGER FAILED T.test_value: AssertionError: 0.0 != 1.0",
            "    self.assertEqual(t.item(), 1.0)\n",
            (),
            "test/t.py",
            "bug",
            "",
        ),
        (
            "XLAKB-TRIGGER FAILED T.test_graphs: AssertionError: 2 != 1",
            "    self.assertEqual(met.counter_value('Graphs'), 1)\n",
            (),
            "test/t.py",
            "neither",
            "counter",
        ),
        (
            "XLAKB-TRIGGER FAILED T.test_ir: AssertionError: '%add.6' not found in 'HloModule IrToHlo.8'",
            "    hlo = torch_xla._XLAC._get_xla_tensors_hlo([t])\n",
            (),
            "test/spmd/t.py",
            "neither",
            "expected-text",
        ),
        # what the release raised where the call should have worked: a bug
        (
            "XLAKB-TRIGGER ERROR T.test_einsum: RuntimeError: aten_xla_bridge.cpp:84 : Check failed: xtensor",
            "",
            (),
            "test/dynamo/test_dynamo.py",
            "bug",
            "",
        ),
    ],
)
def test_a_proved_test_is_a_bug_a_limitation_or_neither_by_rules_with_reasons(failure, source, env, path, kind, rule):
    found = triggers.kind_of(failure, source, env, path)
    assert (found.kind, found.rule) == (kind, rule) and found.reason


def test_a_review_of_the_fix_overrides_the_rules_and_the_table_keeps_both(tmp_path):
    from xlakb.mining.mine import Mined, judge_kinds, load_review

    (tmp_path / "mined").mkdir()
    row = Mined(
        commit="c" * 40,
        pr=7023,
        subject="Handle aliasing (#7023)",
        date="2024-05-01",
        cls="bug",
        path="test/test_x.py",
        test="T.test_alias",
        status="proved",
        failure="XLAKB-TRIGGER FAILED T.test_alias: AssertionError: 0.0 != 1.0",
    )
    assert judge_kinds(tmp_path, None, [row]) == [(row.key, "", "bug")]
    (tmp_path / "mined" / "review.yaml").write_text(
        "reviews:\n- pr: 7023\n  kind: neither\n  reason: the test counts donated buffers; results were right\n"
    )
    assert judge_kinds(tmp_path, None, [row]) == [(row.key, "bug", "neither")]
    assert (row.kind, row.kind_rule, row.rule_kind) == ("neither", "review", "bug")
    for text, said in [
        ("reviews:\n- pr: 1\n  kind: feature\n  reason: x\n", "kind 'feature' is not one of"),
        ("reviews:\n- pr: 1\n  kind: bug\n", "a decision says why (reason)"),
        ("reviews:\n- kind: bug\n", "each entry names its fix (pr: N)"),
        ("reviews: [\n", "malformed YAML"),
    ]:
        (tmp_path / "mined" / "review.yaml").write_text(text)
        with pytest.raises(XlakbError, match=re.escape(said)) as err:
            load_review(tmp_path)
        assert str(err.value).startswith("mined/review.yaml")


def test_a_commit_that_changes_only_tests_is_not_the_fix_of_what_its_test_shows():
    """#5721 and #8949 only added tests: the releases' difference came from another change."""
    failure = "XLAKB-TRIGGER ERROR T.test_print: TypeError: 'NoneType' object is not subscriptable"
    assert triggers.kind_of(failure, changed=("test/test_operations.py",)).rule == "tests-only-commit"
    assert triggers.kind_of(failure, changed=("test/test_operations.py", "torch_xla/core/xla_model.py")).kind == "bug"
    assert triggers.kind_of(failure).kind == "bug"  # nothing known of the commit: the rules of the failure decide
