"""``method="peeling"``: DP iterative hard thresholding with private peeling.

Cai, Wang and Zhang (2021, Annals of Statistics), "The cost of privacy": their
noisy iterative hard thresholding for sparse linear regression, minimax rate-optimal
up to logarithms. From beta^0 = 0, for t = 0, ..., T - 1:

1. a gradient step on the least-squares loss (1 / 2n) ||y - F gamma - X beta||^2
   (F the always-in columns: the intercept and ``keep=``; their coefficients gamma
   are carried in the same vector),
   ``v = beta^t - eta * grad``;
2. **peeling**: s rounds of report-noisy-max, each picking the not yet chosen
   candidate column with the largest ``|v_j| + w_ij``, w i.i.d. Laplace(b);
3. the new iterate is v on the peeled columns and the always-in ones plus fresh
   Laplace(b) noise, zero elsewhere, projected on the l2 ball of radius r.

The released support is the last peeling's s columns. The package's data are
clipped to public bounds (the paper's truncation of y at R is the clip at b_y), so
no further truncation is needed.

Sensitivity under row replacement (public bounds)
-------------------------------------------------
Every iterate is supported on the always-in columns plus at most s candidates and
lies in the l2 ball of radius r, so one row's fitted value is at most
r sqrt(B_s) in size (B_s as in :func:`dpsubset.privacy.sensitivity.largest_row_norm`) and its
residual at most b_y + r sqrt(B_s). Its contribution to coordinate j of the gradient
is (residual) x_j / n, of size at most b_j (b_y + r sqrt(B_s)) / n; replacing the row
moves it by at most twice that. So every coordinate of v moves by at most

    lambda = 2 eta b_max (b_y + r sqrt(B_s)) / n,

b_max the largest bound of a candidate or always-in column.
``tests/audit/test_peeling_audit.py`` finds this value by brute force at rows on
the corners of the box, and catches the add/remove value (half of it).

Accounting
----------
Each iteration runs s report-noisy-max steps on scores |v_j| of sensitivity lambda
(each (2 lambda / b)-DP: Laplace noise, scores not monotone) and k + s Laplace
releases of coordinates of sensitivity lambda (each (lambda / b)-DP). The scale b
of all T (2 s + k) steps is set by :func:`.composition.calibrate_steps`: zCDP
composition (Bun and Steinke 2016) at the call's delta, or basic composition when
that needs less noise (then the guarantee is pure). Cai et al. instead give each
iteration (eps / T, delta / T) and peeling the scale 2 lambda sqrt(3 s log(1/delta)) / eps
by advanced composition, which needs eps small against log(1/delta); the accounting
here holds for every eps and never adds more noise to first order.

delta defaults to min(1e-6, 1 / n^2): never weaker than the package's other delta
default (the gap test's) and always far below 1 / n; n is public under row
replacement.
"""
from __future__ import annotations

import math

import numpy as np

from ..._validation import is_integer, is_real
from ...privacy.sensitivity import largest_row_norm
from ...privacy.budget import Stage
from ..base import DEFAULT_DELTA, Selection, SelectionMethod, register_method
from ...mechanisms.noise import laplace_release
from .composition import calibrate_steps, resolve_delta
from ...losses import SquaredLoss

__all__ = ["peeling_sensitivity", "peeling_weights", "peel", "noisy_iht", "validate_peeling",
           "select_peeling", "DEFAULT_ITERATIONS", "DEFAULT_STEP"]

#: Iterations T by default. Cai et al. take T of order log n; every iteration adds noise, and
#: on the paper's data two iterations recovered the support at the smallest n of a grid of
#: 2 to 10 (docs/benchmarks/peers.md, "Defaults of the peers").
DEFAULT_ITERATIONS = 2
#: Step size eta, in units of 1 / b_max^2 (the same measurement).
DEFAULT_STEP = 1.0

_OPTIONS = ("iterations", "step", "delta")
_NOT_USED = {
    "R": "R is the list length of top-R; peeling has no candidate list",
    "eps0": "eps0 is the gap-test budget of method='mistakes'",
}


def peeling_sensitivity(x_bounds, forced_bounds, b_y, r, s, n, step) -> float:
    """lambda = 2 eta b_max (b_y + r sqrt(B_s)) / n: the l_inf sensitivity of one gradient step.

    Parameters
    ----------
    x_bounds, forced_bounds : array_like
        Public bounds of the candidate and always-in columns (mapped units).
    b_y : float
    r : float
        Radius of the l2 ball the iterates are projected on.
    s, n : int
    step : float
        The step size eta.
    """
    b = np.concatenate([np.asarray(x_bounds, float).ravel(), np.asarray(forced_bounds, float).ravel()])
    reach = largest_row_norm(x_bounds, s, forced_bounds)
    return 2.0 * step * float(b.max()) * (b_y + r * reach) / n


def peeling_weights(iterations, s, k, lam) -> np.ndarray:
    """Privacy weights a_i of every step (loss a_i / b): 2 lambda per noisy max, lambda per release."""
    per_iteration = [2.0 * lam] * s + [lam] * (s + k)
    return np.tile(per_iteration, iterations)


def peel(v, s, scale, rng):
    """s rounds of report-noisy-max on |v| with Laplace(scale) noise, without replacement.

    One draw of all s x p Laplace variates (a single Generator call).

    Returns
    -------
    ndarray of int, shape (s,)
        The peeled indices, in the order they were chosen.
    """
    v = np.abs(np.asarray(v, dtype=float))
    taken = np.zeros(v.size, dtype=bool)
    chosen = np.empty(s, dtype=np.intp)
    for i in range(s):
        score = np.where(taken, -np.inf, laplace_release(v, scale, rng))  # exact, fresh each round
        chosen[i] = int(np.argmax(score))
        taken[chosen[i]] = True
    return chosen


