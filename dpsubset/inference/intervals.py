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
release lies on the sphere"). The released intervals are that rule made nested in alpha
and widened to hold the estimate, on a fixed grid of levels; the p-values invert them and
the statistics are the p-values' normal scores, so every number of a coefficient's row
agrees with the others (docs/methods/inference.md, "One construction for every number").
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import norm

__all__ = ["CoefficientInference", "BeyondTheBall", "to_user_units", "ALPHA_GRID", "check_alpha",
           "nested_intervals", "inverted_pvalues", "grid_level", "CLOSE_CALL_RATIO"]

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


#: The levels alpha at which the released intervals are built: 1e-6 to 1e-3 on a log scale,
#: then every 0.001 to 0.999 (0.01, 0.05 and 0.1 among them). An interval asked for at
#: another alpha is the one at the next level up, and a p-value is one of these levels
#: (docs/methods/inference.md, "One construction for every number").
ALPHA_GRID = np.unique(np.concatenate([np.geomspace(1e-6, 1e-3, 31), np.arange(1, 1000) / 1000.0]))


#: A selected term whose estimate is less than this many standard errors from 0 in the
#: conditional mode may have been a close call (:meth:`CoefficientInference.close_calls`;
#: docs/guide/inference.md, "Conditional or split").
CLOSE_CALL_RATIO = 6.0


def check_alpha(alpha, name="alpha"):
    """``alpha`` as a float strictly between 0 and 1, or a ValueError naming the argument."""
    if isinstance(alpha, (bool, np.bool_)) or not isinstance(alpha, (int, float, np.integer, np.floating)) \
            or not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"{name}: expected a number strictly between 0 and 1 (0.05 for 95 % "
                         f"intervals); got {alpha!r}")
    return float(alpha)


def _open_sides(beyond, alphas):
    """Which ends are open, (lower, upper) booleans of shape (K, d), or None inside the ball.

    An end opens when at least alpha/2 of the ray's draws point to it, so a direction the
    noise in the moments could turn round opens both ends (fewer ends open at a larger
    alpha: the intervals stay nested).
    """
    if beyond is None:
        return None
    dirs, half = beyond.directions, np.asarray(alphas)[:, None] / 2.0
    return np.mean(dirs < 0, axis=0) >= half, np.mean(dirs > 0, axis=0) >= half


def _basic(estimate, errors, alphas):
    """The basic bootstrap interval widened to hold the same interval of the centred errors,
    at each level of ``alphas`` (arrays of shape (K, d))."""
    alphas = np.asarray(alphas, dtype=float)
    probs = np.concatenate([alphas / 2.0, 1.0 - alphas / 2.0])
    k = len(alphas)
    q = np.quantile(errors, probs, axis=0)
    c = np.quantile(errors - errors.mean(axis=0), probs, axis=0)
    lo_q, hi_q, lo_c, hi_c = q[:k], q[k:], c[:k], c[k:]
    return estimate - np.maximum(hi_q, hi_c), estimate - np.minimum(lo_q, lo_c), lo_q, hi_q


