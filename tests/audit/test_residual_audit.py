"""Privacy audit of the residual variance of the observation intervals (issue 37).

``prediction.release_residual_variance`` releases ``RSS = sum_i (y_i - x_i'b)^2`` at the
released coefficients b (public by then) with Laplace noise of scale
``(b_y + sum_j |b_j| c_j)^2 / eps`` (docs/methods/inference.md, "Predictions").

1. Sensitivity by brute force: small data sets in the public box, every row replaced by
   the box's corners and random points, for several b: the move of RSS never exceeds the
   claimed sensitivity, and the corners reach it (the claim is tight).
2. Known-bad: the sensitivity ``b_y^2`` (the response's range alone, forgetting that the
   fitted value moves the residual too) is exceeded by the same search.
3. The release itself: the privacy loss of the exact grid law between the RSS of two
   neighbours at the worst move stays at most eps (the grid law's own log-ratio).
"""
import itertools
import math

import numpy as np
import pytest

from dpsubset.inference.prediction import release_residual_variance, residual_sensitivity
from dpsubset.mechanisms.noise import laplace_release_sf

B_Y = 1.0
C = np.array([1.0, 1.0, 0.5])  # intercept, two columns


def _rss(Z, coef):
    v = np.append(-coef, 1.0)
    return float(v @ (Z.T @ Z) @ v)


def _largest_move(coef, rng, n=6, tries=5):
    corners = [np.array((1.0,) + c) for c in itertools.product((-C[1], C[1]), (-C[2], C[2]), (-B_Y, B_Y))]
    worst = 0.0
    for _ in range(tries):
        Z = np.column_stack([np.ones(n), rng.uniform(-C[1], C[1], n), rng.uniform(-C[2], C[2], n),
                             rng.uniform(-B_Y, B_Y, n)])
        base = _rss(Z, coef)
        for i in range(n):
            for row in corners + [np.r_[1.0, rng.uniform(-C[1:], C[1:]), rng.uniform(-B_Y, B_Y)] for _ in range(5)]:
                Zn = Z.copy()
                Zn[i] = row
                worst = max(worst, abs(_rss(Zn, coef) - base))
    return worst


@pytest.mark.parametrize("coef", [(0.0, 0.0, 0.0), (0.2, -0.5, 0.3), (1.0, 1.0, -2.0)])
def test_the_sensitivity_holds_and_is_reached(coef):
    coef = np.asarray(coef)
    rng = np.random.default_rng(1)
    claimed = residual_sensitivity(coef, C, B_Y)
    found = _largest_move(coef, rng)
    assert found <= claimed * (1 + 1e-12)
    assert found >= 0.8 * claimed  # a corner row replaces one whose residual is near 0


def test_the_response_range_alone_is_caught():
    coef = np.array([0.2, -0.5, 0.3])
    found = _largest_move(coef, np.random.default_rng(2))
    assert found > B_Y ** 2 * 1.5  # a claimed sensitivity b_y^2 would be exceeded


def test_the_release_loss_is_at_most_eps():
    """Exact grid law of the released RSS for two neighbours at the worst move: the
    log-ratio of P(release > x) over a range of x stays within eps."""
    coef = np.array([0.2, -0.5, 0.3])
    eps = 0.7
    sens = residual_sensitivity(coef, C, B_Y)
    scale = sens / eps
    a, b = 10.0, 10.0 + sens
    worst = 0.0
    for x in np.linspace(a - 8 * scale, b + 8 * scale, 161):
        pa, pb = laplace_release_sf(a, scale, x), laplace_release_sf(b, scale, x)
        qa, qb = 1 - pa, 1 - pb
        worst = max(worst, abs(math.log(pa) - math.log(pb)), abs(math.log(qa) - math.log(qb)))
    assert worst <= eps * (1 + 1e-6)
    assert worst >= 0.9 * eps
    # and the release uses that scale
    Z = np.column_stack([np.ones(5), np.zeros((5, 2)), np.full(5, 0.5)])
    out = release_residual_variance(Z.T @ Z, coef, C, B_Y, 5, eps=eps, rng=np.random.default_rng(0))
    assert out.scale == pytest.approx(scale)
