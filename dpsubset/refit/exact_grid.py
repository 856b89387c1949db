"""Objective perturbation whose guarantee survives floating point: dp_best_subset's pure refit.

The floating-point refit (dpsubset/refit/objective.py) draws its noise in floating point, and
its releases can be told apart through their low-order bits
(tests/audit/test_refit_float_attack_audit.py). This module releases the same kind of
coefficients with a construction proved in docs/methods/refit.md ("An exact variant"):

1. the noise b has the product-Laplace density proportional to exp(-||b||_1 / sigma_1),
   sigma_1 = 2 sqrt(d) zeta_N / eps_obj, and is drawn *as the cell* of an exact
   continuous Laplace (:func:`dpsubset.mechanisms.noise.laplace_cells`): b is the centre
   of a public cell of width eta, within eta sqrt(d) / 2 of a vector whose law is
   exactly the continuous one;
2. the perturbed problem is solved in floating point with the package's KKT certificate
   (certified distance at most the public ``d_max``, or nothing is released); because the
   minimiser is 1 / Delta-Lipschitz in b, the solver's point is within
   E = d_max + eta sqrt(d) / (2 Delta) of the *ideal* release;
3. the point is rounded to a public grid of step g and exact discrete Laplace noise of
   parameter t_out is added in grid units (:func:`dpsubset.mechanisms.noise.discrete_laplace`).

The release is (eps_obj + 2 s)-DP with s = (sqrt(d) E / g + d) / t_out, a function of
public numbers only; the calibration below chooses g and t_out so that
eps_obj + 2 s <= eps, the refit's budget. Every output is a point of the public grid
g Z^d, an exact function of integer draws and a certified solve: no low-order bit of a
floating-point sample is released.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..mechanisms import noise as samplers
from .objective import (DEFAULT_D_MAX_FRACTION, DEFAULT_EPS_OUT_FRAC, DEFAULT_MAX_ITER, RefitResult,
                        calibrate, _check_bounds, _check_design, _check_gram, _check_rng, refit_loss,
                        _solve_certified, _solve_closed_form, _solve_closed_form_gram)
from ..losses import SquaredLoss, is_least_squares

__all__ = ["objective_perturbation_exact", "objective_perturbation_gram_exact", "exact_grid_calibration",
           "EXACT_GRID_MODE", "simulated_noise", "simulated_output_noise"]

EXACT_GRID_MODE = "exact grid"

#: bits of the noise cell below the Laplace scale: eta = 2^(floor(log2 sigma_1) - CELL_BITS)
CELL_BITS = 40
#: smallest output-noise parameter (grid units per Laplace scale)
OUT_T_MIN = 2 ** 20
# relative pad on float products of public constants, so that a rounding can only make
# the mechanism more private than the proof asks
_PAD = 1.0 + 2.0 ** -40


def _pow2_floor(x):
    return math.ldexp(1.0, math.frexp(x)[1] - 1)


def _pow2_ceil(x):
    p = _pow2_floor(x)
    return p if p >= x else 2.0 * p


@dataclass(frozen=True)
class ExactGridCalibration:
    """Public constants of one exact-grid refit (docs/methods/refit.md, "An exact variant").

    ``cell`` is eta and ``cell_t`` the integer t with t eta >= sigma_1 (the Laplace scale of
    each coordinate of b is cell_t * cell); ``reach`` is E; ``step`` is g and ``out_t`` the
    discrete Laplace parameter; ``eps_bound`` = eps_obj + 2 s is the proven guarantee.
    """

    dim: int
    zeta_n: float
    regularization: float
    eps: float
    eps_obj: float
    sigma1: float
    cell: float
    cell_t: int
    d_max: float
    reach: float
    step: float
    out_t: int
    eps_bound: float
    base: object  # the objective module's _Calibration (zeta, lambda, h, ...)


def exact_grid_calibration(loss, dim, *, eps, row_bound, b_y, r, ridge=0.0, huber_h=None,
                           hinge_h=None, eps_out_frac=DEFAULT_EPS_OUT_FRAC, d_max=None,
                           neighbour="replace-one", cell_bits=CELL_BITS, out_t=None,
                           step=None) -> ExactGridCalibration:
    """The public constants of :func:`objective_perturbation_exact`.

    ``cell_bits``, ``out_t`` and ``step`` are exposed so that the exact audits can run the
    mechanism with coarse cells and a small output noise; ``eps_bound`` is then the proven
    guarantee for those settings (it may exceed ``eps``, which the release refuses).
    """
    frac = float(eps_out_frac)
    if not (0.0 < frac < 1.0):
        raise ValueError(f"eps_out_frac must lie in (0, 1), got {eps_out_frac!r}")
    eps = float(eps)
    eps_out = eps * frac
    eps_obj = eps - eps_out
    if is_least_squares(loss):  # the objective module gives Mode A the whole budget: pass eps_obj
        base = calibrate(loss, dim, eps=eps_obj, row_bound=row_bound, b_y=b_y, r=r, ridge=ridge,
                          neighbour=neighbour)
    else:
        base = calibrate(loss, dim, eps=eps, row_bound=row_bound, b_y=b_y, r=r, ridge=ridge,
                          huber_h=huber_h, hinge_h=hinge_h, eps_out_frac=frac, neighbour=neighbour)
    eps_obj = base.eps_obj
    d = int(dim)
    dm = DEFAULT_D_MAX_FRACTION * float(r) if d_max is None else float(d_max)
    if not (math.isfinite(dm) and dm > 0):
        raise ValueError(f"d_max must be a finite number > 0, got {d_max!r}")
    Delta = base.regularization
    sigma1 = 2.0 * math.sqrt(d) * base.zeta_n / eps_obj * _PAD
    cell = math.ldexp(_pow2_floor(sigma1), -int(cell_bits))
    cell_t = math.ceil(sigma1 / cell)
    reach = (dm + cell * math.sqrt(d) / (2.0 * Delta)) * _PAD
    if out_t is None:
        # t_out >= 8 d / eps_out keeps the second part of s below eps_out / 8; a larger t_out
        # only makes the grid finer (the noise g t_out is fixed), up to 2^20, but never so fine
        # that r / g nears 2^52 (very large eps): r / g ~ t_out eps_out r / (4 sqrt(d) E)
        fine = math.floor(2.0 ** 46 * 4.0 * math.sqrt(d) * reach / (eps_out * float(r)))
        out_t = max(math.ceil(8.0 * d / eps_out), min(OUT_T_MIN, fine))
    out_t = int(out_t)
    if step is None:  # g t_out >= 4 sqrt(d) E / eps_out: the first part of s is <= eps_out / 4
        step = _pow2_ceil(4.0 * math.sqrt(d) * reach / eps_out * _PAD / out_t)
    step = float(step)
    s = (math.sqrt(d) * reach / step + d) / out_t * _PAD
    return ExactGridCalibration(dim=d, zeta_n=base.zeta_n, regularization=Delta, eps=eps,
                                eps_obj=eps_obj, sigma1=sigma1, cell=cell, cell_t=int(cell_t),
                                d_max=dm, reach=reach, step=step, out_t=out_t,
                                eps_bound=eps_obj + 2.0 * s, base=base)


def grid_headroom(loss, dim, *, eps, **settings) -> float:
    """The smallest refit eps whose public grid fits in floating point's integers, or 0.

    The release needs ``r / g + 60 t_out < 2^52`` (integer grid coordinates exact in a
    double), and ``t_out >= 8 d / eps_out`` grows as 1/eps; so below some eps the exact-grid
    refit cannot be represented. Returns a workable eps (with a factor 2 to spare) when the
    given one is too small, else 0.
    """
    cal = exact_grid_calibration(loss, dim, eps=eps, **settings)
    used = settings["r"] / cal.step + 60.0 * cal.out_t
    return 0.0 if used < 2.0 ** 51 else 2.0 * eps * used / 2.0 ** 51


def sample_cell_noise(rng, cal: ExactGridCalibration) -> np.ndarray:
    """The noise b: centres of the cells of exact Laplace(cell_t * cell) draws (exact floats)."""
    k = samplers.laplace_cells(cal.cell_t, rng, cal.dim)
    return np.asarray(k, dtype=float) * (cal.cell / 2.0)


def grid_point(X, y, b, cal: ExactGridCalibration, lossobj, r, max_iter=DEFAULT_MAX_ITER):
    """The integer grid point round(theta_hat / g) of the certified solve for noise b.

    Raises RuntimeError (nothing released) if the certificate exceeds the public d_max.
    The audits call this with every cell centre to compute the release's exact law.
    """
    Delta = cal.regularization
    if lossobj.loss.least_squares:
        theta, dist = _solve_closed_form(X, y, Delta, b, r)
    else:
        theta, dist = _solve_certified(lossobj, X, y, Delta, b, r, cal.d_max, max_iter)
    return _on_grid(theta, dist, cal)


def objective_perturbation_exact(X, y, *, loss, eps, row_bound, b_y=None, r, rng, ridge=0.0,
                                 huber_h=None, hinge_h=None, eps_out_frac=DEFAULT_EPS_OUT_FRAC,
                                 d_max=None, max_iter=DEFAULT_MAX_ITER,
                                 neighbour="replace-one") -> RefitResult:
    """Private coefficients by objective perturbation, exactly eps-DP in floating point.

    Parameters are those of :func:`dpsubset.refit.objective.objective_perturbation`
    (pure eps-DP only: no ``delta``). ``eps_out_frac`` of ``eps`` pays for the public
    output grid and its discrete Laplace noise (for every loss, the squared one included),
    and ``d_max`` (default ``1e-8 r``) is the certified solver accuracy.

    Returns
    -------
    RefitResult
        ``coef`` on the public grid ``g Z^d``; ``mode`` is :data:`EXACT_GRID_MODE`.

    Notes
    -----
    Guarantee: ``cal.eps_bound <= eps`` (docs/methods/refit.md, "An exact variant"), for the
    program as run, given the KKT certificate; the ideal mechanism it is compared with is
    objective perturbation with product-Laplace noise (Kifer, Smith and Thakurta 2012).
    """
    X, y = _check_design(X, y)
    rng = _check_rng(rng)
    dim = X.shape[1]
    cal = exact_grid_calibration(loss, dim, eps=eps, row_bound=row_bound, b_y=b_y, r=r, ridge=ridge,
                                 huber_h=huber_h, hinge_h=hinge_h, eps_out_frac=eps_out_frac,
                                 d_max=d_max, neighbour=neighbour)
    lossobj = refit_loss(loss, b_y=b_y, huber_h=huber_h, hinge_h=hinge_h)
    _check_bounds(X, y, lossobj, float(row_bound), b_y)
    r = float(r)
    return _release(cal, loss, r, rng, lambda b: grid_point(X, y, b, cal, lossobj, r, max_iter))


def objective_perturbation_gram_exact(G, Aty, n, *, eps, row_bound, b_y, r, rng, ridge=0.0,
                                      entry_error=None, eps_out_frac=DEFAULT_EPS_OUT_FRAC, d_max=None,
                                      neighbour="replace-one") -> RefitResult:
    """:func:`objective_perturbation_exact` for least squares from ``G = A'A`` and ``A'y``.

    The tall-data route (:mod:`dpsubset.design.suffstats`): the same calibration, noise
    cells, certificate (with the statistics' entrywise rounding errors ``entry_error``, as
    in :func:`dpsubset.refit.objective.objective_perturbation_gram`), grid and output noise,
    drawn from ``rng`` in the same order, so on the same data the two routes agree.
    """
    rng = _check_rng(rng)
    G, Aty = _check_gram(G, Aty, n)
    dim = len(Aty)
    cal = exact_grid_calibration(SquaredLoss.name, dim, eps=eps, row_bound=row_bound, b_y=b_y, r=r, ridge=ridge,
                                 eps_out_frac=eps_out_frac, d_max=d_max, neighbour=neighbour)
    r = float(r)
    err_G, err_y = (np.zeros((dim, dim)), np.zeros(dim)) if entry_error is None else entry_error

    def solve(b):
        theta, dist = _solve_closed_form_gram(G, Aty, cal.regularization, b, r, err_G, err_y)
        return _on_grid(theta, dist, cal)

    return _release(cal, SquaredLoss.name, r, rng, solve)


def _on_grid(theta, dist, cal):
    """round(theta / g), or nothing released when the certificate exceeds d_max."""
    if not dist <= cal.d_max:
        raise RuntimeError(
            "objective perturbation (exact grid): the solve could not be certified within "
            f"d_max = {cal.d_max:.3g}; nothing is released and the noise is not redrawn")
    # g is a power of two: theta / g is exact, and so is its rounding
    return np.round(np.asarray(theta, dtype=float) / cal.step), float(dist)


def _release(cal, loss, r, rng, solve):
    """Steps 1-3 of the module docstring: cell noise, certified solve (``solve(b)`` returns
    the grid point and the certified distance), discrete Laplace noise on the grid."""
    dim = cal.dim
    if not cal.eps_bound <= cal.eps:
        raise ValueError(f"exact-grid refit: eps_out is too small for d = {dim} columns "
                         f"(raise eps_out_frac)")
    if r / cal.step + 60.0 * cal.out_t >= 2.0 ** 52:
        raise ValueError("exact-grid refit: the output grid is too fine for the radius r "
                         "(raise d_max or eps_out_frac)")
    if dim == 0:
        return RefitResult(coef=np.zeros(0), loss=loss, eps=0.0, delta=0.0, mode=EXACT_GRID_MODE,
                           certified_distance=0.0, regularization=cal.regularization,
                           zeta=cal.base.zeta, lam_hess=cal.base.lam_hess)
    b = sample_cell_noise(rng, cal)  # drawn once, before the data are touched
    k, _ = solve(b)
    w = samplers.discrete_laplace(cal.out_t, rng, dim)
    coef = (k + np.asarray(w, dtype=float)) * cal.step  # integers below 2^52 times a power of two
    # the solver's own certificate depends on the data: report only its public bound d_max
    return RefitResult(coef=coef, loss=loss, eps=cal.eps, delta=0.0, mode=EXACT_GRID_MODE,
                       certified_distance=cal.d_max, regularization=cal.regularization,
                       zeta=cal.base.zeta, lam_hess=cal.base.lam_hess)


def simulated_noise(rng, cal: ExactGridCalibration, size):
    """Copies of the noise b for the bootstrap (never released), shape (size, d): i.i.d.
    Laplace(sigma_1) coordinates, the law the cells discretise (the package's simulation
    Laplace, :func:`dpsubset.mechanisms.noise.laplace_noise`, on a grid 2^-44 of its scale)."""
    return samplers.laplace_noise(cal.cell_t * cal.cell, rng, (size, cal.dim))


def simulated_output_noise(rng, cal: ExactGridCalibration, size):
    """Copies of the grid noise g W for the bootstrap, shape (size, d): a Laplace of the
    discrete one's scale (W ~ discrete Laplace(out_t); the difference, and the rounding to
    the grid, are below g, which is at most about 1e-8 r)."""
    return samplers.laplace_noise(cal.out_t * cal.step, rng, (size, cal.dim))
