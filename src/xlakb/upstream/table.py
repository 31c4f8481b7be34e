"""The reproducibility table of the reported tier: for each stored report, whether its thread carries code, whether
that code is self-contained, whether the behaviour can show on a CPU, the release the reporter used, and what
trying it gave (reproduced on which releases, not reproduced and why, not tried and why), with the record that
proves it when there is one.

``upstream/reproducibility.yaml`` in the repository, kept as data like the mining candidate table: one entry a
report, sorted by number. Pure code: loading, checking, and the funnel the README and ``xlakb upstream table``
give. Library code: raises XlakbError, prints nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import XlakbError

TABLE = Path("upstream") / "reproducibility.yaml"
CPU = ("yes", "no", "unknown")
OUTCOMES = ("reproduced", "not-reproduced", "not-tried")
VERDICTS = ("reproduced", "not-reproduced", "untestable", "error")
COMPONENTS = (
    "sharding",
    "dynamo",
    "data-loading",
    "checkpointing",
    "collectives",
    "amp",
    "runtime",
    "ops",
    "export",
    "install",
    "other",
)
RELEASE_SOURCES = ("stated", "era")
#: what a reproduced report proved to be: a true bug (a record is owed), a limitation (something not built yet,
#: or not on this hardware), a usage error, or a deliberate check doing its job
FINDINGS = ("bug", "limitation", "usage", "by-design")
#: the first filing date the table must cover (every stored report from then on has an entry)
COVERS_FROM = "2023-01-01"


@dataclass
class Entry:
    number: int
    component: str
    code: bool
    self_contained: bool | None
    cpu: str
    release: str
    release_source: str
    outcome: str
    reason: str
    releases: dict[str, str] = field(default_factory=dict)
    record: str | None = None
    script: str | None = None  # the trial script the releases were measured with (upstream/trials/<n>.py)
    finding: str | None = None  # FINDINGS; a reproduced report without a record says which

    @property
    def bug(self) -> bool:
        """Reproduced and a true bug: its record proves it, or it is owed one."""
        return self.outcome == "reproduced" and (self.finding == "bug" or (self.finding is None and bool(self.record)))

    @property
    def differs(self) -> bool:
        """The measured releases disagree: one reproduces, another does not (a release introduced or fixed it)."""
        seen = set(self.releases.values())
        return "reproduced" in seen and "not-reproduced" in seen


_KEYS = {
    "number",
    "component",
    "code",
    "self_contained",
    "cpu",
    "release",
    "release_source",
    "outcome",
    "reason",
    "releases",
    "record",
    "script",
    "finding",
}


def _entry(item, where: str, releases: Iterable[str]) -> Entry:
    """One entry, or XlakbError naming the place and the field."""
    if not isinstance(item, Mapping):
        raise XlakbError(f"{where}: an entry must be a mapping, not {type(item).__name__}")
    number = item.get("number")
    if not isinstance(number, int) or isinstance(number, bool):
        raise XlakbError(f"{where}: 'number' must be an issue number, not {number!r}")
    at = f"{where} (#{number})"
    unknown = sorted(set(item) - _KEYS)
    if unknown:
        raise XlakbError(f"{at}: unknown field {unknown[0]!r}")

    def choice(name: str, allowed: tuple[str, ...]) -> str:
        value = item.get(name)
        if value not in allowed:
            raise XlakbError(f"{at}: '{name}' is {value!r}, not one of {', '.join(allowed)}")
        return value

    if not isinstance(item.get("code"), bool):
        raise XlakbError(f"{at}: 'code' must be true or false")
    contained = item.get("self_contained")
    if contained is not None and not isinstance(contained, bool):
        raise XlakbError(f"{at}: 'self_contained' must be true, false or null")
    reason = item.get("reason")
    if not isinstance(reason, str) or len(reason.split()) < 3:
        raise XlakbError(f"{at}: 'reason' must say why, in a sentence")
    release = str(item.get("release") or "")
    if not release:
        raise XlakbError(f"{at}: 'release' (the reporter's release, stated or the era's) is missing")
    measured = item.get("releases") or {}
    if not isinstance(measured, Mapping):
        raise XlakbError(f"{at}: 'releases' must map a release to what was measured")
    known = set(releases)
    for rel, verdict in measured.items():
        if str(rel) not in known:
            raise XlakbError(f"{at}: releases: {rel!r} is not a release xlakb knows")
        if verdict not in VERDICTS:
            raise XlakbError(f"{at}: releases: {rel}: {verdict!r} is not one of {', '.join(VERDICTS)}")
    entry = Entry(
        number=number,
        component=choice("component", COMPONENTS),
        code=item["code"],
        self_contained=contained,
        cpu=choice("cpu", CPU),
        release=release,
        release_source=choice("release_source", RELEASE_SOURCES),
        outcome=choice("outcome", OUTCOMES),
        reason=reason.strip(),
        releases={str(k): v for k, v in measured.items()},
        record=item.get("record") or None,
        script=item.get("script") or None,
    )
    if entry.outcome == "reproduced" and "reproduced" not in entry.releases.values():
        raise XlakbError(f"{at}: outcome is reproduced, but no release in 'releases' measured it reproduced")
    if entry.outcome == "not-reproduced" and not entry.releases:
        raise XlakbError(f"{at}: outcome is not-reproduced, but 'releases' names none that was measured")
    if entry.outcome == "not-tried" and entry.releases:
        raise XlakbError(f"{at}: outcome is not-tried, but 'releases' says something was measured")
    if entry.releases and not entry.script and not entry.record:
        raise XlakbError(f"{at}: 'releases' were measured, but neither 'script' nor 'record' says with what")
    if item.get("finding") is not None:
        entry.finding = choice("finding", FINDINGS)
        if entry.outcome != "reproduced":
            raise XlakbError(f"{at}: 'finding' says what a reproduced report proved to be, but the outcome is {entry.outcome}")
    elif entry.outcome == "reproduced" and not entry.record:
        raise XlakbError(
            f"{at}: reproduced without a record: 'finding' must say what it proved to be: one of {', '.join(FINDINGS)}"
        )
    return entry


def load(root: Path, releases: Iterable[str]) -> list[Entry]:
    """The table's entries by number (none when the table does not exist); XlakbError naming the file, the entry
    and the field on bad input, or a report listed twice."""
    from ..records import parse_file  # bounded and alias-free, as records are read

    path = root / TABLE
    if not path.exists():
        return []
    data, _node, found = parse_file(path)
    if found:
        raise XlakbError(f"{TABLE}:{found[0].line or 1}: {found[0].message}")
    if not isinstance(data.get("reports"), list):
        raise XlakbError(f"{TABLE}: must hold a list under 'reports'")
    out: dict[int, Entry] = {}
    releases = list(releases)
    for i, item in enumerate(data["reports"]):
        entry = _entry(item, f"{TABLE}: reports[{i}]", releases)
        if entry.number in out:
            raise XlakbError(f"{TABLE}: reports[{i}]: #{entry.number} is listed twice")
        out[entry.number] = entry
    return [out[n] for n in sorted(out)]


def problems(root: Path, entries: list[Entry], reports: Mapping[int, object], record_ids: Iterable[str]) -> list[str]:
    """What the table says that the rest of the knowledge base contradicts: a report the store does not hold, a
    record or a trial script that does not exist."""
    ids = set(record_ids)
    out = []
    for e in entries:
        if e.script and not (root / e.script).is_file():
            out.append(f"{TABLE}: #{e.number}: script {e.script!r} does not exist")
        if e.number not in reports:
            out.append(f"{TABLE}: #{e.number} is not a stored report (upstream/issues.jsonl)")
        if e.record and e.record not in ids:
            out.append(f"{TABLE}: #{e.number}: record {e.record!r} does not exist")
    return out


def missing(entries: list[Entry], reports: Mapping[int, object]) -> list[int]:
    """Stored issues filed from COVERS_FROM on that the table has no entry for yet."""
    listed = {e.number for e in entries}
    return [
        n
        for n, r in sorted(reports.items())
        if not getattr(r, "pull_request", False) and (getattr(r, "created_at", None) or "") >= COVERS_FROM and n not in listed
    ]


def funnel(entries: list[Entry]) -> list[tuple[str, int]]:
    """The steps from a stored report to a proven record, each with how many reports reached it."""
    return [
        ("reports in the table", len(entries)),
        ("carry code meant to reproduce the error", sum(e.code for e in entries)),
        ("of them self-contained (or after mechanical edits)", sum(bool(e.code and e.self_contained) for e in entries)),
        ("of them can show on a CPU", sum(bool(e.code and e.self_contained and e.cpu != "no") for e in entries)),
        ("tried on CPU with real wheels", sum(e.outcome != "not-tried" for e in entries)),
        ("reproduced the reported error", sum(e.outcome == "reproduced" for e in entries)),
        ("of them true bugs (not a limitation, usage or a deliberate check)", sum(e.bug for e in entries)),
        ("differ between releases", sum(e.differs for e in entries)),
        ("proven by a record", sum(bool(e.record) for e in entries)),
        ("true bugs still without a record", sum(e.bug and not e.record for e in entries)),
    ]
