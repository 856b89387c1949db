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

from ..search.limits import SearchTimeout
from ..mechanisms import noise
from .moments import least_squares_from_moments, symmetric_laplace

__all__ = ["simulate_rows", "simulate_batch", "bootstrap_refits", "bootstrap_moment_fits", "DEFAULT_DRAWS",
           "InferenceTimeout", "check_deadline"]


class InferenceTimeout(SearchTimeout):
    """The call's ``time_limit`` ran out in the inference stage. A :class:`SearchTimeout`,
    handled the same way: nothing is released, and the message names the stage and the
    public settings only (dpsubset/search/limits.py)."""


def check_deadline(deadline):
    """Raise :class:`InferenceTimeout` when the call's deadline (a
    :class:`~dpsubset.search.limits.Deadline`, or None for none) has passed."""
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
        sigma = np.array([model.draw_sigma(rng) for _ in range(m)])
        y = eta + sigma[:, None] * noise.normal(rng, eta.shape)
    return A, np.clip(y, -b_y, b_y)


def bootstrap_refits(model, n, col_bounds, b_y, refit, *, draws=DEFAULT_DRAWS, rng, deadline=None):
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

    Returns
    -------
    ndarray, shape (draws, d)
        The refits, in mapped units.
    """
    draws = int(draws)
    out = np.empty((draws, len(model.coef)))
    if hasattr(refit, "batch"):
        chunk = max(1, CHUNK_VALUES // max(1, n * len(model.coef)))
        for lo in range(0, draws, chunk):
            check_deadline(deadline)
            m = min(chunk, draws - lo)
            A, y = simulate_batch(model, n, col_bounds, b_y, rng, m)
            out[lo:lo + m] = refit.batch(A, y, rng)
        return out
    for b in range(draws):
        check_deadline(deadline)
        A, y = simulate_rows(model, n, col_bounds, b_y, rng)
        out[b] = refit(A, y, rng)
    return out


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
    chunk = max(1, CHUNK_VALUES // max(1, n * d))
    for lo in range(0, draws, chunk):
        check_deadline(deadline)
        m = min(chunk, draws - lo)
        A, y = simulate_batch(model, n, col_bounds, b_y, rng, m)
        Z = np.concatenate([A, y[..., None]], axis=2)
        ZtZ = Z.transpose(0, 2, 1) @ Z + symmetric_laplace(rng, noise_scale, d + 1, (m,))
        out[lo:lo + m] = least_squares_from_moments(ZtZ, n, intercept=model.intercept, x_bounds=col_bounds)
    return out
