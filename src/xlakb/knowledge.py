"""The knowledge base as a whole: records with what was measured of them.

Above :mod:`xlakb.records` (records as data), :mod:`xlakb.results` and :mod:`xlakb.matrix` (what was measured)
and :mod:`xlakb.triage` (matching a log): the checks that need both a record and its measurements
(:func:`validate`), and the triage data of the whole knowledge base (:func:`export`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from . import catalog as catalog_mod
from .matrix import disagreements
from .records import LANGS, PUBLISHED, Problem, Record, _line_of, load_records, parse_file
from .records import validate as validate_records
from .results import load_matrix, load_workaround, workaround_holds
from .triage import export_record, export_records


def validate(root: Path) -> tuple[list[Record], list[Problem]]:
    """Everything ``xlakb validate`` checks: each record as data (:func:`xlakb.records.validate`), its claims
    against its measured matrix, and a workaround text that says it was checked against a measured verdict."""
    records, problems = validate_records(root, measured=True)
    for record in records:
        rel = record.path.relative_to(root) if record.path.is_relative_to(root) else record.path
        _data, node, _ = parse_file(record.path)
        problems.extend(measured_problems(root, rel, record, node))
        problems.extend(workaround_problems(root, rel, record, node))
    problems.extend(signature_problems(root, records))
    problems.extend(table_problems(root, records))
    problems.extend(cause_problems(root))
    return records, problems


def cause_problems(root: Path) -> list[Problem]:
    """What the reports' threads say was the cause (upstream/causes.yaml) as data, and against the store."""
    from .errors import XlakbError
    from .upstream import causes, store

    try:
        found = causes.problems(causes.load(root), store.load(root))
    except XlakbError as err:
        found = [str(err)]
    return _file_problems(causes.CAUSES, "causes", found)


def table_problems(root: Path, records: list[Record]) -> list[Problem]:
    """The reproducibility table of the reported tier (upstream/reproducibility.yaml) as data, and against the
    stored reports and the records."""
    from .candidates.releases import all_releases
    from .errors import XlakbError
    from .upstream import store, table

    try:
        entries = table.load(root, all_releases())
        found = table.problems(root, entries, store.load(root), [r.id for r in records])
    except XlakbError as err:
        found = [str(err)]
    return _file_problems(table.TABLE, "reports", found)


def _file_problems(path: Path, where: str, messages: list[str]) -> list[Problem]:
    """Problems of a data file from messages that may start with the file's name (it is said once)."""
    return [Problem(path, None, where, m.split(": ", 1)[1] if m.startswith(str(path)) else m) for m in messages]


def signature_problems(root: Path, records: list[Record]) -> list[Problem]:
    """Signatures that match more than their bug, found by measuring, not by chance: a line an unrelated log
    shows (``data/background``: a warning any release prints, Python's own errors), another record's error
    when the two are not declared look-alikes, an entry frame every run passes through. Each must be
    narrowed, or the other record declared a look-alike, or the record must say why the signature is kept
    (``shared: <why>``): it then gates a match but is never evidence by itself."""
    from .signatures import signatures_of

    by_id = {r.id: r for r in records}
    out = []
    published = [r for r in records if r.kind in PUBLISHED]
    exported_records = export_records([export_record(r.data, None) for r in published])["records"]  # signatures only
    for exported in exported_records:
        record = by_id.get(exported["id"])
        if record is None:
            continue
        rel = record.path.relative_to(root) if record.path.is_relative_to(root) else record.path
        items = record.data.get("signatures", [])
        sigs = signatures_of(record.data)
        node = None
        for i, s in enumerate(exported["signatures"]):
            if not s.get("generic") or i >= len(items):
                continue
            if isinstance(items[i], dict) and items[i].get("shared"):
                continue
            if node is None:
                node = parse_file(record.path)[1]
            out.append(
                Problem(
                    rel,
                    _line_of(node, ["signatures", i]),
                    f"signatures[{i}]",
                    f"{sigs[i].describe()} matches more than this bug ({s['generic']}): narrow it, declare the other "
                    "record a look-alike, or say why it is kept (shared: ...)",
                )
            )
    return out


