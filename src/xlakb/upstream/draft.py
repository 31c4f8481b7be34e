"""``xlakb new <id> --from-report N``: a record draft from a stored upstream report.

The report's title and error lines become the record's symptoms and triage signatures, the report and every
report of the same cluster are linked, the release the reporter used (the newest one out when it was filed) is
the first to measure, and the reproducer skeleton runs on a CPU (the device defined, the result materialised)
with a comment saying what the user saw. A person writes the rest; ``xlakb validate`` checks it. Library code:
raises XlakbError, prints nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import XlakbError


@dataclass(frozen=True)
class Draft:
    record: Path
    reproducer: Path
    number: int
    issues: list[int]
    release: str  # the first release to measure


def era_release(created_at: str | None, releases: dict[str, dict]) -> str:
    """The newest release on the index when a report was filed (the oldest one xlakb knows for older reports; the
    newest one when the report's date is not stored)."""
    from ..results import candidate_order

    labels = sorted(releases, key=candidate_order)
    if not created_at:
        return labels[-1]
    out = labels[0]
    for label in labels:
        if created_at and str(releases[label].get("released", "")) <= created_at:
            out = label
    return out


def signatures_of_report(report) -> list[dict]:
    """Triage signatures from a stored report: its final error line, generalised (or as the message catalog knows
    it), its checks, and its guilty frames (Python frames as ``frame``, the innermost C++ one as ``check``); a line
    an unrelated log shows says so (``shared``)."""
    from ..triage import _generalise, mark_shared

    lines = report.error_lines()
    sigs: list[dict] = []
    messages = [e for e in lines if e.kind != "check"]
    if messages:
        sigs.append({"message": _generalise(messages[-1].line)})
    for e in lines:
        if e.kind == "check" and len([s for s in sigs if "check" in s]) < 2:
            check = _generalise(e.line[e.line.find("Check failed") :] if "Check failed" in e.line else e.line)
            if {"check": check} not in sigs:
                sigs.append({"check": check})
    cpp = [f[4:] for f in report.frames if f.startswith("cpp:")]
    if cpp:
        sigs.append({"check": re.escape(cpp[0])})
    for f in report.frames:
        if f.startswith("py:"):
            path, function = f[3:].rsplit(":", 1)
            sigs.append({"frame": {"file": re.escape(Path(path).name), "function": re.escape(function)}})
            break
    return mark_shared(sigs)


def _yaml_str(text: str) -> str:
    import json

    return json.dumps(text, ensure_ascii=False)  # a JSON string is a YAML double-quoted scalar


def from_report(root: Path, record_id: str, number: int, component: str, clusters: list, releases: dict[str, dict]) -> Draft:
    """Write the draft of record ``record_id`` from stored report ``number``; XlakbError naming the number when
    the store does not hold it, it is a pull request, or it shows no error line."""
    from ..scaffold import scaffold
    from . import store

    reports = store.load(root)
    report = reports.get(number)
    if report is None:
        raise XlakbError(
            f"#{number} is not a stored report (upstream/issues.jsonl holds {len(reports)})",
            hint="xlakb upstream fetch (or import) brings it in first",
        )
    if report.pull_request:
        raise XlakbError(f"#{number} is a pull request, not a report: pass the issue it fixes")
    sigs = signatures_of_report(report)
    if not report.errors or not sigs:
        raise XlakbError(f"#{number} shows no error line to take symptoms and signatures from")
    issues = sorted({number} | {r.number for c in clusters if number in {r.number for r in c.issues} for r in c.issues})
    release = era_release(report.created_at, releases)
    record, repro = scaffold(root, record_id, component, sigs)
    lines = [e.line for e in report.error_lines()][:4]
    text = record.read_text("utf-8")
    symptoms_en = "\n".join(f"    - {_yaml_str('`' + line[:300] + '`')}" for line in lines)
    symptoms_zh = "\n".join(f"    - {_yaml_str('报错 `' + line[:300] + '`')}" for line in lines)
    text = text.replace(
        '    - "TODO: the error message or wrong behaviour a user sees"', f"    # from #{number}: {report.title}\n{symptoms_en}"
    )
    text = text.replace('    - "待补充：用户看到的报错或异常行为"', symptoms_zh)
    text = text.replace("  issues: []", f"  issues: [{', '.join(str(n) for n in issues)}]")
    text = text.replace(
        '  affected: ">=2.1"',
        f'  affected: ">={release}"  # the release of #{number}\'s time (the newest if its date is unknown): measure it first',
    )
    record.write_text(text, "utf-8")
    source = repro.read_text("utf-8")
    saw = "\n".join(f"#   {line[:200]}" for line in lines)
    source = source.replace(
        '"""\n\nimport sys',
        f'"""\n\n# What the user saw ({report.url}{", filed " + report.created_at if report.created_at else ""}):\n{saw}\n'
        "# Write the smallest program that shows it on a CPU, in this project's own words.\n\nimport sys",
        1,
    )
    repro.write_text(source, "utf-8")
    return Draft(record, repro, number, issues, release)
