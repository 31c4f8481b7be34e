"""Bisection: the engine (:mod:`.engine`), what a source offers it (:mod:`.source`), its report
(:mod:`.report`) and resume state (:mod:`.state`). Candidate sources live in :mod:`xlakb.candidates`, above the
engine; narrowing over a chain of sources (:mod:`.narrow`) sits above both. The pure search is
:mod:`xlakb.search` (and :mod:`xlakb.ddmin`)."""

from .engine import DIRECTIONS, Context, Engine, Options, outcome_of
from .report import Report, labels_for, save_report

__all__ = ["DIRECTIONS", "Context", "Engine", "Options", "outcome_of", "Report", "labels_for", "save_report"]
