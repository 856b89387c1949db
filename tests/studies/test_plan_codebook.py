"""dps.plan takes the codebook a release takes, and refuses bad settings by name (issues 37, 39).

A codebook is mapped as a release maps it: an interval onto [-1, 1], a number b clipped to
[-b, b]; the plan then simulates in those units. So a codebook of numbers gives exactly
the plan of the pair (b_x, b_y), and a codebook of intervals exactly the pair plan of the
mapped effects and noise (the same draws: the same seed).
"""
import math

import numpy as np
import pytest

import dpsubset as dps
from dpsubset.inference.intervals import CoefficientInference

KW = dict(p=6, s=2, eps=4.0, trials=1, n_grid=[300, 2000], random_state=3)


def test_a_codebook_of_numbers_is_the_pair():
    pair = dps.plan(effect=0.5, noise=0.5, bounds=(1.0, 3.0), **KW)
    book = dps.plan(effect=0.5, noise=0.5, bounds=dps.Bounds(x=1.0, y=3.0), **KW)
    assert book.table.equals(pair.table)
    as_dict = dps.plan(effect=0.5, noise=0.5, bounds={"x": 1.0, "y": 3.0}, **KW)
    assert as_dict.table.equals(pair.table)


def test_a_codebook_of_intervals_is_mapped_as_the_release_maps_it():
    # age on [0, 10] (half-width 5), income on [0, 6] (half-width 3): a slope of 0.2 per
    # year is 0.2 * 5 / 3 in mapped units, the noise 0.6 is 0.2, and the response's bound 1
    book = dps.Bounds(x={"age": (0, 10), "educ": (0, 20), "x3": 1.0}, y=(0, 6))
    mapped = dps.plan(effect={"age": 0.2, "educ": 0.1}, noise=0.6, bounds=book, target_width=5.0, **KW)
    pair = dps.plan(effect=0.2 * 5 / 3, noise=0.2, bounds=(1.0, 1.0), target_width=5.0, **KW)
    np.testing.assert_allclose(mapped.table["p_true_support"], pair.table["p_true_support"])
    # widths come back in the columns' units: a mapped slope's width times 3 / 5 (age) or 3 / 10
    assert (mapped.table["median_width"] != pair.table["median_width"]).any()
    assert "age, educ" in mapped.assumptions and "noise sd 0.6" in mapped.assumptions
    # a plain dict codebook with the response among its entries
    plain = dps.plan(effect={"age": 0.2, "educ": 0.1}, noise=0.6, response="income",
                     bounds={"age": (0, 10), "educ": (0, 20), "x3": 1.0, "income": (0, 6)}, target_width=5.0, **KW)
    assert plain.table.equals(mapped.table)


def test_the_release_codebook_of_a_real_data_set_plans():
    from dpsubset.studies.real_data import load_real_data
    ds = load_real_data("wage")
    pl = dps.plan(p=16, s=2, effect={"age": 0.5, "year": 1.0}, noise=35.0, bounds=ds.bounds, n=3000,
                  eps_grid=[4.0], trials=1)
    assert 0.0 <= pl.table["p_true_support"].iloc[0] <= 1.0


@pytest.mark.parametrize("kwargs, match", [
    (dict(bounds=(0, 0)), r"bounds\[0\] must be a finite number > 0"),
    (dict(bounds=(1, -3)), r"bounds\[1\] must be a finite number > 0"),
    (dict(rho=1.5), "rho must be a correlation strictly between -1 and 1"),
    (dict(rho=-1.0), "rho must be a correlation"),
    (dict(noise=-1.0), "noise must be a finite number > 0"),
    (dict(trials=0), "trials must be a whole number >= 1"),
    (dict(trials=1.5), "trials must be a whole number >= 1"),
    (dict(target_prob=2.0), r"target_prob must be a probability in \(0, 1\]"),
    (dict(target_prob=0.0), "target_prob must be a probability"),
    (dict(target_width=-1.0), "target_width must be a finite number > 0"),
    (dict(effect=math.nan), "effect must be a finite number"),
    (dict(effect=math.inf), "effect must be a finite number"),
    (dict(effect={"a": 0.5, "b": 0.5}), "effect: a dict of effects by column needs a codebook"),
    (dict(bounds=dps.Bounds(x=1.0)), "no bound of the response"),
    (dict(bounds=dps.Bounds(x={"a": 1.0}, y=3.0), effect={"a": 0.5, "zz": 0.5}), "not in it: zz"),
    (dict(n_grid=[0, 100]), "n_grid"),
    (dict(eps_grid=[-1.0]), "eps_grid"),
    (dict(p=2, s=2), "0 < s < p"),
])
def test_bad_settings_are_named_before_any_simulation(kwargs, match):
    args = dict(p=6, s=2, effect=0.5, noise=0.5, bounds=(1.0, 3.0), eps=4.0, trials=1, n_grid=[300])
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        dps.plan(**args)


def test_conf_int_names_alpha():
    inf = CoefficientInference(names=["a"], estimate=np.array([0.3]), errors=np.ones((5, 1)))
    with pytest.raises(ValueError, match="alpha: expected a number strictly between 0 and 1"):
        inf.conf_int(alpha="a")
