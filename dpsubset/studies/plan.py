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
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._validation import check_positive, is_integer, is_real
from ..defaults import default_lam, default_radius
from ..privacy.sensitivity import largest_row_norm
from ..mechanisms import log_softmax, top_r_log_weights
from ..mechanisms import noise as noise_mod
from ..privacy.budget import DEFAULT_REFIT_SHARE
from ..design.codebook import as_bounds
from ..inference.fast_refit import BootstrapRefit
from ..scores import LeastSquaresScorer
from ..privacy.sensitivity import score_sensitivity
from ..search.exact import SubsetSearch, default_R
from ..inference.bootstrap import bootstrap_refits
from ..inference.budget import DEFAULT_INFERENCE_SHARE
from ..inference.moments import SimulationModel, before_clipping
from ..losses import SquaredLoss

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

    def plot(self, **kwargs):
        """Support recovery (and interval width) across the grid: a matplotlib Figure
        (:func:`dpsubset.results.plots.plan_plot`)."""
        from ..results.plots import plan_plot
        return plan_plot(self, **kwargs)

    def __repr__(self):
        need = (f"n >= {self.n_needed:g}" if self.n_needed is not None else
                f"eps >= {self.eps_needed:g}" if self.eps_needed is not None else
                "no setting of the grid meets the targets")
        return (f"Plan ({self.assumptions}):\n  needed: {need}\n"
                + self.table.to_string(index=False))


def _simulate(n, p, s, effects, noise, rho, col_bounds, b_y, rng):
    """Column j N(0, (c_j / 2)^2) with AR(1) correlation rho, clipped to [-c_j, c_j] (mapped
    units, c the columns' mapped bounds); the effects on the first s."""
    sd = np.asarray(col_bounds, dtype=float) / 2.0
    cov = np.outer(sd, sd) * rho ** np.abs(np.subtract.outer(np.arange(p), np.arange(p)))
    X = np.clip(noise_mod.multivariate_normal(rng, np.zeros(p), cov, n, "cholesky"), -col_bounds, col_bounds)
    beta = np.zeros(p)
    beta[:s] = effects
    y = np.clip(X @ beta + noise * noise_mod.normal(rng, n), -b_y, b_y)
    return X, y


def _p_true(X, y, *, s, eps_select, col_bounds, b_y, time_limit):
    """Exact P(top-R releases {0..s-1}) on one simulated data set (intercept always in)."""
    n, p = X.shape
    bounds = np.asarray(col_bounds, dtype=float)
    r = default_radius(bounds, b_y, s, [1.0], SquaredLoss.name, n=n, eps=eps_select)
    lam = default_lam(n, eps_select, SquaredLoss.name)
    scorer = LeastSquaresScorer(X, y, lam, r, forced=np.ones((n, 1)))
    Delta = score_sensitivity(bounds, b_y, r, s, [1.0], n)
    cands = SubsetSearch(scorer, s, time_limit=time_limit).top_r(min(default_R(p, s), math.comb(p, s)))
    logp = log_softmax(top_r_log_weights(cands, eps_select, Delta))
    for k, S in enumerate(np.asarray(cands.supports).tolist()):
        if sorted(S) == list(range(s)):
            return float(np.exp(logp[k]))
    return 0.0


