"""Exhaustive search: score every size-s support. Exact by construction, for small C(p, s)."""
from __future__ import annotations

import time
from itertools import combinations
from math import comb

import numpy as np

from .candidates import Certificate, MistakeCandidates, TopRCandidates

__all__ = ["all_supports", "score_all", "rank_supports", "top_r_by_enumeration",
           "mistakes_by_enumeration", "ENUMERATION_LIMIT"]

# Above this many supports enumeration is refused (memory for the index array and
# scores, and minutes of time); the outer-approximation search takes over.
ENUMERATION_LIMIT = 2_000_000
_BATCH = 20_000


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


def score_all(scorer, s: int):
    """Every size-s support (lexicographic order) and its exact score."""
    S = all_supports(scorer.p, s)
    scores = np.empty(len(S))
    for a in range(0, len(S), _BATCH):
        scores[a:a + _BATCH] = scorer.score(S[a:a + _BATCH])
    return S, scores


def rank_supports(supports: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Order of supports by score, ties broken lexicographically on the sorted indices.

    The tie-break is data-independent, as top-R requires.
    """
    keys = [supports[:, j] for j in range(supports.shape[1] - 1, -1, -1)]
    return np.lexsort(keys + [scores])


def top_r_by_enumeration(scorer, s: int, R: int, scored=None) -> TopRCandidates:
    """The exact R best supports by scoring all of them (R is capped at C(p, s)).
    ``scored``: the output of :func:`score_all` when already computed."""
    t0 = time.perf_counter()
    S, c = score_all(scorer, s) if scored is None else scored
    order = rank_supports(S, c)[:R]
    cert = Certificate("top-R list", "enumeration", float(c[order[-1]]), float(c[order[-1]]),
                       1, time.perf_counter() - t0)
    return TopRCandidates(S[order], c[order], scorer.p, s, [cert], 0)


def mistakes_by_enumeration(scorer, s: int, scored=None) -> MistakeCandidates:
    """Best support in each mistake class around the best support, by enumeration.
    ``scored``: the output of :func:`score_all` when already computed."""
    t0 = time.perf_counter()
    S, c = score_all(scorer, s) if scored is None else scored
    order = rank_supports(S, c)
    center = S[order[0]]
    in_center = np.isin(S, center).sum(axis=1)
    mistakes = s - in_center
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
