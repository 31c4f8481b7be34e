"""Candidate sources: what a bisection can probe, one file per source.

A :class:`Candidate` names one testable build of torch_xla and what a probe of it needs.  A
:class:`Source` turns what the user names (``--start``/``--end`` and the source's own options) into
candidates, resolves a candidate into something installable, and owns its follow-ups.  The sources
are in :data:`SOURCES`, a registry by name (like pre-commit's languages): adding a source is one file
in this package and one line there.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Mapping

from ..errors import XlakbError

if TYPE_CHECKING:  # only for annotations: the engine imports this package, not the other way round
    from ..bisection.engine import Context, Engine
    from ..bisection.report import Report


@dataclass(frozen=True)
class Candidate:
    """One build to probe, in bisection order (oldest first).

    ``kind``      "release" | "nightly" | "commit" | "settings"
    ``label``     what a person calls it: "2.5.1", "nightly 2025-01-16", "1a2b3c4d (#8819)"
    ``torch_xla`` a requirement for the torch_xla package: a version ("2.5.1") or an
                  absolute path to a wheel file (nightlies, commit bases)
    ``torch``     likewise for torch
    ``pins``      extra requirements this build needs (e.g. "numpy<2"), as data
    ``overlay``   for commits: (repo path, commit sha) whose torch_xla/*.py files are laid over
                  the base build's installed torch_xla
    ``settings``  the probe's whole configuration of environment variables, (NAME, value) pairs,
                  in place of the record's ``environment.env``; None: the record's
    ``meta``      source-specific facts (date, sha, PR number, gitrev, url...) for reports
    """

    kind: str
    label: str
    torch_xla: str
    torch: str
    pins: tuple[str, ...] = ()
    overlay: tuple[str, str] | None = None
    settings: tuple[tuple[str, str], ...] | None = None
    meta: dict = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class Arg:
    """A command-line option a source takes: argparse's flags and keyword arguments, as data."""

    flags: tuple[str, ...]
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    @property
    def dest(self) -> str:
        return self.kwargs.get("dest") or self.flags[0].lstrip("-").replace("-", "_")


class Source:
    """A candidate source.  Subclasses set the class attributes and override what they need.

    ``name``       its key in :data:`SOURCES` and the value of ``--source``
    ``noun``       what one candidate is called in a report ("release")
    ``arguments``  its command-line options (:class:`Arg`); an option two sources share is declared by both
    ``follows``    for ``--narrow``: the source whose report this one can narrow down, or None

    The default :meth:`bisect` is a range bisection: :meth:`ranges` gives the candidate ranges for the
    user's ends, the engine searches each, :meth:`finish` adds what the source knows to each report.
    """

    name: ClassVar[str] = ""
    noun: ClassVar[str] = ""
    arguments: ClassVar[tuple[Arg, ...]] = ()
    follows: ClassVar[str | None] = None

    def __init__(self, ctx: "Context | None" = None) -> None:
        self.ctx = ctx
        self.stage = self.name  # how narrowing names this step in progress and errors
        self.stop_hint: str | None = None  # what to try when narrowing stops at this step

    @classmethod
    def from_options(cls, ctx: "Context", opts: Mapping[str, Any]) -> "Source":
        """The source as the command line configures it (``opts``: option values by ``Arg.dest``)."""
        return cls(ctx)

    # -- candidates -------------------------------------------------------------------------
    def ranges(self, engine: "Engine", start: str | None, end: str | None, direction: str | None) -> list[list[Candidate]]:
        """The candidate ranges to bisect for the user's ends, each oldest first (usually one)."""
        raise XlakbError(f"the {self.name or 'base'} source cannot list candidates")

    def resolve(self, cand: Candidate) -> Candidate:
        """The candidate made installable (wheels downloaded, base build chosen...)."""
        return cand

    def peek(self, cand: Candidate) -> Candidate:
        """What :meth:`resolve` would give, without downloading or building anything (verdict lookups)."""
        return self.resolve(cand)

    def fingerprint(self) -> Any:
        """What resolution depends on beyond the candidates themselves (part of the resume-state key)."""
        return None

    def finish(self, report: "Report") -> None:
        """Follow-ups on a finished report (PR annotation for commits)."""

    def bisect(self, engine: "Engine", start: str | None = None, end: str | None = None,
               direction: str | None = None) -> list["Report"]:
        reports = []
        for cands in self.ranges(engine, start, end, direction):
            report = engine.run(cands, source=self.name, direction=direction)
            self.finish(report)
            reports.append(report)
        return reports

    # -- narrowing ------------------------------------------------------------------------------
    @classmethod
    def can_follow(cls, opts: Mapping[str, Any]) -> bool:
        """Whether narrowing may go on to this source with these options."""
        return cls.follows is not None

    @classmethod
    def after(cls, ctx: "Context", opts: Mapping[str, Any], report: "Report") -> tuple["Source", str, str]:
        """This source set up to narrow down ``report`` of the source it follows: (source, start, end)."""
        raise XlakbError(f"the {cls.name} source cannot narrow down another source's answer")


#: name -> "module:class"; imported when used, so a command that bisects nothing imports no source.
SOURCES: dict[str, str] = {
    "releases": "xlakb.candidates.releases:ReleaseSource",
    "nightlies": "xlakb.candidates.nightlies:NightlySource",
    "commits": "xlakb.candidates.commits:CommitSource",
    "settings": "xlakb.candidates.settings:SettingsSource",
}

#: ``--narrow``: releases, then the nightlies between two releases, then the commits between two nightlies.
NARROW_CHAIN = ("releases", "nightlies", "commits")


def get_source(name: str) -> type[Source]:
    where = SOURCES.get(name)
    if where is None:
        raise XlakbError(f"unknown candidate source {name!r}", hint=f"known: {', '.join(SOURCES)}")
    module, _, attr = where.partition(":")
    return getattr(importlib.import_module(module), attr)


def source_arguments() -> list[Arg]:
    """Every source's options, each flag once (the first source declaring it wins), in registry order."""
    seen: dict[str, Arg] = {}
    for name in SOURCES:
        for arg in get_source(name).arguments:
            seen.setdefault(arg.flags[0], arg)
    return list(seen.values())
