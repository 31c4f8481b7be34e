"""Real torch_xla wheels from the package index (marked `realwheels`; CI runs them too).

Each test installs real releases (torch pulls ~5 GB per release into a uv cache
shared by this suite, never the user's) and runs a real reproducer on CPU.
"""

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
