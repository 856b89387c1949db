"""Messages of the exact search show no scores; every call has a time limit.

The privacy guarantee covers the released support and coefficients only. A score, a
bound or an objective value printed in an exception or a progress bar is a value of
the private data outside it. These tests run a search that times out on a small
problem, with ``verbose=True``, and check that none of the scores of the candidate
supports (all of them, by enumeration) appears in the exception text or on stderr, at
any usual precision. On the code before this change the timeout said "lower bound ...,
upper bound <the best score>" and the outer-approximation bar printed ``upper=<it>``.

They also check the default time limit (for the whole call), the one deadline shared by
every solve of a search, and what the timeout says about random draws.
"""
import math
import time
import warnings
from math import comb

import numpy as np
import pandas as pd
import pytest

import dpsubset.selection.exact as selection
from dpsubset import SearchTimeout, dp_best_subset, Ball, Search
from dpsubset.design.build import build_design
from dpsubset.scores.least_squares import LeastSquaresScorer
from dpsubset.search.enumeration import top_r_by_enumeration
from dpsubset.search.exact import SubsetSearch
from dpsubset.search.limits import format_gap, relative_gap
from dpsubset.runtime.limits import DEFAULT_TIME_LIMIT, resolve_time_limit
from dpsubset.search.outer_approximation import OuterApproximation

FORMULA, BOUNDS, S, R_BALL, LAM = "y ~ 0 + .", (0.5, 0.5), 3, 0.3, 1.0


def _data(seed=0, n=200, p=12):
    """Columns sharing one common factor (correlation about 0.7), a small radius: the
    regime where the search has to work."""
    rng = np.random.default_rng(seed)
    f = rng.normal(size=(n, 1))
    X = 0.25 * (np.sqrt(0.7) * f + np.sqrt(0.3) * rng.normal(size=(n, p)))
    y = X[:, :S].sum(axis=1) + 0.1 * rng.normal(size=n)
    return pd.DataFrame(X, columns=[f"x{j}" for j in range(p)]).assign(y=y)


def _all_scores(df, r=R_BALL):
    """The score of every support, as the selection computes them."""
    d = build_design(FORMULA, df, BOUNDS, None)
    sc = LeastSquaresScorer(d.X, d.y, LAM, r, d.forced)
    p = d.X.shape[1]
    return top_r_by_enumeration(sc, S, comb(p, S)).scores


def _renderings(v):
    """A score as a message might print it."""
    out = {repr(float(v)), str(float(v))}
    out |= {f"{v:.{k}g}" for k in range(4, 17)}
    out |= {f"{v:.{k}f}" for k in range(4, 11)}
    out |= {f"{v:.{k}e}" for k in range(3, 10)}
    return out


def _assert_no_scores(text, scores):
    found = sorted({r for v in scores for r in _renderings(v) if r in text})
    assert not found, f"scores of the data printed: {found[:5]} in {text[:400]!r}"


@pytest.fixture
def force_outer_approximation(monkeypatch):
    # No analytic certificate: the best support goes to the outer approximation.
    monkeypatch.setattr(SubsetSearch, "_certify_local_optimum", lambda self, *a: None)


@pytest.mark.parametrize("method", ["top_r", "mistakes"])
def test_timeout_message_and_progress_show_no_scores(method, capsys, force_outer_approximation):
    df = _data()
    scores = _all_scores(df)
    with pytest.raises(SearchTimeout) as info:
        dp_best_subset(FORMULA, df, eps=1.0, s=S, method=method, bounds=BOUNDS, ball=Ball(r=R_BALL, lam=LAM), search=Search(route="outer_approximation", time_limit=1e-6), verbose=True,
                       random_state=0)
    text = str(info.value)
    err = capsys.readouterr().err
    _assert_no_scores(text, scores)
    _assert_no_scores(err, scores)
    assert "Nothing was released" in text
    assert "No random number had been drawn" in text  # the search comes before any draw
    # the public settings that make it easier, with the call's values
    for words in ("time_limit", "smaller s (now 3)", "larger r (now 0.3)", "lam (now 1)",
                  "search='enumeration'", "fewer candidate columns", "time-limits.md"):
        assert words in text


def test_outer_approximation_rounds_show_the_gap_not_the_bounds(capsys, monkeypatch,
                                                                 force_outer_approximation):
    """The bar of the outer approximation shows the relative gap as it closes; the
    timeout (here after three master solves) shows it too; neither shows a bound."""
    df = _data(seed=1)
    scores = _all_scores(df)
    calls = []
    solve_master = OuterApproximation._solve_master

    def stop_after_three(self, *args, **kwargs):
        calls.append(1)
        return None if len(calls) > 3 else solve_master(self, *args, **kwargs)

    monkeypatch.setattr(OuterApproximation, "_solve_master", stop_after_three)
    with pytest.raises(SearchTimeout) as info:
        dp_best_subset(FORMULA, df, eps=1.0, s=S, bounds=BOUNDS, ball=Ball(r=R_BALL, lam=LAM),
                       search="outer_approximation", verbose=True, random_state=0)
    err = capsys.readouterr().err
    text = str(info.value)
    _assert_no_scores(text, scores)
    _assert_no_scores(err, scores)
    assert len(calls) == 4
    assert "gap=" in err and "relative gap" in text


