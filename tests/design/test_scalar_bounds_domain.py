"""A scalar bound clips a model column, not the variables it is made of (issue 39): a
transform that is undefined for some values of its variables (np.log(x1), with no interval
for x1) used to set those rows to the interval's midpoint without a word. It is refused,
from the formula and the bounds alone, before the data are read."""
import warnings

import numpy as np
import pandas as pd
import pytest

import dpsubset as dps
from dpsubset.design.intervals import undefined_somewhere


def _data(positive=False, n=200, seed=0):
    rng = np.random.default_rng(seed)
    lo = 0.1 if positive else -1.0
    d = pd.DataFrame({"x1": rng.uniform(lo, 1, n), "x2": rng.uniform(lo, 1, n)})
    d["y"] = d.x2 + rng.normal(0, 0.1, n)
    return d


def _fit(formula, data, bounds):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dps.dp_best_subset(formula, data, eps=4, s=1, bounds=bounds, random_state=1)


@pytest.mark.parametrize("bounds", [(1, 2), dps.Bounds(x=1, y=2), dps.Bounds(x={"x2": (-1, 1)}, y=2, default=1)])
@pytest.mark.parametrize("term", ["np.log(x1)", "np.sqrt(x1)", "np.log1p(x1)", "I(x2 / x1)"])
def test_an_undefined_transform_under_a_scalar_bound_is_refused(term, bounds):
    for positive in (False, True):   # the same refusal whatever the data: it reads none of them
        with pytest.raises(ValueError, match="scalar bound clips the model's column") as err:
            _fit(f"y ~ {term} + x2", _data(positive), bounds)
        msg = str(err.value)
        assert term.replace(" ", "") in msg.replace(" ", "") and "'x1'" in msg
        assert "Fix:" in msg and "interval" in msg


@pytest.mark.parametrize("term", ["np.exp(x1)", "I(x1 ** 2)", "np.abs(x1)", "I(x1 * x2)", "x1"])
def test_transforms_defined_everywhere_keep_the_scalar_bound(term):
    res = _fit(f"y ~ {term} + x2", _data(), (1, 2))
    assert len(res.candidates) == 2


def test_an_interval_of_the_variable_or_of_the_term_settles_it():
    res = _fit("y ~ np.log(x1) + x2", _data(positive=True), dps.Bounds(x={"x1": (0.1, 1), "x2": (-1, 1)}, y=2))
    assert res.bounds_derived["np.log(x1)"] == pytest.approx((np.log(0.1), 0.0))
    # the term's own interval: the documented fixed rule (nan to its midpoint) is the user's choice
    res = _fit("y ~ np.log(x1) + x2", _data(), dps.Bounds(x={"np.log(x1)": (-5, 1), "x2": (-1, 1)}, y=2))
    assert "np.log(x1)" in res.candidates


def test_the_probe_reads_a_fixed_public_grid():
    import ast
    tree = ast.parse("np.log(x1 - x2)", mode="eval")
    why = undefined_somewhere(tree, ["x1", "x2"], {"np": np})
    assert why and "'x1' and 'x2'" in why
    assert undefined_somewhere(ast.parse("np.exp(x1)", mode="eval"), ["x1"], {"np": np}) is None
    assert undefined_somewhere(ast.parse("unknown(x1)", mode="eval"), ["x1"], {}) is None   # no verdict
