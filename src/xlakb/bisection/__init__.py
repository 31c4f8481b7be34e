"""Bisection: the engine (:mod:`.engine`), its report (:mod:`.report`), resume state (:mod:`.state`)
and narrowing over a chain of sources (:mod:`.narrow`).  Candidate sources live in
:mod:`xlakb.candidates`; the pure search is :mod:`xlakb.search` (and :mod:`xlakb.ddmin`)."""

from .engine import DIRECTIONS, Context, Engine, Options, outcome_of
from .narrow import NarrowStopped, narrow
from .report import Report, labels_for, save_report

__all__ = ["DIRECTIONS", "Context", "Engine", "Options", "outcome_of", "NarrowStopped", "narrow", "Report",
           "labels_for", "save_report"]
