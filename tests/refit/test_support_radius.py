"""The refit's radius for the released support (issue 36): least squares on a centred design
takes the larger of the public default and what the released spreads and means say the
support's least-squares coefficients need (dpsubset.defaults.support_refit_radius)."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpsubset as dps
from dpsubset import Bounds
from dpsubset.defaults import default_radius, refit_radius_weight, support_refit_radius
from dpsubset.design.centring import mapped_moments


def test_rule_bounds_a_simple_regressions_slope_and_the_intercept():
    # one column explaining everything: slope sd(y) / sd(x) in mapped units
    assert support_refit_radius(0.3, 0.0, [0.1], [0.0], spread_factor=1.0) == pytest.approx(3.0)
    # the smallest spread sets the slope bound; off-centre levels add to the intercept
    r = support_refit_radius(0.3, 0.2, [0.3, 0.1], [0.0, -0.5], spread_factor=1.0)
    assert r == pytest.approx(math.hypot(0.2 + 3.0 * 0.5, 3.0))
    # no rule where a released spread is zero or missing (a noisy release)
    for args in ((0.0, 0.0, [0.1], [0.0]), (0.3, 0.0, [0.0], [0.0]), (0.3, 0.0, [np.nan], [0.0]),
                 (0.3, 0.0, [], [])):
        assert math.isnan(support_refit_radius(*args))


def test_the_least_squares_slope_lies_inside_the_rule_on_data():
    """On data, the least-squares coefficients of a support (mapped units) lie inside the
    rule's radius computed from the exact moments, for uncorrelated columns."""
    rng = np.random.default_rng(0)
    n = 20_000
    X = rng.uniform(-1, 1, (n, 3)) * np.array([1.0, 0.2, 0.05])
    y = X @ np.array([0.3, 1.0, 4.0]) + 0.1 * rng.standard_normal(n) + 0.2
    A = np.column_stack([np.ones(n), X])
    coef = np.linalg.lstsq(A, y, rcond=None)[0]
    r = support_refit_radius(y.std(), y.mean(), X.std(axis=0), X.mean(axis=0), spread_factor=1.0)
    assert np.linalg.norm(coef) <= r


def skewed_survey(n=12_000, seed=0):
    """A skewed response in a tight codebook (0, 10): its released box [0, about 8] cannot
    be centred at its mean without a map wider than the codebook's, so it maps by the box's
    midpoint, with a level near -0.6 and a spread near 0.5 in mapped units (diamonds' price
    was such a response): the support's radius exceeds the default one."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1, n)
    y = np.exp(1.0 * x + 0.2 * rng.normal(0, 1, n))
    data = pd.DataFrame({"x": x, "z": rng.normal(0, 1, n), "w": rng.normal(0, 1, n), "y": y})
    bounds = Bounds(x={"x": (-10.0, 10.0), "z": (-10.0, 10.0), "w": (-10.0, 10.0)}, y=(0.0, 10.0))
    return data, bounds


def release(data, bounds, eps=20.0, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dps.dp_best_subset("y ~ .", data, eps=eps, s=1, bounds=bounds, random_state=1, **kw)


def recomputed(res, cols):
    """The support's radius from the released record alone (what anyone holding it can do)."""
    cen = res.centring
    half = {c: max(cen.loc[c, "box_hi"] - cen.loc[c, "centre"], cen.loc[c, "centre"] - cen.loc[c, "box_lo"])
            for c in cen.index}
    sd = {c: cen.loc[c, "sd"] / half[c] for c in cen.index}
    level = {c: (cen.loc[c, "mean"] - cen.loc[c, "centre"]) / half[c] for c in cen.index}
    return support_refit_radius(sd["y"], level["y"], [sd[c] for c in cols], [level[c] for c in cols])


def test_release_refits_in_the_supports_ball_and_anyone_can_recompute_it():
    data, bounds = skewed_survey()
    res = release(data, bounds)
    assert res.support == ["x"]
    assert refit_radius_weight(len(data), res.eps_refit) == 1.0
    # the default rule alone (bounds, s, n eps) gives a smaller ball
    r_default = default_radius([1.0] * 3, 1.0, 1, [1.0], n=len(data), eps=res.eps_refit, stage="refit")
    r_support = recomputed(res, ["x"])
    assert r_support > 1.2 * r_default
    assert res.r_refit == pytest.approx(r_support)
    cen = res.centring
    assert cen.loc["y", "centre"] == pytest.approx((cen.loc["y", "box_lo"] + cen.loc["y", "box_hi"]) / 2)
    # the report says where the refit's radius came from
    assert "refit r = " in str(res.privacy) and "grown to the released support's spreads" in str(res.privacy)
    assert "released support" not in str(release(data, bounds, centre=False).privacy)


