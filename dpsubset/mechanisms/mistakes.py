"""Mistakes mechanism (Section 2.1.2 of the paper). Conditionally private only.

Around the best support S~_0 = argmin c, the supports are partitioned by their
number of mistakes: P_k = supports with exactly k elements outside S~_0,
k = 0..K, K = min(s, p - s), |P_k| = C(s, k) C(p - s, k). Every member of P_k is
scored by the best score in its class, c(S~_k) = min over P_k of c. The mechanism
is the exponential mechanism on that class score:

    P(k) proportional to |P_k| exp(-eps c(S~_k) / (2 Delta)),

followed by the release of a uniformly random member of P_k. (The paper's code
releases S~_k itself; that is a different mechanism, and not the one the privacy
theorem is about.)

Guarantee (Theorem 2 of the paper): eps-DP on data D with
c(S_(2)) - c(S_(1)) > 2 Delta, the gap between the best and the second-best
support. The reason: on such data no single row replacement can change the best
support, so neighbours share the partition and each class score moves by at most
Delta. Without the gap the partition itself moves with the data and the privacy
loss is unbounded in eps; the audits in ``tests/audit`` exhibit such a pair.
The condition depends on the private data and is NOT checked here: this
mechanism alone is "conditional" (see ``dpsubset.privacy.leaks.GUARANTEES``). For an
unconditional guarantee, use the gap check of :mod:`dpsubset.mechanisms.gap_check`.

The functions here see only the candidates, eps, Delta and a random generator.
"""
from __future__ import annotations

import numpy as np

from . import noise
from .sampling import (gumbel_max, log_multiplicity, log_softmax, log_weights,
                       uniform_member_of_class)

__all__ = ["GUARANTEE", "mistakes_log_weights", "sample_mistakes", "mistakes_distribution"]

# Key into dpsubset.privacy.leaks.GUARANTEES: eps-DP only where the gap exceeds 2 Delta.
GUARANTEE = "conditional"


def mistakes_log_weights(cands, eps: float, Delta: float) -> np.ndarray:
    """Log-weights log|P_k| - eps c(S~_k) / (2 Delta) of the mistake classes k = 0..K.

    Parameters
    ----------
    cands : MistakeCandidates
        Centre S~_0 and the exact best score in each class.
    eps, Delta : float

    Returns
    -------
    ndarray, shape (K + 1,)

    Notes
    -----
    Guarantee: conditional. The induced draw is eps-DP only on data where
    c(S_(2)) - c(S_(1)) > 2 Delta (Theorem 2), and only if each c(S~_k) is the
    exact class minimum.
    """
    return log_weights(cands.scores, eps, Delta, multiplicities=cands.class_sizes)


def sample_mistakes(cands, eps: float, Delta: float, rng: np.random.Generator) -> np.ndarray:
    """Release one support by the mistakes mechanism.

    Draws a class k by the exact Gumbel-max trick on :func:`mistakes_log_weights`, then
    returns a uniformly random member of P_k (k random elements of the centre
    swapped for k random elements of its complement).

    Parameters
    ----------
    cands : MistakeCandidates
    eps, Delta : float
    rng : numpy.random.Generator

    Returns
    -------
    ndarray, shape (s,)
        The released support, sorted.

    Notes
    -----
    Guarantee: conditional, eps-DP only where c(S_(2)) - c(S_(1)) > 2 Delta
    (Theorem 2). Do not present the output as unconditionally private; wrap it
    in the gap check for (eps_0 + eps, delta)-DP.
    """
    if cands.open_classes:
        k = _lazy_class_draw(cands, eps, Delta, rng)
    else:
        k = gumbel_max(mistakes_log_weights(cands, eps, Delta), rng)
    return uniform_member_of_class(cands.center, k, cands.p, rng)


# After this many decisions in one draw (only near-ties get here) the classes in play
# are solved exactly, which always ends the loop.
_MAX_DECISIONS = 50


