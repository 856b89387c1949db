"""Branch and bound for the mistake classes (dpsubset.search.class_search) against enumeration."""
import time

import numpy as np
import pytest

from dpsubset.scores.least_squares import LeastSquaresScorer
from dpsubset.search.class_search import class_minimum, supports_class_search
from dpsubset.search.enumeration import all_supports
from dpsubset.search.outer_approximation import SearchTimeout


def _problem(seed, *, gram=True):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 200))
    p = int(rng.integers(7, 13))
    s = int(rng.integers(2, 5))
    X = rng.uniform(-1, 1, (n, p))
    X[:, 1] += 0.7 * X[:, 0]  # correlated columns: the Schur complement is not diagonal
    y = X[:, :s] @ rng.normal(size=s) + 0.5 * rng.normal(size=n)
    # r = 0.3 makes the ball bind for most supports, r = 10 for none.
    r = float([0.3, 1.0, 10.0][seed % 3])
    lam = float([0.1, 1.0, 10.0][(seed // 3) % 3])
    sc = LeastSquaresScorer(X, y, lam, r, np.ones((n, 1)))
    if not gram:
        sc._gram = None  # the route of large p: blocks from X, no stored Gram matrix
    S = all_supports(p, s)
    v = sc.score(S)
    S1 = S[np.argmin(v)]
    mistakes = s - np.isin(S, S1).sum(axis=1)
    return sc, s, S1, v, mistakes


@pytest.mark.parametrize("seed", range(18))
def test_class_minimum_equals_enumeration(seed):
    sc, s, S1, v, mistakes = _problem(seed, gram=seed % 2 == 0)
    assert supports_class_search(sc, s)
    for k in range(1, min(s, sc.p - s) + 1):
        true = v[mistakes == k].min()
        S, val, nodes = class_minimum(sc, S1, k)
        np.testing.assert_allclose(val, true, rtol=1e-10)
        assert len(np.setdiff1d(S, S1)) == k and len(np.unique(S)) == s
        np.testing.assert_allclose(sc.score(S[None, :])[0], val, rtol=1e-12)
        assert nodes >= 1


@pytest.mark.parametrize("seed", range(9))
def test_class_minimum_decides_a_cutoff(seed):
    # Above the minimum: the exact minimum comes back. Below it: None, a proof that
    # every member scores at least the cut-off.
    sc, s, S1, v, mistakes = _problem(seed)
    for k in range(1, min(s, sc.p - s) + 1):
        true = v[mistakes == k].min()
        S, val, _ = class_minimum(sc, S1, k, true + 1e-7)
        np.testing.assert_allclose(val, true, rtol=1e-10)
        S, val, _ = class_minimum(sc, S1, k, true - 1e-7)
        assert S is None and val == true - 1e-7


def test_class_minimum_keeps_a_better_incumbent_and_finds_below_a_worse_one():
    sc, s, S1, v, mistakes = _problem(4)
    k = 2
    members = np.flatnonzero(mistakes == k)
    worst = members[np.argmax(v[members])]
    S, val, _ = class_minimum(sc, S1, k, incumbent=(all_supports(sc.p, s)[worst], v[worst]))
    np.testing.assert_allclose(val, v[members].min(), rtol=1e-10)


def test_class_minimum_fails_closed_at_the_deadline():
    sc, s, S1, *_ = _problem(1)
    with pytest.raises(SearchTimeout, match="time limit"):
        class_minimum(sc, S1, 2, deadline=time.perf_counter() - 1.0)


def test_class_minimum_rejects_an_empty_class():
    sc, s, S1, *_ = _problem(2)
    with pytest.raises(ValueError, match="empty"):
        class_minimum(sc, S1, s + 1)


def _greedy_trap(seed):
    # y = x0 + x1, and x2 = (x0 + x1)/2 + noise is the best single column: adding the
    # best column first (greedy) misses the best pair {x0, x1}. The centre S1 = {3, 4, 5}
    # holds junk columns, so class 2 is "two of x0, x1, x2 plus one junk column".
    rng = np.random.default_rng(seed)
    n = 200
    X = rng.normal(size=(n, 6))
    X[:, 2] = 0.5 * (X[:, 0] + X[:, 1]) + 0.3 * rng.normal(size=n)
    y = X[:, 0] + X[:, 1] + 0.1 * rng.normal(size=n)
    sc = LeastSquaresScorer(X, y, 1.0, 100.0, np.ones((n, 1)))
    S1 = np.array([3, 4, 5])
    S = all_supports(6, 3)
    v = sc.score(S)
    mistakes = 3 - np.isin(S, S1).sum(axis=1)
    return sc, S1, v, mistakes


def test_class_minimum_is_not_greedy():
    for seed in range(5):
        sc, S1, v, mistakes = _greedy_trap(seed)
        for k in (2, 3):
            _, val, _ = class_minimum(sc, S1, k)
            np.testing.assert_allclose(val, v[mistakes == k].min(), rtol=1e-10)


def test_broken_pruning_bound_is_caught(monkeypatch):
    # A known-bad variant: pretending the Schur complement is a million times stiffer
    # than it is (a bound far too tight) prunes the branch of the best pair, which
    # only pays off at its second column; the comparison with enumeration notices.
    import dpsubset.search.class_search as cs
    real = cs._min_eigenvalue_bound
    monkeypatch.setattr(cs, "_min_eigenvalue_bound", lambda M, lam_n: 1e6 * real(M, lam_n))
    wrong = 0
    for seed in range(5):
        sc, S1, v, mistakes = _greedy_trap(seed)
        _, val, _ = class_minimum(sc, S1, 2)
        wrong += not np.isclose(val, v[mistakes == 2].min(), rtol=1e-10)
    assert wrong > 0


def test_class_minimum_without_always_in_columns():
    # No intercept: the class k = s has an empty base (nothing always in).
    rng = np.random.default_rng(0)
    n, p, s = 50, 8, 3
    X = rng.normal(size=(n, p))
    y = X[:, 0] + rng.normal(size=n)
    sc = LeastSquaresScorer(X, y, 1.0, 5.0, None)
    S = all_supports(p, s)
    v = sc.score(S)
    S1 = S[np.argmin(v)]
    mistakes = s - np.isin(S, S1).sum(axis=1)
    for k in range(1, s + 1):
        np.testing.assert_allclose(class_minimum(sc, S1, k)[1], v[mistakes == k].min(), rtol=1e-10)
