"""``method="exponential"``: the exponential mechanism over every size-s support.

This is the ideal that top-R and mistakes approximate (the "full" mechanism of
Prastakos, Behdin and Mazumder 2025, and the enumerating mechanism of Lei et al.
2018): score all C(p, s) supports with the exact least-squares score c(S)
(docs/methods/selection.md) and draw one with probability proportional to

    exp(-eps * c(S) / (2 Delta)),   Delta = (b_y + r sqrt(B_s))^2 / (2n).

Guarantee: pure eps-DP under row replacement (McSherry and Talwar 2007): every
c(S) moves by at most Delta when one row is replaced, the support space depends
only on the public (p, s), and the draw is exact (Gumbel-max on the log-weights of
:mod:`dpsubset.mechanisms.sampling`). Enumeration is exact, so there is nothing to
certify beyond "every support was scored".

The cost is C(p, s) scores, so the method refuses problems with more than
:data:`EXPONENTIAL_LIMIT` supports, before any score is computed.
"""
from __future__ import annotations

import math

import numpy as np

from ...mechanisms.sampling import gumbel_max, log_softmax, log_weights
from ...search.enumeration import ENUMERATION_LIMIT, rank_supports, score_all
from ...privacy.budget import Stage
from ..base import Selection, SelectionMethod, make_scorer, register_method
from ...losses import SquaredLoss

#: The guarantee this method declares when it spends (the report's is the weakest declared).
GUARANTEE = "pure"

__all__ = ["EXPONENTIAL_LIMIT", "exponential_log_weights", "exponential_distribution",
           "sample_exponential", "validate_exponential", "select_exponential"]

#: Largest C(p, s) the method accepts: the enumeration search's own limit (memory for
#: the index array and the scores; about a minute of scoring at the limit).
EXPONENTIAL_LIMIT = ENUMERATION_LIMIT

# Diagnostics list at most this many of the best supports (all of them would be
# C(p, s) lists of names).
_DIAGNOSTIC_SUPPORTS = 100

_NOT_USED = {
    "R": "R is the list length of top-R; the exponential mechanism draws from all supports",
    "eps0": "eps0 is the gap-test budget of method='mistakes'",
    "delta": "the exponential mechanism is pure eps-DP; it has no delta",
}


def exponential_log_weights(scores, eps: float, Delta: float) -> np.ndarray:
    """Log-weights -eps c(S) / (2 Delta) of every support (one weight per support).

    Sampler and audits both call this, so a test of the distribution is a test of
    the sampler.
    """
    return log_weights(scores, eps, Delta)


def exponential_distribution(scores, eps: float, Delta: float, log: bool = False) -> np.ndarray:
    """Exact output distribution of :func:`sample_exponential` over the scored supports."""
    lp = log_softmax(exponential_log_weights(scores, eps, Delta))
    return lp if log else np.exp(lp)


def sample_exponential(scores, eps: float, Delta: float, rng: np.random.Generator) -> int:
    """Index of the released support (Gumbel-max on the exact log-weights)."""
    return gumbel_max(exponential_log_weights(scores, eps, Delta), rng)


def check_size(p: int, s: int) -> int:
    """C(p, s), or a ValueError when it is beyond :data:`EXPONENTIAL_LIMIT`."""
    total = math.comb(p, s)
    if total > EXPONENTIAL_LIMIT:
        raise ValueError(
            f"method='exponential' scores every support, and C({p}, {s}) = {total:,} is beyond "
            f"its limit of {EXPONENTIAL_LIMIT:,} supports; use method='top_r' (the same "
            f"guarantee, exact search instead of enumeration) or fewer candidate columns")
    return total


def validate_exponential(options, *, s, eps, loss):
    """The exponential mechanism has no options; top-R / mistakes options are refused."""
    opts = dict(options)
    for key in list(opts):
        if key in _NOT_USED:
            raise ValueError(f"method='exponential' does not use {key}: {_NOT_USED[key]}")
    if opts:
        raise TypeError(f"method='exponential' got unknown options {sorted(opts)}; it takes none")
    return {}


def select_exponential(req) -> Selection:
    """Score all supports exactly and release one by the exponential mechanism."""
    check_size(req.p, req.s)  # before any scoring
    scorer, Delta = make_scorer(req)
    supports, scores = score_all(scorer, req.s)
    k = sample_exponential(scores, req.eps, Delta, req.rng)
    order = rank_supports(supports, scores)[:_DIAGNOSTIC_SUPPORTS]
    names = req.design.spec.candidate_names
    req.ledger.spend(Stage.SELECTION, "exponential mechanism (all supports)", req.eps, 0.0, guarantee=GUARANTEE)
    return Selection(
        support=tuple(sorted(int(j) for j in supports[k])),
        sensitivity=Delta,
        certificates=[dict(problem=f"score all {len(scores)} supports", method="enumeration",
                           closed=True)],
        diagnostics=dict(best_support=[names[j] for j in supports[order[0]]],
                         candidate_supports=[[names[j] for j in S] for S in supports[order]],
                         candidate_scores=scores[order].copy()))


register_method(SelectionMethod(
    name="exponential", select=select_exponential, validate=validate_exponential,
    losses=(SquaredLoss.name,),
    description="exponential mechanism over all C(p, s) supports by enumeration (exact "
                "least-squares score): pure eps-DP; refused above EXPONENTIAL_LIMIT supports"))