def test_rule_ramps_in_with_the_refits_n_eps():
    """No jump: between the two n eps the refit takes a part of the support's radius."""
    data, bounds = skewed_survey()
    res = release(data, bounds, eps=12.0)   # n eps_refit = 12,000 * 5.4 = 64,800: w = 0.296
    w = refit_radius_weight(len(data), res.eps_refit)
    assert 0 < w < 1
    r_default = default_radius([1.0] * 3, 1.0, 1, [1.0], n=len(data), eps=res.eps_refit, stage="refit")
    assert res.r_refit == pytest.approx(r_default + w * (recomputed(res, ["x"]) - r_default))
    small = release(data.iloc[:2000], bounds, eps=12.0)   # 10,800: the default
    r_small = default_radius([1.0] * 3, 1.0, 1, [1.0], n=2000, eps=small.eps_refit, stage="refit")
    assert small.r_refit == pytest.approx(r_small)
    grid = [refit_radius_weight(1, x) for x in np.linspace(0, 2e5, 2001)]
    assert np.all(np.diff(grid) >= 0) and np.max(np.abs(np.diff(grid))) <= 2e5 / 2000 / 5e4 + 1e-12


def test_rule_is_off_where_the_user_chose_a_radius_or_nothing_was_centred():
    data, bounds = skewed_survey()
    assert release(data, bounds, ball=dps.Ball(r_refit=0.7)).r_refit == 0.7
    assert release(data, bounds, ball=dps.Ball(r=0.9)).r_refit == 0.9
    res = release(data, bounds, centre=False)
    r_default = default_radius([1.0] * 3, 1.0, 1, [1.0], n=len(data), eps=res.eps_refit, stage="refit")
    assert res.r_refit == pytest.approx(r_default)


def test_mapped_moments_read_the_record_only():
    data, bounds = skewed_survey()
    res = release(data, bounds)
    spec = res._predictor
    sds, levels = mapped_moments(spec.centring, spec.column_maps, ["Intercept", "x", "y", "not_a_column"])
    assert np.all(np.isfinite(sds[:2])) and np.all(sds[:2] > 0) and math.isnan(sds[2]) and math.isnan(levels[2])
    # x: N(0, 1) in a box of about +-3.3 released sds, centred at its mean
    assert sds[0] == pytest.approx(1 / 3.3, rel=0.1) and abs(levels[0]) < 0.01
    # y: a lognormal's sd (about 2.2) over the half-width of its box, centred at the midpoint
    assert 0.3 < sds[1] < 0.7 and -0.8 < levels[1] < -0.4


def test_a_rare_indicator_cannot_blow_up_the_ball():
    """A support with a very rare indicator (0.2 % of rows) asks for a ball many times the
    default; the refit takes at most SUPPORT_RADIUS_CAP times the default, so its noise does
    not swamp the other coefficients."""
    from dpsubset.defaults import SUPPORT_RADIUS_CAP
    data, bounds = skewed_survey()
    rng = np.random.default_rng(5)
    data = data.assign(rare=(rng.random(len(data)) < 0.002).astype(float))
    data["y"] = np.clip(data["y"] + 3.0 * data["rare"], 0, 10)
    bounds = Bounds(x=dict(bounds.x, rare=(0.0, 1.0)), y=bounds.y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = dps.dp_best_subset("y ~ x + z + w + rare", data, eps=20.0, s=1, bounds=bounds, random_state=1,
                                 keep=["rare"])
    assert res.support == ["x"]
    r_default = default_radius([1.0] * 3, 1.0, 1, [1.0, 1.0], n=len(data), eps=res.eps_refit, stage="refit")
    asked = recomputed(res, ["rare", "x"])
    assert asked > SUPPORT_RADIUS_CAP * r_default          # what the rare indicator asks for
    assert res.r_refit == pytest.approx(SUPPORT_RADIUS_CAP * r_default)


def test_a_record_pickled_before_the_mean_and_sd_were_kept_still_reads():
    """A ColumnCentre unpickled from an older release has no mean or sd of its own: it reads
    the class defaults (NaN), so the table shows NaN and the support's radius has no rule
    (the refit keeps its default)."""
    from dpsubset.design.centring import ColumnCentre, centring_frame
    old = ColumnCentre(name="x", codebook=(0.0, 10.0), box=(0.0, 5.0), centre=2.0, tightened=True)
    object.__delattr__(old, "sd")
    object.__delattr__(old, "mean")
    frame = centring_frame([old])
    assert math.isnan(frame.loc["x", "sd"]) and math.isnan(frame.loc["x", "mean"])
    sds, levels = mapped_moments([old], {"x": (2.0, 3.0)}, ["x"])
    assert math.isnan(sds[0]) and math.isnan(levels[0])
    assert math.isnan(support_refit_radius(0.3, 0.0, sds, levels))
