"""Comparison methods "exponential", "lei_ic" and "mcmc": samplers, exact solves, API."""
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.optimize import minimize

import dpsubset as dps
from dpsubset.selection.baselines import exponential as expo
from dpsubset.selection.baselines import lei_ic, mcmc
from dpsubset.scores.least_squares import LeastSquaresScorer
from dpsubset.privacy.sensitivity import score_sensitivity
from dpsubset.search.enumeration import all_supports, score_all


def tiny_problem(n=8, p=5, seed=0, lam=0.5, r=1.0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, p))
    y = np.clip(X[:, 0] - 0.5 * X[:, 1] + 0.2 * rng.normal(size=n), -1, 1)
    return X, y, LeastSquaresScorer(X, y, lam, r, forced=np.ones((n, 1)))


def frame(n=120, p=6, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, p))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
    df["y"] = np.clip(X[:, 0] - X[:, 1] + 0.1 * rng.normal(size=n), -1, 1)
    return df


def chi2_p(counts, probs):
    return stats.chisquare(counts, probs * counts.sum()).pvalue


# --------------------------------------------------------------------------- exponential
def test_exponential_sampler_matches_exact_distribution():
    _, _, scorer = tiny_problem()
    S, c = score_all(scorer, 2)
    Delta = score_sensitivity([1.0] * 5, 1.0, 1.0, 2, (1.0,), 8)
    eps = 8.0  # far from uniform, so that a wrong sampler shows
    probs = expo.exponential_distribution(c, eps, Delta)
    assert abs(probs.sum() - 1) < 1e-12
    rng = np.random.default_rng(3)
    draws = np.array([expo.sample_exponential(c, eps, Delta, rng) for _ in range(20000)])
    counts = np.bincount(draws, minlength=len(c))
    assert chi2_p(counts, probs) > 1e-3
    # the same draws against a mechanism with half the budget: rejected
    assert chi2_p(counts, expo.exponential_distribution(c, eps / 2, Delta)) < 1e-6


# --------------------------------------------------------------------------- lei_ic
def test_l1_constrained_rss_matches_a_generic_solver():
    rng = np.random.default_rng(0)
    for trial in range(30):
        n, k = int(rng.integers(3, 9)), int(rng.integers(1, 5))
        A = rng.choice([-1.0, 1.0], (n, k)) if trial % 2 else rng.uniform(-1, 1, (n, k))
        if trial % 3 == 0 and k >= 2:
            A[:, 1] = A[:, 0]  # linearly dependent columns
        y = 3 * rng.uniform(-1, 1, n)
        R1 = float(rng.uniform(0.1, 3))
        v, b, gap = lei_ic.l1_constrained_rss((A.T @ A)[None], (A.T @ y)[None], y @ y, R1)
        assert gap[0] <= 1e-9 and np.abs(b).sum() <= R1 * (1 + 1e-12)
        f = lambda z: np.sum((y - A @ (z[:k] - z[k:])) ** 2)  # noqa: E731
        ref = min(minimize(f, rng.uniform(0, R1 / (2 * k), 2 * k), method="SLSQP",
                           bounds=[(0, None)] * (2 * k),
                           constraints=[{"type": "ineq", "fun": lambda z: R1 - z.sum()}],
                           options=dict(ftol=1e-14, maxiter=500)).fun for _ in range(3))
        assert v[0] <= ref + 1e-9


def test_noisy_min_distribution_closed_form_and_sampler():
    # two models: P(c1 + bW1 < c2 + bW2) = 1 - exp(-x)(1 + x/2)/2, x = (c2 - c1)/b
    x = 1.3 / 0.7
    assert lei_ic.noisy_min_distribution([0.0, 1.3], 0.7)[0] == pytest.approx(
        1 - 0.5 * math.exp(-x) * (1 + x / 2), rel=1e-12)
    c = np.array([0.0, 0.4, 1.0, 1.1, 3.0, 0.2])
    scale = 0.5
    probs = lei_ic.noisy_min_distribution(c, scale)
    assert abs(probs.sum() - 1) < 1e-12
    rng = np.random.default_rng(4)
    draws = np.array([lei_ic.sample_noisy_min(c, scale, rng) for _ in range(20000)])
    counts = np.bincount(draws, minlength=len(c))
    assert chi2_p(counts, probs) > 1e-3
    assert chi2_p(counts, lei_ic.noisy_min_distribution(c, 2 * scale)) < 1e-6


