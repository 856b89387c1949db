"""A private lower confidence bound on the probability that the selection released the best support.

For top-R (and the exponential mechanism it becomes when R = C(p, s)) the probability of
releasing the best-scoring support S_1 is

    P(S_1) = 1 / sum_S exp(-eps (c(S) - c(S_1)) / (2 Delta))
           >= 1 / (1 + (N - 1) exp(-eps g / (2 Delta))),

with N = C(p, s) supports, and g = c(S_2) - c(S_1) the gap between the two best scores
(every support outside the top-R list is scored as c(S_R) >= c(S_2)). Under replace-one each
order statistic of the scores moves by at most Delta, so g moves by at most 2 Delta: a
Laplace(2 Delta / eps_c) noisy gap is eps_c-DP, and ``g_noisy - (2 Delta / eps_c) ln(1 / (2 a))``
is a (1 - a) lower confidence bound on g. Putting it into the bound gives a (1 - a) lower
confidence bound on P(S_1); the rest is post-processing. docs/methods/inference.md.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["SelectionConfidence", "selection_confidence", "verdict", "TRUSTED", "UNCERTAIN"]

#: A lower bound on P(best support) at or above this: the release can be trusted.
TRUSTED = 0.9
#: Below this the mechanism more likely released another support: not to be trusted.
UNCERTAIN = 0.5


def verdict(prob_lower):
    """The lower bound in words (the same three sentences for every release)."""
    if prob_lower >= TRUSTED:
        return "can be trusted: the mechanism releases the best-scoring support with high probability"
    if prob_lower >= UNCERTAIN:
        return ("uncertain: the mechanism may well have released another support than the "
                "best-scoring one")
    return ("NOT to be trusted: the mechanism may release another support than the best-scoring "
            "one more often than not (more rows, a larger eps or a smaller s would help: dps.plan)")


@dataclass(frozen=True)
class SelectionConfidence:
    """The released selection confidence (public numbers and words only).

    Attributes
    ----------
    prob_lower : float
        Lower confidence bound on the probability that the selection mechanism,
        run on these data, releases the best-scoring support.
    level : float
        Confidence level of the bound (0.95).
    eps : float
        Budget spent on the noisy gap.
    statement : str
    """

    prob_lower: float
    level: float
    eps: float
    statement: str

    def __str__(self):
        return (f"P(best-scoring support released) >= {self.prob_lower:.3g} "
                f"({self.level:.0%} lower bound): {self.statement}")


def _log_comb(p, s):
    return math.lgamma(p + 1) - math.lgamma(s + 1) - math.lgamma(p - s + 1)


def lower_probability(gap_lower, *, eps_mech, Delta, p, s):
    """``1 / (1 + (C(p, s) - 1) exp(-eps_mech * gap / (2 Delta)))``, overflow-free."""
    log_others = math.log(math.expm1(_log_comb(p, s))) if _log_comb(p, s) < 700 else _log_comb(p, s)
    z = log_others - eps_mech * max(gap_lower, 0.0) / (2.0 * Delta)
    return float(np.exp(-np.logaddexp(0.0, z)))


def selection_confidence(scores, *, eps_mech, Delta, p, s, eps, rng, level=0.95):
    """The noisy top gap and the lower confidence bound it gives (eps-DP in the gap).

    Parameters
    ----------
    scores : array_like
        The exact scores of the top of the list, best (smallest) first. Read only
        through the gap of the two best.
    eps_mech : float
        Budget of the selection mechanism whose probability is bounded.
    Delta : float
        Sensitivity of every score (public).
    p, s : int
        Candidates and support size (public).
    eps : float
        Budget of the noisy gap (> 0).
    rng : numpy.random.Generator
    level : float
        Confidence level of the bound.

    Returns
    -------
    SelectionConfidence
    """
    scores = np.asarray(scores, dtype=float)
    gap = float(scores[1] - scores[0]) if scores.size >= 2 else 0.0
    scale = 2.0 * Delta / eps
    noisy = gap + rng.laplace(0.0, scale)
    # P(Laplace(b) > t) = exp(-t / b) / 2: the lower bound holds with probability `level`
    gap_lower = noisy - scale * math.log(1.0 / (2.0 * (1.0 - level)))
    prob = lower_probability(gap_lower, eps_mech=eps_mech, Delta=Delta, p=p, s=s)
    return SelectionConfidence(prob_lower=prob, level=level, eps=float(eps), statement=verdict(prob))
