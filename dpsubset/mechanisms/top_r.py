"""Top-R mechanism (Algorithm 1 of the paper, with T = infinity).

Given the R best supports S_1, ..., S_R of the data (exactly, in order), top-R is
the exponential mechanism run on the truncated score

    c^(S) = c(S)      if S is one of S_1..S_R,
    c^(S) = c(S_R)    otherwise,

i.e. every support outside the list is scored as if it were as good as the R-th
one. That truncated score has sensitivity Delta under row replacement (each order
statistic of the scores moves by at most Delta), so the draw is pure eps-DP. It is
carried out on R + 1 classes: class k <= R is {S_k} with log-weight
-eps c(S_k)/(2 Delta); class R + 1 holds the C(p, s) - R remaining supports, all
with weight exp(-eps c(S_R)/(2 Delta)), and is released as a uniform member of
that set (rejection sampling never gives up, which is T = infinity in the paper).

When R = C(p, s) there is no class R + 1 and this is the plain exponential
mechanism over all supports, also pure eps-DP.

Requirements for the guarantee (docs/methods/selection.md, "Top-R"):

* S_1..S_R are exactly the R best supports (ties broken by a fixed,
  data-independent order); a heuristic list voids the guarantee;
* R is fixed in advance, not chosen from the data;
* Delta is the row-replacement sensitivity of every score, computed from public
  bounds on clipped data.

The functions here see only the candidates, eps, Delta and a random generator.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .sampling import (gumbel_max, log_multiplicity, log_softmax, log_weights,
                       uniform_support_outside)

__all__ = ["GUARANTEE", "top_r_log_weights", "sample_top_r", "top_r_distribution"]

# Key into dpsubset.privacy.leaks.GUARANTEES.
GUARANTEE = "pure"


def top_r_log_weights(cands, eps: float, Delta: float) -> np.ndarray:
    """Log-weights of the R (+ 1) classes of top-R.

    Parameters
    ----------
    cands : TopRCandidates
        The exact R best supports and their scores, best first.
    eps : float
        Privacy budget of this draw.
    Delta : float
        Row-replacement sensitivity of the scores.

    Returns
    -------
    ndarray, shape (R + 1,) or (R,) when R = C(p, s)
        Entry k < R is -eps c(S_{k+1}) / (2 Delta); the last entry (if present)
        is log(C(p, s) - R) - eps c(S_R) / (2 Delta).

    Notes
    -----
    Guarantee: the induced draw is pure eps-DP provided the candidates are
    exactly the R best supports and R is fixed independently of the data
    (Theorem 1 of the paper with T = infinity).
    """
    scores = np.asarray(cands.scores, dtype=float)
    R = len(scores)
    total = math.comb(cands.p, cands.s)
    if R < 1:
        raise ValueError("top-R needs at least one candidate support")
    if R > total:
        raise ValueError(f"R = {R} exceeds the number of supports C(p, s) = {total}")
    lw = log_weights(scores, eps, Delta)
    if R == total:
        return lw
    # The remainder class: C(p, s) - R supports, each scored as S_R. Its
    # multiplicity is an exact integer whose log is taken without floats.
    return np.append(lw, lw[-1] + log_multiplicity(total - R))


def sample_top_r(cands, eps: float, Delta: float, rng: np.random.Generator) -> np.ndarray:
    """Release one support by top-R.

    Parameters
    ----------
    cands : TopRCandidates
    eps, Delta : float
    rng : numpy.random.Generator

    Returns
    -------
    ndarray, shape (s,)
        The released support, sorted.

    Notes
    -----
    Guarantee: pure eps-DP when the candidates are exactly the R best supports and
    R is fixed in advance (Theorem 1 with T = infinity). The output distribution is
    :func:`top_r_distribution`.
    """
    a = gumbel_max(top_r_log_weights(cands, eps, Delta), rng)
    if a < cands.R:
        return np.array(cands.supports[a], dtype=np.intp)
    return uniform_support_outside(cands.p, cands.s, cands.supports, rng)


@lru_cache(maxsize=8)
def _support_index(p: int, s: int) -> dict:
    """Map from a sorted support tuple to its row in ``all_supports(p, s)``.

    Cached: audits call the exact distribution thousands of times on one (p, s).
    """
    from ..search.enumeration import all_supports
    return {tuple(row): j for j, row in enumerate(all_supports(p, s).tolist())}


def top_r_distribution(cands, eps: float, Delta: float, *, log: bool = False) -> np.ndarray:
    """Exact output distribution of :func:`sample_top_r` over all supports.

    For small problems only (it lists all C(p, s) supports); used by the audits.

    Parameters
    ----------
    cands : TopRCandidates
    eps, Delta : float
    log : bool
        Return log-probabilities instead of probabilities (no underflow).

    Returns
    -------
    ndarray, shape (C(p, s),)
        Probabilities in the lexicographic order of
        ``dpsubset.search.enumeration.all_supports(p, s)``.
    """
    lp = log_softmax(top_r_log_weights(cands, eps, Delta))
    index = _support_index(cands.p, cands.s)
    R, total = cands.R, len(index)
    out = np.empty(total)
    if R < total:
        # Each support outside the list gets an equal share of class R + 1.
        out.fill(lp[R] - log_multiplicity(total - R))
    for k, row in enumerate(np.asarray(cands.supports).tolist()):
        out[index[tuple(sorted(row))]] = lp[k]
    return out if log else np.exp(out)
