"""The pure search core of a bisection: no I/O, no environments, no processes.

Terms follow ``git bisect``: a candidate is OLD when it behaves like the
start of the range and NEW when it behaves like the end (which of the two has
the bug is the caller's business).  Candidates are numbered
``0..n-1`` oldest first; the caller has verified that ``0`` is OLD and
``n-1`` is NEW, and :class:`Bisection` finds the first NEW one.

A probe that cannot decide (``SKIP``: the candidate cannot be tested,
``ERROR``: the probe itself failed) is unknown to the search: the state machine
moves to a neighbour instead, alternating outward from the point it wanted.
When every candidate strictly between the last OLD and the first NEW is
unknown, the search stops and reports that smallest provable range instead of
an exact answer.

Typical use::

    b = Bisection(len(candidates), known=cached_verdicts)
    while not b.done:
        for i in b.next_probes(k=2):       # probe these (in parallel)
            b.record(i, probe(candidates[i]))
        prepare(b.lookahead())             # optional: warm up what comes next
    result = b.result()

The module only imports :mod:`xlakb.errors`.
"""

from __future__ import annotations

import enum
import itertools
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from xlakb.errors import XlakbError

__all__ = ["Outcome", "SearchResult", "Bisection", "least_satisfying", "probe_bound"]


class Outcome(enum.Enum):
    """What one probe of one candidate said."""

    OLD = "old"  #: behaves like the start of the range
    NEW = "new"  #: behaves like the end of the range
    SKIP = "skip"  #: cannot be tested (missing build, API absent...): unknown
    ERROR = "error"  #: the probe failed (crash, timeout...): unknown, reported apart

    @property
    def known(self) -> bool:
        """True for OLD and NEW, the outcomes that move the search."""
        return self in (Outcome.OLD, Outcome.NEW)


@dataclass(frozen=True)
class SearchResult:
    """Where the change lies, and how the search found it.

    ``last_old``/``first_new`` bracket the change: every candidate up to
    ``last_old`` is (provably, by monotonicity) OLD, every candidate from
    ``first_new`` on is NEW.  ``exact`` means they are neighbours, so
    ``first_new`` is *the* culprit.  Otherwise ``unknown`` lists the candidates
    in between that could not be decided (SKIP or ERROR) and ``untested``
    those never probed (only non-empty when the result is taken before the
    search is done).
    """

    n: int
    last_old: int
    first_new: int
    exact: bool
    unknown: tuple[int, ...]
    untested: tuple[int, ...]
    probes: tuple[tuple[int, Outcome], ...]
    """Probes recorded through :meth:`Bisection.record`, in order (pre-seeded
    ``known`` outcomes excluded)."""
    complete: bool
    """The search had nothing left to probe when the result was taken."""

    @property
    def probe_count(self) -> int:
        """How many probes were recorded (pre-seeded outcomes do not count)."""
        return len(self.probes)

    @property
    def culprit(self) -> int | None:
        """The first NEW candidate when the result is exact, else None."""
        return self.first_new if self.exact else None

    @property
    def skipped(self) -> tuple[int, ...]:
        """The ``unknown`` candidates whose last probe said SKIP."""
        last = dict(self.probes)
        return tuple(i for i in self.unknown if last.get(i) is Outcome.SKIP)

    @property
    def errors(self) -> tuple[int, ...]:
        """Every recorded probe that said ERROR, wherever it lies."""
        return tuple(sorted({i for i, o in self.probes if o is Outcome.ERROR}))


def probe_bound(n: int) -> int:
    """The probe budget a skip-free sequential search stays within: ceil(log2 n) + 2."""
    return math.ceil(math.log2(n)) + 2 if n > 1 else 2


