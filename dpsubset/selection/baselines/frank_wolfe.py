"""``method="frank_wolfe"``: private Frank-Wolfe over the l1 ball.

Talwar, Thakurta and Zhang (2015), "Nearly optimal private LASSO", Algorithm 1: the
Frank-Wolfe (conditional gradient) method for least squares over the l1 ball of
radius C, with the linear step made private. From theta_0 = 0, for t = 0, ..., T - 1:

1. the gradient g = (1/n) Z'(Z theta_t - y) (Z = [always-in columns, candidates]);
2. the ball's 2m vertices are +-C e_j; the score of vertex u is <u, g> and the step
   takes the vertex with the smallest score plus Laplace(b) noise (report-noisy-max
   over 2m candidates);
3. theta_{t+1} = (1 - mu_t) theta_t + mu_t u_t with mu_t = 2 / (t + 2).

The support is read off the last iterate: the s candidate columns with the largest
|theta_T,j| (ties and columns never chosen broken by a uniformly random order, a
public draw), so it always has exactly s columns even when fewer than s vertices
were chosen. Everything after the noisy choices is post-processing of them.

Sensitivity under row replacement (public bounds)
-------------------------------------------------
Every iterate is a convex combination of vertices, so ||theta_t||_1 <= C and one
row's fitted value is at most C b_max (b_max the largest column bound, always-in
columns included). Its gradient coordinate is (fitted - y) x_j / n, at most
b_j (b_y + C b_max) / n in size; replacing the row moves the score C g_j of a vertex
by at most

    Delta = 2 C b_max (b_y + C b_max) / n.

``tests/audit/test_frank_wolfe_audit.py`` finds this by brute force at rows on the
corners of the box and catches half of it.

Accounting
----------
Each of the T steps is report-noisy-max with Laplace noise on scores of sensitivity
Delta, (2 Delta / b)-DP. The scale b is set by :func:`.composition.calibrate_steps`:
zCDP composition at the call's delta (Talwar et al. use advanced composition, scale
Delta sqrt(8 T log(1/delta)) / eps up to their constant), or basic composition,
which makes the method **pure** eps-DP, when that needs less noise. Basic
composition wins exactly when T <= (sqrt(L + eps) + sqrt(L))^2 / 2, L = log(1/delta),
so for every eps when T <= 2 L: the default T = s + 2 is pure for s <= 25 at
delta <= 1e-6 (docs/methods/selection.md). The report says which.

The default radius is C = A / b_max with A = r sqrt(B_s), the largest prediction of the
selection's l2 ball of radius r (the package's default r, or ``r=``): on the l1 ball of
radius C no row's prediction exceeds A either, so both peers and top-R work with the same
largest prediction (A = b_y up to n eps = 20,000, growing above; dpsubset/defaults.py).
delta defaults to min(1e-6, 1 / n^2), as for ``peeling``.
"""
from __future__ import annotations

import math

import numpy as np

from ..._validation import is_integer, is_real
from ...privacy.sensitivity import largest_row_norm
from ...privacy.budget import Stage
from ..base import DEFAULT_DELTA, Selection, SelectionMethod, register_method
from ...mechanisms.noise import laplace_release, permutation
from .composition import calibrate_steps, resolve_delta
from ...losses import SquaredLoss

__all__ = ["frank_wolfe_sensitivity", "private_frank_wolfe", "support_of", "validate_frank_wolfe",
           "select_frank_wolfe", "default_iterations"]

_OPTIONS = ("iterations", "radius", "delta")
_NOT_USED = {
    "R": "R is the list length of top-R; Frank-Wolfe has no candidate list",
    "eps0": "eps0 is the gap-test budget of method='mistakes'",
}


def default_iterations(s: int) -> int:
    """T = s + 2: enough steps to visit s columns and correct one or two wrong ones; more steps
    mean more noise per step (measured on the paper's data, docs/benchmarks/peers.md)."""
    return s + 2


def frank_wolfe_sensitivity(x_bounds, forced_bounds, b_y, C, n) -> float:
    """Delta = 2 C b_max (b_y + C b_max) / n: sensitivity of every vertex score."""
    b = np.concatenate([np.asarray(x_bounds, float).ravel(), np.asarray(forced_bounds, float).ravel()])
    b_max = float(b.max())
    return 2.0 * C * b_max * (b_y + C * b_max) / n


