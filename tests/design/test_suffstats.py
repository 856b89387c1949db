"""Least squares from sufficient statistics: the Gram route agrees with the matrix route
(scores, search, refit, and the whole release for the same random_state)."""
import warnings

import numpy as np
import pandas as pd
import pytest

import dpsubset.api as api_mod
from dpsubset import dp_best_subset
from dpsubset.refit.objective import objective_perturbation, objective_perturbation_gram
from dpsubset.scores.least_squares import LeastSquaresScorer
from dpsubset.search.exact import SubsetSearch
from dpsubset.search.heuristics import iht_support
from dpsubset.design.suffstats import SufficientStats, gram_route


def _data(n=400, p=12, k=1, seed=0):
    rng = np.random.default_rng(seed)
    X = np.clip(rng.normal(size=(n, p)), -2, 2)
    F = np.hstack([np.ones((n, 1)), np.clip(rng.normal(size=(n, k - 1)), -1, 1)]) if k else np.empty((n, 0))
    beta = np.zeros(p)
    beta[[1, 4, 7]] = [1.0, -0.8, 0.6]
    y = np.clip(X @ beta + 0.3 + rng.normal(size=n), -4, 4)
    return F, X, y


def _pair(F, X, y, lam=5.0, r=3.0):
    st = SufficientStats.from_arrays(F, X, y)
    dense = LeastSquaresScorer(X, y, lam, r, F)
    gram = LeastSquaresScorer.from_gram(st.G, st.Zty, st.yty, st.n, lam, r, k_forced=F.shape[1])
    return dense, gram


def test_statistics_are_the_gram_matrix_with_a_valid_error_bound():
    F, X, y = _data(n=5000, p=8, k=2)
    st = SufficientStats.from_blocks(((np.hstack([F, X])[a:a + 300], y[a:a + 300]) for a in range(0, 5000, 300)),
                                     k_forced=2)
    Z = np.hstack([F, X, y[:, None]])
    exact = np.array([[float(np.sum(np.array(Z[:, i] * Z[:, j], dtype=np.longdouble)))
                       for j in range(Z.shape[1])] for i in range(Z.shape[1])])
    bounds = np.concatenate([[1.0, 1.0], np.full(8, 2.0), [4.0]])
    assert st.n == 5000 and st.k_forced == 2 and st.p == 8 and st.block_rows == 300
    assert np.all(np.abs(st.ZtZ - exact) <= st.entry_error(bounds))
    halves = SufficientStats.from_arrays(F[:2000], X[:2000], y[:2000]).merge(
        SufficientStats.from_arrays(F[2000:], X[2000:], y[2000:]))
    np.testing.assert_allclose(halves.ZtZ, st.ZtZ, rtol=1e-13, atol=1e-10)


@pytest.mark.parametrize("k", [0, 1, 2])
def test_gram_scorer_matches_matrix_scorer(k):
    F, X, y = _data(k=k)
    dense, gram = _pair(F, X, y)
    assert gram.gram_only and not dense.gram_only
    rng = np.random.default_rng(1)
    S = np.sort(np.array([rng.choice(12, 3, replace=False) for _ in range(20)]), axis=1)
    np.testing.assert_allclose(gram.score(S), dense.score(S), rtol=1e-11, atol=1e-13)
    nb_d, v_d = dense.neighbourhood(S[0])
    nb_g, v_g = gram.neighbourhood(S[0])
    assert np.array_equal(nb_d, nb_g)
    np.testing.assert_allclose(v_g, v_d, rtol=1e-11, atol=1e-13)
    cd, gd = dense.cut(S[0])
    cg, gg = gram.cut(S[0])
    assert cg == pytest.approx(cd, rel=1e-11)
    np.testing.assert_allclose(gg, gd, rtol=1e-9, atol=1e-13)
    rd, rg = dense.restricted([0, 2, 5, 9], [3]), gram.restricted([0, 2, 5, 9], [3])
    assert rg.gram_only and rg.k_forced == k + 1
    T = np.array([[0, 1], [1, 3], [2, 3]])
    np.testing.assert_allclose(rg.score(T), rd.score(T), rtol=1e-11, atol=1e-13)
    assert set(iht_support(gram, 3)) == set(iht_support(dense, 3)) == {1, 4, 7}


def test_gram_search_returns_the_same_top_r_list():
    F, X, y = _data(n=600, p=14, k=1, seed=3)
    dense, gram = _pair(F, X, y)
    a = SubsetSearch(dense, 3).top_r(8)
    b = SubsetSearch(gram, 3).top_r(8)
    assert [tuple(s) for s in a.supports] == [tuple(s) for s in b.supports]
    np.testing.assert_allclose(b.scores, a.scores, rtol=1e-11)
    assert all(c.closed for c in b.certificates)


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_gram_refit_matches_matrix_refit(delta):
    F, X, y = _data(n=500, p=8, k=1, seed=5)
    A = np.hstack([F, X[:, :3]])
    R = float(np.sqrt(1 + 3 * 4.0))
    kw = dict(eps=1.0, row_bound=R, b_y=4.0, r=3.0, delta=delta)
    dense = objective_perturbation(A, y, loss="squared", rng=np.random.default_rng(7), **kw)
    st = SufficientStats.from_arrays(A, np.empty((500, 0)), y)
    err = st.entry_error(np.concatenate([[1.0], np.full(3, 2.0), [4.0]]))
    gram = objective_perturbation_gram(st.G, st.Zty, st.n, rng=np.random.default_rng(7),
                                       entry_error=(err[:-1, :-1], err[:-1, -1]), **kw)
    np.testing.assert_allclose(gram.coef, dense.coef, rtol=1e-9, atol=1e-12)
    assert gram.certified_distance < 1e-8 * 3.0
    assert (gram.eps, gram.delta, gram.mode, gram.regularization) == \
        (dense.eps, dense.delta, dense.mode, dense.regularization)