class Bisection:
    """A bisection over candidates ``0..n-1``: a state machine, no I/O.

    ``known`` pre-seeds outcomes (e.g. verdicts cached from an earlier run);
    they narrow the range before any probe and are not counted as probes, so
    repeating a finished bisection costs nothing.  Candidate ``0`` is taken as
    OLD and ``n-1`` as NEW (the caller verifies the ends); a ``known`` that
    says otherwise, or any OLD above a NEW, raises :class:`XlakbError` naming
    the indices.

    Probes handed out by :meth:`next_probes` are *pending* until recorded;
    further calls hand out other candidates, so a caller may keep several
    probes in flight.
    """

    def __init__(self, n: int, known: Mapping[int, Outcome] | None = None) -> None:
        if not isinstance(n, int) or isinstance(n, bool) or n < 2:
            raise XlakbError(f"a bisection needs at least 2 candidates (an OLD start and a NEW end), got n={n!r}")
        self._n = n
        self._outcomes: dict[int, Outcome] = {0: Outcome.OLD, n - 1: Outcome.NEW}
        self._lo = 0  # largest OLD index
        self._hi = n - 1  # smallest NEW index
        self._pending: set[int] = set()
        self._probes: list[tuple[int, Outcome]] = []
        if known:
            # Definite outcomes first so that the error for a contradiction
            # does not depend on the mapping's order.
            items = sorted(known.items(), key=lambda kv: (not _as_outcome(kv[1], kv[0]).known, kv[0]))
            for index, outcome in items:
                self._apply(index, _as_outcome(outcome, index), source="known outcome")

    # ----------------------------------------------------------------- state
    @property
    def n(self) -> int:
        return self._n

    @property
    def last_old(self) -> int:
        """The largest index known to be OLD."""
        return self._lo

    @property
    def first_new(self) -> int:
        """The smallest index known to be NEW."""
        return self._hi

    @property
    def pending(self) -> tuple[int, ...]:
        """Probes handed out and not recorded yet, ascending."""
        return tuple(sorted(self._pending))

    @property
    def probes(self) -> tuple[tuple[int, Outcome], ...]:
        """Recorded probes in order."""
        return tuple(self._probes)

    @property
    def done(self) -> bool:
        """Nothing left that could narrow the range: no untested candidate and no
        pending probe strictly between ``last_old`` and ``first_new``."""
        return not self._pending_inside() and not self._has_available()

    # ---------------------------------------------------------------- probes
    def next_probes(self, k: int = 1) -> list[int]:
        """Up to ``k`` candidates to probe next (ascending) and mark them pending.

        With nothing pending the open range is split into ``k + 1`` parts of
        equal size; pending probes act as split points too, so asking again
        while probes are in flight divides the largest parts first.  A point
        that is unknown (skipped, errored) or already pending moves to its
        nearest free neighbour, alternating outward.  Returns ``[]`` when
        :attr:`done`, or when every open candidate is already pending.
        """
        chosen = self._choose(k)
        self._pending.update(chosen)
        return chosen

    def record(self, index: int, outcome: Outcome) -> None:
        """Record what probing ``index`` said.

        Recording an index that was never handed out is allowed, as is
        recording the same outcome twice or a definite outcome over an earlier
        SKIP/ERROR (a retry that worked).  Raises :class:`XlakbError` for an
        index outside ``0..n-1``, a definite outcome that changes, or an OLD
        above a NEW (the behaviour is not monotonic).
        """
        outcome = _as_outcome(outcome, index)
        self._apply(index, outcome, source="probe")
        self._pending.discard(index)
        self._probes.append((index, outcome))

    def lookahead(self, k: int | None = None) -> list[int]:
        """Candidates the search could ask for after the pending probes report.

        For every consistent combination of outcomes of the pending probes
        (OLD, NEW or unknown for each) this simulates the next call
        ``next_probes(k)`` and returns the union, ascending — the builds worth
        preparing in advance.  ``k`` defaults to the number of pending probes
        (at least 1).  With nothing pending it is what ``next_probes(k)``
        would return, without marking anything.
        """
        inside = sorted(self._pending_inside())
        kk = k if k is not None else max(1, len(inside))
        if not inside:
            return self._choose(kk)
        if len(inside) > 8:  # keep the enumeration small: consider OLD/NEW cuts only
            combos: Iterable[tuple[Outcome, ...]] = (
                tuple(Outcome.OLD if j < cut else Outcome.NEW for j in range(len(inside))) for cut in range(len(inside) + 1)
            )
        else:
            combos = itertools.product((Outcome.OLD, Outcome.NEW, Outcome.SKIP), repeat=len(inside))
        found: set[int] = set()
        for combo in combos:
            if not _monotone(combo):
                continue
            sim = self._copy()
            for index, outcome in zip(inside, combo):
                sim._apply(index, outcome, source="lookahead")
                sim._pending.discard(index)
            found.update(sim._choose(kk))
        found.difference_update(self._pending)
        return sorted(found)

    def result(self) -> SearchResult:
        """The bracket as it stands (call when :attr:`done` for the final answer)."""
        lo, hi = self._lo, self._hi
        unknown = tuple(sorted(i for i, o in self._outcomes.items() if lo < i < hi))
        unknown_set = set(unknown)
        untested = tuple(i for i in range(lo + 1, hi) if i not in unknown_set)
        return SearchResult(
            n=self._n,
            last_old=lo,
            first_new=hi,
            exact=hi == lo + 1,
            unknown=unknown,
            untested=untested,
            probes=tuple(self._probes),
            complete=self.done,
        )

    # -------------------------------------------------------------- internals
    def _copy(self) -> Bisection:
        twin = object.__new__(Bisection)
        twin._n = self._n
        twin._outcomes = dict(self._outcomes)
        twin._lo, twin._hi = self._lo, self._hi
        twin._pending = set(self._pending)
        twin._probes = list(self._probes)
        return twin

    def _apply(self, index: int, outcome: Outcome, *, source: str) -> None:
        n = self._n
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < n:
            raise XlakbError(f"{source} for candidate {index!r} is outside the range 0..{n - 1}")
        previous = self._outcomes.get(index)
        if previous is not None and previous is not outcome:
            if previous.known:
                raise XlakbError(
                    f"{source} says candidate {index} is {outcome.name} but it is already {previous.name}",
                    hint="a probe that flips is flaky; fix the reproducer or record it as ERROR",
                )
            if not outcome.known:  # SKIP <-> ERROR: keep the newest word
                self._outcomes[index] = outcome
                return
        if outcome is Outcome.OLD and index > self._hi:
            raise XlakbError(
                f"not monotonic: {source} says candidate {index} is OLD but candidate {self._hi} before it is NEW",
                hint="the behaviour flips back and forth in this range; bisect a smaller range",
            )
        if outcome is Outcome.NEW and index < self._lo:
            raise XlakbError(
                f"not monotonic: {source} says candidate {index} is NEW but candidate {self._lo} after it is OLD",
                hint="the behaviour flips back and forth in this range; bisect a smaller range",
            )
        self._outcomes[index] = outcome
        if outcome is Outcome.OLD and index > self._lo:
            self._lo = index
        elif outcome is Outcome.NEW and index < self._hi:
            self._hi = index

    def _pending_inside(self) -> set[int]:
        return {i for i in self._pending if self._lo < i < self._hi}

    def _blocked_inside(self) -> list[int]:
        """Unknown or pending candidates strictly inside the open range, sorted."""
        lo, hi = self._lo, self._hi
        blocked = {i for i in self._outcomes if lo < i < hi}
        blocked.update(self._pending_inside())
        return sorted(blocked)

    def _available_count(self) -> int:
        return max(0, self._hi - self._lo - 1 - len(self._blocked_inside()))

    def _has_available(self) -> bool:
        return self._available_count() > 0

    def _choose(self, k: int) -> list[int]:
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise XlakbError(f"next_probes needs k >= 1 probes at a time, got k={k!r}")
        lo, hi = self._lo, self._hi
        if hi - lo < 2:
            return []
        blocked = set(self._blocked_inside())
        pending = sorted(self._pending_inside())
        bounds = [lo, *pending, hi]
        # Each gap between consecutive split points, with how many free candidates it holds.
        gaps: list[tuple[int, int, int]] = []
        skipped_sorted = sorted(i for i in blocked if i not in self._pending)
        for a, b in zip(bounds, bounds[1:]):
            n_blocked = sum(1 for i in skipped_sorted if a < i < b)
            free = b - a - 1 - n_blocked
            if free > 0:
                gaps.append((a, b, free))
        if not gaps:
            return []
        # Hand the k points out one by one to the gap whose parts would stay largest.
        assigned = [0] * len(gaps)
        for _ in range(k):
            best, best_size = -1, 0.0
            for g, (a, b, free) in enumerate(gaps):
                if assigned[g] >= free:
                    continue
                size = free / (assigned[g] + 1)
                if size > best_size:
                    best, best_size = g, size
            if best < 0:
                break
            assigned[best] += 1
        chosen: list[int] = []
        taken = set(blocked)
        for (a, b, _free), m in zip(gaps, assigned):
            for t in range(1, m + 1):
                target = (a * (m + 1 - t) + b * t) // (m + 1)
                point = _nearest_free(target, a, b, taken)
                if point is not None:
                    taken.add(point)
                    chosen.append(point)
        return sorted(chosen)


