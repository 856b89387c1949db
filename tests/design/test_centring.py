"""The private centring of the design (issue 36; dpsubset/design/centring.py): when it runs, what
it spends, what it releases, and what a user sees. The privacy audit is
tests/audit/test_centring_audit.py."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import dpsubset as dps
from dpsubset import Bounds
from dpsubset.design.build import build_design
from dpsubset.design.centring import CentreRequest, CentreSettings, check_centre
from dpsubset.privacy.budget import BudgetLedger


def survey(n=3000, seed=0):
    """A survey-like frame: a skewed distance in an honest (0, 30), a rare 0/1 indicator, a
    common one, an off-centre score, and a response far from its interval's centre."""
    rng = np.random.default_rng(seed)
    dist = rng.exponential(1.8, n)
    rare = (rng.random(n) < 0.01).astype(float)
    common = (rng.random(n) < 0.82).astype(float)
    score = rng.normal(70, 5, n)
    y = 3 + 0.5 * dist + 1.0 * common + 0.05 * score + rng.normal(0, 1, n)
    data = pd.DataFrame({"dist": dist, "rare": rare, "common": common, "score": score, "y": y})
    bounds = Bounds(x={"dist": (0.0, 30.0), "rare": (0.0, 1.0), "common": (0.0, 1.0), "score": (0.0, 100.0)},
                    y=(0.0, 60.0))
    return data, bounds


def centred(data, bounds, eps=5.0, settings=None, formula="y ~ ."):
    ledger = BudgetLedger()
    req = CentreRequest(settings or CentreSettings(), eps, np.random.default_rng(1), ledger)
    return build_design(formula, data, bounds, centre=req), ledger


def test_centred_columns_have_mean_near_zero_and_stay_in_the_box():
    data, bounds = survey()
    design, ledger = centred(data, bounds)
    X, y = design.data.X, design.data.y
    assert np.all(np.abs(X) <= 1) and np.all(np.abs(y) <= 1)
    names = design.spec.candidate_names
    # the common indicator and the score are centred at their (private) means
    for c in ("common", "score"):
        assert abs(X[:, names.index(c)].mean()) < 0.05
    assert abs(y.mean()) < 0.05
    assert {r.name for r in design.spec.centring} == {"dist", "rare", "common", "score", "y"}
    assert sum(e["eps"] for e in ledger.stages) == pytest.approx(5.0)


def test_two_point_columns_are_never_tightened_skewed_ones_are():
    data, bounds = survey(n=20000)
    design, _ = centred(data, bounds, eps=50.0)
    rec = {r.name: r for r in design.spec.centring}
    assert not rec["rare"].tightened and rec["rare"].box == (0.0, 1.0)
    assert not rec["common"].tightened
    assert rec["dist"].tightened and rec["dist"].box[1] < 15.0      # an honest (0, 30) on data of mean 1.8
    assert rec["y"].tightened and rec["y"].box[1] < 40.0
    # the rare indicator keeps both of its values
    j = design.spec.candidate_names.index("rare")
    assert len(np.unique(design.data.X[:, j])) == 2


def test_a_skewed_response_is_tightened_where_one_combined_test_can_tell():
    """The interior test reads one statistic, v - k m (1 - m), at a lower confidence bound of
    its own noise. A skewed count in a loose interval (fair's affairs: mean 0.7 of [0, 60],
    6,366 rows, eps 5 of which the response's mean and spread get 0.125 each) passes it; the
    rule before (v and m (1 - m) bounded separately, three sds each) failed whenever m's noise
    was one sd high, and the response then kept its codebook map, its level near -1 in
    mapped units (the intercept in disguise: fair's signs flipped at eps 5)."""
    from dpsubset.design.centring import _released_box
    n, eps_each = 6366, 0.125
    b_mean, b_int = 1 / (n * eps_each), 0.25 / (n * eps_each)
    sd_m = np.sqrt(2) * b_mean
    st = CentreSettings()
    for m in (0.0119, 0.0119 + sd_m, 0.0119 + 1.5 * sd_m):
        z_lo, z_hi, _, two_point = _released_box(m, 0.0104, b_mean, b_int, True, st, st.spreads)
        assert (z_lo, two_point) == (0.0, False) and z_hi < 0.5
    # a release too noisy to tell keeps the codebook's box
    assert _released_box(0.0119, 0.0104, 10 * b_mean, 10 * b_int, True, st, st.spreads)[:2] == (0.0, 1.0)


def test_a_rare_indicator_is_not_cut_by_the_combined_test():
    """A 0/1 column (v = 0) is tightened only when the noise on v exceeds three sds of the
    combined statistic: rarely (about 1 %), at every prevalence; never at min_interior = 1."""
    from dpsubset.design.centring import _released_box
    from dpsubset.mechanisms.noise import laplace_noise
    rng = np.random.default_rng(3)
    n, eps_each = 5000, 0.1
    b_mean, b_int = 1 / (n * eps_each), 0.25 / (n * eps_each)
    for prevalence in (0.005, 0.02, 0.2, 0.5):
        cut = 0
        for _ in range(2000):
            m = prevalence + float(laplace_noise(b_mean, rng))
            v = float(laplace_noise(b_int, rng))
            z_lo, z_hi, *_ = _released_box(m, v, b_mean, b_int, True, CentreSettings(), CentreSettings().spreads)
            cut += (z_lo, z_hi) != (0.0, 1.0)
            assert _released_box(m, v, b_mean, b_int, True, CentreSettings(min_interior=1.0), CentreSettings().spreads)[:2] == (0.0, 1.0)
        assert cut <= 0.015 * 2000, prevalence


