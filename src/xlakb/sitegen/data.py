"""What the site shows: records, their reproducers and what was measured for them.

Records come from :func:`xlakb.records.load_records` (schema-checked).  Measured
results are read from ``bisect/<id>/matrix.json`` and ``bisect/<id>/bisect-<source>-<direction>.json``
as written by ``xlakb matrix`` / ``xlakb bisect``; a record without them is shown
as "not measured yet".  A malformed results file is an error naming the file and field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import XlakbError
from ..records import load_records
from ..results import candidate_order

VERDICTS = ("reproduced", "not-reproduced", "untestable", "error")


@dataclass
class Measured:
    """The measured data of one record; ``matrix`` None means not measured yet."""

    matrix: dict | None = None
    bisects: list[dict] = field(default_factory=list)
    workaround: dict | None = None  # the workaround variant's results (workaround.json), when measured


@dataclass
class SiteRecord:
    path: Path  # issues/<id>.yaml
    data: dict  # the record as written
    source: str  # the reproducer's source code
    measured: Measured

    @property
    def id(self) -> str:
        return self.data["id"]


def load_site_records(root: Path, kinds: tuple[str, ...] = ("bug",)) -> list[SiteRecord]:
    """Every record of ``kinds`` (the bugs, by default; ``("limitation",)`` the limitations lifted) under
    ``root`` with its reproducer source and measured data, sorted by id. Drafts are never published."""
    out = []
    for rec in load_records(root, kinds):
        if rec.trigger:  # a mined record: its upstream test is linked, not shown (nor kept here)
            out.append(SiteRecord(rec.path, rec.data, "", load_measured(root, rec.data["id"])))
            continue
        repro = root / rec.data["reproducer"]["path"]
        try:
            source = repro.read_text("utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise XlakbError(f"{rec.path}: reproducer.path: cannot read {repro}: {err}") from None
        out.append(SiteRecord(rec.path, rec.data, source, load_measured(root, rec.data["id"])))
    return sorted(out, key=lambda r: r.id)


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise XlakbError(f"{path}: not readable JSON ({err})", hint="it is re-written by xlakb matrix / xlakb bisect") from None
    if not isinstance(data, dict):
        raise XlakbError(f"{path}: expected a JSON object, found {type(data).__name__}")
    return data


def _need(path: Path, data: dict, key: str, kind: type | tuple) -> object:
    if key not in data:
        raise XlakbError(f"{path}: field {key!r} is missing")
    value = data[key]
    if not isinstance(value, kind):
        raise XlakbError(f"{path}: field {key!r}: {value!r} is not of the expected type")
    return value


def _read_rows(path: Path, record_id: str) -> dict:
    """A matrix-shaped file (matrix.json, workaround.json), checked: its record, and a verdict per row."""
    data = _read(path)
    if data.get("record", record_id) != record_id:
        raise XlakbError(f"{path}: field 'record' is {data['record']!r}, expected {record_id!r}")
    results = _need(path, data, "results", list)
    for i, res in enumerate(results):
        if not isinstance(res, dict) or not isinstance(res.get("candidate"), str):
            raise XlakbError(f"{path}: results[{i}].candidate is missing")
        if res.get("verdict") not in VERDICTS:
            raise XlakbError(f"{path}: results[{i}].verdict: {res.get('verdict')!r} is not one of {', '.join(VERDICTS)}")
    data["results"] = sorted(results, key=lambda r: candidate_order(r["candidate"]))
    return data


def load_measured(root: Path, record_id: str) -> Measured:
    folder = root / "bisect" / record_id
    measured = Measured()
    if not folder.is_dir():
        return measured
    matrix_path = folder / "matrix.json"
    workaround_path = folder / "workaround.json"
    if workaround_path.is_file():
        measured.workaround = _read_rows(workaround_path, record_id)
    if matrix_path.is_file():
        measured.matrix = _read_rows(matrix_path, record_id)
    for path in sorted(folder.glob("bisect-*.json")):
        report = _read(path)
        if report.get("record", record_id) != record_id:
            raise XlakbError(f"{path}: field 'record' is {report['record']!r}, expected {record_id!r}")
        report.setdefault("source", path.stem[len("bisect-") :].split("-")[0])
        _need(path, report, "direction", str)
        for key in ("last_old", "first_new"):
            if report.get(key) is not None and not isinstance(report[key], dict):
                raise XlakbError(f"{path}: field {key!r} is not an object")
        for key in ("between", "probes", "confidence_reasons"):
            if not isinstance(report.get(key, []), list):
                raise XlakbError(f"{path}: field {key!r} is not a list")
        measured.bisects.append(report)
    from ..candidates import SOURCES

    order = {s: i for i, s in enumerate(SOURCES)}
    measured.bisects.sort(key=lambda r: (order.get(r["source"], len(order)), r["source"]))
    return measured


def load_results(root: Path) -> list[dict]:
    """What the benchmarks wrote (``benchmarks/results/*.json``), each checked for the fields the measurements
    page shows; a malformed file is an error naming it."""
    out = []
    for path in sorted((root / "benchmarks" / "results").glob("*.json")):
        data = _read(path)
        for key, kind in (("benchmark", str), ("title", dict), ("command", str), ("date", str), ("figures", list)):
            _need(path, data, key, kind)
        for i, f in enumerate(data["figures"]):
            if not isinstance(f, dict) or not isinstance(f.get("what"), dict) or "value" not in f:
                raise XlakbError(f"{path}: figures[{i}] needs what (en, zh) and value")
        out.append(data)
    return out


def pack_triage(data: dict) -> dict:
    """The paste box's data (``assets/triage.json``) smaller on the wire: the message catalog, nine tenths of it,
    as rows of values with its repeated parts (origins, places, release lists, kinds) listed once, and each
    pattern left out where it is :func:`xlakb.catalog.template_pattern` of the row's text (1 or 0: whether the
    check's lookahead ends it). site/assets/javascripts/triage.js (``unpack``) makes the same rows again."""
    from ..catalog import PLACEHOLDER, template_pattern

    tables: dict[str, list] = {"origins": [], "places": [], "releases": [], "kinds": []}
    seen: dict[str, dict[str, int]] = {name: {} for name in tables}

    def index(name: str, value: list) -> int:
        key = json.dumps(value, ensure_ascii=False)
        if key not in seen[name]:
            seen[name][key] = len(tables[name])
            tables[name].append(value)
        return seen[name][key]

    rows = []
    for row in data["catalog"]:
        template = row["text"].replace("…", PLACEHOLDER)
        pattern: str | int = row["pattern"]
        if pattern == template_pattern(template):
            pattern = 0
        elif pattern == template_pattern(template, "check"):  # 1 only where the lookahead was added
            pattern = 1
        places = [index("places", [p["file"], p["function"], p["releases"], p["callers"]]) for p in row["places"]]
        rows.append(
            [
                pattern,
                row["key"],
                row["text"],
                row["literal"],
                index("origins", row["origins"]),
                places,
                index("releases", [row["releases"], row["release_list"]]),
                index("kinds", row["kinds"]),
                int(row["sign"]),
                row["generic"],
            ]
        )
    return {**data, "catalog": {"packed": 1, **tables, "rows": rows}}
