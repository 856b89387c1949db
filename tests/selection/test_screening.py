"""screen= of dp_best_subset: budget accounting, the released support within the
screened set, errors for bad arguments (the exact audit is tests/audit/test_screening_audit.py)."""
import numpy as np
import pandas as pd
import pytest

import dpsubset as dps
from dpsubset.selection.screening import DEFAULT_SCREEN_K_PER_S, DEFAULT_SCREEN_SHARE, check_screen
from dpsubset.studies.simulate import make_regression


@pytest.fixture(scope="module")
def data():
    X, y, true = make_regression(1500, 60, 3, random_state=4)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(60)])
    df["y"] = y
    return df


def test_report_accounts_for_screen_selection_and_refit(data):
    res = dps.dp_best_subset("y ~ 0 + .", data, eps=2.0, s=3, bounds=(0.5, 0.5),
                             random_state=1, method=dps.Method("top_r", screen=True))
    frame = res.privacy.to_frame()
    assert list(frame.stage) == ["screening", "selection", "refit"]
    eps = frame.set_index("stage").eps
    assert eps["refit"] == pytest.approx(1.0)                      # the refit's half is unchanged
    assert eps["screening"] == pytest.approx(DEFAULT_SCREEN_SHARE * 1.0)
    assert eps["selection"] == pytest.approx((1 - DEFAULT_SCREEN_SHARE) * 1.0)
    assert res.privacy.eps == pytest.approx(2.0) and res.privacy.guarantee == "pure"
    assert "top-30 of 60" in frame.mechanism[0]
    assert len(res.screened) == DEFAULT_SCREEN_K_PER_S * 3
    assert set(res.support) <= set(res.screened)
    assert "2-differential privacy" in res.privacy.statement


@pytest.mark.parametrize("method", ["top_r", "mistakes"])
def test_support_within_screened_set(data, method):
    for seed in range(4):
        res = dps.dp_best_subset("y ~ .", data, eps=1.0, s=3, bounds=(0.5, 0.5), method=dps.Method(method, screen=dict(k=8, share=0.5)),
                                 refit=False, random_state=seed)
        assert len(res.screened) == 8 and set(res.support) <= set(res.screened)
        eps = res.privacy.to_frame().set_index("stage").eps
        assert eps["screening"] == pytest.approx(0.5)
        assert res.privacy.eps == pytest.approx(1.0)
    assert res.params is None


def test_without_screen_nothing_changes(data):
    a = dps.dp_best_subset("y ~ 0 + .", data, eps=1.0, s=3, bounds=(0.5, 0.5), random_state=3)
    b = dps.dp_best_subset("y ~ 0 + .", data, eps=1.0, s=3, bounds=(0.5, 0.5), random_state=3,
                           method=dps.Method("top_r", screen=None))
    assert a.support == b.support and a.screened is None
    assert [st["stage"] for st in a.privacy.stages] == ["selection", "refit"]


@pytest.mark.parametrize("screen,err,match", [
    (3, ValueError, "k must be an integer larger than s = 3"),
    (2, ValueError, "k must be an integer larger than s"),
    (dict(k=2.5), ValueError, "k must be an integer"),
    (dict(share=0), ValueError, "share must be a number in"),
    (dict(share=1.0), ValueError, "share must be a number in"),
    (dict(k=10, foo=1), TypeError, "unknown keys"),
    ("yes", TypeError, "screen must be None, True, an int"),
])
def test_bad_screen_arguments(data, screen, err, match):
    with pytest.raises(err, match=match):
        dps.dp_best_subset("y ~ 0 + .", data, eps=1.0, s=3, bounds=(0.5, 0.5), method=dps.Method("top_r", screen=screen))


def test_screen_keeping_every_column_is_refused(data):
    with pytest.raises(ValueError, match="keeps all 60 candidate columns"):
        dps.dp_best_subset("y ~ 0 + .", data, eps=1.0, s=3, bounds=(0.5, 0.5), method=dps.Method("top_r", screen=60))


def test_screen_needs_an_exact_method(data):
    with pytest.raises(ValueError, match="screen= works with method in"):
        dps.dp_best_subset("y ~ 0 + .", data, eps=1.0, s=3, bounds=(0.5, 0.5),
                           method=dps.Method("dp_sis", screen=True))


def test_default_k_is_capped_below_p():
    spec = check_screen(True, s=5, method="top_r")
    assert spec.k_for(1000, 5) == 50 and spec.k_for(30, 5) == 29
