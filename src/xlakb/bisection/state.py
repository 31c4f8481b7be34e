"""Resume state of a bisection: every probe saved (atomically) the moment it finishes.

One JSON file per bisection under ``<cache>/bisect-state/``, named by a hash of everything that makes
the bisection what it is (record and reproducer, source, direction, candidates and what each installs,
runner, wheel sources, and the source's own fingerprint), so an interrupted run resumes without
repeating a probe and another bisection never reads it.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path

from ..candidate import Candidate
from ..results import read_json, write_json
from ..runner import ProbeResult, Verdict


def identity(c: Candidate) -> list:
    """What a candidate installs and runs with, for the state key."""
    return [
        c.label,
        c.torch_xla,
        c.torch,
        list(c.pins),
        list(c.overlay or ()),
        c.meta.get("torch_xla_url"),
        c.meta.get("torch_url"),
    ] + ([list(map(list, c.settings))] if c.settings is not None else [])


class SavedProbes:
    """Probes of one bisection by candidate label; errors are not kept (a resumed run retries them)."""

    def __init__(self, path: Path, record_id: str) -> None:
        self.path = path
        self.record_id = record_id
        self._lock = threading.Lock()
        data = read_json(path) or {}
        saved = {label: ProbeResult.from_json(p, cached=True) for label, p in data.get("probes", {}).items()}
        self.probes: dict[str, ProbeResult] = {k: v for k, v in saved.items() if v.verdict is not Verdict.ERROR}
        self.resumed = len(self.probes)

    @classmethod
    def open(cls, root: Path, record_id: str, source: str, key: dict) -> SavedProbes:
        blob = json.dumps(key, sort_keys=True)
        return cls(root / f"{record_id}-{source}-{hashlib.sha256(blob.encode()).hexdigest()[:16]}.json", record_id)

    def get(self, label: str) -> ProbeResult | None:
        with self._lock:
            return self.probes.get(label)

    def put(self, label: str, result: ProbeResult) -> None:
        with self._lock:
            self.probes[label] = result
            write_json(self.path, {"record": self.record_id, "probes": {k: v.to_json() for k, v in self.probes.items()}})

    def __contains__(self, label: str) -> bool:
        return self.get(label) is not None

    def values(self) -> list[ProbeResult]:
        with self._lock:
            return list(self.probes.values())
