"""The route of search="auto" (dpsubset/search/route.py): a function of public settings
that enumerates only where enumeration is the cheaper exact route, and whose choice
never changes the certified answer."""
import inspect
from math import comb

import numpy as np
import pytest

from dpsubset.scores.convex import ConvexLossScorer
from dpsubset.scores.least_squares import LeastSquaresScorer
from dpsubset.search import route
from dpsubset.search.exact import SubsetSearch


def test_route_reads_public_settings_only():
    assert list(inspect.signature(route.choose_route).parameters) == ["loss", "n", "p", "s"]


@pytest.mark.parametrize("n", [5_000, 20_000, 100_000])
def test_convex_loss_at_p20_takes_the_certified_search(n):
    # issue 42: Huber at p = 20, s = 5 enumerated 15,504 Newton solves (186 s at
    # n = 100,000) where the branch and bound certifies in seconds
    for loss in ("huber", "logistic", "hinge"):
        assert route.choose_route(loss, n, 20, 5) == "certified"
        assert route.enumeration_seconds(loss, n, 20, 5) > 10 * route.certified_seconds(loss, n, 20, 5)


def test_small_problems_enumerate_and_large_ones_never():
    assert route.choose_route("huber", 500, 10, 3) == "enumeration"
    assert route.choose_route("squared", 5_000, 15, 5) == "enumeration"
    assert route.choose_route("squared", 5_000, 30, 1) == "enumeration"
    # above the cap, whatever the model says
    assert comb(30, 5) > route.ENUMERATE_BELOW
    assert route.choose_route("squared", 100, 30, 5) == "certified"


def test_enumeration_cost_of_a_convex_score_grows_with_n_and_squared_does_not():
    assert route.seconds_per_support("huber", 100_000, 5) > 50 * route.seconds_per_support(
        "huber", 500, 5)
    assert route.seconds_per_support("squared", 100_000, 5) == route.seconds_per_support(
        "squared", 500, 5)


def _huber(n, p, seed):
    rng = np.random.default_rng(seed)
    X = np.clip(rng.normal(size=(n, p)), -0.5, 0.5)
    y = np.clip(X[:, :3].sum(axis=1) + 0.3 * rng.normal(size=n), -0.5, 0.5)
    return ConvexLossScorer(X, y, 1.0, 1.0, loss="huber")


@pytest.mark.parametrize("seed", [0, 1])
def test_auto_route_certifies_what_enumeration_certifies(seed):
    # p = 12, s = 4 at n = 3000: the model takes the certified search; the top-R list
    # must be enumeration's, support for support
    sc = _huber(3000, 12, seed)
    auto = SubsetSearch(sc, 4)
    assert auto.search == "branch_and_bound"
    got = auto.top_r(10)
    ref = SubsetSearch(_huber(3000, 12, seed), 4, search="enumeration").top_r(10)
    assert [tuple(S) for S in got.supports] == [tuple(S) for S in ref.supports]
    np.testing.assert_allclose(got.scores, ref.scores, atol=1e-9)


def test_least_squares_small_problem_still_enumerates():
    rng = np.random.default_rng(0)
    X = np.clip(rng.normal(size=(300, 10)), -0.5, 0.5)
    y = np.clip(X[:, 0] + rng.normal(size=300), -0.5, 0.5)
    assert SubsetSearch(LeastSquaresScorer(X, y, 1.0, 1.0), 3).search == "enumeration"


def test_convex_branch_and_bound_yields_to_enumeration_past_its_race(monkeypatch):
    # A convex node can cost far more than CONVEX_NODE_COST scores at large n; on the
    # automatic route the branch and bound then yields to enumeration after about the
    # enumeration's time (here: at once), and the answer is enumeration's.
    import dpsubset.search.exact as exact
    monkeypatch.setattr(exact, "MIN_RACE_SECONDS", 0.0)
    monkeypatch.setattr(exact, "RACE_FACTOR", 0.0)
    monkeypatch.setattr(SubsetSearch, "_certify_local_optimum", lambda self, *a: None)
    auto = SubsetSearch(_huber(3000, 12, 3), 4)
    assert auto.search == "branch_and_bound"
    got = auto.top_r(10)
    assert any(c.method == "enumeration" for c in auto.certificates)
    ref = SubsetSearch(_huber(3000, 12, 3), 4, search="enumeration").top_r(10)
    assert [tuple(S) for S in got.supports] == [tuple(S) for S in ref.supports]
    # asked for by name, the branch and bound does not race
    named = SubsetSearch(_huber(3000, 12, 3), 4, search="branch_and_bound")
    named.top_r(10)
    assert all(c.method != "enumeration" for c in named.certificates)