def noisy_iht(X, y, forced, *, s, r, step, iterations, scale, rng):
    """Cai, Wang and Zhang's noisy IHT with peeling; ``scale=0`` runs it without noise.

    Parameters
    ----------
    X : ndarray, shape (n, p)
        Clipped candidate columns.
    y : ndarray, shape (n,)
    forced : ndarray, shape (n, k)
        Always-in columns (never peeled, always released with noise).
    s, r, step, iterations : as in the module docstring.
    scale : float
        Laplace scale b of every step (0: the non-private iteration, for diagnostics).
    rng : numpy.random.Generator

    Returns
    -------
    support : ndarray of int, shape (s,)
        The last peeling's columns, sorted.
    beta : ndarray, shape (k + p,)
        The last iterate (always-in coefficients first).
    """
    n, p = X.shape
    k = forced.shape[1]
    Z = np.hstack([forced, X]) if k else X
    beta = np.zeros(k + p)
    support = np.arange(s)
    for _ in range(iterations):
        v = beta - step * (Z.T @ (Z @ beta - y)) / n
        if scale > 0:
            support = peel(v[k:], s, scale, rng)
        else:
            support = np.argsort(-np.abs(v[k:]), kind="stable")[:s]
        keep = np.concatenate([np.arange(k), k + support])
        beta = np.zeros(k + p)
        beta[keep] = laplace_release(v[keep], scale, rng) if scale > 0 else v[keep]
        norm = float(np.linalg.norm(beta))
        if norm > r:  # the projection on the ball keeps the next step's sensitivity at lambda
            beta *= r / norm
    return np.sort(support), beta


def validate_peeling(options, *, s, eps, loss):
    """Check ``iterations``, ``step`` and ``delta`` before any data are read."""
    opts = dict(options)
    for key in list(opts):
        if key in _NOT_USED:
            raise ValueError(f"method='peeling' does not use {key}: {_NOT_USED[key]}")
    T = opts.pop("iterations", DEFAULT_ITERATIONS)
    if is_real(T) and float(T).is_integer():
        T = int(T)
    if not is_integer(T) or not 1 <= T <= 10_000:
        raise ValueError(f"method_options['iterations'] must be an integer in 1..10000 "
                         f"(default {DEFAULT_ITERATIONS}), got {T!r}")
    step = opts.pop("step", DEFAULT_STEP)
    if not is_real(step) or not (0 < step < math.inf):
        raise ValueError(f"method_options['step'] must be a number > 0, in units of 1 / b_max^2 "
                         f"(default {DEFAULT_STEP}), got {step!r}")
    delta = opts.pop("delta", None)
    if delta is not None and (not is_real(delta) or not 0 < delta < 0.5):
        raise ValueError(f"delta must be a number in (0, 0.5), much smaller than 1/n "
                         f"(default min(1e-6, 1/n^2)); got {delta!r}")
    if opts:
        raise TypeError(f"method='peeling' got unknown options {sorted(opts)}; it takes {list(_OPTIONS)}")
    return dict(iterations=T, step=float(step), delta=None if delta is None else float(delta))


def peeling_plan(design, s, r, eps, options):
    """(step eta, lambda, StepNoise) of a call, from public numbers only."""
    b_max = float(np.max(np.concatenate([design.x_bounds, design.forced_bounds])))
    eta = options["step"] / b_max ** 2
    lam = peeling_sensitivity(design.x_bounds, design.forced_bounds, design.b_y, r, s, design.n, eta)
    k = len(design.forced_bounds)
    delta = resolve_delta(options["delta"], design.n, DEFAULT_DELTA)
    noise = calibrate_steps(peeling_weights(options["iterations"], s, k, lam), eps, delta)
    return eta, lam, noise


def select_peeling(req) -> Selection:
    """Run the noisy IHT and release its last peeled support."""
    d, opts = req.design, req.options
    eta, lam, noise = peeling_plan(d, req.s, req.r, req.eps, opts)
    T = opts["iterations"]
    support, _ = noisy_iht(d.X, d.y, d.forced, s=req.s, r=req.r, step=eta, iterations=T,
                           scale=noise.scale, rng=req.rng)
    req.ledger.spend(Stage.SELECTION, f"DP iterative hard thresholding with peeling ({T} iterations, "
                     f"Laplace scale {noise.scale:.3g}, {noise.theorem})", noise.eps, noise.delta,
                     guarantee=noise.guarantee)
    # Non-private: the same iteration without noise.
    plain, _ = noisy_iht(d.X, d.y, d.forced, s=req.s, r=req.r, step=eta, iterations=T, scale=0.0,
                         rng=req.rng)
    return Selection(support=tuple(int(j) for j in support), sensitivity=lam, certificates=[],
                     diagnostics=dict(best_support=[d.spec.candidate_names[j] for j in plain]))


register_method(SelectionMethod(
    name="peeling", select=select_peeling, validate=validate_peeling, losses=(SquaredLoss.name,),
    description="DP iterative hard thresholding with private peeling (Cai, Wang and Zhang 2021): "
                "(eps, delta)-DP by zCDP composition, or pure eps-DP when basic composition "
                "needs less noise"))
