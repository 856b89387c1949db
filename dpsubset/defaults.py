"""Default radius ``r`` and ridge ``lam`` of the scores, from public quantities only.

The selection scores of ``dp_best_subset`` are

    c(S) = min over ||beta|| <= r of (1/n) sum_i l(x_i' beta; y_i) + (lam / 2n) ||beta||^2,

and their sensitivity under row replacement is (1/n) times the range of one row's
loss over the ball, which depends on the data only through the public bounds:
|x_i' beta| <= a = r sqrt(B_s), with B_s the sum of the s largest squared candidate
bounds plus the squared bounds of the always-in columns (1 for the intercept). For
least squares, Delta = (b_y + a)^2 / (2n).

The radius (see docs/guide/choosing-settings.md)
-------------------------------------------------
A release is accurate when the score gap between the true support and its rivals
is large against Delta. Raising r raises Delta quadratically (least squares) but
buys fit only where the best coefficients on clipped data need predictions larger
than the ball allows. On data clipped to |y| <= b_y no useful prediction needs to
exceed b_y, so the default radius makes the largest possible prediction equal the
response bound:

    r = b_y / sqrt(B_s),       a = r sqrt(B_s) = b_y,

giving Delta = 2 b_y^2 / n for least squares, (b_y = 1 when every column and the
response are mapped to [-1, 1]: r = 1 / sqrt(s) without an intercept, 1 / sqrt(s + 1)
with one). The Huber loss follows its response bound in the same way.

The classification losses (logistic, hinge) have no response scale for the linear
predictor: it is a log-odds (or a margin), and their sensitivity grows only linearly
in a (a / n for the logistic loss, at most (1 + a) / n for the smoothed hinge), not
quadratically. Their default lets the largest linear predictor reach a log-odds of
``CLASSIFICATION_MAX_PREDICTION`` = 6 (probabilities 0.0025 to 0.9975), where the
logistic loss is linear or zero to within 0.25 %: a = 6, r = 6 / sqrt(B_s). With a
small ball (a = 1) the refit cannot even express the intercept of an unbalanced
outcome, and on the bundled Pima data it predicts the majority class at every eps
(docs/guide/choosing-settings.md). The rule reads only bounds, s and the loss;
never the data.

The ridge
---------
The ridge lam enters the score as (lam / 2n) ||beta||^2, a penalty worth lam rows of
a unit-scale column. A ridge that grows with n (the former default 0.1 n) shrinks
every support towards zero alike and eats the score gap between them; the paper's
lam = 120 does the same at small n. A small fixed ridge keeps the scores strictly
convex (the exact search's rank-one and rank-two updates need it) without acting
on the fit: ``DEFAULT_LAM = 1``, i.e. one pseudo-row. It does not depend on n, p or
the data.
"""
from __future__ import annotations

import math

import numpy as np

from .losses import CLASSIFICATION_LOSSES

__all__ = ["DEFAULT_LAM", "CLASSIFICATION_MAX_PREDICTION", "default_radius", "largest_row_norm"]

#: Default ridge of the scores: (lam / 2n) ||beta||^2 with lam = 1, one pseudo-row.
DEFAULT_LAM = 1.0
#: Largest linear predictor (log-odds or margin) the default ball allows for the
#: classification losses: a = r sqrt(B_s) = 6.
CLASSIFICATION_MAX_PREDICTION = 6.0


def largest_row_norm(x_bounds, s, forced_bounds=()) -> float:
    """sqrt(B_s): the largest norm of one row restricted to s candidates plus the always-in columns.

    Parameters
    ----------
    x_bounds : array_like, shape (p,)
        Public bounds of the (mapped) candidate columns.
    s : int
        Support size.
    forced_bounds : array_like
        Public bounds of the always-in columns (1 for the intercept).
    """
    b = np.sort(np.asarray(x_bounds, dtype=float) ** 2)[::-1]
    B_s = float(np.sum(b[:s])) + float(np.sum(np.asarray(forced_bounds, dtype=float) ** 2))
    return math.sqrt(B_s)


def default_radius(x_bounds, b_y, s, forced_bounds=(), loss="squared") -> float:
    """The public default radius: r = b_y / sqrt(B_s) (the largest prediction equals b_y), and
    r = 6 / sqrt(B_s) for the classification losses (a log-odds of at most 6).

    Parameters
    ----------
    x_bounds : array_like, shape (p,)
        Public bounds of the mapped candidate columns.
    b_y : float
        Public bound of the mapped response (ignored for the classification losses).
    s : int
        Support size.
    forced_bounds : array_like
        Bounds of the always-in columns (the intercept's is 1).
    loss : str
        ``"squared"``, ``"huber"``, ``"logistic"`` or ``"hinge"``.

    Returns
    -------
    float
        r > 0 with r sqrt(B_s) = b_y, or = 6 for "logistic" and "hinge" (module docstring).

    Examples
    --------
    The paper's setting, b_x = b_y = 0.5, s = 5, no intercept: B_s = 5 / 4 and
    r = 0.5 / sqrt(1.25) = 0.447.

    >>> round(default_radius([0.5] * 100, 0.5, 5), 3)
    0.447
    >>> round(default_radius([0.5] * 100, 0.5, 5, forced_bounds=[1.0]), 3)
    0.333
    """
    target = CLASSIFICATION_MAX_PREDICTION if loss in CLASSIFICATION_LOSSES else float(b_y)
    norm = largest_row_norm(x_bounds, s, forced_bounds)
    if not (norm > 0 and math.isfinite(norm) and target > 0 and math.isfinite(target)):
        raise ValueError("the default radius needs positive, finite public bounds; pass r= explicitly")
    return target / norm
