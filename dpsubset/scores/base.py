"""What every scorer shares: the ball-constrained ridge solve, the sensitivity, the one-swap neighbourhood.

A scorer (dpsubset/scores/least_squares.py, dpsubset/scores/convex.py) computes the
scores

    c(S) = min_{||beta||_2 <= r} (1/n) sum_i l(x_{i,K+S}' beta; y_i) + (lam/2n) ||beta||^2

of supports S (K: the always-in columns) on clipped, private data, for the search
(dpsubset/search/), which receives it as an argument and checks it against the
protocols of dpsubset/search/protocols.py. This module holds

- :func:`solve_ball_ridge`: the exact ridge solve over the ball for a stack of
  quadratic problems (the least-squares scores, and the Newton steps of the convex
  scorer);
- :func:`sensitivity` and :func:`convex_sensitivity`: how much one row moves every
  score, from public bounds only (with the largest row norm sqrt(B_s) of
  :func:`dpsubset.defaults.largest_row_norm`);
- :func:`one_swap_neighbours`: the supports S - {i} + {j} both scorers score;
- :func:`check_scorer_inputs`.

Everything here that touches data sees clipped, private data; nothing is released.
"""
from __future__ import annotations

import numpy as np

from ..defaults import largest_row_norm
from ..losses import make_loss

__all__ = ["solve_ball_ridge", "sensitivity", "convex_sensitivity", "one_swap_neighbours",
           "check_scorer_inputs"]


def solve_ball_ridge(G, g, yy, lam_n, r, *, tol=1e-14, max_iter=100):
    """Solve min_{||b|| <= r} 0.5*yy - b'g + 0.5 b'(G + lam_n I) b for a stack of problems.

    Parameters
    ----------
    G : ndarray, shape (m, k, k)
        Symmetric positive semi-definite matrices (A'A/n per support).
    g : ndarray, shape (m, k)
        Right-hand sides (A'y/n per support).
    yy : float
        y'y/n, common to all problems.
    lam_n : float
        Ridge weight lam/n, strictly positive.
    r : float
        Radius of the ball.

    Returns
    -------
    value : ndarray, shape (m,)
        Optimal objective values.
    beta : ndarray, shape (m, k)
        Minimisers.
    mu : ndarray, shape (m,)
        Multipliers of the ball constraint (0 where the ball is not active).

    Notes
    -----
    On the eigenbasis G = V diag(w) V', the norm of beta(mu) is
    sum_i gt_i^2 / (w_i + lam_n + mu)^2 with gt = V'g, strictly decreasing in mu.
    Newton's method on phi(mu) = 1/||beta(mu)|| - 1/r (concave and increasing)
    started at mu = 0 converges monotonically from the left (More and Sorensen 1983),
    so no bracketing safeguard is needed; lam_n > 0 rules out the "hard case".
    """
    G = np.asarray(G, dtype=float)
    g = np.asarray(g, dtype=float)
    w, V = np.linalg.eigh(G)
    w = np.maximum(w, 0.0)  # G is PSD; clip rounding below zero
    gt = np.einsum("mki,mk->mi", V, g)
    gt2 = gt * gt
    d = w + lam_n
    norm2 = np.sum(gt2 / (d * d), axis=1)
    r2 = r * r
    mu = np.zeros(len(g))
    active = norm2 > r2
    if np.any(active):
        ga, wa = gt2[active], d[active]
        m = np.zeros(len(ga))
        for _ in range(max_iter):
            dd = wa + m[:, None]
            nrm2 = np.sum(ga / dd**2, axis=1)
            nrm = np.sqrt(nrm2)
            phi = 1.0 / nrm - 1.0 / r
            dphi = np.sum(ga / dd**3, axis=1) / (nrm2 * nrm)
            m = m - phi / dphi
            if np.all(np.abs(phi) * r <= tol):
                break
        mu[active] = m
    bt = gt / (d + mu[:, None])
    value = 0.5 * yy - np.sum(bt * gt, axis=1) + 0.5 * np.sum(d * bt * bt, axis=1)
    beta = np.einsum("mik,mk->mi", V, bt)
    return value, beta, mu

def sensitivity(bounds, b_y, r, s, forced_bounds=(), n=1):
    """Sensitivity Delta of every score c(S) with |S| = s under row replacement.

    One row's loss lies in [0, (|y_i| + ||x_{i,K+S}|| r)^2] / (2n) on the ball, so
    replacing a row moves every c(S) (and every order statistic of the scores,
    Lemma A.2 of the paper) by at most

        Delta = (b_y + r sqrt(B_s))^2 / (2n),

    with B_s the sum of the s largest squared candidate bounds plus the squared
    bounds of the always-in columns (1 for the intercept).

    Parameters
    ----------
    bounds : array_like, shape (p,)
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
    return (b_y + r * largest_row_norm(bounds, s, forced_bounds)) ** 2 / (2.0 * n)

def convex_sensitivity(loss, x_bounds, b_y, r, s, forced_bounds=(), n=1):
    """Sensitivity Delta of every exact score c(S) with |S| = s under row replacement.

    Delta = (row_max - row_min) / n for the loss on |eta| <= a = r sqrt(B_s), with
    B_s the sum of the s largest squared candidate bounds plus the squared bounds of
    the always-in columns (docs/methods/selection.md). For the squared loss this
    is :func:`sensitivity`.

    Parameters
    ----------
    loss : Loss or str
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


def one_swap_neighbours(support, p):
    """Every support S - {i} + {j} (one element of S swapped for one outside column).

    Parameters
    ----------
    support : array_like of int, shape (s,)
    p : int
        Number of candidate columns.

    Returns
    -------
    outside : ndarray, shape (q,)
        The columns not in S, increasing (q = p - s).
    supports : ndarray, shape (s q, s)
        Row ``i q + j`` is sorted(S) with its i-th element replaced by ``outside[j]``,
        each row sorted increasingly.
    order : ndarray, shape (s q, s)
        The permutation that sorted each row (``unsorted[row, order[row]]`` is the
        sorted row), to carry per-position quantities such as warm starts along.
    """
    S = np.sort(np.asarray(support, dtype=np.intp))
    s = len(S)
    outside = np.setdiff1d(np.arange(p), S)
    q = len(outside)
    nb = np.repeat(S[None, :], s * q, axis=0).reshape(s, q, s)
    for i in range(s):
        nb[i, :, i] = outside
    nb = nb.reshape(s * q, s)
    order = np.argsort(nb, axis=1)
    return outside, np.take_along_axis(nb, order, axis=1), order


def check_scorer_inputs(X, y, lam, r, forced):
    """Arrays of a scorer as contiguous floats (forced as an n x k block); lam, r > 0."""
    X = np.ascontiguousarray(X, dtype=float)
    y = np.asarray(y, dtype=float).ravel()
    n = X.shape[0]
    forced = np.empty((n, 0)) if forced is None else forced
    forced = np.ascontiguousarray(forced, dtype=float).reshape(n, -1)
    if lam <= 0:
        raise ValueError("lam must be > 0")
    if r <= 0:
        raise ValueError("r must be > 0")
    return X, y, forced
