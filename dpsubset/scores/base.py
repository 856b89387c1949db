"""What every scorer shares: the ball-constrained ridge solve and the one-swap neighbourhood.

A scorer (dpsubset/scores/least_squares.py, dpsubset/scores/convex.py) computes the
scores

    c(S) = min_{||beta||_2 <= r} (1/n) sum_i l(x_{i,K+S}' beta; y_i) + (lam/2n) ||beta||^2

of supports S (K: the always-in columns) on clipped, private data, for the search
(dpsubset/search/), which receives it as an argument and checks it against the
protocols of dpsubset/search/protocols.py. Their sensitivity Delta is computed in
:mod:`dpsubset.privacy.sensitivity` (public numbers only). This module holds

- :func:`solve_ball_ridge`: the exact ridge solve over the ball for a stack of
  quadratic problems (the least-squares scores, and the Newton steps of the convex
  scorer);
- :func:`one_swap_neighbours`: the supports S - {i} + {j} both scorers score;
- :func:`check_scorer_inputs`.

Everything here that touches data sees clipped, private data; nothing is released.
"""
from __future__ import annotations

import numpy as np


__all__ = ["solve_ball_ridge", "one_swap_neighbours", "check_scorer_inputs"]


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
