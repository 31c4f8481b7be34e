"""Name the known records whose signatures match a log or traceback."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .records import Record


@dataclass(frozen=True)
class Match:
    record: Record
    pattern: str
    excerpt: str
    line: int


def triage(text: str, records: list[Record]) -> list[Match]:
    """Records whose triage patterns match ``text``, best (most patterns, earliest) first."""
    found: dict[str, list[Match]] = {}
    for record in records:
        for pattern in record.triage_patterns:
            m = re.search(pattern, text, re.MULTILINE)
            if m:
                line = text.count("\n", 0, m.start()) + 1
                found.setdefault(record.id, []).append(Match(record, pattern, m.group(0)[:160], line))
    ranked = sorted(found.values(), key=lambda ms: (-len(ms), min(m.line for m in ms)))
    return [min(ms, key=lambda m: m.line) for ms in ranked]
