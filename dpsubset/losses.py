"""Per-row losses of the selection scores: values, derivatives, conjugates, and bounds.

Every loss is written as a function ``l(eta; y)`` of the linear predictor
``eta = x'beta`` and the response, so that the score of a support S is

    c(S) = min_{||beta||_2 <= r} (1/n) sum_i l(x_{i,K+S}' beta; y_i) + (lam/2n) ||beta||^2

for every loss (the ridge normalisation of the least-squares score, scores.py). The
losses and their definitions, shared with the refit (refit.py) where the refit
minimises the same shape with the same parameter:

=============  ===============================================  ======================
name           l(eta; y)                                        refit.py counterpart
=============  ===============================================  ======================
``squared``    (y - eta)^2 / 2                                  ``(y - eta)^2`` (x 1/2)
``huber``      h^2 (sqrt(1 + (u/h)^2) - 1), u = y - eta         pseudo-Huber (x 1/2)
               (pseudo-Huber: u^2/2 near 0, h|u| far out)
``logistic``   ln(1 + exp(-y eta)), y in {-1, +1}               identical
``hinge``      (h/2) ln(1 + exp(2 (1 - y eta) / h)),            identical (softplus
               y in {-1, +1} (softplus-smoothed hinge)          hinge, same h)
=============  ===============================================  ======================

Why smooth versions. The privacy theorems assume the score is computed exactly, and
the scores here have no closed form: an iterative solver must *certify* its
accuracy, which the duality gap below does cleanly for smooth losses. The plain hinge
would need a subgradient method with no practical certificate. The softplus hinge
with a public width ``h`` differs from the hinge by at most ``(h/2) ln 2`` per row,
and its sensitivity is computed for the loss actually used (never for the hinge).
The pseudo-Huber loss is the smooth twin of the Huber loss with threshold ``h``
(same quadratic centre, same slope ``h`` in the tails).

Sensitivity. Replacing one row changes the mean loss at any fixed beta by at most
``(row_max - row_min) / n``, where row_max and row_min are the largest and smallest
values one row's loss can take over the ball under the public bounds (|y| <= b_y,
``|eta| <= a = r sqrt(B_s)`` by Cauchy-Schwarz); the ridge term does not depend on
the data, so the minimum over the ball moves by at most as much (the argument of
Lemma A.1 and Lemma C.1 of the paper, with the loss's range in place of its
maximum: for the least-squares, Huber and softplus-hinge losses this is at most
the paper's ``row_max / n``, and for the logistic loss it is exactly ``a / n``).

Conjugates. ``conjugate(alpha, y)`` is the convex conjugate of ``eta -> l(eta; y)``,
used for the Fenchel dual of the score: with per-row dual values ``alpha_i`` and a
ball multiplier ``mu >= 0``,

    c(S) >= -(1/n) sum_i l*(alpha_i; y_i) - mu r^2 / 2 - ||v||^2 / (2 (lam/n + mu)),
    v = A' alpha / n,

an exact lower bound for *any* alpha and mu >= 0 (weak duality). Taking
``alpha_i = l'(eta_i)`` at the solver's point certifies the score.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import expit, xlogy

__all__ = ["Loss", "SquaredLoss", "HuberLoss", "LogisticLoss", "HingeLoss", "make_loss",
           "LOSS_NAMES", "CLASSIFICATION_LOSSES", "DEFAULT_HUBER_H_FRACTION", "DEFAULT_HINGE_H",
           "encode_binary_response"]

LOSS_NAMES = ("squared", "huber", "logistic", "hinge")
CLASSIFICATION_LOSSES = ("logistic", "hinge")
#: Default Huber threshold as a fraction of the (mapped) response bound b_y: the refit's
#: default (refit.DEFAULT_HUBER_H_FRACTION), so that selection and refit agree.
DEFAULT_HUBER_H_FRACTION = 0.5
#: Default smoothing width of the softplus hinge (refit.DEFAULT_HINGE_H).
DEFAULT_HINGE_H = 0.5


def _softplus(x):
    return np.logaddexp(0.0, x)


def _logistic_parts(z, y, c):
    """(c softplus(z), -y sigmoid(z), sigmoid(z) sigmoid(-z) / c) for z = z(eta) with
    dz/deta = -y / c: the value and eta-derivatives of c softplus(z(eta)).

    Written with one exp and one log1p per entry (scipy's expit and numpy's logaddexp
    are several times slower, and this is the inner loop of the batched solver).
    """
    e = np.exp(-np.abs(z))
    q = e / (1.0 + e)  # sigmoid(-|z|)
    value = np.log1p(e)
    value += np.maximum(z, 0.0)
    if c != 1.0:
        value *= c
    sig = np.where(z >= 0, 1.0 - q, q)  # sigmoid(z)
    d2 = q * (1.0 - q)
    if c != 1.0:
        d2 /= c
    sig *= -y
    return value, sig, d2


class Loss:
    """One per-row loss ``l(eta; y)`` and what the scores need of it.

    Attributes
    ----------
    name : str
    classification : bool
        True when y must be in {-1, +1}.
    params : dict
        The loss's public parameters (``{"h": ...}`` for Huber and hinge).
    """

    name = ""
    classification = False

    @property
    def params(self) -> dict:
        return {}

    def value(self, eta, y):
        """l(eta; y), elementwise."""
        raise NotImplementedError  # pragma: no cover

    def derivative(self, eta, y):
        """dl/deta, elementwise."""
        raise NotImplementedError  # pragma: no cover

    def second_derivative(self, eta, y):
        """d2l/deta2, elementwise (every loss here is twice differentiable)."""
        raise NotImplementedError  # pragma: no cover

    def all_derivatives(self, eta, y):
        """(value, first, second derivative) at once (shares the expensive parts)."""
        return self.value(eta, y), self.derivative(eta, y), self.second_derivative(eta, y)

    def conjugate(self, alpha, y):
        """Convex conjugate l*(alpha; y) = sup_eta alpha eta - l(eta; y), elementwise."""
        raise NotImplementedError  # pragma: no cover

    def row_max(self, b_y, a):
        """Largest value of one row's loss with |y| <= b_y (or y = +-1) and |eta| <= a."""
        raise NotImplementedError  # pragma: no cover

    def row_min(self, b_y, a):
        """Smallest value of one row's loss under the same bounds."""
        return 0.0

    def row_range(self, b_y, a):
        """row_max - row_min: n times the sensitivity of every score."""
        return self.row_max(b_y, a) - self.row_min(b_y, a)

    def refit_options(self) -> dict:
        """Keyword arguments of :func:`dpsubset.refit.objective_perturbation` for the
        same loss with the same parameters."""
        return {}

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({args})"