def test_lei_validate_errors():
    v = lei_ic.validate_lei
    assert v({}, s=2, eps=1, loss="squared") == dict(models=None, R1=None, phi=None)
    with pytest.raises(TypeError, match="unknown options.*'foo'"):
        v({"foo": 1}, s=2, eps=1, loss="squared")
    for bad, msg in [({"R": 3}, "R1"), ({"delta": 1e-6}, "pure"), ({"R1": -1}, "R1"),
                     ({"phi": "x"}, "phi"), ({"models": ["x1", "x2"]}, "not \\['x1', 'x2'\\]"),
                     ({"models": [["x1", "x2", "x3"]]}, "raise s"),
                     ({"models": [["x1"], ["x1"]]}, "twice"), ({"models": []}, "empty")]:
        with pytest.raises(ValueError, match=msg):
            v(bad, s=2, eps=1, loss="squared")


def test_lei_through_the_api_chooses_the_size():
    df = frame()
    models = [["x0"], ["x0", "x1"], ["x2", "x3"]]
    res = dps.dp_best_subset("y ~ .", df, eps=200, s=2, method=dps.Method("lei_ic", models=models, phi=0.0), bounds=(1, 1), ball=dps.Ball(r=1.0),
                             random_state=0)
    assert res.privacy.guarantee == "pure"
    assert res.support == ["x0", "x1"]
    assert res.privacy.sensitivity == pytest.approx(4.0)  # (b_y + R1 max(b_x, 1))^2
    assert "chooses the model size" in res.privacy.statement
    # a huge penalty per term makes the one-term model win: fewer than s columns
    res = dps.dp_best_subset("y ~ .", df, eps=200, s=2, method=dps.Method("lei_ic", models=models, phi=1e4), bounds=(1, 1), ball=dps.Ball(r=1.0),
                             random_state=0)
    assert res.support == ["x0"] and res.params[["x1", "x2"]].eq(0).all()
    assert np.isfinite(res.predict(df.head())).all()
    with pytest.raises(ValueError, match="not candidate columns: \\['z'\\]"):
        dps.dp_best_subset("y ~ .", df, eps=1, s=2, method=dps.Method("lei_ic", models=[["z"]]), bounds=(1, 1))


def test_lei_refuses_too_many_models():
    df = frame(n=30, p=30)
    with pytest.raises(ValueError, match="beyond its limit"):
        dps.dp_best_subset("y ~ .", df, eps=1, s=6, method="lei_ic", bounds=(1, 1))


# --------------------------------------------------------------------------- mcmc
def test_mcmc_stationary_law_is_the_exponential_mechanism():
    _, _, scorer = tiny_problem(seed=2)
    p, s, eps = 5, 2, 8.0
    Delta = score_sensitivity([1.0] * p, 1.0, 1.0, s, (1.0,), 8)
    S, c = score_all(scorer, s)
    exact = expo.exponential_distribution(c, eps, Delta)
    res = mcmc.run_chains(scorer.score, p, s, eps, Delta, n_iter=40, n_chains=4000,
                          rng=np.random.default_rng(5))
    index = {tuple(row): i for i, row in enumerate(S.tolist())}
    counts = np.bincount([index[tuple(r)] for r in res.states.tolist()], minlength=len(S))
    tv = 0.5 * np.abs(counts / counts.sum() - exact).sum()
    assert tv < 0.03, f"TV {tv:.4f} between the chains and the exponential mechanism"
    assert chi2_p(counts, exact) > 1e-3
    uniform = np.full(len(S), 1 / len(S))
    assert chi2_p(counts, uniform) < 1e-6  # the chain did move towards the target
    # a chain with the wrong temperature would fail: these draws reject the eps / 2 target
    assert chi2_p(counts, expo.exponential_distribution(c, eps / 2, Delta)) < 1e-6
    assert 0.05 < res.acceptance.mean() < 0.95


