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

The verdict of a top-R release reads a second number that costs nothing: the selection's
**free gap** (Ding, Wang, Zhang and Kifer 2019 show it for report-noisy-max; here for the
Gumbel-max form of the exponential mechanism). Top-R draws the released support S as the
argmax of ``u_T + Gumbel`` over all supports T (``u`` the log-weights of the truncated
scores); the gap G between the winner's perturbed log-weight and the best of the others'
is, given S, logistic with location L_S (the log-odds of releasing S) and scale 1,
truncated to G > 0. The joint density of (S, G) is ``phi(G - L_S)`` (phi the logistic
density), whose log moves by at most ``|L_S - L'_S| <= eps_mech`` between neighbours: the
pair is eps_mech-DP, as S alone is, so G is released at no extra cost. The verdict "can be
trusted" is the test ``G >= ln 40``: wherever the best support's probability is below one
half, it passes with probability at most ``sum_T sigma(L_T - ln 40) <= 2 / 40 = 0.05``.

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

from ..mechanisms.noise import laplace_release, uniform

__all__ = ["SelectionConfidence", "selection_confidence", "verdict", "best_support_log_odds",
           "TRUSTED", "UNTRUSTED", "GAP_THRESHOLD", "released_log_odds", "free_gap", "gap_verdict",
           "trusted_probability"]

#: A lower bound on P(best support) at or above this: the release can be trusted.
TRUSTED = 0.9
#: Bounds below this: the mechanism releases another support more often than not (upper
#: bound), or nothing shows that it does not (lower bound).
UNTRUSTED = 0.5


#: The free gap at or above this: "can be trusted". ln 40 keeps the verdict's false
#: "trusted" rate at or below 5 % wherever the best support's probability is below one half
#: (docs/methods/inference.md, "The free gap").
GAP_THRESHOLD = math.log(40.0)


def released_log_odds(scores, released, *, eps_mech, Delta, p, s):
    """The log-odds L_S that top-R releases the support it released (exact scores, top-R's law).

    Parameters
    ----------
    scores : array_like
        The exact scores of top-R's list, best (smallest) first.
    released : int
        Position of the released support in the list, or ``len(scores)`` (or more) for a
        support outside it (scored as the list's last, as top-R scores it).
    eps_mech, Delta : float
    p, s : int

    Returns
    -------
    float
        ``u_S - log sum_{T != S} exp(u_T)`` over all C(p, s) supports (``+inf`` when S is
        the only one).
    """
    scores = np.sort(np.asarray(scores, dtype=float))
    R = int(scores.size)
    outside = math.comb(int(p), int(s)) - R
    u = -eps_mech * (scores - scores[0]) / (2.0 * Delta)  # relative log-weights
    if released >= R:  # one support of the remainder class, scored as the list's last
        if outside < 1:
            raise ValueError("released: the list holds every support; no support lies outside it")
        others = [float(logsumexp(u))] + ([math.log(outside - 1) + u[-1]] if outside > 1 else [])
        return float(u[-1] - logsumexp(others))
    rest = np.delete(u, released)
    others = ([float(logsumexp(rest))] if rest.size else []) + (
        [math.log(outside) + u[-1]] if outside > 0 else [])
    return math.inf if not others else float(u[released] - logsumexp(others))


def free_gap(log_odds, rng):
    """One draw of the free gap given the released support: logistic(L_S, 1) truncated to
    (0, inf), by inversion of its distribution function (the law of the Gumbel-max gap)."""
    if math.isinf(log_odds):
        return math.inf
    # sigma(G - L) = sigma(-L) + u sigma(L), u uniform on [0, 1): G = L + logit of that, in logs
    # (log sigma(x) = -logaddexp(0, -x); no cancellation for large |L|, finite at u = 0)
    u = float(uniform(rng))  # floating point, like the refit's noise (docs/guide/privacy-caveats.md)
    log_x = np.logaddexp(-np.logaddexp(0.0, log_odds),
                         -np.logaddexp(0.0, -log_odds) + (math.log(u) if u > 0.0 else -math.inf))
    return float(log_odds + log_x + np.logaddexp(0.0, -log_odds) - math.log1p(-u))


