"""The selection's radius from the released fit of the best support (issue 36, fourth pass;
dpsubset/selection/explained.py, dpsubset.defaults.fitted_select_radius, docs/methods/centring.md)."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpsubset as dps
from dpsubset import Bounds, defaults

P = 5


def survey(n=20000, signal=0.3, seed=0):
    """Five columns in honest codebook intervals, a response whose R^2 grows with ``signal``."""
    rng = np.random.default_rng(seed)
    X = rng.gamma(3.0, 1.0, (n, P))
    y = 10 + signal * (X[:, 0] - 2 * X[:, 1]) + rng.normal(0, 1, n)
    data = pd.DataFrame(X, columns=[f"x{j}" for j in range(P)]).assign(y=y)
    bounds = Bounds(x={f"x{j}": (0.0, 40.0) for j in range(P)}, y=(-20.0, 60.0))
    return data, bounds


def release(data, bounds, eps=20.0, s=2, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dps.dp_best_subset("y ~ .", data, eps=eps, s=s, bounds=bounds, random_state=3, **kw)


def mapped(row):
    """(sd, level, fitted sd) of a centring record's row, in mapped units."""
    half = max(row.box_hi - row.centre, row.centre - row.box_lo)
    return row.sd / half, (row["mean"] - row.centre) / half, row.fitted_sd / half


def test_anyone_holding_the_release_recomputes_the_radius():
    data, bounds = survey()
    res = release(data, bounds)
    y_sd, y_level, fit_sd = mapped(res.centring.loc["y"])
    assert np.isfinite(fit_sd) and 0 < fit_sd <= y_sd
    assert res.centring.drop(index="y")["fitted_sd"].isna().all()  # the response's row only
    # every centred column maps into [-1, 1]: the default reads bound 1 for each
    r_default = defaults.default_radius([1.0] * P, 1.0, 2, [1.0], n=res.nobs, eps=res.eps_select)
    assert res.r == pytest.approx(defaults.fitted_select_radius(r_default, fit_sd, y_sd, y_level, res.nobs,
                                                                res.eps_select), rel=1e-12)
    report = str(res.privacy)
    assert "selection r = " in report and "(from the released fit of the best support)" in report
    notes = " ".join(res.summary().as_text().split())
    assert "the spread of the best support's fitted values released too" in notes


def test_with_a_split_the_ramp_reads_the_selections_rows():
    """Refit(split=True): the fit reads every row (as the centring does) and the rule's ramp
    reads the selection's part of the rows."""
    from dpsubset.inference.split import split_sizes
    data, bounds = survey(n=9000)
    res = release(data, bounds, eps=12.0, refit=dps.Refit(split=True))
    n_sel, _ = split_sizes(res.nobs)
    y_sd, y_level, fit_sd = mapped(res.centring.loc["y"])
    r_default = defaults.default_radius([1.0] * P, 1.0, 2, [1.0], n=n_sel, eps=res.eps_select)
    assert res.r == pytest.approx(defaults.fitted_select_radius(r_default, fit_sd, y_sd, y_level, n_sel,
                                                                res.eps_select), rel=1e-12)


def test_the_ledger_spends_the_fit_share_of_the_centring():
    data, bounds = survey()
    res = release(data, bounds, eps=10.0)
    stages = [(st["stage"], st["mechanism"], st["eps"]) for st in res.privacy.stages]
    means = [e for st, m, e in stages if st == "centring" and "explains" not in m]
    fit = [e for st, m, e in stages if st == "centring" and "explains" in m]
    # the means and spreads keep their 0.1 eps; the fit's 0.02 eps comes on top
    assert means == [pytest.approx(0.1 * 10.0)] and fit == [pytest.approx(0.02 * 10.0)]
    assert res.eps_select == pytest.approx(0.44 * 10.0) and res.eps_refit == pytest.approx(0.44 * 10.0)
    assert sum(e for _, _, e in stages) == pytest.approx(10.0)


@pytest.mark.parametrize("kw", [{"centre": {"fit_share": 0.0}}, {"loss": "huber"},
                                {"ball": dps.Ball(r_select=0.7)}])
