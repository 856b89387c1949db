"""Exact, overflow-free sampling for exponential-mechanism style draws.

Every selection mechanism in this package ends with the same step: pick one
class k out of a short list with probability proportional to

    w_k = m_k * exp(-eps * c_k / (2 * Delta)),

where c_k is a score (smaller is better) and m_k >= 1 is the number of supports
that share that score. m_k can be C(p, s), which for p = 10**5 does not fit in a
float, and eps * c_k / (2 Delta) can be in the thousands, so w_k is never formed.
Instead (docs/methods/selection.md, "Sampling safely"):

* :func:`log_weights` computes log w_k, taking log m_k from the exact integer;
* :func:`gumbel_max` (from :mod:`dpsubset.mechanisms.noise`) draws k as
  argmax_k (log w_k + G_k), G_k i.i.d. standard Gumbel, with the G_k exact reals
  known to as many random bits as the comparison needs: exactly the softmax
  distribution of the float log-weights, and no overflow;
* :func:`log_softmax` gives that same distribution in closed form.

The sampler and the exact distribution are fed by the same log-weights, so a
statistical test that the sampler matches :func:`log_softmax` also checks the
distribution that the privacy audits in ``tests/audit`` examine.

This module also holds the two uniform draws the mechanisms need once a class
has been chosen (:func:`uniform_support_outside`, :func:`uniform_member_of_class`).
Nothing here looks at data; the functions see scores, multiplicities and a
random generator only.
"""
from __future__ import annotations

import math
from numbers import Integral

import numpy as np

from . import noise
from .noise import as_generator, gumbel_max

__all__ = [
    "as_generator",
    "log_multiplicity",
    "log_weights",
    "gumbel_max",
    "log_softmax",
    "uniform_support_outside",
    "uniform_member_of_class",
]


def log_multiplicity(m) -> float:
    """log(m) for an exact integer m >= 1, however large.

    ``math.log`` accepts Python ints of any size, so C(100000, 8) ~ 4e34 or
    C(10000, 500) ~ 1e886 cost nothing and lose nothing; converting to float
    first would overflow (or silently round) instead.
    """
    if isinstance(m, (bool, np.bool_)) or not isinstance(m, Integral):
        raise TypeError(f"multiplicity must be an integer, not {type(m).__name__}")
    m = int(m)
    if m < 1:
        raise ValueError(f"multiplicity must be >= 1, got {m}")
    return math.log(m)


def log_weights(scores, eps: float, Delta: float, multiplicities=None) -> np.ndarray:
    """Log-weights log(m_k) - eps * c_k / (2 Delta) of an exponential-mechanism draw.

    This is the single place where the mechanisms turn scores into weights; both
    the samplers and the exact distributions used by the audits call it.

    Parameters
    ----------
    scores : array_like, shape (K,)
        Scores c_k (smaller is better), finite.
    eps : float
        Privacy parameter of the draw (> 0).
    Delta : float
        Sensitivity of the scores under row replacement (> 0).
    multiplicities : sequence of int, optional
        Exact integer multiplicities m_k >= 1 (Python ints of any size). Default 1.

    Returns
    -------
    ndarray, shape (K,)
        Finite log-weights.

    Notes
    -----
    Privacy: with m_k fixed in advance (not data-dependent) and every c_k of
    sensitivity Delta, the draw over the classes is eps-DP (McSherry and Talwar
    2007); whether a particular mechanism meets those conditions is stated by
    that mechanism.
    """
    c = np.asarray(scores, dtype=float).ravel()
    if not (eps > 0 and math.isfinite(eps)):
        raise ValueError(f"eps must be positive and finite, got {eps}")
    if not (Delta > 0 and math.isfinite(Delta)):
        raise ValueError(f"Delta must be positive and finite, got {Delta}")
    if not np.all(np.isfinite(c)):
        raise ValueError("scores must be finite")
    lw = -(eps / (2.0 * Delta)) * c
    if multiplicities is not None:
        mult = list(multiplicities)
        if len(mult) != len(c):
            raise ValueError(f"{len(mult)} multiplicities for {len(c)} scores")
        lw = lw + np.array([log_multiplicity(m) for m in mult], dtype=float)
    return lw


