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
pair is eps_mech-DP, as S alone is, so G costs nothing. The verdict "can be trusted" is
the test ``G >= t(L~)``, a threshold that falls as the noisy log-odds L~ rises
(:func:`gap_rule`: a public step rule, Neyman-Pearson at P(S_1) = 0.97 against the worst
null); only the test's outcome is drawn (an exact Bernoulli given S), never G. Wherever
the best support's probability is below one half it passes with probability at most
``sum_k P(L~ in step k | L = 0) 2 / (1 + exp(t_k)) <= 0.05``
(docs/methods/inference.md, "The free gap (top-R)").

When the list is a prefix of the ranking of fewer than all supports (the exponential
mechanism's diagnostics), L is only bracketed: the supports outside the list score at
least as badly as the list's last, which gives a lower end (all of them at the last's
score) and an upper end (none of them counted). Both have sensitivity eps_mech; they are
released together with noise of scale 2 eps_mech / eps_c each.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, logsumexp

from ..mechanisms.noise import bernoulli, laplace_release, laplace_release_sf

__all__ = ["SelectionConfidence", "selection_confidence", "verdict", "best_support_log_odds",
           "TRUSTED", "UNTRUSTED", "FALSE_TRUST", "ALTERNATIVE_LOG_ODDS", "GapRule", "gap_rule",
           "released_log_odds", "gap_passes", "gap_verdict", "trusted_probability"]

#: A lower bound on P(best support) at or above this: the release can be trusted.
TRUSTED = 0.9
#: Bounds below this: the mechanism releases another support more often than not (upper
#: bound), or nothing shows that it does not (lower bound).
UNTRUSTED = 0.5


#: The verdict says "can be trusted" at most this often wherever the best support is
#: released less than half the time, whatever the data (docs/methods/inference.md, "The verdict").
FALSE_TRUST = 0.05
#: The log-odds of the best support at which the verdict's rule is made most powerful
#: (P(S_1) = 0.97): the rule is tuned where the issue's cells, P(S_1) in [0.9, 1), are hardest.
ALTERNATIVE_LOG_ODDS = 3.5
#: Steps of the rule's threshold as a function of the noisy log-odds, over [0, ALTERNATIVE].
RULE_STEPS = 8
#: The threshold's grid (nats); a threshold is never below 0 (the size bound needs t >= 0).
_T_GRID = np.linspace(0.0, 20.0, 4001)


@dataclass(frozen=True)
class GapRule:
    """The verdict's public rule: "can be trusted" when the free gap G is at least
    ``thresholds[k]``, k the step of the noisy log-odds ``L~`` (``cuts[k-1] < L~ <= cuts[k]``,
    ``cuts`` increasing, the last step open above).

    Attributes
    ----------
    cuts : ndarray, shape (K - 1,)
    thresholds : ndarray, shape (K,)
        Non-increasing in k, all >= 0.
    size : float
        The rule's largest false "trusted" rate where P(S_1) < 1/2 (at most FALSE_TRUST),
        computed with the noisy log-odds' exact grid law.
    scale : float
        The noisy log-odds' Laplace scale the rule was built for.
    """

    cuts: np.ndarray
    thresholds: np.ndarray
    size: float
    scale: float

    def threshold(self, noisy_log_odds):
        """The gap threshold for a released noisy log-odds."""
        return float(self.thresholds[int(np.searchsorted(self.cuts, noisy_log_odds, side="left"))])

    def step_probabilities(self, log_odds):
        """P(L~ in each step) when the exact log-odds is ``log_odds`` (the grid law)."""
        above = np.array([1.0] + [laplace_release_sf(log_odds, self.scale, c) for c in self.cuts] + [0.0])
        return np.maximum(above[:-1] - above[1:], 0.0)


def _continuous_steps(cuts, centre, b):
    """P(centre + Laplace(b) in each step) (continuous law: for the rule's power only)."""
    cdf = lambda x: np.where(x < centre, 0.5 * np.exp((x - centre) / b), 1.0 - 0.5 * np.exp(-(x - centre) / b))
    edges = np.concatenate([[0.0], cdf(np.asarray(cuts, dtype=float)), [1.0]])
    return np.diff(edges)


def _size(probs0, thresholds):
    """The false "trusted" bound at L = 0: sum_k P_0(step k) 2 sigma(-t_k) (docs/methods)."""
    return float(np.sum(probs0 * 2.0 * expit(-thresholds)))


