"""Exact audit of the design stage: raw rows in, sensitivity of the scores out.

The other audits start from clipped, mapped matrices. This one starts where the user
does, from data frames and a codebook, and builds neighbours by replacing ONE raw row
(n fixed): rows at the corners of the codebook's box, and rows outside it (a value that
makes a transform undefined, or overflow, before clipping). For every pair it checks

* that both data sets give a release: an error on one of them only would be an output
  that tells them apart, outside any guarantee (issue 23, item 1);
* that the designs differ in the replaced row only and every mapped value lies in
  [-1, 1] (item 3: a map (x - c) / h with a rounded centre once sent an end to 2.0);
* that the largest change of any score c(S) over all supports, by brute force with
  the exact least-squares scorer at the call's r and lam, stays within the Delta the
  call reports.

The audit is shown able to fail: with the old map, whose half-width ignores the
rounding of the centre, the brute-force sensitivity exceeds Delta.
"""
import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

from dpsubset import Bounds, dp_best_subset
from dpsubset.defaults import DEFAULT_LAM, default_radius
from dpsubset.design.build import build_design
from dpsubset.privacy.leaks import PrivacyLeakWarning
from dpsubset.scores.least_squares import LeastSquaresScorer
from dpsubset.privacy.sensitivity import score_sensitivity
from dpsubset.results.usefulness import LowUtilityWarning

TOL = 1e-9
EPS = 1.0


def _release(formula, data, bounds, s):
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        warnings.simplefilter("ignore", LowUtilityWarning)
        return dp_best_subset(formula, data, eps=EPS, s=s, bounds=bounds, random_state=0)


def _scores(design, s, r, lam):
    """c(S) of every support of size s (exact least squares), in a fixed order."""
    sc = LeastSquaresScorer(design.X, design.y, lam, r, forced=design.forced)
    supports = np.array(list(itertools.combinations(range(design.X.shape[1]), s)))
    return sc.score(supports)


def _replace(df, i, row):
    out = df.copy()
    for col, v in row.items():
        out.loc[i, col] = v
    return out


def audit(formula, base, bounds, neighbours, s):
    """Release on ``base`` and every neighbour; the worst score change over Delta.

    Returns
    -------
    float
        max over neighbours and supports of |c_D(S) - c_D'(S)| / Delta, Delta the
        sensitivity the release on ``base`` reports (its r and lam for the scores).
    """
    res = _release(formula, base, bounds, s)
    Delta = res.privacy.sensitivity
    D0 = build_design(formula, base, bounds)
    c0 = _scores(D0, s, res.r, res.lam)
    worst = 0.0
    for i, nb in neighbours:
        res1 = _release(formula, nb, bounds, s)  # a release, not an error
        assert res1.privacy.guarantee == res.privacy.guarantee == "pure"
        assert res1.privacy.sensitivity == Delta and res1.candidates == res.candidates
        D1 = build_design(formula, nb, bounds)
        assert np.all(np.abs(D1.X) <= 1.0) and np.all(np.abs(D1.y) <= 1.0)
        others = np.arange(len(base)) != i
        np.testing.assert_array_equal(D1.X[others], D0.X[others])   # one row of the design changed
        np.testing.assert_array_equal(D1.y[others], D0.y[others])
        worst = max(worst, float(np.max(np.abs(_scores(D1, s, res.r, res.lam) - c0))) / Delta)
    return worst


def corner_neighbours(base, box, rows, extra=()):
    """Neighbours replacing each of ``rows`` by every corner of the raw box (and by the
    ``extra`` rows, values outside the box included)."""
    cols = list(box)
    corners = [dict(zip(cols, v)) for v in itertools.product(*(box[c] for c in cols))]
    return [(i, _replace(base, i, row)) for i in rows for row in corners + list(extra)]


# ---------------------------------------------------------------- item 1: rows outside the box

BOOK = {"a": (-1.0, 1.0), "b": (1.0, 4.0), "c": (-5.0, -1.0), "d": (0.0, 4.0), "y": (-2.0, 2.0),
        "np.log(d)": (-5.0, 2.0)}


def _item1_data(n=24, seed=5):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({k: rng.uniform(lo, hi, n) for k, (lo, hi) in BOOK.items() if k != "np.log(d)"})
    df["y"] = np.clip(df["a"] - 0.4 * np.log(df["b"]) + 0.2 * df["c"] + rng.normal(0, 0.3, n), -2, 2)
    return df