def _raw_intervals(estimate, errors, alphas, sphere_share=0.0, beyond=None):
    """The interval rule at each level of ``alphas`` (docs/methods/inference.md, "The interval").

    Inside the ball: the basic bootstrap interval of ``estimate`` widened to hold its
    bias-free version, and the percentile interval too when the ball binds in more than
    alpha/2 of the refits. On the sphere (``beyond``): ``errors`` are the refit's without
    the ball; an end the ray points to opens and, where least squares from the noisy
    moments is at hand, takes that estimate's own end of the same level instead of
    infinity (each end then misses about alpha/2 of the time).

    Returns
    -------
    (ndarray, ndarray)
        Lower and upper ends, shape (K, d).
    """
    alphas = np.asarray(alphas, dtype=float)
    lower, upper, lo_q, hi_q = _basic(estimate, errors, alphas)
    if beyond is None:
        # a tail made by the projection onto the sphere points to the centre whatever the
        # truth: reflected (basic) it points away from a truth inside the ball, so the
        # percentile interval, which keeps its direction, is held as well
        binds = (sphere_share > alphas / 2.0)[:, None]
        return (np.where(binds, np.minimum(lower, estimate + lo_q), lower),
                np.where(binds, np.maximum(upper, estimate + hi_q), upper))
    down, up = _open_sides(beyond, alphas)
    if beyond.estimate is None:
        return np.where(down, -np.inf, lower), np.where(up, np.inf, upper)
    far_lo, far_hi, _, _ = _basic(beyond.estimate, beyond.errors, alphas)
    new_lo, new_hi = np.where(down, far_lo, lower), np.where(up, far_hi, upper)
    # the two disagree (the far end falls short of the refit's finite end): one of them
    # missed, so the interval spans both: the far estimate's interval and the finite end
    finite_end = np.where(up, lower, upper)
    clash = new_lo > new_hi
    return (np.where(clash, np.minimum(far_lo, finite_end), new_lo),
            np.where(clash, np.maximum(far_hi, finite_end), new_hi))


def _interval(estimate, errors, alpha, sphere_share=0.0, beyond=None):
    """The rule's interval at one level (1-d ends): :func:`_raw_intervals` at ``alpha`` alone,
    before the nesting and the estimate (bench/calibration.py studies the rule itself)."""
    lower, upper = _raw_intervals(np.asarray(estimate, dtype=float), errors, [check_alpha(alpha)],
                                  sphere_share, beyond)
    return lower[0], upper[0]


def nested_intervals(estimate, errors, sphere_share=0.0, beyond=None, alphas=ALPHA_GRID):
    """The released intervals at every level of ``alphas`` (ascending): nested, each holding
    the estimate.

    The interval at level alpha is the smallest that holds the estimate and the rule's
    interval (:func:`_raw_intervals`) at alpha and at every larger level of the grid. So an
    interval holds every narrower one, the released estimate lies in each, and the
    p-value that inverts them (:func:`inverted_pvalues`) is below alpha exactly when the
    interval at alpha leaves out 0. Where the rule is nested already (it is, but for the
    rare clash of a release on the sphere) and its intervals hold the estimate, nothing
    changes.

    Returns
    -------
    (ndarray, ndarray)
        Lower and upper ends, shape (len(alphas), d).
    """
    estimate = np.asarray(estimate, dtype=float)
    lower, upper = _raw_intervals(estimate, errors, alphas, sphere_share, beyond)
    lower = np.minimum(np.minimum.accumulate(lower[::-1], axis=0)[::-1], estimate)
    upper = np.maximum(np.maximum.accumulate(upper[::-1], axis=0)[::-1], estimate)
    return lower, upper


def grid_level(alpha, alphas=ALPHA_GRID):
    """Index of the level whose interval is released for ``alpha``: the smallest level of
    the grid at or above it (the largest level for alpha above the grid)."""
    k = int(np.searchsorted(alphas, float(alpha) * (1.0 - 1e-12), side="left"))
    return min(k, len(alphas) - 1)