@functools.lru_cache(maxsize=64)
def gap_rule(scale, false_trust=FALSE_TRUST, alternative=ALTERNATIVE_LOG_ODDS, steps=RULE_STEPS):
    """The most powerful step rule at ``alternative`` whose false "trusted" rate is at most
    ``false_trust`` where P(S_1) < 1/2 (public: a function of the noise scale alone).

    Each step's threshold maximises ``P_a(step) sigma(a - t) - lam P_0(step) 2 sigma(-t)``
    (Neyman and Pearson's rule at the alternative a for the worst null, two supports at one
    half); lam is bisected until the size, computed with the noisy log-odds' exact grid law
    at L = 0, is at most ``false_trust``. Thresholds are made non-increasing, so the size
    at L = 0 bounds every L < 0 (docs/methods/inference.md, "The verdict").

    Parameters
    ----------
    scale : float
        Laplace scale of the noisy log-odds, ``eps_mech / eps_c``.

    Returns
    -------
    GapRule
    """
    cuts = alternative * np.arange(1, steps) / (steps - 1) - alternative / (2 * (steps - 1))
    probe = GapRule(cuts=cuts, thresholds=np.zeros(steps), size=0.0, scale=float(scale))
    p0 = probe.step_probabilities(0.0)
    pa = _continuous_steps(cuts, alternative, float(scale))
    gain = pa[:, None] * expit(alternative - _T_GRID)[None, :]
    cost = p0[:, None] * 2.0 * expit(-_T_GRID)[None, :]

    def rule(lam):
        t = _T_GRID[np.argmax(gain - lam * cost, axis=1)]
        return np.minimum.accumulate(t)  # non-increasing in the noisy log-odds

    lo, hi = 0.0, 1e6  # size falls as lam grows; at hi every threshold is the grid's top
    if _size(p0, rule(hi)) > false_trust:
        raise ValueError("gap_rule: no rule on the threshold grid meets the false-trust rate")
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if _size(p0, rule(mid)) <= false_trust else (mid, hi)
    t = rule(hi)
    return GapRule(cuts=cuts, thresholds=t, size=_size(p0, t), scale=float(scale))


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


def gap_passes(log_odds, threshold, rng):
    """Whether the selection's free gap G is at least ``threshold`` (>= 0), given the
    released support of log-odds L_S: G is logistic(L_S, 1) truncated to (0, inf), so this
    is Bernoulli(sigma(L_S - t) / sigma(L_S)), drawn exactly (:func:`noise.bernoulli`).
    Only the outcome is released, never G."""
    if math.isinf(log_odds):
        return True
    # log sigma(L - t) - log sigma(L), both as -logaddexp(0, -x): no cancellation far out
    prob = math.exp(float(np.logaddexp(0.0, -log_odds) - np.logaddexp(0.0, threshold - log_odds)))
    return bernoulli(min(prob, 1.0), rng)


def trusted_probability(scores, *, eps_mech, Delta, p, s, eps=None, rule=None):
    """The exact probability that a top-R release's verdict says "can be trusted":
    ``sum_k P(L~ in step k) sum_T sigma(L_T - t_k)`` over every support T (for the
    benchmarks and tests: it reads the exact scores, NOT private). ``rule`` (or ``eps``, the
    budget of the noisy log-odds, which gives :func:`gap_rule` of ``eps_mech / eps``)."""
    rule = gap_rule(eps_mech / eps) if rule is None else rule
    scores = np.sort(np.asarray(scores, dtype=float))
    R = int(scores.size)
    outside = math.comb(int(p), int(s)) - R
    L = [released_log_odds(scores, k, eps_mech=eps_mech, Delta=Delta, p=p, s=s) for k in range(R)]
    L_out = released_log_odds(scores, R, eps_mech=eps_mech, Delta=Delta, p=p, s=s) if outside > 0 else None
    L1 = best_support_log_odds(scores, eps_mech=eps_mech, Delta=Delta, p=p, s=s)[0]
    steps = rule.step_probabilities(L1)
    total = 0.0
    for w, t in zip(steps, rule.thresholds):
        here = sum(float(expit(x - t)) for x in L)
        if L_out is not None:
            here += float(np.exp(math.log(outside) + np.log(expit(L_out - t))))
        total += w * min(here, 1.0)
    return min(total, 1.0)


def gap_verdict(passed, prob_upper):
    """The verdict of a top-R release in words: the free gap's test decides "can be
    trusted"; the paid upper bound "NOT to be trusted"; otherwise the budget cannot tell."""
    if passed:
        return ("can be trusted: the selection's own draw, with the noisy log-odds, shows that the "
                "mechanism releases the best-scoring support more often than not here (a test at the "
                "5 % level)")
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
    gap_threshold : float or None
        Top-R: the threshold the selection's free gap G was tested against (a public
        function of the noisy log-odds, :func:`gap_rule`). None for the exponential
        mechanism, whose verdict reads the bounds alone.
    gap_passed : bool or None
        Top-R: whether G reached it (the verdict "can be trusted"); G itself is not released.
    """

    prob_lower: float
    prob_upper: float
    level: float
    eps: float
    statement: str
    gap_threshold: float = None
    gap_passed: bool = None

    def __str__(self):
        gap = ("" if self.gap_threshold is None else
               f" [selection's gap at least {self.gap_threshold:.3g}: {'yes' if self.gap_passed else 'no'}]")
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
    # the free gap, tested against a threshold the noisy log-odds sets (public rule): the
    # outcome is post-processing of (S, G), the selection's eps_mech-DP output, and of the
    # eps-DP noisy log-odds (module docstring)
    t = gap_rule(scale).threshold(noisy)
    passed = gap_passes(released_log_odds(scores, released, eps_mech=eps_mech, Delta=Delta, p=p, s=s), t, rng)
    return SelectionConfidence(prob_lower=lower, prob_upper=upper, level=level, eps=float(eps),
                               statement=gap_verdict(passed, upper), gap_threshold=t, gap_passed=bool(passed))
