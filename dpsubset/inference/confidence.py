"""Private confidence bounds on the probability that the selection released the best support.

For top-R (and the exponential mechanism) the probability of releasing the best-scoring
support S_1 is ``P(S_1) = 1 / (1 + sum_{S != S_1} exp(-eps g_S / (2 Delta)))`` with
``g_S = c(S) - c(S_1)``. Two gaps of the top of the list bound it from both sides:

* every other support is at least ``g_2 = c(S_2) - c(S_1)`` behind, so
  ``P(S_1) >= 1 / (1 + (N - 1) exp(-eps g_2 / (2 Delta)))`` with N = C(p, s);
* the M - 1 other supports of the list are at most ``g_K = c(S_K) - c(S_1)`` behind (K the
  list's last; for top-R every support outside the list is scored as S_R, so M = N), so
  ``P(S_1) <= 1 / (1 + (M - 1) exp(-eps g_K / (2 Delta)))``.

Under replace-one each order statistic of the scores moves by at most Delta, so each gap
moves by at most 2 Delta and the pair (g_2, g_K) by 4 Delta in L1: Laplace(4 Delta / eps_c)
noise on each is eps_c-DP. A one-sided 97.5 % bound on each gap (``g~ -+ b ln 20``) put into
the inequalities gives a lower and an upper bound on P(S_1) that hold together with
probability 0.95; the rest is post-processing. docs/methods/inference.md.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["SelectionConfidence", "selection_confidence", "verdict", "lower_probability", "TRUSTED",
           "UNTRUSTED"]

#: A lower bound on P(best support) at or above this: the release can be trusted.
TRUSTED = 0.9
#: Bounds below this: the mechanism releases another support more often than not (upper
#: bound), or nothing shows that it does not (lower bound).
UNTRUSTED = 0.5


def verdict(prob_lower, prob_upper):
    """The bounds in words (the same four sentences for every release).

    The release is trusted only when the lower bound shows that the mechanism releases
    the best-scoring support reliably; when nothing shows that it does so even more
    often than not, it is not to be trusted, whether the upper bound proves the
    opposite or the budget cannot tell.
    """
    if prob_lower >= TRUSTED:
        return "can be trusted: the mechanism releases the best-scoring support with high probability"
    if prob_upper < UNTRUSTED:
        return ("NOT to be trusted: the mechanism releases another support than the best-scoring "
                "one more often than not (more rows, a larger eps or a smaller s would help: dps.plan)")
    if prob_lower < UNTRUSTED:
        return ("NOT to be trusted: nothing shows that the mechanism releases the best-scoring "
                "support even half the time (more rows or a larger eps would help, dps.plan; a "
                "larger eps_inference sharpens the bounds)")
    return ("uncertain: the mechanism releases the best-scoring support more often than not, "
            "but not reliably")


@dataclass(frozen=True)
class SelectionConfidence:
    """The released selection confidence (public numbers and words only).

    Attributes
    ----------
    prob_lower, prob_upper : float
        Confidence bounds on the probability that the selection mechanism, run on
        these data, releases the best-scoring support (jointly at ``level``).
    level : float
        Joint confidence level of the two bounds (0.95).
    eps : float
        Budget spent on the two noisy gaps.
    statement : str
    """

    prob_lower: float
    prob_upper: float
    level: float
    eps: float
    statement: str

    def __str__(self):
        return (f"P(best-scoring support released) in [{self.prob_lower:.3g}, {self.prob_upper:.3g}] "
                f"({self.level:.0%} confidence): {self.statement}")


def _log_comb(p, s):
    return math.lgamma(p + 1) - math.lgamma(s + 1) - math.lgamma(p - s + 1)


def _probability(gap, others, eps_mech, Delta):
    """``1 / (1 + others * exp(-eps_mech * gap / (2 Delta)))``, overflow-free."""
    if others <= 0:
        return 1.0
    z = math.log(others) - eps_mech * max(gap, 0.0) / (2.0 * Delta)
    return float(np.exp(-np.logaddexp(0.0, z)))


def lower_probability(gap_lower, *, eps_mech, Delta, p, s):
    """``1 / (1 + (C(p, s) - 1) exp(-eps_mech * gap / (2 Delta)))``."""
    lc = _log_comb(p, s)
    return _probability(gap_lower, math.expm1(lc) if lc < 700 else math.exp(700), eps_mech, Delta)


def selection_confidence(scores, *, eps_mech, Delta, p, s, eps, rng, outside_as_last=True,
                         level=0.95):
    """Two noisy gaps of the top of the list and the bounds on P(best support) they give.

    Parameters
    ----------
    scores : array_like
        The exact scores of the top of the list, best (smallest) first. Read only
        through the gaps of the second and of the last to the best.
    eps_mech : float
        Budget of the selection mechanism whose probability is bounded.
    Delta : float
        Sensitivity of every score (public).
    p, s : int
        Candidates and support size (public).
    eps : float
        Budget of the two noisy gaps (> 0).
    rng : numpy.random.Generator
    outside_as_last : bool
        True for top-R, where every support outside the list is scored as its last;
        False when the list is a prefix of the ranking (the exponential mechanism).
    level : float
        Joint confidence level of the two bounds.

    Returns
    -------
    SelectionConfidence
    """
    scores = np.asarray(scores, dtype=float)
    g2 = float(scores[1] - scores[0]) if scores.size >= 2 else 0.0
    g_last = float(scores[-1] - scores[0])
    scale = 4.0 * Delta / eps  # the pair moves by at most 4 Delta in L1
    noisy2, noisy_last = g2 + rng.laplace(0.0, scale), g_last + rng.laplace(0.0, scale)
    # P(Laplace(b) > t) = exp(-t / b) / 2; each side at (1 - level) / 2
    margin = scale * math.log(1.0 / (1.0 - level))
    lower = lower_probability(noisy2 - margin, eps_mech=eps_mech, Delta=Delta, p=p, s=s)
    lc = _log_comb(p, s)
    others = (math.expm1(lc) if lc < 700 else math.exp(700)) if outside_as_last else scores.size - 1
    upper = _probability(noisy_last + margin, others, eps_mech, Delta)
    upper = max(upper, lower)
    return SelectionConfidence(prob_lower=lower, prob_upper=upper, level=level, eps=float(eps),
                               statement=verdict(lower, upper))
