"""What the inference stage releases: standard errors, intervals and tests of the coefficients.

:class:`CoefficientInference` keeps the bootstrap's errors ``theta* - theta~`` mapped to the
user's units (post-processing of the noisy moments and public randomness; no row of the
data), and answers in statsmodels' names: ``bse``, ``conf_int(alpha)``, ``tvalues``,
``pvalues``, ``cov_params()``. The interval is the basic (pivotal) bootstrap interval
``[b - q(1 - alpha/2), b - q(alpha/2)]`` of the errors, which removes the bias the ball and
the clipping put into the released coefficients, widened where needed to contain the
same interval of the errors without their mean: the bias correction is only as right as
the simulation's truth, which is least reliable exactly where the bias is large
(docs/methods/inference.md, "The interval"). A release on the refit's sphere may have
its truth beyond the ball; its intervals (:class:`BeyondTheBall`) reach out on that side
as far as least squares on the noisy moments (docs/methods/inference.md, "When the
release lies on the sphere").
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import norm

__all__ = ["CoefficientInference", "BeyondTheBall", "to_user_units"]

_Z95 = float(norm.ppf(0.975))


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


@dataclass(frozen=True, eq=False)
class BeyondTheBall:
    """What the intervals of a release on the refit's sphere need (post-processing only).

    The truth may lie beyond the sphere, on a ray from the release; nothing in the refit
    bounds how far (docs/methods/inference.md, "When the release lies on the sphere").

    Attributes
    ----------
    directions : ndarray, shape (K, d)
        Draws of the ray's direction; an end opens where at least alpha/2 of them point.
    estimate : ndarray, shape (d,), or None
        Least squares from the noisy second moments (no ball), which bounds the open end;
        None for the logistic loss, whose open ends stay open.
    errors : ndarray, shape (B, d), or None
        Its parametric bootstrap errors.
    """

    directions: np.ndarray
    estimate: np.ndarray = None
    errors: np.ndarray = None

    def column(self, j):
        """The same for column j alone."""
        return BeyondTheBall(self.directions[:, j:j + 1],
                             None if self.estimate is None else self.estimate[j:j + 1],
                             None if self.errors is None else self.errors[:, j:j + 1])

    def linear(self, A):
        """The same for the linear combinations ``A @ theta`` (rows of A)."""
        A = np.asarray(A, dtype=float)
        return BeyondTheBall(self.directions @ A.T,
                             None if self.estimate is None else A @ self.estimate,
                             None if self.errors is None else self.errors @ A.T)

    def user_units(self, spec, names):
        """Mapped units to the user's (directions and errors are linear, the estimate affine)."""
        zero = to_user_units(spec, names, np.zeros((1, len(names))))[0]
        lin = lambda t: to_user_units(spec, names, t) - zero
        return BeyondTheBall(lin(self.directions),
                             None if self.estimate is None else to_user_units(spec, names, self.estimate[None])[0],
                             None if self.errors is None else lin(self.errors))


def _open_sides(beyond, alpha):
    """Which ends are open, (lower, upper) booleans per column, or None inside the ball.

    An end opens when at least alpha/2 of the ray's draws point to it, so a direction the
    noise in the moments could turn round opens both ends.
    """
    if beyond is None:
        return None
    dirs = beyond.directions
    return np.mean(dirs < 0, axis=0) >= alpha / 2.0, np.mean(dirs > 0, axis=0) >= alpha / 2.0


def _basic(estimate, errors, alpha):
    """The basic bootstrap interval widened to hold the same interval of the centred errors."""
    probs = [alpha / 2.0, 1.0 - alpha / 2.0]
    lo_q, hi_q = np.quantile(errors, probs, axis=0)
    lo_c, hi_c = np.quantile(errors - errors.mean(axis=0), probs, axis=0)
    return estimate - np.maximum(hi_q, hi_c), estimate - np.minimum(lo_q, lo_c), lo_q, hi_q