def _lazy_class_draw(cands, eps, Delta, rng):
    """The same exact Gumbel-max draw as the eager sampler, with some class minima bracketed.

    The race's uniforms are drawn first (as many as the eager sampler draws,
    independently of the data; :class:`dpsubset.mechanisms.noise.GumbelRace`). A class
    whose minimum is only known to lie in [lower_k, upper_k] has its perturbed
    log-weight in an interval; as long as the winner's interval lies strictly above
    every other interval the argmax is the one the exact values would give, so the draw
    is exact in distribution. Otherwise the open classes that could still change the
    argmax are decided against the score that settles the comparison (a member below
    it, or a proof that there is none), and the check repeats. Every step moves a
    bracket end past a decision point, so the loop ends; at worst a class is pinned
    down exactly, and among exact classes the race decides exactly.
    """
    race = noise.GumbelRace(len(cands.scores), rng)
    G = race.approx()  # decision points only; the comparisons use the race's intervals
    logm = np.array([log_multiplicity(m) for m in cands.class_sizes])
    scale = eps / (2.0 * Delta)
    rounds = 0
    while True:
        rounds += 1
        # the same float expression as log_weights: the exact log-weight of a class
        lw_exact = logm - scale * np.asarray(cands.scores, dtype=float)
        lo, hi = race.interval(lw_exact, logm - scale * np.asarray(cands.lower, dtype=float))
        w = int(np.argmax(lo))
        in_play = [k for k in range(len(G)) if k != w and hi[k] >= lo[w]]
        if not in_play:  # lo[w] <= w's exact perturbed log-weight beats every rival
            return w
        open_ = cands.open_classes
        open_rivals = [k for k in in_play if k in open_]
        if open_rivals:
            # Prove each rival's minimum high enough that it cannot beat the leader
            # (hi[k] < lo[w]), or solve it exactly if that fails.
            for k in open_rivals:
                target = (logm[k] + G[k] - lo[w]) / scale
                cands.close(k, target + 1e-12 * max(1.0, abs(target))
                            if rounds <= _MAX_DECISIONS else None)
        elif w in open_:
            # Only exact rivals are in play: the leader wins iff its minimum is below
            # the score at which its perturbed log-weight equals the best rival's.
            # Decide that target (a member below it, or a proof that none is).
            best_rival = max(hi[k] for k in in_play)
            target = (logm[w] + G[w] - best_rival) / scale
            target -= 1e-12 * max(1.0, abs(target))
            if cands.lower[w] >= target or rounds > _MAX_DECISIONS:
                cands.close(w)  # a near-tie: settle it exactly
            else:
                cands.close(w, target)
        else:  # every class in play is exact: the race decides among them exactly
            return race.decide(lw_exact, [w] + in_play)


def mistakes_distribution(cands, eps: float, Delta: float, *, log: bool = False) -> np.ndarray:
    """Exact output distribution of :func:`sample_mistakes` over all supports.

    For small problems only; used by the audits.

    Parameters
    ----------
    cands : MistakeCandidates
    eps, Delta : float
    log : bool
        Return log-probabilities instead of probabilities.

    Returns
    -------
    ndarray, shape (C(p, s),)
        Probabilities in the lexicographic order of
        ``dpsubset.search.enumeration.all_supports(p, s)``: a support with k
        mistakes gets P(k) / |P_k|.
    """
    if cands.open_classes:
        raise ValueError("the exact distribution needs every class minimum exact; "
                         "close the open classes first (cands.close(k))")
    from ..search.enumeration import all_supports
    lp = log_softmax(mistakes_log_weights(cands, eps, Delta))
    per_support = lp - np.array([log_multiplicity(m) for m in cands.class_sizes])
    S = all_supports(cands.p, cands.s)
    k = cands.s - np.isin(S, np.asarray(cands.center)).sum(axis=1)
    out = per_support[k]
    return out if log else np.exp(out)
