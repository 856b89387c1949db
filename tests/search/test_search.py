"""Exact search: outer approximation agrees with enumeration; cuts are valid lower bounds."""
import itertools

import numpy as np
import pytest

from dpsubset.scores.least_squares import LeastSquaresScorer
from dpsubset.search.enumeration import (all_supports, mistakes_by_enumeration, score_all,
                                         top_r_by_enumeration)
from dpsubset.search.exact import SubsetSearch, default_R
from dpsubset.search.outer_approximation import OuterApproximation, SearchTimeout


def _problem(seed, n=60):
    rng = np.random.default_rng(seed)
    p, s = int(rng.integers(8, 16)), int(rng.integers(2, 4))
    X = np.clip(rng.normal(size=(n, p)), -1, 1)
    beta = np.zeros(p)
    beta[:s] = 1
    y = np.clip(X @ beta + rng.normal(size=n) * rng.uniform(0.2, 3), -3, 3)
    sc = LeastSquaresScorer(X, y, rng.uniform(0.3, 3), rng.uniform(0.5, 3), np.ones((n, 1)))
    return sc, s


@pytest.mark.parametrize("seed", range(15))
def test_outer_approximation_matches_enumeration(seed):
    sc, s = _problem(seed)
    R = default_R(sc.p, s)
    oa = SubsetSearch(sc, s, search="outer_approximation")
    t, e = oa.top_r(R), top_r_by_enumeration(sc, s, R)
    np.testing.assert_array_equal(t.supports, e.supports)
    np.testing.assert_allclose(t.scores, e.scores, rtol=1e-12)
    m, me = oa.mistake_classes(), mistakes_by_enumeration(sc, s)
    np.testing.assert_array_equal(m.supports, me.supports)
    np.testing.assert_allclose(m.second_best, me.second_best, rtol=1e-12)
    assert all(c.closed for c in t.certificates + m.certificates)


def test_completion_step_is_exercised_and_exact():
    # Seeds where the paper's check (worst one-swap neighbour <= best with two
    # mistakes) fails: the completion must add supports and still be exact.
    rounds = []
    for seed in range(25):
        sc, s = _problem(seed)
        t = SubsetSearch(sc, s, search="outer_approximation").top_r(default_R(sc.p, s))
        rounds.append(t.completion_rounds)
    assert sum(r > 0 for r in rounds) >= 3


@pytest.mark.parametrize("seed", range(5))
def test_cuts_are_valid_lower_bounds(seed):
    sc, s = _problem(seed)
    S_all, c_all = score_all(sc, s)
    Z = np.zeros((len(S_all), sc.p))
    np.put_along_axis(Z, S_all, 1.0, axis=1)
    rng = np.random.default_rng(seed)
    for i in rng.choice(len(S_all), 10, replace=False):
        v, g = sc.cut(S_all[i])
        lower = v + (Z - Z[i]) @ g
        assert np.all(lower <= c_all + 1e-12), np.max(lower - c_all)
        assert abs(v - c_all[i]) < 1e-14


def test_enumeration_order_and_limit():
    S = all_supports(5, 2)
    assert S.tolist() == [list(c) for c in itertools.combinations(range(5), 2)]
    with pytest.raises(ValueError, match="enumeration limit"):
        all_supports(200, 6)


def test_time_limit_fails_closed():
    sc, s = _problem(0, n=200)
    oa = OuterApproximation(sc, s, time_limit=1e-9)
    with pytest.raises(SearchTimeout, match="nothing was released"):
        oa.solve()