def inverted_pvalues(lower, upper, alphas=ALPHA_GRID):
    """Two-sided p-values that invert nested intervals: the largest level of the grid whose
    interval holds 0 (1 when every one does, 0 when none does). Then ``p < alpha`` exactly
    when the interval released at alpha leaves out 0."""
    holds = (lower <= 0.0) & (0.0 <= upper)
    count = holds.sum(axis=0)  # the intervals are nested: those that hold 0 come first
    return np.where(count == len(alphas), 1.0, np.where(count == 0, 0.0, alphas[np.maximum(count - 1, 0)]))


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
    sampling_se : ndarray, shape (d,), or None
        Standard errors of least squares from the sampling noise alone, ``sqrt(diag(sigma^2
        (X'X)^{-1}))`` read from the noisy second moments (user's units; post-processing):
        the scale of the winner's curse (:meth:`close_calls`). None for the logistic loss.
    obs_noise_mapped : ndarray, shape (B,), or None
        Draws ``sigma_U z_b`` of a new observation's error around its mean (mapped units):
        ``sigma_U`` the released upper bound on the residual standard deviation
        (``prediction.release_residual_variance``), ``z_b`` standard normal (the
        observation intervals of :mod:`dpsubset.inference.prediction`). None for the
        logistic loss, whose response is a class.
    response_bound : float or None
        Public bound of the response in mapped units (the observation intervals end there).
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
    obs_noise_mapped: np.ndarray = field(default=None, repr=False)
    response_bound: float = None
    sampling_se: np.ndarray = field(default=None, repr=False)

    @property
    def draws(self):
        """Number of bootstrap refits."""
        return int(self.errors.shape[0])

    @functools.cached_property
    def _nested(self):
        """The released intervals at every level of :data:`ALPHA_GRID` (computed once)."""
        return nested_intervals(self.estimate, self.errors, self.sphere_share, self.beyond)

    def _ends(self, alpha):
        k = grid_level(check_alpha(alpha))
        lower, upper = self._nested
        return lower[k], upper[k]

    @property
    def bse(self):
        """Standard errors: the standard deviation of the bootstrap errors; for a release on
        the sphere the width of the 95 % interval over 2 x 1.96 (``inf`` where it is open)."""
        if self.beyond is None:
            return pd.Series(self.errors.std(axis=0, ddof=1), index=self.names)
        lower, upper = self._ends(0.05)
        return pd.Series((upper - lower) / (2.0 * _Z95), index=self.names)

    def conf_int(self, alpha=0.05):
        """Private ``1 - alpha`` intervals: nested in alpha, each holding the estimate.

        The rule at one level: the basic bootstrap interval ``[b - q(1 - alpha/2), b -
        q(alpha/2)]`` (q the quantiles of the errors), widened to hold the same with the
        errors' mean removed; when more than alpha/2 of the bootstrap refits lie on the
        ball's sphere, also the percentile interval ``[b + q(alpha/2), b + q(1 - alpha/2)]``.
        When the release itself lies on the sphere, the errors are those of the refit
        without the ball, and the end towards which the truth may lie beyond the sphere
        is that of least squares from the noisy moments (``inf`` for logistic). The
        released interval is the smallest holding the estimate and the rule's intervals
        at alpha and every larger level of :data:`ALPHA_GRID` (an alpha between two levels
        takes the next one up): so :attr:`pvalues` below alpha means exactly that this
        interval leaves out 0 (docs/methods/inference.md, "The interval", "When the
        release lies on the sphere" and "One construction for every number").

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

    def open_ends(self, alpha=0.05):
        """Which ends of :meth:`conf_int` are open: the release lies on the sphere and the
        truth may lie beyond it on that side, so the end is least squares' from the noisy
        moments, or infinite (one-sided) where there is none.

        Returns
        -------
        pandas.DataFrame
            Boolean columns 0 (lower) and 1 (upper); all False inside the ball.
        """
        k = grid_level(check_alpha(alpha))
        sides = _open_sides(self.beyond, ALPHA_GRID[k:k + 1])
        down, up = (np.zeros((1, len(self.names)), bool),) * 2 if sides is None else sides
        return pd.DataFrame({0: down[0], 1: up[0]}, index=self.names)

    def linear_interval(self, A, alpha=0.05, obs=False):
        """Standard error and interval of the linear predictor ``A @ theta`` of new rows.

        The rule of :meth:`conf_int` at alpha alone (no grid: new data may have many rows),
        widened to hold the estimate. With ``obs=True`` the interval of a new observation
        ``A @ theta + e``: each bootstrap error less a draw of the observation's error
        (:attr:`obs_noise_mapped`), the same rule on those.

        Parameters
        ----------
        A : ndarray, shape (m, d)
            New rows, mapped and clipped as the design's, in the refit's column order.
        alpha : float
        obs : bool

        Returns
        -------
        (ndarray, ndarray, ndarray)
            Standard errors, lower and upper ends, in mapped units.
        """
        alpha = check_alpha(alpha)
        A = np.asarray(A, dtype=float)
        errors = self.errors_mapped @ A.T  # (B, m)
        beyond = None if self.beyond_mapped is None else self.beyond_mapped.linear(A)
        estimate = A @ self.estimate_mapped
        if obs:
            # the observation misses its mean by e: its bootstrap error is theta*'s less e's draw
            noise = self.obs_noise_mapped[:, None]
            errors = errors - noise
            if beyond is not None and beyond.errors is not None:
                beyond = BeyondTheBall(beyond.directions, beyond.estimate, beyond.errors - noise)
        lower, upper = _raw_intervals(estimate, errors, [alpha, 0.05], self.sphere_share, beyond)
        lower, upper = np.minimum(lower, estimate), np.maximum(upper, estimate)
        se = errors.std(axis=0, ddof=1) if beyond is None else (upper[1] - lower[1]) / (2.0 * _Z95)
        return se, lower[0], upper[0]

    def close_calls(self, selected, ratio=CLOSE_CALL_RATIO):
        """The selected terms whose selection may have been a close call, read from the
        released numbers alone: in the conditional mode, a selected term whose estimate is
        less than ``ratio`` sampling standard errors (:attr:`sampling_se`; :attr:`bse` where
        there is none) from 0.

        Selecting and estimating on the same rows favours the column whose estimate came out
        large: where a term's effect is not far above what the columns it competed with can
        reach by chance (a few sampling standard errors: the refit's privacy noise is drawn
        apart from the selection and adds no curse), the released estimate carries that
        winner's curse and its conditional interval under-covers. Measured (bench/coverage.py,
        docs/benchmarks/coverage.md, "A close call"): the slopes below 6 standard errors
        covered 0.85 where the third effect competes with noise columns, those above 0.94;
        ``split=True`` gives intervals that hold whichever support came out. Empty in the
        split mode.

        Parameters
        ----------
        selected : list of str
            The released support (terms forced in are not selected).
        ratio : float

        Returns
        -------
        list of str
        """
        if self.mode != "conditional":
            return []
        bse = self.bse if self.sampling_se is None else pd.Series(self.sampling_se, index=self.names)
        est = pd.Series(self.estimate, index=self.names)
        return [c for c in selected if c in est.index and not abs(est[c]) >= ratio * bse[c]]

    @property
    def pvalues(self):
        """Two-sided p-values that invert the intervals: the largest level of
        :data:`ALPHA_GRID` whose interval holds 0 (1 if all do, 0 if none does). ``p <
        alpha`` exactly when ``conf_int(alpha)`` leaves out 0."""
        lower, upper = self._nested
        return pd.Series(inverted_pvalues(lower, upper), index=self.names)

    @property
    def tvalues(self):
        """The normal score of the p-value, with the estimate's sign: ``sign(b) z(1 - p/2)``
        (0 where p = 1). It is not ``estimate / bse``: the intervals are the bootstrap's,
        not ``b +- z se``, and this is the statistic whose normal two-sided p-value is
        :attr:`pvalues` (``|t| > 1.96`` exactly when the 95 % interval leaves out 0). A
        p-value of 0 (below every level of :data:`ALPHA_GRID`) is scored as half the
        smallest level, so the statistic stays finite (about 5.03)."""
        p = np.maximum(self.pvalues.to_numpy(), ALPHA_GRID[0] / 2.0)
        return pd.Series(np.sign(self.estimate) * norm.isf(p / 2.0), index=self.names)

    def cov_params(self):
        """The bootstrap covariance of the coefficients (a d x d DataFrame); for a release on
        the sphere ``bse**2`` on the diagonal and NaN (not known) off it."""
        C = np.atleast_2d(np.cov(self.errors, rowvar=False))
        if self.beyond is not None:
            C = np.diag(self.bse.to_numpy() ** 2)
            C[~np.eye(len(self.names), dtype=bool)] = np.nan
        return pd.DataFrame(C, index=self.names, columns=self.names)
