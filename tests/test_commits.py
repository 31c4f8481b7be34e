"""Tests of xlakb.candidates.commits against real git repositories built here."""

from __future__ import annotations

import calendar
import os
import subprocess
import sys
from pathlib import Path

import git
import pytest

from xlakb.candidates.commits import (
    changed_paths,
    classify_path,
    first_parent_history,
    is_python_only,
    list_commits,
    native_changes,
    nearest_base,
    pr_number,
    resolve_end,
)
from xlakb.envs.overlay import overlay_commit
from xlakb.errors import XlakbError


def _when(day: str, hour: int = 12) -> str:
    y, m, d = map(int, day.split("-"))
    return f"{calendar.timegm((y, m, d, hour, 0, 0))} +0000"


class FakeXla:
    """A small pytorch/xla-like history.

    master (first-parent line, oldest first)::

        c0  2024-01-01  Initial import                      everything
        c1  2024-01-02  Fix foo in xla_model (#101)         torch_xla/core/xla_model.py
        c2  2024-01-03  Speed up tensor (#102)              torch_xla/csrc/tensor.cpp   tag v0.1
        c3  2024-01-04  Document and test foo (#103)        docs/foo.md, test/test_foo.py
        m4  2024-01-05  Merge pull request #104 from dev/utils   (second parent: f1, f2 add torch_xla/utils.py)
        c5  2024-01-06  Bump build (#105)                   setup.py
        c6  2024-01-07 09h  Drop utils (#106)              torch_xla/utils.py deleted, __init__.py
        c7  2024-01-07 18h  Revert "Fix foo in xla_model (#101)" (#107)
        c8  2024-01-08  Pin deps (#108)                     .torch_commit, torch_xla/__init__.py

    release branch r0.2 from c5: r1 2024-01-09 "Drop utils (#106) (cherry-pick)" tagged v0.2.
    side branch from m4: s1 with a different torch_xla/utils.py (not merged).
    """

    def __init__(self, root: Path) -> None:
        self.path = root / "xla"
        self.repo = git.Repo.init(self.path, initial_branch="master")
        with self.repo.config_writer() as cw:
            cw.set_value("user", "name", "Tester")
            cw.set_value("user", "email", "tester@example.com")
        self.sha: dict[str, str] = {}
        self.commit(
            "c0",
            "Initial import",
            "2024-01-01",
            {
                "torch_xla/__init__.py": "VALUE = 'c0'\nfrom .version import __version__\n",
                "torch_xla/core/xla_model.py": "def foo():\n    return 1\n",
                "torch_xla/core/__init__.py": "",
                "torch_xla/csrc/tensor.cpp": "int tensor() { return 0; }\n",
                "setup.py": "from setuptools import setup\nsetup(name='torch_xla')\n",
                "test/test_ops.py": "def test_ok():\n    pass\n",
                "README.md": "# fake xla\n",
            },
        )
        self.commit(
            "c1", "Fix foo in xla_model (#101)", "2024-01-02", {"torch_xla/core/xla_model.py": "def foo():\n    return 2\n"}
        )
        self.commit("c2", "Speed up tensor (#102)", "2024-01-03", {"torch_xla/csrc/tensor.cpp": "int tensor() { return 1; }\n"})
        self.repo.create_tag("v0.1", ref=self.sha["c2"])
        self.commit(
            "c3",
            "Document and test foo (#103)",
            "2024-01-04",
            {"docs/foo.md": "foo\n", "test/test_foo.py": "def test_foo():\n    pass\n"},
        )
        # feature branch merged with a merge commit
        master = self.repo.heads.master
        feature = self.repo.create_head("dev/utils", self.sha["c3"])
        feature.checkout()
        self.commit("f1", "wip utils", "2024-01-04", {"torch_xla/utils.py": "X = 1\n"}, hour=14)
        self.commit("f2", "utils done", "2024-01-04", {"torch_xla/utils.py": "X = 2\n"}, hour=15)
        master.checkout()
        self.commit(
            "m4",
            "Merge pull request #104 from dev/utils",
            "2024-01-05",
            {"torch_xla/utils.py": "X = 2\n"},
            parents=(self.repo.commit(self.sha["c3"]), self.repo.commit(self.sha["f2"])),
        )
        self.commit(
            "c5",
            "Bump build (#105)",
            "2024-01-06",
            {"setup.py": "from setuptools import setup\nsetup(name='torch_xla', version='0.2')\n"},
        )
        self.commit(
            "c6",
            "Drop utils (#106)",
            "2024-01-07",
            {"torch_xla/__init__.py": "VALUE = 'c6'\nfrom .version import __version__\n"},
            remove=["torch_xla/utils.py"],
            hour=9,
        )
        self.commit(
            "c7",
            'Revert "Fix foo in xla_model (#101)" (#107)',
            "2024-01-07",
            {"torch_xla/core/xla_model.py": "def foo():\n    return 1\n"},
            hour=18,
        )
        self.commit(
            "c8",
            "Pin deps (#108)",
            "2024-01-08",
            {".torch_commit": "0123abcd\n", "torch_xla/__init__.py": "VALUE = 'c8'\nfrom .version import __version__\n"},
        )
        # release branch from c5 with a cherry-pick, tagged
        release = self.repo.create_head("r0.2", self.sha["c5"])
        release.checkout()
        self.commit(
            "r1",
            "Drop utils (#106) (cherry-pick)",
            "2024-01-09",
            {"torch_xla/__init__.py": "VALUE = 'c6'\nfrom .version import __version__\n"},
            remove=["torch_xla/utils.py"],
        )
        self.repo.create_tag("v0.2", ref=self.sha["r1"])
        # an unmerged side branch from m4
        side = self.repo.create_head("side", self.sha["m4"])
        side.checkout()
        self.commit("s1", "side utils", "2024-01-06", {"torch_xla/utils.py": "X = 3\n"})
        master.checkout()

    def commit(self, name, message, day, files, *, remove=(), parents=None, hour=12):
        for rel, text in files.items():
            p = self.path / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
        if files:
            self.repo.index.add(list(files))
        if remove:
            self.repo.index.remove(list(remove), working_tree=True)
        when = _when(day, hour)
        c = self.repo.index.commit(message, parent_commits=parents, author_date=when, commit_date=when)
        self.sha[name] = c.hexsha
        return c.hexsha

    def label(self, name: str) -> str:
        return self.sha[name][:8]


