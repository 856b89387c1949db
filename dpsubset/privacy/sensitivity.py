"""The two public constants every stage's noise is calibrated to, computed here only.

* :func:`largest_row_norm`: sqrt(B_s), the largest norm of one row restricted to s
  candidates and the always-in columns (the refit's and the inference's row bound, the
  reach a = r sqrt(B_s) of a prediction on the ball);
* :func:`score_sensitivity` and :func:`convex_sensitivity`: Delta, by how much replacing
  one row can move any score c(S) with |S| = s.

Both read only public numbers (the bounds, r, s, n), so they may be computed before the
data are read. Every module that needs them imports them from here; a second formula
elsewhere is a second place to get a privacy constant wrong.
"""
from __future__ import annotations

import math

import numpy as np

from ..losses import make_loss

__all__ = ["largest_row_norm", "support_row_bound", "score_sensitivity", "convex_sensitivity"]


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


def support_row_bound(x_bounds, support, forced_bounds=()) -> float:
    """The row bound of one released support: :func:`largest_row_norm` over its columns alone.

    The refit and the inference stages use it (the support is public once released).

    Parameters
    ----------
    x_bounds : array_like, shape (p,)
        Public bounds of the mapped candidate columns.
    support : sequence of int
        Indices of the released columns.
    forced_bounds : array_like
        Public bounds of the always-in columns.
    """
    idx = list(support)
    return largest_row_norm(np.asarray(x_bounds, dtype=float)[idx], len(idx), forced_bounds)


def score_sensitivity(x_bounds, b_y, r, s, forced_bounds=(), n=1) -> float:
    """Sensitivity Delta of every least-squares score c(S) with |S| = s under row replacement.

    One row's loss lies in [0, (|y_i| + ||x_{i,K+S}|| r)^2] / (2n) on the ball, so
    replacing a row moves every c(S) (and every order statistic of the scores,
    Lemma A.2 of Prastakos, Behdin and Mazumder 2025) by at most

        Delta = (b_y + r sqrt(B_s))^2 / (2n),

    with B_s the sum of the s largest squared candidate bounds plus the squared
    bounds of the always-in columns (1 for the intercept).

    Parameters
    ----------
    x_bounds : array_like, shape (p,)
        Public bounds b_j of the candidate columns (after any public rescaling).
    b_y : float
        Public bound of the response.
    r : float
        Radius of the coefficient ball.
    s : int
        Support size.
    forced_bounds : array_like
        Bounds of the always-in columns.
    n : int
        Number of rows (public under row replacement).
    """
    return (b_y + r * largest_row_norm(x_bounds, s, forced_bounds)) ** 2 / (2.0 * n)


def convex_sensitivity(loss, x_bounds, b_y, r, s, forced_bounds=(), n=1) -> float:
    """Sensitivity Delta of every exact score c(S) with |S| = s, for any loss.

    Delta = (row_max - row_min) / n for the loss on |eta| <= a = r sqrt(B_s), with
    B_s the sum of the s largest squared candidate bounds plus the squared bounds of
    the always-in columns (docs/methods/selection.md). For the squared loss this
    is :func:`score_sensitivity`.

    Parameters
    ----------
    loss : Loss or str
        The loss (a name is made into its class with the package's defaults).
    x_bounds : array_like, shape (p,)
    b_y : float
        Response bound (1 for the classification losses, whose y is +-1).
    r : float
    s : int
    forced_bounds : array_like
    n : int
    """


    loss = make_loss(loss, b_y=b_y)
    a = r * largest_row_norm(x_bounds, s, forced_bounds)
    return float(loss.row_range(b_y, a)) / n
