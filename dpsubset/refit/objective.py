"""Private coefficients on a released support: objective perturbation (and an SSP cross-check).

The support ``S`` comes out of the private selection step and is public. This module
re-fits the coefficients on ``S`` (plus any always-in columns such as the intercept)
with a second, separately budgeted mechanism. Method notes: ``docs/methods/refit.md``.

Mechanism (Kifer, Smith & Thakurta 2012, Alg. 1, in sum form)
---------------------------------------------------------------
With ``d`` columns, public bounds ``||x_i||_2 <= R`` and ``|y_i| <= b_y``, and a public
radius ``r``, the released vector is

    theta_priv = argmin_{||theta||_2 <= r}  sum_i l(theta; x_i, y_i)
                                            + (Delta / 2) ||theta||^2 + b' theta,

where ``Delta = max(ridge, 2 lambda / eps)`` and ``b`` is drawn once, independently
of the data:

* pure eps-DP: ``b = rho * u`` with ``rho ~ Gamma(shape d, scale 2 zeta_N / eps)`` and
  ``u`` uniform on the unit sphere, i.e. density proportional to
  ``exp(-eps ||b|| / (2 zeta_N))`` (a Laplace variable when ``d = 1``);
* (eps, delta)-DP: ``b ~ N(0, zeta_N^2 (8 ln(2/delta) + 4 eps) / eps^2 I)``.

``zeta`` bounds the per-record gradient norm on the ball, ``lambda`` bounds the
per-record Hessian (which is rank one for every loss here), and ``zeta_N`` is the
gradient bound adapted to the neighbour relation:

* replace-one (default, the package-wide relation; ``n`` public): ``zeta_N = 2 zeta``.
  Two neighbouring data sets differ in one record that is swapped, so the gradient of
  the data term can move by twice the per-record bound.
* add/remove-one: ``zeta_N = zeta`` (the constant printed in KST12).

Why this works, in one line per factor: the noise needed to produce a given interior
output differs between neighbours by at most ``2 zeta`` (replace-one), which costs
``eps / 2`` with the scale above; the Jacobian of the map noise -> output differs by a
factor at most ``1 + lambda / Delta <= 1 + eps / 2 <= exp(eps / 2)``. Outputs on the
sphere ``||theta|| = r`` carry probability mass; KST12 Thm 1 covers them.

Per-loss constants and guarantees (``R`` = ``row_bound``; note ``lambda`` uses ``R^2``)
---------------------------------------------------------------------------------------
======================  ===========================  =============  ==============
loss                    zeta                         lambda         release
======================  ===========================  =============  ==============
``"squared"``           ``2 R (b_y + R r)``          ``2 R^2``      Mode A (exact)
``"huber"`` (pseudo)    ``2 R min(h, b_y + R r)``    ``2 R^2``      Mode B
``"logistic"``          ``R``                        ``R^2 / 4``    Mode B
``"hinge"`` (softplus)  ``R``                        ``R^2 / (2h)`` Mode B
======================  ===========================  =============  ==============

* ``"squared"``: ``(y - x'theta)^2``. Mode A: the constrained minimiser has a closed
  form (ridge solve, or the root of a secular equation when the ball is active), so
  the release is the exact minimiser up to floating point; guarantee eps-DP
  (or (eps, delta)-DP) under the exact-argmin idealisation.
* ``"huber"``: pseudo-Huber ``2 h^2 (sqrt(1 + (u/h)^2) - 1)`` of the residual ``u``.
  Its ``zeta`` is the spec's bound, valid but not attained: the exact supremum is
  ``2 R h U / sqrt(h^2 + U^2)`` with ``U = b_y + R r``.
* ``"logistic"``: ``ln(1 + exp(-y x'theta))``, ``y`` in {-1, +1}.
* ``"hinge"``: softplus-smoothed hinge ``(h/2) ln(1 + exp(2 (1 - y x'theta) / h))``,
  ``y`` in {-1, +1}. The released object is the perturbed minimiser of this smooth
  surrogate, not a perturbed hinge-SVM solution; classify with ``sign(x'theta)``.

Mode B (every loss except ``"squared"``): the iterative solver cannot return the exact
minimiser, so the budget is split, ``eps = eps_obj + eps_out``. Objective perturbation
runs at ``eps_obj``; a projected Newton method runs until a KKT certificate proves
``||theta_hat - theta_exact|| <= d_max``; then ``theta_hat + w`` is released with
``||w|| ~ Gamma(d, 2 d_max / eps_out)`` in a uniform direction. The total is
``(eps_obj + eps_out)``-DP (plus ``delta`` for the Gaussian variant) for either
neighbour relation. If the certificate is not reached the function raises
``RuntimeError``: nothing is released and the noise is never redrawn.

Why the smooth variants. Plain Huber and the Huberized hinge of Chaudhuri, Monteleoni
& Sarwate (2011) have a second derivative that jumps (at ``|u| = h``, resp.
``y x'theta = 1 +- h``), so KST12 Thm 2, which asks for a continuous Hessian, does
not cover them as stated (CMS11 claims the Huberized-hinge result anyway). The
pseudo-Huber and softplus losses used here are infinitely differentiable with the
same ``zeta`` and ``lambda``, so the theorem applies literally.

Caveats
-------
* The guarantees hold only if the data really satisfy the public bounds: clip first.
  The functions here check the bounds and raise ``ValueError`` rather than clip.
* No bound (``row_bound``, ``b_y``, ``r``, ``h``, ``ridge``, ``d_max``) may be computed
  from the data, and the refit must not be re-run to pick a draw.
* The noise is drawn with numpy's floating-point samplers; like every floating-point
  Laplace/Gamma sampler it is open in principle to the attacks of Mironov (2012).
* Only ``RefitResult`` leaves this module: the noise vector, objective values and
  solver traces are never stored.
* A Mode-B failure (``RuntimeError``) is a data-dependent event that the guarantee
  does not cover. With the default ``d_max`` it needs extreme inputs (round-off floor
  ``~1e-13 n zeta / mu`` above ``d_max``); never retry with new noise after it.
* The KKT certificate (``_certificate``) goes beyond the spec's formula in two derived,
  documented ways: a bound through the radial projection on the sphere (boundary
  solutions) and data-dependent strong convexity confirmed on a neighbourhood.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy.special import expit

from ..privacy.leaks import PrivacyLeakWarning

__all__ = [
    "RefitResult",
    "objective_perturbation",
    "objective_perturbation_gram",
    "sufficient_statistics_perturbation",
    "LOSSES",
    "NEIGHBOURS",
    "DEFAULT_HUBER_H_FRACTION",
    "DEFAULT_HINGE_H",
    "DEFAULT_EPS_OUT_FRAC",
    "DEFAULT_D_MAX_FRACTION",
    "DEFAULT_MAX_ITER",
]

LOSSES = ("squared", "huber", "logistic", "hinge")
NEIGHBOURS = ("replace-one", "add/remove")

#: pseudo-Huber threshold, as a fraction of ``b_y``. With ``y`` clipped at about three
#: standard deviations, ``h = b_y / 2`` is about 1.5 sd, close to the classical Huber
#: choice 1.345 sd.
DEFAULT_HUBER_H_FRACTION = 0.5
#: smoothing width of the softplus hinge (the value CMS11 use in their experiments).
DEFAULT_HINGE_H = 0.5
#: share of the refit budget paid for the output noise in Mode B (as in IN+19's code).
DEFAULT_EPS_OUT_FRAC = 0.01
#: default certified accuracy in Mode B, as a fraction of the radius ``r``.
DEFAULT_D_MAX_FRACTION = 1e-8
#: default cap on projected-Newton iterations in Mode B.
DEFAULT_MAX_ITER = 200

_MODE_A = "closed form"
_MODE_B = "certified iterative + output noise"
_MODE_SSP = "sufficient statistics perturbation"
_U = np.finfo(float).eps  # unit round-off (times 2)


@dataclass(frozen=True, eq=False)
class RefitResult:
    """What a private refit releases.

    Every field is either the private output (``coef``) or a public quantity that
    depends only on the budget and the public bounds, except ``certified_distance``,
    which is a numerical-accuracy statement about the solver (in Mode B it is bounded
    by the public ``d_max``, and the output noise is calibrated to ``d_max``).

    Attributes
    ----------
    coef : ndarray, shape (d,)
        The private coefficients, in the column order of the design that was passed.
    loss : str
        The loss that was minimised.
    eps : float
        Total eps spent by this refit (``eps_obj + eps_out`` in Mode B).
    delta : float
        Total delta spent (0 for the pure variant).
    mode : str
        ``"closed form"`` (Mode A), ``"certified iterative + output noise"`` (Mode B)
        or ``"sufficient statistics perturbation"``.
    certified_distance : float
        Proven bound on the distance between the solver's point and the exact
        minimiser of the perturbed problem (before output noise). NaN where no
        certificate applies (SSP with a singular quadratic).
    regularization : float
        The total ridge ``Delta`` used, in the sum-form objective
        ``sum_i l_i + (Delta/2) ||theta||^2``.
    zeta, lam_hess : float
        Per-record gradient and Hessian bounds used for the calibration (NaN for SSP).
    """

    coef: np.ndarray
    loss: str
    eps: float
    delta: float
    mode: str
    certified_distance: float
    regularization: float
    zeta: float
    lam_hess: float


# --------------------------------------------------------------------------------------
# Losses. Each loss is written as a function phi(eta; y) of the linear predictor
# eta = x'theta, so that grad_theta l = phi'(eta) x and Hess_theta l = phi''(eta) x x'.
# phi'' is, as a function of eta, even about a centre c(y) and decreasing away from it;
# that shape gives cheap lower bounds on the curvature over an interval of eta.
# --------------------------------------------------------------------------------------


class _Loss:
    name = ""
    classification = False
    constant_curvature = False

    def phi(self, eta, y):  # pragma: no cover - interface
        raise NotImplementedError

    def dphi(self, eta, y):  # pragma: no cover - interface
        raise NotImplementedError

    def d2phi(self, eta, y):  # pragma: no cover - interface
        raise NotImplementedError

    def centre(self, y):  # pragma: no cover - interface
        raise NotImplementedError

    def d2phi_sup(self):
        """sup over eta, y of phi''(eta; y)."""
        raise NotImplementedError  # pragma: no cover

    def constants(self, R, b_y, r):
        """(zeta, lambda) of spec section 3."""
        raise NotImplementedError  # pragma: no cover

    def curvature_floor(self, eta, y, halfwidth):
        """Lower bound of phi'' over [eta - halfwidth, eta + halfwidth], per row."""
        c = self.centre(y)
        far = c + np.abs(eta - c) + halfwidth
        return self.d2phi(far, y)

    def curvature_ceiling(self, eta, y, halfwidth):
        """Upper bound of phi'' over [eta - halfwidth, eta + halfwidth], per row."""
        c = self.centre(y)
        near = c + np.maximum(np.abs(eta - c) - halfwidth, 0.0)
        return self.d2phi(near, y)


class _Squared(_Loss):
    name = "squared"
    constant_curvature = True

    def phi(self, eta, y):
        return (y - eta) ** 2

    def dphi(self, eta, y):
        return 2.0 * (eta - y)

    def d2phi(self, eta, y):
        return np.full(np.broadcast(eta, y).shape, 2.0)

    def centre(self, y):
        return y

    def d2phi_sup(self):
        return 2.0

    def constants(self, R, b_y, r):
        return 2.0 * R * (b_y + R * r), 2.0 * R * R


class _PseudoHuber(_Loss):
    name = "huber"

    def __init__(self, h):
        self.h = float(h)

    def phi(self, eta, y):
        u = y - eta
        # 2 h^2 (sqrt(1 + (u/h)^2) - 1), written without the cancellation
        return 2.0 * u * u / (np.sqrt(1.0 + (u / self.h) ** 2) + 1.0)

    def dphi(self, eta, y):
        u = y - eta
        return -2.0 * u / np.sqrt(1.0 + (u / self.h) ** 2)

    def d2phi(self, eta, y):
        u = y - eta
        return 2.0 * (1.0 + (u / self.h) ** 2) ** -1.5

    def centre(self, y):
        return y

    def d2phi_sup(self):
        return 2.0

    def constants(self, R, b_y, r):
        return 2.0 * R * min(self.h, b_y + R * r), 2.0 * R * R


class _Logistic(_Loss):
    name = "logistic"
    classification = True

    def phi(self, eta, y):
        return np.logaddexp(0.0, -y * eta)

    def dphi(self, eta, y):
        return -y * expit(-y * eta)

    def d2phi(self, eta, y):
        z = y * eta
        return expit(z) * expit(-z)

    def centre(self, y):
        return np.zeros_like(y)

    def d2phi_sup(self):
        return 0.25

    def constants(self, R, b_y, r):
        return R, R * R / 4.0


class _SoftplusHinge(_Loss):
    name = "hinge"
    classification = True

    def __init__(self, h):
        self.h = float(h)

    def phi(self, eta, y):
        return 0.5 * self.h * np.logaddexp(0.0, 2.0 * (1.0 - y * eta) / self.h)

    def dphi(self, eta, y):
        return -y * expit(2.0 * (1.0 - y * eta) / self.h)

    def d2phi(self, eta, y):
        a = 2.0 * (1.0 - y * eta) / self.h
        return (2.0 / self.h) * expit(a) * expit(-a)

    def centre(self, y):
        return y  # y * eta = 1  <=>  eta = y for y in {-1, +1}

    def d2phi_sup(self):
        return 1.0 / (2.0 * self.h)

    def constants(self, R, b_y, r):
        return R, R * R / (2.0 * self.h)


def _make_loss(loss, *, b_y=None, huber_h=None, hinge_h=None):
    if loss == "squared":
        return _Squared()
    if loss == "huber":
        h = DEFAULT_HUBER_H_FRACTION * b_y if huber_h is None else huber_h
        if not (np.isfinite(h) and h > 0):
            raise ValueError(f"huber_h must be a positive number, got {h!r}")
        return _PseudoHuber(h)
    if loss == "logistic":
        return _Logistic()
    if loss == "hinge":
        h = DEFAULT_HINGE_H if hinge_h is None else hinge_h
        if not (np.isfinite(h) and h > 0):
            raise ValueError(f"hinge_h must be a positive number, got {h!r}")
        return _SoftplusHinge(h)
    raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")


# --------------------------------------------------------------------------------------
# Calibration: everything public that the mechanism uses, in one place, so that the
# exact audits in the tests examine the very constants the release uses.
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Calibration:
    loss: str
    dim: int
    neighbour: str
    zeta: float
    zeta_n: float
    lam_hess: float
    regularization: float  # Delta
    eps: float  # total
    eps_obj: float
    eps_out: float  # 0 in Mode A
    delta: float
    noise: str  # "gamma" (pure) or "gaussian"
    noise_scale: float  # Gamma scale of ||b||, or per-coordinate sd of b
    d_max: float  # 0 in Mode A
    out_scale: float  # Gamma scale of ||w|| in Mode B, 0 in Mode A
    h: float  # huber_h / hinge_h actually used (NaN if not applicable)


def _check_positive(name, value):
    value = float(value)
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return value


def _calibrate(loss, dim, *, eps, row_bound, b_y, r, delta=0.0, ridge=0.0, huber_h=None,
               hinge_h=None, eps_out_frac=DEFAULT_EPS_OUT_FRAC, d_max=None,
               neighbour="replace-one"):
    """Public constants of one refit (spec sections 2, 3 and 5).

    Internal, but used by the audits in ``tests/test_refit_audit.py`` so that they
    check the calibration the release really uses.

    Returns
    -------
    _Calibration
    """
    eps = _check_positive("eps", eps)
    R = _check_positive("row_bound", row_bound)
    r = _check_positive("r", r)
    delta = float(delta)
    if not (0.0 <= delta < 1.0):
        raise ValueError(f"delta must lie in [0, 1), got {delta!r}")
    ridge = float(ridge)
    if not (np.isfinite(ridge) and ridge >= 0):
        raise ValueError(f"ridge must be a finite number >= 0, got {ridge!r}")
    if neighbour not in NEIGHBOURS:
        raise ValueError(f"neighbour must be one of {NEIGHBOURS}, got {neighbour!r}")
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    if loss in ("squared", "huber"):
        if b_y is None:
            raise ValueError(f"loss={loss!r} needs the public response bound b_y")
        b_y = _check_positive("b_y", b_y)
    lossobj = _make_loss(loss, b_y=b_y, huber_h=huber_h, hinge_h=hinge_h)
    zeta, lam = lossobj.constants(R, b_y, r)
    zeta_n = 2.0 * zeta if neighbour == "replace-one" else zeta

    if loss == "squared":  # Mode A: the whole budget goes to the objective
        eps_obj, eps_out, dm, out_scale = eps, 0.0, 0.0, 0.0
    else:
        frac = float(eps_out_frac)
        if not (0.0 < frac < 1.0):
            raise ValueError(f"eps_out_frac must lie in (0, 1), got {eps_out_frac!r}")
        eps_out = eps * frac
        eps_obj = eps - eps_out
        dm = DEFAULT_D_MAX_FRACTION * r if d_max is None else _check_positive("d_max", d_max)
        out_scale = 2.0 * dm / eps_out

    Delta = max(ridge, 2.0 * lam / eps_obj)  # KST12 Alg. 1 line 1
    if delta > 0:
        noise = "gaussian"
        scale = zeta_n * math.sqrt(8.0 * math.log(2.0 / delta) + 4.0 * eps_obj) / eps_obj
    else:
        noise = "gamma"
        scale = 2.0 * zeta_n / eps_obj  # replace-one: 4 zeta / eps_obj
    return _Calibration(
        loss=loss, dim=int(dim), neighbour=neighbour, zeta=float(zeta), zeta_n=float(zeta_n),
        lam_hess=float(lam), regularization=float(Delta), eps=eps, eps_obj=float(eps_obj),
        eps_out=float(eps_out), delta=delta, noise=noise, noise_scale=float(scale),
        d_max=float(dm), out_scale=float(out_scale), h=getattr(lossobj, "h", float("nan")))


def _uniform_direction(rng, dim, size=None):
    """Uniform unit vectors in R^dim, shape (dim,) or (size, dim)."""
    shape = (dim,) if size is None else (size, dim)
    g = rng.standard_normal(shape)
    norms = np.linalg.norm(g, axis=-1, keepdims=True)
    while np.any(norms == 0):  # probability zero, but never divide by zero
        bad = (norms == 0).ravel()
        g.reshape(-1, dim)[bad] = rng.standard_normal((int(bad.sum()), dim))
        norms = np.linalg.norm(g, axis=-1, keepdims=True)
    return g / norms


def _sample_noise(rng, cal, size=None):
    """Draw the objective-perturbation vector b (or ``size`` independent copies).

    Pure variant: radius ``Gamma(dim, cal.noise_scale)`` times a uniform direction,
    which is the density proportional to ``exp(-||b|| / noise_scale)``. Gaussian
    variant: i.i.d. ``N(0, noise_scale^2)`` coordinates.
    """
    dim = cal.dim
    if cal.noise == "gaussian":
        shape = (dim,) if size is None else (size, dim)
        return cal.noise_scale * rng.standard_normal(shape)
    rho = rng.gamma(shape=dim, scale=cal.noise_scale, size=size)
    u = _uniform_direction(rng, dim, size)
    return (rho if size is None else np.asarray(rho)[:, None]) * u


def _sample_output_noise(rng, cal, size=None):
    """Mode-B output noise w: radius ``Gamma(dim, 2 d_max / eps_out)``, uniform direction."""
    rho = rng.gamma(shape=cal.dim, scale=cal.out_scale, size=size)
    u = _uniform_direction(rng, cal.dim, size)
    return (rho if size is None else np.asarray(rho)[:, None]) * u


# --------------------------------------------------------------------------------------
# Numerics
# --------------------------------------------------------------------------------------


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


def _ball_qp(H, q, r):
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


def _solve_closed_form(X, y, Delta, b, r):
    """Mode A: exact minimiser of sum (y - x'theta)^2 + Delta/2 ||theta||^2 + b'theta
    over the ball, and its KKT certificate.

    Returns
    -------
    theta : ndarray
    certified_distance : float
    """
    dim = X.shape[1]
    A = 2.0 * (X.T @ X) + Delta * np.eye(dim)
    c = 2.0 * _exact_colsums(X * y[:, None]) - b
    theta, _ = _ball_qp(A, c, r)
    theta = _into_ball(theta, r)
    lossobj = _Squared()
    norms = _row_norms(X)
    d = _certificate(lossobj, X, y, theta, Delta, b, r, norms)
    # floating point only: if the closed form is visibly inexact (ill-conditioned data),
    # a few steps of iterative refinement with the exactly summed gradient, each kept
    # only if it improves the certificate
    return _refine(A, theta, d, r,
                   lambda t: 2.0 * _exact_colsums(X * (X @ t - y)[:, None]) + Delta * t + b,
                   lambda t: _certificate(lossobj, X, y, t, Delta, b, r, norms))


def _refine(A, theta, d, r, gradient, certificate, rounds=3):
    """Iterative refinement of a closed-form solution in the ball: at most ``rounds``
    Newton steps with the matrix A and the given gradient, each kept only if it
    improves the certificate (the distance bound d)."""
    for _ in range(rounds):
        if d <= 1e-10 * r:
            break
        cand, _ = _ball_qp(A, A @ theta - gradient(theta), r)
        cand = _into_ball(cand, r)
        dc = certificate(cand)
        if not dc < d:
            break
        theta, d = cand, dc
    return theta, d


def _solve_certified(lossobj, X, y, Delta, b, r, d_max, max_iter):
    """Mode B solver: projected Newton on the ball until d(theta) <= d_max.

    Each step minimises the local quadratic model over the ball (``_ball_qp``), then
    backtracks along the segment to that point (which stays feasible by convexity)
    with an Armijo test. Stops as soon as the rigorous certificate is <= ``d_max``.

    Returns
    -------
    theta : ndarray
    certified_distance : float

    Raises
    ------
    RuntimeError
        If the certificate is not reached within ``max_iter`` iterations.
    """
    n, dim = X.shape
    norms = _row_norms(X)
    theta = np.zeros(dim)
    eye = np.eye(dim)
    best = math.inf
    rigorous_tries = 0
    prev_est = math.inf

    def objective(t):
        vals = lossobj.phi(X @ t, y)
        extra = 0.5 * Delta * float(t @ t) + float(b @ t)
        return float(np.sum(vals)) + extra, float(np.sum(np.abs(vals))) + abs(extra)

    for _ in range(int(max_iter)):
        eta = X @ theta
        v = lossobj.dphi(eta, y)
        curv = lossobj.d2phi(eta, y)
        g = X.T @ v + Delta * theta + b
        H = (X * curv[:, None]).T @ X + Delta * eye
        # cheap, non-rigorous estimate (local Hessian, no slack) to decide when to certify
        tnorm = float(np.linalg.norm(theta))
        kap = max(0.0, -float(g @ theta)) / (tnorm * tnorm) if tnorm > 0 else 0.0
        evals = np.linalg.eigvalsh(H)
        mu_loc = max(Delta, float(evals[0]))
        a = float(np.linalg.norm(g + kap * theta))
        gap = max(0.0, r - tnorm)
        est = min(float(np.linalg.norm(g)) / mu_loc,
                  (a + math.sqrt(a * a + 4.0 * mu_loc * kap * tnorm * gap)) / (2.0 * mu_loc),
                  gap + (a + (float(evals[-1]) + kap) * gap) / mu_loc)
        # certify once well converged (Newton usually lands far below d_max), or as
        # soon as the estimate is below d_max and no longer improving
        stalled = est <= 0.5 * d_max and est >= 0.25 * prev_est
        prev_est = est
        if est <= 1e-3 * d_max or stalled:
            d = _certificate(lossobj, X, y, theta, Delta, b, r, norms)
            best = min(best, d)
            if d <= d_max:
                return theta, d
            rigorous_tries += 1
            if rigorous_tries >= 4:
                break
        p, _ = _ball_qp(H, H @ theta - g, r)
        p = _into_ball(p, r)
        step = p - theta
        snorm = float(np.linalg.norm(step))
        if snorm == 0.0:
            # the Newton model is at its minimum; only the certificate can tell
            d = _certificate(lossobj, X, y, theta, Delta, b, r, norms)
            best = min(best, d)
            if d <= d_max:
                return theta, d
            break
        slope = float(g @ step)
        cand = None
        if slope < 0:
            f0, fabs = objective(theta)
            tol = 64.0 * _U * fabs
            t = 1.0
            while t >= 1e-12:
                trial = _into_ball(theta + t * step, r)
                if objective(trial)[0] <= f0 + 1e-4 * t * slope + tol:
                    cand = trial
                    break
                t *= 0.5
        if cand is None:
            # Armijo cannot judge this step: on the sphere a huge radial gradient makes
            # g'step pure round-off, and near the solution F changes below its own
            # round-off. A short step is in Newton's local regime: take it in full.
            if snorm <= 1e-6 * r:
                cand = p
            else:
                d = _certificate(lossobj, X, y, theta, Delta, b, r, norms)
                best = min(best, d)
                if d <= d_max:
                    return theta, d
                break
        theta = cand
    raise RuntimeError(
        f"objective perturbation ({lossobj.name}): the solver did not certify "
        f"||theta_hat - theta_exact|| <= d_max = {d_max:.3g} within max_iter = {max_iter} "
        "(the certificate reached is not shown: it depends on the data). Nothing is released "
        "and the noise is not redrawn. If d_max is near the round-off floor (about "
        "1e-13 * n * zeta / Delta), choose a larger public d_max before seeing the data.")


# --------------------------------------------------------------------------------------
# Input checks
# --------------------------------------------------------------------------------------


def _check_design(X, y):
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-d array, got shape {X.shape}")
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must have shape ({X.shape[0]},), got {y.shape}")
    if X.shape[0] == 0:
        raise ValueError("the design has no rows")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        raise ValueError("X and y must be finite")
    return np.ascontiguousarray(X), np.ascontiguousarray(y)


def _check_rng(rng):
    if not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy.random.Generator (e.g. np.random.default_rng(seed))")
    return rng


def _check_bounds(X, y, lossobj, row_bound, b_y):
    """The guarantee needs clipped data; refuse (rather than clip silently) otherwise."""
    if np.any(_row_norms(X) > row_bound * (1.0 + 1e-9)):
        raise ValueError("some row has ||x_i|| > row_bound: clip the data to the public "
                         "bounds before the refit")
    if lossobj.classification:
        if not np.all((y == 1.0) | (y == -1.0)):
            raise ValueError(f"loss={lossobj.name!r} needs labels y in {{-1, +1}}")
    elif np.any(np.abs(y) > b_y * (1.0 + 1e-12)):
        raise ValueError("some |y_i| > b_y: clip the response to the public bound first")


# --------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------


def objective_perturbation(X, y, *, loss, eps, row_bound, b_y=None, r, rng, delta=0.0,
                           ridge=0.0, huber_h=None, hinge_h=None,
                           eps_out_frac=DEFAULT_EPS_OUT_FRAC, d_max=None,
                           max_iter=DEFAULT_MAX_ITER, neighbour="replace-one",
                           _force_zero_noise=False) -> RefitResult:
    """Differentially private coefficients on a public support by objective perturbation.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Design restricted to the released support plus the always-in columns (an
        intercept column of ones first, if any), already clipped to the public bounds.
    y : array_like, shape (n,)
        Response, clipped to ``[-b_y, b_y]`` (``"squared"``, ``"huber"``) or labels in
        {-1, +1} (``"logistic"``, ``"hinge"``).
    loss : {"squared", "huber", "logistic", "hinge"}
        ``"huber"`` is the smooth pseudo-Huber loss and ``"hinge"`` the softplus-smoothed
        hinge (see the module docstring for why the smooth versions).
    eps : float
        Total privacy budget of this refit (> 0). In Mode B it is split into
        ``eps_obj = (1 - eps_out_frac) eps`` and ``eps_out = eps_out_frac eps``.
    row_bound : float
        Public bound R on every ``||x_i||_2``: ``sqrt(sum_j b_j^2)`` over the columns,
        counting 1 for the intercept. Never computed from the data.
    b_y : float, optional
        Public response bound (required for ``"squared"`` and ``"huber"``; unused for
        the classification losses).
    r : float
        Public radius of the constraint ``||theta||_2 <= r``. A loose ``r`` inflates
        the least-squares and Huber noise linearly.
    rng : numpy.random.Generator
        Source of all randomness (the noise ``b`` is drawn first, then the output noise).
    delta : float, default 0
        0 for pure eps-DP (Gamma-radius noise); ``> 0`` for the Gaussian variant,
        which is (eps, delta)-DP.
    ridge : float, default 0
        A user ridge ``Delta_user`` in the sum-form objective; the ridge actually used
        is ``max(ridge, 2 lambda / eps_obj)``.
    huber_h : float, optional
        Pseudo-Huber scale; default ``DEFAULT_HUBER_H_FRACTION * b_y`` (``b_y / 2``).
    hinge_h : float, optional
        Softplus-hinge width; default ``DEFAULT_HINGE_H`` (0.5).
    eps_out_frac : float, default 0.01
        Mode B only: share of ``eps`` paid for the output noise.
    d_max : float, optional
        Mode B only: certified solver accuracy; default ``1e-8 * r``. Must be public.
    max_iter : int, default 200
        Mode B only: cap on projected-Newton iterations before failing closed.
    neighbour : {"replace-one", "add/remove"}, default "replace-one"
        Neighbour relation of the guarantee; must match the selection step.
    _force_zero_noise : bool, default False
        PRIVATE TEST HOOK. Sets ``b = 0`` (and ``w = 0`` in Mode B) so that tests can
        compare with non-private solvers. The output is then not private and a
        ``PrivacyLeakWarning`` is emitted. Never use it outside the test-suite.

    Returns
    -------
    RefitResult
        Only the released coefficients and public constants; never ``b``, objective
        values or solver traces.

    Raises
    ------
    ValueError
        Invalid arguments, or data outside the public bounds (clip first).
    RuntimeError
        Mode B could not certify ``d(theta_hat) <= d_max`` within ``max_iter``;
        nothing is released.

    Notes
    -----
    Guarantee: eps-DP (``delta = 0``) or (eps, delta)-DP with respect to
    ``neighbour``, for the released ``coef`` given the public support. Mode A
    (``"squared"``) relies on the exact-argmin idealisation of KST12 (the closed form is
    exact up to floating point; ``certified_distance`` reports how close); Mode B pays
    ``eps_out`` for a rigorous treatment of the solver error. With ``d = 0`` columns
    nothing is released and no budget is spent.
    """
    X, y = _check_design(X, y)
    rng = _check_rng(rng)
    n, dim = X.shape
    cal = _calibrate(loss, dim, eps=eps, row_bound=row_bound, b_y=b_y, r=r, delta=delta,
                     ridge=ridge, huber_h=huber_h, hinge_h=hinge_h,
                     eps_out_frac=eps_out_frac, d_max=d_max, neighbour=neighbour)
    lossobj = _make_loss(loss, b_y=b_y, huber_h=huber_h, hinge_h=hinge_h)
    _check_bounds(X, y, lossobj, float(row_bound), b_y)
    max_iter = int(max_iter)
    if max_iter < 1:
        raise ValueError("max_iter must be >= 1")
    r = float(r)
    mode = _MODE_A if loss == "squared" else _MODE_B
    if dim == 0:
        return RefitResult(coef=np.zeros(0), loss=loss, eps=0.0, delta=0.0, mode=mode,
                           certified_distance=0.0, regularization=cal.regularization,
                           zeta=cal.zeta, lam_hess=cal.lam_hess)

    # the noise is drawn once, before the data are touched, and never redrawn
    b = _sample_noise(rng, cal)
    if _force_zero_noise:
        warnings.warn("objective_perturbation(_force_zero_noise=True) is a test hook: "
                      "the output is NOT differentially private", PrivacyLeakWarning,
                      stacklevel=2)
        b = np.zeros(dim)
    Delta = cal.regularization

    if loss == "squared":
        theta, dist = _solve_closed_form(X, y, Delta, b, r)
        coef = theta
    else:
        theta, dist = _solve_certified(lossobj, X, y, Delta, b, r, cal.d_max, max_iter)
        w = _sample_output_noise(rng, cal)
        if _force_zero_noise:
            w = np.zeros(dim)
        coef = theta + w
    return RefitResult(coef=np.array(coef, dtype=float), loss=loss, eps=cal.eps,
                       delta=cal.delta, mode=mode, certified_distance=float(dist),
                       regularization=Delta, zeta=cal.zeta, lam_hess=cal.lam_hess)


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


def objective_perturbation_gram(G, Aty, n, *, eps, row_bound, b_y, r, rng, delta=0.0, ridge=0.0,
                                entry_error=None, neighbour="replace-one") -> RefitResult:
    """:func:`objective_perturbation` for ``loss="squared"`` from the sufficient statistics.

    The squared loss needs the data only through G = A'A and A'y of the released
    columns A (Mode A: the closed-form minimiser over the ball), so tall data never need
    the n x d matrix. The calibration and the noise are those of
    :func:`objective_perturbation` (same draws from ``rng``, in the same order), so on
    the same data the two agree to rounding.

    Parameters
    ----------
    G : ndarray, shape (d, d)
        A'A of the clipped, mapped design restricted to the always-in and released columns.
    Aty : ndarray, shape (d,)
        A'y.
    n : int
        Number of rows (public).
    eps, row_bound, b_y, r, rng, delta, ridge, neighbour
        As in :func:`objective_perturbation` (``row_bound`` and ``b_y`` are the public
        bounds the design clipped to: the statistics come only from clipped data, see
        :mod:`dpsubset.design.suffstats`, so no per-row check is possible or needed here).
    entry_error : (ndarray (d, d), ndarray (d,)), optional
        Entrywise bounds on the rounding error of G and A'y
        (:meth:`dpsubset.design.suffstats.SufficientStats.entry_error`); they replace the
        correctly rounded sums of the matrix route in the certificate. Default: no
        error (exact statistics).

    Returns
    -------
    RefitResult
    """
    rng = _check_rng(rng)
    G = np.asarray(G, dtype=float)
    Aty = np.asarray(Aty, dtype=float).ravel()
    dim = len(Aty)
    if G.shape != (dim, dim) or not (np.all(np.isfinite(G)) and np.all(np.isfinite(Aty))):
        raise ValueError(f"G must be a finite ({dim}, {dim}) matrix and Aty a finite vector")
    if int(n) < 1:
        raise ValueError("the design has no rows")
    cal = _calibrate("squared", dim, eps=eps, row_bound=row_bound, b_y=b_y, r=r, delta=delta,
                     ridge=ridge, neighbour=neighbour)
    r = float(r)
    if dim == 0:
        return RefitResult(coef=np.zeros(0), loss="squared", eps=0.0, delta=0.0, mode=_MODE_A,
                           certified_distance=0.0, regularization=cal.regularization,
                           zeta=cal.zeta, lam_hess=cal.lam_hess)
    err_G, err_y = (np.zeros((dim, dim)), np.zeros(dim)) if entry_error is None else entry_error
    b = _sample_noise(rng, cal)  # drawn once, before the data are touched
    Delta = cal.regularization
    A = 2.0 * G + Delta * np.eye(dim)
    theta, _ = _ball_qp(A, 2.0 * Aty - b, r)
    theta = _into_ball(theta, r)
    d = _certificate_gram(G, Aty, theta, Delta, b, r, err_G, err_y)
    theta, d = _refine(A, theta, d, r, lambda t: 2.0 * (G @ t - Aty) + Delta * t + b,
                       lambda t: _certificate_gram(G, Aty, t, Delta, b, r, err_G, err_y))
    return RefitResult(coef=np.array(theta, dtype=float), loss="squared", eps=cal.eps,
                       delta=cal.delta, mode=_MODE_A, certified_distance=float(d),
                       regularization=Delta, zeta=cal.zeta, lam_hess=cal.lam_hess)


def _ssp_sensitivity(bounds, b_y, neighbour):
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
        return RefitResult(coef=np.zeros(0), loss="squared", eps=0.0, delta=0.0,
                           mode=_MODE_SSP, certified_distance=0.0, regularization=ridge,
                           zeta=float("nan"), lam_hess=float("nan"))

    scale = _ssp_sensitivity(bounds, b_y, neighbour) / eps
    iu = np.triu_indices(dim)
    m_tri = len(iu[0])
    noise = rng.laplace(0.0, scale, size=m_tri + dim)
    gram = X.T @ X
    a_noisy = np.zeros((dim, dim))
    a_noisy[iu] = gram[iu] + noise[:m_tri]
    a_noisy = a_noisy + np.triu(a_noisy, 1).T
    c_noisy = _exact_colsums(X * y[:, None]) + noise[m_tri:]
    # post-processing only from here on
    w, V = np.linalg.eigh(a_noisy)
    a_psd = (V * np.maximum(w, 0.0)) @ V.T
    M = a_psd + 0.5 * ridge * np.eye(dim)
    H = 2.0 * M
    q = 2.0 * c_noisy
    theta, _ = _ball_qp(H, q, r)
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
    return RefitResult(coef=theta, loss="squared", eps=eps, delta=0.0, mode=_MODE_SSP,
                       certified_distance=float(dist), regularization=ridge,
                       zeta=float("nan"), lam_hess=float("nan"))
