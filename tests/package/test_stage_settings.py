"""Each stage's radius and ridge (issue 27 item 2): r_select / r_refit / lam_select / lam_refit.

The selection's r and lam set its score sensitivity Delta; the refit's r_refit and
lam_refit set its noise and its ball. A mix-up between the two is a privacy bug (the
mechanism would be calibrated for another ball than the one it scores on), so the tests
below fail on a swap. The defaults come from public numbers only (dpsubset/defaults.py).
"""
import math

import numpy as np
import pandas as pd
import pytest

import dpsubset as dps
import dpsubset.api as api
import dpsubset.refit.support as refit_support_module
from dpsubset.defaults import (CLASSIFICATION_MAX_PREDICTION, CLASSIFICATION_SELECT_PREDICTION, REFIT_RIDGE,
                               classification_select_lam, default_lam, default_radius, largest_row_norm)
from dpsubset.interfaces.cli import main as cli_main
from dpsubset.refit.objective import DEFAULT_EPS_OUT_FRAC
from dpsubset.privacy.sensitivity import score_sensitivity


def _regression(seed=0, n=300, p=6):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, p))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
    df["y"] = 0.6 * X[:, 0] - 0.5 * X[:, 1] + 0.2 * rng.standard_normal(n)
    return df


def _classes(seed=0, n=400, p=6):
    df = _regression(seed, n, p)
    df["y"] = np.where(df["y"] > 0, 1, -1)
    return df


B = (0.5, 0.5)


# ---------------------------------------------------------------- defaults per stage
@pytest.mark.parametrize("loss", ["logistic", "hinge"])
def test_classification_defaults_are_the_chosen_rule(loss):
    """Selection: a = 2 and lam = max(1, 0.01 n, 5 B_s ln C(p, s) / (2 eps)) (by measured recovery);
    refit: a = 6, no extra ridge."""
    n, s = 400, 2
    res = dps.dp_best_subset("y ~ .", _classes(n=n), eps=2.0, s=s, bounds=(0.5, 1.0), loss=dict(name=loss, levels=(-1, 1)), random_state=0)
    row = largest_row_norm([0.5] * 6, s, [1.0])  # sqrt(2 * 0.25 + 1)
    assert CLASSIFICATION_SELECT_PREDICTION == 2.0 and CLASSIFICATION_MAX_PREDICTION == 6.0
    assert res.r == pytest.approx(2.0 / row)
    assert res.r_refit == pytest.approx(6.0 / row)
    rule = max(1.0, 0.01 * n, 2.5 * row ** 2 * math.log(math.comb(6, s)) / res.eps_select)
    assert res.lam == pytest.approx(rule)
    assert res.lam == classification_select_lam(n, res.eps_select, [0.5] * 6, s, [1.0])
    assert default_lam(n, 1.0, loss, stage="refit") == REFIT_RIDGE == 0.0
    # the refit's ridge is then the objective perturbation's own minimum, 2 lambda / eps_obj,
    # with lambda = R^2 / 4 (logistic) or R^2 / (2 h) (hinge, h = 0.5) over the released support
    hess = {"logistic": row ** 2 / 4, "hinge": row ** 2 / (2 * 0.5)}[loss]
    assert res.lam_refit == pytest.approx(2 * hess / ((1 - DEFAULT_EPS_OUT_FRAC) * res.eps_refit))


def test_classification_ridge_follows_the_mechanisms_resolution():
    """The selection's ridge: k = 2.5 times Delta ln C(p, s) / eps, at least 1 % of the rows."""
    x_b = [0.5] * 100
    base = classification_select_lam(3000, 1.0, x_b, 5, [1.0])
    assert base == pytest.approx(2.5 * 2.25 * math.log(math.comb(100, 5)))  # 102 pseudo-rows
    assert classification_select_lam(3000, 2.0, x_b, 5, [1.0]) == pytest.approx(base / 2)  # 1 / eps
    assert classification_select_lam(3000, 1.0, x_b, 8, [1.0]) > base  # more supports, a larger B_s
    assert classification_select_lam(50_000, 1.0, x_b, 5, [1.0]) == 500.0  # 1 % of the rows
    assert classification_select_lam(100, 100.0, [0.5] * 3, 1, []) == 1.0  # the floor
    for loss in ("logistic", "hinge"):
        assert default_lam(3000, 1.0, loss, x_bounds=x_b, s=5, forced_bounds=[1.0]) == base


