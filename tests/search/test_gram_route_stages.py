"""Every stage of the exact search on the sufficient-statistics (Gram) route.

Tall least-squares data (n >= 5000 rows, see dpsubset/suffstats.py) reach the search
as a scorer that holds only X'X, X'y, y'y and n: no X. A stage that reads X, or sizes
its working memory from it, crashes there (it once did, in the two-swap). Each test
below runs one stage on a Gram-only scorer, checks that no X was needed (the scorer
has none) and that the answer equals enumeration's on the same statistics: one-swap,
two-swap, class bounds, branch and bound, the class search, the mistake classes, the
enumeration fallback, and the whole call through dp_best_subset.
"""
import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

import dpsubset.api as api_mod
from dpsubset import Bounds, dp_best_subset
from dpsubset.scores.least_squares import LeastSquaresScorer
from dpsubset.search import branch_bound as bb
from dpsubset.search.class_search import class_minimum
from dpsubset.search.enumeration import (all_supports, mistakes_by_enumeration,
                                         top_r_by_enumeration)
from dpsubset.search.exact import SubsetSearch
from dpsubset.design.suffstats import TALL_MIN_ROWS, gram_route


def _gram_scorer(seed, *, n=None, p=11, s=3, r=0.5, lam=1.0, kf=1, rho=0.6):
    """A Gram-only scorer (and s): correlated columns, an intercept when kf = 1."""
    rng = np.random.default_rng(seed)
    n = n or int(rng.integers(40, 200))
    Z = rng.normal(size=(n, p))
    for j in range(1, p):
        Z[:, j] = rho * Z[:, j - 1] + np.sqrt(1 - rho ** 2) * Z[:, j]
    X = np.clip(Z, -1, 1)
    y = np.clip(X[:, :s] @ rng.normal(size=s) + 0.4 * rng.normal(size=n), -2, 2)
    F = np.ones((n, kf))
    A = np.hstack([F, X])
    sc = LeastSquaresScorer.from_gram(A.T @ A, A.T @ y, float(y @ y), n, lam, r, k_forced=kf)
    assert sc.gram_only and sc.X is None and sc.y is None
    return sc, s


def _class_members(S1, p, k):
    out = np.setdiff1d(np.arange(p), S1)
    return np.array([sorted(set(S1) - set(D) | set(A)) for D in itertools.combinations(S1, k)
                     for A in itertools.combinations(out, k)])


@pytest.mark.parametrize("seed", range(6))
def test_one_and_two_swap_on_the_gram_route(seed):
    sc, s = _gram_scorer(seed, s=4, r=[0.3, 10.0][seed % 2])
    S1 = np.arange(s)
    nb, v = sc.neighbourhood(S1)
    np.testing.assert_allclose(v, sc.score(nb), rtol=1e-10, atol=1e-13)
    # The two-swap with its default working memory (sized from n p: there is no X).
    sups, vals, _ = sc.two_swap(S1, keep=5)
    members = _class_members(S1, sc.p, 2)
    true = np.sort(sc.score(members))[:5]
    np.testing.assert_allclose(vals, true, rtol=1e-10, atol=1e-13)
    assert sc.data_size == sc.n * sc.p


@pytest.mark.parametrize("seed", range(6))
def test_class_bounds_on_the_gram_route(seed):
    sc, s = _gram_scorer(seed, s=4, r=[0.3, 1.1, 10.0][seed % 3])
    S1 = np.array([0, 2, 5, 7])
    ks = range(1, min(s, sc.p - s) + 1)
    lb = sc.class_lower_bounds(S1, ks)
    for k in ks:
        assert lb[k] <= sc.score(_class_members(S1, sc.p, k)).min() + 1e-12


@pytest.mark.parametrize("seed", range(4))
def test_branch_and_bound_and_class_search_on_the_gram_route(seed):
    sc, s = _gram_scorer(seed, p=12, s=3, r=[0.3, 10.0][seed % 2])
    res = bb.branch_and_bound(sc, s, keep=6)
    enum = top_r_by_enumeration(sc, s, 6)
    np.testing.assert_array_equal(res.supports, enum.supports)
    S = all_supports(sc.p, s)
    v = sc.score(S)
    S1 = S[np.argmin(v)]
    mistakes = s - np.isin(S, S1).sum(axis=1)
    for k in range(1, s + 1):
        _, val, _ = class_minimum(sc, S1, k)
        np.testing.assert_allclose(val, v[mistakes == k].min(), rtol=1e-10)


@pytest.mark.parametrize("search", ["auto", "branch_and_bound", "outer_approximation"])
@pytest.mark.parametrize("seed", range(3))
def test_subset_search_top_r_and_mistakes_on_the_gram_route(seed, search):
    # p = 30, s = 4: the analytic local-optimum certificate, the two-swap pass and the
    # class bounds all run (C(30, 4) = 27,405 supports: enumeration checks the answer).
    # The outer approximation (cuts from the Gram matrix) on a smaller problem: its
    # master problems are slow where the ball is slack.
    small = search == "outer_approximation"
    sc, s = _gram_scorer(seed, n=300, p=16 if small else 30, s=3 if small else 4,
                         r=[0.4, 5.0][seed % 2])
    R = 12
    t = SubsetSearch(sc, s, search=search).top_r(R)
    np.testing.assert_array_equal(t.supports, top_r_by_enumeration(sc, s, R).supports)
    assert all(c.closed for c in t.certificates)
    m = SubsetSearch(sc, s, search=search).mistake_classes()
    for k in list(m.open_classes):
        m.close(k)
    me = mistakes_by_enumeration(sc, s)
    np.testing.assert_allclose(m.scores, me.scores, rtol=1e-10)


def test_enumeration_fallback_on_the_gram_route(monkeypatch):
    sc, s = _gram_scorer(3, p=12, s=3, r=0.3)
    monkeypatch.setattr(SubsetSearch, "_certify_local_optimum", lambda self, *a: None)
    monkeypatch.setattr(SubsetSearch, "_node_budget", lambda self: 0)
    orig = SubsetSearch._branch_and_bound
    monkeypatch.setattr(SubsetSearch, "_branch_and_bound",
                        lambda self, problem, **kw: orig(self, problem, leaf_max=1, **kw))
    t = SubsetSearch(sc, s, search="branch_and_bound").top_r(7)
    np.testing.assert_array_equal(t.supports, top_r_by_enumeration(sc, s, 7).supports)
    assert t.certificates[-1].method == "enumeration"


@pytest.mark.parametrize("method", ["top_r", "mistakes"])
def test_tall_call_releases_on_the_gram_route(method, monkeypatch):
    # The smallest tall data set ("y ~ .", intercept, 40 columns, s = 5): it crashed in
    # the two-swap before the search sized its memory from n p.
    rng = np.random.default_rng(0)
    n, p = TALL_MIN_ROWS, 40
    X = rng.normal(size=(n, p))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
    df["y"] = X[:, :5].sum(axis=1) + rng.normal(size=n)
    routes = []

    def spy(n, p, k, **opts):
        routes.append(gram_route(n, p, k, **opts))
        return routes[-1]

    monkeypatch.setattr(api_mod, "gram_route", spy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = dp_best_subset("y ~ .", df, eps=2.0, s=5, method=method,
                             bounds=Bounds(default=3.0, y=3.0), random_state=1)
    assert routes == [True]
    assert len(res.support) == 5
