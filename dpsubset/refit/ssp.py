"""Sufficient-statistics perturbation: pure eps-DP least squares from noisy X'X and X'y.

Laplace noise calibrated to the L1 sensitivity of (upper triangle of X'X, X'y) under
the public per-column bounds is added once; everything after it (projection of the
noisy X'X on the PSD cone and the ball-constrained quadratic solve) is
post-processing. It serves as an independent cross-check of objective perturbation's
Mode A (dpsubset/refit/objective.py) and as ``refit="ssp"``; method notes in
docs/methods/refit.md (spec section 8).
"""
from __future__ import annotations

import math

import numpy as np

from ..mechanisms import noise as samplers

from .certificate import ball_qp, _exact_colsums, _into_ball
from .objective import (_MODE_SSP, NEIGHBOURS, RefitResult, _check_design, _check_positive,
                        _check_rng)
from ..losses import SquaredLoss

__all__ = ["sufficient_statistics_perturbation", "ssp_sensitivity"]


def ssp_sensitivity(bounds, b_y, neighbour):
    """L1 sensitivity of (upper triangle of X'X, X'y) under per-column bounds b_j.

    Replace-one: a diagonal entry x_j^2 lies in [0, b_j^2] and moves by at most b_j^2;
    an off-diagonal x_j x_k lies in [-b_j b_k, b_j b_k] and moves by at most 2 b_j b_k;
    x_j y moves by at most 2 b_j b_y. Total (sum b)^2 + 2 b_y sum b. With equal bounds
    this is b_x^2 s^2 + 2 s b_x b_y, a little below the spec's b_x^2 s (s + 1) +
    2 s b_x b_y, which counts the diagonal twice. Add/remove: every entry moves by at
    most its own magnitude bound.
    """
    sb = float(np.sum(bounds))
    sq = float(np.sum(bounds ** 2))
    if neighbour == "replace-one":
        return sb * sb + 2.0 * b_y * sb
    return 0.5 * (sb * sb + sq) + b_y * sb


def sufficient_statistics_perturbation(X, y, *, eps, bound_x_entries, b_y, r, rng,
                                       ridge=0.0, neighbour="replace-one") -> RefitResult:
    """Pure eps-DP least squares by Laplace noise on the sufficient statistics.

    Releases ``v = (upper triangle of X'X, X'y) + Laplace(Delta_1 / eps)`` (spec
    section 8), then, as post-processing, projects the noisy ``X'X`` on the PSD cone
    and minimises ``theta'(A_+ + (ridge/2) I) theta - 2 theta' c`` over
    ``||theta|| <= r`` (the same sum-form convention for ``ridge`` as in
    :func:`objective_perturbation`). Serves as an independent cross-check of Mode A
    and as ``refit="ssp"``.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Clipped design (``|x_ij| <= bound_x_entries[j]``).
    y : array_like, shape (n,)
        Clipped response (``|y_i| <= b_y``).
    eps : float
        Budget (> 0); the guarantee is pure eps-DP.
    bound_x_entries : float or array_like, shape (d,)
        Public per-column bounds ``b_j`` (one number for all columns, or one per
        column; 1 for an intercept column).
    b_y : float
        Public response bound.
    r : float
        Public radius of the ball constraint.
    rng : numpy.random.Generator
        Source of the Laplace noise.
    ridge : float, default 0
        Public ridge ``Delta`` (penalty ``(Delta/2) ||theta||^2`` in sum form).
    neighbour : {"replace-one", "add/remove"}, default "replace-one"

    Returns
    -------
    RefitResult
        ``mode = "sufficient statistics perturbation"``, ``zeta = lam_hess = NaN``
        (not used by this mechanism); ``certified_distance`` is the KKT certificate
        of the final (noisy, post-processed) quadratic solve, NaN if it is singular.
    """
    X, y = _check_design(X, y)
    rng = _check_rng(rng)
    eps = _check_positive("eps", eps)
    b_y = _check_positive("b_y", b_y)
    r = _check_positive("r", r)
    ridge = float(ridge)
    if not (np.isfinite(ridge) and ridge >= 0):
        raise ValueError(f"ridge must be a finite number >= 0, got {ridge!r}")
    if neighbour not in NEIGHBOURS:
        raise ValueError(f"neighbour must be one of {NEIGHBOURS}, got {neighbour!r}")
    n, dim = X.shape
    bounds = np.broadcast_to(np.asarray(bound_x_entries, dtype=float), (dim,)).copy()
    if not np.all(np.isfinite(bounds) & (bounds > 0)):
        raise ValueError("bound_x_entries must be positive and finite")
    if np.any(np.abs(X) > bounds * (1.0 + 1e-12)) or np.any(np.abs(y) > b_y * (1.0 + 1e-12)):
        raise ValueError("data outside the public bounds: clip before the refit")
    if dim == 0:
        return RefitResult(coef=np.zeros(0), loss=SquaredLoss.name, eps=0.0, delta=0.0,
                           mode=_MODE_SSP, certified_distance=0.0, regularization=ridge,
                           zeta=float("nan"), lam_hess=float("nan"))

    scale = ssp_sensitivity(bounds, b_y, neighbour) / eps
    iu = np.triu_indices(dim)
    m_tri = len(iu[0])
    gram = X.T @ X
    # the m_tri + dim released numbers, exact discrete-Laplace releases on a public grid
    released = samplers.laplace_release(np.concatenate([gram[iu], _exact_colsums(X * y[:, None])]),
                                        scale, rng)
    a_noisy = np.zeros((dim, dim))
    a_noisy[iu] = released[:m_tri]
    a_noisy = a_noisy + np.triu(a_noisy, 1).T
    c_noisy = released[m_tri:]
    # post-processing only from here on
    w, V = np.linalg.eigh(a_noisy)
    a_psd = (V * np.maximum(w, 0.0)) @ V.T
    M = a_psd + 0.5 * ridge * np.eye(dim)
    H = 2.0 * M
    q = 2.0 * c_noisy
    theta, _ = ball_qp(H, q, r)
    theta = _into_ball(theta, r)
    mu = 2.0 * float(np.linalg.eigvalsh(0.5 * (M + M.T))[0])
    if mu > 0:
        g = H @ theta - q
        tn = float(np.linalg.norm(theta))
        kap = max(0.0, -float(g @ theta)) / (tn * tn) if tn > 0 else 0.0
        a = float(np.linalg.norm(g + kap * theta)) + 1e-13 * (float(np.abs(H).sum()) * r
                                                             + float(np.abs(q).sum()))
        c = kap * tn * max(0.0, r - tn)
        dist = (a + math.sqrt(a * a + 4.0 * mu * c)) / (2.0 * mu)
    else:
        dist = float("nan")
    return RefitResult(coef=theta, loss=SquaredLoss.name, eps=eps, delta=0.0, mode=_MODE_SSP,
                       certified_distance=float(dist), regularization=ridge,
                       zeta=float("nan"), lam_hess=float("nan"))