@pytest.fixture(scope="module")
def fake(tmp_path_factory) -> FakeXla:
    return FakeXla(tmp_path_factory.mktemp("repo"))


def names(fake: FakeXla, cands) -> list[str]:
    by_sha = {v: k for k, v in fake.sha.items()}
    return [by_sha[c.meta["sha"]] for c in cands]


# ------------------------------------------------------------------ listing
def test_first_parent_history_skips_merged_branch_commits(fake):
    hist = first_parent_history(fake.path, "master")
    assert [c.sha for c in hist] == [fake.sha[n] for n in ("c0", "c1", "c2", "c3", "m4", "c5", "c6", "c7", "c8")]


@pytest.mark.parametrize(
    "start,end,expected",
    [
        ("v0.1", "#106", ["c2", "c3", "m4", "c5", "c6"]),  # tag .. squash PR
        ("pr:101", "pr:104", ["c1", "c2", "c3", "m4"]),  # .. merge-commit PR
        ("2024-01-02", "2024-01-07", ["c1", "c2", "c3", "m4", "c5", "c6", "c7"]),  # dates: last of the day
        ("2024-01-04", "2024-01-05", ["c3", "m4"]),
        ("2030-01-01", "2030-01-02", None),  # both dates map to c8: empty
    ],
)
def test_ranges(fake, start, end, expected):
    if expected is None:
        with pytest.raises(XlakbError, match="empty"):
            list_commits(fake.path, start, end, branch="master")
        return
    got = list_commits(fake.path, start, end, branch="master")
    assert names(fake, got) == expected


def test_ranges_by_sha_and_prefix(fake):
    got = list_commits(fake.path, fake.sha["c0"][:7], fake.sha["c3"])
    assert names(fake, got) == ["c0", "c1", "c2", "c3"]


def test_candidate_fields(fake):
    got = list_commits(fake.path, "#101", "#104")
    c1, m4 = got[0], got[-1]
    sha = fake.sha["c1"]
    assert c1.kind == "commit" and c1.label == f"{sha[:8]} (#101)"
    assert c1.overlay == (str(fake.path.resolve()), sha)
    assert c1.torch_xla == "" and c1.torch == ""
    assert c1.meta["subject"] == "Fix foo in xla_model (#101)"
    assert c1.meta["pr"] == 101 and c1.meta["author"] == "Tester"
    assert c1.meta["date"].startswith("2024-01-02T12:00:00")
    assert c1.meta["url"] == f"https://github.com/pytorch/xla/commit/{sha}"
    assert c1.meta["pr_url"] == "https://github.com/pytorch/xla/pull/101"
    assert m4.meta["pr"] == 104 and m4.label.endswith("(#104)")