def test_neighbourhood_scores_match_direct_scores():
    sc, s = _problem(3)
    nb, vals = sc.neighbourhood(np.arange(s))
    assert len(nb) == (sc.p - s) * s
    np.testing.assert_allclose(vals, sc.score(nb), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("seed", range(4))
def test_top_r_without_two_mistake_enumeration(seed, monkeypatch):
    # The pure outer-approximation route (used by scorers without the rank-two
    # two-swap search) must give the same exact list.
    monkeypatch.setattr(SubsetSearch, "two_mistake_class", lambda self, keep, other_values=None: None)
    sc, s = _problem(seed)
    R = default_R(sc.p, s)
    t = SubsetSearch(sc, s, search="outer_approximation").top_r(R)
    e = top_r_by_enumeration(sc, s, R)
    np.testing.assert_array_equal(t.supports, e.supports)
    m = SubsetSearch(sc, s, search="outer_approximation").mistake_classes()
    np.testing.assert_array_equal(m.supports, mistakes_by_enumeration(sc, s).supports)


@pytest.mark.parametrize("route", ["outer_approximation", "branch_and_bound"])
@pytest.mark.parametrize("seed", range(6))
def test_lazy_mistakes_draw_equals_exact_draw(seed, route, monkeypatch):
    # Classes left open (bracketed) must give exactly the draws of the exact classes
    # for the same random stream: the lazy sampler is exact, not approximate.
    from dpsubset.mechanisms import sample_mistakes
    from dpsubset.privacy.sensitivity import score_sensitivity
    import dpsubset.search.mistake_classes as mistake_mod
    sc, s = _problem(seed)
    s = 3
    if route == "outer_approximation":
        # The route of scorers without the branch and bound or the subproblem split.
        monkeypatch.setattr(mistake_mod, "supports_class_search", lambda scorer, s: False)
        monkeypatch.setattr(SubsetSearch, "_class_by_subproblems",
                            lambda self, S1, k, problem: None)
    exact = mistakes_by_enumeration(sc, s)
    Delta = score_sensitivity(np.ones(sc.p), 3.0, sc.r, s, [1.0], sc.n)
    n_open = 0
    for eps in (0.5, 5.0, 50.0):
        search = SubsetSearch(sc, s, search="outer_approximation")
        # One outer-approximation round brackets the classes before the draw; the
        # branch and bound is left to decide the draw's targets (bracket_rounds = 0).
        search.bracket_rounds = 1 if route == "outer_approximation" else 0
        lazy = search.mistake_classes()  # classes closed by a draw stay closed
        n_open += len(lazy.open_classes)
        np.testing.assert_allclose(lazy.second_best, exact.second_best, rtol=1e-12)
        for draw in range(40):
            a = sample_mistakes(lazy, eps, Delta, np.random.default_rng(draw))
            b = sample_mistakes(exact, eps, Delta, np.random.default_rng(draw))
            np.testing.assert_array_equal(a, b)
    assert n_open > 0


@pytest.mark.parametrize("seed", range(4))
def test_class_subproblems_give_exact_class_minima(seed):
    # Class k split into one ordinary best-subset problem per base of S_1 must give
    # the class minimum that enumeration gives, for every k.
    sc, s = _problem(seed)
    exact = mistakes_by_enumeration(sc, s)
    search = SubsetSearch(sc, s, search="outer_approximation")
    S1, _ = search.best()
    np.testing.assert_array_equal(S1, exact.supports[0])
    for k in range(2, min(s, sc.p - s) + 1):
        S, v, cert = search._class_by_subproblems(S1, k, f"class {k}")
        assert cert.closed
        np.testing.assert_allclose(v, exact.scores[k], rtol=1e-12)
        assert len(np.setdiff1d(S, S1)) == k
        np.testing.assert_allclose(sc.score(S[None, :])[0], v, rtol=1e-12)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("R", [1, 3, "default"])
def test_top_r_first_shares_the_two_mistake_pass(seed, R, monkeypatch):
    """top_r on a fresh search certifies the best support with the same two-mistake
    pass that gives the list's class-2 members (one two_swap call, not two); the list,
    and the mistake classes asked for afterwards, equal enumeration."""
    sc, s = _problem(seed)
    R = default_R(sc.p, s) if R == "default" else R
    calls = []
    two_swap = type(sc).two_swap

    def counted(self, *args, **kwargs):
        calls.append(args[1] if len(args) > 1 else kwargs["keep"])
        return two_swap(self, *args, **kwargs)

    monkeypatch.setattr(type(sc), "two_swap", counted)
    search = SubsetSearch(sc, s, search="branch_and_bound")  # (auto would enumerate)
    t, e = search.top_r(R), top_r_by_enumeration(sc, s, R)
    np.testing.assert_array_equal(t.supports, e.supports)
    np.testing.assert_allclose(t.scores, e.scores, rtol=1e-12)
    analytic = any("local optimum" in c.method for c in search.certificates)
    if analytic and s >= 2:
        assert calls == [R]  # the certificate's pass served the list too
    m, me = search.mistake_classes(), mistakes_by_enumeration(sc, s)
    np.testing.assert_array_equal(m.supports, me.supports)
    np.testing.assert_allclose(m.scores, me.scores, rtol=1e-12)
    assert all(c.closed for c in t.certificates + m.certificates)
