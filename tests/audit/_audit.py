"""Helpers for the exact privacy audits (docs/methods/selection.md, "How the claims are tested").

An audit takes a small dataset D (few columns, so every support can be listed),
builds neighbours D' by replacing one row, computes the exact candidates of both
by enumeration, and compares the exact output distributions of a mechanism:

* pure eps-DP:   max_S |log P_D(S) - log P_D'(S)| <= eps;
* (eps, delta):  sum_S max(0, P_D(S) - e^eps P_D'(S)) <= delta, both directions.

Neighbours come from random rows, rows at the corners of the clipping box and a
small coordinate search that maximises the privacy loss.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from dpsubset.mechanisms import (mistakes_distribution, ptr_distribution, ptr_pass_probability,
                                 top_r_distribution)
from dpsubset.scores.least_squares import LeastSquaresScorer
from dpsubset.privacy.sensitivity import score_sensitivity
from dpsubset.search.candidates import TopRCandidates
from dpsubset.search.enumeration import mistakes_by_enumeration, top_r_by_enumeration


# --------------------------------------------------------------------------- divergences

def max_abs_log_ratio(log_p, log_q) -> float:
    """max_S |log P(S) - log Q(S)| over a finite output space (pure-DP loss)."""
    return float(np.max(np.abs(np.asarray(log_p) - np.asarray(log_q))))


def hockey_stick(p, q, eps: float) -> float:
    """Exact hockey-stick divergence sum_S max(0, P(S) - e^eps Q(S)).

    A mechanism is (eps, delta)-DP on the pair exactly when this is <= delta in
    both directions.
    """
    return float(np.sum(np.maximum(0.0, np.asarray(p) - math.exp(eps) * np.asarray(q))))


def two_sided_hockey_stick(p, q, eps: float) -> float:
    return max(hockey_stick(p, q, eps), hockey_stick(q, p, eps))


# --------------------------------------------------------------------------- settings

@dataclass(frozen=True)
class Setting:
    """Public parameters of an audit problem (scalar bounds, forced intercept)."""

    n: int
    p: int
    s: int
    b_x: float = 1.0
    b_y: float = 1.0
    r: float = 1.0
    lam: float = 1.0

    @property
    def Delta(self) -> float:
        return score_sensitivity([self.b_x] * self.p, self.b_y, self.r, self.s,
                           forced_bounds=(1.0,), n=self.n)

    @property
    def n_supports(self) -> int:
        return math.comb(self.p, self.s)

    @property
    def default_R(self) -> int:
        """The paper's default R = 2 + (p - s) s."""
        return min(2 + (self.p - self.s) * self.s, self.n_supports)

    def clip(self, X, y):
        return (np.clip(np.asarray(X, dtype=float), -self.b_x, self.b_x),
                np.clip(np.asarray(y, dtype=float), -self.b_y, self.b_y))


class Evaluated:
    """A dataset with its exact candidates (full ranking and mistake classes)."""

    def __init__(self, setting: Setting, X, y):
        self.setting = setting
        self.X, self.y = setting.clip(X, y)
        scorer = LeastSquaresScorer(self.X, self.y, setting.lam, setting.r,
                                    forced=np.ones((setting.n, 1)))
        # The full ranking; every top-R list is a prefix of it.
        self.ranking = top_r_by_enumeration(scorer, setting.s, setting.n_supports)
        self.mistakes = mistakes_by_enumeration(scorer, setting.s)

    @property
    def gap(self) -> float:
        return self.mistakes.gap

    @property
    def gap_ratio(self) -> float:
        """gap / (2 Delta); the mistakes condition of Theorem 2 is gap_ratio > 1."""
        return self.gap / (2.0 * self.setting.Delta)

    def top_r(self, R: int) -> TopRCandidates:
        st = self.setting
        return TopRCandidates(self.ranking.supports[:R], self.ranking.scores[:R], st.p, st.s)

    # Exact distributions are memoised: the search compares one base dataset with
    # thousands of neighbours.
    def _memo(self, key, compute):
        cache = self.__dict__.setdefault("_cache", {})
        if key not in cache:
            cache[key] = compute()
        return cache[key]

    def logp_top_r(self, eps, R):
        return self._memo(("top_r", eps, R), lambda: top_r_distribution(
            self.top_r(R), eps, self.setting.Delta, log=True))

    def logp_mistakes(self, eps):
        return self._memo(("mistakes", eps), lambda: mistakes_distribution(
            self.mistakes, eps, self.setting.Delta, log=True))

    def p_ptr(self, eps, eps0, delta, R):
        return self._memo(("ptr", eps, eps0, delta, R), lambda: ptr_distribution(
            self.top_r(R), self.mistakes, eps, eps0, delta, self.setting.Delta))

    def pass_probability(self, eps0, delta):
        return ptr_pass_probability(self.gap, self.setting.Delta, eps0, delta)

    def neighbour(self, i, x_row, y_val) -> "Evaluated":
        """D' = D with row i replaced by (x_row, y_val) (clipped to the bounds)."""
        X2, y2 = self.X.copy(), self.y.copy()
        X2[i], y2[i] = x_row, y_val
        return Evaluated(self.setting, X2, y2)


