"""The enumeration stops at the call's deadline (it once ran to the end, past the limit)."""
import warnings

import numpy as np
import pytest

from dpsubset import dp_best_subset, Ball, Logistic, Search
from dpsubset.search import enumeration
from dpsubset.search.enumeration import mistakes_by_enumeration, score_all, top_r_by_enumeration
from dpsubset.search.exact import SubsetSearch
from dpsubset.runtime.limits import SearchTimeout
from dpsubset.studies.simulate import make_classification


class _Clock:
    """A fake perf_counter that advances only when a support is scored."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class _SlowScorer:
    """Every support scores 0; scoring one costs `cost` fake seconds."""

    def __init__(self, p, clock, cost):
        self.p, self.clock, self.cost, self.scored = p, clock, cost, 0

    def score(self, S):
        self.clock.now += self.cost * len(S)
        self.scored += len(S)
        return np.zeros(len(S))


@pytest.mark.parametrize("cost", [1e-4, 1e-3])
def test_score_all_stops_within_a_batch_of_the_deadline(monkeypatch, cost):
    clock = _Clock()
    monkeypatch.setattr(enumeration.time, "perf_counter", clock)
    sc = _SlowScorer(20, clock, cost)  # C(20, 5) = 15,504 supports
    deadline = 15_504 * cost / 4       # a quarter of the way through
    with pytest.raises(SearchTimeout) as err:
        score_all(sc, 5, deadline=deadline, problem="top-R list")
    assert err.value.problem == "top-R list"
    # It stopped within one batch (about _BATCH_SECONDS of work) after the deadline.
    assert clock.now <= deadline + enumeration._BATCH_SECONDS + 1000 * cost
    assert sc.scored < 15_504
    # Without a deadline everything is scored.
    sc2 = _SlowScorer(20, clock, cost)
    S, v = score_all(sc2, 5)
    assert len(S) == sc2.scored == 15_504
    # A deadline already past: refused before anything is scored.
    sc3 = _SlowScorer(20, clock, cost)
    with pytest.raises(SearchTimeout):
        top_r_by_enumeration(sc3, 5, 3, deadline=clock.now)
    with pytest.raises(SearchTimeout):
        mistakes_by_enumeration(sc3, 5, deadline=clock.now)
    assert sc3.scored == 0


def test_subset_search_enumeration_uses_the_search_deadline(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(enumeration.time, "perf_counter", clock)
    sc = _SlowScorer(20, clock, 1e-3)
    ss = SubsetSearch.__new__(SubsetSearch)  # only the pieces the enumeration route reads
    ss.scorer, ss.s, ss.p, ss.search = sc, 5, 20, "enumeration"
    ss._best, ss._enumerated, ss.certificates = None, None, []
    monkeypatch.setattr(SubsetSearch, "_deadline_at", lambda self: 2.0)
    with pytest.raises(SearchTimeout):
        ss.top_r(5)
    with pytest.raises(SearchTimeout):
        ss._enumerate_all("best support")
    assert sc.scored < 15_504


@pytest.mark.parametrize("search, p, s", [("enumeration", 30, 5), ("auto", 60, 8)])
def test_a_slow_enumeration_call_stops_at_its_time_limit(search, p, s):
    # Logistic, lam = 1: scoring all C(30, 5) = 142,506 supports takes minutes; the call must
    # stop at its limit and release nothing (it once ran to the end). The automatic route
    # (the convex branch and bound since issue 27) certifies p = 30, s = 5 in well under a
    # second, so it gets a problem it cannot finish in 1 s: p = 60, s = 8.
    df, _ = make_classification(400, p, random_state=0, as_frame=True)
    with warnings.catch_warnings(), pytest.raises(SearchTimeout):
        warnings.simplefilter("ignore")
        dp_best_subset("y ~ .", df, eps=1.0, s=s, loss=Logistic(levels=(-1, 1)), ball=Ball(lam=1.0), search=Search(route=search, time_limit=1.0), bounds=(1.0, 1.0), random_state=0)
