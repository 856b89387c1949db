"""Audit of the private centring (issue 36, dpsubset/design/centring.py, docs/methods/centring.md).

The stage releases, for each codebook column and the response, the mean of z = (x - lo) / (hi - lo)
on the codebook-clipped values (sensitivity 1/n under the replacement of one row) and, where
the box may be tightened, the mean of z (1 - z) (sensitivity 1/(4n)), each with Laplace noise.
The privacy loss of such a release between two data sets D and D' is at most
sum_j |stat_j(D) - stat_j(D')| / scale_j, so the release is eps-DP exactly when that sum stays
within the stage's eps for every pair of neighbours. These tests run the real pipeline
(``build_design`` with a centring request), record the statistics and the scales that reach
the one noise call, and check:

* the scales depend on public numbers only (the same for D and D');
* the sum above is at most the stage's eps on random rows, rows at the corners of the
  codebook box, rows far outside it (clipped first) and a coordinate search over the row;
* the ledger records exactly that eps;
* every value the later stages see lies in [-1, 1], whatever the noise released
  (adversarial releases far outside [0, 1]);
* known-bad: with the noise scales halved (the sensitivity of a half-width instead of the
  width), or with the mean of z^2 (sensitivity 1/n) released at the scale meant for
  z (1 - z), the same neighbours exceed eps.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpsubset.design.centring as centring
from dpsubset import Bounds
from dpsubset.design.build import build_design
from dpsubset.design.centring import CentreRequest, CentreSettings
from dpsubset.privacy.budget import BudgetLedger

N = 14
EPS = 0.7
BOUNDS = Bounds(x={"a": (0.0, 10.0), "b": (0.0, 1.0), "c": (-5.0, 5.0)}, y=(0.0, 100.0))
LEVELS = ["u", "v", "w"]


def base_frame(seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "a": rng.exponential(1.5, N),                        # skewed: fills a small part of (0, 10)
        "b": (rng.random(N) < 0.2).astype(float),            # a 0/1 indicator
        "c": rng.normal(0, 1, N),
        "g": pd.Categorical(rng.choice(LEVELS, N), categories=LEVELS),
        "y": rng.gamma(2.0, 5.0, N),
    })


class Recorder:
    """Stands in for the one noise call: records (statistics, scales), adds the noise given."""

    def __init__(self, noise=0.0):
        self.calls = []
        self.noise = noise

    def __call__(self, values, scales, rng):
        values = np.asarray(values, dtype=float)
        scales = np.asarray(scales, dtype=float)
        self.calls.append((values.copy(), scales.copy()))
        return values + self.noise


_SUMS = centring._sums


def _squares_instead(*args):
    """Known-bad statistics: the mean of z^2 (sensitivity 1/n) released at the scale of the
    mean of z (1 - z) (sensitivity 1/(4n))."""
    s1, s2 = _SUMS(*args)
    return s1, s1 - s2  # sum z^2 = sum z - sum z (1 - z)


def release(frame, monkeypatch, noise=0.0, settings=None, wrong_statistic=False):
    rec = Recorder(noise)
    monkeypatch.setattr(centring, "laplace_release", rec)
    monkeypatch.setattr(centring, "_sums", _squares_instead if wrong_statistic else _SUMS)
    ledger = BudgetLedger()
    req = CentreRequest(settings or CentreSettings(), EPS, np.random.default_rng(0), ledger)
    design = build_design("y ~ .", frame, BOUNDS, centre=req)
    stats = np.concatenate([c[0] for c in rec.calls])
    scales = np.concatenate([c[1] for c in rec.calls])
    return design, stats, scales, ledger


def privacy_loss(stats_d, stats_e, scales):
    return float(np.sum(np.abs(stats_d - stats_e) / scales))


def neighbours(frame, rng, k=30):
    """Rows replaced by random rows, by corners of the box and by rows far outside it."""
    out = []
    corners = {"a": [0.0, 10.0, -50.0, 1e6], "b": [0.0, 1.0, 7.0], "c": [-5.0, 5.0, -1e5, 40.0],
               "y": [0.0, 100.0, -3.0, 1e4]}
    for t in range(k):
        d = frame.copy()
        i = int(rng.integers(N))
        for col, vals in corners.items():
            d.loc[i, col] = vals[int(rng.integers(len(vals)))] if t % 3 else float(rng.uniform(-20, 120))
        d.loc[i, "g"] = LEVELS[int(rng.integers(3))]
        out.append(d)
    return out


def worst_loss(frame, monkeypatch, wrong_statistic=False, scale_factor=1.0, seed=1):
    _, s0, sc0, _ = release(frame, monkeypatch, wrong_statistic=wrong_statistic)
    worst = 0.0
    for d in neighbours(frame, np.random.default_rng(seed)):
        _, s1, sc1, _ = release(d, monkeypatch, wrong_statistic=wrong_statistic)
        np.testing.assert_array_equal(sc0, sc1)  # the scales read public numbers only
        worst = max(worst, privacy_loss(s0, s1, sc0 * scale_factor))
    # a coordinate search over the replaced row's values
    d = frame.copy()
    for col, grid in (("a", np.linspace(-5, 15, 9)), ("c", np.linspace(-8, 8, 9)), ("y", np.linspace(-10, 110, 9))):
        best_v, best_l = None, -1.0
        for v in grid:
            d.loc[0, col] = v
            _, s1, _, _ = release(d, monkeypatch, wrong_statistic=wrong_statistic)
            loss = privacy_loss(s0, s1, sc0 * scale_factor)
            if loss > best_l:
                best_v, best_l = v, loss
        d.loc[0, col] = best_v
        worst = max(worst, best_l)
    return worst


def test_centring_release_is_eps_dp_on_neighbours(monkeypatch):
    frame = base_frame()
    _, stats, scales, ledger = release(frame, monkeypatch)
    # the ledger records the stage's whole eps, and the scales add up to it for sensitivities
    # 1/n (means) and 1/(4n) (the spreads, after the means)
    assert sum(e["eps"] for e in ledger.stages) == pytest.approx(EPS, rel=1e-12)
    assert all(e["stage"] == "centring" for e in ledger.stages)
    loss = worst_loss(frame, monkeypatch)
    assert 0 < loss <= EPS * (1 + 1e-9)


def test_known_bad_halved_scales_exceed_eps(monkeypatch):
    """The sensitivity of a half-width (1 / (2n)) instead of the width: the audit must fail."""
    frame = base_frame()
    assert worst_loss(frame, monkeypatch, scale_factor=0.5) > EPS * 1.2


def test_known_bad_statistic_of_larger_sensitivity(monkeypatch):
    """The mean of z^2 (sensitivity 1/n) released at the scale meant for z (1 - z) (1/(4n))."""
    frame = base_frame()
    assert worst_loss(frame, monkeypatch, wrong_statistic=True) > EPS * 1.2


@pytest.mark.parametrize("noise", [-7.0, -0.4, 0.0, 0.37, 3.0, 1e6])
def test_every_mapped_value_lies_in_the_unit_box(monkeypatch, noise):
    """Whatever the release says (far outside [0, 1] included), the later stages see [-1, 1]."""
    frame = base_frame(3)
    frame.loc[0, "a"] = 10.0   # a row at the top of the box
    frame.loc[1, "c"] = -5.0
    frame.loc[2, "y"] = 100.0
    for st in (CentreSettings(), CentreSettings(spreads=0.01), CentreSettings(min_interior=0.0, spreads=1e-6)):
        design, *_ = release(frame, monkeypatch, noise=noise, settings=st)
        for arr in (design.data.X, design.data.forced[:, 1:], design.data.y):
            assert np.all(np.abs(arr) <= 1.0)
        assert np.all(design.spec.x_bounds == 1.0) and design.spec.b_y == 1.0
        for rec in design.spec.centring:
            lo, hi = rec.box
            assert rec.codebook[0] <= lo <= rec.centre <= hi <= rec.codebook[1]
