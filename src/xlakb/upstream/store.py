"""The reported tier: upstream's issues and pull requests, kept as what the index needs (number, title, state,
labels, dates, link, the error lines pasted and their signatures, the issues a pull request closes), not the
prose of the reports.

``upstream/issues.jsonl`` in the repository: one object a line, sorted by number, so a refresh makes a
readable diff. Clusters (reports with the same signature) are computed from it when needed.

Library code: raises XlakbError, prints nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..errors import XlakbError
from .signature import ErrorLine, error_lines, guilty_frames, primary, signature_of, wrapper_only

STORE = Path("upstream") / "issues.jsonl"
#: "fixes #12", "Closes pytorch/xla#12", "resolved #12": GitHub's closing keywords
_CLOSES = re.compile(r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+(?:[\w.-]+/[\w.-]+)?#(\d+)", re.IGNORECASE)
MAX_TEXT = 200_000  # characters of one body or comment read for error lines (a huge paste is cut, not refused)


@dataclass
class Report:
    """One upstream issue or pull request, as the index keeps it."""

    number: int
    title: str
    state: str
    url: str
    labels: list[str] = field(default_factory=list)
    created_at: str | None = None
    closed_at: str | None = None
    updated_at: str | None = None
    pull_request: bool = False
    merged: bool = False
    closes: list[int] = field(default_factory=list)  # issues a pull request says it fixes
    errors: list[dict] = field(default_factory=list)  # ErrorLine as dicts: kind, line, signature, location
    seeded: bool = False  # read from the stored search corpus before any harvest with a token
    #: the guilty frames its thread shows (signature.guilty_frames), innermost first, each once
    frames: list[str] = field(default_factory=list)

    def error_lines(self) -> list[ErrorLine]:
        return [ErrorLine(**e) for e in self.errors]

    @property
    def key(self) -> str | None:
        """The signature the report is grouped by (its most specific error line), or None without errors."""
        p = primary(self.error_lines())
        return p.key if p else None


def _date(value) -> str | None:
    return str(value)[:10] if value else None


def _text(value) -> str:
    return value[:MAX_TEXT] if isinstance(value, str) else ""


def report_from_github(obj: Mapping, comments: Iterable[Mapping] = (), *, seeded: bool = False, source: str = "") -> Report:
    """A :class:`Report` from a GitHub REST issue object (``GET /repos/{repo}/issues``) and its comments;
    XlakbError naming ``source`` and the field when the object is not one."""
    where = f"{source}: " if source else ""
    try:
        number = int(obj["number"])
    except (KeyError, TypeError, ValueError):
        raise XlakbError(f"{where}an issue object without a number: {str(obj)[:80]}") from None
    title = obj.get("title")
    if not isinstance(title, str):
        raise XlakbError(f"{where}issue #{number}: 'title' is missing or not text")
    state = obj.get("state")
    if state not in ("open", "closed"):
        raise XlakbError(f"{where}issue #{number}: 'state' is {state!r}, not open or closed")
    labels = []
    for label in obj.get("labels") or []:
        name = label.get("name") if isinstance(label, Mapping) else label
        if isinstance(name, str):
            labels.append(name)
    pr = obj.get("pull_request")
    is_pr = bool(pr) and pr is not False
    merged = bool(isinstance(pr, Mapping) and pr.get("merged_at")) or bool(obj.get("merged_at"))
    body = _text(obj.get("body"))
    texts = [title, body] + [_text(c.get("body")) for c in comments if isinstance(c, Mapping)]
    lines: list[ErrorLine] = []
    seen = set()
    frames: list[str] = []
    for text in texts:
        for e in error_lines(text):
            if e.key not in seen:
                seen.add(e.key)
                lines.append(e)
        frames += [f for f in guilty_frames(text, excerpt=seeded) if f not in frames]
    closes = sorted({int(n) for n in _CLOSES.findall(title + "\n" + body)} - {number}) if is_pr else []
    url = obj.get("html_url") or ""
    if not isinstance(url, str) or not url.startswith("https://"):
        raise XlakbError(f"{where}issue #{number}: 'html_url' is {url!r}, not a https link")
    return Report(
        number=number,
        title=title.strip(),
        state=state,
        url=url,
        labels=sorted(set(labels)),
        created_at=_date(obj.get("created_at")),
        closed_at=_date(obj.get("closed_at")),
        updated_at=obj.get("updated_at") or None,
        pull_request=is_pr,
        merged=merged,
        closes=closes,
        errors=[{k: v for k, v in asdict(e).items() if v or k != "helper"} for e in lines],
        seeded=seeded,
        frames=frames,
    )


def combine(reports: Iterable[Report]) -> list[Report]:
    """Reports read together, one per number: the error lines of every copy of an issue (several excerpts of
    one thread, or the issue and its comments read apart) kept together, in order."""
    out: dict[int, Report] = {}
    for r in reports:
        have = out.get(r.number)
        if have is None:
            out[r.number] = r
            continue
        _keep(have, r)
    return list(out.values())


def _keep(have: Report, new: Report) -> None:
    """``have`` with what ``new`` adds: its error lines, guilty frames and labels not already there, in order."""
    keys = {ErrorLine(**e).key for e in have.errors}
    have.errors.extend(e for e in new.errors if ErrorLine(**e).key not in keys)
    have.frames.extend(f for f in new.frames if f not in have.frames)
    have.labels = sorted(set(have.labels) | set(new.labels))


def load(root: Path) -> dict[int, Report]:
    """The stored reports by number (none when the store does not exist)."""
    path = root / STORE
    if not path.exists():
        return {}
    out = {}
    for n, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            report = Report(**data)
            report.errors = _signed(report.errors)
            out[int(data["number"])] = report
        except (ValueError, KeyError, TypeError) as err:
            raise XlakbError(
                f"{path}:{n}: not a stored report ({err})",
                hint="it is written by xlakb upstream import/fetch; restore it from git",
            ) from None
    return out


def _signed(errors: list[dict]) -> list[dict]:
    """Stored error lines with their signatures made by today's rules (the line is what was pasted), each once."""
    out, seen = [], set()
    for e in errors:
        if wrapper_only(e["line"]):
            continue  # read before its message was read with it: says which worker, not what failed
        e = {**e, "signature": signature_of(e["line"])}
        line = ErrorLine(**e)
        if len(line.signature) >= 8 and line.key not in seen:
            seen.add(line.key)
            out.append(e)
    return out


