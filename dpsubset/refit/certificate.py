"""The refit's optimality certificate: a proven bound on the distance to the exact minimiser.

Objective perturbation (dpsubset/refit/objective.py) is private only for the *exact*
minimiser of the perturbed objective

    J(theta) = sum_i phi(x_i'theta; y_i) + (Delta / 2) ||theta||^2 + b'theta
    over ||theta||_2 <= r,

so every solve ends with a KKT certificate d(theta) >= ||theta - theta*||, computed
with correctly rounded sums and a round-off allowance (docs/methods/refit.md, spec
section 5). Mode B pays output noise calibrated to a public ``d_max`` and releases
only when ``d(theta) <= d_max``; Mode A reports how close the closed form is.

This module holds the certificate and the exact-arithmetic numerics it stands on:
the exact squared norm and ball placement (``_into_ball``), the ball-constrained
quadratic solve (``ball_qp``), correctly rounded column sums and a proven lower
bound on the smallest eigenvalue. ``phi`` is the refit's per-row loss
(:class:`dpsubset.refit.objective.RefitLoss`). Everything here sees private data and
nothing is released.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

_U = np.finfo(float).eps  # unit round-off (times 2)



def _exact_sq_norm(theta):
    """||theta||^2 of a float vector, computed exactly (rational arithmetic)."""
    return sum((Fraction(float(t)) ** 2 for t in theta), Fraction(0))


def _into_ball(theta, r):
    """Scale theta so that ||theta|| <= r holds exactly for the stored floats.

    Feasibility is checked in exact rational arithmetic, and the point is pulled in by
    a few ulps at a time until it passes, so a boundary solution stays within a relative
    ~1e-16 of the sphere. The KKT certificate is always computed at the returned point.
    """
    theta = np.array(theta, dtype=float)
    nrm = float(np.linalg.norm(theta))
    if nrm > r:
        theta = theta * (r / nrm)
    r2 = Fraction(float(r)) ** 2
    for _ in range(200):
        if _exact_sq_norm(theta) <= r2:
            return theta
        theta = theta * (1.0 - 2.0 ** -51)
    raise FloatingPointError("could not place the iterate inside the ball")  # pragma: no cover


def ball_qp(H, q, r):
    """Minimise 0.5 p'Hp - q'p over ||p|| <= r, H symmetric positive semidefinite.

    The unconstrained minimiser is taken if it is feasible; otherwise the solution is
    (H + kappa I)^{-1} q with kappa > 0 the root of ||p(kappa)|| = r, found by a
    safeguarded Newton iteration on 1/||p(kappa)|| - 1/r in the eigenbasis of H
    (the secular equation of spec section 5). With H positive semidefinite and
    kappa >= 0 there is no trust-region hard case: if q has a component in the null
    space of H the root lies at kappa > 0, otherwise the minimum-norm minimiser is used.

    Returns
    -------
    p : ndarray
    kappa : float
        The multiplier of the ball constraint (0 when the ball is inactive).
    """
    w, V = np.linalg.eigh(0.5 * (H + H.T))
    w = np.maximum(w, 0.0)
    qt = V.T @ q
    if not np.all(np.isfinite(qt)):
        raise FloatingPointError("non-finite linear term in the ball-constrained solve")
    qnorm = float(np.linalg.norm(qt))
    if qnorm == 0.0:
        return np.zeros_like(q), 0.0
    null = w == 0.0
    if not np.any(null & (qt != 0.0)):
        safe_w = np.where(null, 1.0, w)
        pt = np.where(null, 0.0, qt / safe_w)
        if np.linalg.norm(pt) <= r:
            return V @ pt, 0.0

    q2 = qt * qt

    def norm_at(kappa):
        return math.sqrt(float(np.sum(q2 / (w + kappa) ** 2)))

    lo = max(0.0, qnorm / r - float(w.max()))
    hi = max(qnorm / r - float(w.min()), lo, 1e-300)
    # ||p(lo)|| >= r >= ||p(hi)||; nudge hi up in case of round-off
    while norm_at(hi) > r:
        hi = hi * (1.0 + 1e-12) + 1e-300
    kappa = lo if lo > 0 else 0.5 * hi
    for _ in range(200):
        nk = norm_at(kappa) if kappa > 0 else math.inf
        if nk > r:
            lo = kappa
        else:
            hi = kappa
        if abs(nk - r) <= 4.0 * _U * r or hi - lo <= 4.0 * _U * hi:
            break
        if np.isfinite(nk):
            # Newton on psi(k) = 1/||p(k)|| - 1/r, psi'(k) = sum q2/(w+k)^3 / ||p||^3
            dpsi = float(np.sum(q2 / (w + kappa) ** 3)) / nk ** 3
            step = (1.0 / nk - 1.0 / r) / dpsi
            cand = kappa - step
        else:
            cand = math.nan
        if not (lo < cand < hi):
            cand = 0.5 * (lo + hi)
        kappa = cand
    pt = qt / (w + kappa)
    return V @ pt, float(kappa)


def _row_norms(X):
    return np.sqrt(np.einsum("ij,ij->i", X, X))


def _exact_colsums(M):
    """Column sums of M, each correctly rounded (math.fsum), hence order independent."""
    return np.array([math.fsum(col) for col in M.T], dtype=float)


def _lambda_min_lower(M, n_terms):
    """A lower bound on lambda_min of the exact matrix whose float approximation is M.

    M was formed as a sum of ``n_terms`` rank-one PSD terms in floating point; the
    forming error is at most ``~n_terms * u * trace(M)`` in spectral norm, and eigvalsh
    adds a backward error of order ``dim * u * ||M||``.
    """
    dim = M.shape[0]
    lam = float(np.linalg.eigvalsh(0.5 * (M + M.T))[0])
    tr = float(np.trace(M))
    margin = 2.0 * (n_terms + dim + 8) * _U * max(tr, 0.0)
    return max(0.0, lam - margin)


def _certificate(lossobj, X, y, theta, Delta, b, r, row_norms=None):
    """KKT certificate d(theta): a proven bound on ||theta - theta*|| (spec section 5).

    ``theta`` must satisfy ||theta|| <= r exactly (see ``_into_ball``). The gradient
    ``g`` is summed with correctly rounded sums and inflated by a round-off allowance.
    With ``a = ||g + kappa theta||`` (plus the allowance) two bounds are available for a
    strong-convexity modulus ``mu``:

    1. the spec's bound at theta: ``D1 = (a + sqrt(a^2 + 4 mu c)) / (2 mu)`` with
       ``c = kappa ||theta|| (r - ||theta||)``;
    2. the spec's bound at the radial projection ``theta~ = r theta / ||theta||``, which
       lies exactly on the sphere (so c = 0): ``D2 = (a + (L + kappa) delta) / mu``
       bounds ``||theta~ - theta*||``, where ``delta >= r - ||theta||`` and ``L`` bounds
       the Lipschitz constant of the gradient; then ``||theta - theta*|| <= delta + D2``.

    Bound 2 matters on the boundary: a point a few ulps inside the sphere still has
    ``sqrt(c / mu) ~ 1e-8 r`` in bound 1, while bound 2 stays at the round-off level.

    Which ``mu``? ``Delta`` is valid everywhere. Data-dependent moduli are valid on a
    region: if every row's curvature ``phi''`` is at least ``m_i`` wherever the linear
    predictor is within ``||x_i|| rho`` of its value at theta, then
    ``mu(rho) = Delta + lambda_min(sum_i m_i x_i x_i')`` holds on the ball of radius
    ``rho`` around theta. Used (derived here):

    * with ``rho = 2 r`` (every point of the constraint ball), the bounds hold as they
      stand;
    * with a smaller ``rho``, a bound ``D < rho`` computed with ``mu(rho + delta)`` is
      self-confirming: if ``||theta - theta*|| = ell > rho``, integrating the curvature
      along the segment only over its first ``rho`` gives
      ``<g(theta) - g(theta*), theta - theta*> >= mu rho ell``, and with the KKT
      inequality ``... <= a ell + c`` this forces ``mu rho^2 - a rho - c < 0``, i.e.
      ``rho < D``. So ``D < rho`` proves ``ell <= rho`` and then ``ell <= D``.
    """
    n, dim = X.shape
    if row_norms is None:
        row_norms = _row_norms(X)
    r2 = Fraction(float(r)) ** 2
    gap2 = r2 - _exact_sq_norm(theta)  # r^2 - ||theta||^2, exact
    if gap2 < 0:
        raise ValueError("certificate requested at an infeasible point")
    tnorm = float(np.linalg.norm(theta))
    eta = X @ theta
    v = lossobj.dphi(eta, y)
    g = _exact_colsums(X * v[:, None]) + Delta * theta + b
    # round-off allowance: per-row gradients (evaluation and products), and the error in
    # the argument of phi' (eta = x'theta and the residual y - eta are off by at most
    # ~dim * u * (||x|| ||theta|| + |y|)), which moves phi' by at most the largest phi''
    # on that tiny interval; then the ridge and the noise terms
    scale_y = np.abs(y)
    coef = max(1e-13, 8.0 * (dim + 4) * _U)
    arg_err = coef * (row_norms * tnorm + scale_y)
    per_row = row_norms * (np.abs(v) + lossobj.curvature_ceiling(eta, y, arg_err)
                           * (row_norms * tnorm + scale_y))
    slack = coef * (math.fsum(per_row) + Delta * r + float(np.linalg.norm(b)))

    if tnorm > 0:
        delta_gap = float(gap2 / Fraction(float(r))) * (1.0 + 1e-12)  # >= r - ||theta||
        gram = X.T @ X
        lam_max = float(np.linalg.eigvalsh(0.5 * (gram + gram.T))[-1])
        lam_max += 2.0 * (n + dim + 8) * _U * float(np.trace(gram))
        lip = (Delta + lossobj.d2phi_sup() * lam_max) * (1.0 + 1e-12)
        kappas = (0.0, max(0.0, -float(g @ theta)) / (tnorm * tnorm))
    else:
        delta_gap = 0.0
        kappas = (0.0,)
    # any kappa >= 0 gives a valid bound: try kappa = 0 (best in the interior) and the
    # spec's kappa = max(0, -g'theta) / ||theta||^2 (best on the boundary)
    terms = []  # (a, c, a_proj) per kappa
    for kappa in kappas:
        a = (float(np.linalg.norm(g + kappa * theta)) + slack) * (1.0 + 1e-12)
        # kappa ||theta|| (r - ||theta||) = kappa ||theta|| gap2 / (r + ||theta||)
        #                                 <= kappa gap2 / 2
        c = kappa * float(gap2) * 0.5 * (1.0 + 1e-12)
        a_proj = (a + (lip + kappa) * delta_gap) * (1.0 + 1e-12) if tnorm > 0 else math.inf
        terms.append((a, c, a_proj))

    def d_at_theta(mu):
        return min((a + math.sqrt(a * a + 4.0 * mu * c)) / (2.0 * mu) for a, c, _ in terms)

    def d_at_proj(mu):  # bound on ||theta~ - theta*||
        return min(ap for _, _, ap in terms) / mu

    cache = {}

    def mu_within(rho):
        if lossobj.constant_curvature:  # least squares: phi'' = 2 everywhere
            rho = 0.0
        if rho not in cache:
            half = row_norms * (rho * (1.0 + 1e-12)) + 1e-12 * (row_norms * r + scale_y)
            m = np.maximum(lossobj.curvature_floor(eta, y, half) * (1.0 - 1e-12), 0.0)
            cache[rho] = Delta + _lambda_min_lower((X * m[:, None]).T @ X, n)
        return cache[rho]

    # valid everywhere in the constraint ball
    results = []
    for mu in (Delta, mu_within(2.0 * r)):
        results += [d_at_theta(mu), delta_gap + d_at_proj(mu)]
    # self-confirming local moduli
    mu0 = mu_within(0.0)
    rho = 2.0 * min(d_at_theta(mu0), d_at_proj(mu0)) + 1e-300
    for _ in range(4):
        if rho >= 2.0 * r:
            break
        ok = False
        d1 = d_at_theta(mu_within(rho))
        if d1 < rho:
            results.append(d1)
            ok = True
        if tnorm > 0 and delta_gap < r:
            d2 = d_at_proj(mu_within(rho + delta_gap))
            if d2 < rho:
                results.append(delta_gap + d2)
                ok = True
        if ok:
            break
        rho *= 8.0
    return float(min(results))


def _certificate_gram(G, Aty, theta, Delta, b, r, err_G, err_y):
    """The KKT certificate of :func:`_certificate` for the squared loss from the Gram
    matrix: G = X'X and Aty = X'y as computed, |G - exact| <= err_G and
    |Aty - exact| <= err_y entrywise (dpsubset.design.suffstats). The gradient
    2 (G theta - Aty) + Delta theta + b is inflated by what those errors and its own
    evaluation can move it; the curvature is constant (2 X'X), so one modulus
    mu = Delta + 2 lambda_min(X'X) (a proven lower bound) holds on the whole ball."""
    dim = len(theta)
    r2 = Fraction(float(r)) ** 2
    gap2 = r2 - _exact_sq_norm(theta)
    if gap2 < 0:
        raise ValueError("certificate requested at an infeasible point")
    tnorm = float(np.linalg.norm(theta))
    at = np.abs(theta)
    g = 2.0 * (G @ theta - Aty) + Delta * theta + b
    coef = max(1e-13, 8.0 * (dim + 4) * _U)
    slack_vec = (2.0 * (err_G @ at + err_y)
                 + coef * (2.0 * (np.abs(G) @ at + np.abs(Aty)) + Delta * at + np.abs(b)))
    slack = float(np.linalg.norm(slack_vec)) * (1.0 + 1e-12)
    w = np.linalg.eigvalsh(0.5 * (G + G.T))
    err_norm = float(np.linalg.norm(err_G)) + 2.0 * (dim + 8) * _U * max(float(np.trace(G)), 0.0)
    mu = Delta + 2.0 * max(0.0, float(w[0]) - err_norm)
    lip = (Delta + 2.0 * (float(w[-1]) + err_norm)) * (1.0 + 1e-12)
    if tnorm > 0:
        delta_gap = float(gap2 / Fraction(float(r))) * (1.0 + 1e-12)
        kappas = (0.0, max(0.0, -float(g @ theta)) / (tnorm * tnorm))
    else:
        delta_gap = 0.0
        kappas = (0.0,)
    out = []
    for kappa in kappas:
        a = (float(np.linalg.norm(g + kappa * theta)) + slack) * (1.0 + 1e-12)
        c = kappa * float(gap2) * 0.5 * (1.0 + 1e-12)
        out.append((a + math.sqrt(a * a + 4.0 * mu * c)) / (2.0 * mu))
        if tnorm > 0:
            out.append(delta_gap + (a + (lip + kappa) * delta_gap) * (1.0 + 1e-12) / mu)
    return float(min(out))