def test_a_column_is_never_mapped_wider_than_its_codebook():
    """An off-centre column whose box is not tightened keeps a half-width no larger than its
    codebook's (centring at its mean would shrink its spread in mapped units)."""
    data, bounds = survey(n=400)
    design, _ = centred(data, bounds, eps=0.5)  # too little to tighten anything
    for r in design.spec.centring:
        half = design.spec.column_maps[r.name][1]
        assert half <= (r.codebook[1] - r.codebook[0]) / 2 * (1 + 1e-12)


def test_default_is_on_for_a_codebook_off_for_scalar_bounds_and_without_intercept():
    data, bounds = survey(n=600)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = dps.dp_best_subset("y ~ .", data, eps=4.0, s=2, bounds=bounds, random_state=0)
        stages = [st["stage"] for st in res.privacy.stages]
        assert stages[0] == "centring"
        assert res.privacy.eps == pytest.approx(4.0)
        # least squares: the best support's fit takes 0.02 eps on top of the centring's 0.1
        assert res.eps_select == pytest.approx(0.44 * 4.0) and res.eps_refit == pytest.approx(0.44 * 4.0)
        assert not res.centring.empty and set(res.centring.columns) >= {"box_lo", "box_hi", "centre"}
        # scalar bounds (the paper's setting): nothing centred, nothing spent
        res2 = dps.dp_best_subset("y ~ .", data.assign(y=data.y / 60), eps=4.0, s=2, bounds=(1.0, 1.0),
                                  random_state=0)
        assert "centring" not in [st["stage"] for st in res2.privacy.stages]
        assert res2.eps_select == pytest.approx(2.0) and res2.centring.empty
        # no intercept: a shift would change the model; the share goes back to the stages
        res3 = dps.dp_best_subset("y ~ 0 + .", data, eps=4.0, s=2, bounds=bounds, random_state=0)
        assert "centring" not in [st["stage"] for st in res3.privacy.stages]
        assert res3.eps_select == pytest.approx(2.0)
        # centre=False
        res4 = dps.dp_best_subset("y ~ .", data, eps=4.0, s=2, bounds=bounds, centre=False, random_state=0)
        assert res4.centring.empty and res4.eps_select == pytest.approx(2.0)


def test_predictions_and_coefficients_are_in_the_users_units():
    """The released coefficients and predictions read the released maps: on a large budget the
    refit is close to OLS on the same support, intercept included."""
    data, bounds = survey(n=20000, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = dps.dp_best_subset("y ~ .", data, eps=200.0, s=3, bounds=bounds, random_state=2)
    import statsmodels.api as sm
    sup = res.support
    ols = sm.OLS(data["y"], sm.add_constant(data[sup])).fit()
    for c in sup:
        assert res.params[c] == pytest.approx(ols.params[c], rel=0.15, abs=0.02)
    pred = res.predict(data.iloc[:200])
    assert np.corrcoef(pred, ols.predict(sm.add_constant(data[sup]).iloc[:200]))[0, 1] > 0.99


def test_classification_response_is_not_centred():
    data, bounds = survey(n=800)
    data = data.assign(y=(data.y > data.y.median()).astype(float))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = dps.dp_best_subset("y ~ .", data, eps=4.0, s=2, bounds=bounds, loss="logistic", random_state=0)
    assert "y" not in res.centring.index and "dist" in res.centring.index


def test_split_counts_the_centring_in_both_parts():
    data, bounds = survey(n=1200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = dps.dp_best_subset("y ~ .", data, eps=4.0, s=2, bounds=bounds, refit=dps.Refit(split=True), inference=True,
                                 random_state=0)
    assert res.privacy.eps <= 4.0 * (1 + 1e-12)
    assert "centring" in res.privacy.statement


@pytest.mark.parametrize("bad, msg", [
    ("yes", "centre: expected None, True, False or a dict"),
    ({"share": 0.9}, "centre['share']"),
    ({"share": -1}, "share"),
    ({"spreads": 0}, "spreads"),
    ({"min_interior": 2}, "min_interior"),
    ({"shares": 0.1}, "unknown setting"),
    ({"response_spreads": -2}, "response_spreads"),
])
def test_bad_settings_name_the_argument(bad, msg):
    data, bounds = survey(n=50)
    with pytest.raises((TypeError, ValueError), match=msg.replace("[", r"\[").replace("]", r"\]")):
        dps.dp_best_subset("y ~ .", data, eps=1.0, s=2, bounds=bounds, centre=bad)


def test_response_spreads_widens_the_responses_box_only():
    # a study setting: the response's tightened box at 5 released sds, the columns' at 3
    data, bounds = survey(n=20000)
    base, _ = centred(data, bounds, eps=50.0)
    wide, _ = centred(data, bounds, eps=50.0, settings=CentreSettings(response_spreads=5.0))
    b, w = ({r.name: r for r in d.spec.centring} for d in (base, wide))
    assert b["y"].tightened and w["y"].tightened
    # the same release (same seed), so the same centre and sd; the half-width grows by 5/3
    half = lambda r: r.box[1] - r.centre
    assert half(w["y"]) == pytest.approx(5.0 / 3.0 * half(b["y"]), rel=1e-9)
    for c in ("dist", "score"):
        assert w[c].box == b[c].box


def test_check_centre_defaults():
    assert check_centre(None, Bounds(x={"a": (0, 1)})) == CentreSettings()
    assert check_centre(None, Bounds(x=1.0, y=1.0)) is None
    assert check_centre(None, None) is None
    assert check_centre(True, Bounds(x=1.0, y=1.0)) == CentreSettings()
    assert check_centre({"share": 0.2}, None).share == 0.2