def test_timeout_after_the_draw_began_says_so(monkeypatch):
    """mistakes with the gap test: when the test fails, the top-R search runs after the
    test's noise was drawn. A timeout there says the draw had begun."""
    import dpsubset.mechanisms.gap_check as gap_check

    def failing_test(cands, Delta, eps0, delta, rng):
        rng.laplace()  # the test's noise is drawn; the test fails
        return False

    def slow_top_r(self, R):
        raise SearchTimeout("top-R completion: time limit reached", problem="top-R")

    monkeypatch.setattr(gap_check, "ptr_test", failing_test)
    monkeypatch.setattr(SubsetSearch, "top_r", slow_top_r)
    with pytest.raises(SearchTimeout, match="random numbers had been drawn") as info:
        dp_best_subset(FORMULA, _data(), eps=1.0, s=S, method="mistakes", bounds=BOUNDS,
                       ball=Ball(r=R_BALL, lam=LAM), random_state=0)
    assert "Nothing was released" in str(info.value)
    assert "No random number" not in str(info.value)


def test_default_time_limit_reaches_the_search(monkeypatch):
    seen = []
    init = SubsetSearch.__init__

    def spy(self, *args, **kwargs):
        init(self, *args, **kwargs)
        seen.append(kwargs.get("time_limit"))

    monkeypatch.setattr(selection.SubsetSearch, "__init__", spy)
    df = _data()
    dp_best_subset(FORMULA, df, eps=1.0, s=S, bounds=BOUNDS, random_state=0)
    assert seen and 0 < seen[-1] <= DEFAULT_TIME_LIMIT  # what is left of the whole call
    dp_best_subset(FORMULA, df, eps=1.0, s=S, bounds=BOUNDS, random_state=0,
                   search=Search(time_limit=math.inf))
    assert seen[-1] is None  # no limit
    for bad in (0, -1.0, float("nan"), "60", True):
        with pytest.raises(ValueError, match="time_limit"):
            dp_best_subset(FORMULA, df, eps=1.0, s=S, bounds=BOUNDS, search=Search(time_limit=bad))


def test_resolve_time_limit():
    assert resolve_time_limit(None) == DEFAULT_TIME_LIMIT
    assert resolve_time_limit(math.inf) is None
    assert resolve_time_limit(30) == 30.0


def test_one_deadline_for_every_solve_of_a_search():
    df = _data()
    d = build_design(FORMULA, df, BOUNDS, None)
    sc = LeastSquaresScorer(d.X, d.y, LAM, R_BALL, d.forced)
    search = SubsetSearch(sc, S, search="outer_approximation", time_limit=5.0)
    first = search.time_limit
    time.sleep(0.05)
    assert search.time_limit < first <= 5.0  # the time left, not a fresh 5 s per solve
    assert SubsetSearch(sc, S, time_limit=None).time_limit is None
    expired = SubsetSearch(sc, S, search="outer_approximation", time_limit=1e-9)
    with pytest.raises(SearchTimeout, match="nothing was released"):
        expired._master("best support").solve()


def test_relative_gap_is_scale_free():
    # The closing rule's gap is absolute below 1: with lower = 0 it would be the score.
    assert relative_gap(0.0, 0.0499) == 1.0
    assert relative_gap(0.04, 0.05) == pytest.approx(0.2)
    assert relative_gap(-math.inf, 0.05) == math.inf
    assert format_gap(1.0) == "100%" and format_gap(0.032) == "3.2%"
    assert format_gap(None) == "n/a" and format_gap(math.inf) == "none proved"


def test_outer_approximation_prints_nothing_to_the_terminal(capfd, force_outer_approximation):
    """HiGHS writes from C, below Python's sys.stdout: capfd sees the file descriptors.
    A silent call (verbose=False) must leave both empty (highspy's wrapper class once
    printed the solver's banner for every master problem)."""
    df = _data(seed=2)
    res = dp_best_subset(FORMULA, df, eps=1.0, s=S, bounds=BOUNDS, ball=Ball(r=R_BALL, lam=LAM),
                         search="outer_approximation", random_state=0)
    out, err = capfd.readouterr()
    assert len(res.support) == S
    assert out == "" and err == "", (out[:200], err[:200])


@pytest.mark.parametrize("method", ["top_r", "mistakes"])
def test_memory_stop_shows_no_scores_and_no_counts(method, capsys, force_outer_approximation):
    """A stop on memory_limit (here at the branch and bound's first nodes) is reported
    like a time-out: the problem, the limit and the settings that help; no score, no
    bound, no gap and no count of nodes (counts are functions of the data)."""
    from dpsubset import SearchMemoryLimit
    # Weak signal, the ball inactive (r = 10): the relaxation is weak, the branch and
    # bound needs many nodes.
    rng = np.random.default_rng(3)
    X = rng.uniform(-0.5, 0.5, (120, 30))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(30)]).assign(
        y=np.clip(0.2 * X[:, 0] + 0.3 * rng.normal(size=120), -0.5, 0.5))
    scores = _all_scores(df, r=10.0)
    with pytest.raises(SearchMemoryLimit) as info, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (LowUtilityWarning: r = 10 is not for a release)
        dp_best_subset(FORMULA, df, eps=1.0, s=S, method=method, bounds=BOUNDS, ball=Ball(r=10.0, lam=LAM), search=Search(route="branch_and_bound", memory_limit=2000), verbose=True,
                       random_state=0)
    text = str(info.value)
    err = capsys.readouterr().err
    _assert_no_scores(text, scores)
    _assert_no_scores(err, scores)
    assert "memory_limit = 1.95 kB" in text and "Nothing was released" in text
    assert "node" not in text and "gap" not in text
    assert isinstance(info.value, SearchTimeout) and info.value.gap is None