def test_gram_refit_certifies_a_collinear_support_of_a_tall_design():
    """The rounding bound of the statistics grows with the rows of one BLAS product: one
    product per memory block (tens of thousands of rows) gave 3e-7 on 54,000 rows, and the
    exact-grid refit of a collinear support (diamonds' carat and x, correlation 0.97) could
    not be certified within d_max = 1e-8 r, so the default call raised. Products of at most
    BLAS_ROWS rows keep the bound small enough."""
    from dpsubset.design.suffstats import BLAS_ROWS
    from dpsubset.refit.exact_grid import objective_perturbation_gram_exact
    rng = np.random.default_rng(1)
    n = 60_000
    x1 = rng.uniform(-1, 1, n)
    x2 = np.clip(x1 + 0.05 * rng.standard_normal(n), -1, 1)
    y = np.clip(0.3 * x1 - 0.2 * x2 + 0.1 * rng.standard_normal(n), -1, 1)
    A = np.column_stack([np.ones(n), x1, x2])
    st = SufficientStats.from_arrays(A, np.empty((n, 0)), y)
    assert st.block_rows == BLAS_ROWS
    err = st.entry_error(np.ones(4))
    assert err.max() < 1e-8
    for seed in range(3):
        res = objective_perturbation_gram_exact(st.G, st.Zty, st.n, eps=2.0, row_bound=np.sqrt(3.0), b_y=1.0,
                                                r=1.0, rng=np.random.default_rng(seed),
                                                entry_error=(err[:-1, :-1], err[:-1, -1]))
        assert np.all(np.isfinite(res.coef)) and res.certified_distance <= 1e-8
    # the bound of one product over all the rows (the blocking before) is too loose here
    one_product = SufficientStats(st.ZtZ, n, 0, n).entry_error(np.ones(4))
    with pytest.raises(RuntimeError, match="could not be certified"):
        objective_perturbation_gram_exact(st.G, st.Zty, st.n, eps=2.0, row_bound=np.sqrt(3.0), b_y=1.0, r=1.0,
                                          rng=np.random.default_rng(0),
                                          entry_error=(one_product[:-1, :-1], one_product[:-1, -1]))


def test_route_depends_on_public_sizes_only():
    assert gram_route(100_000, 50, 1)
    assert not gram_route(100, 50, 1)             # wide: the matrices
    assert not gram_route(4000, 20, 1)            # small: the matrices
    assert not gram_route(10**7, 5000, 1)         # the p x p matrix would be too large
    assert not gram_route(100_000, 50, 1, loss="huber")
    assert not gram_route(100_000, 50, 1, method="dp_sis")


def _frame(n=6000, p=10, seed=11):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = X[:, 2] - 0.7 * X[:, 5] + 0.5 * X[:, 8] + rng.normal(size=n) + 1.0
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
    df.insert(0, "y", y)
    df["g"] = pd.Categorical(rng.choice(["a", "b", "c"], n), categories=["a", "b", "c"])
    return df


@pytest.mark.parametrize("formula,method,keep,budget", [
    ("y ~ .", "top_r", None, None),
    ("y ~ 0 + x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8", "top_r", None, None),
    ("y ~ x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + x9", "mistakes", ["x0"], None),
    ("y ~ .", "top_r", None, dict(refit_delta=1e-6)),  # the Gaussian refit on both routes
])
def test_release_is_the_same_on_both_routes(monkeypatch, formula, method, keep, budget):
    df = _frame()
    kw = dict(eps=4.0, s=3, method=method, bounds=(2.5, 5.0), ball=dict(r=4.0), keep=keep, random_state=123,
              budget=budget)
    calls = []

    def spy(n, p, k, **opts):
        calls.append((n, p, k))
        return gram_route(n, p, k, **opts)

    with monkeypatch.context() as m:
        m.setattr(api_mod, "gram_route", spy)
        tall = dp_best_subset(formula, df, **kw)
    assert calls and gram_route(*calls[0], method=method)  # the Gram route was taken
    with monkeypatch.context() as m:
        m.setattr(api_mod, "gram_route", lambda *a, **k: False)
        wide = dp_best_subset(formula, df, **kw)
    assert tall.support == wide.support
    refit_delta = [[st["delta"] for st in r.privacy.stages if st["stage"] == "refit"] for r in (tall, wide)]
    assert refit_delta == [[1e-6 if budget else 0.0]] * 2
    np.testing.assert_allclose(tall.params.to_numpy(), wide.params.to_numpy(), rtol=1e-8, atol=1e-10)
    assert not hasattr(tall._predictor, "gram")  # the private statistics do not leave the call
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(tall.predict(df.iloc[:5]), wide.predict(df.iloc[:5]), rtol=1e-8)