def _width(X, y, *, s, eps_refit, col_bounds, scales, b_y, rng, draws=200):
    """Median 95 % width of the slopes when the true support is released (the refit and its
    bootstrap, with exact moments standing in for the noisy ones), and the share of refits
    on the ball's sphere.

    A release on the sphere gets intervals that reach beyond the ball, as far as least
    squares on the noisy moments (docs/methods/inference.md), far wider than the refit's
    spread; where more than half of the refits lie on the sphere the median width is that
    of such releases, which this does not simulate, and is returned as ``inf``.
    """
    n = X.shape[0]
    col_bounds = np.asarray(col_bounds, dtype=float)
    A = np.hstack([np.ones((n, 1)), X[:, :s]])
    bounds = np.concatenate([[1.0], col_bounds[:s]])
    r = default_radius(col_bounds, b_y, s, [1.0], SquaredLoss.name, n=n, eps=eps_refit)
    row_bound = largest_row_norm(col_bounds[:s], s, [1.0])

    # the release's own refit law (the exact-grid refit), batched as the bootstrap runs it
    refit = BootstrapRefit(loss=SquaredLoss.name, n=n, eps=eps_refit, row_bound=row_bound, b_y=b_y, r=r, delta=0.0,
                           loss_options={})
    # the bootstrap's truth is the least-squares fit of the simulated data (the assumed
    # model's coefficients up to sampling noise), not the refit: a truth outside the ball
    # must stay outside, or the share of releases whose ball binds is understated
    coef = np.linalg.lstsq(A, y, rcond=None)[0]
    resid = y - A @ coef
    Z = X[:, :s]
    # the simulation clips its Gaussian columns as a release's does: match the moments after
    # clipping (moments.before_clipping; without it the planned widths were about 8 % wide)
    mean, cov = before_clipping(Z.mean(axis=0), np.atleast_2d(np.cov(Z.T)), col_bounds[:s])
    model = SimulationModel(coef=coef, sigma2=float(resid @ resid / max(n - s - 1, 1)),
                            sigma2_floor=(b_y / 100) ** 2, rss_weights=np.zeros(1), noise_scale=0.0,
                            dof=max(n - s - 1, 1), mean=mean, cov=cov, intercept=True)
    thetas = bootstrap_refits(model, n, bounds, b_y, refit, draws=draws, rng=rng)
    binds = float(np.mean(np.linalg.norm(thetas, axis=1) >= r - refit.sphere_tolerance(thetas.shape[1])))
    lo, hi = np.quantile(thetas[:, 1:], [0.025, 0.975], axis=0)
    # mapped slopes to the columns' own units (scales: the response's over each column's)
    return (math.inf if binds > 0.5 else float(np.median((hi - lo) * scales[:s]))), binds


def _check_settings(*, p, s, effect, noise, r2, eps, n, rho, target_prob, target_width, inference, trials,
                    n_grid, eps_grid, time_limit):
    """Every setting of :func:`plan`, before any simulation: a ValueError naming the argument."""
    if (eps is None) == (n is None):
        raise ValueError("plan: give eps (to find the rows needed) or n (to find the eps needed), "
                         "not both")
    if (noise is None) == (r2 is None):
        raise ValueError("plan: give the assumed noise sd or the assumed r2, one of them")
    for name, v in (("p", p), ("s", s), ("trials", trials)):
        if not is_integer(v) or v < 1:
            raise ValueError(f"{name} must be a whole number >= 1, got {v!r}")
    if not 0 < s < p:
        raise ValueError(f"plan: need 0 < s < p, got s = {s}, p = {p}")
    effects = effect.values() if isinstance(effect, Mapping) else [effect]
    if not all(is_real(v) and math.isfinite(v) for v in effects):
        raise ValueError(f"effect must be a finite number (or, with a codebook, a dict of finite numbers "
                         f"by column), got {effect!r}")
    check_positive("noise", noise, allow_none=True)
    if r2 is not None and not (is_real(r2) and 0 < r2 < 1):
        raise ValueError(f"r2 must be in (0, 1), got {r2!r}")
    check_positive("eps", eps, allow_none=True)
    if n is not None and (not is_integer(n) or n < 2):
        raise ValueError(f"n must be a whole number of rows >= 2, got {n!r}")
    if not (is_real(rho) and -1 < rho < 1):
        raise ValueError(f"rho must be a correlation strictly between -1 and 1, got {rho!r}")
    if not (is_real(target_prob) and 0 < target_prob <= 1):
        raise ValueError(f"target_prob must be a probability in (0, 1], got {target_prob!r}")
    check_positive("target_width", target_width, allow_none=True)
    if not isinstance(inference, (bool, np.bool_)):
        raise TypeError(f"inference must be True or False, got {inference!r}")
    for v in n_grid or ():
        if not is_integer(v) or v < 2:
            raise ValueError(f"n_grid: every entry must be a whole number of rows >= 2, got {v!r}")
    for v in eps_grid or ():
        check_positive("eps_grid entries", v)
    check_positive("time_limit", time_limit)


@dataclass(frozen=True)
class _Mapped:
    """The assumed model in the release's mapped units (:func:`_mapped_model`)."""

    col_bounds: np.ndarray   # (p,) mapped bound of each candidate, the true ones first
    effects: np.ndarray      # (s,) mapped coefficients of the true columns
    y_scale: float           # response units per mapped unit
    b_y: float               # mapped bound of the response
    width_scales: np.ndarray  # (p,) a mapped slope's width to the column's units
    words: str               # the bounds, for the plan's assumptions


