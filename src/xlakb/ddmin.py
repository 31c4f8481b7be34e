"""Delta debugging (Zeller and Hildebrandt's *ddmin*): the pure core of a settings bisection.

Given ``n`` items (settings) whose full set makes a test FAIL (the bug shows), find a subset that
still fails and is *1-minimal*: removing any one of its items makes it pass (or unresolved).  Tests
are asked for in batches, so a caller can run several at once; within a batch the first failing
configuration in ddmin's own order wins, so the answer does not depend on the batch size.  Every
configuration is tested at most once (a memo), and the number of tests is bounded by
:func:`ddmin_bound`.

No I/O: the caller turns a configuration (a tuple of item indexes, ascending) into a probe.  Like
:mod:`xlakb.search`, this module only imports :mod:`xlakb.errors`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xlakb.errors import XlakbError

__all__ = ["Trial", "Minimized", "ddmin", "ddmin_bound"]

Config = tuple[int, ...]


class Trial(enum.Enum):
    FAIL = "fail"  #: the bug shows with this configuration
    PASS = "pass"  #: it does not
    UNRESOLVED = "unresolved"  #: the probe could not tell (untestable, error, flaky)


@dataclass(frozen=True)
class Minimized:
    """``minimal``: the 1-minimal failing configuration; ``tests``: every configuration tested,
    in order, with its trial; ``bound``: the most tests ddmin could have needed."""

    n: int
    minimal: Config
    tests: tuple[tuple[Config, Trial], ...]
    bound: int

    @property
    def test_count(self) -> int:
        return len(self.tests)


def ddmin_bound(n: int) -> int:
    """Worst-case number of tests ddmin makes on ``n`` items (Zeller: n² + 3n), plus the two ends."""
    return n * n + 3 * n + 2


def _split(config: Config, parts: int) -> list[Config]:
    size, extra = divmod(len(config), parts)
    out, at = [], 0
    for i in range(parts):
        step = size + (1 if i < extra else 0)
        out.append(config[at : at + step])
        at += step
    return [c for c in out if c]


def ddmin(
    n: int, test: Callable[[Sequence[Config]], Sequence[Trial]], *, batch: int = 1, known: dict[Config, Trial] | None = None
) -> Minimized:
    """Minimize the failing configuration ``(0, ..., n-1)``.

    ``test`` gets a list of at most ``batch`` configurations and returns one :class:`Trial` each.
    ``known`` holds trials already measured (a resumed run): they are not asked again.  The full
    configuration must FAIL; the empty one is not tested here (the caller checks it: a bug that
    shows with no setting at all needs none).
    """
    if n < 1:
        raise XlakbError("delta debugging needs at least one setting")
    if batch < 1:
        raise XlakbError(f"batch must be at least 1, got {batch}")
    memo: dict[Config, Trial] = dict(known or {})
    order: list[tuple[Config, Trial]] = []

    def first_failing(configs: list[Config]) -> Config | None:
        """Test ``configs`` in order (``batch`` at a time, memo first); the first that fails."""
        for start in range(0, len(configs), batch):
            chunk = configs[start : start + batch]
            ask = [c for c in dict.fromkeys(chunk) if c not in memo]
            if ask:
                trials = list(test(ask))
                if len(trials) != len(ask):
                    raise XlakbError(f"test returned {len(trials)} trials for {len(ask)} configurations")
                for c, t in zip(ask, trials):
                    memo[c] = t
                    order.append((c, t))
            for c in chunk:
                if memo[c] is Trial.FAIL:
                    return c
        return None

    current: Config = tuple(range(n))
    full = first_failing([current])
    if full is None:
        raise XlakbError(f"the full configuration of {n} setting(s) does not fail ({memo[current].value}): nothing to minimize")
    parts = 2
    while len(current) >= 2:
        subsets = _split(current, parts)
        hit = first_failing(subsets)
        if hit is not None:  # reduce to a subset
            current, parts = hit, 2
            continue
        complements = [tuple(i for i in current if i not in set(s)) for s in subsets]
        hit = first_failing([c for c in complements if c]) if parts > 2 else None
        if hit is not None:  # reduce to a complement
            current, parts = hit, max(parts - 1, 2)
            continue
        if parts >= len(current):
            break
        parts = min(len(current), parts * 2)
    return Minimized(n=n, minimal=current, tests=tuple(order), bound=ddmin_bound(n))
