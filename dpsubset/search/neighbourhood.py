"""Supports around a centre, as the search reads them: mistakes and one-swap pairs.

A support's *mistakes* around a centre S_1 are its elements outside S_1; the mistake
class P_k holds the supports with k of them, and the one-swap neighbourhood of S_1
(scored by the scorer's ``neighbourhood``) is P_1. The local search, the top-R list,
the mistake classes and the enumeration all read supports this way; the helpers here
are the one place that says how.
"""
from __future__ import annotations

import numpy as np

__all__ = ["count_mistakes", "swap_pairs"]


def count_mistakes(supports, center):
    """Number of elements of each support outside ``center``.

    Parameters
    ----------
    supports : ndarray of int, shape (m, s)
        One support per row.
    center : array_like of int
        The centre S_1.

    Returns
    -------
    ndarray of int, shape (m,)
    """
    return supports.shape[1] - np.isin(supports, center).sum(axis=1)


def swap_pairs(center, neighbours):
    """The member of ``center`` dropped and the outsider added in each one-swap neighbour.

    Parameters
    ----------
    center : ndarray of int, shape (s,), sorted
        The support whose neighbours these are.
    neighbours : ndarray of int, shape (m, s)
        One-swap neighbours of ``center`` (each differs from it by one element), in
        any row order and with each row in any order.

    Returns
    -------
    gone, added : ndarray of int, shape (m,)
        Row by row, the member of ``center`` absent from the neighbour and the
        neighbour's element outside ``center``.
    """
    inside = np.isin(neighbours, center)
    added = neighbours[~inside]  # one outsider per row, in row order
    present = np.zeros((len(neighbours), len(center)), dtype=bool)
    rows = np.broadcast_to(np.arange(len(neighbours))[:, None], neighbours.shape)
    present[rows[inside], np.searchsorted(center, neighbours[inside])] = True
    gone = center[np.argmin(present, axis=1)]  # the first (only) member absent
    return gone, added
