"""What a bisection found: the report, its JSON under ``bisect/<id>/`` and its pasteable summary.

The confidence is computed in one place, :attr:`Report.confidence`, from flags the engine and the
sources set (flaky candidates, an inexact answer, native differences of commit overlays).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path

from ..candidate import Candidate
from ..results import results_dir, write_json
from ..runner import ProbeResult


def labels_for(direction: str) -> tuple[str, str]:
    """(what OLD means, what NEW means) in verdict words."""
    return ("not-reproduced", "reproduced") if direction == "introduced" else ("reproduced", "not-reproduced")


def short(value: str) -> str:
    """A wheel path as its file name; a version as it is."""
    return Path(value).name if value.endswith(".whl") else value


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def probe_json(p: ProbeResult) -> dict:
    return {
        "candidate": p.candidate,
        "torch_xla": short(p.torch_xla),
        "torch": short(p.torch),
        "verdict": p.verdict.value,
        "detail": p.detail,
        "duration_s": round(p.duration_s, 2),
        "cached": p.cached,
        "measured_at": p.measured_at,
    }


@dataclass
class NativeEnd:
    """An end of a commit answer whose overlay differs from its base build in native files."""

    label: str
    base: str
    files: list[str]
    count: int

    def reason(self) -> str:
        shown = ", ".join(self.files[:5]) + (f" and {self.count - 5} more" if self.count > 5 else "")
        return (
            f"{self.label} differs from its base build {self.base} in {self.count} native file(s) "
            f"({shown}): its binary part is the base's"
        )


@dataclass
class Report:
    record: str
    source: str
    direction: str
    candidates: list[Candidate]
    last_old: int
    first_new: int
    exact: bool
    unknown: list[int]
    probes: list[ProbeResult]
    probes_run: int
    flaky: list[str]
    runner: str
    command: str
    noun: str = ""  # what one candidate is called in the summary ("release", "nightly", "commit")
    between: list[dict] = field(default_factory=list)
    measured_at: str = ""
    notes: list[str] = field(default_factory=list)  # how the range was chosen (untestable ends moved...)
    # flags the confidence is computed from (commits set the last two)
    culprit_python_only: bool | None = None
    native_ends: list[NativeEnd] = field(default_factory=list)
    # what the verdicts are called in the summary: a record's own words, or a script's ("bad", "good")
    words: dict[str, str] = field(default_factory=dict)

    def labels(self) -> tuple[str, str]:
        """(what OLD is, what NEW is) in this report's words."""
        return tuple(self.words.get(w, w) for w in labels_for(self.direction))  # type: ignore[return-value]

    @property
    def last_old_candidate(self) -> Candidate:
        return self.candidates[self.last_old]

    @property
    def first_new_candidate(self) -> Candidate:
        return self.candidates[self.first_new]

    @property
    def file_name(self) -> str:
        return f"bisect-{self.source}-{self.direction}.json"

    @property
    def confidence_reasons(self) -> list[str]:
        reasons = []
        if self.flaky:
            reasons.append(f"flaky candidates: {', '.join(self.flaky)}")
        if not self.exact:
            reasons.append(f"{len(self.unknown)} untestable candidate(s) between the ends of the answer")
        if self.culprit_python_only is not None:
            reasons.append(
                "the culprit's own diff is Python-only, which the overlay reproduces exactly"
                if self.culprit_python_only
                else "the culprit changes native code, which an overlay on a binary build cannot include"
            )
        reasons += [end.reason() for end in self.native_ends]
        return reasons

    @property
    def confidence(self) -> str:
        """high: an exact, steady answer with nothing native in the way; medium: one doubt; low: two."""
        native_noise = bool(self.native_ends) or self.culprit_python_only is False
        if not self.exact or self.flaky:
            return "low" if native_noise else "medium"
        if native_noise:
            return "medium" if self.culprit_python_only else "low"
        return "high"

    def to_json(self) -> dict:
        old, new = self.labels()

        def cand(c: Candidate) -> dict:
            meta = {k: v for k, v in c.meta.items() if isinstance(v, (str, int, float, bool, type(None), list))}
            return {"label": c.label, "kind": c.kind, "torch_xla": short(c.torch_xla), "torch": short(c.torch), "meta": meta}

        return {
            "record": self.record,
            "kind": "bisect",
            "source": self.source,
            "direction": self.direction,
            "old_label": old,
            "new_label": new,
            "range": {"first": self.candidates[0].label, "last": self.candidates[-1].label, "count": len(self.candidates)},
            "last_old": cand(self.last_old_candidate),
            "first_new": cand(self.first_new_candidate),
            "exact": self.exact,
            "unknown": [self.candidates[i].label for i in self.unknown],
            "between": self.between,
            "confidence": self.confidence,
            "confidence_reasons": self.confidence_reasons,
            "flaky": self.flaky,
            "probes": [probe_json(p) for p in self.probes],
            "probes_run": self.probes_run,
            "notes": self.notes,
            "runner": self.runner,
            "command": self.command,
            "measured_at": self.measured_at,
        }

    def finding(self) -> str:
        """One line: which source found what where."""
        old, new = self.labels()
        lo, hi = self.last_old_candidate.label, self.first_new_candidate.label
        where = f"in {hi}" if self.exact else f"between {lo} and {hi}"
        return f"{self.source}: {self.direction} {where} ({lo} {old}, {hi} {new})"

    def summary(self) -> str:
        """A paragraph ready to paste into an upstream issue."""
        old, new = self.labels()
        verb = "introduced" if self.direction == "introduced" else "fixed"
        lo, hi = self.last_old_candidate, self.first_new_candidate
        lines = []
        if self.exact:
            lines.append(f"The change ({verb}) is in {hi.label}: {lo.label} is {old}, {hi.label} is {new}.")
        else:
            lines.append(
                f"The change ({verb}) lies between {lo.label} ({old}) and {hi.label} ({new}); "
                f"{len(self.unknown)} candidate(s) in between could not be tested."
            )
        if hi.meta.get("pr_url"):
            lines.append(f"Culprit: {hi.meta.get('subject', '')} {hi.meta['pr_url']}")
        if self.between and not self.exact:
            lines.append(f"Commits in range: {len(self.between)}")
        lines.extend(self.notes)
        lines.append(
            f"Searched {len(self.candidates)} {self.noun + ' ' if self.noun else ''}candidates ({self.candidates[0].label} .. {self.candidates[-1].label}) "
            f"with {len(self.probes)} probes ({self.probes_run} run now, {self.runner} runner)."
        )
        reasons = self.confidence_reasons
        lines.append(f"Confidence: {self.confidence}" + (f" ({'; '.join(reasons)})" if reasons else ""))
        if self.flaky:
            lines.append(f"Flaky (disagreeing runs, not counted): {', '.join(self.flaky)}")
        lines.append(f"Reproduce: {self.command}")
        return "\n".join(lines)

    def listing(self) -> list[str]:
        """Lines the CLI prints under the summary: the commits of the answer."""
        if not self.between:
            return []
        out = ["", "Commits in the answer:"]
        for c in self.between[:50]:
            pr = f" #{c['pr']}" if c.get("pr") else ""
            out.append(f"  {c['sha'][:10]}{pr} {c['subject'][:70]}{'' if c['python_only'] else '  [native]'}")
        return out


def save_report(root: Path, report) -> Path:
    """Write a report (anything with ``record``, ``file_name`` and ``to_json``) under ``bisect/<id>/``."""
    path = results_dir(root, report.record) / report.file_name
    write_json(path, report.to_json())
    return path