#: words in a workaround's text that say it was checked (English and Chinese)
CHECKED_CLAIM = re.compile(
    r"--workaround|reproducer (?:checks|checked|verifies|verified|confirms)|\b(?:verified|checked) (?:on|with)\b|"
    r"复现脚本.{0,16}(?:验证|检验|检查)|已(?:验证|实测)",
    re.I,
)


def workaround_problems(root: Path, rel: Path, record: Record, node: yaml.Node | None) -> list[Problem]:
    """A workaround's text may say it was checked only where a measured verdict stands behind it: the record
    declares its variant of the reproducer (``reproducer.workaround``) and ``workaround.json`` shows it
    holding on a release where the bug was measured reproduced."""
    out = []
    for lang in LANGS:
        m = CHECKED_CLAIM.search(record.data["workaround"][lang])
        if not m:
            continue
        if not record.workaround:
            out.append(
                Problem(
                    rel,
                    _line_of(node, ["workaround", lang]),
                    f"workaround.{lang}",
                    f"says the workaround was checked ({m.group(0)!r}), but reproducer.workaround is not declared",
                )
            )
        elif not workaround_holds(load_matrix(root, record.id), load_workaround(root, record.id)):
            out.append(
                Problem(
                    rel,
                    _line_of(node, ["workaround", lang]),
                    f"workaround.{lang}",
                    f"says the workaround was checked ({m.group(0)!r}), but no measured verdict shows it holding "
                    f"(run xlakb matrix {record.id} --variants workaround)",
                )
            )
    return out


def measured_problems(root: Path, rel: Path, record: Record, node: yaml.Node | None) -> list[Problem]:
    """The record's claims against its own measured matrix (``bisect/<id>/matrix.json``): one problem per
    disagreement, naming the field of the record and what was measured."""
    path = root / "bisect" / record.id / "matrix.json"
    if not path.is_file():
        return []
    try:
        matrix = json.loads(path.read_text("utf-8"))
        rows = list(matrix["results"])
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as err:
        return [Problem(path.relative_to(root), None, "results", f"cannot read the measured matrix: {err}")]
    out = []
    for where, message in disagreements(record, rows):
        out.append(Problem(rel, _line_of(node, where.split(".")), where, f"{message} (bisect/{record.id}/matrix.json)"))
    return out


def export(root: Path, catalog_path: Path | None = None) -> dict:
    """Triage data of every record under ``root`` with its measured matrix, and the message catalog."""
    records = [export_record(r.data, load_matrix(root, r.id)) for r in load_records(root, PUBLISHED)]
    return export_records(records, catalog_mod.load(catalog_path))


def upstream_clusters(root: Path, catalog: list[dict] | None = None):
    """The reported tier of ``root``: its stored upstream reports clustered by signature, linked to the
    records that name their issues and to the first release of a fix (from a record, or the release a mined
    candidate found the PR in), with the message catalog's templates they instantiate (``catalog``: the exported
    rows when the caller has them, else the shipped catalog is read)."""
    from .mining.mine import load_table
    from .records import load_records
    from .upstream import index, store

    reports = store.load(root)
    if not reports:
        return []
    # the first release shipping a PR is a fact of the clone (ancestry or cherry-pick), whether or not the
    # PR's test proved a bug: every mined candidate gives it
    fixes = {m.pr: m.fixed_in for m in load_table(root) if m.pr and m.fixed_in}
    from .errors import XlakbError
    from .upstream import causes, links

    try:
        said = causes.load(root)
    except XlakbError:  # `xlakb validate` names the file, the entry and the field; triage goes on without them
        said = {}
    clusters = index.build(reports, [r.data for r in load_records(root)], fixes, links.load(root), said)
    annotate_templates(clusters, catalog)
    return clusters


def annotate_templates(clusters: list, rows: list[dict] | None = None) -> None:
    """Give each cluster the message catalog templates its error (or title) instantiates
    (:func:`xlakb.upstream.index.template_text`); ``rows`` are the exported catalog (the shipped one unless given)."""
    from . import catalog as catalog_mod
    from .triage import CatalogIndex, export_catalog
    from .upstream.index import template_text

    cat = CatalogIndex(rows if rows is not None else export_catalog(catalog_mod.load()))
    for c in clusters:
        if c.signature:
            c.templates = sorted({t for o in cat.match(c.signature) if (t := template_text(o.row))})
