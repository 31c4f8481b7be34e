"""Real torch_xla wheels from the package index (marked `realwheels`; CI runs them too).

Each test installs real releases (torch pulls ~5 GB per release into a uv cache
shared by this suite, never the user's) and runs a real reproducer on CPU.
"""

import json
from pathlib import Path

import pytest

from xlakb.candidates.releases import all_releases, published_versions, release
from xlakb.envs.uv import UvBackend
from xlakb.records import load_record
from xlakb.runner import Verdict, probe
from xlakb.verify import claimed_pair

REPO = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.realwheels

SCALAR = "fsdpv2-scalar-param-unhashable-list"


def test_release_table_covers_every_published_release():
    published = published_versions()
    assert published, "the package index listed no torch_xla release"
    assert [v for v in published if v not in all_releases()] == []


@pytest.mark.parametrize("which", ["affected", "fixed"])
def test_scalar_param_record_on_real_releases(which):
    record = load_record(REPO, SCALAR)
    affected, fixed = claimed_pair(record)
    version = affected if which == "affected" else fixed
    assert version, f"{SCALAR} claims no {which} release"
    result = probe(record, release(version), UvBackend())
    expected = Verdict.REPRODUCED if which == "affected" else Verdict.NOT_REPRODUCED
    log = Path(result.log).read_text()
    assert result.verdict is expected, f"{version}: {result.detail}\n{log[-3000:]}"
    if expected is Verdict.REPRODUCED:
        assert "unhashable type: 'list'" in log
    assert result.duration_s < 120


def test_script_bisection_on_real_releases(tmp_path):
    """A script without a record that fails on the scalar record's claimed-affected release and passes on its
    fixed one (two adjacent releases this suite already installs), bisected between them: both ends probed, the
    right answer, and the report ready to paste."""
    from xlakb.cli import main

    affected, fixed = claimed_pair(load_record(REPO, SCALAR))
    script = tmp_path / "version_check.py"
    script.write_text(
        "import sys, torch_xla\n"
        "print('torch_xla', torch_xla.__version__)\n"
        f"sys.exit(1 if torch_xla.__version__.startswith({affected!r}) else 0)\n"
    )
    out = tmp_path / "report.json"
    argv = ["bisect", "--script", str(script), "--start", affected, "--end", fixed, "--runner", "uv", "--report", str(out)]
    assert main(argv) == 0
    data = json.loads(out.read_text())
    (stage,) = data["stages"]
    assert stage["answer"] == {"last_bad": affected, "first_good": fixed, "exact": True}
    assert stage["probes_run"] == 2 and f"torch_xla {affected}" in data["failing_log"]["excerpt"]


# the first record adds no package, so its environment is each release's host: the scalar record (numpy) and the
# mesh record (numpy, rich; 16 devices) then run in environments that add packages to it
WARM_SAMPLE = [
    "cpu-backward-before-xla-autograd-assert",
    SCALAR,
    "use-spmd-after-device-init-segfault",
    "dynamo-inplace-view-op-xtensor-check",
    "visualize-sharding-two-digit-mesh-dim",
]


def test_warm_and_cold_probes_give_the_same_verdict_on_real_wheels(monkeypatch):
    """A sample of records (an exception, an autograd assert, a segfault in a child, a dynamo failure, records whose
    environments add packages) on the two releases this suite already installs, cold and warm, the verdict cache
    left out; the full comparison over every record and release is benchmarks/bench_warm.py. The records that add
    packages are forked from their release's server (nothing they add is looked for while torch and torch_xla are
    imported), so each release has one server per set of variables read at import."""
    from xlakb.envs.warm import close_pool, pool, server_env
    from xlakb.runner import run_env

    record = load_record(REPO, SCALAR)
    releases = claimed_pair(record)
    backend = UvBackend()
    seen = {}
    settings = {
        (version, tuple(sorted(server_env(version, run_env(load_record(REPO, rid), None, release(version))).items())))
        for rid in WARM_SAMPLE
        for version in releases
    }
    for start in ("cold", "warm"):
        monkeypatch.setenv("XLAKB_WARM", "1" if start == "warm" else "0")
        close_pool()
        for rid in WARM_SAMPLE:
            for version in releases:
                res = probe(load_record(REPO, rid), release(version), backend)
                assert res.start == start, (rid, version, res.start)
                seen.setdefault((rid, version), {})[start] = (res.verdict, res.duration_s)
    assert (pool().started, pool().refused) == (len(settings), {})
    close_pool()
    for (rid, version), got in seen.items():
        assert got["cold"][0] is got["warm"][0], (rid, version, got)
    warm_scalar = seen[(SCALAR, releases[0])]["warm"][1]
    assert warm_scalar < seen[(SCALAR, releases[0])]["cold"][1]
