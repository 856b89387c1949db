"""The observation intervals' residual variance (issue 37): a small release of its own.

``get_prediction(new).summary_frame()['obs_ci_*']`` adds to the mean's error one
observation's error ``sigma_U z``, ``sigma_U`` an upper confidence bound on the residual
standard deviation at the released coefficients, from Laplace noise on the residual sum
of squares (dpsubset/inference/prediction.py). These tests fail if the bound stops holding
at its level, if it is far looser than the noise requires, if the stage leaves the ledger,
or if the observation interval stops reading it.
"""
import numpy as np
import pandas as pd
import pytest

import dpsubset as dps
from dpsubset.inference.prediction import (RESIDUAL_LEVEL, RESIDUAL_SHARE, release_residual_variance,
                                           residual_sensitivity)

pytestmark = pytest.mark.filterwarnings("ignore::dpsubset.LowUtilityWarning")


def _rows(n, sd, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.uniform(-1, 1, (n, 2))])
    coef = np.array([0.1, 0.3, -0.2])
    y = np.clip(X @ coef + sd * rng.standard_normal(n), -1.0, 1.0)
    Z = np.column_stack([X, y])
    return Z.T @ Z, coef, float(np.mean((y - X @ coef) ** 2))


@pytest.mark.parametrize("n, eps", [(400, 0.5), (5000, 0.5), (5000, 5.0)])
def test_the_bound_holds_at_its_level_and_is_not_loose(n, eps):
    ZtZ, coef, ms = _rows(n, 0.2)
    rng = np.random.default_rng(n)
    true_var = ms * n / (n - 3)
    out = [release_residual_variance(ZtZ, coef, [1.0, 1.0, 1.0], 1.0, n, eps=eps, rng=rng) for _ in range(3000)]
    ups = np.array([o.sd_upper for o in out])
    # fails at most 1 - level of the time (the noise's exact grid law): 3000 draws, 1 % -> at most ~1.6 %
    assert np.mean(ups < np.sqrt(true_var)) <= (1 - RESIDUAL_LEVEL) + 0.006
    # and is not looser than its noise makes it: the median excess over the truth in variance
    # units is the one-sided 99 % Laplace quantile, scale ln(50), over n - d
    scale = residual_sensitivity(coef, [1.0, 1.0, 1.0], 1.0) / eps
    excess = np.median(ups ** 2 - true_var) * (n - 3)
    assert excess == pytest.approx(scale * np.log(50.0), rel=0.15)
    assert all(o.scale == pytest.approx(scale) and o.eps == eps for o in out)


def test_the_bound_is_floored_and_capped_by_the_public_bound():
    ZtZ, coef, _ = _rows(50, 0.2)
    rng = np.random.default_rng(1)
    ups = np.array([release_residual_variance(ZtZ, coef, [1.0] * 3, 1.0, 50, eps=1e-3, rng=rng).sd_upper
                    for _ in range(200)])
    assert (ups <= 2.0 + 1e-12).all() and (ups >= 0.01 - 1e-12).all()
    assert np.mean(np.isclose(ups, 2.0)) > 0.4  # at eps 1e-3 on 50 rows: nothing can be told


def _frame(n, seed, sd=0.5):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.uniform(-1, 1, (n, 5)), columns=[f"x{j}" for j in range(5)])
    df["y"] = 0.3 + df[["x0", "x1", "x2"]].to_numpy() @ np.array([0.5, -0.5, 0.4]) + sd * rng.standard_normal(n)
    return df


def test_the_stage_is_in_the_ledger_and_the_observation_interval_reads_it():
    res = dps.dp_best_subset("y ~ .", _frame(20000, 0), eps=8.0, s=3, bounds=(1.0, 3.0), inference=True,
                             random_state=3)
    stages = {st["stage"]: st["eps"] for st in res.privacy.stages}
    moments = 8.0 * 0.2 * 0.5
    assert stages["inference: residual variance"] == pytest.approx(RESIDUAL_SHARE * moments)
    assert stages["inference: second moments"] == pytest.approx((1 - RESIDUAL_SHARE) * moments)
    assert res.privacy.eps == pytest.approx(8.0)
    # at n eps = 160,000 the bound is close to the noise (sd 0.5): the 95 % observation interval
    # is about 2 x 1.96 x 0.5 = 1.96 wide, more than that but not much more
    new = _frame(30, 1).drop(columns=["y"])
    frame = res.get_prediction(new).summary_frame(alpha=0.05)
    width = frame["obs_ci_upper"] - frame["obs_ci_lower"]
    # (the lower end allows for the sample's own residual spread at n = 20,000: about 0.5 %)
    assert ((width > 1.96 * 0.97) & (width < 1.96 * 1.3)).all(), width
    # a two-class response has no residual variance: no stage, no observation interval
    df = _frame(2000, 2)
    df["y"] = (df["y"] > 0.3).astype(int)
    logit = dps.dp_best_subset("y ~ .", df, eps=8.0, s=3, loss="logistic", bounds=dps.Bounds(x=1.0),
                               inference=True, random_state=3)
    assert "inference: residual variance" not in {st["stage"] for st in logit.privacy.stages}