def _nearest_free(target: int, a: int, b: int, taken: set[int]) -> int | None:
    """The index nearest ``target`` strictly inside ``(a, b)`` not in ``taken``,
    trying ``target``, ``+1``, ``-1``, ``+2``, ``-2``... ."""
    target = min(max(target, a + 1), b - 1)
    span = b - a
    for d in range(span):
        for candidate in (target,) if d == 0 else (target + d, target - d):
            if a < candidate < b and candidate not in taken:
                return candidate
    return None


def _monotone(combo: tuple[Outcome, ...]) -> bool:
    seen_new = False
    for outcome in combo:
        if outcome is Outcome.NEW:
            seen_new = True
        elif outcome is Outcome.OLD and seen_new:
            return False
    return True


def _as_outcome(value: object, index: object) -> Outcome:
    if isinstance(value, Outcome):
        return value
    raise XlakbError(f"outcome for candidate {index!r} must be an Outcome, got {value!r}")


def least_satisfying(
    n: int,
    predicate: Callable[[int], Outcome | bool],
    known: Mapping[int, Outcome] | None = None,
) -> SearchResult:
    """Run a sequential bisection over ``0..n-1`` with ``predicate`` as the probe.

    ``predicate(i)`` returns an :class:`Outcome`, or a bool (True = NEW, the
    "satisfying" side).  As for :class:`Bisection`, ``0`` is assumed OLD and
    ``n-1`` NEW and are not probed.
    """
    search = Bisection(n, known)
    while not search.done:
        for index in search.next_probes(1):
            said = predicate(index)
            if isinstance(said, bool):
                said = Outcome.NEW if said else Outcome.OLD
            search.record(index, said)
    return search.result()
