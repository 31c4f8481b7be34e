"""What a candidate source offers the bisection engine (:class:`Source`, a base class with the default range
bisection) and the command-line options it declares (:class:`Arg`). The sources themselves, and their
registry, are :mod:`xlakb.candidates`: they sit above the engine, which knows only this module."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..candidate import Candidate
from ..errors import XlakbError

# The engine's types (Engine and Context in .engine, Report in .report), named in annotations without importing
# them: the engine imports this module, never the other way round.
Engine = Context = Report = Any


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

    def __init__(self, ctx: Context | None = None) -> None:
        self.ctx = ctx
        self.stage = self.name  # how narrowing names this step in progress and errors
        self.stop_hint: str | None = None  # what to try when narrowing stops at this step

    @classmethod
    def from_options(cls, ctx: Context, opts: Mapping[str, Any]) -> Source:
        """The source as the command line configures it (``opts``: option values by ``Arg.dest``)."""
        return cls(ctx)

    # -- candidates -------------------------------------------------------------------------
    def ranges(self, engine: Engine, start: str | None, end: str | None, direction: str | None) -> list[list[Candidate]]:
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

    def finish(self, report: Report) -> None:
        """Follow-ups on a finished report (PR annotation for commits)."""

    def bisect(
        self, engine: Engine, start: str | None = None, end: str | None = None, direction: str | None = None
    ) -> list[Report]:
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
    def after(cls, ctx: Context, opts: Mapping[str, Any], report: Report) -> tuple[Source, str, str]:
        """This source set up to narrow down ``report`` of the source it follows: (source, start, end)."""
        raise XlakbError(f"the {cls.name} source cannot narrow down another source's answer")