def test_pr_of_revert_is_the_revert_pr(fake):
    assert pr_number('Revert "Fix foo in xla_model (#101)" (#107)') == 107
    assert pr_number("Merge pull request #104 from dev/utils") == 104
    assert pr_number("wip utils") is None
    hist = first_parent_history(fake.path)
    assert hist[resolve_end(fake.path, "#101", hist)].sha == fake.sha["c1"]
    assert hist[resolve_end(fake.path, "#107", hist)].sha == fake.sha["c7"]


def test_release_tag_maps_to_its_branch_point(fake):
    got = list_commits(fake.path, "v0.2", "#108")
    assert names(fake, got) == ["c5", "c6", "c7", "c8"]
    assert got[0].meta["resolved_from"] == "v0.2"


def test_other_branch(fake):
    got = list_commits(fake.path, "v0.1", "v0.2", branch="r0.2")
    assert names(fake, got) == ["c2", "c3", "m4", "c5", "r1"]


@pytest.mark.parametrize(
    "start,end,message",
    [
        ("nope", "c8", "'nope' is not a commit, tag or branch"),
        ("#999", "#108", "pull request #999 was not merged"),
        ("#108", "#101", "comes before start"),
        ("v0.1", "v0.1", "empty"),
        ("2023-12-01", "#101", "no commit of HEAD on or before 2023-12-01"),
        ("2024-02-30", "#101", "not a valid YYYY-MM-DD date"),
    ],
)
def test_range_errors(fake, start, end, message):
    with pytest.raises(XlakbError, match=message):
        list_commits(fake.path, start, end)


def test_not_a_repository(tmp_path):
    with pytest.raises(XlakbError, match="is not a git repository"):
        list_commits(tmp_path, "a", "b")
    with pytest.raises(XlakbError, match="does not exist"):
        list_commits(tmp_path / "missing", "a", "b")


def test_bare_clones(fake, tmp_path):
    bare = tmp_path / "bare.git"
    git.Repo.clone_from(str(fake.path), str(bare), bare=True)
    got = list_commits(bare, "#101", "#104", branch="master")
    assert names(fake, got) == ["c1", "c2", "c3", "m4"]
    assert got[0].overlay == (str(bare.resolve()), fake.sha["c1"])
    # a mirror without a config file (as some snapshot tools store them)
    (bare / "config").unlink()
    got = list_commits(bare, "#101", "#104", branch="master")
    assert names(fake, got) == ["c1", "c2", "c3", "m4"]
    assert native_changes(bare, fake.sha["c1"], fake.sha["c2"]) == ["torch_xla/csrc/tensor.cpp"]


# ------------------------------------------------------------------ change kinds
@pytest.mark.parametrize(
    "path,kind",
    [
        ("torch_xla/__init__.py", "python"),
        ("torch_xla/distributed/spmd/xla_sharding.py", "python"),
        ("torch_xla/csrc/tensor.cpp", "native"),
        ("torch_xla/csrc/runtime/pjrt_computation_client.h", "native"),
        ("torch_xla/csrc/BUILD", "native"),
        ("torch_xla/experimental/README.md", "irrelevant"),
        ("setup.py", "native"),
        ("WORKSPACE", "native"),
        ("bazel/rules_def.bzl", "native"),
        (".bazelrc", "native"),
        ("openxla_patches/gpu_race.diff", "native"),
        ("CMakeLists.txt", "native"),
        (".torch_commit", "native"),
        ("build_util.py", "native"),
        ("codegen/xla_native_functions.yaml", "native"),
        ("codegen/lazy_tensor_generator.py", "native"),
        ("third_party/xla_client/patches/cache.diff", "native"),
        # what never reaches the compiled extension, whatever its extension
        ("requirements.txt", "irrelevant"),
        ("requirements_lock_3_11.txt", "irrelevant"),
        ("pyproject.toml", "irrelevant"),
        ("infra/ansible/config/vars.yaml", "irrelevant"),
        ("infra/tpu-pytorch-releases/artifacts.auto.tfvars", "irrelevant"),
        ("scripts/gen_lazy_tensor.py", "irrelevant"),
        ("benchmarks/torchbench_model.py", "irrelevant"),
        ("benchmarks/patches/mismatched_batch_size.patch", "irrelevant"),
        ("plugins/cuda/BUILD", "irrelevant"),
        ("docs/source/conf.py", "irrelevant"),
        ("configuration.yaml", "irrelevant"),
        ("test/test_operations.py", "irrelevant"),
        ("test/cpp/test_tensor.cpp", "irrelevant"),
        ("docs/source/learn/troubleshoot.md", "irrelevant"),
        ("README.md", "irrelevant"),
        (".github/workflows/build_and_test.yml", "irrelevant"),
        ("torchax/torchax/ops.py", "irrelevant"),  # another package, another wheel
    ],
)
def test_classify_path(path, kind):
    assert classify_path(path) == kind


