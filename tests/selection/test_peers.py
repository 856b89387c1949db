"""The DP peers method="peeling" and method="frank_wolfe": algorithms, accounting, API and CLI."""
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpsubset as dps
from dpsubset.interfaces.cli import main
from dpsubset.selection.base import METHODS
from dpsubset.selection.baselines.composition import (calibrate_steps, composed_privacy, resolve_delta,
                                                       zcdp_rho_for)
from dpsubset.selection.baselines.frank_wolfe import (default_iterations, frank_wolfe_plan,
                                                      private_frank_wolfe, support_of)
from dpsubset.selection.baselines.peeling import noisy_iht, peel, peeling_plan, peeling_weights
from dpsubset.studies.simulate import make_regression


def easy_data(n=3000, p=20, s=3, seed=0, intercept=0.0):
    X, y, true = make_regression(n, p, s, rho=0.1, snr=20, random_state=seed)
    return np.clip(X, -1, 1), np.clip(y + intercept, -2, 2), set(true.tolist())


def frame(n=4000, p=12, s=3, seed=1):
    df, true = make_regression(n, p, s, rho=0.1, snr=10, random_state=seed, as_frame=True)
    return df, true


def fit(df, method, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dps.dp_best_subset("y ~ .", df, s=3, method=method, bounds=(2.0, 3.0),
                                  **{"eps": 50.0, "random_state": 0, **kw})


# --------------------------------------------------------------------------- accounting
@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0, 50.0])
@pytest.mark.parametrize("delta", [1e-4, 1e-6, 1e-10])
@pytest.mark.parametrize("steps", [3, 20, 300])
def test_calibrated_noise_meets_the_budget_by_the_theorem_it_names(eps, delta, steps):
    weights = np.linspace(1.0, 2.0, steps)
    noise = calibrate_steps(weights, eps, delta)
    got = composed_privacy(weights, noise.scale, delta)
    if noise.guarantee == "pure":
        assert noise.delta == 0 and got["basic"] <= eps * (1 + 1e-12)
    else:
        assert noise.delta == delta and got["zcdp"] <= eps * (1 + 1e-12)
        assert got["basic"] > eps  # zCDP was chosen because basic composition needed more noise
    # and the scale is the smaller of the two: 1 % less noise breaks both theorems
    tighter = composed_privacy(weights, 0.99 * noise.scale, delta)
    assert tighter["basic"] > eps and tighter["zcdp"] > eps


def test_basic_composition_wins_exactly_below_the_public_threshold():
    # basic is chosen iff T <= (sqrt(L + eps) + sqrt(L))^2 / 2 for T equal steps
    delta, eps = 1e-6, 1.0
    L = math.log(1 / delta)
    edge = (math.sqrt(L + eps) + math.sqrt(L)) ** 2 / 2
    assert calibrate_steps(np.ones(int(edge)), eps, delta).guarantee == "pure"
    assert calibrate_steps(np.ones(int(edge) + 1), eps, delta).guarantee == "approximate"
    assert zcdp_rho_for(eps, delta) + 2 * math.sqrt(zcdp_rho_for(eps, delta) * L) == pytest.approx(eps)


def test_delta_default_is_the_smaller_of_1e6_and_one_over_n_squared():
    assert resolve_delta(None, 100, 1e-6) == 1e-6
    assert resolve_delta(None, 10_000, 1e-6) == 1e-8
    assert resolve_delta(3e-7, 10_000, 1e-6) == 3e-7


def test_peeling_weights_count_every_step():
    w = peeling_weights(4, s=3, k=1, lam=0.5)
    assert len(w) == 4 * (3 + 3 + 1) and np.sum(w == 1.0) == 12 and np.sum(w == 0.5) == 16


# --------------------------------------------------------------------------- algorithms
def test_peel_without_noise_is_the_top_s_and_with_noise_never_repeats():
    v = np.array([0.1, -3.0, 2.0, 0.5, -0.2])
    rng = np.random.default_rng(0)
    assert sorted(peel(v, 2, 1e-12, rng)) == [1, 2]
    for _ in range(50):
        out = peel(v, 4, 10.0, rng)
        assert len(set(out.tolist())) == 4


@pytest.mark.parametrize("intercept", [0.0, 0.7])
def test_noiseless_iteration_recovers_the_truth_with_and_without_an_intercept(intercept):
    X, y, true = easy_data(intercept=intercept)
    n = len(y)
    F = np.ones((n, 1)) if intercept else np.empty((n, 0))
    S, beta = noisy_iht(X, y, F, s=3, r=5.0, step=1.0, iterations=30, scale=0.0, rng=None)
    assert set(S.tolist()) == true
    if intercept:
        assert beta[0] == pytest.approx(intercept, abs=0.1)
    theta = private_frank_wolfe(X, y, F, C=3.0, iterations=60, scale=0.0, rng=None)
    assert set(support_of(theta[F.shape[1]:], 3, np.random.default_rng(0)).tolist()) == true


def test_iterates_stay_in_their_balls_so_that_the_sensitivity_holds():
    X, y, _ = easy_data(n=200)
    rng = np.random.default_rng(1)
    for _ in range(20):
        _, beta = noisy_iht(X, y, np.ones((200, 1)), s=3, r=0.4, step=1.0, iterations=5, scale=1.0, rng=rng)
        assert np.linalg.norm(beta) <= 0.4 * (1 + 1e-12) and np.count_nonzero(beta) <= 4
        theta = private_frank_wolfe(X, y, np.ones((200, 1)), C=0.7, iterations=15, scale=1.0, rng=rng)
        assert np.abs(theta).sum() <= 0.7 * (1 + 1e-12)


