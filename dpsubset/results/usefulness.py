"""Can this release beat chance? A check from public quantities only, before any selection work.

Differential privacy always holds; usefulness does not. With loose bounds, a large
radius ``r``, few rows or a small budget, the noise of the release can swamp any
signal the data could possibly hold, and the user gets a random support and
coefficients of the size of the noise (the issue's example: mtcars, scalar bounds
500 and 40, ``r = 50``: Delta of about 3e7 and predicted mpg in the thousands).

This module looks only at what is public before the data are touched: n, p, s, the
budget split, the public bounds (through the sensitivity Delta and the row bound),
``r`` and the loss. It never looks at the data, the scores or the noise, so the
warnings are themselves public and cost no budget. Two checks:

Selection (``top_r`` and ``mistakes``)
    Both draw a support with probability proportional to ``exp(-eps c(S) / (2 Delta))``
    (top-R merges the tail into one class, which only lowers the best support's share).
    Scores lie between the smallest value one row's loss can take on the ball and
    the loss at beta = 0 (the ball contains 0), so no two supports differ by more
    than ``g = max_y l(0; y) - row_min``: ``b_y^2 / 2`` for least squares. Even on
    the most favourable data (one support perfect, every other as bad as possible)
    the best support is released with probability at most

        P = e^t / (e^t + C(p, s) - 1),    t = eps_select g / (2 Delta).

    When P < 1/2 the released support is more likely wrong than right on *any* data;
    we warn and say what would help (the factor by which eps_select, or n, would
    have to grow for P = 1/2 on such data).

Refit
    Objective perturbation (dpsubset/refit/objective.py) adds ``b'theta`` with public scale;
    the data's curvature is at most ``n lambda`` (``lambda`` the per-row Hessian
    bound), so the coefficients move by at least about ``E||b|| / (n lambda + Delta_reg)``
    in the direction of the noise (capped by the radius ``r``), and a row of norm
    ``R`` sees about ``R / sqrt(d)`` of that. When this floor on the typical
    prediction noise exceeds the response's bound (least squares and Huber), we warn.

Both are estimates of the most favourable case, so a warning means the settings
cannot work, while no warning does not mean that they will.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["LowUtilityWarning", "BallBindsWarning", "BALL_BINDS_NOTE", "BALL_TRUSTED_NOTE", "selection_best_case", "refit_noise_floor", "release_warnings"]


class LowUtilityWarning(UserWarning):
    """The settings make the release noise on any data (privacy is not affected)."""


class BallBindsWarning(UserWarning):
    """The released coefficients lie on the sphere of the refit's ball: the truth may lie
    beyond it, and the intervals reach out on that side (docs/guide/inference.md, "When
    the ball binds"). Raised from the release and the public radius only (privacy is not
    affected)."""


#: What a release on the refit's sphere means for its intervals: the summary's note and
#: the start of the BallBindsWarning (R's summary prints the same words).
BALL_BINDS_NOTE = ("The released coefficients lie on the sphere of the refit's ball: the ball binds, so "
                   "they are shrunk as a whole (where released columns are correlated, one of them may be "
                   "pulled past 0 to the other sign) and the true coefficients may lie beyond the sphere. The "
                   "intervals allow for that: the end on the side where the truth may lie is that of "
                   "least squares on the private second moments (open, inf, for logistic), so they are "
                   "wider than the refit's own noise would make them")

#: The same for a release whose user stated that the truth lies inside the ball
#: (``Inference(truth_in_ball=True)``); R's summary prints the same words.
BALL_TRUSTED_NOTE = ("The released coefficients lie on the sphere of the refit's ball: the ball binds, so "
                     "they are shrunk as a whole (where released columns are correlated, one of them may be "
                     "pulled past 0 to the other sign); the intervals assume, as stated with "
                     "Inference(truth_in_ball=True), "
                     "that the true coefficients lie inside the ball")


def _fmt(x):
    return f"{x:.3g}"


def selection_best_case(eps_select, Delta, gap, p, s):
    """Largest probability of releasing the best support, on the most favourable data.

    Parameters
    ----------
    eps_select : float
        Budget of the draw.
    Delta : float
        Sensitivity of the scores.
    gap : float
        Largest possible difference between two scores.
    p, s : int

    Returns
    -------
    P : float
        ``e^t / (e^t + C(p, s) - 1)`` with ``t = eps_select gap / (2 Delta)``.
    t : float
    needed : float
        The ``t`` at which ``P = 1/2``: ``ln(C(p, s) - 1)``.
    """
    N = math.comb(int(p), int(s))
    t = float(eps_select) * float(gap) / (2.0 * float(Delta))
    if N <= 1:
        return 1.0, t, 0.0
    log_rest = math.log(N - 1)
    P = 1.0 / (1.0 + math.exp(min(log_rest - t, 700.0)))
    return P, t, log_rest


def refit_noise_floor(loss, dim, *, eps_refit, row_bound, b_y, r, n, delta=0.0, loss_options=None):
    """A floor on the typical prediction noise of the refit, in the mapped units of the response.

    Parameters
    ----------
    loss : str
    dim : int
        Number of refitted coefficients (always-in columns + s).
    eps_refit, row_bound, b_y, r : float
        Public refit settings (as passed to objective perturbation).
    n : int
    delta : float
        The refit's delta (0: pure, the exact-grid refit's product-Laplace noise; > 0: the
        Gaussian variant).
    loss_options : dict, optional
        ``huber_h`` / ``hinge_h``.

    Returns
    -------
    float
        ``min(r, E||b|| / (n lambda + Delta_reg)) R / sqrt(d)``.
    """
    from ..refit.exact_grid import exact_grid_calibration
    from ..refit.objective import calibrate

    if not delta:  # the exact-grid refit: i.i.d. Laplace(sigma_1) coordinates, E||b|| ~ sigma_1 sqrt(2d)
        cal = exact_grid_calibration(loss, dim, eps=eps_refit, row_bound=row_bound, b_y=b_y, r=r,
                                     **(loss_options or {}))
        mean_norm, lam_hess = cal.sigma1 * math.sqrt(2.0 * dim), cal.base.lam_hess
    else:
        cal = calibrate(loss, dim, eps=eps_refit, row_bound=row_bound, b_y=b_y, r=r, delta=delta,
                         **(loss_options or {}))
        mean_norm, lam_hess = cal.noise_scale * math.sqrt(dim), cal.lam_hess
    shift = min(float(r), mean_norm / (n * lam_hess + cal.regularization))
    return shift * float(row_bound) / math.sqrt(dim)


def release_warnings(design, *, s, loss, loss_options, r, method, eps_select, eps_refit, refit,
                     refit_delta=None, r_refit=None, n_select=None, n_refit=None):
    """Messages for settings under which a release cannot beat chance (public inputs only).

    Parameters
    ----------
    design : dpsubset.design.build.Design
        Only its public parts are read: n, the bounds of the mapped columns and
        of the response, and the response's public map.
    s, loss, loss_options, r, method, eps_select, eps_refit, refit, refit_delta
        The call's settings.
    r_refit : float, optional
        The refit's radius (None: ``r``).
    n_select, n_refit : int, optional
        Rows each stage sees (``split=True``: the parts' public sizes; None: n).

    Returns
    -------
    list of str
        Empty when nothing is wrong, or when the bounds are not public (then the
        sensitivity is a statistic of the data and nothing is said about it).
    """
    if not design.spec.bounds_public:
        return []
    from ..privacy.sensitivity import convex_sensitivity, largest_row_norm
    from ..losses import REGRESSION_LOSSES, make_loss

    p = len(design.spec.candidate_names)
    n = int(design.n if n_select is None else n_select)
    r_refit = r if r_refit is None else r_refit
    R = largest_row_norm(design.x_bounds, s, design.forced_bounds)
    a = r * R
    b_y = float(design.b_y)
    lossobj = make_loss(loss, b_y=b_y, **(loss_options or {}))
    scalar_x = bool(np.any(np.asarray(design.x_bounds) > 1.0 + 1e-12))
    helps_bounds = ("interval bounds (lo, hi) for the columns, which map each column to [-1, 1], instead of "
                    "a scalar bound above 1" if scalar_x else "tighter public bounds")
    out = []
    if method in ("top_r", "mistakes"):
        Delta = convex_sensitivity(lossobj, design.x_bounds, b_y, r, s, design.forced_bounds, n)
        y_ends = np.array([-b_y, b_y]) if loss in REGRESSION_LOSSES else np.array([-1.0, 1.0])
        gap = float(np.max(lossobj.value(np.zeros(2), y_ends))) - lossobj.row_min(b_y, a)
        P, t, needed = selection_best_case(eps_select, Delta, gap, p, s)
        if P < 0.5:
            N = math.comb(p, s)
            factor = needed / t if t > 0 else float("inf")
            out.append(
                f"these settings make the selection no better than chance: with eps_select = {_fmt(eps_select)}, "
                f"n = {n}, s = {s} and the score sensitivity Delta = {_fmt(Delta)} (from the public bounds and "
                f"r = {_fmt(r)}), even data on which one support fits perfectly would give that support with "
                f"probability at most {P:.2%} (chance: {1 / N:.2%} among C({p}, {s}) = {N} supports). "
                f"What would help: about {_fmt(factor)} times the selection budget (or about that many times "
                f"the rows), a smaller r, {helps_bounds}, or a smaller s. To plan the rows or eps a release "
                f"needs, from an assumed effect size: dps.plan (docs/guide/sample-size.md)")
    if refit and loss in REGRESSION_LOSSES:
        dim = len(design.spec.forced_names) + s
        r, n = r_refit, int(design.n if n_refit is None else n_refit)
        noise = refit_noise_floor(loss, dim, eps_refit=eps_refit, row_bound=R, b_y=b_y, r=r, n=n,
                                  delta=refit_delta or 0.0, loss_options=loss_options)
        if noise > b_y:
            _, half = design.spec.column_maps.get(design.spec.response_name, (0.0, 1.0))
            out.append(
                f"these settings make the refit noise: with eps_refit = {_fmt(eps_refit)}, n = {n}, "
                f"r = {_fmt(r)} and the row bound {_fmt(R)} (from the public bounds), objective perturbation "
                f"moves a typical prediction by at least about {_fmt(noise * half)} (in the units of "
                f"{design.spec.response_name!r}), more than the response's public half-range "
                f"{_fmt(b_y * half)}. What would "
                f"help: a larger eps_refit, more rows, a smaller r (about {_fmt(b_y / R)} lets no prediction "
                f"leave the response's bound), {helps_bounds}, or refit=False to release the support only")
    return out
