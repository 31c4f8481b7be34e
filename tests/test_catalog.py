"""The message catalog: what torch_xla's Python and C++ code can print, located (file, function, call
sites) per release, read from wheels and a git clone made in the test; stored as sorted JSON lines."""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

import pytest

from fakewheels import build_wheel
from xlakb import catalog
from xlakb.catalog import PLACEHOLDER, Catalog, CatalogError, Entry, extract_cpp, extract_python, template_pattern

BRIDGE = """\
#include "torch_xla/csrc/aten_xla_bridge.h"
namespace torch_xla {
namespace bridge {
// XLA_CHECK(commented) << "not a message";
XLATensorPtr GetXlaTensor(const at::Tensor& tensor) {
  auto xtensor = TryGetXlaTensor(tensor);
  XLA_CHECK(xtensor) << "Input tensor is not an XLA tensor: " << tensor.toString();
  return xtensor;
}
}  // namespace bridge

XLATensorPtr Lower(const XLATensorPtr& input, int64_t dim) {
  XLA_CHECK_EQ(input->shape().get().rank(), 2) << "Expected a rank-2 input to Lower";
  if (dim < 0) {
    XLA_ERROR() << "Invalid dimension " << dim << " for the lowering of foo";
  }
  auto fn = [&](int x) { XLA_CHECK(x > 0); return x; };
  return input;
}
}  // namespace torch_xla
"""

HEADER = """\
class PjRtData : public Data {
 public:
  Handle GetHandle() override {
    XLA_CHECK(HasValue())
        << "buffer with shape " << shape().ToString() << " on device "
        << device() << (buffer == nullptr ? " is null" : " is deleted");
    return reinterpret_cast<std::uintptr_t>(buffer.get());
  };
};
"""

PYTHON = """\
import warnings


class Mesh:
    def get_op_sharding(self, spec):
        if len(spec) != len(self.shape):
            raise ValueError(f"Partition spec length ({len(spec)}) should be equal to the mesh rank {len(self.shape)}.")
        warnings.warn("get_op_sharding is deprecated, use get_op_sharding_v2 instead")
        assert spec, "the partition spec must not be empty here"


def mark_sharding(t):
    raise RuntimeError("Cannot mark sharding on a tensor that is already sharded: %s" % t)
"""


# -- extraction -------------------------------------------------------------------------------------
def test_cpp_checks_errors_and_their_functions():
    entries = {(e.kind, e.template): e for e in extract_cpp(BRIDGE, "torch_xla/csrc/aten_xla_bridge.cpp")}
    check = entries[("check", "Check failed: xtensor")]
    assert check.function == "GetXlaTensor" and check.file == "torch_xla/csrc/aten_xla_bridge.cpp"
    assert ("check", f"Input tensor is not an XLA tensor: {PLACEHOLDER}") in entries
    eq = entries[("check", "Check failed: input->shape().get().rank() == 2 (")]
    assert eq.function == "Lower"
    assert ("error", f"Invalid dimension {PLACEHOLDER} for the lowering of foo") in entries
    assert entries[("check", "Check failed: x > 0")].function == "Lower"  # a lambda belongs to its function
    assert not any("commented" in t for _, t in entries)  # comments are not code


def test_cpp_header_class_method_and_a_choice_between_literals():
    entries = {e.template: e for e in extract_cpp(HEADER, "torch_xla/csrc/runtime/pjrt_computation_client.h")}
    check = entries["Check failed: HasValue()"]
    assert check.function == "PjRtData::GetHandle"
    msg = f"buffer with shape {PLACEHOLDER} on device {PLACEHOLDER}"
    assert msg in entries  # " is null" / " is deleted": one of them is printed, so neither is required
    assert check.file.endswith(".h")


def test_python_raise_warn_assert_with_placeholders():
    entries = {(e.kind, e.template): e for e in extract_python(PYTHON, "torch_xla/distributed/spmd/xla_sharding.py")}
    raised = entries[("raise", f"Partition spec length ({PLACEHOLDER}) should be equal to the mesh rank {PLACEHOLDER}.")]
    assert raised.exc == "ValueError" and raised.function == "Mesh.get_op_sharding"
    assert ("warn", "get_op_sharding is deprecated, use get_op_sharding_v2 instead") in entries
    assert entries[("assert", "the partition spec must not be empty here")].exc == "AssertionError"
    assert (
        entries[("raise", f"Cannot mark sharding on a tensor that is already sharded: {PLACEHOLDER}")].function == "mark_sharding"
    )


