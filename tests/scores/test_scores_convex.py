"""Certified scores for the Huber, logistic and hinge losses: losses, scores against an
independent solver, certificates, cuts, sensitivity, and the exact search on top."""
import itertools
import time
import math

import numpy as np
import pytest
from scipy.optimize import minimize

from dpsubset.losses import (HingeLoss, HuberLoss, LogisticLoss, SquaredLoss, make_loss)
from dpsubset.scores.least_squares import LeastSquaresScorer
from dpsubset.privacy.sensitivity import score_sensitivity
from dpsubset.scores.convex import (SCORE_TOL, ConvexLossScorer, ScoreAccuracyError,
                                    convex_sensitivity)
from dpsubset.search.enumeration import score_all
from dpsubset.search.exact import SubsetSearch

LOSSES = {"squared": SquaredLoss(), "huber": HuberLoss(0.4), "logistic": LogisticLoss(),
          "hinge": HingeLoss(0.5)}


def _data(loss, n=200, p=10, seed=0, b=1.0):
    rng = np.random.default_rng(seed)
    X = np.clip(rng.normal(size=(n, p)), -b, b)
    z = 1.5 * X[:, 0] - 1.2 * X[:, 3] + 0.5 * rng.normal(size=n)
    if LOSSES[loss].classification:
        y = np.where(rng.uniform(size=n) < 1 / (1 + np.exp(-2 * z)), 1.0, -1.0)
    else:  # heavy tails: the Huber loss has outliers to shrug off
        y = np.clip(z + rng.standard_t(2, size=n), -2.0, 2.0)
    return X, y


def _reference(loss, A, y, lam, r):
    """Independent solver: SLSQP with the ball as a constraint."""
    n = len(y)
    f = lambda b: loss.value(A @ b, y).mean() + lam / (2 * n) * b @ b  # noqa: E731
    g = lambda b: A.T @ loss.derivative(A @ b, y) / n + lam / n * b  # noqa: E731
    res = minimize(f, np.zeros(A.shape[1]), jac=g, method="SLSQP",
                   constraints=[{"type": "ineq", "fun": lambda b: r * r - b @ b,
                                 "jac": lambda b: -2 * b}],
                   options={"ftol": 1e-15, "maxiter": 1000})
    return res.fun, res.x


# ------------------------------------------------------------------------- losses