def _bound_map(v):
    """(mapped bound, units per mapped unit) of one codebook entry: a number b clips to
    [-b, b] without rescaling; an interval (lo, hi) is mapped onto [-1, 1]."""
    if isinstance(v, tuple):
        return 1.0, (v[1] - v[0]) / 2.0
    return float(v), 1.0


def _mapped_model(bounds, *, p, s, effect, response):
    """The candidates' and the response's public bounds and the assumed effects, mapped as a
    release maps them (docs/guide/sample-size.md, "Planning with a codebook")."""
    if isinstance(bounds, (tuple, list)) and len(bounds) == 2 and all(is_real(v) for v in bounds):
        b_x, b_y = (check_positive(f"bounds[{k}]", v) for k, v in enumerate(bounds))
        if isinstance(effect, Mapping):
            raise ValueError("effect: a dict of effects by column needs a codebook (bounds=Bounds(...) "
                             "naming those columns); with bounds=(b_x, b_y) give one number")
        return _Mapped(np.full(p, b_x), np.full(s, float(effect)), 1.0, b_y, np.ones(p), f"({b_x:g}, {b_y:g})")
    book = as_bounds(bounds)
    if book is None:
        raise ValueError("bounds: plan needs public bounds, (b_x, b_y) or the release's codebook (Bounds)")
    x = dict(book.x) if isinstance(book.x, Mapping) else {}
    y = book.y
    if y is None and response is not None and response in x:
        y = x.pop(response)
    if y is None:
        raise ValueError("bounds: the codebook has no bound of the response; give Bounds(y=...) or name "
                         "its entry with response=")
    if book.x is None and book.default is None:
        raise ValueError("bounds: the codebook bounds no column (x and default are None)")
    other = book.default if book.default is not None else (book.x if is_real(book.x) else 1.0)
    if isinstance(effect, Mapping):
        unknown = [c for c in effect if c not in x]
        if unknown or len(effect) != s:
            raise ValueError(f"effect: a dict needs exactly s = {s} columns named in the codebook; "
                             f"got {len(effect)}{', not in it: ' + ', '.join(map(str, unknown)) if unknown else ''}")
        true = dict(effect)
    else:
        true = {c: float(effect) for c in list(x)[:s]}
    names = list(true) + [c for c in x if c not in true]
    maps = [_bound_map(x[c]) for c in names[:p]] + [_bound_map(other)] * max(p - len(names), 0)
    col_bounds = np.array([m[0] for m in maps])
    halves = np.array([m[1] for m in maps])
    b_y, y_scale = _bound_map(y)
    given = np.array(list(true.values()) + [0.0 if isinstance(effect, Mapping) else float(effect)]
                     * (s - len(true)), dtype=float)
    shown = ", ".join(names[:s]) or "generic columns"
    return _Mapped(col_bounds, given * halves[:s] / y_scale, y_scale, b_y, y_scale / halves,
                   f"the codebook (true columns: {shown})")


