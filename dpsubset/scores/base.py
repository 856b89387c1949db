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
- :func:`solve_bordered_ball_ridge`: the same solve for many problems that share all
  but one column (a base and each added column: the one-swap neighbourhood), on the
  base's eigen-decomposition alone;
- :func:`one_swap_neighbours`: the supports S - {i} + {j} both scorers score;
- :func:`check_scorer_inputs`.

Everything here that touches data sees clipped, private data; nothing is released.
"""
from __future__ import annotations

import numpy as np


__all__ = ["solve_ball_ridge", "solve_bordered_ball_ridge", "one_swap_neighbours",
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

def solve_bordered_ball_ridge(GB, gB, C, e, h, yy, lam_n, r, *, tol=1e-14, max_iter=100):
    """:func:`solve_ball_ridge` for q problems that share a base: problem j has the Gram
    matrix [[GB, C_j], [C_j', e_j]] and right-hand side [gB; h_j].

    The one-swap neighbourhood's problems (a base B and one added column each, p - s of
    them per base at p = 50,000) through :func:`solve_ball_ridge` cost one k x k
    eigen-decomposition each, most of the neighbourhood's time. Here the base is
    decomposed once, GB = V diag(w) V', and every quantity of problem j at ridge
    nu = lam_n + mu is a sum over the base's k eigen-directions (block elimination of
    the added column):

        delta = e_j + nu - sum_i ct_i^2 / (w_i + nu)           (Schur complement)
        b     = (h_j - sum_i ct_i gt_i / (w_i + nu)) / delta     (the added coefficient)
        z_i   = (gt_i - ct_i b) / (w_i + nu)                     (V' beta_B)
        ||beta||^2 = sum_i z_i^2 + b^2,

    with ct = V' C_j and gt = V' gB. It is the same function of mu as in
    :func:`solve_ball_ridge`, solved by the same Newton iteration on 1/||beta|| - 1/r
    from mu = 0 (monotone from the left, More and Sorensen 1983), with the derivative
    of each term in closed form; lam_n > 0 keeps delta >= nu > 0.

    Parameters
    ----------
    GB : ndarray, shape (k, k)
        The base's Gram matrix (without the ridge).
    gB : ndarray, shape (k,)
    C : ndarray, shape (k, q)
        Cross products of the base's columns with each added column.
    e, h : ndarray, shape (q,)
        The added columns' Gram diagonal and right-hand sides.
    yy, lam_n, r, tol, max_iter
        As in :func:`solve_ball_ridge`.

    Returns
    -------
    value : ndarray, shape (q,)
    mu : ndarray, shape (q,)
    """
    w, V = np.linalg.eigh(np.asarray(GB, dtype=float))
    w = np.maximum(w, 0.0)[:, None]
    gt = (V.T @ np.asarray(gB, dtype=float))[:, None]
    ct = V.T @ np.asarray(C, dtype=float)
    e = np.asarray(e, dtype=float)
    h = np.asarray(h, dtype=float)
    full = (ct, ct * ct, ct * gt, e, h)

    def parts(mu, cols):
        """1/(w + nu), delta, b, z and ||beta||^2 at ``mu`` of the problems whose
        (ct, ct^2, ct gt, e, h) are ``cols``."""
        c, c2, cg, ec, hc = cols
        inv = 1.0 / (w + lam_n + mu)
        delta = ec + lam_n + mu - np.sum(c2 * inv, axis=0)
        b = (hc - np.sum(cg * inv, axis=0)) / delta
        z = (gt - c * b) * inv
        return inv, delta, b, z, np.sum(z * z, axis=0) + b * b

    mu = np.zeros(len(e))
    active = np.flatnonzero(parts(mu, full)[4] > r * r)
    if len(active):
        sub = tuple(a[..., active] for a in full)
        c, c2, cg = sub[:3]
        m = np.zeros(len(active))
        for _ in range(max_iter):
            inv, delta, b, z, n2 = parts(m, sub)
            nrm = np.sqrt(n2)
            phi = 1.0 / nrm - 1.0 / r
            # d/dmu of delta, b, z and ||beta||^2, then a Newton step on phi
            inv2 = inv * inv
            d_delta = 1.0 + np.sum(c2 * inv2, axis=0)
            d_b = (np.sum(cg * inv2, axis=0) - b * d_delta) / delta
            d_z = -(c * d_b + z) * inv
            d_n2 = 2.0 * (np.sum(z * d_z, axis=0) + b * d_b)
            m = m + phi / (0.5 * d_n2 / (n2 * nrm))
            if np.all(np.abs(phi) * r <= tol):
                break
        mu[active] = m
    inv, delta, b, z, norm2 = parts(mu, full)
    # The objective at the minimiser, term by term as in solve_ball_ridge:
    # 0.5 yy - beta'g + 0.5 beta'(G + lam_n I) beta.
    quad = np.sum((w + lam_n) * z * z, axis=0) + 2.0 * b * np.sum(ct * z, axis=0) + (e + lam_n) * b * b
    value = 0.5 * yy - (np.sum(z * gt, axis=0) + b * h) + 0.5 * quad
    return value, mu


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