@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_derivatives_conjugate_and_bounds(name):
    loss = LOSSES[name]
    rng = np.random.default_rng(1)
    y = rng.choice([-1.0, 1.0], 400) if loss.classification else rng.uniform(-1, 1, 400)
    eta = rng.uniform(-3, 3, 400)
    h = 1e-6
    fd1 = (loss.value(eta + h, y) - loss.value(eta - h, y)) / (2 * h)
    fd2 = (loss.derivative(eta + h, y) - loss.derivative(eta - h, y)) / (2 * h)
    np.testing.assert_allclose(loss.derivative(eta, y), fd1, atol=1e-7)
    np.testing.assert_allclose(loss.second_derivative(eta, y), fd2, atol=1e-6)
    v, d1, d2 = loss.all_derivatives(eta, y)
    np.testing.assert_allclose(v, loss.value(eta, y), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(d1, loss.derivative(eta, y), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(d2, loss.second_derivative(eta, y), rtol=1e-12, atol=1e-15)
    # Fenchel's equality at alpha = l'(eta), which the certificate relies on ...
    np.testing.assert_allclose(loss.conjugate(d1, y), d1 * eta - v, atol=1e-12)
    # ... and Fenchel-Young for other alpha (the conjugate is a true sup).
    alpha = d1 * rng.uniform(0.2, 1.0, 400)
    grid = np.linspace(-40, 40, 40001)
    for i in range(0, 400, 40):
        sup = np.max(alpha[i] * grid - loss.value(grid, y[i]))
        assert loss.conjugate(alpha[i], y[i]) == pytest.approx(sup, abs=1e-6)
    # row_min / row_max are the extremes of one row's loss under the bounds.
    b_y, a = 1.0, 1.7
    ys = np.array([-1.0, 1.0]) if loss.classification else np.linspace(-b_y, b_y, 201)
    etas = np.linspace(-a, a, 2001)
    vals = loss.value(etas[:, None], ys[None, :])
    assert loss.row_max(b_y, a) == pytest.approx(vals.max(), rel=1e-12)
    assert loss.row_min(b_y, a) == pytest.approx(vals.min(), abs=1e-12)
    assert loss.row_range(b_y, a) == pytest.approx(vals.max() - vals.min(), rel=1e-9)


def test_loss_definitions_match_the_refit():
    """Selection and refit use the same loss objects (dpsubset/refit/objective.py), the
    refit at refit_scale times the scores' scale."""
    from dpsubset.refit.objective import refit_loss as _make_loss
    rng = np.random.default_rng(2)
    eta, yc, yr = rng.uniform(-3, 3, 50), rng.choice([-1.0, 1.0], 50), rng.uniform(-1, 1, 50)
    pairs = [(HuberLoss(0.3), _make_loss("huber", b_y=1.0, huber_h=0.3), yr, 0.5),
             (LogisticLoss(), _make_loss("logistic"), yc, 1.0),
             (HingeLoss(0.7), _make_loss("hinge", hinge_h=0.7), yc, 1.0),
             (SquaredLoss(), _make_loss("squared"), yr, 0.5)]
    for ours, theirs, y, factor in pairs:
        np.testing.assert_allclose(ours.value(eta, y), factor * theirs.phi(eta, y), rtol=1e-12)
        kw = ours.refit_options()
        assert all(v == ours.h for v in kw.values())
    assert make_loss("huber", b_y=0.8).h == pytest.approx(0.4)  # refit's default fraction
    assert make_loss("hinge").h == 0.5
    with pytest.raises(ValueError, match="huber_h"):
        HuberLoss(0.0)
    with pytest.raises(ValueError, match="loss must be"):
        make_loss("quantile")


def test_hinge_smoothing_is_close_to_the_hinge():
    loss = HingeLoss(0.5)
    m = np.linspace(-5, 5, 1001)
    gap = loss.value(m, 1.0) - np.maximum(0.0, 1 - m)
    assert np.all(gap >= 0) and gap.max() == pytest.approx(0.25 * math.log(2), rel=1e-9)


# ------------------------------------------------------------------------- scores

@pytest.mark.parametrize("name", sorted(LOSSES))
@pytest.mark.parametrize("r,active", [(0.4, True), (50.0, False)])
def test_scores_match_scipy(name, r, active):
    X, y = _data(name)
    F = np.ones((len(y), 1))
    sc = ConvexLossScorer(X, y, lam=2.0, r=r, forced=F, loss=LOSSES[name])
    rng = np.random.default_rng(3)
    S = np.sort(np.array([rng.choice(10, 3, replace=False) for _ in range(6)]), axis=1)
    S[0] = [0, 3, 5]
    vals, betas = sc.fit(S)
    assert 0 < sc.max_score_error <= SCORE_TOL
    for v, b, row in zip(vals, betas, S):
        ref, bref = _reference(sc.loss_fn, np.hstack([F, X[:, row]]), y, 2.0, r)
        # ours is a certified upper bound within max_score_error; SLSQP is not certified
        assert ref - 1e-12 <= v + 1e-15 and v - ref <= sc.max_score_error + 1e-12
        np.testing.assert_allclose(b, bref, atol=1e-5)
    norms = np.linalg.norm(betas, axis=1)
    assert np.all(norms <= r * (1 + 1e-12))
    if active:
        assert np.any(norms > r * (1 - 1e-9))
    else:
        assert np.all(norms < r)


def test_squared_loss_reproduces_the_least_squares_scorer():
    X, y = _data("squared")
    F = np.ones((len(y), 1))
    a = ConvexLossScorer(X, y, 2.0, 0.5, F, loss="squared")
    b = LeastSquaresScorer(X, y, 2.0, 0.5, F)
    S = np.array(list(itertools.combinations(range(10), 3)))
    np.testing.assert_allclose(a.score(S), b.score(S), atol=1e-13)
    for row in S[::17]:
        va, ga = a.cut(row)
        vb, gb = b.cut(row)
        assert vb - 1e-12 <= va <= vb  # ours is the certified lower bound
        np.testing.assert_allclose(ga, gb, atol=1e-12)
    assert convex_sensitivity("squared", [0.5] * 10, 0.7, 1.1, 3, [1.0], 50) == \
        pytest.approx(score_sensitivity([0.5] * 10, 0.7, 1.1, 3, [1.0], 50), rel=1e-14)


@pytest.mark.parametrize("name", ["huber", "logistic", "hinge"])
def test_neighbourhood_matches_direct_scores(name):
    X, y = _data(name, p=12)
    sc = ConvexLossScorer(X, y, 3.0, 0.8, np.ones((len(y), 1)), loss=LOSSES[name])
    nb, vals = sc.neighbourhood(np.array([5, 0, 3]))
    assert nb.shape == (9 * 3, 3) and np.all(np.diff(nb, axis=1) > 0)
    fresh = ConvexLossScorer(X, y, 3.0, 0.8, np.ones((len(y), 1)), loss=LOSSES[name])
    np.testing.assert_allclose(vals, fresh.score(nb), atol=2e-13)
    assert sc.max_score_error <= SCORE_TOL


def test_uncertifiable_accuracy_fails_closed():
    X, y = _data("logistic")
    sc = ConvexLossScorer(X, y, 2.0, 1.0, None, loss="logistic", score_tol=0.0)
    with pytest.raises(ScoreAccuracyError, match="nothing was released"):
        sc.score(np.array([[0, 1]]))
    with pytest.raises(ValueError, match="y in"):
        ConvexLossScorer(X, np.linspace(-1, 1, len(y)), 2.0, 1.0, loss="hinge")


# ------------------------------------------------------------------------- cuts

@pytest.mark.parametrize("name", sorted(LOSSES))
@pytest.mark.parametrize("r", [0.3, 5.0])
def test_cuts_are_valid_lower_bounds(name, r):
    """c(z') >= cut(S) at random binary z' (exact scores of z' computed), and the cut is
    tight at z = 1_S up to the certified accuracy."""
    X, y = _data(name, n=150, p=12, seed=4)
    sc = ConvexLossScorer(X, y, 1.5, r, np.ones((len(y), 1)), loss=LOSSES[name])
    rng = np.random.default_rng(5)
    s = 4
    cuts = []
    for _ in range(12):
        S = np.sort(rng.choice(12, s, replace=False))
        value, grad = sc.cut(S)
        cS = sc.score(S[None, :])[0]
        assert cS - 2 * sc.max_score_error <= value <= cS + sc.max_score_error
        cuts.append((S, value, grad))
    Z = np.sort(np.array([rng.choice(12, k, replace=False) for k in (s,) * 60]), axis=1)
    cz = sc.score(Z)
    lower = cz - sc.max_score_error  # certified lower bound on the exact c(z')
    for S, value, grad in cuts:
        zS = np.zeros(12)
        zS[S] = 1.0
        for row, lo in zip(Z, lower):
            z = np.zeros(12)
            z[row] = 1.0
            assert value + grad @ (z - zS) <= lo + 1e-13
    # Fractional points: the cut is a lower bound on the convex relaxation as well
    # (checked against the ridge-perspective objective solved by SLSQP).
    S, value, grad = cuts[0]
    zS = np.zeros(12)
    zS[S] = 1.0
    for _ in range(3):
        z = np.clip(zS + rng.uniform(-0.6, 0.6, 12), 0.05, 1.0)
        n = len(y)
        A = np.hstack([np.ones((n, 1)), X])
        w = np.concatenate([[1.0], 1.0 / z])
        f = lambda b: sc.loss_fn.value(A @ b, y).mean() + 1.5 / (2 * n) * np.sum(w * b * b)  # noqa: E731
        res = minimize(f, np.zeros(13), method="SLSQP",
                       constraints=[{"type": "ineq", "fun": lambda b: r * r - b @ b}],
                       options={"ftol": 1e-14, "maxiter": 500})
        assert value + grad @ (z - zS) <= res.fun + 1e-8


# ------------------------------------------------------------------------- sensitivity

@pytest.mark.parametrize("name", sorted(LOSSES))
def test_sensitivity_bounds_one_row_change(name):
    rng = np.random.default_rng(6)
    n, p, s, bx, r = 30, 6, 2, 0.8, 1.3
    loss = LOSSES[name]
    X, y = _data(name, n=n, p=p, seed=7, b=bx)
    b_y = 1.0 if loss.classification else 2.0
    Delta = convex_sensitivity(loss, [bx] * p, b_y, r, s, [1.0], n)
    F = np.ones((n, 1))
    base = ConvexLossScorer(X, y, 1.0, r, F, loss=loss)
    S = np.array(list(itertools.combinations(range(p), s)))
    c0 = base.score(S)
    worst = 0.0
    for t in range(30):
        X2, y2 = X.copy(), y.copy()
        i = rng.integers(n)
        corner = t % 2 == 0
        X2[i] = bx * rng.choice([-1.0, 1.0], p) if corner else rng.uniform(-bx, bx, p)
        if loss.classification:
            y2[i] = rng.choice([-1.0, 1.0])
        else:
            y2[i] = b_y * rng.choice([-1.0, 1.0]) if corner else rng.uniform(-b_y, b_y)
        c1 = ConvexLossScorer(X2, y2, 1.0, r, F, loss=loss).score(S)
        worst = max(worst, np.max(np.abs(c1 - c0)))
    assert worst <= Delta
    assert worst > 0.05 * Delta  # the bound is not vacuous


# ------------------------------------------------------------------------- search

@pytest.mark.parametrize("name", ["huber", "logistic", "hinge"])
def test_outer_approximation_matches_enumeration(name):
    X, y = _data(name, n=120, p=14, seed=8)
    sc = ConvexLossScorer(X, y, 4.0, 1.0, np.ones((len(y), 1)), loss=LOSSES[name])
    s = 3
    S_all, c_all = score_all(sc, s)
    oa = SubsetSearch(sc, s, search="outer_approximation")
    en = SubsetSearch(sc, s, search="enumeration")
    S1, c1 = oa.best()
    assert all(c.closed for c in oa.certificates)
    j = int(np.argmin(c_all))
    np.testing.assert_array_equal(S1, S_all[j])
    assert abs(c1 - c_all[j]) <= 2 * sc.max_score_error + 1e-15
    R = 2 + (14 - s) * s
    t_oa, t_en = oa.top_r(R), en.top_r(R)
    assert all(c.closed for c in t_oa.certificates)
    np.testing.assert_array_equal(t_oa.supports, t_en.supports)
    np.testing.assert_allclose(t_oa.scores, t_en.scores, atol=2 * sc.max_score_error + 1e-15)
    m_oa, m_en = oa.mistake_classes(), en.mistake_classes()
    np.testing.assert_allclose(m_oa.scores, m_en.scores, atol=2 * sc.max_score_error + 1e-15)
    assert m_oa.second_best == pytest.approx(m_en.second_best, abs=1e-12)
    assert sc.max_score_error <= SCORE_TOL


@pytest.mark.parametrize("name", ["logistic", "hinge", "huber"])
def test_brackets_contain_the_exact_scores(name):
    X, y = _data(name, n=200, p=12, seed=9)
    sc = ConvexLossScorer(X, y, 2.0, 1.0, np.ones((len(y), 1)), loss=LOSSES[name])
    sc.score(np.array([[0, 3, 5]]))  # sets the warm start
    S = np.array(list(itertools.combinations(range(12), 3)))
    exact = ConvexLossScorer(X, y, 2.0, 1.0, np.ones((len(y), 1)), loss=LOSSES[name]).score(S)
    for steps in (0, 1, 2):
        lo, up = sc.bracket(S, newton_steps=steps)
        assert np.all(lo <= exact + 1e-15) and np.all(exact <= up + SCORE_TOL)
    lo0, up0 = sc.bracket(S, newton_steps=0)
    lo2, up2 = sc.bracket(S, newton_steps=2)
    assert np.median(up2 - lo2) < np.median(up0 - lo0)


@pytest.mark.parametrize("name", ["logistic", "hinge", "huber"])
def test_two_swap_is_exact(name):
    """The keep best members of the two-mistake class, by certified pruning, equal the
    best of the class scored in full; every other member scores >= the bound."""
    X, y = _data(name, n=150, p=13, seed=10)
    sc = ConvexLossScorer(X, y, 2.0, 1.0, np.ones((len(y), 1)), loss=LOSSES[name])
    S1 = np.array([0, 3, 6, 9])
    outside = np.setdiff1d(np.arange(13), S1)
    members = np.sort(np.array([np.concatenate([np.delete(S1, D), pr])
                                for D in itertools.combinations(range(4), 2)
                                for pr in itertools.combinations(outside, 2)]), axis=1)
    full = sc.score(members)
    from dpsubset.search.enumeration import rank_supports
    order = rank_supports(members, full)
    tol = 2 * sc.max_score_error + 1e-15
    for keep, other in [(5, None), (40, None), (30, np.array([full[order[10]]]))]:
        S2, v2, bound = sc.two_swap(S1, keep, other_values=other)
        assert len(v2) == keep
        np.testing.assert_allclose(v2, full[order[:keep]], atol=tol)
        np.testing.assert_array_equal(S2[v2 < full[order[keep]] - tol],
                                      members[order[:keep]][v2 < full[order[keep]] - tol])
        assert bound <= full[order[keep]] + tol
        assert sc.two_swap_stats["scored_exactly"] <= len(members)
    S2, v2, bound = sc.two_swap(S1, 10, threshold=full[order[3]])
    assert len(v2) == 4 and bound >= full[order[3]] - tol


@pytest.mark.parametrize("name", ["logistic", "hinge", "huber", "squared"])
def test_class_lower_bounds_are_valid(name):
    """Every mistake class's minimum (all members scored) is >= its certified bound."""
    X, y = _data(name, n=150, p=10, seed=11)
    for r in (0.4, 3.0):
        sc = ConvexLossScorer(X, y, 2.0, r, np.ones((len(y), 1)), loss=LOSSES[name])
        S1 = np.array([0, 3, 5])
        S_all, c_all = score_all(sc, 3)
        mistakes = 3 - np.isin(S_all, S1).sum(axis=1)
        lb = sc.class_lower_bounds(S1, [1, 2, 3])
        assert set(lb) == {1, 2, 3}
        for k, bound in lb.items():
            true_min = c_all[mistakes == k].min() - sc.max_score_error
            assert bound <= true_min, (k, bound, true_min)
        # the bound is informative for the nearest class (not -inf or far below)
        assert lb[1] > c_all[mistakes == 1].min() - 0.5


# ------------------------------------------------ outer approximation -> enumeration


def _race_problem(monkeypatch, name="logistic", lam=0.05):
    """A p = 14, s = 3 problem on the automatic route's outer approximation (the route
    model's choice of enumeration for its C(14, 3) = 364 supports overridden)."""
    import dpsubset.search.exact as exact
    monkeypatch.setattr(exact, "choose_route", lambda *a: "certified")
    # The automatic route's outer approximation, as for a scorer without the Fenchel
    # branch and bound's hooks (a convex scorer with them takes the branch and bound:
    # tests/search/test_bnb_convex.py).
    monkeypatch.setattr(exact, "supports_branch_and_bound", lambda scorer: False)
    # no analytic certificate for the best support: it goes to the outer approximation
    monkeypatch.setattr(SubsetSearch, "_certify_local_optimum", lambda self, *a: None)
    X, y = _data(name, n=120, p=14, seed=8)
    # lam = 0.05: nearly flat scores, the regime in which the master problems stall
    return ConvexLossScorer(X, y, lam, 1.0, np.ones((len(y), 1)), loss=LOSSES[name]), exact


@pytest.mark.parametrize("name", ["logistic", "hinge"])
def test_outer_approximation_yields_to_enumeration_and_stays_exact(monkeypatch, name):
    sc, exact = _race_problem(monkeypatch, name)
    # No time at all for the outer approximation: every list must come from enumeration.
    monkeypatch.setattr(exact, "MIN_RACE_SECONDS", 0.0)
    monkeypatch.setattr(exact, "RACE_FACTOR", 0.0)
    s, R = 3, 2 + 11 * 3
    raced = SubsetSearch(sc, s, time_limit=600)
    assert raced.search == "outer_approximation"
    en = SubsetSearch(sc, s, search="enumeration")
    t_r, t_e = raced.top_r(R), en.top_r(R)
    assert raced._enumerated is not None  # the race was lost, as arranged
    assert any("yielded to enumeration" in c.problem for c in raced.certificates)
    assert all(c.closed for c in t_r.certificates)
    np.testing.assert_array_equal(t_r.supports, t_e.supports)
    np.testing.assert_array_equal(t_r.scores, t_e.scores)
    m_r, m_e = raced.mistake_classes(), en.mistake_classes()
    np.testing.assert_array_equal(m_r.supports, m_e.supports)
    assert m_r.second_best == m_e.second_best


def test_mistake_classes_yield_to_enumeration_after_a_certified_best(monkeypatch):
    """The race lost inside the mistake classes, the best support already certified by
    the outer approximation: the classes come from enumeration, exactly."""
    from dpsubset.runtime.limits import SearchTimeout
    sc, exact = _race_problem(monkeypatch, lam=4.0)
    monkeypatch.setattr(exact, "MIN_RACE_SECONDS", 1e6)
    search = SubsetSearch(sc, 3, time_limit=600)
    search.best()
    assert [c.method for c in search.certificates] == ["outer_approximation"]

    def stalls(self, S1, c1):
        self._race_deadline = time.perf_counter() - 1.0  # the budget ran out in here
        raise SearchTimeout("a class solve reached the race's deadline")

    monkeypatch.setattr(SubsetSearch, "_search_mistake_classes", stalls)
    got = search.mistake_classes()
    want = SubsetSearch(sc, 3, search="enumeration").mistake_classes()
    assert search._enumerated is not None
    np.testing.assert_array_equal(got.supports, want.supports)
    np.testing.assert_array_equal(got.scores, want.scores)


def test_the_users_time_limit_is_not_the_race(monkeypatch):
    """A SearchTimeout from the user's own limit stays a timeout (nothing enumerated)."""
    from dpsubset.runtime.limits import SearchTimeout
    sc, exact = _race_problem(monkeypatch)
    monkeypatch.setattr(exact, "MIN_RACE_SECONDS", 1e6)  # the race never ends first
    search = SubsetSearch(sc, 3, time_limit=1e-9)
    with pytest.raises(SearchTimeout):
        search.top_r(35)
    assert search._enumerated is None


def test_an_explicit_outer_approximation_does_not_race(monkeypatch):
    sc, exact = _race_problem(monkeypatch, lam=4.0)
    monkeypatch.setattr(exact, "MIN_RACE_SECONDS", 0.0)
    monkeypatch.setattr(exact, "RACE_FACTOR", 0.0)
    search = SubsetSearch(sc, 3, search="outer_approximation", time_limit=600)
    search.top_r(35)
    assert search._enumerated is None and search._race_deadline is None
    assert not any("enumeration" in c.method for c in search.certificates)


def test_the_race_ends_with_the_mistake_classes(monkeypatch):
    """Refiners kept for the lazy draw get their own deadline back: a refinement
    during the draw must not stop at the race's deadline."""
    sc, exact = _race_problem(monkeypatch, lam=4.0)
    monkeypatch.setattr(exact, "MIN_RACE_SECONDS", 1e6)
    search = SubsetSearch(sc, 3, time_limit=600)
    search.mistake_classes()
    assert search._enumerated is None
    assert search._raced_masters == [] and not search._race
    assert search._race_deadline_at() is None
