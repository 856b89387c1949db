"""Warnings, from public quantities only, when the settings make a release noise (issue 16, item 6)."""
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpsubset as dps
from dpsubset.studies.simulate import make_regression
from dpsubset.results.usefulness import selection_best_case


def _mtcars_sized(seed):
    """32 rows, 10 predictors: the sizes of mtcars (the R example's data)."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.uniform(0, 400, (32, 10)), columns=[f"x{j}" for j in range(10)])
    return X.assign(mpg=rng.uniform(10, 35, 32))


def _utility_warnings(*args, **kwargs):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        res = dps.dp_best_subset(*args, **kwargs)
    return res, [str(w.message) for w in rec if issubclass(w.category, dps.LowUtilityWarning)]


def test_the_r_example_settings_warn_for_selection_and_refit():
    # ?dp_best_subset's example: bounds = c(500, 40), r = 50, eps = 1, s = 3 on mtcars
    res, msgs = _utility_warnings("mpg ~ .", _mtcars_sized(0), eps=1, s=3, bounds=(500, 40), ball=dps.Ball(r=50),
                                  random_state=1)
    assert res.privacy.sensitivity == pytest.approx(29351066, rel=1e-6)   # the number
    assert len(msgs) == 2
    sel, refit = msgs
    assert "selection no better than chance" in sel and "C(10, 3) = 120" in sel
    assert "Delta = 2.94e+07" in sel and "eps_select = 0.5" in sel
    assert "times the selection budget" in sel and "interval bounds (lo, hi)" in sel
    assert "dps.plan" in sel and "sample-size.md" in sel   # where to plan the rows or eps
    assert "refit noise" in refit and "'mpg'" in refit and "smaller r" in refit and "refit=False" in refit


def test_the_warnings_are_public_functions_of_the_settings():
    # other data with the same public settings: the same words, number for number
    a = _utility_warnings("mpg ~ .", _mtcars_sized(1), eps=1, s=3, bounds=(500, 40), ball=dps.Ball(r=50),
                          random_state=1)[1]
    b = _utility_warnings("mpg ~ .", _mtcars_sized(2), eps=1, s=3, bounds=(500, 40), ball=dps.Ball(r=50),
                          random_state=2)[1]
    assert a == b and len(a) == 2


def test_useful_settings_do_not_warn():
    df, _ = make_regression(1000, 20, s=5, random_state=0, as_frame=True)
    _, msgs = _utility_warnings("y ~ .", df, eps=1, s=5, bounds=(0.5, 0.5), ball=dps.Ball(r=1.1, lam=120),
                                random_state=1)
    assert msgs == []
    hitters = dps.load_hitters().dropna(subset=["Salary"]).drop(columns="Player")
    _, msgs = _utility_warnings("Salary ~ .", hitters, eps=8, s=5, bounds=dps.hitters_bounds(),
                                random_state=1)
    assert msgs == []


def test_no_warning_about_sensitivity_when_bounds_come_from_the_data():
    # Delta would then be a statistic of the data: nothing is said about it
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        dps.dp_best_subset("mpg ~ .", _mtcars_sized(0), eps=0.01, s=3, random_state=1)
    assert not any(issubclass(w.category, dps.LowUtilityWarning) for w in rec)
    assert any(issubclass(w.category, dps.PrivacyLeakWarning) for w in rec)


def test_selection_best_case_formula():
    # P = e^t / (e^t + N - 1); P = 1/2 exactly at t = ln(N - 1)
    N = math.comb(10, 3)
    P, t, needed = selection_best_case(eps_select=2.0, Delta=0.5, gap=math.log(N - 1) / 2, p=10, s=3)
    assert t == pytest.approx(math.log(N - 1)) and needed == pytest.approx(t) and P == pytest.approx(0.5)
    P, t, _ = selection_best_case(eps_select=1.0, Delta=1.0, gap=0.0, p=10, s=3)
    assert P == pytest.approx(1 / N)
    assert selection_best_case(1.0, 1.0, 1.0, p=5, s=5)[0] == 1.0


def test_split_warns_with_each_parts_rows():
    """split=True: the selection sees half the rows and the refit the other half; the warnings
    say so (n = 16 of 32), as their sensitivities are those of the parts."""
    _, whole = _utility_warnings("mpg ~ .", _mtcars_sized(0), eps=1, s=3, bounds=(500, 40), ball=dps.Ball(r=50),
                                 random_state=1)
    _, parts = _utility_warnings("mpg ~ .", _mtcars_sized(0), eps=1, s=3, bounds=(500, 40), ball=dps.Ball(r=50),
                                 random_state=1, refit=dps.Refit(split=True))
    assert all("n = 32" in m for m in whole)
    assert len(parts) == 2 and all("n = 16" in m for m in parts)
