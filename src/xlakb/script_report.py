"""What a script bisection found (``xlakb bisect --script``), as a maintainer pastes it upstream.

One :class:`ScriptReport` per command: the script (its name, text, hash, arguments, rule, environment), every
stage the command ran (a release range, the nightlies and commits of ``--narrow``, a settings minimisation; each a
report of its source, its summary in *bad* and *good*), the first bad and last good candidate of each with the PR
link when known, the probes and their verdicts, the confidence (a commit overlay's included), the excerpt of the
failing probe's log (``xlakb new --from-bisect`` takes signatures from it) and the exact command. Printed, and
saved where the user asks (``--report FILE``: ``.json`` and/or ``.md``), never under ``bisect/``: that folder
holds records' results.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .bisection.report import Report, now
from .candidates.settings import SettingsReport
from .errors import XlakbError
from .published import scrub
from .results import write_json
from .runner import ProbeResult, Verdict
from .scripts import WORDS, Script

KIND = "script-bisect"
FORMATS = {".json": "json", ".md": "markdown", ".markdown": "markdown"}
LOG_LINES = 120  # how much of the failing probe's log a report keeps


def ends(stage: Report | SettingsReport) -> dict:
    """The answer of one stage in bad/good words: (first bad, last good) when the bad came in, else
    (last bad, first good); the PR and its link when the source knows them."""
    if isinstance(stage, SettingsReport):
        return {
            "first_bad": " ".join(stage.minimal) or "(no settings)",
            "last_good": "(no settings)",
            "exact": not stage.unresolved,
        }
    lo, hi = stage.last_old_candidate, stage.first_new_candidate
    out = (
        {"last_good": lo.label, "first_bad": hi.label}
        if stage.direction == "introduced"
        else {"last_bad": lo.label, "first_good": hi.label}
    )
    out["exact"] = stage.exact
    for key in ("pr", "pr_url", "subject", "sha"):
        if hi.meta.get(key):
            out[key] = hi.meta[key]
    return out


def results_of(stage: Report | SettingsReport) -> list[ProbeResult]:
    return [res for _, res in stage.tests] if isinstance(stage, SettingsReport) else list(stage.probes)


def failing_probe(stages: list) -> ProbeResult | None:
    """The bad end of the last (narrowest) stage, else any bad probe: whose log shows the failure."""
    for stage in reversed(stages):
        bad = [r for r in results_of(stage) if r.verdict is Verdict.REPRODUCED]
        if not bad:
            continue
        answer = ends(stage)
        label = answer.get("first_bad") or answer.get("last_bad")
        return next((r for r in bad if r.candidate == label), bad[-1])
    return None


def log_excerpt(res: ProbeResult | None) -> str:
    if res is None or not res.log:
        return ""
    try:
        lines = Path(res.log).read_text("utf-8", "replace").splitlines()
    except OSError:
        return ""
    return scrub("\n".join(lines[-LOG_LINES:]))


@dataclass
class ScriptReport:
    script: Script
    stages: list = field(default_factory=list)  # Report | SettingsReport, in the order they ran
    command: str = ""
    measured_at: str = field(default_factory=now)

    def __post_init__(self) -> None:
        self.failing = failing_probe(self.stages)
        # the copy probes ran is named as the user named the script: no folder of this machine in the report
        self.excerpt = log_excerpt(self.failing).replace(f"{self.script.folder}{os.sep}", "")

    def to_json(self) -> dict:
        stages = []
        for stage in self.stages:
            data = stage.to_json()
            data.pop("record", None)
            for p in data.get("probes", []):
                p["verdict"] = WORDS.get(p["verdict"], p["verdict"])
            stages.append({"answer": ends(stage), **data})
        return {
            "kind": KIND,
            "script": {
                "name": self.script.path.name,
                "id": self.script.id,
                "address": self.script.address,
                **self.script.describe(),
                "text": self.script.content.decode("utf-8", "replace"),
            },
            "stages": stages,
            "failing_log": {
                "candidate": self.failing.candidate if self.failing else None,
                "torch_xla": self.failing.torch_xla if self.failing else None,
                "excerpt": self.excerpt,
            },
            "command": self.command,
            "measured_at": self.measured_at,
        }

    def headline(self) -> str:
        s = self.script
        rule = f"bad = {s.regress}" + (f" and the output shows /{s.match}/" if s.match else "") + "; exit 125 = skip"
        extra = "".join(f" --with {p}" for p in s.packages) + "".join(f" {k}={v}" for k, v in s.settings)
        args = (" " + " ".join(s.args)) if s.args else ""
        return f"Script {s.path.name}{args} (sha256 {s.sha256[:12]}, {rule}{';' + extra if extra else ''})"

    def stage_lines(self, stage) -> list[str]:
        answer = ends(stage)
        found = ", ".join(
            f"{k.replace('_', ' ')} {answer[k]}" for k in ("last_good", "first_bad", "last_bad", "first_good") if k in answer
        )
        return [f"{stage.source}: {found}", stage.summary()]

    def text(self) -> str:
        """What the command prints: the headline, each stage's answer and summary, its probes."""
        out = [self.headline()]
        for stage in self.stages:
            out += [""] + self.stage_lines(stage) + ["Probes:"]
            out += [
                f"  {r.candidate:<28} {WORDS.get(r.verdict.value, r.verdict.value):<6} {r.detail[:90]}"
                + (" (cached)" if r.cached else "")
                for r in results_of(stage)
            ]
            out += [line for line in stage.listing() if line]
        return "\n".join(out)

    def markdown(self) -> str:
        """The same, as Markdown for an upstream issue: the script folded in, the probes as a table."""
        s = self.script
        out = [f"### Bisection of `{s.path.name}`", "", self.headline(), ""]
        for stage in self.stages:
            first, *rest = self.stage_lines(stage)
            summary = [line for line in rest[0].splitlines() if not line.startswith("Reproduce: ")]
            out += [f"**{first}**", "", *[f"> {line}" for line in summary], ""]
            out += ["| candidate | torch_xla | verdict | detail |", "|---|---|---|---|"]
            for p in stage.to_json().get("probes", []):
                detail = p["detail"][:100].replace("|", "\\|")
                out.append(f"| {p['candidate']} | {p['torch_xla']} | {WORDS.get(p['verdict'], p['verdict'])} | {detail} |")
            out.append("")
        fence = "```"
        lang = "python" if s.kind == "python" else "sh"
        out += ["<details><summary>The script</summary>", "", f"{fence}{lang}", s.content.decode("utf-8", "replace").rstrip()]
        out += [fence, "", "</details>", ""]
        if self.excerpt:
            where = f" on {self.failing.candidate}" if self.failing else ""
            out += [
                f"<details><summary>Log of the failing probe{where}</summary>",
                "",
                fence,
                self.excerpt,
                fence,
                "",
                "</details>",
                "",
            ]
        out += [f"Reproduce: `{self.command}`", ""]
        return "\n".join(out)


def target(given: str) -> tuple[Path, str]:
    """Where ``--report given`` goes and in which format (by its suffix), or XlakbError: not a ``.json`` or
    ``.md`` name, or under an xlakb checkout's ``bisect/`` (checked before any probe runs)."""
    path = Path(given).expanduser().resolve()
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise XlakbError(f"--report {given}: name a .json or .md file", hint="e.g. --report bisect.json --report bisect.md")
    if any(p.name == "bisect" and (p.parent / "issues").is_dir() for p in path.parents):
        raise XlakbError(
            f"--report {given}: bisect/ holds records' results, not a script's",
            hint="write the report elsewhere; `xlakb new <id> --from-bisect REPORT` makes it a record",
        )
    return path, fmt


def save(report: ScriptReport, paths: list[str]) -> list[Path]:
    """Write ``report`` to each of ``paths`` as :func:`target` says."""
    written = []
    for given in paths:
        path, fmt = target(given)
        if fmt == "json":
            write_json(path, report.to_json())
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(report.markdown(), "utf-8")
        written.append(path)
    return written