class SquaredLoss(Loss):
    """(y - eta)^2 / 2: the least-squares score of scores.py."""

    name = "squared"

    def value(self, eta, y):
        return 0.5 * (y - eta) ** 2

    def derivative(self, eta, y):
        return eta - y

    def second_derivative(self, eta, y):
        return np.ones(np.broadcast(eta, y).shape)

    def conjugate(self, alpha, y):
        return alpha * y + 0.5 * alpha * alpha

    def row_max(self, b_y, a):
        return 0.5 * (b_y + a) ** 2


class HuberLoss(Loss):
    """Pseudo-Huber loss h^2 (sqrt(1 + (u/h)^2) - 1) of the residual u = y - eta.

    Quadratic (u^2/2) for |u| << h and linear with slope h for |u| >> h: a residual
    can pull on the fit with force at most h, which is what makes it robust to
    outliers. Half the refit's pseudo-Huber loss with the same h.
    """

    name = "huber"

    def __init__(self, h):
        h = float(h)
        if not (math.isfinite(h) and h > 0):
            raise ValueError(f"huber_h must be a finite number > 0, got {h!r}")
        self.h = h

    @property
    def params(self):
        return {"h": self.h}

    def value(self, eta, y):
        u = y - eta
        # h^2 (sqrt(1 + (u/h)^2) - 1) without the cancellation near u = 0
        return u * u / (np.sqrt(1.0 + (u / self.h) ** 2) + 1.0)

    def derivative(self, eta, y):
        u = y - eta
        return -u / np.sqrt(1.0 + (u / self.h) ** 2)

    def second_derivative(self, eta, y):
        u = y - eta
        return (1.0 + (u / self.h) ** 2) ** -1.5

    def all_derivatives(self, eta, y):
        u = y - eta
        q = 1.0 + (u / self.h) ** 2
        sq = np.sqrt(q)
        return u * u / (sq + 1.0), -u / sq, 1.0 / (q * sq)

    def conjugate(self, alpha, y):
        # l*(alpha) = alpha y + h^2 (1 - sqrt(1 - (alpha/h)^2)) on |alpha| <= h;
        # the solver's alpha = l'(eta) always lies strictly inside.
        w = np.clip(alpha / self.h, -1.0, 1.0)
        return alpha * y + alpha * alpha / (1.0 + np.sqrt(1.0 - w * w))

    def row_max(self, b_y, a):
        u = b_y + a
        return float(u * u / (math.sqrt(1.0 + (u / self.h) ** 2) + 1.0))

    def refit_options(self):
        return {"huber_h": self.h}


