"""dp_best_subset with loss="huber" / "logistic" / "hinge": the response of the
classification losses, the loss parameters, and the report."""
import math

import numpy as np
import pandas as pd
import pytest

import dpsubset as dps
from dpsubset.losses import HingeLoss, HuberLoss, LogisticLoss, encode_binary_response
from dpsubset.scores.convex import SCORE_TOL
from dpsubset.privacy.sensitivity import convex_sensitivity
from dpsubset.selection.base import search_slack
from dpsubset.studies.simulate import make_classification, make_regression


@pytest.fixture(scope="module")
def clf():
    df, true = make_classification(150, 8, 2, random_state=3, as_frame=True)
    return df, true


@pytest.fixture(scope="module")
def reg():
    X, y, true = make_regression(150, 8, 2, random_state=4)
    df = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(8)])
    df["y"] = y
    return df, true


def test_binary_response_encodings():
    y01 = pd.DataFrame({"y": [0, 1, 1, 0], "x": [1.0, 2, 3, 4]})
    out, levels = encode_binary_response("y ~ x", y01)
    assert levels == (0, 1) and out["y"].tolist() == [-1.0, 1.0, 1.0, -1.0]
    assert y01["y"].tolist() == [0, 1, 1, 0]  # the caller's frame is untouched
    # -1/+1 is declared, never guessed from the values (issue 17, item 1)
    out, levels = encode_binary_response("y ~ x", y01.assign(y=[-1, 1, 1, -1]), (-1, 1))
    assert levels == (-1, 1) and out["y"].tolist() == [-1.0, 1.0, 1.0, -1.0]
    out, levels = encode_binary_response("y ~ x", y01.assign(y=[False, True, True, False]))
    assert levels == (False, True) and out["y"].tolist() == [-1.0, 1.0, 1.0, -1.0]
    # A factor: the declared order decides, not the order of appearance.
    cat = pd.Categorical(["yes", "no", "yes", "yes"], categories=["yes", "no"])
    out, levels = encode_binary_response("y ~ x", y01.assign(y=cat))
    assert levels == ("yes", "no") and out["y"].tolist() == [-1.0, 1.0, -1.0, -1.0]
    # A factor with one level unused is still a two-level factor.
    cat = pd.Categorical(["no"] * 4, categories=["no", "yes"])
    assert encode_binary_response("y ~ x", y01.assign(y=cat))[1] == ("no", "yes")


@pytest.mark.parametrize("bad,match", [
    (["a", "b", "a", "b"], "learned"),
    ([0, 1, 2, 1], "1 row outside its coding"),
    ([-1, 1, 1, 1], "loss=Logistic\\(levels=\\(-1, 1\\)\\)"),
    (pd.Categorical(["a", "b", "c", "a"]), "3 declared levels"),
])
def test_binary_response_errors(bad, match):
    df = pd.DataFrame({"y": bad, "x": [1.0, 2, 3, 4]})
    with pytest.raises(ValueError, match=match):
        encode_binary_response("y ~ x", df)
    with pytest.raises(ValueError, match="one column"):
        encode_binary_response("np.log(y) ~ x", df)


@pytest.mark.parametrize("loss", ["logistic", "hinge"])
@pytest.mark.parametrize("method", ["top_r", "mistakes"])
def test_classification_end_to_end(clf, loss, method):
    df, true = clf
    data = df.assign(y=pd.Categorical(np.where(df["y"] > 0, "case", "control"),
                                      categories=["control", "case"]))
    res = dps.dp_best_subset("y ~ .", data, eps=4.0, s=2, method=method, bounds=(0.5, 7.0),
                             ball=dps.Ball(r=1.1), loss=loss, random_state=0)
    assert res.response_levels == ("control", "case")
    assert res.loss == loss and len(res.support) == 2
    assert res.privacy.all_certificates_closed and res.privacy.exact_search
    # y's bound is 1 whatever was given; Delta is the loss's, plus the accuracy allowance
    lossobj = LogisticLoss() if loss == "logistic" else HingeLoss(0.5)
    Delta = (convex_sensitivity(lossobj, [0.5] * 8, 1.0, 1.1, 2, [1.0], len(df)) + 2 * SCORE_TOL
             + 2 * search_slack(lossobj, 1.0, SCORE_TOL))  # and the search's slack (issue 17)
    assert res.privacy.sensitivity == pytest.approx(Delta, rel=1e-12)
    assert res.loss_params == ({"hinge_h": 0.5} if loss == "hinge" else {})
    eta = res.predict(df.head(), which="linear")
    assert eta.shape == (5,) and np.all(np.isfinite(eta))


def test_huber_end_to_end_and_its_threshold(reg):
    df, _ = reg
    res = dps.dp_best_subset("y ~ .", df, eps=4.0, s=2, bounds=(0.5, 0.8), ball=dps.Ball(r=1.1), loss="huber",
                             random_state=0)
    assert res.loss_params == {"huber_h": pytest.approx(0.4)}  # 0.5 b_y by default
    assert res.response_levels is None
    assert res.privacy.all_certificates_closed
    res2 = dps.dp_best_subset("y ~ .", df, eps=4.0, s=2, bounds=(0.5, 0.8), ball=dps.Ball(r=1.1), loss=dps.Huber(h=0.1), random_state=0)
    assert res2.loss_params == {"huber_h": 0.1}
    # Delta of the Huber score: huber_h(b_y + r sqrt(B_s)) / n, smaller with a smaller h
    a = 1.1 * math.sqrt(2 * 0.25 + 1.0)
    u = 0.8 + a
    expect = (0.1 ** 2 * (math.sqrt(1 + (u / 0.1) ** 2) - 1) / len(df) + 2 * SCORE_TOL
              + 2 * search_slack(HuberLoss(0.1), 0.8, SCORE_TOL))
    assert res2.privacy.sensitivity == pytest.approx(expect, rel=1e-12)
    assert res2.privacy.sensitivity < res.privacy.sensitivity


def test_loss_option_validation(reg, clf):
    df, _ = reg
    # a loss's parameter goes with its loss: the old keywords name the loss option
    with pytest.raises(TypeError, match=r"huber_h= moved: use loss=dpsubset.Huber\(h=...\)"):
        dps.dp_best_subset("y ~ .", df, eps=1.0, s=2, bounds=(0.5, 0.8), huber_h=0.3)
    with pytest.raises(TypeError, match=r"hinge_h= moved: use loss=dpsubset.Hinge\(h=...\)"):
        dps.dp_best_subset("y ~ .", df, eps=1.0, s=2, bounds=(0.5, 0.8), loss="huber", hinge_h=0.3)
    with pytest.raises(TypeError, match=r"unknown field\(s\) \['levels'\]; dpsubset.Huber takes h"):
        dps.dp_best_subset("y ~ .", df, eps=1.0, s=2, bounds=(0.5, 0.8), loss=dict(name="huber", levels=(0, 1)))
    with pytest.raises(ValueError, match="Huber.h must be"):
        dps.dp_best_subset("y ~ .", df, eps=1.0, s=2, bounds=(0.5, 0.8), loss=dict(name="huber", h=-1))
    with pytest.raises(ValueError, match="rows outside its coding"):
        dps.dp_best_subset("y ~ .", df, eps=1.0, s=2, bounds=(0.5, 0.8), loss="logistic")
    with pytest.raises(ValueError, match="loss must be one of"):
        dps.dp_best_subset("y ~ .", df, eps=1.0, s=2, bounds=(0.5, 0.8), loss="quantile")