ITEM1 = [  # the repros: (formula, the replaced row's value outside the box)
    ("y ~ a + np.log(b) + c", {"b": 0.0}),
    ("y ~ a + np.sqrt(b) + c", {"b": -1.0}),
    ("y ~ a + b + I(1/c)", {"c": 0.0}),
    ("y ~ I(a**2) + b + c", {"a": 1e200}),
    ("y ~ a + b + np.exp(c)", {"c": 1000.0}),
    ("y ~ a + b + np.log(d)", {"d": 0.0}),   # the term has its own interval; log(0) = -inf
]


@pytest.mark.parametrize("formula,outside", ITEM1)
def test_item1_a_row_outside_the_box_is_a_release_within_delta(formula, outside):
    base = _item1_data()
    used = [v for v in ("a", "b", "c", "d") if v in formula] + ["y"]
    box = {v: BOOK[v] for v in used}
    neighbours = corner_neighbours(base, box, rows=[0, 7], extra=[outside, dict(outside, y=50.0)])
    book = {k: v for k, v in BOOK.items() if k != "np.log(d)" or k in formula}
    worst = audit(formula, base, book, neighbours, s=1)
    assert worst <= 1 + TOL, f"{formula}: brute-force sensitivity {worst:.4f} Delta"


# ---------------------------------------------------------------- item 3: maps near float precision

# x in (2^53, 2^53 + 2): the midpoint 2^53 + 1 is not a float and rounds to 2^53, so the
# old half-width 1 sent the top of the range to 2.0 while Delta assumes 1.
LO = 2.0 ** 53
F3 = Bounds(x={"x": (LO, LO + 2), "z": (-1.0, 1.0), "w": (-1.0, 1.0)}, y=(-1.0, 1.0))
FORMULA3, S3 = "y ~ x + z + w", 2
BOX3 = {"x": (LO, LO + 2), "z": (-1.0, 1.0), "w": (-1.0, 0.0, 1.0), "y": (-1.0, 1.0)}


def _item3_data(m=10):
    """Four row types, m times each, whose fit on {x, z} points at the corner (x, z) = (hi, 1):
    replacing one row by that corner with y = -1 is what a map beyond 1 makes costly."""
    rows = [(LO, -1.0, 0.0, -1.0), (LO + 2, -1.0, 0.0, 1.0), (LO, 1.0, 0.0, 1.0), (LO + 2, 1.0, 0.0, 1.0)]
    return pd.DataFrame(rows * m, columns=["x", "z", "w", "y"])


def _item3_neighbours(base):
    outside = [{"x": LO + 1e6, "z": 5.0, "w": 0.0, "y": -9.0}, {"x": LO - 1e6, "z": -5.0, "w": 3.0, "y": 9.0}]
    return corner_neighbours(base, BOX3, rows=range(4), extra=outside)


def test_item3_mapped_values_in_the_unit_interval_and_sensitivity_within_delta():
    base = _item3_data()
    D = build_design(FORMULA3, base, F3)
    assert D.X[:, 0].min() >= -1.0 and D.X[:, 0].max() == 1.0
    worst = audit(FORMULA3, base, F3, _item3_neighbours(base), s=S3)
    assert worst <= 1 + TOL, f"brute-force sensitivity {worst:.4f} Delta"


def test_item3_audit_detects_the_old_map(monkeypatch):
    """With the old half-width (hi - lo) / 2, blind to the rounding of the centre, the top
    of the range maps to 2.0 and the same brute force exceeds Delta (1.28 Delta)."""
    import dpsubset.design.build as design  # the module whose step 8 maps the columns

    def old_map(lo, hi, has_intercept):
        return ((lo + hi) / 2, (hi - lo) / 2) if has_intercept else (0.0, max(abs(lo), abs(hi)))

    monkeypatch.setattr(design, "_interval_map", old_map)
    base = _item3_data()
    D = build_design(FORMULA3, base, F3)
    assert D.X[:, 0].max() == 2.0
    # the Delta and radius the call would use (its release would stop at the refit's row check)
    r = default_radius(D.x_bounds, D.b_y, S3, D.forced_bounds)
    Delta = score_sensitivity(D.x_bounds, D.b_y, r, S3, D.forced_bounds, D.n)
    c0 = _scores(D, S3, r, DEFAULT_LAM)
    worst = max(float(np.max(np.abs(_scores(build_design(FORMULA3, nb, F3), S3, r, DEFAULT_LAM) - c0)))
                for _, nb in _item3_neighbours(base)) / Delta
    assert worst > 1.2, f"the old map was not caught ({worst:.4f} Delta)"