def private_frank_wolfe(X, y, forced, *, C, iterations, scale, rng):
    """Talwar et al.'s noisy Frank-Wolfe; ``scale=0`` runs it without noise.

    Parameters
    ----------
    X : ndarray, shape (n, p)
    y : ndarray, shape (n,)
    forced : ndarray, shape (n, k)
        Always-in columns (vertices too: their coefficients are fitted, never selected).
    C : float
        l1 radius.
    iterations : int
    scale : float
        Laplace scale of the vertex scores (0: non-private).
    rng : numpy.random.Generator

    Returns
    -------
    theta : ndarray, shape (k + p,)
        The last iterate (always-in coefficients first).
    """
    n, p = X.shape
    k = forced.shape[1]
    Z = np.hstack([forced, X]) if k else X
    m = k + p
    theta = np.zeros(m)
    for t in range(iterations):
        g = Z.T @ (Z @ theta - y) / n
        scores = np.concatenate([C * g, -C * g])       # vertex +C e_j, then -C e_j
        if scale > 0:
            scores = laplace_release(scores, scale, rng)
        best = int(np.argmin(scores))
        vertex = np.zeros(m)
        vertex[best % m] = C if best < m else -C
        mu = 2.0 / (t + 2.0)
        theta = (1.0 - mu) * theta + mu * vertex
    return theta


def support_of(theta_candidates, s, rng):
    """The s columns with the largest |theta_j|; ties (and zeros) by a uniformly random order."""
    a = np.abs(np.asarray(theta_candidates, dtype=float))
    tie_break = permutation(a.size, rng)
    order = np.lexsort((tie_break, -a))
    return np.sort(order[:s])


def validate_frank_wolfe(options, *, s, eps, loss):
    """Check ``iterations``, ``radius`` and ``delta`` before any data are read."""
    opts = dict(options)
    for key in list(opts):
        if key in _NOT_USED:
            raise ValueError(f"method='frank_wolfe' does not use {key}: {_NOT_USED[key]}")
    T = opts.pop("iterations", default_iterations(s))
    if is_real(T) and float(T).is_integer():
        T = int(T)
    if not is_integer(T) or not 1 <= T <= 100_000:
        raise ValueError(f"method_options['iterations'] must be an integer in 1..100000 "
                         f"(default s + 2 = {default_iterations(s)}), got {T!r}")
    C = opts.pop("radius", None)
    if C is not None and (not is_real(C) or not 0 < C < math.inf):
        raise ValueError(f"method_options['radius'] (the l1 radius, mapped units) must be a number "
                         f"> 0 (default r sqrt(B_s) / b_max), got {C!r}")
    delta = opts.pop("delta", None)
    if delta is not None and (not is_real(delta) or not 0 < delta < 0.5):
        raise ValueError(f"delta must be a number in (0, 0.5), much smaller than 1/n "
                         f"(default min(1e-6, 1/n^2)); got {delta!r}")
    if opts:
        raise TypeError(f"method='frank_wolfe' got unknown options {sorted(opts)}; "
                        f"it takes {list(_OPTIONS)}")
    return dict(iterations=T, radius=None if C is None else float(C),
                delta=None if delta is None else float(delta))


def frank_wolfe_plan(design, s, r, eps, options):
    """(C, Delta, StepNoise) of a call, from public numbers only (r: the selection's l2 radius)."""
    b_max = float(np.max(np.concatenate([design.x_bounds, design.forced_bounds])))
    A = r * largest_row_norm(design.x_bounds, s, design.forced_bounds)
    C = options["radius"] if options["radius"] is not None else A / b_max
    Delta = frank_wolfe_sensitivity(design.x_bounds, design.forced_bounds, design.b_y, C, design.n)
    delta = resolve_delta(options["delta"], design.n, DEFAULT_DELTA)
    noise = calibrate_steps(np.full(options["iterations"], 2.0 * Delta), eps, delta)
    return C, Delta, noise


def select_frank_wolfe(req) -> Selection:
    """Run the noisy Frank-Wolfe and release the s largest coefficients' columns."""
    d, opts = req.design, req.options
    C, Delta, noise = frank_wolfe_plan(d, req.s, req.r, req.eps, opts)
    T = opts["iterations"]
    k = d.forced.shape[1]
    theta = private_frank_wolfe(d.X, d.y, d.forced, C=C, iterations=T, scale=noise.scale, rng=req.rng)
    support = support_of(theta[k:], req.s, req.rng)
    req.ledger.spend(Stage.SELECTION, f"private Frank-Wolfe over the l1 ball of radius {C:.3g} ({T} steps, "
                     f"Laplace scale {noise.scale:.3g}, {noise.theorem})", noise.eps, noise.delta,
                     guarantee=noise.guarantee)
    # Non-private: the same iteration without noise.
    plain = private_frank_wolfe(d.X, d.y, d.forced, C=C, iterations=T, scale=0.0, rng=req.rng)
    best = np.argsort(-np.abs(plain[k:]), kind="stable")[:req.s]
    return Selection(support=tuple(int(j) for j in support), sensitivity=Delta, certificates=[],
                     diagnostics=dict(best_support=[d.spec.candidate_names[j] for j in np.sort(best)]))


register_method(SelectionMethod(
    name="frank_wolfe", select=select_frank_wolfe, validate=validate_frank_wolfe, losses=(SquaredLoss.name,),
    description="private Frank-Wolfe over the l1 ball (Talwar, Thakurta and Zhang 2015), support "
                "read off the last iterate: pure eps-DP by basic composition or (eps, delta)-DP "
                "by zCDP, whichever needs less noise"))
