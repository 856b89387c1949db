"""Exact audit of the exact-grid objective perturbation (dpsubset/refit/exact_grid.py).

For one coefficient the release's law can be computed exactly: the noise is the centre
of one of countably many Laplace cells (probability (1 - q) q^m / 2 for cell m and a
sign, q = exp(-1 / cell_t)); each centre goes through the package's own certified solve
to a grid point k; the output adds discrete Laplace noise of parameter out_t. Beyond the
cells where the solution reaches the sphere, every cell gives the same k, so the
remaining mass is added in closed form. With coarse public settings (few cells per
Laplace scale, a small output noise) the audit compares the exact privacy loss over all
outputs with the proven bound eps_obj + 2 s (docs/methods/refit.md, "An exact
variant"), and checks that two known-bad variants break it: no output noise, and noise
calibrated for a quarter of the gradient shift.
"""
import math

import numpy as np
import pytest

from dpsubset.mechanisms import noise
from dpsubset.refit import exact_grid as eg
from dpsubset.refit.objective import refit_loss

SETTINGS = dict(eps=1.0, row_bound=0.5, b_y=1.0, r=0.5)
X = np.array([[0.5], [0.5], [0.25]])
Y = np.array([1.0, 1.0, -0.5])
# neighbours: the second row replaced, flipping its response (the largest gradient shift)
# or shrinking its x (the Jacobian changes as well)
NEIGHBOURS = {"response": (X, np.array([1.0, -1.0, -0.5])),
              "design": (np.array([[0.5], [0.05], [0.25]]), Y)}


def calibration(cell_bits=9, out_t=32, step=2.0 ** -9):
    return eg.exact_grid_calibration("squared", 1, cell_bits=cell_bits, out_t=out_t, step=step,
                                     **SETTINGS)


def grid_law(X_, y_, cal, cell_t=None):
    """{k: probability} of round(theta_hat / g) over the exact law of the cell noise."""
    t = cal.cell_t if cell_t is None else cell_t
    q = math.exp(-1.0 / t)
    lossobj = refit_loss("squared", b_y=SETTINGS["b_y"])
    law, m, last = {}, 0, {}
    while True:
        for sign in (1, -1):
            b = np.array([sign * (2 * m + 1) * cal.cell / 2.0])
            k = int(eg.grid_point(X_, y_, b, cal, lossobj, SETTINGS["r"])[0][0])
            law[k] = law.get(k, 0.0) + 0.5 * (1 - q) * q ** m
            last[sign] = (k, last.get(sign, (None, 0))[1] + 1 if last.get(sign, (None,))[0] == k else 1)
        # far enough out, the solution sits on the sphere: stop once both signs have
        # given the same grid point for 50 cells running and add the remaining mass there
        if m * cal.cell > 8.0 and all(v[1] >= 50 for v in last.values()):
            for sign in (1, -1):
                law[last[sign][0]] += 0.5 * q ** (m + 1)
            return law
        m += 1


def output_law(law, out_t, zs):
    qo = math.exp(-1.0 / out_t)
    c = (1 - qo) / (1 + qo)
    ks = np.array(list(law)), np.array(list(law.values()))
    return np.array([np.sum(ks[1] * c * qo ** np.abs(z - ks[0])) for z in zs])


def max_loss(cal, neighbour, out_t=None, cell_t=None):
    a = grid_law(X, Y, cal, cell_t)
    b = grid_law(*NEIGHBOURS[neighbour], cal, cell_t)
    if out_t is None:  # no output noise: the law of the grid point itself
        zs = sorted(set(a) | set(b))
        pa = np.array([a.get(z, 0.0) for z in zs])
        pb = np.array([b.get(z, 0.0) for z in zs])
    else:
        lo, hi = min(min(a), min(b)) - 20 * out_t, max(max(a), max(b)) + 20 * out_t
        zs = np.arange(lo, hi + 1)
        pa, pb = output_law(a, out_t, zs), output_law(b, out_t, zs)
    with np.errstate(divide="ignore"):
        return float(np.max(np.abs(np.log(pa) - np.log(pb))))


@pytest.mark.parametrize("neighbour", sorted(NEIGHBOURS))
def test_exact_privacy_loss_is_within_the_proven_bound(neighbour):
    cal = calibration()
    loss = max_loss(cal, neighbour, out_t=cal.out_t)
    assert cal.eps_bound < 2 * SETTINGS["eps"]  # the coarse settings still mean something
    assert loss <= cal.eps_bound, (loss, cal.eps_bound)
    assert loss > 0.05  # the neighbours really differ


def test_known_bad_without_output_noise():
    # rounding alone does not hide the data: on a grid finer than the cells' images some
    # grid point is reachable under one data set only (the response neighbour shifts b by
    # a whole number of cells here, so the design neighbour is the one that shows it)
    assert max_loss(calibration(cell_bits=7, step=2.0 ** -14), "design", out_t=None) == math.inf


def test_known_bad_noise_for_a_quarter_of_the_shift():
    cal = calibration()
    loss = max_loss(cal, "response", out_t=cal.out_t, cell_t=max(1, cal.cell_t // 4))
    assert loss > cal.eps_bound, (loss, cal.eps_bound)


def test_release_lies_on_the_public_grid_and_spends_at_most_eps():
    cal = eg.exact_grid_calibration("squared", 1, **SETTINGS)
    assert cal.eps_bound <= SETTINGS["eps"]
    rng = np.random.default_rng(3)
    for _ in range(20):
        coef = eg.objective_perturbation_exact(X, Y, loss="squared", rng=rng, **SETTINGS).coef
        assert float(coef[0] / cal.step).is_integer()


@pytest.mark.parametrize("first_bits", [53, 6])
def test_laplace_cells_has_the_geometric_law(first_bits):
    t, n = 3, 20000
    k = noise.laplace_cells(t, np.random.default_rng(first_bits), n, first_bits=first_bits)
    assert np.all(np.abs(k) % 2 == 1)
    m = (np.abs(k) - 1) // 2
    q = math.exp(-1.0 / t)
    edges = 12
    expected = np.array([(1 - q) * q ** j for j in range(edges)] + [q ** edges]) * n
    observed = np.array([np.sum(m == j) for j in range(edges)] + [np.sum(m >= edges)])
    chi2 = float(np.sum((observed - expected) ** 2 / expected))
    assert chi2 < 40.0  # 12 degrees of freedom: P(chi2 > 40) < 1e-4
    assert abs(np.mean(k > 0) - 0.5) < 4 * math.sqrt(0.25 / n)
    # the sign is independent of the cell: the same law of m on both sides
    assert abs(np.mean(m[k > 0]) - np.mean(m[k < 0])) < 6 * math.sqrt(q / (1 - q) ** 2 * 4 / n)
