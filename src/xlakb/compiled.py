"""The compiled index that commands read: the records' triage data (with their measured matrices), the
message catalog and the upstream clusters, built once from their inputs and kept beside the cache.

Reading is not auditing: ``xlakb triage`` answers from this index, as fast as Python starts, and it is
rebuilt only when one of its inputs changes (a record, a matrix, the catalog, the stored reports, the mining
table, the rules' data or xlakb's own code), which :func:`inputs_key` reads from their sizes and modification
times. Building it loads and checks the records as every command does; ``xlakb validate`` audits them.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from . import __version__

#: the repository's files the index is made of (globs under the root)
ROOT_INPUTS = ("issues/*.yaml", "limitations/*.yaml", "bisect/*/matrix.json", "upstream/*", "mined/candidates.json")
FORMAT = 2


def _package() -> Path:
    return Path(__file__).resolve().parent


def inputs(root: Path) -> list[Path]:
    """Every file whose change changes the index: the repository's inputs, the package's data and code."""
    files = [p for pattern in ROOT_INPUTS for p in sorted(root.glob(pattern)) if p.is_file()]
    pkg = _package()
    files += sorted(p for p in pkg.rglob("*") if p.is_file() and (p.suffix in (".py", ".yaml", ".jsonl", ".log")))
    return files


def inputs_key(root: Path) -> str:
    """A digest of what the index is made of: each input's path, size and modification time."""
    h = hashlib.sha256(f"{FORMAT} {__version__} {root.resolve()}\n".encode())
    for path in inputs(root):
        st = path.stat()
        h.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def _folder() -> Path:
    from .envs import cache_dir

    return cache_dir() / "index"


def build(root: Path) -> dict:
    """The index, made from its inputs: ``triage`` (what both triage engines read), ``clusters`` and
    ``needles``."""
    from .knowledge import export, upstream_clusters
    from .triage import needles_of

    data = export(root)
    return {
        "format": FORMAT,
        "triage": data,
        "clusters": [c.to_json() for c in upstream_clusters(root, data["catalog"])],  # the catalog read once
        "needles": needles_of(data),  # what a triage skips a big log's patterns by, worked out once
    }


def load(root: Path) -> dict:
    """The index of ``root``: read from the cache when its inputs are unchanged, else built and kept there
    (written atomically; indexes of older inputs are removed)."""
    key = inputs_key(root)
    folder = _folder()
    checkout = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:8]  # each checkout keeps its own
    path = folder / f"triage-{checkout}-{key[:24]}.json"
    try:
        data = json.loads(path.read_text("utf-8"))
        if data.get("format") == FORMAT:
            return data
    except (OSError, ValueError):
        pass
    data = build(root)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{path.name}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")), "utf-8")
        os.replace(tmp, path)
        for old in folder.glob(f"triage-{checkout}-*.json"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError:  # a read-only cache: the index is used, not kept
        pass
    return data
