"""A new convex loss is one class: a :class:`dpsubset.losses.Loss` subclass with a name
registers itself, and the whole release (settings, scores and their sensitivity, the
certified search, the exact-grid refit, the report) runs with it, with no edit
elsewhere (issue 38). And the loss names are spelled in one module only."""
import ast
import pathlib
import warnings

import numpy as np
import pandas as pd
import pytest

import dpsubset as dps
from dpsubset import losses
from dpsubset.losses import LOSSES, REGRESSION_LOSSES, Loss, make_loss

ROOT = pathlib.Path(dps.__file__).parent


class LogCoshLoss(Loss):
    """l(eta; y) = log cosh(eta - y): a smooth robust regression loss (a toy for the test)."""

    name = "log_cosh"

    def value(self, eta, y):
        u = np.abs(np.asarray(eta, dtype=float) - y)
        return u + np.log1p(np.exp(-2.0 * u)) - np.log(2.0)

    def derivative(self, eta, y):
        return np.tanh(np.asarray(eta, dtype=float) - y)

    def second_derivative(self, eta, y):
        return 1.0 / np.cosh(np.asarray(eta, dtype=float) - y) ** 2

    def conjugate(self, alpha, y):
        a = np.clip(alpha, -1.0, 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            ent = np.where(np.abs(a) < 1.0, a * np.arctanh(a) + 0.5 * np.log1p(-a * a), np.log(2.0))
        return a * y + ent

    def conjugate_box(self, y):
        n = len(np.asarray(y))
        return np.full(n, -1.0), np.full(n, 1.0)

    def conjugate_slope(self, alpha, y):
        return y + np.arctanh(np.clip(alpha, -1.0 + 1e-12, 1.0 - 1e-12))

    def row_max(self, b_y, a):
        return float(np.log(np.cosh(b_y + a)))

    def centre(self, y):
        return y

    def second_derivative_sup(self):
        return 1.0

    def derivative_bound(self, b_y, a):
        return float(np.tanh(b_y + a))


# defining the class registered it; the fixture keeps it registered for the tests that use it
losses._REGISTRY.pop(LogCoshLoss.name, None)


@pytest.fixture
def log_cosh():
    losses._REGISTRY[LogCoshLoss.name] = LogCoshLoss
    yield LogCoshLoss.name
    losses._REGISTRY.pop(LogCoshLoss.name, None)  # the other tests see the package's four


def test_the_new_loss_bounds_hold_by_brute_force(log_cosh):
    """Its per-row bounds are privacy claims (the scores' Delta, the refit's noise): checked
    on a grid of |y| <= b_y, |eta| <= a, as the audit does for the package's losses."""
    loss = make_loss(log_cosh)
    for b_y, a in ((0.5, 0.3), (1.0, 2.0), (3.0, 0.1)):
        y, eta = np.meshgrid(np.linspace(-b_y, b_y, 201), np.linspace(-a, a, 201))
        assert loss.value(eta, y).max() <= loss.row_max(b_y, a) * (1 + 1e-12)
        assert loss.value(eta, y).min() >= loss.row_min(b_y, a)
        assert np.abs(loss.derivative(eta, y)).max() <= loss.derivative_bound(b_y, a) * (1 + 1e-12)
        assert loss.second_derivative(eta, y).max() <= loss.second_derivative_sup()


def test_a_variant_does_not_replace_the_loss_it_extends():
    class LouderSquared(losses.SquaredLoss):  # inherits the name: not registered
        refit_scale = 4.0
    assert LOSSES["squared"] is losses.SquaredLoss
    assert isinstance(make_loss("squared"), losses.SquaredLoss) and not isinstance(
        make_loss("squared"), LouderSquared)
    with pytest.raises(ValueError, match="'huber' is already registered"):
        class OtherHuber(losses.HuberLoss):
            name = "huber"


def _data(n=300, p=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, p))
    y = np.clip(0.8 * X[:, 0] - 0.6 * X[:, 2] + 0.2 * rng.standard_normal(n), -1, 1)
    return pd.DataFrame(X, columns=[f"x{j}" for j in range(p)]).assign(y=y)


def test_a_loss_class_registers_itself(log_cosh):
    class Another(LogCoshLoss):
        name = "another_toy"
    try:
        assert "another_toy" in LOSSES and make_loss("another_toy").name == "another_toy"
    finally:
        losses._REGISTRY.pop("another_toy")
    assert "another_toy" not in LOSSES
    assert log_cosh in LOSSES and log_cosh in REGRESSION_LOSSES
    assert isinstance(make_loss(log_cosh), LogCoshLoss)
    loss = make_loss(log_cosh)
    eta, y = np.linspace(-2, 2, 9), np.full(9, 0.3)
    # the conjugate is what the Fenchel bounds assume: l(eta) + l*(l'(eta)) = eta l'(eta)
    d = loss.derivative(eta, y)
    np.testing.assert_allclose(loss.value(eta, y) + loss.conjugate(d, y), eta * d, atol=1e-12)


def test_the_release_runs_with_a_new_loss(log_cosh):
    df = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = dps.dp_best_subset("y ~ .", df, eps=40.0, s=2, bounds=dict(y=(-1, 1), x0=(-1, 1), x1=(-1, 1),
                                 x2=(-1, 1), x3=(-1, 1), x4=(-1, 1), x5=(-1, 1)),
                                 loss=log_cosh, random_state=0)
    assert res.loss == log_cosh and len(res.support) == 2
    assert res.privacy.guarantee == "pure"
    assert np.isfinite(res.params).all()
    # the exact search certified its candidates and the refit is the exact-grid one
    assert res.privacy.exact_search and "exact grid" in repr(res.privacy)
    # a new loss takes no options it does not declare
    with pytest.raises(TypeError, match="takes no options"):
        dps.dp_best_subset("y ~ .", df, eps=4.0, s=2, bounds=(1, 1), loss=dict(name=log_cosh, h=1))


def _loss_name_modules():
    """Modules of dpsubset/ whose code (not docstrings) spells a loss's name as a string."""
    names = {"squared", "huber", "logistic", "hinge"}
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        tree = ast.parse(path.read_text())
        docs = {id(node.body[0].value) for node in ast.walk(tree)
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and node.body and isinstance(node.body[0], ast.Expr)
                and isinstance(node.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in names and id(node) not in docs:
                found.setdefault(node.value, set()).add(str(path.relative_to(ROOT)))
    return found


def test_each_loss_name_is_spelled_in_at_most_two_modules():
    found = _loss_name_modules()
    assert set(found) == {"squared", "huber", "logistic", "hinge"}  # the check sees them at all
    assert {name: mods for name, mods in found.items() if len(mods) > 2} == {}
    assert all("losses.py" in mods for mods in found.values())
