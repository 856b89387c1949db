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

__all__ = ["simulate_rows", "bootstrap_refits", "DEFAULT_DRAWS"]

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
    Z = rng.multivariate_normal(model.mean, model.cov, size=n, method="eigh") if k else np.empty((n, 0))
    A = np.hstack([np.ones((n, 1)), Z]) if model.intercept else Z
    # the design clips every column to its public box before the refit: so does the simulation
    A = np.clip(A, -col_bounds, col_bounds)
    y = model.draw_response(A, rng)
    return A, np.clip(y, -b_y, b_y)


def bootstrap_refits(model, n, col_bounds, b_y, refit, *, draws=DEFAULT_DRAWS, rng):
    """The refit mechanism run on ``draws`` simulated data sets.

    Parameters
    ----------
    model : SimulationModel
    n : int
    col_bounds : ndarray, shape (d,)
    b_y : float
    refit : callable
        ``refit(A, y, rng) -> coef``: the release's own refit with its public settings
        (:func:`dpsubset.inference.release.refit_callable`).
    draws : int
    rng : numpy.random.Generator

    Returns
    -------
    ndarray, shape (draws, d)
        The refits, in mapped units.
    """
    out = np.empty((int(draws), len(model.coef)))
    for b in range(int(draws)):
        A, y = simulate_rows(model, n, col_bounds, b_y, rng)
        out[b] = refit(A, y, rng)
    return out