def trusted_probability(scores, *, eps_mech, Delta, p, s, threshold=None):
    """The exact probability that a top-R release's verdict says "can be trusted":
    ``sum_T sigma(L_T - threshold)`` over all supports (for the benchmarks and tests: it
    reads the exact scores, NOT private)."""
    t = GAP_THRESHOLD if threshold is None else float(threshold)
    scores = np.sort(np.asarray(scores, dtype=float))
    R = int(scores.size)
    outside = math.comb(int(p), int(s)) - R
    total = sum(float(expit(released_log_odds(scores, k, eps_mech=eps_mech, Delta=Delta, p=p, s=s) - t))
                for k in range(R))
    if outside > 0:
        L_out = released_log_odds(scores, R, eps_mech=eps_mech, Delta=Delta, p=p, s=s)
        total += float(np.exp(math.log(outside) + np.log(expit(L_out - t))))
    return min(total, 1.0)


def gap_verdict(gap, prob_upper):
    """The verdict of a top-R release in words: the free gap decides "can be trusted"; the
    paid upper bound "NOT to be trusted"; otherwise the budget cannot tell."""
    if gap >= GAP_THRESHOLD:
        return ("can be trusted: the selection's own draw shows that the mechanism releases the "
                "best-scoring support more often than not here (a test at the 5 % level)")
    if prob_upper < UNTRUSTED:
        return ("NOT to be trusted: evidence that the mechanism releases another support than the "
                "best-scoring one more often than not (more rows, a larger eps or a smaller s would "
                "help: dps.plan)")
    return ("not shown: this budget cannot tell whether the mechanism releases the best-scoring "
            "support reliably (more rows or a larger eps would sharpen it, dps.plan)")


def verdict(prob_lower, prob_upper):
    """The bounds in words (the same four sentences for every release).

    For the exponential mechanism (top-R reads the free gap, :func:`gap_verdict`). The
    release is trusted only when the lower bound shows that the mechanism releases the
    best-scoring support reliably; "NOT to be trusted" is evidence against (the upper
    bound below one half); "not shown" says that the budget cannot tell.
    """
    if prob_lower >= TRUSTED:
        return "can be trusted: the mechanism releases the best-scoring support with high probability"
    if prob_upper < UNTRUSTED:
        return ("NOT to be trusted: the mechanism releases another support than the best-scoring "
                "one more often than not (more rows, a larger eps or a smaller s would help: dps.plan)")
    if prob_lower < UNTRUSTED:
        return ("not shown: this budget cannot tell whether the mechanism releases the best-scoring "
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
    gap : float or None
        Top-R: the selection's free gap G (released with the support at no extra cost);
        the verdict says "can be trusted" when it is at least :data:`GAP_THRESHOLD`. None
        for the exponential mechanism, whose verdict reads the bounds alone.
    """

    prob_lower: float
    prob_upper: float
    level: float
    eps: float
    statement: str
    gap: float = None

    def __str__(self):
        gap = "" if self.gap is None else f" [selection's gap {self.gap:.3g}; trusted from {GAP_THRESHOLD:.3g}]"
        return (f"P(best-scoring support released) in [{self.prob_lower:.3g}, {self.prob_upper:.3g}] "
                f"({self.level:.0%} confidence): {self.statement}{gap}")


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
                         level=0.95, released=None):
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
    released : int, optional
        Top-R: the released support's position in the list (``len(scores)`` for one
        outside it); with it the free gap is drawn and decides "can be trusted".

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
    if released is None or not outside_as_last:
        return SelectionConfidence(prob_lower=lower, prob_upper=upper, level=level, eps=float(eps),
                                   statement=verdict(lower, upper))
    # the free gap: part of the selection's eps_mech-DP output (module docstring)
    gap = free_gap(released_log_odds(scores, released, eps_mech=eps_mech, Delta=Delta, p=p, s=s), rng)
    return SelectionConfidence(prob_lower=lower, prob_upper=upper, level=level, eps=float(eps),
                               statement=gap_verdict(gap, upper), gap=gap)