def plan(*, p, s, effect, noise=None, r2=None, bounds=(1.0, 3.0), eps=None, n=None, rho=0.0,
         target_prob=0.9, target_width=None, inference=False, trials=3, n_grid=None, eps_grid=None,
         time_limit=120.0, random_state=0, response=None):
    """Rows or eps needed by a release (top-R, least squares, default split), from public inputs.

    Parameters
    ----------
    p, s : int
        Candidate columns and support size.
    effect : float or dict
        The assumed size of each of the s true coefficients (units of the response per
        unit of the column); with a codebook, a dict ``{column: coefficient}`` names the
        true columns (otherwise they are the codebook's first s columns).
    noise : float, optional
        The assumed error standard deviation (units of the response); or give ``r2``.
    r2 : float in (0, 1), optional
        The assumed R^2 of the true model instead of ``noise``.
    bounds : (b_x, b_y), Bounds or dict
        Public bounds: ``(b_x, b_y)`` clips every column to [-b_x, b_x] and the response
        to [-b_y, b_y]; or the codebook the release takes (a :class:`~dpsubset.Bounds`,
        or any form ``dp_best_subset(bounds=...)`` accepts), mapped as the release maps
        it: an interval onto [-1, 1], a number b clipped to [-b, b]. Candidates the
        codebook does not name take its ``default`` (else a scalar ``x``, else the
        bound 1 of a dummy).
    eps : float, optional
        Total budget; give it to find the rows needed.
    n : int, optional
        Rows; give it (instead of ``eps``) to find the eps needed.
    rho : float in (-1, 1)
        Correlation of adjacent columns (AR(1)).
    target_prob : float in (0, 1]
        Target probability that top-R releases the true support.
    target_width : float, optional
        Target median width of the slopes' 95 % intervals (``inference=True``), in the
        columns' units.
    inference : bool
        Plan for a release with ``inference=True``: the selection and the refit then
        share ``(1 - DEFAULT_INFERENCE_SHARE) eps``. Implied by ``target_width``.
    trials : int >= 1
        Simulated data sets per grid point.
    n_grid, eps_grid : sequence, optional
        The grid searched (defaults from 250 to 100,000 rows; eps from 0.25 to 32).
    time_limit : float
        Seconds for each exact search.
    random_state : int
    response : str, optional
        The codebook entry of the response, when the codebook is a plain dict whose
        response is one of its entries (``Bounds(y=...)`` needs none).

    Returns
    -------
    Plan

    Raises
    ------
    ValueError
        A setting out of its range, named (before any simulation).
    """
    _check_settings(p=p, s=s, effect=effect, noise=noise, r2=r2, eps=eps, n=n, rho=rho,
                    target_prob=target_prob, target_width=target_width, inference=inference, trials=trials,
                    n_grid=n_grid, eps_grid=eps_grid, time_limit=time_limit)
    model = _mapped_model(bounds, p=p, s=s, effect=effect, response=response)
    c, e = model.col_bounds, model.effects
    if noise is None:  # before clipping: columns of sd c / 2, adjacent ones correlated rho
        signal_var = float(np.sum((e * c[:s] / 2) ** 2) + 2 * rho * np.sum(e[:-1] * e[1:] * c[:s - 1] * c[1:s] / 4))
        noise_m = math.sqrt(signal_var * (1 - r2) / r2)
    else:
        noise_m = float(noise) / model.y_scale
    rng = noise_mod.child_generator(random_state)
    # the part of eps the selection and the refit share (the default split of a release)
    rest = 1.0 - (DEFAULT_INFERENCE_SHARE if inference or target_width is not None else 0.0)
    ns = [int(n)] if n is not None else list(n_grid or _GRID_N)
    epss = [float(eps)] if eps is not None else list(eps_grid or _GRID_EPS)
    rows = []
    for size in ns:
        data = [_simulate(size, p, s, e, noise_m, rho, c, model.b_y, rng) for _ in range(trials)]
        for ep in epss:
            eps_select = (1 - DEFAULT_REFIT_SHARE) * rest * ep
            probs = [_p_true(X, y, s=s, eps_select=eps_select, col_bounds=c, b_y=model.b_y,
                             time_limit=time_limit) for X, y in data]
            row = dict(n=size, eps=ep, p_true_support=float(np.mean(probs)))
            if target_width is not None:
                row["median_width"], row["p_ball_binds"] = _width(
                    *data[0], s=s, eps_refit=DEFAULT_REFIT_SHARE * rest * ep, col_bounds=c,
                    scales=model.width_scales, b_y=model.b_y, rng=rng)
            rows.append(row)
        if eps is not None and _meets(rows[-1], target_prob, target_width):
            break  # the smallest n of the grid that meets the targets
    table = pd.DataFrame(rows)
    ok = table[[_meets(r, target_prob, target_width) for r in rows]]
    n_needed = float(ok["n"].min()) if eps is not None and len(ok) else None
    eps_needed = float(ok["eps"].min()) if n is not None and len(ok) else None
    shown_effect = (", ".join(f"{k} {v:g}" for k, v in effect.items()) if isinstance(effect, Mapping)
                    else f"{effect:g}")
    assumptions = (f"p = {p}, s = {s}, effect {shown_effect}, noise sd {noise_m * model.y_scale:.3g}, "
                   f"rho {rho:g}, bounds {model.words}, top-R with the default split, {trials} simulated "
                   f"data sets per point; target P(true support) >= {target_prob:g}"
                   + ("" if target_width is None else f", median width <= {target_width:g}"))
    return Plan(table=table, n_needed=n_needed, eps_needed=eps_needed, assumptions=assumptions)


def _meets(row, target_prob, target_width):
    return row["p_true_support"] >= target_prob and (
        target_width is None or row.get("median_width", math.inf) <= target_width)
