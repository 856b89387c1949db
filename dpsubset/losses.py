"""Per-row losses of the selection scores: values, derivatives, conjugates, and bounds.

Every loss is written as a function ``l(eta; y)`` of the linear predictor
``eta = x'beta`` and the response, so that the score of a support S is

    c(S) = min_{||beta||_2 <= r} (1/n) sum_i l(x_{i,K+S}' beta; y_i) + (lam/2n) ||beta||^2

for every loss (the ridge normalisation of the least-squares score,
dpsubset/scores/least_squares.py). The same objects serve the refit
(dpsubset/refit/objective.py), which minimises a sum of per-row losses; objective
perturbation (Kifer, Smith and Thakurta 2012) and its constants are written for
``(y - eta)^2``, so the refit multiplies the per-row loss by :attr:`Loss.refit_scale`
(2 for the squared and Huber losses, 1 for the others). That factor is the only
difference between the two conventions, and the refit applies it in one place
(``dpsubset.refit.objective.RefitLoss``):

=============  ===============================================  ============
name           l(eta; y)                                        refit_scale
=============  ===============================================  ============
``squared``    (y - eta)^2 / 2                                  2
``huber``      h^2 (sqrt(1 + (u/h)^2) - 1), u = y - eta         2
               (pseudo-Huber: u^2/2 near 0, h|u| far out)
``logistic``   ln(1 + exp(-y eta)), y in {-1, +1}               1
``hinge``      (h/2) ln(1 + exp(2 (1 - y eta) / h)),            1
               y in {-1, +1} (softplus-smoothed hinge)
=============  ===============================================  ============

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

Refit constants. Objective perturbation needs a bound on the norm of one row's
gradient over the ball and on its Hessian: with ``||x_i|| <= R`` and
``|eta| <= R r`` these are ``R sup |l'|`` (:meth:`Loss.row_gradient_bound`) and
``R^2 sup l''`` (:meth:`Loss.row_hessian_bound`), and every ``l''`` here is even
about a centre ``c(y)`` and decreasing away from it (:meth:`Loss.centre`), which
gives the certificate cheap bounds on the curvature over an interval of eta.

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

__all__ = ["Loss", "SquaredLoss", "HuberLoss", "LogisticLoss", "HingeLoss", "make_loss", "loss_class",
           "is_least_squares", "LOSSES", "CLASSIFICATION_LOSSES", "REGRESSION_LOSSES", "INTERVAL_LOSSES",
           "DEFAULT_LOSS", "DEFAULT_HUBER_H_FRACTION", "DEFAULT_HINGE_H", "encode_binary_response",
           "check_response_levels", "DEFAULT_NUMERIC_LEVELS"]


class _LossNames:
    """The names of the registered losses that pass a test, read when asked (a loss
    registered later is in it); prints as the tuple of names."""

    def __init__(self, keep=lambda cls: True):
        self._keep = keep

    def _names(self):
        return tuple(name for name, cls in _REGISTRY.items() if self._keep(cls))

    def __contains__(self, name):
        return name in self._names()

    def __iter__(self):
        return iter(self._names())

    def __len__(self):
        return len(self._names())

    def __getitem__(self, name):
        if name not in self._names():
            raise KeyError(name)
        return _REGISTRY[name]

    def __eq__(self, other):
        try:
            return tuple(self) == tuple(other)
        except TypeError:
            return NotImplemented

    def __hash__(self):  # pragma: no cover (not used as a key)
        return id(self)

    def __repr__(self):
        return repr(self._names())


#: name -> Loss class, filled as each class is defined (:meth:`Loss.__init_subclass__`).
_REGISTRY = {}
#: Every loss the package knows, by name (selection, refit, CLI and R wrapper alike): a
#: new loss is one subclass of :class:`Loss` with a ``name``, and it is in here.
LOSSES = _LossNames()
#: The losses whose response is a class coded -1/+1.
CLASSIFICATION_LOSSES = _LossNames(lambda cls: cls.classification)
#: The losses whose response is a number clipped to [-b_y, b_y].
REGRESSION_LOSSES = _LossNames(lambda cls: not cls.classification)
#: The losses with private intervals (``inference=True``): those with a model of the
#: response to simulate from (:attr:`Loss.response_model`).
INTERVAL_LOSSES = _LossNames(lambda cls: cls.response_model is not None)
#: Default pseudo-Huber threshold, as a fraction of the (mapped) response bound b_y, for
#: selection and refit alike. With y clipped at about three standard deviations,
#: h = b_y / 2 is about 1.5 sd, close to the classical Huber choice 1.345 sd.
DEFAULT_HUBER_H_FRACTION = 0.5
#: Default smoothing width of the softplus hinge (the value Chaudhuri, Monteleoni and
#: Sarwate 2011 use in their experiments).
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
        The loss's name in ``loss=`` (a subclass with a name registers itself in
        :data:`LOSSES`).
    classification : bool
        True when y must be in {-1, +1}.
    least_squares : bool
        True for least squares alone: its scores, search and refit have closed forms
        and a Gram route that the other losses do not.
    response_model : {"gaussian", "binary"} or None
        The model of the response the inference stage simulates from (a linear model
        with noise, or a Bernoulli on the logistic link); None: no intervals.
    has_mean : bool
        Whether the fit predicts a mean (a number or a probability); the smoothed
        hinge predicts only a class.
    cheap_exact_score : bool
        Whether an exact score costs about as much as a certified bracket (Huber,
        nearly quadratic): the branch and bound then scores completions at once
        instead of keeping their brackets pending (search/fenchel.py).
    params : dict
        The loss's public parameters (``{"h": ...}`` for Huber and hinge).
    """

    name = ""
    classification = False
    least_squares = False
    response_model = None
    has_mean = True
    cheap_exact_score = False
    #: The keyword of :func:`make_loss` (and of the refit) that sets the loss's parameter
    #: (None: it has none).
    option = None
    #: Factor that turns l into the refit's per-row loss (module docstring): the refit
    #: minimises sum_i refit_scale * l(x_i'theta; y_i), e.g. (y - eta)^2 for least squares.
    refit_scale = 1.0
    #: True when l'' does not depend on eta (the certificate then needs one modulus).
    constant_curvature = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # Only a class that names itself registers: a subclass that inherits its parent's
        # name (a variant for a test, say) must not replace the parent under that name.
        if cls.__dict__.get("name"):
            if cls.name in _REGISTRY:
                raise ValueError(f"a loss named {cls.name!r} is already registered "
                                 f"({_REGISTRY[cls.name].__name__}); give {cls.__name__} another name")
            _REGISTRY[cls.name] = cls

    @classmethod
    def with_default(cls, value=None, *, b_y=1.0):
        """The loss with its parameter ``value`` (None: its default, which may depend on
        the response's public bound ``b_y``)."""
        return cls()

    def conjugate_box(self, y):
        """(lower, upper) per row: the box of alpha where l*(alpha; y) is finite
        (the Fenchel bounds of search/fenchel.py keep their dual points in it)."""
        raise NotImplementedError  # pragma: no cover

    def conjugate_slope(self, alpha, y):
        """(l*)'(alpha; y), the margin whose loss derivative is alpha (finite inside the box)."""
        raise NotImplementedError  # pragma: no cover

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

    def centre(self, y):
        """The point c(y) about which l''(eta; y) is even and decreasing away from it."""
        raise NotImplementedError  # pragma: no cover

    def second_derivative_sup(self) -> float:
        """sup over eta and y of l''(eta; y)."""
        raise NotImplementedError  # pragma: no cover

    def derivative_bound(self, b_y, a) -> float:
        """sup |l'(eta; y)| over |y| <= b_y (or y = +-1) and |eta| <= a."""
        raise NotImplementedError  # pragma: no cover

    def row_gradient_bound(self, R, b_y, r) -> float:
        """Bound on ||grad_theta l(x'theta; y)|| = |l'| ||x|| over ||x|| <= R, ||theta|| <= r."""
        return R * self.derivative_bound(b_y, R * r)

    def row_hessian_bound(self, R) -> float:
        """Bound R^2 sup l'' on the (rank-one) Hessian l'' x x' of one row, ||x|| <= R."""
        return R * R * self.second_derivative_sup()

    def refit_options(self) -> dict:
        """Keyword arguments of :func:`dpsubset.refit.objective.objective_perturbation` for the
        same loss with the same parameters."""
        return {}

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({args})"


