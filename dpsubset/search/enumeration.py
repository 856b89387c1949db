"""Exhaustive search: score every size-s support. Exact by construction, for small C(p, s)."""
from __future__ import annotations

import time
from itertools import combinations
from math import comb

import numpy as np

from .candidates import Certificate, MistakeCandidates, TopRCandidates
from .limits import ENUMERATION_LIMIT, SearchTimeout
from .neighbourhood import count_mistakes

__all__ = ["all_supports", "score_all", "rank_supports", "top_r_by_enumeration",
           "mistakes_by_enumeration", "ENUMERATION_LIMIT"]

# (ENUMERATION_LIMIT, above which enumeration is refused, is in limits.py and exported
# here too.)
_BATCH = 20_000
# Batches are sized to take about this long, so that a deadline is checked often
# even where one score is a convex solve (milliseconds) rather than a Gram lookup.
_BATCH_SECONDS = 0.2


def all_supports(p: int, s: int) -> np.ndarray:
    """All size-s subsets of range(p) in lexicographic order, shape (C(p, s), s)."""
    total = comb(p, s)
    if total > ENUMERATION_LIMIT:
        raise ValueError(
            f"C({p}, {s}) = {total} supports is beyond the enumeration limit "
            f"({ENUMERATION_LIMIT}); use the outer-approximation search")
    out = np.fromiter((i for c in combinations(range(p), s) for i in c),
                      dtype=np.intp, count=total * s)
    return out.reshape(total, s)


def score_all(scorer, s: int, *, deadline=None, problem="every support"):
    """Every size-s support (lexicographic order) and its exact score.

    Parameters
    ----------
    scorer : scorer
        Anything with ``p`` and a batched ``score``.
    s : int
    deadline : float, optional
        A ``time.perf_counter()`` value. The deadline is checked before every batch,
        and batches are sized from the measured time per support to last about
        :data:`_BATCH_SECONDS`, so the call ends at most about that long after the
        deadline (raising :class:`SearchTimeout`; nothing scored is returned).
    problem : str
        What the enumeration solves, for the time-out message.
    """
    t0 = time.perf_counter()
    if deadline is not None and t0 >= deadline:
        raise _timeout(problem, t0)
    S = all_supports(scorer.p, s)
    scores = np.empty(len(S))
    a, step = 0, min(_BATCH, 1000) if deadline is not None else _BATCH
    while a < len(S):
        if deadline is not None and time.perf_counter() >= deadline:
            raise _timeout(problem, t0)
        tb = time.perf_counter()
        scores[a:a + step] = scorer.score(S[a:a + step])
        a += step
        if deadline is not None:
            per_support = max(time.perf_counter() - tb, 1e-9) / step
            step = int(min(_BATCH, max(1, _BATCH_SECONDS / per_support)))
    return S, scores


def _timeout(problem, t0):
    secs = time.perf_counter() - t0
    return SearchTimeout(f"time limit reached while scoring every support for '{problem}' by "
                         f"enumeration ({secs:.1f} s); nothing was released.",
                         problem=problem, seconds=secs)


def rank_supports(supports: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Order of supports by score, ties broken lexicographically on the sorted indices.

    The tie-break is data-independent, as top-R requires.
    """
    keys = [supports[:, j] for j in range(supports.shape[1] - 1, -1, -1)]
    return np.lexsort(keys + [scores])


def top_r_by_enumeration(scorer, s: int, R: int, scored=None, *, deadline=None) -> TopRCandidates:
    """The exact R best supports by scoring all of them (R is capped at C(p, s)).
    ``scored``: the output of :func:`score_all` when already computed; ``deadline``:
    as in :func:`score_all`."""
    t0 = time.perf_counter()
    S, c = (score_all(scorer, s, deadline=deadline, problem="top-R list") if scored is None
            else scored)
    order = rank_supports(S, c)[:R]
    cert = Certificate("top-R list", "enumeration", float(c[order[-1]]), float(c[order[-1]]),
                       1, time.perf_counter() - t0)
    return TopRCandidates(S[order], c[order], scorer.p, s, [cert], 0)


def mistakes_by_enumeration(scorer, s: int, scored=None, *, deadline=None) -> MistakeCandidates:
    """Best support in each mistake class around the best support, by enumeration.
    ``scored``: the output of :func:`score_all` when already computed; ``deadline``:
    as in :func:`score_all`."""
    t0 = time.perf_counter()
    S, c = (score_all(scorer, s, deadline=deadline, problem="best support per mistake class")
            if scored is None else scored)
    order = rank_supports(S, c)
    center = S[order[0]]
    mistakes = count_mistakes(S, center)
    K = min(s, scorer.p - s)
    best = []
    for k in range(K + 1):
        idx = order[mistakes[order] == k][0]
        best.append(idx)
    best = np.array(best)
    second = float(c[order[1]]) if len(order) > 1 else float("inf")
    cert = Certificate("best support per mistake class", "enumeration", float(c[order[0]]),
                       float(c[order[0]]), 1, time.perf_counter() - t0)
    return MistakeCandidates(center, S[best], c[best], scorer.p, s, second, [cert])
