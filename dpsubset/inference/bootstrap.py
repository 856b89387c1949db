"""The parametric bootstrap of the refit (Ferrando, Wang and Sheldon 2022).

Data of the released size n are simulated from the privately estimated model
(:class:`~dpsubset.inference.moments.SimulationModel`), clipped to the public box as the
design clips real rows, and the refit mechanism itself (objective perturbation, with its
ball, its ridge and freshly drawn noise of the public distribution) is run on them. The
spread of the refits around the simulated truth is the error of the released
coefficients: sampling noise, clipping, the ball's shrinkage and the privacy noise
together. Everything here is post-processing of released quantities and public
randomness: no row of the data is read.
"""
from __future__ import annotations

import numpy as np

from ..runtime.limits import SearchTimeout
from ..mechanisms import noise
from .moments import least_squares_from_moments, symmetric_laplace
from ..losses import is_least_squares

__all__ = ["simulate_rows", "simulate_batch", "simulate_statistics", "bootstrap_refits", "bootstrap_moment_fits",
           "DEFAULT_DRAWS", "STATISTICS_ROWS", "InferenceTimeout", "check_deadline"]


class InferenceTimeout(SearchTimeout):
    """The call's ``time_limit`` ran out in the inference stage. A :class:`SearchTimeout`,
    handled the same way: nothing is released, and the message names the stage and the
    public settings only (dpsubset/runtime/limits.py)."""


def check_deadline(deadline):
    """Raise :class:`InferenceTimeout` when the call's deadline (a
    :class:`~dpsubset.runtime.limits.Deadline`, or None for none) has passed."""
    if deadline is not None and deadline.expired:
        raise InferenceTimeout("the time limit ran out in the inference stage", problem="inference")

#: Bootstrap refits per release. The 2.5 % and 97.5 % quantiles of 500 draws have a
#: Monte Carlo error of about 1 % of the interval's width (docs/methods/inference.md).
DEFAULT_DRAWS = 500


def simulate_rows(model, n, col_bounds, b_y, rng):
    """n rows from the simulation model, clipped to the public box.

    Parameters
    ----------
    model : SimulationModel
    n : int
    col_bounds : ndarray, shape (d,)
        Public bounds of the model columns (mapped units; the design's box is
        symmetric there).
    b_y : float
        Public response bound.
    rng : numpy.random.Generator

    Returns
    -------
    A : ndarray, shape (n, d)
    y : ndarray, shape (n,)
    """
    k = len(model.mean)
    Z = noise.multivariate_normal(rng, model.mean, model.cov, n, "eigh") if k else np.empty((n, 0))
    A = np.hstack([np.ones((n, 1)), Z]) if model.intercept else Z
    # the design clips every column to its public box before the refit: so does the simulation
    A = np.clip(A, -col_bounds, col_bounds)
    y = model.draw_response(A, rng)
    return A, np.clip(y, -b_y, b_y)


#: Simulated values (rows x columns x draws) held in memory at once: the draws are
#: simulated and refitted in chunks of about this size (16 MB of float64).
CHUNK_VALUES = 2_000_000


def simulate_batch(model, n, col_bounds, b_y, rng, m):
    """m simulated data sets of n rows each, clipped to the public box.

    The same model as :func:`simulate_rows` (Gaussian columns, the response of
    ``model``, each replicate with its own noise level), drawn for m data sets at once.

    Returns
    -------
    A : ndarray, shape (m, n, d)
    y : ndarray, shape (m, n)
    """
    k = len(model.mean)
    d = len(model.coef)
    A = np.empty((m, n, d))
    if model.intercept:
        A[..., 0] = 1.0
    if k:
        # the covariance's square root by eigh (it is PSD by construction)
        w, V = np.linalg.eigh(np.atleast_2d(model.cov))
        root = V * np.sqrt(np.maximum(w, 0.0))
        A[..., d - k:] = model.mean + noise.normal(rng, (m, n, k)) @ root.T
    # the design clips every column to its public box before the refit: so does the simulation
    np.clip(A, -col_bounds, col_bounds, out=A)
    eta = A @ model.coef
    if model.response == "binary":
        y = np.where(noise.uniform(rng, eta.shape) < 0.5 * (1.0 + np.tanh(0.5 * eta)), 1.0, -1.0)
    else:
        sigma = model.draw_sigmas(rng, m)
        y = eta + sigma[:, None] * noise.normal(rng, eta.shape)
    return A, np.clip(y, -b_y, b_y)