class SquaredLoss(Loss):
    """(y - eta)^2 / 2: the least-squares score of dpsubset/scores/least_squares.py."""

    name = "squared"
    least_squares = True
    response_model = "gaussian"
    refit_scale = 2.0
    constant_curvature = True

    def value(self, eta, y):
        return 0.5 * (y - eta) ** 2

    def derivative(self, eta, y):
        return eta - y

    def second_derivative(self, eta, y):
        return np.ones(np.broadcast(eta, y).shape)

    def conjugate(self, alpha, y):
        return alpha * y + 0.5 * alpha * alpha

    def conjugate_box(self, y):
        n = len(np.asarray(y))
        return np.full(n, -np.inf), np.full(n, np.inf)

    def conjugate_slope(self, alpha, y):
        return y + alpha

    def row_max(self, b_y, a):
        return 0.5 * (b_y + a) ** 2

    def centre(self, y):
        return y

    def second_derivative_sup(self):
        return 1.0

    def derivative_bound(self, b_y, a):
        return b_y + a

    def row_hessian_bound(self, R):
        return R * R


class HuberLoss(Loss):
    """Pseudo-Huber loss h^2 (sqrt(1 + (u/h)^2) - 1) of the residual u = y - eta.

    Quadratic (u^2/2) for |u| << h and linear with slope h for |u| >> h: a residual
    can pull on the fit with force at most h, which is what makes it robust to
    outliers. Half the refit's pseudo-Huber loss with the same h.
    """

    name = "huber"
    response_model = "gaussian"
    cheap_exact_score = True
    option = "huber_h"
    refit_scale = 2.0

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

    @classmethod
    def with_default(cls, value=None, *, b_y=1.0):
        return cls(DEFAULT_HUBER_H_FRACTION * b_y if value is None else value)

    def conjugate_box(self, y):
        n = len(np.asarray(y))
        return np.full(n, -self.h), np.full(n, self.h)

    def conjugate_slope(self, alpha, y):
        w = np.clip(alpha / self.h, -1.0 + 1e-12, 1.0 - 1e-12)
        return y + alpha / np.sqrt(1.0 - w * w)

    def row_max(self, b_y, a):
        u = b_y + a
        return float(u * u / (math.sqrt(1.0 + (u / self.h) ** 2) + 1.0))

    def centre(self, y):
        return y

    def second_derivative_sup(self):
        return 1.0

    def derivative_bound(self, b_y, a):
        # |l'| = |u| / sqrt(1 + (u/h)^2) < min(h, |u|): the bound of the refit's spec,
        # valid but not attained (the supremum is h U / sqrt(h^2 + U^2), U = b_y + a).
        return min(self.h, b_y + a)

    def row_hessian_bound(self, R):
        return R * R

    def refit_options(self):
        return {"huber_h": self.h}