def test_regression_defaults_are_the_same_rule_for_both_stages():
    """Least squares and Huber: one rule, each stage with its own n eps (issue 25)."""
    for loss in ("squared", "huber"):
        for n, eps in ((1000, 1.0), (50_000, 4.0)):
            sel = default_radius([0.5] * 10, 0.5, 3, [1.0], loss, n=n, eps=eps, stage="select")
            ref = default_radius([0.5] * 10, 0.5, 3, [1.0], loss, n=n, eps=eps, stage="refit")
            assert sel == ref
        assert default_lam(2000, 1.0, loss) == 1.0


def test_stage_defaults_read_public_numbers_only():
    """Two data sets of the same size, bounds and s get the same four settings."""
    a = dps.dp_best_subset("y ~ .", _classes(0), eps=2.0, s=2, bounds=(0.5, 1.0), loss=dps.Hinge(levels=(-1, 1)), random_state=0)
    b = dps.dp_best_subset("y ~ .", _classes(7), eps=2.0, s=2, bounds=(0.5, 1.0), loss=dps.Hinge(levels=(-1, 1)), random_state=0)
    assert (a.r, a.lam, a.r_refit) == (b.r, b.lam, b.r_refit)


def test_unknown_stage_refused():
    with pytest.raises(ValueError, match="stage"):
        default_radius([0.5] * 4, 0.5, 2, stage="both")
    with pytest.raises(ValueError, match="stage"):
        default_lam(100, 1.0, stage="selection")


# ---------------------------------------------------------------- which stage uses which
def test_selection_delta_uses_r_select_and_the_refit_uses_r_refit(monkeypatch):
    """Delta from r_select, the refit's ball and noise from r_refit: fails on a swap."""
    seen = {}
    real = refit_support_module.objective_perturbation_exact

    def spy(*args, **kwargs):
        seen.update(r=kwargs["r"], ridge=kwargs["ridge"])
        return real(*args, **kwargs)

    monkeypatch.setattr(refit_support_module, "objective_perturbation_exact", spy)
    df = _regression()
    r_select, r_refit = 0.2, 3.0
    res = dps.dp_best_subset("y ~ 0 + .", df, eps=4.0, s=2, bounds=B, ball=dps.Ball(r_select=r_select, r_refit=r_refit, lam_refit=7.0), random_state=1)
    assert (res.r, res.r_refit) == (r_select, r_refit)
    want = score_sensitivity([0.5] * 6, 0.5, r_select, 2, [], len(df))
    swapped = score_sensitivity([0.5] * 6, 0.5, r_refit, 2, [], len(df))
    assert res.privacy.sensitivity == pytest.approx(want, rel=1e-4)  # plus the certified slack
    assert abs(res.privacy.sensitivity - swapped) > 0.5 * swapped
    assert seen == dict(r=r_refit, ridge=7.0)
    assert res.lam_refit >= 7.0


def test_the_refit_stays_in_its_own_ball():
    """The released (mapped) coefficients lie in the refit's ball, not the selection's."""
    res = dps.dp_best_subset("y ~ 0 + .", _regression(), eps=4.0, s=2, bounds=B, ball=dps.Ball(r_select=2.0, r_refit=0.05), random_state=2)
    assert np.linalg.norm(res._coef_mapped) <= 0.05 * (1 + 1e-9)


def test_r_sets_both_stages_and_lam_the_selection():
    res = dps.dp_best_subset("y ~ 0 + .", _regression(), eps=4.0, s=2, bounds=B, ball=dps.Ball(r=0.7, lam=5.0),
                             random_state=0)
    assert res.r == res.r_refit == 0.7 and res.lam == 5.0
    one = dps.dp_best_subset("y ~ 0 + .", _regression(), eps=4.0, s=2, bounds=B, ball=dps.Ball(r_select=0.7, r_refit=0.7, lam_select=5.0), random_state=0)
    assert one.support == res.support and np.allclose(one.params, res.params)