def exact_chain_law(scores, supports, p, s, eps, Delta, n_iter):
    """Law of the chain after n_iter steps from a uniform start, by its transition matrix."""
    lw = expo.exponential_log_weights(scores, eps, Delta)
    index = {tuple(r): i for i, r in enumerate(supports.tolist())}
    N = len(supports)
    P = np.zeros((N, N))
    for a, S in enumerate(supports.tolist()):
        for i in S:
            for j in sorted(set(range(p)) - set(S)):
                b = index[tuple(sorted(set(S) - {i} | {j}))]
                P[a, b] += min(1.0, math.exp(lw[b] - lw[a])) / (s * (p - s))
        P[a, a] = 1 - P[a].sum()
    return np.full(N, 1 / N) @ np.linalg.matrix_power(P, n_iter)


def test_mcmc_certified_bound_holds_on_the_exact_chain():
    """Exact (eps, delta) audit: the chain's exact law after n_iter steps on D and on
    neighbours D' has hockey-stick divergence <= the certified delta, and its distance to
    the target is <= the certified TV bound."""
    n, p, s, eps, n_iter = 8, 4, 2, 1.0, 100
    X, y, _ = tiny_problem(n=n, p=p, seed=6, lam=0.5)
    Delta = score_sensitivity([1.0] * p, 1.0, 1.0, s, (1.0,), n)
    eta = mcmc.mcmc_tv_bound(n_iter, p, s, eps, Delta, 1.0)
    delta = mcmc.mcmc_delta(eta, eps)
    assert 0 < eta < 1e-2 and delta < 1
    assert mcmc.mcmc_tv_bound(2 * n_iter, p, s, eps, Delta, 1.0) < eta  # decreasing in n_iter
    supports = all_supports(p, s)

    def law(X, y, iters=n_iter):
        sc = LeastSquaresScorer(X, y, 0.5, 1.0, forced=np.ones((n, 1))).score(supports)
        return exact_chain_law(sc, supports, p, s, eps, Delta, iters), sc

    base, sc = law(X, y)
    target = expo.exponential_distribution(sc, eps, Delta)
    assert 0.5 * np.abs(base - target).sum() <= eta
    rng = np.random.default_rng(8)
    worst = 0.0
    for _ in range(20):
        X2, y2 = X.copy(), y.copy()
        i = rng.integers(n)
        X2[i], y2[i] = rng.choice([-1.0, 1.0], p), rng.choice([-1.0, 1.0])
        other, _ = law(X2, y2)
        for a, b in ((base, other), (other, base)):
            worst = max(worst, np.maximum(0, a - math.exp(eps) * b).sum())
    assert worst <= delta
    # Too few steps: the law is far from the target (the bound is not vacuous in the
    # direction that matters, the chain really needs the steps).
    short, _ = law(X, y, iters=1)
    assert 0.5 * np.abs(short - target).sum() > 1e-3


def test_mcmc_chains_do_not_depend_on_grouping():
    _, _, scorer = tiny_problem(seed=2)
    Delta = score_sensitivity([1.0] * 5, 1.0, 1.0, 2, (1.0,), 8)
    a = mcmc.run_chains(scorer.score, 5, 2, 1.0, Delta, 30, 4, np.random.default_rng(1))
    joblib = pytest.importorskip("joblib")
    with joblib.parallel_config(backend="threading"):  # no process start-up in the test
        b = mcmc.run_chains(scorer.score, 5, 2, 1.0, Delta, 30, 4, np.random.default_rng(1),
                            n_jobs=2)
    assert np.array_equal(a.states, b.states)
    # chain 0 alone is the same chain as chain 0 of a group
    c = mcmc.run_chains(scorer.score, 5, 2, 1.0, Delta, 30, 1,
                        np.random.default_rng(np.random.default_rng(1).integers(2**63)))
    assert c.states.shape == (1, 2)


def test_mcmc_validate_errors():
    v = mcmc.validate_mcmc
    assert v({}, s=2, eps=1, loss="squared") == dict(n_iter=mcmc.DEFAULT_N_ITER, n_chains=1,
                                                     n_jobs=1, delta=1e-6)
    with pytest.raises(TypeError, match="unknown options.*'iters'"):
        v({"iters": 10}, s=2, eps=1, loss="squared")
    for bad, msg in [({"n_iter": 0}, "n_iter"), ({"n_chains": 2.5}, "n_chains"),
                     ({"n_jobs": 0}, "n_jobs"), ({"delta": 1.0}, "delta"), ({"R": 4}, "top-R"),
                     ({"eps0": 0.1}, "gap-test")]:
        with pytest.raises(ValueError, match=msg):
            v(bad, s=2, eps=1, loss="squared")


