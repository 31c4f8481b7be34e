"""The pure delta-debugging core: minimal answers, bounded tests, batches that do not change the answer."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xlakb.ddmin import Trial, ddmin, ddmin_bound
from xlakb.errors import XlakbError


def needs(culprits, *, unresolved=frozenset()):
    """A test whose bug shows when every culprit is set; configurations holding an
    ``unresolved`` item cannot be judged."""
    calls = []

    def test(configs):
        calls.append(list(configs))
        out = []
        for c in configs:
            if unresolved & set(c):
                out.append(Trial.UNRESOLVED)
            else:
                out.append(Trial.FAIL if set(culprits) <= set(c) else Trial.PASS)
        return out

    return test, calls


@given(
    st.integers(1, 24).flatmap(lambda n: st.tuples(st.just(n), st.sets(st.integers(0, n - 1), min_size=1, max_size=min(n, 3)))),
    st.integers(1, 4),
)
@settings(max_examples=200, deadline=None)
def test_finds_exactly_the_culprits_within_the_bound(case, batch):
    n, culprits = case
    test, calls = needs(culprits)
    result = ddmin(n, test, batch=batch)
    assert set(result.minimal) == culprits
    assert result.test_count <= ddmin_bound(n)
    assert all(len(c) <= batch for c in calls)
    tested = [c for c, _ in result.tests]
    assert len(tested) == len(set(tested)), "a configuration was tested twice"


@given(st.integers(2, 16).flatmap(lambda n: st.tuples(st.just(n), st.sets(st.integers(0, n - 1), min_size=1, max_size=2))))
@settings(max_examples=100, deadline=None)
def test_batch_size_does_not_change_the_answer(case):
    n, culprits = case
    answers = {ddmin(n, needs(culprits)[0], batch=b).minimal for b in (1, 2, 3, 8)}
    assert len(answers) == 1


def test_one_minimal_when_several_sets_fail():
    """Either {0, 1} or {2} makes it fail: the answer is one of them, and removing any item of it passes."""

    def test(configs):
        return [Trial.FAIL if ({0, 1} <= set(c) or 2 in c) else Trial.PASS for c in configs]

    result = ddmin(5, test)
    assert set(result.minimal) in ({0, 1}, {2})
    for drop in result.minimal:
        rest = tuple(i for i in result.minimal if i != drop)
        assert test([rest]) == [Trial.PASS]


def test_unresolved_configurations_are_neither_kept_nor_fatal():
    """Configurations holding item 0 cannot be judged: the answer is still the culprit."""
    test, _ = needs({1}, unresolved=frozenset({0}))
    result = ddmin(6, test, known={tuple(range(6)): Trial.FAIL})  # the caller judged the full set
    assert result.minimal == (1,)
    assert any(t is Trial.UNRESOLVED for _, t in result.tests)


def test_known_trials_are_not_asked_again():
    test, calls = needs({2})
    full = tuple(range(4))
    result = ddmin(4, test, known={full: Trial.FAIL})
    assert full not in list(itertools.chain.from_iterable(calls))
    assert result.minimal == (2,)


def test_bad_input_is_one_line():
    test, _ = needs({0})
    with pytest.raises(XlakbError, match="at least one setting"):
        ddmin(0, test)
    with pytest.raises(XlakbError, match="batch must be at least 1"):
        ddmin(3, test, batch=0)
    with pytest.raises(XlakbError, match="does not fail"):
        ddmin(3, lambda cs: [Trial.PASS for _ in cs])
    with pytest.raises(XlakbError, match="returned 0 trials for 1"):
        ddmin(3, lambda cs: [])
