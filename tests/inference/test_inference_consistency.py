"""One construction for every reported number (issue 37): the estimate lies inside each of its
intervals, the intervals are nested in alpha, ``p < alpha`` exactly when the ``1 - alpha``
interval leaves out 0, and the statistic is the p-value's normal score.

Constructed cases where the old rules broke each of these: a bootstrap bias larger than the
interval's half-width (the estimate fell outside its basic interval), a release on the sphere
whose least-squares end clashes with the refit's finite end (the intervals were not nested,
so the bisected p-value of 1 contradicted a 90 % interval that left out 0), a logistic
release on the sphere with open ends, and a real release on the sphere.
"""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import dpsubset as dps
from dpsubset.inference.intervals import (ALPHA_GRID, BeyondTheBall, CoefficientInference, _raw_intervals,
                                          grid_level)

pytestmark = pytest.mark.filterwarnings("ignore::dpsubset.LowUtilityWarning",
                                        "ignore::dpsubset.BallBindsWarning")

#: Levels on and off the grid, the conventional ones among them.
ALPHAS = (1e-7, 0.001, 0.01, 0.0123456, 0.05, 0.0505, 0.1, 0.1000001, 0.2, 0.5, 0.77, 0.999, 0.9995)


def _assert_one_construction(inf):
    p = inf.pvalues.to_numpy()
    t = inf.tvalues.to_numpy()
    np.testing.assert_allclose(t, np.sign(inf.estimate) * stats.norm.isf(np.maximum(p, 5e-7) / 2.0))
    assert ((p >= 0.0) & (p <= 1.0)).all()
    previous = None
    for alpha in ALPHAS:
        ci = inf.conf_int(alpha)
        lo, hi = ci[0].to_numpy(), ci[1].to_numpy()
        assert ((lo <= inf.estimate) & (inf.estimate <= hi)).all(), (alpha, lo, inf.estimate, hi)
        excludes = ~((lo <= 0.0) & (0.0 <= hi))
        np.testing.assert_array_equal(p < alpha, excludes, err_msg=f"alpha={alpha}, p={p}, {lo}, {hi}")
        # |t| > z(1 - alpha/2) exactly when p < alpha (up to the normal quantile's rounding)
        if previous is not None:  # nested: a larger alpha never widens an end
            assert (lo >= previous[0]).all() and (hi <= previous[1]).all()
        previous = (lo, hi)
    return p


def test_an_interval_that_left_out_its_estimate_now_holds_it():
    """A release on the sphere whose ray may point either way (both ends open) takes least
    squares' interval, which may lie far from the shrunk release (a real case: -26.4 with
    [-158597, -1779]); inside the ball, errors skewed enough leave the estimate out of the
    wide-alpha intervals. Both now hold the estimate, and nothing else moves."""
    rng = np.random.default_rng(3)
    errors = 0.05 * rng.standard_normal((2000, 2))
    directions = np.where(np.arange(200) % 2, 1.0, -1.0)[:, None] * np.ones((1, 2))
    far, far_err = np.array([-30.0, 0.4]), np.column_stack([rng.normal(0, 5, 2000), rng.normal(0, 0.05, 2000)])
    est = np.array([-0.2, 0.06])
    inf = CoefficientInference(names=["a", "b"], estimate=est, errors=errors, on_sphere=True,
                               beyond=BeyondTheBall(directions, far, far_err))
    lo, hi = _raw_intervals(est, errors, [0.05], beyond=inf.beyond)
    assert hi[0, 0] < est[0] and lo[0, 1] > est[1]  # the rule alone leaves the estimate out
    p = _assert_one_construction(inf)
    ci = inf.conf_int()
    assert ci.loc["a", 1] == est[0] and ci.loc["a", 0] == pytest.approx(lo[0, 0])
    assert ci.loc["b", 0] == est[1] and ci.loc["b", 1] == pytest.approx(hi[0, 1])
    assert p[0] == 0.0 and p[1] == 0.0  # both intervals lie on one side of 0
    # inside the ball: errors mostly above 0 with a long left tail (the median above 0 and
    # far above the mean), so at a wide alpha the basic and the centred interval lie below b
    skewed = 1.0 - rng.exponential(1.0, (4000, 1)) ** 3
    inside = CoefficientInference(names=["c"], estimate=np.array([0.5]), errors=skewed)
    lo, hi = _raw_intervals(inside.estimate, skewed, [0.9])
    assert not lo[0, 0] <= 0.5 <= hi[0, 0]
    _assert_one_construction(inside)


def test_a_release_on_the_sphere_whose_ends_clash_is_nested():
    rng = np.random.default_rng(0)
    errors = 0.1 * rng.standard_normal((1000, 2))
    est = np.array([0.5, 0.3])
    directions = np.column_stack([np.ones(200), np.where(np.arange(200) < 10, -1.0, 1.0)])
    # least squares far below the refit's finite end: the two disagree at the small levels
    far, far_err = np.array([0.05, 1.0]), 0.05 * rng.standard_normal((1000, 2))
    inf = CoefficientInference(names=["a", "b"], estimate=est, errors=errors, on_sphere=True,
                               beyond=BeyondTheBall(directions, far, far_err))
    lo, hi = _raw_intervals(est, errors, ALPHA_GRID, beyond=inf.beyond)
    wider = (lo[1:] < lo[:-1] - 1e-12) | (hi[1:] > hi[:-1] + 1e-12)
    assert wider.any()  # the rule alone is not nested here
    _assert_one_construction(inf)
    # b: 5 % of the ray's draws point down, so its lower end opens at alpha <= 0.1 only
    opened = inf.open_ends(0.05)
    assert opened.loc["a"].tolist() == [False, True] and opened.loc["b"].tolist() == [True, True]
    assert inf.open_ends(0.2).loc["b"].tolist() == [False, True]