# --------------------------------------------------------------------------- neighbours

def random_row(setting: Setting, rng):
    return (rng.uniform(-setting.b_x, setting.b_x, setting.p),
            float(rng.uniform(-setting.b_y, setting.b_y)))


def corner_row(setting: Setting, rng):
    return (setting.b_x * rng.choice([-1.0, 1.0], setting.p),
            float(setting.b_y * rng.choice([-1.0, 1.0])))


def random_neighbours(base: Evaluated, rng, k: int, corners: bool = False):
    """k neighbours of ``base``: a random row replaced by a random (or corner) row."""
    make = corner_row if corners else random_row
    out = []
    for _ in range(k):
        i = int(rng.integers(base.setting.n))
        out.append(base.neighbour(i, *make(base.setting, rng)))
    return out


def adversarial_search(base: Evaluated, objective, rng, restarts: int = 24, passes: int = 2,
                       grid: int = 5, row_moves: int = 10):
    """Maximise objective(base, D') over neighbours D' of ``base``.

    Random restarts (a random replaced row, a corner or random replacement) and
    coordinate moves: each entry of the replacement row in turn is set to the best
    of ``grid`` equally spaced values within its bound, and the replaced row is
    moved to the best of ``row_moves`` other rows.

    Returns
    -------
    best_value : float
    best : Evaluated
        The worst neighbour found.
    """
    st = base.setting
    xs = np.linspace(-st.b_x, st.b_x, grid)
    ys = np.linspace(-st.b_y, st.b_y, grid)
    best_value, best = -np.inf, None
    for rs in range(restarts):
        i = int(rng.integers(st.n))
        x, yv = (corner_row if rs % 2 == 0 else random_row)(st, rng)
        cur = base.neighbour(i, x, yv)
        val = objective(base, cur)
        for _ in range(passes):
            for j in range(st.p + 1):
                for v in (ys if j == st.p else xs):
                    x2, y2 = x.copy(), yv
                    if j == st.p:
                        y2 = float(v)
                    else:
                        x2[j] = v
                    cand = base.neighbour(i, x2, y2)
                    cv = objective(base, cand)
                    if cv > val:
                        val, cur, x, yv = cv, cand, x2, y2
            for i2 in rng.choice(st.n, size=min(row_moves, st.n), replace=False):
                cand = base.neighbour(int(i2), x, yv)
                cv = objective(base, cand)
                if cv > val:
                    val, cur, i = cv, cand, int(i2)
        if val > best_value:
            best_value, best = val, cur
    return best_value, best


# --------------------------------------------------------------------------- datasets

def signal_data(setting: Setting, seed: int, coefs=(0.5, 0.5), proxy_flips: int | None = None,
                binary: bool = True):
    """y = (sum_j coefs[j] x_j) b_y / b_x, clipped; the remaining columns are noise.

    Parameters
    ----------
    coefs : sequence of float
        Weights of the first len(coefs) columns (in units of the bounds).
    proxy_flips : int, optional
        If given, column 2 is a copy of column 1 with that many entries flipped,
        so that {0, 1} and {0, 2} nearly tie and the gap condition of mistakes fails.
    binary : bool
        Entries +-b_x (corners of the box) instead of uniform in [-b_x, b_x].
    """
    rng = np.random.default_rng(seed)
    n, p = setting.n, setting.p
    if binary:
        X = setting.b_x * rng.choice([-1.0, 1.0], (n, p))
    else:
        X = rng.uniform(-setting.b_x, setting.b_x, (n, p))
    if proxy_flips is not None:
        X[:, 2] = X[:, 1]
        X[rng.choice(n, proxy_flips, replace=False), 2] *= -1
    y = X[:, :len(coefs)] @ np.asarray(coefs, dtype=float) / setting.b_x * setting.b_y
    return setting.clip(X, y)


def tune_gap(setting: Setting, seed: int, target: float, coef0: float = 0.5,
             tol: float = 0.01, binary: bool = True) -> Evaluated:
    """A dataset whose gap / (2 Delta) lies in [target, target + tol].

    Bisection on the weight c1 of the second signal column in
    y = coef0 x_0 + c1 x_1: with c1 = 0 the supports {0, j} tie (gap 0), and the
    gap grows with c1. Raises if the target is out of reach for this setting.
    """
    lo, hi = 0.0, coef0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        ev = Evaluated(setting, *signal_data(setting, seed, coefs=(coef0, mid), binary=binary))
        if ev.gap_ratio < target:
            lo = mid
        elif ev.gap_ratio > target + tol:
            hi = mid
        else:
            return ev
    raise RuntimeError(f"could not reach gap / (2 Delta) = {target} (last {ev.gap_ratio})")
