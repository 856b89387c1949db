"""One loss hierarchy (issue 24): the selection scores and the refit use the same Loss objects.

- Fenchel-Young for every loss's closed-form conjugate: l(v) + l*(a) >= a v for any
  points, with equality at a = l'(v).
- The refit's per-row loss (``RefitLoss``: refit_scale times the score's loss) and its
  constants are bit for bit the formulas the refit wrote out before the two hierarchies
  were merged (reproduced here), so the refit's coefficients cannot move.
- The loss names and the defaults are defined once, in dpsubset.losses.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import expit

from dpsubset import losses
from dpsubset.losses import (CLASSIFICATION_LOSSES, LOSSES, HingeLoss, HuberLoss, LogisticLoss,
                             SquaredLoss, make_loss)
from dpsubset.refit import objective as refit

ALL = {"squared": SquaredLoss(), "huber": HuberLoss(0.37), "logistic": LogisticLoss(),
       "hinge": HingeLoss(0.63)}


def _points(name, rng, m=4000):
    eta = rng.uniform(-6, 6, m)
    y = rng.choice([-1.0, 1.0], m) if name in CLASSIFICATION_LOSSES else rng.uniform(-2, 2, m)
    return eta, y


def _dual_points(loss, y, rng):
    """Random alpha in the domain of l*(.; y)."""
    if loss.name in CLASSIFICATION_LOSSES:  # q = -y alpha in [0, 1]
        return -y * rng.uniform(0, 1, len(y))
    if loss.name == "huber":
        return rng.uniform(-loss.h, loss.h, len(y))
    return rng.uniform(-5, 5, len(y))


@pytest.mark.parametrize("name", LOSSES)
def test_fenchel_young_inequality_and_equality(name):
    loss, rng = ALL[name], np.random.default_rng(7)
    eta, y = _points(name, rng)
    alpha = _dual_points(loss, y, rng)
    gap = loss.value(eta, y) + loss.conjugate(alpha, y) - alpha * eta
    assert np.min(gap) >= -1e-12
    # equality at alpha = l'(eta)
    a_star = loss.derivative(eta, y)
    eq = loss.value(eta, y) + loss.conjugate(a_star, y) - a_star * eta
    np.testing.assert_allclose(eq, 0.0, atol=1e-9 * max(1.0, float(np.max(np.abs(a_star * eta)))))


@pytest.mark.parametrize("name", LOSSES)
def test_conjugate_is_the_supremum(name):
    """l*(a) = sup_eta a eta - l(eta), checked on a fine grid of eta."""
    loss, rng = ALL[name], np.random.default_rng(11)
    grid = np.linspace(-40, 40, 400001)
    for _ in range(5):
        y = float(rng.choice([-1.0, 1.0]) if name in CLASSIFICATION_LOSSES else rng.uniform(-1, 1))
        a = float(_dual_points(loss, np.array([y]), rng)[0]) * 0.9
        sup = float(np.max(a * grid - loss.value(grid, y)))
        assert loss.conjugate(np.array([a]), np.array([y]))[0] == pytest.approx(sup, abs=1e-6)


# The refit's own loss classes as they were before the merge (refit.py, sum form).
def _old_phi(name, h, eta, y):
    if name == "squared":
        return (y - eta) ** 2, 2.0 * (eta - y), np.full(np.broadcast(eta, y).shape, 2.0)
    if name == "huber":
        u = y - eta
        return (2.0 * u * u / (np.sqrt(1.0 + (u / h) ** 2) + 1.0),
                -2.0 * u / np.sqrt(1.0 + (u / h) ** 2), 2.0 * (1.0 + (u / h) ** 2) ** -1.5)
    if name == "logistic":
        z = y * eta
        return np.logaddexp(0.0, -y * eta), -y * expit(-y * eta), expit(z) * expit(-z)
    a = 2.0 * (1.0 - y * eta) / h
    return (0.5 * h * np.logaddexp(0.0, 2.0 * (1.0 - y * eta) / h),
            -y * expit(2.0 * (1.0 - y * eta) / h), (2.0 / h) * expit(a) * expit(-a))


def _old_constants(name, h, R, b_y, r):
    if name == "squared":
        return 2.0 * R * (b_y + R * r), 2.0 * R * R
    if name == "huber":
        return 2.0 * R * min(h, b_y + R * r), 2.0 * R * R
    if name == "logistic":
        return R, R * R / 4.0
    return R, R * R / (2.0 * h)


_OLD_SUP = {"squared": lambda h: 2.0, "huber": lambda h: 2.0, "logistic": lambda h: 0.25,
            "hinge": lambda h: 1.0 / (2.0 * h)}


@pytest.mark.parametrize("name", LOSSES)
def test_refit_loss_is_bit_for_bit_the_old_refit_loss(name):
    rng = np.random.default_rng(3)
    h = {"huber": 0.37, "hinge": 0.63}.get(name)
    lossobj = refit.refit_loss(name, b_y=2.0, huber_h=h, hinge_h=h)
    eta, y = _points(name, rng)
    phi, dphi, d2phi = _old_phi(name, h, eta, y)
    assert np.array_equal(lossobj.phi(eta, y), phi)
    assert np.array_equal(lossobj.dphi(eta, y), dphi)
    assert np.array_equal(lossobj.d2phi(eta, y), d2phi)
    assert lossobj.d2phi_sup() == _OLD_SUP[name](h)
    for R, b_y, r in rng.uniform(0.1, 7.0, (200, 3)):
        assert lossobj.constants(R, b_y, r) == _old_constants(name, h, R, b_y, r)


def test_refit_scale_is_the_one_factor_between_the_conventions():
    for name in LOSSES:
        loss = ALL[name]
        assert loss.refit_scale == (2.0 if name in ("squared", "huber") else 1.0)


def test_names_and_defaults_are_defined_once():
    assert LOSSES == ("squared", "huber", "logistic", "hinge")
    assert set(CLASSIFICATION_LOSSES) | set(losses.REGRESSION_LOSSES) == set(LOSSES)
    # the refit has no loss classes or defaults of its own any more
    for old in ("_Loss", "_Squared", "_PseudoHuber", "_Logistic", "_SoftplusHinge", "_make_loss",
                "DEFAULT_HUBER_H_FRACTION", "DEFAULT_HINGE_H"):
        assert not hasattr(refit, old), old
    assert refit.LOSSES is LOSSES
    assert make_loss("huber", b_y=3.0).h == losses.DEFAULT_HUBER_H_FRACTION * 3.0
    assert refit.refit_loss("huber", b_y=3.0).h == make_loss("huber", b_y=3.0).h
    assert refit.refit_loss("hinge").h == losses.DEFAULT_HINGE_H
    with pytest.raises(ValueError, match="loss must be one of"):
        refit.refit_loss("quantile")


@pytest.mark.parametrize("name", LOSSES)
def test_refit_constants_bound_the_gradient_and_hessian(name):
    """zeta and lambda bound one row's gradient norm and Hessian over the ball."""
    loss, rng = ALL[name], np.random.default_rng(5)
    R, b_y, r = 1.3, 0.9, 0.8
    lossobj = refit.RefitLoss(loss)
    zeta, lam = lossobj.constants(R, b_y, r)
    eta = rng.uniform(-R * r, R * r, 20000)
    y = rng.choice([-1.0, 1.0], 20000) if loss.classification else rng.uniform(-b_y, b_y, 20000)
    assert np.max(np.abs(lossobj.dphi(eta, y))) * R <= zeta * (1 + 1e-12)
    assert np.max(lossobj.d2phi(eta, y)) * R * R <= lam * (1 + 1e-12)
    assert math.isfinite(zeta) and math.isfinite(lam)
