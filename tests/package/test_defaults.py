"""The public default radius and ridge (dpsubset/defaults.py) as dp_best_subset uses them."""
import math

import numpy as np
import pandas as pd
import pytest

import dpsubset as dps
from dpsubset.defaults import DEFAULT_LAM, default_radius
from dpsubset.privacy.sensitivity import score_sensitivity


def _frame(seed=0, n=200, p=6, scale=1.0):
    rng = np.random.default_rng(seed)
    X = scale * rng.uniform(-1, 1, (n, p))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
    df["y"] = X[:, 0] - X[:, 1] + 0.3 * rng.standard_normal(n)
    return df


@pytest.mark.parametrize("formula,forced,expected", [
    ("y ~ 0 + .", [], 0.5 / (0.5 * math.sqrt(2))),         # b_y / (b_x sqrt(s))
    ("y ~ .", [1.0], 0.5 / math.sqrt(1 + 2 * 0.25)),       # the intercept's bound counts
])
def test_default_radius_makes_the_largest_prediction_the_response_bound(formula, forced, expected):
    res = dps.dp_best_subset(formula, _frame(), eps=2.0, s=2, bounds=(0.5, 0.5), random_state=0)
    assert res.r == pytest.approx(expected)
    assert res.lam == DEFAULT_LAM == 1.0
    # so Delta = (b_y + b_y)^2 / (2 n) whatever s and the bounds
    Delta = score_sensitivity([0.5] * 6, 0.5, res.r, 2, forced, 200)
    assert Delta == pytest.approx(2 * 0.5 ** 2 / 200)
    assert res.privacy.sensitivity == pytest.approx(Delta)


def test_defaults_read_no_data():
    """The same public bounds give the same r and lam, whatever the data (and n)."""
    a = dps.dp_best_subset("y ~ .", _frame(0), eps=2.0, s=3, bounds=(2.0, 3.0), random_state=0)
    b = dps.dp_best_subset("y ~ .", _frame(5, n=400, scale=0.1), eps=2.0, s=3, bounds=(2.0, 3.0),
                           random_state=0)
    assert a.r == b.r and a.lam == b.lam


def test_interval_bounds_map_to_one_over_sqrt_s_plus_one():
    bounds = dps.Bounds(x={f"x{j}": (-1, 1) for j in range(6)}, y=(-4, 4))
    res = dps.dp_best_subset("y ~ .", _frame(), eps=2.0, s=3, bounds=bounds, random_state=0)
    assert res.r == pytest.approx(1 / math.sqrt(3 + 1))


def test_classification_losses_allow_a_log_odds_of_six():
    df = _frame()
    df["y"] = df["y"] > 0
    res = dps.dp_best_subset("y ~ 0 + .", df, eps=2.0, s=2, bounds=(0.5, 7.0), loss="logistic",
                             random_state=0)
    # the refit's ball (issue 27: the selection's is a = 2, tests/package/test_stage_settings.py)
    assert res.r_refit == pytest.approx(6.0 / (0.5 * math.sqrt(2)))


def test_explicit_values_win():
    res = dps.dp_best_subset("y ~ .", _frame(), eps=2.0, s=2, bounds=(0.5, 0.5), ball=dps.Ball(r=1.1, lam=120),
                             random_state=0)
    assert res.r == 1.1 and res.lam == 120


def test_default_radius_rejects_unusable_bounds():
    with pytest.raises(ValueError, match="pass r= explicitly"):
        default_radius([0.0, 0.0], 1.0, 1)
    assert default_radius([0.5] * 100, 0.5, 5) == pytest.approx(0.4472135955)


@pytest.mark.parametrize("stage", ["select", "refit"])
def test_the_radius_and_ridge_have_no_jump_as_n_eps_grows(stage):
    # issue 36 suspected a jump in the defaults at n eps = 20,000 (the radius's growth
    # start) and 10,000 (the ridge's decay start): both are continuous and monotone in n eps
    from dpsubset.defaults import RADIUS_GROWTH_START, RIDGE_DECAY_START, default_lam
    x_b, b_y, s = [1.0] * 9, 1.0, 3
    grid = np.unique(np.concatenate([np.geomspace(100, 1e7, 400),
                                     [RADIUS_GROWTH_START, RIDGE_DECAY_START]]))
    r = np.array([default_radius(x_b, b_y, s, [1.0], n=int(v), eps=v / int(v), stage=stage)
                  for v in grid])
    assert np.all(np.diff(r) >= 0)
    for start in (RADIUS_GROWTH_START, RIDGE_DECAY_START):
        below, above = start * (1 - 1e-9), start * (1 + 1e-9)
        r_lo, r_hi = (default_radius(x_b, b_y, s, [1.0], n=1000, eps=v / 1000, stage=stage)
                      for v in (below, above))
        assert abs(r_hi / r_lo - 1) < 1e-8
        if stage == "select":
            l_lo, l_hi = (default_lam(1000, v / 1000) for v in (below, above))
            assert abs(l_hi / l_lo - 1) < 1e-8
    if stage == "select":
        lam = np.array([default_lam(int(v), v / int(v)) for v in grid])
        assert np.all(np.diff(lam) <= 1e-15)


def test_the_examples_in_the_defaults_module_run():
    """The docstrings' examples of dpsubset.defaults are what the functions return (one of them
    had drifted when REFIT_SPREAD_FACTOR went from 2 to 1)."""
    import doctest

    import dpsubset.defaults as module
    result = doctest.testmod(module)
    assert result.attempted >= 10 and result.failed == 0