@pytest.mark.parametrize(
    "template,kind,line,matches",
    [
        ("Check failed: xtensor", "check", "RuntimeError: a.cpp:110 : Check failed: xtensor ", True),
        ("Check failed: xtensor", "check", "Check failed: xtensor->GetXlaData() != nullptr", False),  # another check
        (
            f"Partition spec length ({PLACEHOLDER}) should be equal to the mesh rank {PLACEHOLDER}.",
            "raise",
            "ValueError: Partition spec length (3) should be equal to the mesh rank 2.",
            True,
        ),
        (
            f"Operands to {PLACEHOLDER} must be real-valued floating-point, but got {PLACEHOLDER}",
            "format",
            "INVALID_ARGUMENT: Operands to Erf must be real-valued floating-point, but got S64",
            True,
        ),
    ],
)
def test_template_pattern_matches_what_is_printed(template, kind, line, matches):
    import re

    assert bool(re.search(template_pattern(template, kind), line)) is matches


def test_xla_formats_keep_messages_not_symbols():
    found = catalog.xla_formats(
        [
            "Operands to %s must be real-valued floating-point, but got %s",
            "_ZN3xla5ShapeC2Ev",
            "%s:%d",
            "--xla_dump_to=%s",
            "bitcast-convert %s",
        ]
    )
    assert found == {f"Operands to {PLACEHOLDER} must be real-valued floating-point, but got {PLACEHOLDER}"}


# -- building from wheels and a clone ------------------------------------------------------------------
def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
            "PATH": "/usr/bin:/bin",
            "HOME": str(repo),
        },
    )


