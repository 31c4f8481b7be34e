"""Candidate sources: what a bisection can probe.

A :class:`Candidate` names one testable build of torch_xla and what an
environment needs to install for it.  Three sources make them: releases from
the package index (:mod:`.releases`), nightly wheels by date
(:mod:`.nightlies`) and commits of a pytorch/xla clone (:mod:`.commits`).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Candidate:
    """One build to probe, in bisection order (oldest first).

    ``kind``      "release" | "nightly" | "commit"
    ``label``     what a person calls it: "2.5.1", "nightly 2025-01-16", "1a2b3c4d (#8819)"
    ``torch_xla`` a requirement for the torch_xla package: a version ("2.5.1") or an
                  absolute path to a wheel file (nightlies, commit bases)
    ``torch``     likewise for torch
    ``pins``      extra requirements this build needs (e.g. "numpy<2"), as data
    ``overlay``   for commits: (repo path, commit sha) whose torch_xla/*.py files are laid over
                  the base build's installed torch_xla
    ``meta``      source-specific facts (date, sha, PR number, gitrev, url...) for reports
    """

    kind: str
    label: str
    torch_xla: str
    torch: str
    pins: tuple[str, ...] = ()
    overlay: tuple[str, str] | None = None
    meta: dict = field(default_factory=dict, compare=False, hash=False)
