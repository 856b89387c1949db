"""Private coefficients on a released support: objective perturbation.

The support ``S`` comes out of the private selection step and is public. This module
re-fits the coefficients on ``S`` (plus any always-in columns such as the intercept)
with a second, separately budgeted mechanism. Method notes: ``docs/methods/refit.md``.
The KKT certificate of the solves is in dpsubset/refit/certificate.py and the
sufficient-statistics perturbation cross-check in dpsubset/refit/ssp.py.

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
* The noise is drawn in floating point (``dpsubset.mechanisms.noise.float_gamma`` and
  ``float_direction``); the attack of Mironov (2012) through the low-order bits works on
  it (tests/audit/test_refit_float_attack_audit.py, an expected failure until fixed).
  docs/methods/refit.md ("Floating point") says what an exact version needs; the
  sufficient-statistics refit (refit/ssp.py) is exact.
* Only ``RefitResult`` leaves this module: the noise vector, objective values and
  solver traces are never stored.
* A Mode-B failure (``RuntimeError``) is a data-dependent event that the guarantee
  does not cover. With the default ``d_max`` it needs extreme inputs (round-off floor
  ``~1e-13 n zeta / mu`` above ``d_max``); never retry with new noise after it.
* The KKT certificate (``_certificate``, dpsubset/refit/certificate.py) goes beyond the
  spec's formula in two derived, documented ways: a bound through the radial projection on the sphere (boundary
  solutions) and data-dependent strong convexity confirmed on a neighbourhood.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from ..losses import LOSSES, REGRESSION_LOSSES, Loss, SquaredLoss, is_least_squares, make_loss
from .._validation import check_positive
from ..mechanisms import noise as samplers
from ..privacy.leaks import PrivacyLeakWarning
from .certificate import (_U, ball_qp, _certificate, _certificate_gram, _exact_colsums, _into_ball,
                          _row_norms)

__all__ = [
    # public doors for the inference stage (its bootstrap replays this mechanism) and the
    # usefulness warnings: the calibration, the loss, and the noise laws
    "calibrate", "refit_loss", "sample_noise", "sample_output_noise",
    "RefitResult",
    "RefitLoss",
    "objective_perturbation",
    "objective_perturbation_gram",
    "NEIGHBOURS",
    "DEFAULT_EPS_OUT_FRAC",
    "DEFAULT_D_MAX_FRACTION",
    "DEFAULT_MAX_ITER",
]

NEIGHBOURS = ("replace-one", "add/remove")

#: share of the refit budget paid for the output noise in Mode B (as in IN+19's code).
DEFAULT_EPS_OUT_FRAC = 0.01
#: default certified accuracy in Mode B, as a fraction of the radius ``r``.
DEFAULT_D_MAX_FRACTION = 1e-8
#: default cap on projected-Newton iterations in Mode B.
DEFAULT_MAX_ITER = 200

_MODE_A = "closed form"
_MODE_B = "certified iterative + output noise"
_MODE_SSP = "sufficient statistics perturbation"


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
# The refit's per-row loss. KST12 and the constants of the table above are written for
# the sum of (y - x'theta)^2 (least squares) and the pseudo-Huber loss at twice the
# scale of the selection scores; the loss objects of dpsubset.losses are the scores'
# (0.5 (y - eta)^2). RefitLoss is the one place where the factor Loss.refit_scale is
# applied: phi = refit_scale * l. The factor is 2 or 1, a power of two, so phi and its
# derivatives are bit for bit those of the loss written out at the refit's scale.
# --------------------------------------------------------------------------------------


class RefitLoss:
    """The refit's per-row loss phi(eta; y) = ``loss.refit_scale`` * l(eta; y).

    Written as a function of the linear predictor eta = x'theta, so that
    grad_theta phi = phi'(eta) x and Hess_theta phi = phi''(eta) x x'. phi'' is, as a
    function of eta, even about the centre c(y) of the loss and decreasing away from
    it; that shape gives cheap bounds on the curvature over an interval of eta (the
    certificate's :meth:`curvature_floor` and :meth:`curvature_ceiling`).

    Parameters
    ----------
    loss : dpsubset.losses.Loss
        The per-row loss, with its public parameters.
    """

    def __init__(self, loss: Loss):
        self.loss = loss
        self.scale = float(loss.refit_scale)
        self.name = loss.name
        self.classification = loss.classification
        self.constant_curvature = loss.constant_curvature
        self.h = getattr(loss, "h", float("nan"))

    def _scaled(self, v):
        return v if self.scale == 1.0 else self.scale * v

    def phi(self, eta, y):
        """phi(eta; y), elementwise."""
        return self._scaled(self.loss.value(eta, y))

    def dphi(self, eta, y):
        """phi'(eta; y), elementwise."""
        return self._scaled(self.loss.derivative(eta, y))

    def d2phi(self, eta, y):
        """phi''(eta; y), elementwise."""
        return self._scaled(self.loss.second_derivative(eta, y))

    def d2phi_sup(self):
        """sup over eta, y of phi''(eta; y)."""
        return self.scale * self.loss.second_derivative_sup()

    def constants(self, R, b_y, r):
        """(zeta, lambda) of spec section 3: bounds on one row's gradient norm and Hessian
        over ||x|| <= R and the ball of radius r (the table of the module docstring)."""
        return (self._scaled(self.loss.row_gradient_bound(R, b_y, r)),
                self._scaled(self.loss.row_hessian_bound(R)))

    def curvature_floor(self, eta, y, halfwidth):
        """Lower bound of phi'' over [eta - halfwidth, eta + halfwidth], per row."""
        c = self.loss.centre(y)
        far = c + np.abs(eta - c) + halfwidth
        return self.d2phi(far, y)

    def curvature_ceiling(self, eta, y, halfwidth):
        """Upper bound of phi'' over [eta - halfwidth, eta + halfwidth], per row."""
        c = self.loss.centre(y)
        near = c + np.maximum(np.abs(eta - c) - halfwidth, 0.0)
        return self.d2phi(near, y)


def refit_loss(loss, *, b_y=None, huber_h=None, hinge_h=None) -> RefitLoss:
    """The refit's loss for a name, with the package's defaults for h (dpsubset.losses)."""
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    return RefitLoss(make_loss(loss, b_y=b_y, huber_h=huber_h, hinge_h=hinge_h))


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
    return check_positive(name, float(value))  # the package's one rule (dpsubset._validation)


def calibrate(loss, dim, *, eps, row_bound, b_y, r, delta=0.0, ridge=0.0, huber_h=None,
               hinge_h=None, eps_out_frac=DEFAULT_EPS_OUT_FRAC, d_max=None,
               neighbour="replace-one"):
    """Public constants of one refit (spec sections 2, 3 and 5).

    Internal, but used by the audits in ``tests/refit/test_refit_audit.py`` so that they
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
    if loss in REGRESSION_LOSSES:
        if b_y is None:
            raise ValueError(f"loss={loss!r} needs the public response bound b_y")
        b_y = _check_positive("b_y", b_y)
    lossobj = refit_loss(loss, b_y=b_y, huber_h=huber_h, hinge_h=hinge_h)
    zeta, lam = lossobj.constants(R, b_y, r)
    zeta_n = 2.0 * zeta if neighbour == "replace-one" else zeta

    if is_least_squares(loss):  # Mode A: the whole budget goes to the objective
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
        d_max=float(dm), out_scale=float(out_scale), h=lossobj.h)


def _uniform_direction(rng, dim, size=None):
    """Uniform unit vectors in R^dim, shape (dim,) or (size, dim) (floating point)."""
    return samplers.float_direction(rng, dim, size)


def sample_noise(rng, cal, size=None):
    """Draw the objective-perturbation vector b (or ``size`` independent copies).

    Pure variant: radius ``Gamma(dim, cal.noise_scale)`` times a uniform direction,
    which is the density proportional to ``exp(-||b|| / noise_scale)``. Gaussian
    variant: i.i.d. ``N(0, noise_scale^2)`` coordinates.
    """
    dim = cal.dim
    if cal.noise == "gaussian":
        shape = (dim,) if size is None else (size, dim)
        return cal.noise_scale * samplers.float_normal(rng, shape)
    rho = samplers.float_gamma(rng, dim, cal.noise_scale, size)
    u = _uniform_direction(rng, dim, size)
    return (rho if size is None else np.asarray(rho)[:, None]) * u


def sample_output_noise(rng, cal, size=None):
    """Mode-B output noise w: radius ``Gamma(dim, 2 d_max / eps_out)``, uniform direction."""
    rho = samplers.float_gamma(rng, cal.dim, cal.out_scale, size)
    u = _uniform_direction(rng, cal.dim, size)
    return (rho if size is None else np.asarray(rho)[:, None]) * u

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
    theta, _ = ball_qp(A, c, r)
    theta = _into_ball(theta, r)
    lossobj = RefitLoss(SquaredLoss())
    norms = _row_norms(X)
    d = _certificate(lossobj, X, y, theta, Delta, b, r, norms)
    # floating point only: if the closed form is visibly inexact (ill-conditioned data),
    # a few steps of iterative refinement with the exactly summed gradient, each kept
    # only if it improves the certificate
    return _refine(A, theta, d, r,
                   lambda t: 2.0 * _exact_colsums(X * (X @ t - y)[:, None]) + Delta * t + b,
                   lambda t: _certificate(lossobj, X, y, t, Delta, b, r, norms))


def _solve_closed_form_gram(G, Aty, Delta, b, r, err_G, err_y):
    """:func:`_solve_closed_form` from ``G = A'A`` and ``A'y`` (entrywise rounding errors
    ``err_G``, ``err_y`` of the statistics enter the certificate)."""
    A = 2.0 * G + Delta * np.eye(len(Aty))
    theta, _ = ball_qp(A, 2.0 * Aty - b, r)
    theta = _into_ball(theta, r)
    d = _certificate_gram(G, Aty, theta, Delta, b, r, err_G, err_y)
    return _refine(A, theta, d, r, lambda t: 2.0 * (G @ t - Aty) + Delta * t + b,
                   lambda t: _certificate_gram(G, Aty, t, Delta, b, r, err_G, err_y))


def _refine(A, theta, d, r, gradient, certificate, rounds=3):
    """Iterative refinement of a closed-form solution in the ball: at most ``rounds``
    Newton steps with the matrix A and the given gradient, each kept only if it
    improves the certificate (the distance bound d)."""
    for _ in range(rounds):
        if d <= 1e-10 * r:
            break
        cand, _ = ball_qp(A, A @ theta - gradient(theta), r)
        cand = _into_ball(cand, r)
        dc = certificate(cand)
        if not dc < d:
            break
        theta, d = cand, dc
    return theta, d


def _solve_certified(lossobj, X, y, Delta, b, r, d_max, max_iter):
    """Mode B solver: projected Newton on the ball until d(theta) <= d_max.

    Each step minimises the local quadratic model over the ball (``ball_qp``), then
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
        p, _ = ball_qp(H, H @ theta - g, r)
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


def _check_gram(G, Aty, n):
    """G = A'A and A'y as float arrays, checked (finite, matching shapes, rows >= 1)."""
    G = np.asarray(G, dtype=float)
    Aty = np.asarray(Aty, dtype=float).ravel()
    dim = len(Aty)
    if G.shape != (dim, dim) or not (np.all(np.isfinite(G)) and np.all(np.isfinite(Aty))):
        raise ValueError(f"G must be a finite ({dim}, {dim}) matrix and Aty a finite vector")
    if int(n) < 1:
        raise ValueError("the design has no rows")
    return G, Aty


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
        Pseudo-Huber scale; default ``dpsubset.losses.DEFAULT_HUBER_H_FRACTION * b_y``
        (``b_y / 2``).
    hinge_h : float, optional
        Softplus-hinge width; default ``dpsubset.losses.DEFAULT_HINGE_H`` (0.5).
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
    cal = calibrate(loss, dim, eps=eps, row_bound=row_bound, b_y=b_y, r=r, delta=delta,
                     ridge=ridge, huber_h=huber_h, hinge_h=hinge_h,
                     eps_out_frac=eps_out_frac, d_max=d_max, neighbour=neighbour)
    lossobj = refit_loss(loss, b_y=b_y, huber_h=huber_h, hinge_h=hinge_h)
    _check_bounds(X, y, lossobj, float(row_bound), b_y)
    max_iter = int(max_iter)
    if max_iter < 1:
        raise ValueError("max_iter must be >= 1")
    r = float(r)
    mode = _MODE_A if is_least_squares(loss) else _MODE_B
    if dim == 0:
        return RefitResult(coef=np.zeros(0), loss=loss, eps=0.0, delta=0.0, mode=mode,
                           certified_distance=0.0, regularization=cal.regularization,
                           zeta=cal.zeta, lam_hess=cal.lam_hess)

    # the noise is drawn once, before the data are touched, and never redrawn
    b = sample_noise(rng, cal)
    if _force_zero_noise:
        warnings.warn("objective_perturbation(_force_zero_noise=True) is a test hook: "
                      "the output is NOT differentially private", PrivacyLeakWarning,
                      stacklevel=2)
        b = np.zeros(dim)
    Delta = cal.regularization

    if is_least_squares(loss):
        theta, dist = _solve_closed_form(X, y, Delta, b, r)
        coef = theta
    else:
        theta, dist = _solve_certified(lossobj, X, y, Delta, b, r, cal.d_max, max_iter)
        w = sample_output_noise(rng, cal)
        if _force_zero_noise:
            w = np.zeros(dim)
        coef = theta + w
    return RefitResult(coef=np.array(coef, dtype=float), loss=loss, eps=cal.eps,
                       delta=cal.delta, mode=mode, certified_distance=float(dist),
                       regularization=Delta, zeta=cal.zeta, lam_hess=cal.lam_hess)


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
    G, Aty = _check_gram(G, Aty, n)
    dim = len(Aty)
    cal = calibrate(SquaredLoss.name, dim, eps=eps, row_bound=row_bound, b_y=b_y, r=r, delta=delta,
                     ridge=ridge, neighbour=neighbour)
    r = float(r)
    if dim == 0:
        return RefitResult(coef=np.zeros(0), loss=SquaredLoss.name, eps=0.0, delta=0.0, mode=_MODE_A,
                           certified_distance=0.0, regularization=cal.regularization,
                           zeta=cal.zeta, lam_hess=cal.lam_hess)
    err_G, err_y = (np.zeros((dim, dim)), np.zeros(dim)) if entry_error is None else entry_error
    b = sample_noise(rng, cal)  # drawn once, before the data are touched
    Delta = cal.regularization
    theta, d = _solve_closed_form_gram(G, Aty, Delta, b, r, err_G, err_y)
    return RefitResult(coef=np.array(theta, dtype=float), loss=SquaredLoss.name, eps=cal.eps,
                       delta=cal.delta, mode=_MODE_A, certified_distance=float(d),
                       regularization=Delta, zeta=cal.zeta, lam_hess=cal.lam_hess)


def _gamma_upper(dim):
    """A radius that Gamma(dim, 1) exceeds with negligible probability (< 1e-40)."""
    return dim + 40.0 * math.sqrt(dim) + 100.0


def largest_refit_constant(loss, dim, *, eps, row_bound, b_y, r, delta=0.0, **loss_options):
    """The largest public constant of a refit (ridge, noise radius at a far quantile).

    Uses the refit's own calibration, so the bound follows whatever the refit does.
    """
    cal = calibrate(loss, dim, eps=eps, row_bound=row_bound, b_y=b_y, r=r, delta=delta,
                     **loss_options)
    q = _gamma_upper(dim) if cal.noise == "gamma" else 10.0 * math.sqrt(dim) + 40.0
    return max(cal.regularization, cal.regularization * r, q * cal.noise_scale,
               _gamma_upper(dim) * cal.out_scale)
