"""Predictions of new rows with their private intervals, as statsmodels gives them.

``res.get_prediction(newdata)`` returns a :class:`PredictionResults`: ``summary_frame(alpha)``
has statsmodels' columns ``mean``, ``mean_se``, ``mean_ci_lower``, ``mean_ci_upper`` and,
for a response with a noise model (least squares, Huber), ``obs_ci_lower`` and
``obs_ci_upper``: the interval of a new observation, which adds to the error of the mean
the error of one observation, ``sigma_U z`` with z standard normal and ``sigma_U`` an upper
confidence bound on the residual standard deviation at the released coefficients. That
bound comes from a small release of its own (:func:`release_residual_variance`, a ledger
stage: Laplace noise on the residual sum of squares, whose sensitivity the released
coefficients and the public box bound). The rest is post-processing of released
quantities and the user's new rows (docs/methods/inference.md, "Predictions").
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit

from ..mechanisms.noise import laplace_release, laplace_threshold
from .intervals import check_alpha
from .budget import RESIDUAL_SHARE  # planned with the other parts (budget.residual_part)

__all__ = ["PredictionResults", "RESIDUAL_LEVEL", "RESIDUAL_SHARE", "RESIDUAL_MECHANISM",
           "ResidualVariance", "residual_sensitivity", "release_residual_variance"]

#: Confidence of the upper bound on the residual variance that the observation intervals
#: use: it fails at most 1 % of the time, so a 95 % observation interval misses at most
#: about 1 % more often than with the true variance, and usually less (the bound then sits
#: above the truth).
RESIDUAL_LEVEL = 0.99
RESIDUAL_MECHANISM = "Laplace noise on the residual sum of squares at the released coefficients"


def residual_sensitivity(coef, col_bounds, b_y):
    """Replace-one sensitivity of ``sum_i (y_i - x_i'coef)^2`` for public ``coef``.

    Each row's residual lies in ``[-(b_y + sum_j |coef_j| c_j), +(...)]`` (the clipped box),
    so its square in ``[0, (b_y + sum_j |coef_j| c_j)^2]``: replacing a row moves the sum
    by at most that square.

    Parameters
    ----------
    coef : array_like, shape (d,)
        The released coefficients (mapped units), the forced columns first.
    col_bounds : array_like, shape (d,)
        Public bounds of the same columns (1 for the intercept).
    b_y : float
        Public bound of the response.

    Returns
    -------
    float
    """
    reach = float(b_y) + float(np.sum(np.abs(np.asarray(coef, dtype=float)) * np.asarray(col_bounds, dtype=float)))
    return reach ** 2


@dataclass(frozen=True)
class ResidualVariance:
    """The released residual sum of squares at the released coefficients, and its bound.

    Attributes
    ----------
    rss : float
        The noisy residual sum of squares (mapped units; public).
    scale : float
        Scale of its Laplace noise (public).
    dof : int
        ``n - d``.
    sd_upper : float
        Upper confidence bound (at ``level``) on the residual standard deviation:
        ``sqrt((rss + T) / dof)`` with ``P(noise < -T) <= 1 - level`` under the noise's
        exact grid law; floored at ``b_y / 100`` and capped at ``2 b_y`` (beyond which a
        new response, in ``[-b_y, b_y]``, is covered anyway).
    level : float
    eps : float
    """

    rss: float
    scale: float
    dof: int
    sd_upper: float
    level: float
    eps: float


def release_residual_variance(ZtZ, coef, col_bounds, b_y, n, *, eps, rng, level=RESIDUAL_LEVEL):
    """Pure eps-DP release of the residual sum of squares at the released coefficients.

    Parameters
    ----------
    ZtZ : ndarray, shape (d + 1, d + 1)
        Exact ``Z'Z`` of ``Z = [forced, X_S, y]`` (clipped, mapped): read only through the
        residual sum of squares ``v'Z'Zv``, ``v = (-coef, 1)``.
    coef : array_like, shape (d,)
        The released coefficients (public; mapped units).
    col_bounds : array_like, shape (d,)
        Public bounds of Z's first d columns.
    b_y : float
    n : int
    eps : float
        Budget (> 0).
    rng : numpy.random.Generator
    level : float in (0, 1)

    Returns
    -------
    ResidualVariance
    """
    coef = np.asarray(coef, dtype=float)
    v = np.append(-coef, 1.0)
    rss = max(float(v @ np.asarray(ZtZ, dtype=float) @ v), 0.0)
    scale = residual_sensitivity(coef, col_bounds, b_y) / float(eps)
    noisy = laplace_release(rss, scale, rng)  # exact, on a public grid
    # P(noise < -T) = P(noise > T) <= 1 - level (the grid law is symmetric): RSS <= noisy + T
    T = laplace_threshold(scale, 1.0 - level)
    dof = max(int(n) - len(coef), 1)
    var = min(max((noisy + T) / dof, (b_y / 100.0) ** 2), 4.0 * float(b_y) ** 2)
    return ResidualVariance(rss=float(noisy), scale=float(scale), dof=dof, sd_upper=float(np.sqrt(var)),
                            level=float(level), eps=float(eps))


class PredictionResults:
    """The mean response of new rows with its private standard error and intervals.

    Parameters
    ----------
    inference : CoefficientInference
    A : ndarray, shape (m, d)
        The new rows, mapped and clipped as the design's, in the refit's column order.
    coef_mapped : ndarray, shape (d,)
        The released coefficients (mapped units).
    response_map : (float, float) or None
        Centre and half-width of the response's public map (None: a two-class response,
        whose mean is the probability of the class coded +1).
    index : pandas.Index or None
        The new rows' index.
    """

    def __init__(self, inference, A, coef_mapped, response_map, index=None):
        self._inf = inference
        self._A = np.asarray(A, dtype=float)
        self._eta = self._A @ np.asarray(coef_mapped, dtype=float)
        self._map = response_map
        self._index = index

    @property
    def has_obs(self):
        """Whether observation intervals exist (a response with a noise model)."""
        return self._map is not None and self._inf.obs_noise_mapped is not None

    def _mean(self, alpha):
        se, lo, hi = self._inf.linear_interval(self._A, alpha)
        if self._map is None:  # logistic: the probability, a monotone map of the linear predictor
            draws = expit(self._eta[:, None] + self._A @ self._inf.errors_mapped.T)
            return expit(self._eta), draws.std(axis=1, ddof=1), expit(lo), expit(hi)
        centre, half = self._map
        return centre + half * self._eta, half * se, centre + half * lo, centre + half * hi

    def _obs(self, alpha):
        _, lo, hi = self._inf.linear_interval(self._A, alpha, obs=True)
        bound = self._inf.response_bound
        if bound is not None:  # the response lies in its public bounds: so does a new one
            lo, hi = np.clip(lo, -bound, bound), np.clip(hi, -bound, bound)
        centre, half = self._map
        return centre + half * lo, centre + half * hi

    @property
    def predicted_mean(self):
        """The predicted mean response (``res.predict(newdata)``), an array."""
        return self._mean(0.05)[0]

    @property
    def se_mean(self):
        """The private standard error of the mean response, an array."""
        return self._mean(0.05)[1]

    def conf_int(self, obs=False, alpha=0.05):
        """``(m, 2)`` array of the ``1 - alpha`` intervals of the mean (or, ``obs=True``, of a
        new observation), as statsmodels' ``PredictionResults.conf_int``."""
        alpha = check_alpha(alpha)
        if obs:
            if not self.has_obs:
                raise ValueError("obs=True: a two-class response has no observation interval "
                                 "(its new observations are classes); use obs=False")
            return np.column_stack(self._obs(alpha))
        return np.column_stack(self._mean(alpha)[2:])

    def summary_frame(self, alpha=0.05):
        """statsmodels' frame: ``mean``, ``mean_se``, ``mean_ci_lower``, ``mean_ci_upper`` and,
        with a noise model, ``obs_ci_lower`` and ``obs_ci_upper``.

        Parameters
        ----------
        alpha : float in (0, 1)

        Returns
        -------
        pandas.DataFrame
            One row per new row (with its index).
        """
        alpha = check_alpha(alpha)
        cols = dict(zip(("mean", "mean_se", "mean_ci_lower", "mean_ci_upper"), self._mean(alpha)))
        if self.has_obs:
            cols.update(zip(("obs_ci_lower", "obs_ci_upper"), self._obs(alpha)))
        return pd.DataFrame(cols, index=self._index)

    def __repr__(self):
        return f"PredictionResults({len(self._eta)} rows; .summary_frame(alpha=0.05))"
