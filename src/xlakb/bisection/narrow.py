"""Narrowing: a chain of sources, each bisecting between the two candidates the previous one found.

By default releases, then the nightlies between the two releases' dates, then (with ``--repo``) the
commits between the gitrevs of the two nightlies, laid over those nightlies.  Each source says how it
follows the one before (:meth:`~xlakb.candidates.Source.after`); this module only runs the chain.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..candidates import NARROW_CHAIN, get_source
from ..errors import XlakbError
from .engine import Context
from .report import Report


class NarrowStopped(XlakbError):
    """Narrowing could not go on to the next source; ``reports`` holds the stages that finished."""

    def __init__(self, message: str, *, reports: list[Report], hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.reports = list(reports)


def narrow(
    ctx: Context,
    opts: Mapping[str, Any] | None = None,
    *,
    start: str | None = None,
    end: str | None = None,
    direction: str | None = None,
    chain: tuple[str, ...] = NARROW_CHAIN,
) -> list[Report]:
    """Run the chain; one report per finished stage, every stage verifying its own ends.

    ``opts`` are the sources' option values by name (``nightly_version``, ``repo``...).  A stage whose
    source cannot follow with these options (commits without ``repo``) ends the chain quietly.  Raises
    :class:`NarrowStopped` (with the finished reports) when a later stage cannot run or its ends do not
    bracket the change; a plain XlakbError when the first stage fails.
    """
    opts = dict(opts or {})
    total = len(chain)
    first = get_source(chain[0]).from_options(ctx, opts)
    ctx.progress.info(f"narrowing 1/{total}: {first.stage}")
    engine = ctx.engine(first)
    ranges = first.ranges(engine, start, end, direction)
    if len(ranges) > 1:
        raise XlakbError(
            "narrowing follows one change, and the releases show two (the bug came and went): " + " ".join(engine.notes),
            hint="pass --direction introduced or fixed",
        )
    report = engine.run(ranges[0], direction=direction)
    first.finish(report)
    reports = [report]
    for step, name in enumerate(chain[1:], 2):
        cls = get_source(name)
        if not cls.can_follow(opts):
            break
        stage, hint = name, None
        try:
            source, lo, hi = cls.after(ctx, opts, reports[-1])
            stage, hint = source.stage, source.stop_hint
            ctx.progress.info(f"narrowing {step}/{total}: {stage}")
            engine = ctx.engine(source)
            report = engine.run(source.ranges(engine, lo, hi, reports[-1].direction)[0], direction=reports[-1].direction)
            source.finish(report)
        except XlakbError as err:
            so_far = "; ".join(r.finding() for r in reports)
            raise NarrowStopped(
                f"narrowing stopped at {stage}: {err.message}; found so far: {so_far}", reports=reports, hint=hint or err.hint
            ) from err
        reports.append(report)
    return reports
