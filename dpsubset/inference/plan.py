"""``dps.plan``: rows or eps a release needs, from public inputs only, before any data are read.

Under an assumed model (p columns on the public box, s of them with effect ``effect``,
errors of sd ``noise`` or a target R^2), the function simulates data sets, finds the
exact top-R candidates of each (the same search the release runs) and computes the
exact probability that top-R releases the true support at each eps from its
log-weights, as bench/sample_size.py does; and, for a target interval width, runs the
refit and the bootstrap of ``inference=True`` on one simulated data set per size. It
reads no private data: its inputs are the settings a user fixes before a release, and
what it returns are properties of the mechanism under the assumed model
(docs/guide/sample-size.md, "Planning with dps.plan").
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..defaults import default_lam, default_radius, largest_row_norm
from ..mechanisms import log_softmax, top_r_log_weights
from ..mechanisms import noise as noise_mod
from ..privacy.budget import DEFAULT_REFIT_SHARE
from ..refit.objective import objective_perturbation_gram
from ..scores import LeastSquaresScorer, sensitivity
from ..search.exact import SubsetSearch, default_R
from .bootstrap import bootstrap_refits
from .budget import DEFAULT_INFERENCE_SHARE
from .moments import SimulationModel, before_clipping

__all__ = ["plan", "Plan"]

_GRID_N = (250, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000)
_GRID_EPS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)


@dataclass(frozen=True)
class Plan:
    """What :func:`plan` found.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per (n, eps): ``p_true_support`` (mean exact probability that top-R
        releases the true support over the simulated data sets) and, when a width
        was asked for, ``median_width`` (the median width of the slopes' 95 %
        intervals, in the columns' units; ``inf`` where most releases would lie on the
        refit's sphere, whose intervals reach beyond the ball) and ``p_ball_binds``
        (the share of the refit's draws on that sphere: the chance that a release's
        ball binds, docs/guide/inference.md, "When the ball binds").
    n_needed, eps_needed : float or None
        The smallest n (at the given eps) or eps (at the given n) of the grid that
        meets every target; None when none does.
    assumptions : str
        The model the numbers are for.
    """

    table: pd.DataFrame
    n_needed: float | None
    eps_needed: float | None
    assumptions: str

    def __repr__(self):
        need = (f"n >= {self.n_needed:g}" if self.n_needed is not None else
                f"eps >= {self.eps_needed:g}" if self.eps_needed is not None else
                "no setting of the grid meets the targets")
        return (f"Plan ({self.assumptions}):\n  needed: {need}\n"
                + self.table.to_string(index=False))


def _simulate(n, p, s, effect, noise, rho, b_x, b_y, rng):
    """Columns N(0, (b_x / 2)^2) with AR(1) correlation rho, clipped; effects on the first s."""
    cov = (b_x / 2.0) ** 2 * rho ** np.abs(np.subtract.outer(np.arange(p), np.arange(p)))
    X = np.clip(noise_mod.multivariate_normal(rng, np.zeros(p), cov, n, "cholesky"), -b_x, b_x)
    beta = np.zeros(p)
    beta[:s] = effect
    y = np.clip(X @ beta + noise * noise_mod.normal(rng, n), -b_y, b_y)
    return X, y


def _p_true(X, y, *, s, eps_select, b_x, b_y, time_limit):
    """Exact P(top-R releases {0..s-1}) on one simulated data set (intercept always in)."""
    n, p = X.shape
    bounds = np.full(p, b_x)
    r = default_radius(bounds, b_y, s, [1.0], "squared", n=n, eps=eps_select)
    lam = default_lam(n, eps_select, "squared")
    scorer = LeastSquaresScorer(X, y, lam, r, forced=np.ones((n, 1)))
    Delta = sensitivity(bounds, b_y, r, s, [1.0], n)
    cands = SubsetSearch(scorer, s, time_limit=time_limit).top_r(min(default_R(p, s), math.comb(p, s)))
    logp = log_softmax(top_r_log_weights(cands, eps_select, Delta))
    for k, S in enumerate(np.asarray(cands.supports).tolist()):
        if sorted(S) == list(range(s)):
            return float(np.exp(logp[k]))
    return 0.0


def _width(X, y, *, s, eps_refit, b_x, b_y, rng, draws=200):
    """Median 95 % width of the slopes when the true support is released (the refit and its
    bootstrap, with exact moments standing in for the noisy ones), and the share of refits
    on the ball's sphere.

    A release on the sphere gets intervals that reach beyond the ball, as far as least
    squares on the noisy moments (docs/methods/inference.md), far wider than the refit's
    spread; where more than half of the refits lie on the sphere the median width is that
    of such releases, which this does not simulate, and is returned as ``inf``.
    """
    n = X.shape[0]
    A = np.hstack([np.ones((n, 1)), X[:, :s]])
    bounds = np.concatenate([[1.0], np.full(s, b_x)])
    r = default_radius(np.full(X.shape[1], b_x), b_y, s, [1.0], "squared", n=n, eps=eps_refit)
    row_bound = largest_row_norm(np.full(s, b_x), s, [1.0])

    def refit(A_, y_, rng_):
        return objective_perturbation_gram(A_.T @ A_, A_.T @ y_, n, eps=eps_refit, row_bound=row_bound,
                                           b_y=b_y, r=r, rng=rng_).coef
    # the bootstrap's truth is the least-squares fit of the simulated data (the assumed
    # model's coefficients up to sampling noise), not the refit: a truth outside the ball
    # must stay outside, or the share of releases whose ball binds is understated
    coef = np.linalg.lstsq(A, y, rcond=None)[0]
    resid = y - A @ coef
    Z = X[:, :s]
    # the simulation clips its Gaussian columns as a release's does: match the moments after
    # clipping (moments.before_clipping; without it the planned widths were about 8 % wide)
    mean, cov = before_clipping(Z.mean(axis=0), np.atleast_2d(np.cov(Z.T)), np.full(s, b_x))
    model = SimulationModel(coef=coef, sigma2=float(resid @ resid / max(n - s - 1, 1)),
                            sigma2_floor=(b_y / 100) ** 2, rss_weights=np.zeros(1), noise_scale=0.0,
                            dof=max(n - s - 1, 1), mean=mean, cov=cov, intercept=True)
    thetas = bootstrap_refits(model, n, bounds, b_y, refit, draws=draws, rng=rng)
    binds = float(np.mean(np.linalg.norm(thetas, axis=1) >= r * (1.0 - 1e-6)))
    lo, hi = np.quantile(thetas[:, 1:], [0.025, 0.975], axis=0)
    return (math.inf if binds > 0.5 else float(np.median(hi - lo))), binds


def plan(*, p, s, effect, noise=None, r2=None, bounds=(1.0, 3.0), eps=None, n=None, rho=0.0,
         target_prob=0.9, target_width=None, inference=False, trials=3, n_grid=None, eps_grid=None,
         time_limit=120.0, random_state=0):
    """Rows or eps needed by a release (top-R, least squares, default split), from public inputs.

    Parameters
    ----------
    p, s : int
        Candidate columns and support size.
    effect : float
        The assumed size of each of the s true coefficients (units of the columns).
    noise : float, optional
        The assumed error standard deviation; or give ``r2``.
    r2 : float in (0, 1), optional
        The assumed R^2 of the true model instead of ``noise``.
    bounds : (b_x, b_y)
        Public bounds: every column clipped to [-b_x, b_x], the response to [-b_y, b_y].
    eps : float, optional
        Total budget; give it to find the rows needed.
    n : int, optional
        Rows; give it (instead of ``eps``) to find the eps needed.
    rho : float
        Correlation of adjacent columns (AR(1)).
    target_prob : float
        Target probability that top-R releases the true support.
    target_width : float, optional
        Target median width of the slopes' 95 % intervals (``inference=True``).
    inference : bool
        Plan for a release with ``inference=True``: the selection and the refit then
        share ``(1 - DEFAULT_INFERENCE_SHARE) eps``. Implied by ``target_width``.
    trials : int
        Simulated data sets per grid point.
    n_grid, eps_grid : sequence, optional
        The grid searched (defaults from 250 to 100,000 rows; eps from 0.25 to 32).
    time_limit : float
        Seconds for each exact search.
    random_state : int

    Returns
    -------
    Plan
    """
    if (eps is None) == (n is None):
        raise ValueError("plan: give eps (to find the rows needed) or n (to find the eps needed), "
                         "not both")
    if (noise is None) == (r2 is None):
        raise ValueError("plan: give the assumed noise sd or the assumed r2, one of them")
    if not 0 < s < p:
        raise ValueError(f"plan: need 0 < s < p, got s = {s}, p = {p}")
    b_x, b_y = (float(v) for v in bounds)
    if noise is None:
        if not 0 < r2 < 1:
            raise ValueError(f"r2 must be in (0, 1), got {r2!r}")
        signal_var = effect ** 2 * (b_x / 2.0) ** 2 * (s + 2 * rho * (s - 1))  # before clipping
        noise = math.sqrt(signal_var * (1 - r2) / r2)
    rng = noise_mod.child_generator(random_state)
    # the part of eps the selection and the refit share (the default split of a release)
    rest = 1.0 - (DEFAULT_INFERENCE_SHARE if inference or target_width is not None else 0.0)
    ns = [int(n)] if n is not None else list(n_grid or _GRID_N)
    epss = [float(eps)] if eps is not None else list(eps_grid or _GRID_EPS)
    rows = []
    for size in ns:
        data = [_simulate(size, p, s, effect, noise, rho, b_x, b_y, rng) for _ in range(trials)]
        for e in epss:
            eps_select = (1 - DEFAULT_REFIT_SHARE) * rest * e
            probs = [_p_true(X, y, s=s, eps_select=eps_select, b_x=b_x, b_y=b_y, time_limit=time_limit)
                     for X, y in data]
            row = dict(n=size, eps=e, p_true_support=float(np.mean(probs)))
            if target_width is not None:
                row["median_width"], row["p_ball_binds"] = _width(
                    *data[0], s=s, eps_refit=DEFAULT_REFIT_SHARE * rest * e, b_x=b_x, b_y=b_y, rng=rng)
            rows.append(row)
        if eps is not None and _meets(rows[-1], target_prob, target_width):
            break  # the smallest n of the grid that meets the targets
    table = pd.DataFrame(rows)
    ok = table[[_meets(r, target_prob, target_width) for r in rows]]
    n_needed = float(ok["n"].min()) if eps is not None and len(ok) else None
    eps_needed = float(ok["eps"].min()) if n is not None and len(ok) else None
    assumptions = (f"p = {p}, s = {s}, effect {effect:g}, noise sd {noise:.3g}, rho {rho:g}, bounds "
                   f"({b_x:g}, {b_y:g}), top-R with the default split, {trials} simulated data sets "
                   f"per point; target P(true support) >= {target_prob:g}"
                   + ("" if target_width is None else f", median width <= {target_width:g}"))
    return Plan(table=table, n_needed=n_needed, eps_needed=eps_needed, assumptions=assumptions)


def _meets(row, target_prob, target_width):
    return row["p_true_support"] >= target_prob and (
        target_width is None or row.get("median_width", math.inf) <= target_width)