def _xla_repo(tmp_path: Path) -> Path:
    """A clone with two release tags: v2.1.0 has the bridge check; v2.2.0 also the header and a caller."""
    repo = tmp_path / "xla"
    (repo / "torch_xla" / "csrc" / "runtime").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "master")
    (repo / "torch_xla" / "csrc" / "aten_xla_bridge.cpp").write_text(BRIDGE)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "bridge")
    _git(repo, "tag", "v2.1.0")
    (repo / "torch_xla" / "csrc" / "runtime" / "pjrt_computation_client.h").write_text(HEADER)
    callers = "\n".join(f"void Use{i}(const at::Tensor& t) {{ auto x = bridge::GetXlaTensor(t); }}" for i in range(12))
    (repo / "torch_xla" / "csrc" / "ops.cpp").write_text(callers + "\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "header")
    _git(repo, "tag", "v2.2.0")
    return repo


def _xla_wheel(house: Path, version: str, strings: list[str]) -> Path:
    blob = b"\x7fELF\x00\x00" + b"\x00".join(s.encode() for s in strings) + b"\x00"
    path = build_wheel(
        house,
        "torch_xla",
        version,
        {"torch_xla/distributed/spmd/xla_sharding.py": PYTHON, "torch_xla/__init__.py": ""},
        tag="cp311-cp311-manylinux_2_28_x86_64",
    )
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr("_XLAC.cpython-311-x86_64-linux-gnu.so", blob)
    return path


def test_build_from_wheels_and_tags(tmp_path):
    repo = _xla_repo(tmp_path)
    house = tmp_path / "wheels"
    for v in ("2.1.0", "2.2.0"):
        _xla_wheel(house, v, ["Check failed: xtensor ", "Operands to %s must be real-valued floating-point, but got %s"])
    lines: list[str] = []
    cat = catalog.build(wheels=house, repo=repo, progress=lines.append)
    assert cat.releases == ("2.1.0", "2.2.0")
    assert lines[0].startswith("[1/2] torch_xla 2.1.0") and any(line.startswith("[2/2]") for line in lines)
    by = {(e.origin, e.template, e.function): e for e in cat.entries}
    bridge = by[("torch_xla", "Check failed: xtensor", "GetXlaTensor")]
    assert bridge.releases == ("2.1.0", "2.2.0") and bridge.callers == 12 and bridge.generic  # called from 12 places
    header = by[("torch_xla", "Check failed: HasValue()", "PjRtData::GetHandle")]
    assert header.releases == ("2.2.0",) and header.generic  # a check in a header's accessor
    assert by[("xla", f"Operands to {PLACEHOLDER} must be real-valued floating-point, but got {PLACEHOLDER}", "")].releases == (
        "2.1.0",
        "2.2.0",
    )
    assert cat.releases_text(header.releases) == "2.2.0" and cat.releases_text(bridge.releases) == "2.1.0–2.2.0"
    # stored as sorted JSON lines, read back the same
    text = cat.dumps()
    again = Catalog.loads(text)
    assert {e.key(): e for e in again.entries} == {e.key(): e for e in cat.entries}
    assert text == again.dumps()


def test_build_errors_name_what_is_missing(tmp_path):
    repo = _xla_repo(tmp_path)
    house = tmp_path / "wheels"
    _xla_wheel(house, "2.1.0", [])
    with pytest.raises(CatalogError, match=r"no torch_xla wheel for 2\.2\.0"):
        catalog.build(wheels=house, repo=repo, releases=["2.1.0", "2.2.0"])
    _xla_wheel(house, "2.3.0", [])
    with pytest.raises(CatalogError, match=r"no tag for v2\.3\.0"):
        catalog.build(wheels=house, repo=repo)
    with pytest.raises(CatalogError, match="not a pytorch/xla clone"):
        catalog.build(wheels=house, repo=tmp_path / "nowhere", releases=["2.1.0"])


def test_a_bad_catalog_line_is_named():
    good = Catalog(("2.1.0",), [Entry("torch_xla", "check", "Check failed: xtensor", "a.cpp", "F", releases=("2.1.0",))]).dumps()
    with pytest.raises(CatalogError, match=r"cat:3: bad catalog entry"):
        Catalog.loads(good + '{"o": "torch_xla"}\n', "cat")
    with pytest.raises(CatalogError, match=r"cat:1: not a catalog header"):
        Catalog.loads("[]\n", "cat")


def test_the_shipped_catalog_covers_every_release():
    from xlakb.candidates.releases import all_releases

    cat = catalog.load()
    assert list(cat.releases) == all_releases(), "rebuild it: xlakb catalog build (see site/maintainers.md, The message catalog)"
    texts = {(e.template, e.function) for e in cat.entries if e.origin == "torch_xla"}
    assert ("Check failed: xtensor", "GetXlaTensor") in texts
    lazy = [e for e in cat.entries if e.origin == "lazy" and e.template.startswith("Expecting scope to be empty")]
    assert lazy and lazy[0].file.startswith("torch/csrc/lazy/")


def test_catalog_build_command_writes_the_catalog(tmp_path):
    import sys

    repo = _xla_repo(tmp_path)
    house = tmp_path / "wheels"
    for v in ("2.1.0", "2.2.0"):
        _xla_wheel(house, v, ["Check failed: xtensor "])
    out = tmp_path / "catalog.jsonl"
    r = subprocess.run(
        [sys.executable, "-m", "xlakb", "catalog", "build", "--wheels", str(house), "--repo", str(repo), "--out", str(out)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert "[1/2] torch_xla 2.1.0" in r.stderr and f"wrote {out}" in r.stdout and "for torch_xla 2.1.0–2.2.0" in r.stdout
    assert Catalog.loads(out.read_text()).releases == ("2.1.0", "2.2.0")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "xlakb",
            "catalog",
            "build",
            "--wheels",
            str(tmp_path / "none"),
            "--repo",
            str(repo),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 1 and "no torch_xla wheels" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_triage_with_repo_lists_the_commits_that_touched_a_message_since_the_release(tmp_path):
    import sys

    repo = _xla_repo(tmp_path)  # v2.1.0 and v2.2.0 both hold XLA_CHECK(xtensor)
    bridge = repo / "torch_xla" / "csrc" / "aten_xla_bridge.cpp"
    bridge.write_text(bridge.read_text().replace("XLA_CHECK(xtensor)", "XLA_CHECK_OK(CheckXlaTensor(xtensor))"))
    _git(repo, "commit", "-q", "-am", "Improve the error message of GetXlaTensor (#9520)")
    paste = "torch_xla==2.2.0\nRuntimeError: torch_xla/csrc/aten_xla_bridge.cpp:110 : Check failed: xtensor \n"
    root = Path(__file__).resolve().parent.parent
    r = subprocess.run(
        [sys.executable, "-m", "xlakb", "--root", str(root), "triage", "-", "--repo", str(repo)],
        input=paste,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 1, r.stderr
    assert "Commits that touched this message since v2.2.0" in r.stdout
    assert "Improve the error message of GetXlaTensor (#9520)" in r.stdout and " bridge" not in r.stdout.split("since v2.2.0")[1]
