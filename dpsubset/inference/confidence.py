"""Private confidence bounds on the probability that the selection released the best support.

For top-R (and the exponential mechanism) the probability of releasing the best-scoring
support S_1 is a logistic function of one number, its log-odds

    L = -log sum_{S != S_1} m_S exp(-eps_mech g_S / (2 Delta)),   g_S = c(S) - c(S_1),
    P(S_1) = 1 / (1 + exp(-L)),

with m_S the multiplicity of a class (top-R scores the C(p, s) - R supports outside its
list as its last). L is a log-sum-exp of the relative log-weights ``-eps_mech g_k /
(2 Delta)``; under replace-one every order statistic of the scores moves by at most
Delta, so every gap to the best by at most 2 Delta, every relative log-weight by at most
eps_mech, and L by at most eps_mech (log-sum-exp is 1-Lipschitz in the largest
coordinate's move). Laplace(eps_mech / eps_c) noise on L is therefore eps_c-DP, and
``L~ -+ (eps_mech / eps_c) ln 20`` is a 95 % confidence interval for L; its image under
the logistic function bounds P(S_1). Everything after the one noisy number is
post-processing. docs/methods/inference.md, "The selection confidence".

When the list is a prefix of the ranking of fewer than all supports (the exponential
mechanism's diagnostics), L is only bracketed: the supports outside the list score at
least as badly as the list's last, which gives a lower end (all of them at the last's
score) and an upper end (none of them counted). Both have sensitivity eps_mech; they are
released together with noise of scale 2 eps_mech / eps_c each.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, logsumexp

from ..mechanisms.noise import laplace_release

__all__ = ["SelectionConfidence", "selection_confidence", "verdict", "best_support_log_odds",
           "TRUSTED", "UNTRUSTED"]

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
        Budget spent on the noisy log-odds.
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


def best_support_log_odds(scores, *, eps_mech, Delta, p, s, outside_as_last=True):
    """The log-odds of releasing the best-scoring support, or its bracket.

    Parameters
    ----------
    scores : array_like
        The exact scores of the top of the list, best (smallest) first.
    eps_mech, Delta : float
        Budget and sensitivity of the selection mechanism.
    p, s : int
        Candidates and support size: N = C(p, s) supports in all.
    outside_as_last : bool
        True for top-R (every support outside the list is scored as its last: L is
        exact); False when the list is a prefix of the ranking.

    Returns
    -------
    (float, float)
        ``(lower, upper)`` ends of L; equal when L is exact. ``+inf`` when the best
        support is the only one.
    """
    scores = np.sort(np.asarray(scores, dtype=float))
    K = int(scores.size)
    if K < 1:
        raise ValueError("the selection confidence needs the best support's score")
    outside = math.comb(int(p), int(s)) - K  # exact integers: C(p, s) can exceed a float
    # relative log-weights of the other listed supports; the best's is 0
    rel = -eps_mech * (scores[1:] - scores[0]) / (2.0 * Delta)
    listed = float(logsumexp(rel)) if rel.size else -math.inf
    if outside <= 0:  # the list holds every support
        return (-listed, -listed)
    last = rel[-1] if rel.size else 0.0
    with_outside = float(np.logaddexp(listed, math.log(outside) + last))
    if outside_as_last:
        return (-with_outside, -with_outside)
    return (-with_outside, -listed)


def selection_confidence(scores, *, eps_mech, Delta, p, s, eps, rng, outside_as_last=True,
                         level=0.95):
    """The noisy log-odds of releasing the best support and the bounds on P(S_1) it gives.

    Parameters
    ----------
    scores : array_like
        The exact scores of the top of the list, best (smallest) first. Read only
        through :func:`best_support_log_odds`.
    eps_mech : float
        Budget of the selection mechanism whose probability is bounded.
    Delta : float
        Sensitivity of every score (public).
    p, s : int
        Candidates and support size (public).
    eps : float
        Budget of the noisy log-odds (> 0).
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
    lo, hi = best_support_log_odds(scores, eps_mech=eps_mech, Delta=Delta, p=p, s=s,
                                   outside_as_last=outside_as_last)
    if math.isinf(lo):  # one support only: nothing to estimate, nothing spent on the data
        return SelectionConfidence(prob_lower=1.0, prob_upper=1.0, level=level, eps=float(eps),
                                   statement=verdict(1.0, 1.0))
    alpha = 1.0 - level
    if lo == hi:
        # one statistic of sensitivity eps_mech; P(|Laplace(b)| > t) = exp(-t / b)
        scale = eps_mech / eps
        noisy = laplace_release(lo, scale, rng)
        margin = scale * math.log(1.0 / alpha)
        low_end, high_end = noisy - margin, noisy + margin
    else:
        # the bracket's two ends, each of sensitivity eps_mech: L1 2 eps_mech together;
        # one-sided at alpha / 2 each, P(Laplace(b) > t) = exp(-t / b) / 2
        scale = 2.0 * eps_mech / eps
        margin = scale * math.log(1.0 / alpha)
        low_end = laplace_release(lo, scale, rng) - margin
        high_end = laplace_release(hi, scale, rng) + margin
    lower = float(expit(low_end))
    upper = max(float(expit(high_end)), lower)
    return SelectionConfidence(prob_lower=lower, prob_upper=upper, level=level, eps=float(eps),
                               statement=verdict(lower, upper))
