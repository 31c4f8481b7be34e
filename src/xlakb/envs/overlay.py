"""Commit overlays: an installed binary build of torch_xla with one commit's Python laid over it.

An environment concern (the uv and Docker backends build overlays for commit specs); it reads the
commit's files from the clone through :mod:`xlakb.gitrepo` and knows nothing of candidates.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

import git

from ..errors import XlakbError
from ..gitrepo import open_repo, rev

_MARKER = ".xlakb-overlay.json"


def _link_or_copy(src: str, dst: str) -> str:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)
    return dst


def _write_fresh(path: Path, data: bytes) -> None:
    """Write ``path`` as a new inode: never write through a hard link into the base."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    with open(path, "wb") as fh:
        fh.write(data)


def overlay_commit(
    repo: str | os.PathLike | git.Repo,
    sha: str,
    installed_pkg_dir: str | os.PathLike,
    dest_dir: str | os.PathLike,
    *,
    keep: Iterable[str] = ("version.py",),
) -> Path:
    """Build ``dest_dir/torch_xla``: the installed package with commit ``sha``'s Python.

    ``installed_pkg_dir`` is the installed ``torch_xla`` package directory of
    the base build (the one holding ``__init__.py`` and ``_XLAC*.so``).  Its
    files are hard-linked (copied across devices) into the new tree, then
    every ``torch_xla/**/*.py`` of the commit replaces or joins them and .py
    files the commit lacks are deleted — except ``keep`` (paths relative to
    the package; ``version.py`` is generated at build time and not in git).
    Non-.py files of the wheel stay.  ``__pycache__`` is not carried over.
    Put ``dest_dir`` first on PYTHONPATH to use it.

    Atomic: the tree is built in a temporary directory next to ``dest_dir``
    and renamed into place, so ``dest_dir`` is either absent, the old
    complete tree or the new complete tree.  An existing ``dest_dir`` made
    for the same commit and base is reused as is.  Returns ``dest_dir``.
    """
    r = open_repo(repo)
    full = rev(r, sha)
    base = Path(installed_pkg_dir).resolve()
    if not (base / "__init__.py").is_file():
        raise XlakbError(
            f"{base} is not an installed torch_xla package directory (no __init__.py)",
            hint="pass .../site-packages/torch_xla of the base environment",
        )
    dest = Path(dest_dir).resolve()
    marker = {"sha": full, "base": str(base)}
    if _marker_matches(dest, marker):
        return dest

    tree = r.commit(full).tree
    try:
        pkg_tree = tree / "torch_xla"
    except KeyError as err:
        raise XlakbError(f"commit {full[:8]} has no torch_xla/ directory") from err
    commit_py: dict[str, bytes] = {}
    for item in pkg_tree.traverse():
        if item.type == "blob" and item.path.endswith(".py") and item.mode != 0o120000:
            commit_py[item.path[len("torch_xla/") :]] = item.data_stream.read()

    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.tmp-", dir=dest.parent))
    try:
        os.chmod(tmp, 0o755)  # mkdtemp makes it private; other users (containers) read it
        pkg = tmp / "torch_xla"
        shutil.copytree(
            base,
            pkg,
            symlinks=True,
            copy_function=_link_or_copy,
            ignore=shutil.ignore_patterns("__pycache__"),
        )
        keep_set = {k.replace(os.sep, "/") for k in keep}
        for path in sorted(pkg.rglob("*.py")):
            rel = path.relative_to(pkg).as_posix()
            if rel not in commit_py and rel not in keep_set:
                path.unlink()
        for rel, data in commit_py.items():
            _write_fresh(pkg / rel, data)
        (tmp / _MARKER).write_text(json.dumps(marker))
        if dest.exists():
            trash = Path(tempfile.mkdtemp(prefix=f".{dest.name}.old-", dir=dest.parent))
            os.replace(dest, trash / "old")
            os.replace(tmp, dest)
            shutil.rmtree(trash, ignore_errors=True)
        else:
            os.replace(tmp, dest)
    except OSError as err:
        shutil.rmtree(tmp, ignore_errors=True)
        if _marker_matches(dest, marker):  # a concurrent build of the same overlay won
            return dest
        raise XlakbError(f"cannot build overlay {dest} for commit {full[:8]}: {err}") from err
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest


def _marker_matches(dest: Path, marker: dict) -> bool:
    try:
        return json.loads((dest / _MARKER).read_text()) == marker
    except (OSError, ValueError):
        return False