class LogisticLoss(Loss):
    """ln(1 + exp(-y eta)) with y in {-1, +1}."""

    name = "logistic"
    classification = True

    def value(self, eta, y):
        return _softplus(-y * eta)

    def derivative(self, eta, y):
        return -y * expit(-y * eta)

    def second_derivative(self, eta, y):
        t = y * eta
        return expit(t) * expit(-t)

    def all_derivatives(self, eta, y):
        return _logistic_parts(-y * eta, y, 1.0)

    def conjugate(self, alpha, y):
        # With q = -y alpha in [0, 1]: l* = q ln q + (1 - q) ln(1 - q).
        q = np.clip(-y * alpha, 0.0, 1.0)
        return xlogy(q, q) + xlogy(1.0 - q, 1.0 - q)

    def row_max(self, b_y, a):
        return float(_softplus(a))

    def row_min(self, b_y, a):
        return float(_softplus(-a))

    def row_range(self, b_y, a):
        return float(a)  # softplus(a) - softplus(-a) = a, without round-off


class HingeLoss(Loss):
    """Softplus-smoothed hinge (h/2) ln(1 + exp(2 (1 - y eta) / h)), y in {-1, +1}.

    Convex, infinitely differentiable, above the hinge max(0, 1 - y eta) and at most
    (h/2) ln 2 above it; h -> 0 gives the hinge. The public width h is part of the
    score's definition: the sensitivity is that of this loss.
    """

    name = "hinge"
    classification = True

    def __init__(self, h=DEFAULT_HINGE_H):
        h = float(h)
        if not (math.isfinite(h) and h > 0):
            raise ValueError(f"hinge_h must be a finite number > 0, got {h!r}")
        self.h = h

    @property
    def params(self):
        return {"h": self.h}

    def value(self, eta, y):
        return 0.5 * self.h * _softplus(2.0 * (1.0 - y * eta) / self.h)

    def derivative(self, eta, y):
        return -y * expit(2.0 * (1.0 - y * eta) / self.h)

    def second_derivative(self, eta, y):
        z = 2.0 * (1.0 - y * eta) / self.h
        return (2.0 / self.h) * expit(z) * expit(-z)

    def all_derivatives(self, eta, y):
        return _logistic_parts(2.0 * (1.0 - y * eta) / self.h, y, 0.5 * self.h)

    def conjugate(self, alpha, y):
        # With q = -y alpha in [0, 1]: l* = -q + (h/2) (q ln q + (1 - q) ln(1 - q)).
        q = np.clip(-y * alpha, 0.0, 1.0)
        return -q + 0.5 * self.h * (xlogy(q, q) + xlogy(1.0 - q, 1.0 - q))

    def row_max(self, b_y, a):
        return float(0.5 * self.h * _softplus(2.0 * (1.0 + a) / self.h))

    def row_min(self, b_y, a):
        return float(0.5 * self.h * _softplus(2.0 * (1.0 - a) / self.h))

    def refit_options(self):
        return {"hinge_h": self.h}


