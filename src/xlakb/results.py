"""Measured results, kept as data under ``bisect/<record>/`` for the site.

``matrix.json`` holds one result per candidate (newest measurement wins; results
for candidates not re-run are kept, so nothing measured is lost).
``bisect-<source>.json`` holds the last bisection report per source.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from pathlib import Path

from packaging.version import InvalidVersion, Version

from .errors import XlakbError
from .records import Record
from .runner import ProbeResult


def results_dir(root: Path, record_id: str) -> Path:
    return root / "bisect" / record_id


def write_json(path: Path, data: dict) -> None:
    """Write atomically: a crash leaves the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")
    os.replace(tmp, path)


def read_json(path: Path) -> dict | None:
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text("utf-8"))
    except ValueError as err:
        raise XlakbError(
            f"{path}: not valid JSON ({err})", hint="fix or delete the file; it is re-created by xlakb matrix"
        ) from None


def host() -> dict:
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
    }


def candidate_order(label: str) -> tuple:
    """Releases by version, then anything else (nightlies, wheels) by label."""
    try:
        return (0, Version(label), label)
    except InvalidVersion:
        return (1, Version("0"), label)


def save_matrix(root: Path, record: Record, results: list[ProbeResult], runner: str) -> Path:
    """Keep ``results`` in ``matrix.json`` (the bug on each release), and the workaround variant's results in
    ``workaround.json`` (the same shape: whether the workaround holds on each release)."""
    workaround = [r for r in results if r.kind == "workaround"]
    bug = [r for r in results if r.kind != "workaround"]
    path = results_dir(root, record.id) / "matrix.json"
    if workaround:
        path = _save_rows(root, record, workaround, runner, "workaround.json", "workaround")
    if bug or not workaround:
        path = _save_rows(root, record, bug, runner, "matrix.json", "matrix")
    return path


def _save_rows(root: Path, record: Record, results: list[ProbeResult], runner: str, name: str, kind: str) -> Path:
    path = results_dir(root, record.id) / name
    old = read_json(path) or {}
    by_label = {r["candidate"]: r for r in old.get("results", [])}
    for res in results:
        by_label[res.candidate] = {k: v for k, v in res.to_json().items() if k not in ("record", "log")}
    data = {
        "record": record.id,
        "kind": kind,
        "reproducer": {("trigger" if record.trigger else "path"): record.reproducer_label, "sha256": record.reproducer_sha256()},
        "runner": runner,
        "host": host(),
        "results": [by_label[k] for k in sorted(by_label, key=candidate_order)],
    }
    write_json(path, data)
    return path


def load_matrix(root: Path, record_id: str) -> dict | None:
    return read_json(results_dir(root, record_id) / "matrix.json")


def load_workaround(root: Path, record_id: str) -> dict | None:
    """The workaround variant's results (``workaround.json``), or None when it was never measured."""
    return read_json(results_dir(root, record_id) / "workaround.json")


def workaround_holds(bug: dict | None, workaround: dict | None) -> list[str]:
    """The releases where the bug was measured reproduced and the workaround variant not reproduced (the
    workaround holds there), oldest first."""
    reproduced = {r["candidate"] for r in (bug or {}).get("results", []) if r.get("verdict") == "reproduced"}
    return sorted(
        (
            r["candidate"]
            for r in (workaround or {}).get("results", [])
            if r.get("verdict") == "not-reproduced" and r["candidate"] in reproduced
        ),
        key=candidate_order,
    )


def merge_matrix(root: Path, other: Path) -> tuple[str, int]:
    """Merge the rows of another ``matrix.json`` (e.g. measured by a CI job on one release) into this
    checkout's ``bisect/<record>/matrix.json``: per candidate, the newer measurement wins; nothing else is
    lost. Returns (record id, rows taken from ``other``)."""
    data = read_json(other)
    if not data or not isinstance(data.get("results"), list) or not isinstance(data.get("record"), str):
        raise XlakbError(f"{other}: not a matrix.json (no 'record' and 'results')")
    path = results_dir(root, data["record"]) / "matrix.json"
    mine = read_json(path) or {k: v for k, v in data.items() if k != "results"} | {"results": []}
    rows = {r["candidate"]: r for r in mine.get("results", [])}
    taken = 0
    for row in data["results"]:
        old = rows.get(row["candidate"])
        if old is None or str(row.get("measured_at", "")) > str(old.get("measured_at", "")):
            rows[row["candidate"]] = row
            taken += 1
    mine["results"] = [rows[k] for k in sorted(rows, key=candidate_order)]
    if taken:
        write_json(path, mine)
    return data["record"], taken


def affected_floor(data: dict, rows: list[dict], releases: list[str]) -> dict | None:
    """How far back a record's bug is known, honestly: the oldest release measured reproduced (``first``) and
    whether "affected from" is a fact (``exact``) or only "at least from" (the faulty code may be older), with
    why (``why``: a code the site and CLI put in words, ``prev``/``pr`` for them). It is a fact when the
    release before ``first`` was measured not reproduced, or the record names the change that brought the bug
    (``upstream.introduced_by``: a person traced the code); otherwise ``first`` may be only the oldest
    release the reproducer can run on, or the oldest one measured. None when no release reproduced it."""
    measured = {r["candidate"]: r["verdict"] for r in rows if r.get("kind", "release") == "release"}
    order = [r for r in releases if r in measured]
    failing = [r for r in order if measured[r] == "reproduced"]
    if not failing:
        return None
    first = failing[0]
    i = releases.index(first) if first in releases else -1
    prev = releases[i - 1] if i > 0 else None
    introduced = list(data.get("upstream", {}).get("introduced_by") or [])
    if prev is not None and measured.get(prev) == "not-reproduced":
        return {"first": first, "exact": True, "why": "prev-passes", "prev": prev}
    if introduced:
        return {"first": first, "exact": True, "why": "introduced", "pr": introduced[0]}
    if prev is None:
        return {"first": first, "exact": False, "why": "oldest"}
    if measured.get(prev) == "untestable":
        return {"first": first, "exact": False, "why": "prev-untestable", "prev": prev}
    return {"first": first, "exact": False, "why": "prev-unknown", "prev": prev}


def affected_range_text(data: dict, rows: list[dict], releases: list[str], lang: str) -> str:
    """:func:`affected_floor` as a reader is told it ("Affected from X: …" or "Affected at least from X: …"),
    in ``lang`` (data/ui.yaml); '' when no release reproduced it. The site and ``xlakb show`` say the same."""
    from .words import ui

    floor = affected_floor(data, rows, releases)
    if floor is None:
        return ""
    pr = f"PR #{floor['pr']}" if floor.get("pr") else ""
    return ui()[lang]["affected_range"][floor["why"]].format(first=floor["first"], prev=floor.get("prev", ""), pr=pr)