def test_mcmc_through_the_api():
    df = frame()
    res, diag = None, None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res, diag = dps.dp_best_subset("y ~ .", df, eps=2, s=2, method=dps.Method("mcmc", n_iter=200, n_chains=3), bounds=(1, 1),
                                       random_state=0, search=dps.Search(diagnostics=True), verbose=True)
    assert len(res.support) == 2
    # n = 120: the worst-case mixing bound is far from delta = 1e-6, so the guarantee is
    # conditional on mixing, and the report says so.
    assert res.privacy.guarantee == "conditional"
    assert "NOT checked" in res.privacy.statement
    assert res.privacy.stages[0]["delta"] == 1e-6 and res.privacy.stages[0]["eps"] == 1.0
    assert len(diag.candidate_supports) == 3
    # the released support is chain 0's, which is one of the diagnosed chains
    assert sorted(res.support) in [sorted(S) for S in diag.candidate_supports]
    # tiny n and many steps: the certified bound gives a real (eps, delta)
    small = frame(n=6, p=4)
    res = dps.dp_best_subset("y ~ .", small, eps=1, s=2, method=dps.Method("mcmc", n_iter=400), bounds=(1, 1),
                             budget=dps.Budget(delta=1e-3), random_state=0)
    assert res.privacy.guarantee == "approximate"
    assert 0 < res.privacy.stages[0]["delta"] <= 1e-3


# --------------------------------------------------------------------------- exponential API
def test_exponential_through_the_api():
    df = frame()
    res = dps.dp_best_subset("y ~ .", df, eps=1, s=2, method="exponential", bounds=(1, 1),
                             random_state=0)
    again = dps.dp_best_subset("y ~ .", df, eps=1, s=2, method="exponential", bounds=(1, 1),
                               random_state=0)
    assert res.support == again.support and len(res.support) == 2
    pr = res.privacy
    assert pr.guarantee == "pure" and pr.delta == 0 and pr.eps == pytest.approx(1.0)
    assert [st["stage"] for st in pr.stages] == ["selection", "refit"]
    assert pr.stages[0]["mechanism"].startswith("exponential mechanism")
    assert pr.stages[0]["eps"] == pytest.approx(0.5)
    assert pr.exact_search  # (the per-solve list is non-private: diagnostics=True only)
    # a large budget finds the signal
    res = dps.dp_best_subset("y ~ .", df, eps=2000, s=2, method="exponential", bounds=(1, 1),
                             random_state=0)
    assert res.support == ["x0", "x1"]


def test_exponential_option_errors():
    df = frame()
    with pytest.raises(TypeError, match="unknown options"):
        dps.dp_best_subset("y ~ .", df, eps=1, s=2, method=dps.Method("exponential", n_iter=3), bounds=(1, 1))
    for kw, msg in [(dict(method=dict(name="exponential", R=3)), "top-R"),
                    (dict(method="exponential", budget=dict(delta=1e-6)), "pure"),
                    (dict(method="exponential", budget=dict(gap_test=0.1)), "gap")]:
        with pytest.raises(ValueError, match=msg):
            dps.dp_best_subset("y ~ .", df, eps=1, s=2, bounds=(1, 1), **kw)
    with pytest.raises(ValueError, match="gap_check"):
        dps.dp_best_subset("y ~ .", df, eps=1, s=2, method=dps.Method("exponential", gap_check="assume"), bounds=(1, 1))


def test_exponential_refuses_large_problems_before_scoring(monkeypatch):
    def fail(*a, **k):
        raise AssertionError("scored although C(p, s) is over the limit")

    monkeypatch.setattr(expo, "score_all", fail)
    monkeypatch.setattr(expo, "make_scorer", fail)
    df = frame(n=20, p=40)  # C(40, 6) = 3,838,380
    with pytest.raises(ValueError, match=r"C\(40, 6\) = 3,838,380 is beyond"):
        dps.dp_best_subset("y ~ .", df, eps=1, s=6, method="exponential", bounds=(1, 1))