def test_no_fit_released_where_it_is_not_used(kw):
    """Without a fit share, for a loss other than least squares, or with the selection's radius
    given: nothing released for it and nothing taken for it (the centring spends its 0.1 eps on
    means and spreads, the stages share the rest), and the selection keeps its radius."""
    data, bounds = survey(n=4000)
    res = release(data, bounds, eps=10.0, **kw)
    assert not any("explains" in st["mechanism"] for st in res.privacy.stages)
    assert sum(st["eps"] for st in res.privacy.stages if st["stage"] == "centring") == pytest.approx(1.0)
    assert res.centring["fitted_sd"].isna().all()
    assert "from the released fit" not in str(res.privacy)


def test_a_weak_signal_gets_a_smaller_ball_and_a_strong_one_a_larger():
    """At n eps above the ramp: a response the best support barely explains gets a ball well
    below the default, one it explains almost wholly a ball above it."""
    weak, bounds = survey(signal=0.05)
    strong, _ = survey(signal=3.0)
    r_weak, r_strong = release(weak, bounds).r, release(strong, bounds).r
    r_default = release(weak, bounds, centre={"fit_share": 0.0}).r
    assert r_weak < 0.6 * r_default < r_default < r_strong


def test_the_rule_has_no_jump_in_n_eps_and_a_floor():
    r_default, fit_sd, y_sd = 1.0, 0.5, 0.6
    at = [defaults.fitted_select_radius(r_default, fit_sd, y_sd, 0.0, n, 1.0)
          for n in (defaults.SUPPORT_RADIUS_START * (1 - 1e-9), defaults.SUPPORT_RADIUS_START,
                    defaults.SUPPORT_RADIUS_FULL * (1 - 1e-9), defaults.SUPPORT_RADIUS_FULL)]
    assert at[0] == pytest.approx(at[1]) and at[2] == pytest.approx(at[3])
    assert at[0] == r_default and at[3] == pytest.approx(defaults.FIT_SPREAD_FACTOR * fit_sd)
    # no explained spread: the ball of one response spread, not a ball of radius 0
    assert defaults.fitted_select_radius(r_default, 0.0, 0.3, 0.0, 10**5, 1.0) == pytest.approx(0.3)
    # no rule (no released fit): the default
    assert defaults.fitted_select_radius(r_default, math.nan, 0.3, 0.0, 10**6, 10.0) == r_default


def test_the_fitted_radius_grows_without_bound_with_the_budget():
    """Above FIT_GROWTH_START the rule grows like (n eps)^(1/3), continuously, so that a best
    support whose collinear columns need a large ball is reached at a large enough budget
    (consistency), while the default, growing too, still caps it from above."""
    start = defaults.FIT_GROWTH_START
    rule = [defaults.fitted_select_radius(100.0, 0.1, 0.3, 0.0, n, 1.0)
            for n in (start, start * (1 + 1e-9), 8 * start, 1000 * start)]
    assert rule[0] == pytest.approx(0.4) and rule[1] == pytest.approx(0.4)
    assert rule[2] == pytest.approx(0.8) and rule[3] == pytest.approx(4.0)


def test_the_noise_makes_the_fitted_spread_larger_not_smaller():
    """The upper confidence bound: at the same released value, more noise gives a larger spread,
    never above the response's."""
    a = defaults.fitted_sd(0.3, 0.004, 0.0)
    b = defaults.fitted_sd(0.3, 0.004, 0.002)
    assert a < b <= 0.3
    assert defaults.fitted_sd(0.3, -1.0, 0.0) == 0.0 and defaults.fitted_sd(0.3, 5.0, 0.0) == 0.3


def test_fit_share_is_checked_before_the_data():
    data, bounds = survey(n=100)
    with pytest.raises(ValueError, match=r"fit_share.*\[0, 1\)"):
        release(data, bounds, centre={"fit_share": 1.5})
    with pytest.raises(ValueError, match=r"share \+ fit_share = 0.6"):
        release(data, bounds, centre={"share": 0.3, "fit_share": 0.3})


def test_without_a_centred_response_the_columns_get_the_fits_share():
    """The fit is planned from public settings; where the response turns out not to be centred
    (here: centre={'response': False}) nothing is released for it and the means and spreads
    spend the whole stage."""
    data, bounds = survey(n=4000)
    res = release(data, bounds, eps=10.0, centre={"response": False})
    assert not any("explains" in st["mechanism"] for st in res.privacy.stages)
    assert sum(st["eps"] for st in res.privacy.stages if st["stage"] == "centring") == pytest.approx(1.2)