def test_a_logistic_release_on_the_sphere_with_open_ends():
    rng = np.random.default_rng(1)
    errors = 0.2 * rng.standard_normal((800, 3))
    est = np.array([0.9, -0.6, 0.02])
    directions = np.column_stack([np.ones(200), -np.ones(200), np.where(np.arange(200) % 2, 1.0, -1.0)])
    inf = CoefficientInference(names=["a", "b", "c"], estimate=est, errors=errors, on_sphere=True,
                               beyond=BeyondTheBall(directions))
    p = _assert_one_construction(inf)
    ci = inf.conf_int()
    assert ci.loc["a", 1] == np.inf and ci.loc["b", 0] == -np.inf and np.isinf(ci.loc["c"]).all()
    assert p[2] == 1.0 and inf.tvalues["c"] == 0.0 and p[0] < 0.001


def test_an_alpha_between_levels_takes_the_next_level_up():
    rng = np.random.default_rng(2)
    inf = CoefficientInference(names=["a"], estimate=np.array([0.3]), errors=rng.standard_normal((500, 1)))
    assert ALPHA_GRID[grid_level(0.05)] == pytest.approx(0.05)
    assert ALPHA_GRID[grid_level(0.0505)] == pytest.approx(0.051)
    assert inf.conf_int(0.0505).equals(inf.conf_int(0.051))
    assert ALPHA_GRID[grid_level(0.9995)] == ALPHA_GRID[-1]


@pytest.mark.parametrize("seed", [5, 6])
def test_a_release_on_the_sphere_reports_one_construction(seed):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (3000, 6))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(6)])
    df["y"] = X[:, :3] @ np.array([0.5, -0.5, 0.25]) + 0.5 * rng.standard_normal(3000)
    res = dps.dp_best_subset("y ~ .", df, eps=8.0, s=3, bounds=(1.0, 3.0), inference=True, ball=dps.Ball(r_refit=0.1),
                             random_state=seed)
    assert res.inference.on_sphere
    _assert_one_construction(res.inference)
    # the results object and tidy() show the same numbers over the terms
    td = res.tidy(conf_int=True).set_index("term").loc[res.inference.names]
    np.testing.assert_array_equal(td["p.value"], res.inference.pvalues)
    np.testing.assert_array_equal(td["statistic"], res.inference.tvalues)
    np.testing.assert_array_equal(td["conf.low"], res.inference.conf_int()[0])


def test_alpha_is_checked_with_its_name():
    inf = CoefficientInference(names=["a"], estimate=np.array([0.3]), errors=np.ones((5, 1)))
    for bad in ("a", 0, 1, 1.5, np.nan, True, None):
        with pytest.raises(ValueError, match="alpha: expected a number strictly between 0 and 1"):
            inf.conf_int(bad)


def test_the_deadline_covers_the_inference_stage(monkeypatch):
    """time_limit covers the bootstrap: a deadline that passes after the selection and the
    refit stops the inference stage with a SearchTimeout naming the stage and public
    settings only, and nothing is released. (A Deadline that lets the search run and has
    expired by the time the inference asks stands in for a slow bootstrap.)"""
    from dpsubset import api
    from dpsubset.inference.bootstrap import InferenceTimeout
    from dpsubset.runtime.limits import Deadline

    class PassedAfterTheSearch(Deadline):
        expired = True  # the search asks left() (unlimited here); the bootstrap asks expired

    monkeypatch.setattr(api, "Deadline", PassedAfterTheSearch)
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (400, 5))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(5)])
    df["y"] = X[:, :2] @ np.array([0.5, -0.5]) + 0.5 * rng.standard_normal(400)
    with pytest.raises(dps.SearchTimeout) as info:
        dps.dp_best_subset("y ~ .", df, eps=4.0, s=2, bounds=(1.0, 3.0), inference=True, search=dps.Search(time_limit=30),
                           random_state=1)
    assert isinstance(info.value, InferenceTimeout) and info.value.problem == "inference"
    msg = str(info.value)
    assert "time_limit = 30 s ran out in the inference stage" in msg and "nothing is released" in msg
    assert "n = 400" in msg and "500 refits" in msg
    # the message is the same whatever the data: only public settings in it
    df["y"] = -df["y"]
    with pytest.raises(InferenceTimeout) as again:
        dps.dp_best_subset("y ~ .", df, eps=4.0, s=2, bounds=(1.0, 3.0), inference=True, search=dps.Search(time_limit=30),
                           random_state=1)
    assert str(again.value) == msg


def test_an_expired_deadline_stops_the_bootstrap_between_chunks():
    from dpsubset.inference.bootstrap import InferenceTimeout, bootstrap_refits
    from dpsubset.runtime.limits import Deadline

    calls = []

    def refit(A, y, rng):
        calls.append(1)
        return np.zeros(A.shape[1])

    class Model:
        coef = np.zeros(2)
    with pytest.raises(InferenceTimeout):
        bootstrap_refits(Model(), 10, np.ones(2), 1.0, refit, draws=5, rng=np.random.default_rng(0),
                         deadline=Deadline(0.0))
    assert not calls  # stopped before the first refit