def save(root: Path, reports: Mapping[int, Report]) -> Path:
    """Write the store: one report a line, sorted by number, keys in a fixed order."""
    path = root / STORE
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for number in sorted(reports):
            data = asdict(reports[number])
            if not data["frames"]:
                del data["frames"]  # compact: most reports show no stack
            f.write(json.dumps(data, ensure_ascii=False, sort_keys=False) + "\n")
    tmp.replace(path)
    return path


def merge(old: Mapping[int, Report], new: Iterable[Report]) -> tuple[dict[int, Report], int, int]:
    """The store with ``new`` reports in: a report replaces the stored one unless the stored one is newer
    (``updated_at``); a harvested report replaces a seeded one. A seeded copy (an excerpt of the thread) never
    takes away what the store knows: its error lines and frames are added to the stored report's, and a
    harvest (the whole thread) keeps the frames and lines read from excerpts it does not show. Returns
    (store, added, changed)."""
    out = dict(old)
    added = changed = 0
    for r in new:
        have = out.get(r.number)
        if have is None:
            out[r.number] = r
            added += 1
            continue
        if have.updated_at and r.updated_at and have.updated_at > r.updated_at and not have.seeded:
            continue
        before = asdict(have)
        if r.seeded and not have.seeded:  # an excerpt adds to a harvested report, never replaces it
            merged, extra = _copy(have), r
        else:
            merged, extra = _copy(r), have
        _keep(merged, extra)
        if not r.seeded:
            merged.labels = sorted(r.labels)  # the harvest's labels are today's
        if asdict(merged) != before:
            out[r.number] = merged
            changed += 1
    return out, added, changed


def _copy(r: Report) -> Report:
    return Report(**{**asdict(r), "errors": [dict(e) for e in r.errors], "frames": list(r.frames), "labels": list(r.labels)})


def read_objects(path: Path) -> list[dict]:
    """GitHub issue objects from a file: a JSON array, or JSON lines; XlakbError naming the file and line."""
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise XlakbError(f"{path}: cannot read: {err}") from None
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            data = json.loads(text)
        except ValueError as err:
            raise XlakbError(f"{path}: not JSON: {err}") from None
        if not all(isinstance(o, dict) for o in data):
            raise XlakbError(f"{path}: the array must hold issue objects")
        return data
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as err:
            raise XlakbError(f"{path}:{n}: not a JSON object: {err}") from None
        if not isinstance(obj, dict):
            raise XlakbError(f"{path}:{n}: not a JSON object")
        out.append(obj)
    return out