def make_loss(loss, *, b_y=1.0, huber_h=None, hinge_h=None) -> Loss:
    """The loss object for a name (a Loss is returned unchanged).

    Parameters
    ----------
    loss : str or Loss
        One of ``LOSS_NAMES``.
    b_y : float
        Public bound of the (mapped) response; the default Huber threshold is
        ``DEFAULT_HUBER_H_FRACTION * b_y``.
    huber_h, hinge_h : float, optional
        Huber threshold and hinge smoothing width (public; in the mapped units of
        the response, resp. of the margin).
    """
    if isinstance(loss, Loss):
        return loss
    if loss == "squared":
        return SquaredLoss()
    if loss == "huber":
        return HuberLoss(DEFAULT_HUBER_H_FRACTION * b_y if huber_h is None else huber_h)
    if loss == "logistic":
        return LogisticLoss()
    if loss == "hinge":
        return HingeLoss(DEFAULT_HINGE_H if hinge_h is None else hinge_h)
    raise ValueError(f"loss must be one of {LOSS_NAMES}, got {loss!r}")


def encode_binary_response(formula, data):
    """Map the response of a classification loss to -1/+1, with the level order.

    The left-hand side of ``formula`` must name one column of ``data`` holding

    * bools (False -> -1, True -> +1),
    * numbers in {0, 1} (0 -> -1, 1 -> +1) or in {-1, +1} (kept), or
    * a two-level factor: a pandas Categorical with exactly two categories (an R
      factor arrives as one); the first category -> -1, the second -> +1.

    Every level order is fixed by the column's type or declared categories, never by
    which values happen to occur in the data, so the mapping is public. Anything
    else (strings, numbers with other values, a Categorical with another number of
    categories) is a ValueError that says how to fix it.

    Parameters
    ----------
    formula : str
    data : pandas.DataFrame

    Returns
    -------
    data : pandas.DataFrame
        A shallow copy with the response column replaced by floats -1.0 / +1.0
        (missing values stay missing, and the design reports them).
    levels : tuple
        ``(level coded -1, level coded +1)``.
    """
    import pandas as pd

    if not isinstance(formula, str) or "~" not in formula:
        return data, None  # the design reports the malformed formula
    lhs = formula.split("~", 1)[0].strip()
    if not isinstance(data, pd.DataFrame) or lhs not in data.columns:
        raise ValueError(
            f"a classification loss needs the left-hand side of the formula to be one column of "
            f"data holding the two classes; got {lhs!r}")
    col = data[lhs]
    hint = (f"make it a two-level Categorical with the levels known in advance, e.g. "
            f"data[{lhs!r}] = pd.Categorical(data[{lhs!r}], categories=['no', 'yes']) "
            "(the second level is coded +1)")
    if isinstance(col.dtype, pd.CategoricalDtype):
        cats = list(col.cat.categories)
        if len(cats) != 2:
            raise ValueError(f"the response {lhs!r} is a factor with {len(cats)} levels {cats}; "
                             f"a classification loss needs exactly two. {hint}")
        levels = (cats[0], cats[1])
        codes = col.cat.codes.to_numpy()
        mapped = np.where(codes == 1, 1.0, -1.0)
        mapped[codes < 0] = np.nan
    elif pd.api.types.is_bool_dtype(col):
        levels = (False, True)
        mapped = np.where(col.to_numpy(dtype=bool), 1.0, -1.0)
    elif pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_complex_dtype(col):
        vals = col.to_numpy(dtype=float)
        seen = set(np.unique(vals[~np.isnan(vals)]).tolist())
        if seen <= {0.0, 1.0}:
            levels = (0, 1)
            mapped = np.where(vals == 1.0, 1.0, -1.0)
        elif seen <= {-1.0, 1.0}:
            levels = (-1, 1)
            mapped = vals.copy()
        else:
            shown = sorted(seen)[:6]
            raise ValueError(f"the response {lhs!r} holds values other than 0/1 or -1/+1 "
                             f"(e.g. {shown}); a classification loss needs two classes: code them "
                             f"0/1, or {hint}")
        mapped[np.isnan(vals)] = np.nan
    else:
        raise ValueError(f"the response {lhs!r} has dtype {col.dtype}; its levels would be learned "
                         f"from the data, which is not private. {hint}")
    out = data.copy(deep=False)
    out[lhs] = mapped
    return out, levels