def bootstrap_refits(model, n, col_bounds, b_y, refit, *, draws=DEFAULT_DRAWS, rng, deadline=None,
                     least_squares=False):
    """The refit mechanism run on ``draws`` simulated data sets.

    Parameters
    ----------
    model : SimulationModel
    n : int
    col_bounds : ndarray, shape (d,)
    b_y : float
    refit : callable or BootstrapRefit
        ``refit(A, y, rng) -> coef``: the release's own refit with its public settings.
        A :class:`~dpsubset.inference.fast_refit.BootstrapRefit` (it has ``batch``) is run
        on chunks of simulated data sets at once; any other callable one draw at a time.
    draws : int
    rng : numpy.random.Generator
    deadline : Deadline, optional
        The call's deadline, checked before each chunk (:func:`check_deadline`).

    least_squares : bool
        Also return the mean of exact least-squares fits on the same simulated data sets:
        what least squares estimates in the simulated world (its clipped rows), from which
        the errors of a least-squares refit are measured (docs/methods/inference.md, "The
        simulated world's target"; Monte Carlo error about 1/sqrt(draws) of one fit's
        sampling error).

    Returns
    -------
    ndarray, shape (draws, d)
        The refits, in mapped units.
    ndarray, shape (d,)
        With ``least_squares=True`` only: the least-squares target.
    """
    draws = int(draws)
    d = len(model.coef)
    out, ls = np.empty((draws, d)), np.empty((draws, d))
    if hasattr(refit, "batch_statistics") and _by_statistics(model, n):
        # one pilot for every replicate: the draws are d x d matrices, whatever n
        check_deadline(deadline)
        H, g, start = simulate_statistics(model, n, col_bounds, b_y, rng, model.draw_sigmas(rng, draws),
                                          refit.row_derivatives, quadratic=is_least_squares(refit.loss))
        out = refit.batch_statistics(H, g, start, rng)
        if least_squares:  # H = 2 A'A and g = -2 A'(y - A t) at the truth t: a Newton step is exact
            ls = start - _solve_each(H, g)
    elif hasattr(refit, "batch"):
        chunk = max(1, CHUNK_VALUES // max(1, n * d))
        for lo in range(0, draws, chunk):
            check_deadline(deadline)
            m = min(chunk, draws - lo)
            A, y = simulate_batch(model, n, col_bounds, b_y, rng, m)
            out[lo:lo + m] = refit.batch(A, y, rng)
            if least_squares:
                ls[lo:lo + m] = _solve_each(A.transpose(0, 2, 1) @ A, A.transpose(0, 2, 1) @ y[..., None])
    else:
        for b in range(draws):
            check_deadline(deadline)
            A, y = simulate_rows(model, n, col_bounds, b_y, rng)
            out[b] = refit(A, y, rng)
            if least_squares:
                ls[b] = _solve_each((A.T @ A)[None], (A.T @ y)[None])[0]
    return (out, ls.mean(axis=0)) if least_squares else out


def _solve_each(G, b):
    """Least-squares solutions of a stack of normal equations G x = b (minimum norm where a
    simulated column is constant)."""
    b = np.asarray(b, dtype=float).reshape(G.shape[0], G.shape[1])
    return np.stack([np.linalg.lstsq(Gi, bi, rcond=None)[0] for Gi, bi in zip(G, b)])


def bootstrap_moment_fits(model, n, col_bounds, b_y, noise_scale, *, draws=DEFAULT_DRAWS, rng, deadline=None):
    """Least squares from noisy second moments, on ``draws`` simulated data sets.

    Each simulated data set's ``Z'Z`` gets fresh Laplace noise of the released moments'
    public scale on its upper triangle, as the release's own moments did, and
    :func:`~dpsubset.inference.moments.least_squares_from_moments` is solved from it: the
    parametric bootstrap of the sufficient-statistics estimate (Ferrando, Wang and Sheldon
    2022). Post-processing, as :func:`bootstrap_refits`.

    Returns
    -------
    ndarray, shape (draws, d)
        Mapped units.
    """
    draws = int(draws)
    d = len(model.coef)
    out = np.empty((draws, d))
    statistics = _by_statistics(model, n)
    chunk = draws if statistics else max(1, CHUNK_VALUES // max(1, n * d))
    for lo in range(0, draws, chunk):
        check_deadline(deadline)
        m = min(chunk, draws - lo)
        if statistics:
            # least squares reads A'A and A'y only: A'y = A'A coef + A'(y - A coef); y'y is unused
            H, g, _ = simulate_statistics(model, n, col_bounds, b_y, rng, model.draw_sigmas(rng, m),
                                          _residual_moments)
            ZtZ = np.zeros((m, d + 1, d + 1))
            ZtZ[:, :d, :d] = H
            ZtZ[:, :d, d] = ZtZ[:, d, :d] = (H @ model.coef) + g
        else:
            A, y = simulate_batch(model, n, col_bounds, b_y, rng, m)
            Z = np.concatenate([A, y[..., None]], axis=2)
            ZtZ = Z.transpose(0, 2, 1) @ Z
        ZtZ = ZtZ + symmetric_laplace(rng, noise_scale, d + 1, (m,))
        out[lo:lo + m] = least_squares_from_moments(ZtZ, n, intercept=model.intercept, x_bounds=col_bounds)
    return out


# --------------------------------------------------------------------------------------
# The sufficient statistics of a simulated data set, drawn without its rows
# --------------------------------------------------------------------------------------

#: Above this many rows the bootstrap draws each simulated data set's sufficient statistics
#: (:func:`simulate_statistics`) instead of simulating its rows, so its cost does not grow
#: with n; at and below it the rows are simulated (:func:`simulate_batch`), where the
#: statistics' normal approximation is least accurate and the rows are cheap anyway.
STATISTICS_ROWS = 2000
#: Pilot rows from which the covariance of the per-row statistics is estimated (per group).
PILOT_ROWS = 10_000
#: Rows from which the gradient's mean is estimated: 20 n times the share of the pilot's
#: rows whose response the clip reaches, at least CLIPPING_ROWS and at most
#: MAX_CLIPPING_ROWS (a d-vector per row). Only those rows leave a sampling error
#: (:func:`_antithetic_gradient`), which is then at most about sqrt(1/20) of a replicate's
#: spread below the cap.
CLIPPING_ROWS, MAX_CLIPPING_ROWS = 100_000, 2_000_000
#: ...and at most this many simulated values held at once (128 MB of float64).
MAX_CLIPPING_VALUES = 16_000_000
#: Groups of replicates that share a pilot: the replicates' noise levels are sorted into
#: this many groups of equal size, each simulated at its median level.
SIGMA_GROUPS = 5


def _by_statistics(model, n):
    """Whether the bootstrap draws the statistics: a Gaussian response above STATISTICS_ROWS
    rows, at least 20 rows per entry of the statistics (their normal approximation), and
    where the pilots' covariances (SIGMA_GROUPS pilots, D^2 per row for D entries) cost
    less than simulating the rows of DEFAULT_DRAWS data sets (d^2 per row): with many
    columns and few rows the rows are cheaper."""
    d = len(model.coef)
    D = d * (d + 1) // 2 + d
    cheaper = SIGMA_GROUPS * min(n, PILOT_ROWS) * D * D <= DEFAULT_DRAWS * n * d * d
    return model.response == "gaussian" and n > STATISTICS_ROWS and n >= 20 * D and cheaper


def _residual_moments(eta, y):
    """Per-row weights of ``A'(y - A coef)`` and ``A'A``: what least squares from moments reads."""
    return y - eta, np.ones_like(eta)


def _rows(model, n, col_bounds, rng):
    """n clipped design rows of the model and n standard normal errors (one data set)."""
    A, _ = simulate_batch(model, n, col_bounds, np.inf, rng, 1)
    return A[0], noise.normal(rng, n)


def simulate_statistics(model, n, col_bounds, b_y, rng, sigmas, row_derivatives, quadratic=True):
    """The sums ``H = sum_i w2_i a_i a_i'`` and ``g = sum_i w1_i a_i`` of simulated data sets
    of n rows, drawn from their normal approximation instead of the rows.

    ``(w1_i, w2_i) = row_derivatives(a_i' t, y_i)`` are a row's first and second derivatives
    of the refit's loss at an expansion point t (for least squares ``-2 (y_i - a_i' t)`` and
    2), so ``H`` and ``g`` are the Hessian and gradient of the loss's sum at t: all that a
    least-squares refit reads, and what a Newton step from t reads for the other losses.
    Each is a sum of n independent rows, so it is drawn as n times the per-row mean plus
    sqrt(n) times a normal vector with the per-row covariance (the central limit theorem;
    docs/methods/inference.md, "Inference without simulating rows"), estimated on
    PILOT_ROWS simulated rows. The mean of ``g`` is where precision matters (an error in it
    shifts every replicate, by sqrt(n / rows) of their spread), so it is taken over 20 n
    rows times the share the clip reaches (CLIPPING_ROWS to MAX_CLIPPING_ROWS), each with
    its error z and with -z: for a loss
    whose derivative is odd in the residual the two cancel wherever the response's clip
    leaves them alone, and only the clip's share is left to sampling. The mean of ``H``
    changes the spread only at relative order 1/sqrt(pilot) and is the pilot's. For least
    squares t is the simulation's truth (the loss is quadratic: any t gives the same
    refit); otherwise (``quadratic=False``) t is the minimiser of the pilot's mean loss,
    found by Newton's method, so the quadratic expansion is taken where the refits
    concentrate even when the clip moves them off the truth. The replicates' noise levels
    ``sigmas`` are sorted into SIGMA_GROUPS groups, each with its own pilot at its median
    level; a replicate's deviation of ``g`` is scaled by its level over the group's (exact
    for least squares where the clip leaves the rows alone).

    Parameters
    ----------
    model : SimulationModel
        A Gaussian response.
    n : int
    col_bounds : ndarray, shape (d,)
    b_y : float
    rng : numpy.random.Generator
    sigmas : ndarray, shape (m,)
        The replicates' error standard deviations.
    row_derivatives : callable
        ``(eta, y) -> (w1, w2)``, arrays of the rows' shape.
    quadratic : bool

    Returns
    -------
    H : ndarray, shape (m, d, d)
    g : ndarray, shape (m, d)
    start : ndarray, shape (m, d)
        Each replicate's expansion point t.
    """
    sigmas = np.asarray(sigmas, dtype=float)
    m, d = len(sigmas), len(model.coef)
    iu = np.triu_indices(d)
    k = len(iu[0])
    H, g, start = np.empty((m, d, d)), np.empty((m, d)), np.empty((m, d))
    order = np.argsort(sigmas, kind="stable")
    A_pilot, z_pilot = _rows(model, min(n, PILOT_ROWS), col_bounds, rng)
    eta_pilot = A_pilot @ model.coef
    # the clip's share of the pilot's rows at the largest level bounds the sampling variance
    # of the gradient's mean per row: 20 n times that share of rows keep its error small
    share = np.mean(np.abs(eta_pilot + sigmas.max() * z_pilot) > b_y) + 1.0 / len(z_pilot)
    rows = min(max(CLIPPING_ROWS, 20 * n * share), MAX_CLIPPING_ROWS, MAX_CLIPPING_VALUES // (d + 1))
    A_mean, z_mean = _rows(model, int(rows), col_bounds, rng)
    eta_mean = A_mean @ model.coef
    for group in np.array_split(order, min(SIGMA_GROUPS, m)):
        level = float(np.median(sigmas[group]))
        y_pilot = np.clip(eta_pilot + level * z_pilot, -b_y, b_y)
        t = model.coef if quadratic else _pilot_minimiser(A_pilot, y_pilot, model.coef, row_derivatives)
        w1, w2 = row_derivatives(A_pilot @ t, y_pilot)
        # the per-row entries of H's upper triangle and of g (no rows x d x d temporary)
        W = np.hstack([w2[:, None] * A_pilot[:, iu[0]] * A_pilot[:, iu[1]], w1[:, None] * A_pilot])
        mean = W.mean(axis=0)
        mean[k:] = _antithetic_gradient(A_mean, eta_mean, A_mean @ t, z_mean, level, b_y, row_derivatives)
        w, V = np.linalg.eigh(np.atleast_2d(np.cov(W, rowvar=False)))
        dev = noise.normal(rng, (len(group), W.shape[1])) @ (V * np.sqrt(np.maximum(w, 0.0))).T
        dev[:, k:] *= (sigmas[group] / max(level, 1e-300))[:, None]
        draw = n * mean + np.sqrt(n) * dev
        Hg = np.zeros((len(group), d, d))
        Hg[:, iu[0], iu[1]] = draw[:, :k]
        H[group] = Hg + np.triu(Hg, 1).transpose(0, 2, 1)
        g[group], start[group] = draw[:, k:], t
    return H, g, start


def _pilot_minimiser(A, y, t, row_derivatives, steps=8):
    """Newton's method on the pilot rows' loss from t (a few steps: the loss is smooth and
    strictly convex where the rows are many; the pilot's error is second order for the
    expansion)."""
    t = np.asarray(t, dtype=float).copy()
    for _ in range(steps):
        w1, w2 = row_derivatives(A @ t, y)
        step = np.linalg.solve((A * w2[:, None]).T @ A, A.T @ w1)
        t -= step
        if np.linalg.norm(step) < 1e-10 * (1.0 + np.linalg.norm(t)):
            break
    return t


def _antithetic_gradient(A, eta_truth, eta_t, z, level, b_y, row_derivatives):
    """Mean over rows of ``a w1(a't, y)``, y the clipped ``a'coef +- level z``, each row with
    z and -z: where the clip leaves both alone and t is the truth, the two cancel exactly."""
    total = np.zeros(A.shape[1])
    for sign in (1.0, -1.0):
        total += row_derivatives(eta_t, np.clip(eta_truth + sign * level * z, -b_y, b_y))[0] @ A
    return total / (2.0 * len(z))