def test_changed_and_native_paths(fake):
    s = fake.sha
    assert changed_paths(fake.path, s["c0"], s["c2"]) == ["torch_xla/core/xla_model.py", "torch_xla/csrc/tensor.cpp"]
    assert native_changes(fake.path, s["c0"], s["c2"]) == ["torch_xla/csrc/tensor.cpp"]
    assert changed_paths(fake.path, s["c2"], s["m4"]) == ["docs/foo.md", "test/test_foo.py", "torch_xla/utils.py"]
    assert native_changes(fake.path, s["c2"], s["m4"]) == []
    assert native_changes(fake.path, s["m4"], s["c8"]) == [".torch_commit", "setup.py"]
    # symmetric, and named refs work
    assert native_changes(fake.path, "v0.1", s["c0"]) == ["torch_xla/csrc/tensor.cpp"]


@pytest.mark.parametrize(
    "name,python_only",
    [
        ("c0", False),
        ("c1", True),
        ("c2", False),
        ("c3", True),
        ("m4", True),
        ("c5", False),
        ("c6", True),
        ("c7", True),
        ("c8", False),
        ("r1", True),
    ],
)
def test_is_python_only(fake, name, python_only):
    assert is_python_only(fake.path, fake.sha[name]) is python_only


# ------------------------------------------------------------------ nearest base
def test_nearest_base_prefers_fewest_native_differences(fake):
    s = fake.sha
    bases = {"0.1": s["c2"], "0.2": s["r1"], "gone": "f" * 40}
    # c8 differs from r1 (branched at c5) only in python + .torch_commit; from c2 also in setup.py
    assert nearest_base(fake.path, s["c8"], bases) == "0.2"
    # c3 has the tensor.cpp of c2 but not the setup.py of r1
    assert nearest_base(fake.path, s["c3"], bases) == "0.1"


def test_nearest_base_tie_breaks(fake):
    s = fake.sha
    # target c6: vs m4 and vs s1 the same 3 paths (setup.py, __init__.py, utils.py); m4 is an ancestor
    assert changed_paths(fake.path, s["m4"], s["c6"]) == changed_paths(fake.path, s["s1"], s["c6"])
    assert len(changed_paths(fake.path, s["m4"], s["c6"])) == 3
    assert nearest_base(fake.path, s["c6"], {"a-side": s["s1"], "b-main": s["m4"]}) == "b-main"
    # fewer changed paths beats ancestry: c5 (an ancestor) differs in 2 paths, r1 (off the line) in none
    assert nearest_base(fake.path, s["c6"], {"a": s["c5"], "b": s["r1"]}) == "b"


def test_nearest_base_needs_a_usable_base(fake):
    with pytest.raises(XlakbError, match="no base gitrev is in .*gone=ffffffffffff"):
        nearest_base(fake.path, fake.sha["c8"], {"gone": "f" * 40})
    with pytest.raises(XlakbError, match="none given"):
        nearest_base(fake.path, fake.sha["c8"], {})


# ------------------------------------------------------------------ overlay
def make_installed(root: Path) -> Path:
    """An installed torch_xla as a wheel leaves it: python, a generated version.py, .so files."""
    pkg = root / "site-packages" / "torch_xla"
    (pkg / "core").mkdir(parents=True)
    (pkg / "lib").mkdir()
    (pkg / "__pycache__").mkdir()
    (pkg / "__init__.py").write_text("VALUE = 'wheel'\nfrom .version import __version__\n")
    (pkg / "core" / "__init__.py").write_text("")
    (pkg / "core" / "xla_model.py").write_text("def foo():\n    return 'wheel'\n")
    (pkg / "only_in_wheel.py").write_text("GONE = True\n")
    (pkg / "version.py").write_text("__version__ = '0.1+fake'\n__xla_gitrev__ = 'abc'\n")
    (pkg / "_XLAC.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\x7fELF" + bytes(range(256)) * 10)
    (pkg / "lib" / "libfake.so").write_bytes(b"\x7fELFlib")
    (pkg / "__pycache__" / "__init__.cpython-311.pyc").write_bytes(b"stale")
    return pkg


