"""Warm starts for the exact search: iterative hard thresholding and swap local search.

These only propose supports; exactness comes from the certificate of the
outer-approximation solve that follows.
"""
from __future__ import annotations

import numpy as np

from ..mechanisms import noise
from .neighbourhood import count_mistakes
from .protocols import SinglePrecisionScorer, SquaredLossScorer

__all__ = ["iht_support", "local_search"]


def _top_largest(v, s):
    idx = np.argpartition(-np.abs(v), s - 1)[:s]
    return np.sort(idx)


def iht_support(scorer, s, *, max_iter=200, random_state=0):
    """Support from iterative hard thresholding on the ridge objective (App. B.2 of Prastakos et al. 2025).

    Always-in columns are handled by residualising y and X on them first (a
    heuristic simplification; the exact search that follows does not depend on it).
    """
    if isinstance(scorer, SquaredLossScorer) and (
            scorer.X is None  # the Gram route
            # A stored Gram matrix makes A'A v one p x p product instead of two n x p
            # ones: cheaper where p < 2n (a tenth of the easy L0BnB cells' 0.2 s).
            or (scorer.gram is not None and scorer.p < 2 * scorer.n)):
        return _iht_gram(scorer, s, max_iter=max_iter, random_state=random_state)
    X, y, F, n = scorer.X, scorer.y, scorer.forced, scorer.n
    if F.shape[1]:
        Q, _ = np.linalg.qr(F)
        y = y - Q @ (Q.T @ y)
        resid = lambda u: u - Q @ (Q.T @ u)  # noqa: E731
    else:
        resid = lambda u: u  # noqa: E731
    Aty = X.T @ y
    if isinstance(scorer, SinglePrecisionScorer) and scorer.wants_single_precision:
        # A warm start needs no more precision; the products are two thirds of its time
        # at p = 50,000 (26 passes over X), and half as many bytes halve them. The
        # scorer's copy is made once and serves its own exact bounds later.
        X = scorer.single_precision_X()
    # A = X residualised on the always-in columns: A'A v = X' r(X v), A'y = X' r(y).
    AtA = lambda v: _times(X.T, resid(_times(X, v)))  # noqa: E731
    AtA_sparse = lambda S, b: _times(X.T, resid(_times(X[:, S], b)))  # noqa: E731  (beta has s non-zeros)
    return _iht_iterations(AtA, AtA_sparse, Aty, X.shape[1],
                           n, scorer.lam, s, max_iter, random_state)


def _times(M, v):
    """M v in M's precision (no double-precision copy of a single-precision M), as a
    double-precision vector."""
    return (M @ v.astype(M.dtype, copy=False)).astype(float, copy=False)


def _iht_gram(scorer, s, *, max_iter=200, random_state=0):
    """:func:`iht_support` from the Gram matrix alone (a scorer built by
    ``LeastSquaresScorer.from_gram``): the same iteration, with A'A v and A'y of the
    design residualised on the always-in columns written as Gram products,
    A'A v = n (G v - X'F (F'F)^{-1} F'X v) and A'y = n (X'y - X'F (F'F)^{-1} F'y)."""
    G, n, kf = scorer.gram, scorer.n, scorer.k_forced
    if kf:
        # (F'F)^{-1} through a least-squares solve: F'F may be singular (it is PSD).
        proj = lambda u: scorer.XF @ np.linalg.lstsq(scorer.FF, u, rcond=None)[0]  # noqa: E731
        AtA = lambda v: n * (G @ v - proj(scorer.XF.T @ v))  # noqa: E731
        AtA_sparse = lambda S, b: n * (G[:, S] @ b - proj(scorer.XF[S].T @ b))  # noqa: E731
        Aty = n * (scorer.Xy - proj(scorer.Fy))
    else:
        AtA = lambda v: n * (G @ v)  # noqa: E731
        AtA_sparse = lambda S, b: n * (G[:, S] @ b)  # noqa: E731
        Aty = n * scorer.Xy
    return _iht_iterations(AtA, AtA_sparse, Aty, scorer.p, n, scorer.lam, s, max_iter, random_state)


def _iht_iterations(AtA, AtA_sparse, Aty, p, n, lam, s, max_iter, random_state):
    """The IHT iteration shared by the matrix and the Gram routes, given A'A v, A'A beta
    for a beta supported on S (``AtA_sparse(S, beta[S])``) and A'y."""
    # Largest eigenvalue of A'A by a few power iterations (a rough upper estimate is
    # enough for a warm start).
    rng = noise.child_generator(random_state)
    v = noise.normal(rng, p)
    for _ in range(12):
        v = AtA(v)
        nv = np.linalg.norm(v)
        if nv == 0:
            break
        v /= nv
    L = (1.2 * np.linalg.norm(AtA(v)) + lam) / n
    beta = np.zeros(p)
    support = _top_largest(Aty, s)
    for _ in range(max_iter):
        grad = (AtA_sparse(support, beta[support]) - Aty + lam * beta) / n
        step = beta - grad / L
        new = _top_largest(step, s)
        beta = np.zeros_like(beta)
        beta[new] = step[new]
        if np.array_equal(new, support):
            break
        support = new
    return support


def local_search(scorer, start, *, center=None, mistakes=None, max_rounds=100):
    """Best-improvement one-swap local search from a support.

    With ``center`` and ``mistakes`` given, only swaps that keep exactly ``mistakes``
    elements outside ``center`` are allowed (a move inside one mistake class).

    Returns
    -------
    support : ndarray
    value : float
    neighbours : (ndarray, ndarray)
        The scored neighbourhood of the returned support (unconstrained case only;
        None otherwise), so that callers need not score it again.
    """
    S = np.sort(np.asarray(start, dtype=np.intp))
    value = float(scorer.score(S[None, :])[0])
    for _ in range(max_rounds):
        nb, vals = scorer.neighbourhood(S)
        if center is not None:
            keep = count_mistakes(nb, center) == mistakes
            nb_c, vals_c = nb[keep], vals[keep]
        else:
            nb_c, vals_c = nb, vals
        if len(vals_c) == 0:
            break
        j = int(np.argmin(vals_c))
        if vals_c[j] < value - 1e-15 * max(1.0, abs(value)):
            S, value = nb_c[j], float(vals_c[j])
        else:
            return S, value, (nb, vals) if center is None else None
    return S, value, None
