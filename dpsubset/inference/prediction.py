"""Predictions of new rows with their private intervals, as statsmodels gives them.

``res.get_prediction(newdata)`` returns a :class:`PredictionResults`: ``summary_frame(alpha)``
has statsmodels' columns ``mean``, ``mean_se``, ``mean_ci_lower``, ``mean_ci_upper`` and,
for a response with a noise model (least squares, Huber), ``obs_ci_lower`` and
``obs_ci_upper``: the interval of a new observation, which adds the residual spread of the
simulation model (read from the noisy second moments the inference stage released, with
fresh noise of their public law per bootstrap draw) to the error of the mean. Everything
is post-processing of released quantities and the user's new rows: no privacy cost, no
row of the training data (docs/methods/inference.md, "Predictions").
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit

from .intervals import check_alpha

__all__ = ["PredictionResults"]


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
