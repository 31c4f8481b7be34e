"""The settings source: which environment variables and ``XLA_FLAGS`` entries make a bug appear.

Users' crash reports carry a dozen settings; maintainers want the one that matters.  Given a failing
configuration (``--setting NAME=VALUE``, a ``--settings-file`` copied from a user's job, or by default
the record's ``environment.env``) and one release (``--torch-xla``), this source finds a 1-minimal
subset that still reproduces the bug by delta debugging (:mod:`xlakb.ddmin`): every setting of the
answer is needed (without any one of them the bug does not show).  Each entry of ``XLA_FLAGS`` (and
``LIBTPU_INIT_ARGS``) counts as a setting of its own.

A candidate is one configuration on that release: it carries the settings as the probe's whole
configuration (:attr:`Candidate.settings`, in place of the record's ``environment.env``), so the
engine's verdict cache, resume state, ``--repeat`` and ``-j`` work as for the other sources.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..ddmin import Trial, ddmin, ddmin_bound
from ..errors import XlakbError
from ..runner import ProbeResult, Verdict
from . import Arg, Candidate, Source

#: variables whose value is a list of flags, each flag a setting of its own
FLAG_LISTS = ("XLA_FLAGS", "LIBTPU_INIT_ARGS")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def parse_setting(text: str, where: str) -> list[tuple[str, str]]:
    """``NAME=VALUE`` (optionally ``export NAME=VALUE``, value optionally quoted) as settings:
    one (NAME, value) pair, or one per flag for ``XLA_FLAGS``.  ``where`` names the input in errors."""
    line = text.strip()
    if line.startswith("export "):
        line = line[len("export ") :].strip()
    name, eq, value = line.partition("=")
    name = name.strip()
    if not eq or not _NAME.match(name):
        raise XlakbError(f"{where}: {text.strip()!r} is not NAME=VALUE", hint="e.g. XLA_IR_DEBUG=1")
    try:
        words = shlex.split(value)
    except ValueError as err:
        raise XlakbError(f"{where}: the value of {name} cannot be read ({err})") from None
    if name in FLAG_LISTS:
        if not words:
            raise XlakbError(f"{where}: {name} is empty")
        return [(name, flag) for w in words for flag in w.split()]
    return [(name, " ".join(words) if len(words) != 1 else words[0])]


def read_settings(lines: list[str], source: str) -> list[tuple[str, str]]:
    """Settings from ``NAME=VALUE`` lines (blank lines and ``#`` comments skipped); a variable set
    twice (other than a flag list) is an error naming both lines."""
    out: list[tuple[str, str]] = []
    seen: dict[str, str] = {}
    for i, raw in enumerate(lines, 1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        where = f"{source}:{i}" if source != "--setting" else f"--setting {raw.strip()!r}"
        for name, value in parse_setting(raw, where):
            if name not in FLAG_LISTS and name in seen:
                raise XlakbError(f"{where}: {name} is set twice (first at {seen[name]})")
            if (name, value) in out:
                raise XlakbError(f"{where}: {name} {value!r} is given twice")
            seen.setdefault(name, where)
            out.append((name, value))
    return out


def settings_from_options(opts: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The settings ``--settings-file`` and ``--setting`` give (``opts``: option values by name), file first."""
    items: list[tuple[str, str]] = []
    if opts.get("settings_file"):
        path = Path(opts["settings_file"])
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise XlakbError(f"--settings-file {path}: cannot be read ({err})") from None
        items += read_settings(text.splitlines(), str(path))
    if opts.get("setting"):
        more = read_settings(list(opts["setting"]), "--setting")
        clash = {n for n, _ in more if n not in FLAG_LISTS} & {n for n, _ in items if n not in FLAG_LISTS}
        if clash:
            raise XlakbError(f"--setting {sorted(clash)[0]} is also in --settings-file")
        items += more
    return items


def item_text(item: tuple[str, str]) -> str:
    name, value = item
    return f"{name}={shlex.quote(value) if value and not re.match(r'^[A-Za-z0-9_.,:/+=@%-]+$', value) else value}"


def environment(items: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """The variables a configuration sets: flag lists joined with spaces, in first-seen order."""
    env: dict[str, list[str]] = {}
    for name, value in items:
        env.setdefault(name, []).append(value)
    return tuple((name, " ".join(values)) for name, values in env.items())


@dataclass
class SettingsReport:
    """What a settings bisection found; its JSON has the shape of a range report (the empty
    configuration is the last "not-reproduced" end, the answer the first "reproduced" one) plus
    ``settings``, ``minimal`` and ``tests``."""

    record: str
    release: str
    settings: list[str]
    minimal: list[str]
    tests: list[tuple[list[str], ProbeResult]]
    probes_run: int
    bound: int
    runner: str
    command: str
    measured_at: str
    unresolved: list[str] = field(default_factory=list)
    flaky: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    source: str = "settings"
    direction: str = "introduced"

    @property
    def file_name(self) -> str:
        return f"bisect-settings-{self.release}.json"

    @property
    def confidence_reasons(self) -> list[str]:
        reasons = []
        if self.flaky:
            reasons.append(f"flaky configurations: {len(self.flaky)}")
        if self.unresolved:
            reasons.append(
                f"{len(self.unresolved)} configuration(s) could not be judged, so the answer is minimal "
                "among the configurations that could"
            )
        return reasons

    @property
    def confidence(self) -> str:
        return "high" if not self.confidence_reasons else "medium"

    def to_json(self) -> dict:
        from ..bisection.report import probe_json

        def end(label: str, items: list[str]) -> dict:
            return {"label": label, "kind": "settings", "torch_xla": self.release, "torch": "", "meta": {"settings": items}}

        return {
            "record": self.record,
            "kind": "bisect",
            "source": self.source,
            "direction": self.direction,
            "old_label": "not-reproduced",
            "new_label": "reproduced",
            "release": self.release,
            "settings": self.settings,
            "minimal": self.minimal,
            "range": {"first": "(no settings)", "last": _label(self.settings), "count": len(self.settings)},
            "last_old": end("(no settings)", []),
            "first_new": end(_label(self.minimal), self.minimal),
            "exact": not self.unresolved,
            "unknown": self.unresolved,
            "between": [],
            "confidence": self.confidence,
            "confidence_reasons": self.confidence_reasons,
            "flaky": self.flaky,
            "tests": [{"settings": items, "verdict": res.verdict.value} for items, res in self.tests],
            "probes": [probe_json(res) for _, res in self.tests],
            "probes_run": self.probes_run,
            "probe_bound": self.bound,
            "notes": self.notes,
            "runner": self.runner,
            "command": self.command,
            "measured_at": self.measured_at,
        }

    def finding(self) -> str:
        return f"settings: {_label(self.minimal)} on {self.release}"

    def summary(self) -> str:
        k, n = len(self.minimal), len(self.settings)
        lines = []
        if self.minimal:
            lines.append(
                f"On torch_xla {self.release} the bug needs {k} of the {n} settings: {' '.join(self.minimal)}. "
                f"With {'it' if k == 1 else 'them'} alone the bug shows; with no settings it does not"
                + (", and without any one of them it does not either." if k > 1 else ".")
            )
        else:
            lines.append(f"On torch_xla {self.release} the bug shows with none of the {n} settings: it needs none of them.")
        lines.extend(self.notes)
        lines.append(
            f"Delta debugging used {len(self.tests)} probes ({self.probes_run} run now, at most {self.bound} for "
            f"{n} settings, {self.runner} runner)."
        )
        reasons = self.confidence_reasons
        lines.append(f"Confidence: {self.confidence}" + (f" ({'; '.join(reasons)})" if reasons else ""))
        lines.append(f"Reproduce: {self.command}")
        return "\n".join(lines)

    def listing(self) -> list[str]:
        out = ["", "Configurations tested:"]
        for items, res in self.tests:
            out.append(f"  {res.verdict.value:<15} {_label(items)[:100]}")
        return out


def _label(items: list[str]) -> str:
    return " ".join(items) if items else "(no settings)"


class SettingsSource(Source):
    """Delta debugging over a failing configuration on one release."""

    name = "settings"
    noun = "setting"
    arguments = (
        Arg(
            ("--setting",),
            {
                "action": "append",
                "metavar": "NAME=VALUE",
                "help": "settings: one setting of the failing configuration (repeatable; an XLA_FLAGS "
                "value counts flag by flag); default: the record's environment.env",
            },
        ),
        Arg(
            ("--settings-file",),
            {
                "metavar": "FILE",
                "help": "settings: a file of NAME=VALUE lines (# comments, 'export' allowed), e.g. copied from a user's job",
            },
        ),
        Arg(("--torch-xla",), {"metavar": "VERSION", "help": "settings: the release to run on"}),
    )

    def __init__(self, ctx=None, *, items: list[tuple[str, str]] | None = None, torch_xla: str | None = None) -> None:
        super().__init__(ctx)
        self.items = items
        self.torch_xla = torch_xla

    @classmethod
    def from_options(cls, ctx, opts: Mapping[str, Any]):
        return cls(ctx, items=settings_from_options(opts) or None, torch_xla=opts.get("torch_xla"))

    def starting_items(self) -> list[tuple[str, str]]:
        if self.items:
            return list(self.items)
        env = self.ctx.record.env_vars
        if not env:
            raise XlakbError(
                f"{self.ctx.record.id}: no settings to minimize: the record's environment.env is empty",
                hint="pass --setting NAME=VALUE or --settings-file FILE",
            )
        return read_settings([f"{k}={shlex.quote(v)}" for k, v in env.items()], f"{self.ctx.record.path.name} environment.env")

    def candidate(self, base: Candidate, items: list[tuple[str, str]]) -> Candidate:
        texts = [item_text(i) for i in items]
        return Candidate(
            kind="settings",
            label=_label(texts),
            torch_xla=base.torch_xla,
            torch=base.torch,
            pins=base.pins,
            settings=environment(items),
            meta={"settings": texts, "release": base.label},
        )

    def bisect(self, engine, start=None, end=None, direction=None) -> list[SettingsReport]:
        from ..bisection.engine import trial_of
        from ..bisection.report import now
        from .releases import release

        if start or end or direction:
            raise XlakbError("a settings bisection takes one release (--torch-xla), not --start/--end/--direction")
        if not self.torch_xla:
            raise XlakbError("a settings bisection needs --torch-xla VERSION", hint="the release the configuration fails on")
        base = release(self.torch_xla)
        items = self.starting_items()
        texts = [item_text(i) for i in items]
        full, empty = self.candidate(base, items), self.candidate(base, [])
        saved = engine.saved_probes([full, empty], None, self.name)
        progress = engine.progress
        tests: list[tuple[list[str], ProbeResult]] = []
        bound = ddmin_bound(len(items))

        def probe(config: tuple[int, ...]) -> ProbeResult:
            res = engine.probe_saved(self.candidate(base, [items[i] for i in config]), saved)
            tests.append(([texts[i] for i in config], res))
            progress.info(f"{len(config)} of {len(items)} settings: {res.verdict.value}{' (cached)' if res.cached else ''}")
            return res

        progress.step(0, 2, f"verifying the ends on {base.label}: all {len(items)} settings, and none")
        ends = engine.map(probe, [tuple(range(len(items))), ()])
        for res, what in ((ends[0], "with all its settings"), (ends[1], "with no settings")):
            if res.verdict in (Verdict.UNTESTABLE, Verdict.ERROR):
                raise XlakbError(
                    f"{base.label} {what} could not be judged ({res.verdict.value}: {res.detail})",
                    hint=f"log: {res.log or 'none'}",
                )
        if ends[0].verdict is not Verdict.REPRODUCED:
            raise XlakbError(
                f"the failing configuration does not fail: on {base.label} with all {len(items)} settings "
                f"the reproducer says {ends[0].verdict.value}",
                hint="check the settings and the release",
            )
        report = dict(
            record=self.ctx.record.id,
            release=base.label,
            settings=texts,
            runner=engine.backend.name,
            command=engine.options.command,
            bound=bound,
        )
        if ends[1].verdict is Verdict.REPRODUCED:
            return [SettingsReport(minimal=[], tests=tests, probes_run=engine.probes_run, measured_at=now(), **report)]

        def test(configs):
            done = len(tests)
            progress.step(
                done,
                bound,
                f"delta debugging: {len(configs)} configuration(s) of "
                f"{', '.join(str(len(c)) for c in configs)} setting(s) (at most {bound - done} probes left)",
            )
            return [trial_of(r.verdict) for r in engine.map(probe, list(configs))]

        result = ddmin(len(items), test, batch=engine.options.jobs, known={tuple(range(len(items))): Trial.FAIL})
        progress.step(len(tests), len(tests), "done")
        unresolved = [_label(t) for t, r in tests if trial_of(r.verdict) is Trial.UNRESOLVED]
        return [
            SettingsReport(
                minimal=[texts[i] for i in result.minimal],
                tests=tests,
                probes_run=engine.probes_run,
                measured_at=now(),
                unresolved=unresolved,
                flaky=list(engine.flaky),
                **report,
            )
        ]
