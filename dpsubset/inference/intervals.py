"""What the inference stage releases: standard errors, intervals and tests of the coefficients.

:class:`CoefficientInference` keeps the bootstrap's errors ``theta* - theta~`` mapped to the
user's units (post-processing of the noisy moments and public randomness; no row of the
data), and answers in statsmodels' names: ``bse``, ``conf_int(alpha)``, ``tvalues``,
``pvalues``, ``cov_params()``. The interval is the basic (pivotal) bootstrap interval
``[b - q(1 - alpha/2), b - q(alpha/2)]`` of the errors, which removes the bias the ball and
the clipping put into the released coefficients, widened where needed to contain the
same interval of the errors without their mean: the bias correction is only as right as
the simulation's truth, which is least reliable exactly where the bias is large
(docs/methods/inference.md, "The interval").
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import norm

__all__ = ["CoefficientInference", "to_user_units"]


def to_user_units(spec, names, coef_mapped):
    """The affine map of :meth:`DesignSpec.to_original_scale` applied to rows of draws.

    Parameters
    ----------
    spec : DesignSpec
    names : list of str
    coef_mapped : ndarray, shape (B, d)

    Returns
    -------
    ndarray, shape (B, d)
    """
    d = len(names)
    shift = spec.to_original_scale(np.zeros(d), names).to_numpy()
    L = np.column_stack([spec.to_original_scale(np.eye(d)[j], names).to_numpy() - shift
                         for j in range(d)])
    return np.asarray(coef_mapped, dtype=float) @ L.T + shift


def _interval(estimate, errors, alpha, sphere_share=0.0):
    """The basic bootstrap interval of ``estimate`` widened to hold its bias-free version,
    and the percentile interval too when the ball binds in more than alpha/2 of the refits."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    probs = [alpha / 2.0, 1.0 - alpha / 2.0]
    lo_q, hi_q = np.quantile(errors, probs, axis=0)
    lo_c, hi_c = np.quantile(errors - errors.mean(axis=0), probs, axis=0)
    lower, upper = estimate - np.maximum(hi_q, hi_c), estimate - np.minimum(lo_q, lo_c)
    if sphere_share > alpha / 2.0:
        # a tail made by the projection onto the sphere points to the centre whatever the
        # truth: reflected (basic) it points away from a truth inside the ball, so the
        # percentile interval, which keeps its direction, is held as well
        lower, upper = np.minimum(lower, estimate + lo_q), np.maximum(upper, estimate + hi_q)
    return lower, upper


@dataclass(frozen=True, eq=False)
class CoefficientInference:
    """Private uncertainty of the released coefficients.

    Attributes
    ----------
    names : list of str
        The refit's columns (always-in, then the released support).
    estimate : ndarray, shape (d,)
        The released coefficients (user's units).
    errors : ndarray, shape (B, d)
        Bootstrap errors ``theta*_b - theta~`` in the user's units.
    method : str
        How the errors were made, in words (for the report and the summary).
    eps : float
        Budget of the noisy moments the simulation model came from.
    mode : {"conditional", "split"}
        Conditional on the released support (same rows), or refit on rows the
        selection did not see.
    estimate_mapped, errors_mapped : ndarray
        The same in the mapped units of the design (for the linear predictor of new
        rows, :meth:`linear_interval`).
    sphere_share : float
        Share of the bootstrap refits on the sphere of the refit's ball (a function of the
        bootstrap alone: post-processing). Above alpha/2 the intervals also hold the
        percentile interval (docs/methods/inference.md, "The interval").
    on_sphere : bool
        Whether the released coefficients lie on the sphere of the refit's ball (a function
        of the release and the public radius). The ball then binds: the coefficients are
        shrunk, and the intervals, which assume that the true coefficients lie inside the
        ball, can miss coefficients outside it (docs/guide/inference.md, "When the ball
        binds").
    """

    names: list
    estimate: np.ndarray
    errors: np.ndarray = field(repr=False)
    method: str = ""
    eps: float = 0.0
    mode: str = "conditional"
    estimate_mapped: np.ndarray = field(default=None, repr=False)
    errors_mapped: np.ndarray = field(default=None, repr=False)
    sphere_share: float = 0.0
    on_sphere: bool = False

    @property
    def draws(self):
        """Number of bootstrap refits."""
        return int(self.errors.shape[0])

    @property
    def bse(self):
        """Standard errors: the standard deviation of the bootstrap errors."""
        return pd.Series(self.errors.std(axis=0, ddof=1), index=self.names)

    def conf_int(self, alpha=0.05):
        """Basic bootstrap intervals, widened to contain their bias-free version.

        ``[b - q(1 - alpha/2), b - q(alpha/2)]`` with q the quantiles of the errors, and
        the same with the errors' mean removed; the interval is the smallest that holds
        both. When more than alpha/2 of the bootstrap refits lie on the ball's sphere, it
        also holds the percentile interval ``[b + q(alpha/2), b + q(1 - alpha/2)]``
        (docs/methods/inference.md, "The interval"; docs/benchmarks/coverage.md).

        Parameters
        ----------
        alpha : float in (0, 1)

        Returns
        -------
        pandas.DataFrame
            Columns 0 (lower) and 1 (upper), as statsmodels returns them.
        """
        alpha = float(alpha)
        lower, upper = _interval(self.estimate, self.errors, alpha, self.sphere_share)
        return pd.DataFrame({0: lower, 1: upper}, index=self.names)

    def linear_interval(self, A, alpha=0.05):
        """Standard error and interval of the linear predictor ``A @ theta`` of new rows.

        Parameters
        ----------
        A : ndarray, shape (m, d)
            New rows, mapped and clipped as the design's, in the refit's column order.
        alpha : float

        Returns
        -------
        (ndarray, ndarray, ndarray)
            Standard errors, lower and upper ends, in mapped units.
        """
        errors = self.errors_mapped @ np.asarray(A, dtype=float).T  # (B, m)
        lower, upper = _interval(A @ self.estimate_mapped, errors, float(alpha), self.sphere_share)
        return errors.std(axis=0, ddof=1), lower, upper

    @property
    def tvalues(self):
        """``estimate / bse`` (Wald statistics with the bootstrap standard error)."""
        return pd.Series(self.estimate, index=self.names) / self.bse

    @property
    def pvalues(self):
        """Two-sided p-values of the Wald statistics against the normal distribution."""
        return pd.Series(2.0 * norm.sf(np.abs(self.tvalues.to_numpy())), index=self.names)

    def cov_params(self):
        """The bootstrap covariance of the coefficients (a d x d DataFrame)."""
        C = np.atleast_2d(np.cov(self.errors, rowvar=False))
        return pd.DataFrame(C, index=self.names, columns=self.names)