def test_one_stage_given_the_other_defaults():
    df = _classes()
    res = dps.dp_best_subset("y ~ .", df, eps=2.0, s=2, bounds=(0.5, 1.0), loss=dps.Logistic(levels=(-1, 1)), ball=dps.Ball(r_select=1.1), random_state=0)
    row = largest_row_norm([0.5] * 6, 2, [1.0])
    assert res.r == 1.1 and res.r_refit == pytest.approx(6.0 / row)


# ---------------------------------------------------------------- refusals before the data
@pytest.mark.parametrize("kwargs,names", [
    (dict(ball=dict(r=1.0, r_select=1.0)), ("r=", "r_select=")),
    (dict(ball=dict(r=1.0, r_refit=2.0)), ("r=", "r_refit=")),
    (dict(ball=dict(lam=1.0, lam_select=2.0)), ("lam=", "lam_select=")),
    (dict(ball=dict(r_refit=1.0), refit=False), ("r_refit", "refit=False")),
    (dict(ball=dict(lam_refit=1.0), refit=False), ("lam_refit", "refit=False")),
    (dict(ball=dict(lam_refit=1.0), inference=True), ("lam_refit", "inference")),
])
def test_contradictory_settings_refused_naming_the_arguments(kwargs, names):
    # data that are no data frame at all: the refusal must come before the data are read
    with pytest.raises(ValueError) as err:
        dps.dp_best_subset("y ~ .", "not read", eps=2.0, s=2, bounds=B, **kwargs)
    for nm in names:
        assert nm in str(err.value)


@pytest.mark.parametrize("name", ["r_select", "r_refit", "lam_select", "lam_refit"])
@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan])
def test_stage_settings_must_be_positive(name, bad):
    with pytest.raises((ValueError, TypeError), match=name):
        dps.dp_best_subset("y ~ .", _regression(), eps=2.0, s=2, bounds=B, ball={name: bad})


# ---------------------------------------------------------------- what the release shows
def test_report_glance_and_summary_show_both_stages():
    res = dps.dp_best_subset("y ~ .", _classes(), eps=2.0, s=2, bounds=(0.5, 1.0), loss=dps.Hinge(levels=(-1, 1)), random_state=0)
    st = {d["stage"]: d for d in res.privacy.stage_settings}
    assert st["selection"]["r"] == res.r and st["selection"]["lam"] == res.lam
    assert st["refit"]["r"] == res.r_refit and st["refit"]["lam"] == res.lam_refit
    text = repr(res.privacy)
    assert f"selection r = {res.r:.4g}, lam = {res.lam:.4g}" in text
    assert f"refit r = {res.r_refit:.4g}" in text
    g = res.glance().iloc[0]
    assert (g["r"], g["lam"], g["r_refit"], g["lam_refit"]) == (res.r, res.lam, res.r_refit, res.lam_refit)
    summary = res.summary().as_text()
    assert "Select r, lam:" in summary and "Refit r, lam:" in summary
    # without a refit: the selection's only
    sel = dps.dp_best_subset("y ~ .", _classes(), eps=2.0, s=2, bounds=(0.5, 1.0), loss=dps.Hinge(levels=(-1, 1)), refit=False, random_state=0)
    assert [d["stage"] for d in sel.privacy.stage_settings] == ["selection"]
    assert sel.lam_refit is None and math.isnan(sel.glance().iloc[0]["lam_refit"])


def test_cli_takes_the_stage_arguments(tmp_path, capsys):
    path = tmp_path / "d.csv"
    _regression().to_csv(path, index=False)
    assert cli_main(["fit", str(path), "--formula", "y ~ 0 + .", "--eps", "2", "--s", "2", "--bounds",
                     "0.5", "0.5", "--ball", "r_select=0.3,r_refit=0.9,lam_select=2,lam_refit=4",
                     "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "selection r = 0.3, lam = 2;" in out and "refit r = 0.9, lam = " in out
    with pytest.raises(SystemExit):
        cli_main(["fit", str(path), "--formula", "y ~ 0 + .", "--eps", "2", "--s", "2", "--bounds",
                  "0.5", "0.5", "--ball", "r=0.3,r_select=0.3"])
    assert "r_select" in capsys.readouterr().err
