"""What a probe runs on: one build (a release, a nightly, a commit over a base build, a settings
configuration, or a record's workaround variant on a build). Data only: every layer above uses it, it uses
none of them."""

from __future__ import annotations

from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class Candidate:
    """One build to probe, in bisection order (oldest first).

    ``kind``      "release" | "nightly" | "commit" | "settings" | "workaround" (the record's workaround variant
                  of its reproducer, on the build of the same label: see :func:`workaround_of`)
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


def workaround_of(candidate: Candidate) -> Candidate:
    """The same build, probed with the record's workaround variant of its reproducer
    (``reproducer.workaround``): its verdict says whether the workaround holds on that build."""
    return replace(candidate, kind="workaround")