class LogisticLoss(Loss):
    """ln(1 + exp(-y eta)) with y in {-1, +1}."""

    name = "logistic"
    response_model = "binary"
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

    def conjugate_box(self, y):
        y = np.asarray(y, dtype=float)  # q = -y alpha in [0, 1]
        return np.minimum(0.0, -y), np.maximum(0.0, -y)

    def conjugate_slope(self, alpha, y):
        q = np.clip(-y * alpha, 1e-12, 1.0 - 1e-12)  # a hair inside the box
        return -y * (np.log(q) - np.log1p(-q))

    def row_max(self, b_y, a):
        return float(_softplus(a))

    def row_min(self, b_y, a):
        return float(_softplus(-a))

    def row_range(self, b_y, a):
        return float(a)  # softplus(a) - softplus(-a) = a, without round-off

    def centre(self, y):
        return np.zeros_like(y)

    def second_derivative_sup(self):
        return 0.25

    def derivative_bound(self, b_y, a):
        return 1.0

    def row_gradient_bound(self, R, b_y, r):
        return R

    def row_hessian_bound(self, R):
        return R * R / 4.0


class HingeLoss(Loss):
    """Softplus-smoothed hinge (h/2) ln(1 + exp(2 (1 - y eta) / h)), y in {-1, +1}.

    Convex, infinitely differentiable, above the hinge max(0, 1 - y eta) and at most
    (h/2) ln 2 above it; h -> 0 gives the hinge. The public width h is part of the
    score's definition: the sensitivity is that of this loss.
    """

    name = "hinge"
    classification = True
    has_mean = False
    option = "hinge_h"

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

    @classmethod
    def with_default(cls, value=None, *, b_y=1.0):
        return cls(DEFAULT_HINGE_H if value is None else value)

    def conjugate_box(self, y):
        y = np.asarray(y, dtype=float)  # q = -y alpha in [0, 1]
        return np.minimum(0.0, -y), np.maximum(0.0, -y)

    def conjugate_slope(self, alpha, y):
        q = np.clip(-y * alpha, 1e-12, 1.0 - 1e-12)
        return -y * (-1.0 + 0.5 * self.h * (np.log(q) - np.log1p(-q)))

    def row_max(self, b_y, a):
        return float(0.5 * self.h * _softplus(2.0 * (1.0 + a) / self.h))

    def row_min(self, b_y, a):
        return float(0.5 * self.h * _softplus(2.0 * (1.0 - a) / self.h))

    def centre(self, y):
        return y  # y eta = 1  <=>  eta = y for y in {-1, +1}

    def second_derivative_sup(self):
        return 1.0 / (2.0 * self.h)

    def derivative_bound(self, b_y, a):
        return 1.0

    def row_gradient_bound(self, R, b_y, r):
        return R

    def row_hessian_bound(self, R):
        return R * R / (2.0 * self.h)

    def refit_options(self):
        return {"hinge_h": self.h}