def _interval(estimate, errors, alpha, sphere_share=0.0, beyond=None):
    """The released interval (docs/methods/inference.md, "The interval").

    Inside the ball: the basic bootstrap interval of ``estimate`` widened to hold its
    bias-free version, and the percentile interval too when the ball binds in more than
    alpha/2 of the refits. On the sphere (``beyond``): ``errors`` are the refit's without
    the ball; an end the ray points to opens and, where least squares from the noisy
    moments is at hand, takes that estimate's own end of the same level instead of
    infinity (each end then misses about alpha/2 of the time).
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    lower, upper, lo_q, hi_q = _basic(estimate, errors, alpha)
    if beyond is None:
        if sphere_share > alpha / 2.0:
            # a tail made by the projection onto the sphere points to the centre whatever the
            # truth: reflected (basic) it points away from a truth inside the ball, so the
            # percentile interval, which keeps its direction, is held as well
            lower, upper = np.minimum(lower, estimate + lo_q), np.maximum(upper, estimate + hi_q)
        return lower, upper
    down, up = _open_sides(beyond, alpha)
    if beyond.estimate is None:
        return np.where(down, -np.inf, lower), np.where(up, np.inf, upper)
    far_lo, far_hi, _, _ = _basic(beyond.estimate, beyond.errors, alpha)
    new_lo, new_hi = np.where(down, far_lo, lower), np.where(up, far_hi, upper)
    # the two disagree (the far end falls short of the refit's finite end): one of them
    # missed, so the interval spans both: the far estimate's interval and the finite end
    finite_end = np.where(up, lower, upper)
    clash = new_lo > new_hi
    return (np.where(clash, np.minimum(far_lo, finite_end), new_lo),
            np.where(clash, np.maximum(far_hi, finite_end), new_hi))


def _inverted_pvalues(estimate, errors, sphere_share, beyond, tol=1e-4):
    """Two-sided p-values that agree with the intervals: the smallest alpha at which the
    1 - alpha interval leaves out 0 (bisection; the intervals shrink as alpha grows)."""
    def holds(alphas):
        ends = [_interval(estimate[j:j + 1], errors[:, j:j + 1], float(a), sphere_share,
                          None if beyond is None else beyond.column(j)) for j, a in enumerate(alphas)]
        return np.array([e[0][0] <= 0.0 <= e[1][0] for e in ends])

    lo, hi = np.full(len(estimate), tol), np.full(len(estimate), 1.0 - tol)
    at_hi, at_lo = holds(hi), holds(lo)
    for _ in range(30):
        mid = 0.5 * (lo + hi)
        inside = holds(mid)
        lo, hi = np.where(inside, mid, lo), np.where(inside, hi, mid)
    return np.where(at_hi, 1.0, np.where(at_lo, 0.5 * (lo + hi), tol))


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
        shrunk, the true ones may lie beyond the sphere, and the intervals reach out on
        the side they may lie (``beyond``; docs/guide/inference.md, "When the ball binds").
    beyond, beyond_mapped : BeyondTheBall or None
        For a release on the sphere (user's and mapped units): the draws of the ray on
        which the truth may lie beyond it and least squares from the noisy moments with its
        bootstrap errors; ``errors`` are then those of the refit without the ball. None
        otherwise, and with ``truth_in_ball``.
    truth_in_ball : bool
        The user stated that the true coefficients lie inside the refit's ball
        (``dp_best_subset(..., truth_in_ball=True)``): a release on the sphere keeps the
        intervals of a truth inside it.
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
    beyond: BeyondTheBall = field(default=None, repr=False)
    beyond_mapped: BeyondTheBall = field(default=None, repr=False)
    truth_in_ball: bool = False

    @property
    def draws(self):
        """Number of bootstrap refits."""
        return int(self.errors.shape[0])

    @property
    def bse(self):
        """Standard errors: the standard deviation of the bootstrap errors; for a release on
        the sphere the width of the 95 % interval over 2 x 1.96 (``inf`` where it is open)."""
        if self.beyond is None:
            return pd.Series(self.errors.std(axis=0, ddof=1), index=self.names)
        lower, upper = self._ends(0.05)
        return pd.Series((upper - lower) / (2.0 * _Z95), index=self.names)

    def _ends(self, alpha):
        return _interval(self.estimate, self.errors, float(alpha), self.sphere_share, self.beyond)

    def conf_int(self, alpha=0.05):
        """Basic bootstrap intervals, widened to contain their bias-free version.

        ``[b - q(1 - alpha/2), b - q(alpha/2)]`` with q the quantiles of the errors, and
        the same with the errors' mean removed; the interval is the smallest that holds
        both. When more than alpha/2 of the bootstrap refits lie on the ball's sphere, it
        also holds the percentile interval ``[b + q(alpha/2), b + q(1 - alpha/2)]``.
        When the release itself lies on the sphere, the errors are those of the refit
        without the ball, and the end towards which the truth may lie beyond the sphere
        is that of least squares from the noisy moments (``inf`` for logistic)
        (docs/methods/inference.md, "The interval" and "When the release lies on the
        sphere"; docs/benchmarks/coverage.md).

        Parameters
        ----------
        alpha : float in (0, 1)

        Returns
        -------
        pandas.DataFrame
            Columns 0 (lower) and 1 (upper), as statsmodels returns them.
        """
        lower, upper = self._ends(alpha)
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
        A = np.asarray(A, dtype=float)
        errors = self.errors_mapped @ A.T  # (B, m)
        beyond = None if self.beyond_mapped is None else self.beyond_mapped.linear(A)
        estimate = A @ self.estimate_mapped
        lower, upper = _interval(estimate, errors, float(alpha), self.sphere_share, beyond)
        if beyond is None:
            return errors.std(axis=0, ddof=1), lower, upper
        lo95, hi95 = _interval(estimate, errors, 0.05, self.sphere_share, beyond)
        return (hi95 - lo95) / (2.0 * _Z95), lower, upper  # as bse

    @property
    def tvalues(self):
        """``estimate / bse`` (Wald statistics with the bootstrap standard error); NaN for a
        release on the sphere, whose shrunk coefficients are no centre of a Wald test."""
        if self.beyond is not None:
            return pd.Series(np.nan, index=self.names)
        return pd.Series(self.estimate / self.errors.std(axis=0, ddof=1), index=self.names)

    @property
    def pvalues(self):
        """Two-sided p-values of the Wald statistics against the normal distribution; for a
        release on the sphere, the p-values the intervals invert (the smallest alpha whose
        interval leaves out 0, to 1e-4)."""
        if self.beyond is not None:
            return pd.Series(_inverted_pvalues(self.estimate, self.errors, self.sphere_share, self.beyond),
                             index=self.names)
        return pd.Series(2.0 * norm.sf(np.abs(self.tvalues.to_numpy())), index=self.names)

    def cov_params(self):
        """The bootstrap covariance of the coefficients (a d x d DataFrame); for a release on
        the sphere ``bse**2`` on the diagonal and NaN (not known) off it."""
        C = np.atleast_2d(np.cov(self.errors, rowvar=False))
        if self.beyond is not None:
            C = np.diag(self.bse.to_numpy() ** 2)
            C[~np.eye(len(self.names), dtype=bool)] = np.nan
        return pd.DataFrame(C, index=self.names, columns=self.names)
