"""Tests of the pure bisection core (xlakb.search)."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xlakb.errors import XlakbError
from xlakb.search import Bisection, Outcome, SearchResult, least_satisfying, probe_bound

O, N, S, E = Outcome.OLD, Outcome.NEW, Outcome.SKIP, Outcome.ERROR  # noqa: E741 - the tables read as rows of letters


def world(n: int, culprit: int, skips: set[int] = frozenset(), errors: set[int] = frozenset()):
    """A probe function: candidates from ``culprit`` on are NEW, some cannot be tested."""

    def probe(i: int) -> Outcome:
        assert 0 < i < n - 1, f"probed an end or outside: {i}"
        if i in skips:
            return S
        if i in errors:
            return E
        return N if i >= culprit else O

    return probe


def run(n: int, probe, k: int = 1, known=None) -> tuple[SearchResult, int]:
    """Drive a Bisection with batches of k probes; returns (result, rounds)."""
    b = Bisection(n, known)
    rounds = 0
    while not b.done:
        batch = b.next_probes(k)
        assert batch, "not done but nothing to probe"
        assert len(batch) <= k and batch == sorted(set(batch))
        rounds += 1
        for i in batch:
            b.record(i, probe(i))
    return b.result(), rounds


# ------------------------------------------------------------------ exact searches
@pytest.mark.parametrize("n", [2, 3, 4, 5, 7, 8, 9, 16, 17, 100, 257, 1000])
def test_finds_every_culprit_within_bound(n):
    for culprit in range(1, n):
        res = least_satisfying(n, world(n, culprit))
        assert (res.last_old, res.first_new) == (culprit - 1, culprit)
        assert res.exact and res.culprit == culprit
        assert res.unknown == () and res.untested == () and res.complete
        assert res.probe_count <= probe_bound(n)
        # n-2 untested inner candidates: a plain binary search needs ceil(log2(n-1)) probes
        assert res.probe_count <= (math.ceil(math.log2(n - 1)) if n > 2 else 0)


def test_two_candidates_need_no_probe():
    b = Bisection(2)
    assert b.done and b.next_probes(3) == [] and b.lookahead() == []
    res = b.result()
    assert (res.last_old, res.first_new, res.exact, res.probes) == (0, 1, True, ())


def test_predicate_may_return_bool_or_outcome():
    assert least_satisfying(50, lambda i: i >= 31).first_new == 31
    assert least_satisfying(50, lambda i: N if i >= 31 else O).first_new == 31


def test_first_probe_is_midpoint_and_probes_are_logged_in_order():
    b = Bisection(11)
    assert b.next_probes() == [5]
    b.record(5, O)
    assert b.next_probes() == [7]
    b.record(7, N)
    assert b.probes == ((5, O), (7, N))
    assert (b.last_old, b.first_new) == (5, 7)


# ------------------------------------------------------------------ skips and errors
def test_skipped_midpoint_moves_to_neighbours_alternating_outward():
    n = 21  # midpoint 10
    b = Bisection(n)
    seen = []
    for _ in range(4):
        (i,) = b.next_probes()
        seen.append(i)
        b.record(i, S)
    assert seen == [10, 11, 9, 12]


def test_skips_that_do_not_block_still_give_exact():
    res = least_satisfying(40, world(40, 13, skips={19, 20, 21, 10}))
    assert res.exact and res.first_new == 13
    assert set(res.unknown) == set()  # skips outside the final bracket are not "unknown"


def test_all_skipped_between_gives_smallest_provable_range():
    res = least_satisfying(10, world(10, 5, skips={3, 4, 5, 6}))
    assert (res.last_old, res.first_new) == (2, 7)
    assert not res.exact and res.culprit is None
    assert res.unknown == (3, 4, 5, 6) and res.skipped == (3, 4, 5, 6)
    assert res.complete and res.untested == ()


def test_everything_skipped():
    n = 10
    res = least_satisfying(n, world(n, 4, skips=set(range(1, n - 1))))
    assert (res.last_old, res.first_new, res.exact) == (0, n - 1, False)
    assert res.unknown == tuple(range(1, n - 1)) and res.probe_count == n - 2


@pytest.mark.parametrize(
    "n,culprit,skips,bracket,unknown",
    [
        (10, 1, {1}, (0, 2), (1,)),  # first inner candidate: the culprit, skipped
        (10, 8, {8}, (7, 9), (8,)),  # last inner candidate: the culprit, skipped
        (10, 2, {1}, (0, 2), (1,)),  # the last OLD one is skipped, next to the start
        (10, 8, {7}, (6, 8), (7,)),  # the last OLD one is skipped, before the culprit
        (10, 1, {1, 2, 3}, (0, 4), (1, 2, 3)),  # a skipped run from the start
        (10, 8, {6, 7, 8}, (5, 9), (6, 7, 8)),  # a skipped run up to the end
        (12, 6, {1, 2, 9, 10}, (5, 6), ()),  # skips at both ends do not hide a culprit in the middle
        (12, 1, {2, 3, 10}, (0, 1), ()),
        (12, 11, {1, 2, 9}, (10, 11), ()),
    ],
)
def test_skips_at_the_ends_of_the_range(n, culprit, skips, bracket, unknown):
    res = least_satisfying(n, world(n, culprit, skips=skips))
    assert (res.last_old, res.first_new) == bracket
    assert res.unknown == unknown
    assert res.exact == (unknown == ())


def test_errors_count_as_unknown_and_are_reported_apart():
    res = least_satisfying(10, world(10, 5, skips={4}, errors={5}))
    assert (res.last_old, res.first_new) == (3, 6)
    assert res.unknown == (4, 5) and res.skipped == (4,) and res.errors == (5,)


def test_retry_after_error_may_record_a_verdict():
    b = Bisection(9)
    (m,) = b.next_probes()
    b.record(m, E)
    b.record(m, O)  # the retry worked
    assert b.last_old == m
    assert b.probes == ((m, E), (m, O))


# ------------------------------------------------------------------ parallel probing
def test_k_points_split_the_range_evenly():
    b = Bisection(101)
    pts = b.next_probes(3)
    assert pts == [25, 50, 75]
    assert b.pending == (25, 50, 75)
    assert b.next_probes(1) not in ([25], [50], [75])  # in-flight points are not handed out again


@pytest.mark.parametrize("n", [10, 64, 100, 1000])
@pytest.mark.parametrize("k", [2, 3, 4])
def test_parallel_rounds_are_logarithmic_in_base_k_plus_1(n, k):
    worst = 0
    for culprit in range(1, n, max(1, n // 40)):
        res, rounds = run(n, world(n, culprit), k=k)
        assert res.exact and res.first_new == culprit
        worst = max(worst, rounds)
    assert worst <= math.ceil(math.log(n, k + 1)) + 1


def test_parallel_with_skips_still_brackets():
    n = 200
    skips = set(range(90, 110))
    for culprit in (5, 95, 100, 150, 199):
        res, _ = run(n, world(n, culprit, skips=skips), k=3)
        assert res.last_old < culprit <= res.first_new
        assert set(res.unknown) <= skips


def test_async_out_of_order_records():
    n = 64
    probe = world(n, 40)
    b = Bisection(n)
    first = b.next_probes(2)
    second = b.next_probes(2)  # two more while the first two run
    assert not set(first) & set(second)
    for i in reversed(first + second):  # results arrive in any order
        b.record(i, probe(i))
    while not b.done:
        for i in b.next_probes(2):
            b.record(i, probe(i))
    assert b.result().exact and b.result().first_new == 40


def test_stale_pending_probe_outside_range_is_accepted_when_consistent():
    b = Bisection(100)
    a, c = b.next_probes(2)  # 33, 66
    b.record(a, N)  # the range is now 0..33: c is useless
    assert not b.done
    b.record(c, N)
    with pytest.raises(XlakbError, match="not monotonic"):
        b.record(90, O)


# ------------------------------------------------------------------ lookahead
@pytest.mark.parametrize("n", [9, 17, 100])
def test_lookahead_covers_every_next_probe(n):
    b = Bisection(n)
    pending = b.next_probes(1)
    ahead = set(b.lookahead())
    assert ahead and not ahead & set(pending)
    for outcome in (O, N, S, E):
        sim = Bisection(n)
        sim.next_probes(1)
        sim.record(pending[0], outcome)
        assert set(sim.next_probes(1)) <= ahead


def test_lookahead_for_several_pending_probes():
    n = 100
    b = Bisection(n)
    pending = b.next_probes(2)
    ahead = set(b.lookahead())
    for combo in itertools.product((O, N, S), repeat=2):
        if combo == (N, O):
            continue
        sim = Bisection(n)
        sim.next_probes(2)
        for i, o in zip(pending, combo):
            sim.record(i, o)
        assert set(sim.next_probes(2)) <= ahead


def test_lookahead_without_pending_peeks_without_marking():
    b = Bisection(30)
    assert b.lookahead() == b.lookahead() == [14]
    assert b.pending == ()
    assert b.next_probes() == [14]


# ------------------------------------------------------------------ known outcomes
@pytest.mark.parametrize("skips", [set(), {3, 4, 5, 6, 7}, {20, 21}])
def test_repeated_bisection_with_known_outcomes_costs_zero_probes(skips):
    n = 50
    for culprit in (1, 5, 21, 30, 49):
        first = least_satisfying(n, world(n, culprit, skips=skips))
        again = least_satisfying(n, world(n, culprit, skips=skips), known=dict(first.probes))
        assert again.probe_count == 0
        assert (again.last_old, again.first_new, again.unknown) == (first.last_old, first.first_new, first.unknown)


def test_partial_known_outcomes_shorten_the_search():
    n = 1000
    probe = world(n, 700)
    full = least_satisfying(n, probe)
    seeded = least_satisfying(n, probe, known={650: O, 750: N})
    assert seeded.first_new == full.first_new == 700
    assert seeded.probe_count < full.probe_count
    assert all(i not in (650, 750) for i, _ in seeded.probes)


def test_known_can_decide_the_whole_search():
    b = Bisection(10, known={4: O, 5: N})
    assert b.done and b.next_probes() == []
    assert b.result().exact and b.result().first_new == 5 and b.result().probes == ()


# ------------------------------------------------------------------ misuse
@pytest.mark.parametrize("n", [0, 1, -3])
def test_too_few_candidates(n):
    with pytest.raises(XlakbError, match=f"n={n}"):
        Bisection(n)


@pytest.mark.parametrize("index", [-1, 10, 11])
def test_record_outside_range(index):
    b = Bisection(10)
    with pytest.raises(XlakbError, match=f"candidate {index} is outside the range 0..9"):
        b.record(index, O)


def test_non_monotonic_probe_names_the_indices():
    b = Bisection(20)
    b.record(8, N)
    with pytest.raises(XlakbError, match=r"candidate 12 is OLD but candidate 8 before it is NEW"):
        b.record(12, O)
    b.record(3, O)
    with pytest.raises(XlakbError, match=r"candidate 2 is NEW but candidate 3 after it is OLD"):
        b.record(2, N)


def test_non_monotonic_known_names_the_indices():
    with pytest.raises(XlakbError, match=r"known outcome.*candidate 7 is OLD but candidate 3 before it is NEW"):
        Bisection(10, known={7: O, 3: N})
    with pytest.raises(XlakbError, match=r"candidate 0 is NEW but it is already OLD"):
        Bisection(10, known={0: N})
    with pytest.raises(XlakbError, match=r"candidate 9 is SKIP but it is already NEW"):
        Bisection(10, known={9: S})
    with pytest.raises(XlakbError, match=r"candidate 12 is outside"):
        Bisection(10, known={12: O})


def test_flipping_verdict_and_bad_values():
    b = Bisection(10)
    b.record(5, O)
    b.record(5, O)  # same verdict again is fine
    with pytest.raises(XlakbError, match="candidate 5 is NEW but it is already OLD"):
        b.record(5, N)
    with pytest.raises(XlakbError, match="must be an Outcome"):
        b.record(6, "old")  # type: ignore[arg-type]
    with pytest.raises(XlakbError, match="k >= 1"):
        b.next_probes(0)


def test_result_before_done_lists_untested():
    b = Bisection(10)
    b.record(5, S)
    res = b.result()
    assert not res.complete and not res.exact
    assert res.unknown == (5,) and res.untested == (1, 2, 3, 4, 6, 7, 8)


# ------------------------------------------------------------------ properties
@st.composite
def worlds(draw, max_n: int = 300):
    """(n, culprit, skipped indices, errored indices): a monotone world with holes."""
    n = draw(st.integers(2, max_n))
    culprit = draw(st.integers(1, n - 1))
    inner = list(range(1, n - 1))
    if not inner:
        return n, culprit, set(), set()
    skips = set(draw(st.lists(st.sampled_from(inner), max_size=len(inner))))
    errors = set(draw(st.lists(st.sampled_from(inner), max_size=5))) - skips
    return n, culprit, skips, errors


@settings(max_examples=300, deadline=None)
@given(worlds())
def test_property_result_brackets_the_true_change(w):
    n, culprit, skips, errors = w
    res = least_satisfying(n, world(n, culprit, skips, errors))
    assert res.last_old < culprit <= res.first_new
    assert res.complete and res.untested == ()
    between = set(range(res.last_old + 1, res.first_new))
    assert between == set(res.unknown) and between <= skips | errors
    assert res.last_old not in skips | errors or res.last_old == 0
    blocked = (culprit - 1) in skips | errors or culprit in skips | errors
    assert res.exact == (not blocked)
    if not blocked:
        assert res.first_new == culprit
    # each candidate is probed at most once by a sequential run
    probed = [i for i, _ in res.probes]
    assert len(probed) == len(set(probed))


@settings(max_examples=300, deadline=None)
@given(st.integers(2, 5000), st.data())
def test_property_probe_bound_without_skips(n, data):
    culprit = data.draw(st.integers(1, n - 1))
    res = least_satisfying(n, world(n, culprit))
    assert res.exact and res.first_new == culprit
    assert res.probe_count <= math.ceil(math.log2(n)) + 2


@settings(max_examples=150, deadline=None)
@given(worlds(max_n=200), st.integers(1, 5), st.randoms(use_true_random=False))
def test_property_parallel_and_out_of_order(w, k, rnd):
    n, culprit, skips, errors = w
    probe = world(n, culprit, skips, errors)
    b = Bisection(n)
    inflight: list[int] = []
    steps = 0
    while not b.done:
        inflight += b.next_probes(k)
        assert inflight or b.done
        rnd.shuffle(inflight)
        i = inflight.pop()  # one result arrives, the rest keep running
        b.record(i, probe(i))
        steps += 1
        assert steps <= 3 * n
    res = b.result()
    assert res.last_old < culprit <= res.first_new
    assert set(range(res.last_old + 1, res.first_new)) <= skips | errors
    if not ((culprit - 1) in skips | errors or culprit in skips | errors):
        assert res.exact


@settings(max_examples=150, deadline=None)
@given(worlds(max_n=200), st.data())
def test_property_known_seeding(w, data):
    n, culprit, skips, errors = w
    probe = world(n, culprit, skips, errors)
    seeded = data.draw(st.lists(st.integers(1, max(1, n - 2)), max_size=10)) if n > 2 else []
    known = {i: probe(i) for i in seeded}
    plain = least_satisfying(n, probe)
    res = least_satisfying(n, probe, known=known)
    assert res.last_old < culprit <= res.first_new
    assert res.exact == plain.exact
    if res.exact:
        assert res.first_new == plain.first_new == culprit
    assert not {i for i, _ in res.probes} & set(known)
    again = least_satisfying(n, probe, known={**known, **dict(res.probes)})
    assert again.probe_count == 0 and (again.last_old, again.first_new) == (res.last_old, res.first_new)