def make_loss(loss, *, b_y=1.0, huber_h=None, hinge_h=None) -> Loss:
    """The loss object for a name (a Loss is returned unchanged).

    Parameters
    ----------
    loss : str or Loss
        One of :data:`LOSSES` (a Loss is returned unchanged).
    b_y : float
        Public bound of the (mapped) response; the default Huber threshold is
        ``DEFAULT_HUBER_H_FRACTION * b_y``.
    huber_h, hinge_h : float, optional
        Huber threshold and hinge smoothing width (public; in the mapped units of
        the response, resp. of the margin).
    """
    if isinstance(loss, Loss):
        return loss
    cls = loss_class(loss)
    return cls.with_default({"huber_h": huber_h, "hinge_h": hinge_h}.get(cls.option), b_y=b_y)


def loss_class(loss):
    """The :class:`Loss` subclass of a name (or of a Loss object).

    Raises
    ------
    ValueError
        For a name no loss registered, naming the known ones.
    """
    if isinstance(loss, Loss):
        return type(loss)
    if isinstance(loss, type) and issubclass(loss, Loss):
        return loss
    try:
        return _REGISTRY[loss]
    except (KeyError, TypeError):
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}") from None


def is_least_squares(loss) -> bool:
    """Whether ``loss`` (a name or a Loss) is least squares, whose closed forms and Gram
    route the other losses do not have."""
    return loss_class(loss).least_squares


#: The loss of ``dp_best_subset`` when none is given.
DEFAULT_LOSS = SquaredLoss.name


#: The coding of a numeric response when ``response_levels`` is not given: 0 is the
#: class coded -1 and 1 the class coded +1. Fixed in advance, whatever values occur.
DEFAULT_NUMERIC_LEVELS = (0, 1)


