"""A mined record's reproducer, made when it runs: the test tree of its upstream commit (from a pytorch/xla
clone, never from xlakb's repository) beside xlakb's runner of one test (``data/trigger_runner.py``).

The clone is ``$XLAKB_XLA_REPO`` (a path; bare or not). Bundles are cached per commit under the cache
folder (``triggers/<commit>``), made in a temporary folder and renamed, so probes side by side share one.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
from importlib import resources
from pathlib import Path

from ..envs import BUNDLE_MARKER
from ..errors import XlakbError

RUNNER = "xlakb_trigger.py"
MARKER = BUNDLE_MARKER
#: the folders of the commit a test may take code from: the tests and their helpers, and the example models
#: upstream's tests import (``examples/decoder_only_model.py``, put on sys.path by the test)
TREES = ("test", "examples")


def runner_bytes() -> bytes:
    return (resources.files("xlakb") / "data" / "trigger_runner.py").read_bytes()


def clone_path() -> Path:
    """The pytorch/xla clone mined records take their tests from: ``$XLAKB_XLA_REPO``."""
    raw = os.environ.get("XLAKB_XLA_REPO", "").strip()
    if not raw:
        raise XlakbError(
            "a mined record's test comes from a pytorch/xla clone, and XLAKB_XLA_REPO is not set",
            hint="git clone https://github.com/pytorch/xla and export XLAKB_XLA_REPO=/path/to/xla",
        )
    path = Path(raw).expanduser()
    if not path.exists():
        raise XlakbError(f"XLAKB_XLA_REPO={raw}: no such folder", hint="point it at a pytorch/xla clone")
    return path


def _trees(marker: Path):
    """The folders a cached bundle was made of, by its marker (None when the marker cannot be read)."""
    try:
        return json.loads(marker.read_text()).get("trees")
    except (OSError, ValueError, AttributeError):
        return None


def bundle(trigger: dict, cache: Path, repo: Path | None = None) -> tuple[Path, tuple[str, ...]]:
    """The folder to run ``trigger`` in (made now if needed): the runner script and the arguments to give it."""
    from .history import export_tree

    commit = trigger["commit"]
    dest = cache / "triggers" / commit
    if (dest / MARKER).exists() and _trees(dest / MARKER) != list(TREES):
        stale = dest.with_name(f".{commit[:12]}-stale-{os.getpid()}-{threading.get_ident()}")
        try:  # made by an xlakb that took fewer folders: made again (a probe beside this one may be first)
            dest.rename(stale)
            shutil.rmtree(stale, ignore_errors=True)
        except OSError:
            pass
    if not (dest / MARKER).exists():
        repo = repo or clone_path()
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{commit[:12]}-", dir=dest.parent))
        try:
            for tree in TREES:
                export_tree(repo, commit, tree, tmp, missing_ok=tree != "test")
            (tmp / RUNNER).write_bytes(runner_bytes())
            (tmp / MARKER).write_text(json.dumps({"repo": trigger.get("repo"), "commit": commit, "trees": list(TREES)}) + "\n")
            for p in [tmp, *tmp.rglob("*")]:  # readable by a container's user whatever the host's umask
                if not p.is_symlink():  # (examples/ holds links to docs: not followed, not changed)
                    os.chmod(p, 0o755 if p.is_dir() else 0o644)
            try:
                tmp.rename(dest)
            except OSError:  # made by a probe beside this one meanwhile
                shutil.rmtree(tmp, ignore_errors=True)
        except OSError as err:  # a probe's error, with what failed, not the end of a batch
            shutil.rmtree(tmp, ignore_errors=True)
            raise XlakbError(
                f"cannot make the test bundle of pytorch/xla {commit[:10]} under {dest.parent}: {err}",
                hint="check the disk space and permissions of the cache folder",
            ) from None
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    if not (dest / trigger["path"]).is_file():
        raise XlakbError(f"{trigger['path']} is not in pytorch/xla at {commit[:10]}")
    # the runner is ours: a cached bundle gets this xlakb's copy
    if (dest / RUNNER).read_bytes() != runner_bytes():
        tmp_runner = dest / f".{RUNNER}.{os.getpid()}.{threading.get_ident()}"  # probes run in threads too
        tmp_runner.write_bytes(runner_bytes())
        os.chmod(tmp_runner, 0o644)
        tmp_runner.replace(dest / RUNNER)
    return dest / RUNNER, (trigger["path"], trigger["test"])
