"""A time-out after the private draw began says nothing about the private test.

The mistakes mechanism with its gap test draws first, then searches what the draw
asks for: a top-R completion when the test fails, a mistake class when it passes. The
name of the problem that timed out would tell which (the message once said "supports
with >= 3 mistakes among the R best"); the message must read the same either way.
"""
import warnings

import numpy as np
import pandas as pd
import pytest

import dpsubset.selection.exact as selection
from dpsubset import dp_best_subset
from dpsubset.search.exact import SubsetSearch
from dpsubset.search.limits import explain_timeout
from dpsubset.runtime.limits import SearchTimeout


def _frame(n=200, p=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, p))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
    df["y"] = np.clip(X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=n), -2, 2)
    return df


def _timeout_message(monkeypatch, problem):
    def fake_gap_checked(mc, top_r_cands, eps_mech, eps0, delta, Delta, rng):
        rng.random()  # the test's noise is drawn first
        raise SearchTimeout(f"time limit reached while solving '{problem}' by branch and bound "
                            "(relative gap 12%)", problem=problem, gap=0.12, seconds=1.0)

    monkeypatch.setattr(selection, "sample_gap_checked", fake_gap_checked)
    with warnings.catch_warnings(), pytest.raises(SearchTimeout) as err:
        warnings.simplefilter("ignore")
        dp_best_subset("y ~ .", _frame(), eps=2.0, s=2, method="mistakes",
                       bounds={"x0": (-1, 1), "x1": (-1, 1), "x2": (-1, 1), "x3": (-1, 1),
                               "x4": (-1, 1), "x5": (-1, 1), "x6": (-1, 1), "x7": (-1, 1),
                               "y": (-2, 2)}, random_state=3)
    return err.value


def test_the_message_does_not_tell_which_search_the_draw_asked_for(monkeypatch):
    a = _timeout_message(monkeypatch, "supports with >= 3 mistakes among the R best")
    b = _timeout_message(monkeypatch, "mistake class 2")
    assert str(a) == str(b)
    for e in (a, b):
        assert "mistake class" not in str(e) and "R best" not in str(e) and "12%" not in str(e)
        assert e.problem is None and e.gap is None and e.seconds is None
        assert "random numbers had been drawn" in str(e)


def test_before_the_draw_the_problem_is_named():
    err = SearchTimeout("time limit reached while solving 'best support'", problem="best support",
                        gap=0.3, seconds=2.0)
    out = explain_timeout(err, time_limit=5.0, random_draws=False, p=8, s=2, method="mistakes")
    assert "best support" in str(out) and out.problem == "best support" and out.gap == 0.3