def encode_binary_response(formula, data, response_levels=None):
    """Map the response of a classification loss to -1/+1 by a public coding.

    The left-hand side of ``formula`` must name one column of ``data``. Its two
    classes, ``(class coded -1, class coded +1)``, are fixed by public information
    only, never by which values occur in the data (two neighbouring data sets must
    get the same coding):

    * ``response_levels=(neg, pos)`` given: exactly these two values; any column type;
    * else a pandas Categorical (an R factor arrives as one) with exactly two
      declared categories: the first -> -1, the second -> +1 (unused ones count);
    * else a bool column: False -> -1, True -> +1;
    * else a numeric column: the fixed coding ``(0, 1)``, i.e. 0 -> -1, 1 -> +1
      (:data:`DEFAULT_NUMERIC_LEVELS`). A response coded -1/+1 needs
      ``response_levels=(-1, 1)``: the coding is not guessed from the values.

    A value outside the coding is a ValueError naming the column and the number
    of such rows, never the values. Strings without ``response_levels`` or declared
    categories are refused too (their levels would be learned from the data).

    Parameters
    ----------
    formula : str
    data : pandas.DataFrame
    response_levels : sequence of two values, optional
        ``(class coded -1, class coded +1)``, fixed in advance.

    Returns
    -------
    data : pandas.DataFrame
        A shallow copy with the response column replaced by floats -1.0 / +1.0
        (missing values stay missing, and the design reports them).
    levels : tuple
        ``(level coded -1, level coded +1)``: a function of the arguments and of
        the column's type, never of its values.
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
    hint = (f"pass the classes with the loss, loss=Logistic(levels=(class coded -1, class coded +1)) "
            f"(or Hinge(levels=...)), fixed in advance, or make "
            f"{lhs!r} a two-level Categorical with its categories known in advance, e.g. "
            f"data[{lhs!r}] = pd.Categorical(data[{lhs!r}], categories=['no', 'yes']) "
            "(the second level is coded +1)")
    missing = col.isna().to_numpy(dtype=bool)
    if response_levels is not None:
        levels = check_response_levels(response_levels)
        is_neg, is_pos = _matches(col, levels[0]), _matches(col, levels[1])
    elif isinstance(col.dtype, pd.CategoricalDtype):
        cats = list(col.cat.categories)
        if len(cats) != 2:
            raise ValueError(f"the response {lhs!r} is a factor with {len(cats)} declared levels; "
                             f"a classification loss needs exactly two: {hint}")
        levels = (cats[0], cats[1])
        codes = col.cat.codes.to_numpy()
        is_neg, is_pos = codes == 0, codes == 1
    elif pd.api.types.is_bool_dtype(col):
        levels = (False, True)
        vals = col.to_numpy(dtype=object)
        is_pos = np.array([v is True or v is np.True_ for v in vals], dtype=bool)
        is_neg = ~is_pos & ~missing
    elif pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_complex_dtype(col):
        levels = DEFAULT_NUMERIC_LEVELS
        vals = col.to_numpy(dtype=float, na_value=np.nan)
        is_neg, is_pos = vals == 0.0, vals == 1.0
    else:
        raise ValueError(f"the response {lhs!r} has dtype {col.dtype}; its levels would be learned "
                         f"from the data, which is not private. {hint}")
    outside = int(np.sum(~(is_neg | is_pos | missing)))
    if outside:
        raise ValueError(
            f"the response {lhs!r} has {outside} row{'s' if outside != 1 else ''} outside its "
            f"coding (class coded -1, class coded +1) = {_show_levels(levels)}; "
            + ("this is the fixed coding of a numeric response: for a response coded -1/+1 pass "
               "loss=Logistic(levels=(-1, 1)) (or Hinge(levels=(-1, 1))), otherwise recode or remove "
               "those rows"
               if response_levels is None and levels == DEFAULT_NUMERIC_LEVELS
               else "recode or remove those rows, or " + hint))
    mapped = np.where(is_pos, 1.0, -1.0)
    mapped[missing] = np.nan
    out = data.copy(deep=False)
    out[lhs] = mapped
    return out, levels


def check_response_levels(response_levels):
    """Validate ``response_levels``: two distinct, non-missing scalars."""
    if isinstance(response_levels, (str, bytes)) or not hasattr(response_levels, "__len__") \
            or len(response_levels) != 2:
        raise ValueError("response_levels must be a pair (class coded -1, class coded +1), "
                         "e.g. response_levels=(0, 1) or ('control', 'case')")
    neg, pos = (v.item() if isinstance(v, np.generic) else v for v in response_levels)
    for v in (neg, pos):
        if v is None or (isinstance(v, float) and math.isnan(v)) or not np.isscalar(v):
            raise ValueError("response_levels must hold two scalar values (numbers, strings or "
                             "bools), not missing values or containers")
    if _same(neg, pos):
        raise ValueError("response_levels must name two different classes")
    return (neg, pos)


def _matches(col, level):
    """Boolean mask of the rows of ``col`` equal to ``level`` (vectorised where the
    types allow; a number matches a number, a string a string, a bool a bool)."""
    import pandas as pd

    if isinstance(col.dtype, pd.CategoricalDtype):
        col = col.astype(object)
    is_bool_col = pd.api.types.is_bool_dtype(col)
    numeric_col = (pd.api.types.is_numeric_dtype(col) and not is_bool_col
                   and not pd.api.types.is_complex_dtype(col))
    if isinstance(level, (bool, np.bool_)):
        if is_bool_col:
            return col.eq(bool(level)).fillna(False).to_numpy(dtype=bool)
        if numeric_col:
            return np.zeros(len(col), dtype=bool)
    elif isinstance(level, str):
        if numeric_col or is_bool_col:
            return np.zeros(len(col), dtype=bool)
        if not pd.api.types.is_object_dtype(col):  # pandas string dtypes
            return col.eq(level).fillna(False).to_numpy(dtype=bool)
    elif numeric_col:
        return col.to_numpy(dtype=float, na_value=np.nan) == float(level)
    elif is_bool_col:
        return np.zeros(len(col), dtype=bool)
    return np.fromiter((_same(v, level) for v in col.to_numpy(dtype=object)), dtype=bool,
                       count=len(col))


def _same(value, level):
    """Whether a response value is the given level (1 == 1.0 == True is not mixed up
    with strings: a number matches a number, a string a string, a bool a bool)."""
    if isinstance(level, (bool, np.bool_)) or isinstance(value, (bool, np.bool_)):
        return isinstance(value, (bool, np.bool_)) and isinstance(level, (bool, np.bool_)) \
            and bool(value) == bool(level)
    if isinstance(level, str) or isinstance(value, str):
        return isinstance(value, str) and isinstance(level, str) and value == level
    try:
        return bool(value == level)
    except Exception:
        return False


def _show_levels(levels):
    # The levels are public (the column's type, declared categories or an argument).
    return f"({levels[0]!r}, {levels[1]!r})"
