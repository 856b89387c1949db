"""Mironov's (2012) attack pointed at the refit's objective perturbation.

The objective perturbation's noise is still drawn in floating point (a Gamma norm and a
direction; docs/methods/refit.md, "Floating point"). With one coefficient and the
closed-form (squared-loss) refit, the release is fl(fl(c - b) / A) with c = 2 X'y and
A = 2 X'X + Delta. Where the floats c - b are spaced wider than A times the floats of
the release, only some releases are reachable, and which ones depends on A, hence on
the data. :func:`impossible` proves a release unreachable under a data set from *any*
float noise b: the release is monotone in b (a rounded subtraction, then a rounded
division by A > 0), so two adjacent floats b whose releases straddle the value leave
it unreachable.

About half of the releases of that floating-point refit in the window tested below are
impossible under the neighbouring data set: an infinite privacy loss. That refit is the
audit's known-bad case; the refit dp_best_subset runs when pure is the exact-grid one
(dpsubset/refit/exact_grid.py), which the last test attacks the same way and finds every
release reachable. The sanity test checks that the certificate never calls a release
impossible under the data set that produced it.
"""
import math

import numpy as np
import pytest

from dpsubset.refit import objective as op

SETTINGS = dict(loss="squared", eps=4.0, row_bound=0.5, b_y=1.0, r=2.0)
# two neighbours: the second row's x is replaced (A = 1.25 against A' = 1.07)
X, XP = np.array([[0.5], [0.5]]), np.array([[0.5], [0.4]])
Y = np.array([1.0, 0.25])
# releases in [0.934, 1) come, under both data sets, from c - b in [1, 2), whose floats
# are spaced 2^-52, wider than A times the releases' spacing 2^-53
WINDOW = (0.934, 1.0)


def _delta():
    return op.calibrate("squared", 1, eps=SETTINGS["eps"], row_bound=SETTINGS["row_bound"],
                         b_y=SETTINGS["b_y"], r=SETTINGS["r"]).regularization


def _release_with_noise(X_, y_, b):
    theta, _ = op._solve_closed_form(X_, y_, _delta(), np.array([b]), SETTINGS["r"])
    return float(theta[0])


def impossible(theta, X_, y_, max_steps=200):
    """True if no float b makes the refit on (X_, y_) release ``theta`` (see the module
    docstring); False if some b does, or if the search is inconclusive."""
    b = 2.0 * float(X_[:, 0] @ y_) - theta * (2.0 * float(X_[:, 0] @ X_[:, 0]) + _delta())
    for _ in range(max_steps):
        v = _release_with_noise(X_, y_, b)
        if v == theta:
            return False
        nb = np.nextafter(b, np.inf if v > theta else -np.inf)
        v2 = _release_with_noise(X_, y_, nb)
        if v2 == theta:
            return False
        if (v - theta) * (v2 - theta) < 0:
            return True
        b = nb
    return False


@pytest.fixture(scope="module")
def releases():
    rng = np.random.default_rng(1)
    out = [op.objective_perturbation(X, Y, rng=rng, **SETTINGS).coef[0] for _ in range(3000)]
    got = [t for t in out if WINDOW[0] <= t < WINDOW[1]]
    assert len(got) >= 40  # the window is hit often enough for the audit to mean something
    return got


def test_the_certificate_never_rejects_a_release_of_its_own_data(releases):
    assert not any(impossible(t, X, Y) for t in releases)


def test_the_audit_catches_the_floating_point_refit(releases):
    """The known-bad case: the Gamma-norm objective perturbation drawn in floating point (the
    default refit until issue 41) releases values that are impossible under the neighbour."""
    bad = sum(impossible(t, XP, Y) for t in releases)
    assert bad >= len(releases) // 4, f"only {bad} of {len(releases)} releases caught"


def test_the_default_refit_is_the_exact_grid_one():
    """dp_best_subset's pure refit (matrix and Gram routes) is the exact-grid mechanism: the
    report names its sampler as exact and the mapped coefficients lie on its public grid."""
    import warnings

    import pandas as pd

    import dpsubset as dps
    from dpsubset.refit.exact_grid import EXACT_GRID_MODE

    rng = np.random.default_rng(3)
    df = pd.DataFrame(rng.uniform(-0.5, 0.5, size=(400, 5)), columns=[f"x{j}" for j in range(5)])
    df["y"] = np.clip(df.x0 - df.x1 + 0.1 * rng.normal(size=400), -0.5, 0.5)
    for n_rows in (400, 400 * 30):  # the second takes the Gram route (tall data)
        data = pd.concat([df] * (n_rows // 400), ignore_index=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = dps.dp_best_subset("y ~ 0 + .", data, eps=4.0, s=2, bounds=(0.5, 0.5), random_state=1)
        stage = [st for st in res.privacy.stages if st["stage"] == "refit"][0]
        assert EXACT_GRID_MODE in stage["mechanism"]
        assert res.privacy.all_draws_exact
        # the mapped coefficients are integer multiples of the public grid step of these settings
        from dpsubset.refit.exact_grid import exact_grid_calibration
        cal = exact_grid_calibration("squared", 2, eps=res.eps_refit, row_bound=0.5 * math.sqrt(2.0),
                                     b_y=0.5, r=res.r_refit)
        assert cal.step < 1e-6 * res.r_refit
        assert all(float(c / cal.step).is_integer() for c in res._coef_mapped)


def test_exact_grid_releases_are_all_possible_under_the_neighbour():
    """The same attack on ``objective_perturbation_exact`` (docs/methods/refit.md, "An exact
    variant"): every release is a point of the public grid g Z, and for each one a witness
    shows it is reachable under the neighbour with probability far from zero: the noise
    cell whose solve lands nearest to it, then output noise z - k' of probability at least
    exp(-|z - k'| / t_out) (1 - q) / (1 + q) > 0."""
    from dpsubset.refit import exact_grid as eg
    from dpsubset.refit.objective import refit_loss
    cal = eg.exact_grid_calibration("squared", 1, **{k: v for k, v in SETTINGS.items() if k != "loss"})
    rng = np.random.default_rng(1)
    out = [eg.objective_perturbation_exact(X, Y, rng=rng, **SETTINGS).coef[0] for _ in range(300)]
    lossobj = refit_loss("squared", b_y=SETTINGS["b_y"])
    A = 2.0 * float(XP[:, 0] @ XP[:, 0]) + cal.regularization
    c = 2.0 * float(XP[:, 0] @ Y)
    for z in out:
        assert float(z / cal.step).is_integer()  # no low-order bits below the public grid
        if abs(z) >= SETTINGS["r"]:
            continue  # the witness below is for interior points
        cell = math.floor((c - A * z) / cal.cell)  # the cell of the noise that gives z under XP
        b = np.array([(2 * cell + 1) * cal.cell / 2.0])
        k = eg.grid_point(XP, Y, b, cal, lossobj, SETTINGS["r"])[0][0]
        assert abs(z / cal.step - k) <= 2 + cal.cell / (A * cal.step)  # W = z/g - k: probability > 0