def log_softmax(log_w) -> np.ndarray:
    """Exact log-probabilities of the draw made by :func:`gumbel_max` on ``log_w``.

    Returns
    -------
    ndarray, shape (K,)
        log_w - logsumexp(log_w), computed stably.
    """
    lw = np.asarray(log_w, dtype=float).ravel()
    top = np.max(lw)
    if not np.isfinite(top):
        raise ValueError("at least one log-weight must be finite")
    shifted = lw - top
    return shifted - math.log(float(np.sum(np.exp(shifted))))


# ---------------------------------------------------------------------------
# Uniform draws inside a chosen class
# ---------------------------------------------------------------------------

_random_subset = noise.uniform_subset  # a uniformly random size-s subset of range(p), sorted


# Below this many supports, and when most of them are excluded, the complement is
# listed and one member drawn directly; rejection would need about C/(C - R) tries.
_DIRECT_LIMIT = 100_000


def uniform_support_outside(p: int, s: int, excluded_supports, rng: np.random.Generator,
                            max_tries: int | None = None) -> np.ndarray:
    """A uniformly random size-s subset of range(p) that is not among ``excluded_supports``.

    This is the release step of class R + 1 in top-R (Algorithm 1 of the paper with
    T = infinity): every support other than S_1..S_R is equally likely.

    Parameters
    ----------
    p, s : int
    excluded_supports : array_like, shape (R, s)
        Supports that must not be returned (each row a set of indices; order
        within a row does not matter). Must be distinct.
    rng : numpy.random.Generator
    max_tries : int, optional
        Safety cap on rejection rounds (default: effectively unbounded,
        1000 times the expected number). Never reached in practice.

    Returns
    -------
    ndarray, shape (s,)
        Sorted indices.

    Notes
    -----
    Rejection sampling: draw uniform subsets until one is not excluded. Conditioned
    on acceptance the draw is uniform on the complement, and the expected number
    of tries is C(p, s) / (C(p, s) - R). When more than half of a small support
    space is excluded, the complement is listed and sampled directly instead
    (also exactly uniform, and no slower than rejection).
    """
    total = math.comb(p, s)
    rows = np.sort(np.asarray(excluded_supports, dtype=np.int64).reshape(-1, s), axis=1)
    excl = set(map(tuple, rows.tolist()))
    n_excl = len(excl)
    if n_excl >= total:
        raise ValueError("every support is excluded; there is nothing to draw")
    if 2 * n_excl > total and total <= _DIRECT_LIMIT:
        from itertools import combinations
        rest = [c for c in combinations(range(p), s) if c not in excl]
        return np.array(rest[int(noise.uniform_integers(len(rest), rng))], dtype=np.intp)
    if max_tries is None:
        max_tries = 1000 * (total // (total - n_excl) + 1)
    for _ in range(max_tries):
        cand = _random_subset(p, s, rng)
        if tuple(cand.tolist()) not in excl:
            return cand
    raise RuntimeError("rejection sampling did not terminate (this should not happen)")


def uniform_member_of_class(center, k: int, p: int, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random support with exactly k elements outside ``center``.

    This is the release step of the mistakes mechanism: drop k uniformly chosen
    elements of the centre support and add k uniformly chosen elements of its
    complement. Every member of P_k (there are C(s, k) C(p - s, k) of them) arises
    from exactly one (drop, add) pair, and each pair is equally likely, so the
    result is uniform on P_k.

    Parameters
    ----------
    center : array_like, shape (s,)
        The centre support S~_0 (indices in range(p)).
    k : int
        Number of mistakes, 0 <= k <= min(s, p - s).
    p : int
    rng : numpy.random.Generator

    Returns
    -------
    ndarray, shape (s,)
        Sorted indices.
    """
    center = np.unique(np.asarray(center, dtype=np.intp))
    s = len(center)
    if not 0 <= k <= min(s, p - s):
        raise ValueError(f"k = {k} mistakes is impossible with s = {s}, p = {p}")
    keep_mask = np.ones(s, dtype=bool)
    keep_mask[noise.uniform_subset(s, k, rng)] = False
    outside_mask = np.ones(p, dtype=bool)
    outside_mask[center] = False
    outside = np.flatnonzero(outside_mask)
    added = outside[noise.uniform_subset(len(outside), k, rng)]
    return np.sort(np.concatenate([center[keep_mask], added])).astype(np.intp)