def snapshot(d: Path) -> dict[str, bytes]:
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def test_overlay_content(fake, tmp_path):
    base = make_installed(tmp_path)
    before = snapshot(base)
    dest = overlay_commit(fake.path, fake.sha["m4"], base, tmp_path / "ov" / "m4")
    pkg = dest / "torch_xla"
    repo_commit = fake.repo.commit(fake.sha["m4"])
    assert (pkg / "__init__.py").read_bytes() == (repo_commit.tree / "torch_xla/__init__.py").data_stream.read()
    assert (pkg / "core" / "xla_model.py").read_text() == "def foo():\n    return 2\n"
    assert (pkg / "utils.py").read_text() == "X = 2\n"  # added by the commit
    assert not (pkg / "only_in_wheel.py").exists()  # .py the commit lacks: gone
    assert (pkg / "version.py").read_text().startswith("__version__ = '0.1+fake'")  # generated: kept
    assert not (pkg / "__pycache__").exists()
    assert not (pkg / "csrc").exists()  # no non-.py file from git
    so = pkg / "_XLAC.cpython-311-x86_64-linux-gnu.so"
    assert so.read_bytes() == (base / so.name).read_bytes()
    assert so.stat().st_ino == (base / so.name).stat().st_ino  # hard link, no copy
    assert (pkg / "lib" / "libfake.so").read_bytes() == b"\x7fELFlib"
    assert snapshot(base) == before  # the base is untouched
    # importable from PYTHONPATH
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import torch_xla, torch_xla.utils; print(torch_xla.VALUE, torch_xla.__version__,"
            " torch_xla.utils.X, torch_xla.__file__)",
        ],
        env={**os.environ, "PYTHONPATH": str(dest)},
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    )
    assert out.stdout.split()[:3] == ["c0", "0.1+fake", "2"]
    assert out.stdout.split()[3] == str(pkg / "__init__.py")


def test_overlay_replaces_and_reuses(fake, tmp_path):
    base = make_installed(tmp_path)
    dest_dir = tmp_path / "ov" / "x"
    dest = overlay_commit(fake.path, fake.sha["m4"], base, dest_dir)
    ino = (dest / "torch_xla").stat().st_ino
    again = overlay_commit(fake.path, fake.sha["m4"], base, dest_dir)  # same commit and base: reused
    assert again == dest and (dest / "torch_xla").stat().st_ino == ino
    overlay_commit(fake.path, fake.sha["c6"], base, dest_dir)  # another commit: rebuilt
    assert (dest / "torch_xla" / "__init__.py").read_text().startswith("VALUE = 'c6'")
    assert not (dest / "torch_xla" / "utils.py").exists()
    assert sorted(p.name for p in dest_dir.parent.iterdir()) == ["x"]  # no temp or old trees left


def test_overlay_failure_leaves_no_half_built_tree(fake, tmp_path):
    good = make_installed(tmp_path / "good")
    broken = make_installed(tmp_path / "broken")
    # a directory where the commit needs a .py file: the build fails half-way
    (broken / "core" / "xla_model.py").unlink()
    (broken / "core" / "xla_model.py").mkdir()
    (broken / "core" / "xla_model.py" / "data.bin").write_bytes(b"x")
    parent = tmp_path / "ov"
    with pytest.raises(XlakbError, match="cannot build overlay"):
        overlay_commit(fake.path, fake.sha["c1"], broken, parent / "fresh")
    assert not parent.exists() or sorted(p.name for p in parent.iterdir()) == []
    # an existing complete overlay survives a failed rebuild untouched
    dest = overlay_commit(fake.path, fake.sha["c1"], good, parent / "kept")
    before = snapshot(dest)
    with pytest.raises(XlakbError, match="cannot build overlay"):
        overlay_commit(fake.path, fake.sha["c6"], broken, parent / "kept")
    assert snapshot(dest) == before
    assert sorted(p.name for p in parent.iterdir()) == ["kept"]


def test_overlay_errors(fake, tmp_path):
    with pytest.raises(XlakbError, match="not an installed torch_xla package directory"):
        overlay_commit(fake.path, fake.sha["c1"], tmp_path, tmp_path / "ov")
    base = make_installed(tmp_path)
    with pytest.raises(XlakbError, match="'deadbeef' is not a commit"):
        overlay_commit(fake.path, "deadbeef", base, tmp_path / "ov")
    assert not (tmp_path / "ov").exists()