def test_support_is_padded_to_s_columns_when_few_vertices_were_chosen():
    rng = np.random.default_rng(0)
    theta = np.zeros(10)
    theta[4] = 0.3
    seen = set()
    for _ in range(200):
        S = support_of(theta, 3, rng)
        assert len(S) == 3 and 4 in S
        seen.update(S.tolist())
    assert seen == set(range(10))  # the padding is spread over every other column


# --------------------------------------------------------------------------- API
@pytest.mark.parametrize("method", ["peeling", "frank_wolfe"])
def test_methods_run_from_python_with_their_guarantee_in_the_report(method):
    assert method in METHODS
    df, true = frame()
    res = fit(df, method)
    assert len(res.support) == 3 and set(res.support) <= set(df.columns)
    rep = res.privacy
    (sel,) = [st for st in rep.stages if st["stage"] == "selection"]
    assert sel["eps"] == pytest.approx(25.0)   # half of eps by default (the refit takes the rest)
    assert ("Frank-Wolfe" if method == "frank_wolfe" else "peeling") in sel["mechanism"]
    assert rep.guarantee in ("pure", "approximate")
    assert (rep.guarantee == "pure") == (rep.delta == 0)
    assert rep.sensitivity > 0
    # at eps = 50 and n = 4000 the peers find the truth
    assert set(res.support) == set(true)


def test_peeling_spends_the_default_delta_and_a_given_one():
    df, _ = frame()
    ten = {"iterations": 10}
    res = fit(df, dps.Method("peeling", **ten), refit=False, eps=2.0)
    assert res.privacy.guarantee == "approximate"
    assert res.privacy.delta == pytest.approx(1 / 4000 ** 2)
    res = fit(df, dps.Method("peeling", **ten), refit=False, eps=2.0, budget=dps.Budget(delta=1e-9))
    assert res.privacy.delta == pytest.approx(1e-9)
    # a large eps: basic composition needs less noise, and the release is pure
    res = fit(df, "peeling", refit=False, eps=50.0)
    assert res.privacy.guarantee == "pure" and res.privacy.delta == 0


def test_frank_wolfe_default_is_pure_and_many_steps_make_it_approximate():
    df, _ = frame()
    assert fit(df, "frank_wolfe", refit=False).privacy.guarantee == "pure"
    res = fit(df, dps.Method("frank_wolfe", iterations=200), refit=False)
    assert res.privacy.guarantee == "approximate" and "zCDP" in res.privacy.stages[0]["mechanism"]


def test_plans_use_public_numbers_only():
    class Public:  # no rows: the plans must not need them
        x_bounds, forced_bounds, b_y, n = np.full(5, 0.5), np.ones(1), 0.5, 1000
    eta, lam, noise = peeling_plan(Public, 2, 0.3, 1.0, dict(step=1.0, iterations=5, delta=None))
    assert eta == 1.0 and lam == pytest.approx(2 * 1.0 * 1.0 * (0.5 + 0.3 * math.sqrt(1.5)) / 1000)
    C, Delta, noise = frank_wolfe_plan(Public, 2, 0.3, 1.0, dict(iterations=default_iterations(2),
                                                                radius=None, delta=None))
    A = 0.3 * math.sqrt(1.5)              # the l2 ball's largest prediction, r sqrt(B_s)
    assert C == pytest.approx(A) and Delta == pytest.approx(2 * A * (0.5 + A) / 1000)


@pytest.mark.parametrize("method,options,msg", [
    ("peeling", {"iterations": 0}, "iterations"),
    ("peeling", {"step": -1}, "step"),
    ("peeling", {"R": 3}, "does not use R"),
    ("peeling", {"blocks": 3}, "unknown options"),
    ("frank_wolfe", {"radius": 0}, "radius"),
    ("frank_wolfe", {"iterations": 2.5}, "iterations"),
    ("frank_wolfe", {"delta": 0.7}, "delta"),
])
def test_bad_options_are_refused_before_the_data_are_read(method, options, msg):
    with pytest.raises((ValueError, TypeError), match=msg):
        dps.dp_best_subset("y ~ .", pd.DataFrame({"y": ["not", "numbers"]}), eps=1.0, s=1, method=dps.Method(method, **(options or {})),
                           bounds=(1, 1))


def test_other_losses_are_refused():
    df, _ = frame()
    with pytest.raises(ValueError, match="supports loss"):
        dps.dp_best_subset("y ~ .", df, eps=1.0, s=2, method="peeling", loss="huber", bounds=(2, 3))


# --------------------------------------------------------------------------- CLI
@pytest.mark.parametrize("method", ["peeling", "frank_wolfe"])
def test_cli_runs_the_peers_with_their_options(tmp_path, capsys, method):
    df, _ = frame(n=2000)
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    option = "iterations=12" if method == "peeling" else "radius=1.5"
    assert main(["fit", str(path), "--formula", "y ~ .", "--eps", "20", "--s", "3", "--bounds", "2", "3",
                 "--method", f"{method},{option}", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "Privacy report" in out
    assert ("12 iterations" in out) if method == "peeling" else ("radius 1.5" in out)
