"""The mistake-class lower bounds with Gram row maxima for a short list of columns.

Every bound here is a privacy matter (the exact mechanisms rely on it), so each
piece is checked against brute force: the subset maximum, the block bound for
supports with several unrefined columns, the single-precision row maxima, and
the class bounds themselves against the enumerated class minimum.
"""
import itertools

import numpy as np
import pytest

import dpsubset.scores.class_bounds as scores
import dpsubset.scores.two_swap as two_swap
from dpsubset.scores.class_bounds import _max_ratio, _mixed_bound
from dpsubset.scores.least_squares import LeastSquaresScorer
from dpsubset.search.enumeration import rank_supports


@pytest.mark.parametrize("seed", range(40))
def test_max_ratio_is_the_subset_maximum(seed):
    rng = np.random.default_rng(seed)
    q, k = int(rng.integers(3, 10)), int(rng.integers(1, 4))
    k = min(k, q)
    h2 = rng.exponential(size=q)
    d = rng.choice([0.5, 1.0, 1.5, 2.0], size=q) if seed % 3 == 0 else rng.uniform(0.2, 2, q)
    if seed % 5 == 0:
        h2[: q // 2] = h2[0]  # ties
    brute = max(h2[list(J)].sum() / d[list(J)].min() for J in itertools.combinations(range(q), k))
    assert _max_ratio(h2, d, k) == pytest.approx(brute, rel=1e-12)
    # With the exact scan cut short the result is still an upper bound.
    assert _max_ratio(h2, d, k, max_exact=1) >= brute * (1 - 1e-12)


def test_mixed_bound_holds_for_psd_matrices():
    # h' (lam I + W)^{-1} h <= bound(|h_U|^2) for J = R + U, given |W_il| <= m_l (l in R).
    tight = 0
    for seed in range(3000):
        rng = np.random.default_rng(seed)
        k = int(rng.integers(2, 6))
        u = int(rng.integers(2, k + 1))
        nr = k - u
        lam = float(rng.choice([0.01, 0.1, 1.0, 3.0]))
        Z = rng.normal(size=(int(rng.integers(k, 3 * k)), k))
        Z[:, 1:] += float(rng.uniform(0, 1)) * Z[:, :1] * (seed % 2)  # correlated columns
        W = Z.T @ Z / len(Z) * rng.uniform(0.05, 1)
        h = rng.normal(size=k) * rng.uniform(0.1, 3)
        true = h @ np.linalg.solve(lam * np.eye(k) + W, h)
        R = np.arange(nr)
        off = np.abs(W - np.diag(np.diag(W)))
        m = off.max(axis=1)[R] * (1.0 if seed % 3 else rng.uniform(1.0, 1.3, nr))
        bound = _mixed_bound(k, u, h[R] ** 2, np.diag(W)[R], m, np.sort(h[R] ** 2)[::-1], lam)
        b = bound(float(np.sum(h[nr:] ** 2)))
        assert true <= b * (1 + 1e-12)
        tight += true > 0.9 * b
    assert tight > 100  # the block case (positive determinant) is exercised, and tight


@pytest.mark.parametrize("gram", [True, False])
def test_row_maxima_are_upper_bounds(gram):
    rng = np.random.default_rng(3)
    n, p = 300, 40
    X = np.clip(rng.normal(size=(n, p)) * 0.4, -0.5, 0.5)
    X[:, 5] = X[:, 4]  # an exact duplicate: the largest entry is the diagonal one
    sc = LeastSquaresScorer(X, rng.uniform(-.5, .5, n), 1.0, 1.0, np.ones((n, 1)))
    if not gram:
        sc._gram = None
    cols = np.setdiff1d(np.arange(p), [0, 7, 9])
    idx = np.array([0, 3, 4, 5, len(cols) - 1])
    G = np.abs(X.T @ X / n)
    exact = np.array([max(G[cols[i], l] for l in cols if l != cols[i]) for i in idx])
    got = sc._gram_row_max(cols, idx)
    assert np.all(got >= exact)
    assert np.all(got <= exact + 1e-5)


def _design(rng, n, p, rho):
    Z = rng.normal(size=(n, p))
    for j in range(1, p):
        Z[:, j] = rho * Z[:, j - 1] + np.sqrt(1 - rho**2) * Z[:, j]
    return np.clip(Z, -0.5, 0.5)


@pytest.mark.parametrize("seed", range(24))
def test_class_bounds_below_enumerated_minimum(seed, monkeypatch):
    # Few columns refined at first (0 to 2 per base), so that the supports with one and
    # with several unrefined columns are both bounded by their own cases; small ridge
    # weights (where the row maxima matter most), strong correlation, active ball.
    rng = np.random.default_rng(1000 + seed)
    n, p, s = int(rng.integers(30, 300)), int(rng.integers(8, 14)), int(rng.integers(3, 6))
    rho = float(rng.uniform(-0.8, 0.8))
    lam, r = float(rng.choice([0.05, 1.0, 20.0])), float(rng.choice([0.2, 1.1, 10.0]))
    X = _design(rng, n, p, rho)
    y = np.clip(X[:, :s] @ rng.normal(size=s) + 0.3 * rng.normal(size=n), -0.5, 0.5)
    kf = seed % 3
    F = np.column_stack([np.ones(n), np.clip(rng.normal(size=n), -.5, .5)])[:, :kf]
    monkeypatch.setattr(scores, "_ROWMAX_FIRST", seed % 3)
    sc = LeastSquaresScorer(X, y, lam, r, F)
    if seed % 2:
        sc._gram = None  # the large-p route (single precision rows)
    S1 = np.sort(rng.choice(p, s, replace=False))
    out = np.setdiff1d(np.arange(p), S1)
    ks = range(1, min(s, p - s) + 1)
    lb = sc.class_lower_bounds(S1, ks)
    for k in ks:
        sups = np.array([sorted(set(S1) - set(D) | set(A)) for D in itertools.combinations(S1, k)
                         for A in itertools.combinations(out, k)])
        assert lb[k] <= sc.score(sups).min() + 1e-12
    # A second call reuses the stored row maxima and gives the same bounds.
    assert sc.class_lower_bounds(S1, ks) == lb


def test_few_rows_refined_when_columns_are_nearly_uncorrelated():
    # The point of the short list: on the paper's kind of data the bounds need the
    # row maxima of a small fraction of the columns.
    rng = np.random.default_rng(7)
    n, p, s = 400, 4000, 5
    X = _design(rng, n, p, 0.1)
    y = np.clip(X[:, 0:2 * s:2].sum(axis=1) / np.sqrt(s) + 0.2 * rng.normal(size=n), -.5, .5)
    sc = LeastSquaresScorer(X, y, 48.0, 1.1, np.ones((n, 1)))
    assert sc._gram is None
    lb = sc.class_lower_bounds(np.arange(0, 2 * s, 2), [3, 4, 5])
    assert sc.n_rowmax < p // 2
    assert all(np.isfinite(v) for v in lb.values())


@pytest.mark.parametrize("seed", range(6))
def test_two_swap_with_row_maxima_matches_brute_force(seed, monkeypatch):
    # The two-swap pruning with known Gram row maxima (some rows known from the start,
    # the others computed one at a time as the search reaches them) finds exactly the
    # same best members as enumeration.
    rng = np.random.default_rng(50 + seed)
    n, p, s = 150, 36, 4
    X = _design(rng, n, p, float(rng.uniform(-0.5, 0.5)))
    y = np.clip(X[:, :s] @ np.full(s, 0.5) + 0.3 * rng.normal(size=n), -0.5, 0.5)
    sc = LeastSquaresScorer(X, y, float(rng.choice([0.5, 5.0, 40.0])),
                            float(rng.choice([0.3, 1.1])), np.ones((n, 1)))
    if seed % 2:
        sc._gram = None
    monkeypatch.setattr(two_swap, "_TWO_SWAP_REFINE_CHUNK", 1)
    S1 = np.sort(rng.choice(p, s, replace=False))
    out = np.setdiff1d(np.arange(p), S1)
    if seed % 3:
        rm = sc._rowmax_store(out)
        idx = rng.choice(len(out), len(out) // 3, replace=False)
        rm[idx] = sc._gram_row_max(out, idx)
    sups = np.array([sorted(set(S1) - set(D) | set(A)) for D in itertools.combinations(S1, 2)
                     for A in itertools.combinations(out, 2)])
    v = sc.score(sups)
    order = rank_supports(sups, v)
    known0 = np.count_nonzero(~np.isnan(sc._rowmax_store(out)))
    for keep in (1, 25):
        S, vals, bound = sc.two_swap(S1, keep)
        np.testing.assert_array_equal(S, sups[order[:keep]])
        np.testing.assert_allclose(vals, v[order[:keep]], rtol=0, atol=1e-12)
        assert np.all(v[order[keep:]] >= bound - 1e-12)
    assert np.count_nonzero(~np.isnan(sc._rowmax_store(out))) > known0  # rows were computed


def _small_ridge_case(seed):
    """The regime of the ball cap: lam = 1 against n = 200 (lam_n = 0.005), a radius
    that the unconstrained fits overshoot, correlated columns."""
    rng = np.random.default_rng(5000 + seed)
    n, p, s = 200, 12, 4
    X = _design(rng, n, p, 0.6)
    y = np.clip(X[:, :s] @ rng.normal(size=s) + 0.3 * rng.normal(size=n), -0.5, 0.5)
    S1 = np.sort(rng.choice(p, s, replace=False))
    return (lambda: LeastSquaresScorer(X, y, 1.0, 0.3, np.ones((n, 1)))), S1


def _class_minima(sc, S1):
    out = np.setdiff1d(np.arange(sc.p), S1)
    s = len(S1)
    mins = {}
    for k in range(1, min(s, len(out)) + 1):
        sups = np.array([sorted(set(S1) - set(D) | set(A)) for D in itertools.combinations(S1, k)
                         for A in itertools.combinations(out, k)])
        mins[k] = sc.score(sups).min()
    return mins


def test_ball_cap_tightens_the_class_bounds_and_stays_below_the_minima(monkeypatch):
    """With a small ridge the gain of k added columns is capped by the ball
    (a r - lam r^2 / 2, a the norm of their residual correlations); the capped bounds
    are higher than without the cap and still below every enumerated class minimum.
    A cap computed for a smaller ball than the score's (a known-bad variant) gives
    bounds above a class minimum: the brute-force check catches it."""
    raised, broken = 0, 0
    for seed in range(12):
        make, S1 = _small_ridge_case(seed)
        sc = make()
        mins = _class_minima(sc, S1)
        ks = list(mins)
        capped = sc.class_lower_bounds(S1, ks)
        for k in ks:
            assert capped[k] <= mins[k] + 1e-12
        with monkeypatch.context() as m:
            m.setattr(scores, "_ball_gain_cap", lambda a, lam, r: np.inf)
            plain = make().class_lower_bounds(S1, ks)
        raised += sum(capped[k] > plain[k] + 1e-12 for k in ks)
        with monkeypatch.context() as m:
            real = scores._ball_gain_cap
            m.setattr(scores, "_ball_gain_cap", lambda a, lam, r: real(a, lam, r / 4))
            bad = make().class_lower_bounds(S1, ks)
        broken += sum(bad[k] > mins[k] + 1e-12 for k in ks)
    assert raised >= 5
    assert broken >= 1


@pytest.mark.parametrize("seed", range(12))
def test_class_bounds_with_a_target_stay_valid(seed, monkeypatch):
    """Refining only until the bounds clear a target keeps them below every enumerated
    class minimum; where they do not clear it they are refined to completion."""
    rng = np.random.default_rng(2000 + seed)
    n, p, s = int(rng.integers(40, 300)), int(rng.integers(9, 14)), int(rng.integers(3, 6))
    X = _design(rng, n, p, float(rng.uniform(-0.8, 0.8)))
    y = np.clip(X[:, :s] @ rng.normal(size=s) + 0.3 * rng.normal(size=n), -0.5, 0.5)
    lam, r = float(rng.choice([0.05, 1.0, 20.0])), float(rng.choice([0.2, 1.1, 10.0]))
    monkeypatch.setattr(scores, "_ROWMAX_FIRST_TARGET", seed % 3)
    S1 = np.sort(rng.choice(p, s, replace=False))
    out = np.setdiff1d(np.arange(p), S1)
    ks = list(range(1, min(s, p - s) + 1))
    sc = LeastSquaresScorer(X, y, lam, r, np.ones((n, 1)))
    if seed % 2:
        sc._gram = None
    mins = {}
    for k in ks:
        sups = np.array([sorted(set(S1) - set(D) | set(A)) for D in itertools.combinations(S1, k)
                         for A in itertools.combinations(out, k)])
        mins[k] = sc.score(sups).min()
    target = float(sc.score(S1[None, :])[0])
    full = LeastSquaresScorer(X, y, lam, r, np.ones((n, 1))).class_lower_bounds(S1, ks)
    got = sc.class_lower_bounds(S1, ks, target=target)
    for k in ks:
        assert got[k] <= mins[k] + 1e-12
    if min(full.values()) > target:
        assert min(got.values()) > target or np.allclose(list(got.values()), list(full.values()))


def test_search_refines_targeted_class_bounds_only_when_asked_more():
    """SubsetSearch.class_bounds: a bound refined for one target serves a lower target,
    and is computed again for a higher target or for the tightest bound."""
    from dpsubset.search.exact import SubsetSearch
    rng = np.random.default_rng(11)
    n, p, s = 200, 12, 4
    X = _design(rng, n, p, 0.3)
    y = np.clip(X[:, :s].sum(axis=1) + 0.3 * rng.normal(size=n), -0.5, 0.5)
    sc = LeastSquaresScorer(X, y, 1.0, 1.1, np.ones((n, 1)))
    search = SubsetSearch(sc, s, search="branch_and_bound")
    search.best()
    calls = []
    real = sc.class_lower_bounds

    def counted(S, ks, target=None):
        calls.append((tuple(ks), target))
        return real(S, ks, target=target)

    sc.class_lower_bounds = counted
    search._class_lb.clear()  # forget the bounds the certificate of S_1 computed
    b = search.class_bounds([3], target=-1.0)[3]
    assert calls == [((3,), -1.0)]
    search.class_bounds([3], target=b - 1.0)          # below the cached bound: served
    assert len(calls) == 1
    search.class_bounds([3], target=b + 1.0)          # above it: computed again
    assert calls[-1] == ((3,), b + 1.0)
    search.class_bounds([3])                          # the tightest: computed again
    assert calls[-1] == ((3,), None)
    n_calls = len(calls)
    search.class_bounds([3], target=1e9)              # a complete bound serves any target
    assert len(calls) == n_calls
