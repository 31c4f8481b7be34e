"""What a pull request must prove: each changed record's reproducer behaves as claimed."""

from __future__ import annotations

from pathlib import Path

from . import proc
from .candidates.releases import all_releases
from .errors import XlakbError
from .records import Record


def claimed_pair(record: Record) -> tuple[str | None, str | None]:
    """(newest release claimed affected, oldest release claimed fixed) among known releases."""
    affected = [v for v in all_releases() if record.claims(v) is True]
    fixed = [v for v in all_releases() if record.claims(v) is False]
    return (affected[-1] if affected else None), (fixed[0] if fixed else None)


def changed_record_ids(root: Path, base_ref: str, records: list[Record]) -> list[str]:
    """Ids of records whose YAML or reproducer differs between ``base_ref`` and the work tree."""
    result = proc.run(["git", "-C", str(root), "diff", "--name-only", base_ref, "--", "issues", "limitations", "reproducers"])
    if result.exit_code != 0:
        raise XlakbError(
            f"git diff against {base_ref!r} failed: {result.output.strip().splitlines()[-1] if result.output.strip() else 'no output'}"
        )
    changed = {line.strip() for line in result.output.splitlines() if line.strip()}
    out = []
    for rec in records:
        mine = {str(rec.path.relative_to(root))} | ({rec.reproducer["path"]} if not rec.trigger else set())
        if mine & changed:
            out.append(rec.id)
    return out
