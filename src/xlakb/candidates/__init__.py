"""Candidate sources: what a bisection can probe, one file per source.

A :class:`~xlakb.candidate.Candidate` names one testable build of torch_xla and what a probe of it
needs.  A :class:`~xlakb.bisection.source.Source` turns what the user names (``--start``/``--end`` and the
source's own options) into candidates, resolves a candidate into something installable, and owns its
follow-ups.  The sources are in :data:`SOURCES`, a registry by name (like pre-commit's languages): adding a
source is one file in this package and one line there. This package sits above the bisection engine: the
engine knows only :mod:`xlakb.bisection.source` and :mod:`xlakb.candidate`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ..errors import XlakbError

if TYPE_CHECKING:
    from ..bisection.source import Arg, Source


def __getattr__(name: str):
    """The bisection's types, imported when asked for: the command line reads :data:`SOURCES` to start, and
    a command that bisects nothing imports no engine (``xlakb triage`` starts as fast as Python)."""
    if name in ("Arg", "Source"):
        from ..bisection import source

        return getattr(source, name)
    if name in ("Candidate", "workaround_of"):
        from .. import candidate

        return getattr(candidate, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Arg", "Candidate", "NARROW_CHAIN", "SOURCES", "Source", "get_source", "source_arguments", "workaround_of"]


#: name -> "module:class"; imported when used, so a command that bisects nothing imports no source.
SOURCES: dict[str, str] = {
    "releases": "xlakb.candidates.releases:ReleaseSource",
    "nightlies": "xlakb.candidates.nightlies:NightlySource",
    "commits": "xlakb.candidates.commits:CommitSource",
    "settings": "xlakb.candidates.settings:SettingsSource",
}

#: ``--narrow``: releases, then the nightlies between two releases, then the commits between two nightlies.
NARROW_CHAIN = ("releases", "nightlies", "commits")


def get_source(name: str) -> type[Source]:  # noqa: F821 - imported when type checking
    where = SOURCES.get(name)
    if where is None:
        raise XlakbError(f"unknown candidate source {name!r}", hint=f"known: {', '.join(SOURCES)}")
    module, _, attr = where.partition(":")
    return getattr(importlib.import_module(module), attr)


def source_arguments() -> list[Arg]:  # noqa: F821 - imported when type checking
    """Every source's options, each flag once (the first source declaring it wins), in registry order."""
    seen: dict[str, Arg] = {}
    for name in SOURCES:
        for arg in get_source(name).arguments:
            seen.setdefault(arg.flags[0], arg)
    return list(seen.values())
