"""Public clip intervals and maps, applied in row blocks.

One job: the arithmetic that takes raw model-matrix values to the clipped, mapped values
the rest of the package sees. An interval (lo, hi) maps to [-1, 1] by its public centre
and half-width (:func:`_interval_map`; the no-intercept rule maps by scaling only), a
scalar bound b clips to [-b, b] without rescaling; values a transform leaves undefined
are placed by a fixed rule (:func:`_fill_undefined`). The passes over the rows go in
blocks of about :data:`_BLOCK_ELEMENTS` entries, so that no n x p temporary is made.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = []


#: Elements per row block in the blocked passes over the data (finite checks, direct
#: materialisation, sufficient statistics): 2 Mi doubles, 16 MB (few transient bytes next to X).
_BLOCK_ELEMENTS = 2**21


def _row_blocks(n, width, block_elements=None):
    """(start, stop) of consecutive row blocks of about ``block_elements`` entries each."""
    step = max(1, (block_elements or _BLOCK_ELEMENTS) // max(1, width))
    return [(a, min(n, a + step)) for a in range(0, n, step)]


def _rows(k):
    return f"{k} row{'s' if k != 1 else ''}"


def _undefined_error(argname, counts):
    """Non-finite values of the formula in columns without a public bound: the columns
    and the numbers of rows, never the values."""
    desc = ", ".join(f"{c!r} ({_rows(k)})" for c, k in counts.items())
    return ValueError(
        f"{argname}: the formula produced missing or infinite values (e.g. log of a value <= 0) in {desc}, "
        "whose bound is not public (taken from the data), so no fixed rule can place them; give "
        f"{'these columns' if len(counts) > 1 else 'the column'} a bound in the codebook (an interval "
        "on which the transform is finite for its variables, or one of its own), or change the formula "
        "or the data")


def _fill_undefined(M, names, clip_limits, argname, learned=()):
    """Place the formula's non-finite values into each column's public clip interval.

    A transform of in-range values can still be undefined or infinite (``np.log`` of a
    column without an interval, ``inf - inf``, or a term whose own interval is its only
    bound): a fixed rule maps them, row by row and whatever the other rows are, so that
    no error and no count depends on the data: +-inf go to the interval's ends (the clip
    that follows does that) and nan to its midpoint (set here, in place). A column whose
    bound is not public (``learned``, or an infinite clip interval in a predictor that
    keeps no learned bound) has no interval to map into: an error naming it and the
    number of such rows (the guarantee is void there in any case).

    Parameters
    ----------
    M : ndarray, shape (n, m)
        Raw model-matrix columns ``names`` (modified in place if writeable).
    names : list of str
    clip_limits : dict
    argname : str
        ``"data"`` or ``"newdata"``, for the message.
    learned : collection of str
        Columns whose bounds were taken from the data.

    Returns
    -------
    ndarray
        ``M``, or a copy of it when it was read-only.
    """
    ok = np.ones(M.shape[1], dtype=bool)
    for a, b in _row_blocks(M.shape[0], M.shape[1]):  # no n x m temporary
        ok &= np.isfinite(M[a:b]).all(axis=0)
    if ok.all():
        return M
    refuse = {}
    if not M.flags.writeable:  # a read-only view of pandas' memory (copy-on-write)
        M = M.copy()
    for j in np.flatnonzero(~ok):
        nm = names[j]
        lo, hi = clip_limits[nm]
        col = M[:, j]
        if nm in learned or not (math.isfinite(lo) and math.isfinite(hi)):
            refuse[nm] = int(np.count_nonzero(~np.isfinite(col)))
            continue
        col[np.isnan(col)] = (lo + hi) / 2
    if refuse:
        raise _undefined_error(argname, refuse)
    return M


def _interval_map(lo, hi, has_intercept):
    """(centre, half-width) of the public map x' = (x - centre) / half of [lo, hi] onto [-1, 1].

    With an intercept the centre is the midpoint and the half-width (hi - lo) / 2, raised
    to fl(hi - centre) or fl(centre - lo) where the rounded centre leaves an end further
    away (an interval a few units wide near 2^53, say): then every x in [lo, hi] maps into
    [-1, 1] in floating point, not only in exact arithmetic, because rounding is monotone
    (fl(x - c) <= fl(hi - c) <= half, and a quotient a / half with a <= half rounds to at
    most 1; likewise below). Without an intercept (the no-intercept rule) the centre is 0
    and the half-width max(|lo|, |hi|). The interval's ends lie within
    :data:`dpsubset._validation.BOUND_MAX` (checked by :class:`Bounds`), so nothing overflows.
    """
    if not has_intercept:
        return (0.0, float(max(abs(lo), abs(hi))))
    centre = (lo + hi) / 2
    half = max((hi - lo) / 2, hi - centre, centre - lo)
    return (float(centre), float(half))


def _clip_and_map(M, names, clip_limits, column_maps, out=None):
    """Clip the columns of M to their public limits and map them, x' = (x - centre) / half.

    Into ``out`` (a C-ordered array of M's shape, possibly M itself) when given.
    """
    return _apply_limits(M, _limits(names, clip_limits, column_maps), out)


def _limits(names, clip_limits, column_maps):
    """Per-column (lo, hi, centre, half) arrays of ``names``, and whether they are uniform."""
    lims = np.array([clip_limits[nm] for nm in names], dtype=float).reshape(-1, 2)
    maps = np.array([column_maps[nm] for nm in names], dtype=float).reshape(-1, 2)
    lo, hi, c, h = lims[:, 0], lims[:, 1], maps[:, 0], maps[:, 1]
    same = len(lo) > 0 and bool(np.all(lo == lo[0]) and np.all(hi == hi[0]))
    return lo, hi, c, h, same, bool(np.any(c != 0.0)), bool(np.any(h != 1.0))


def _apply_limits(M, limits, out=None):
    """Clip and map by precomputed limits. Scalar limits when every column has the same
    (numpy clips with scalars ~10x faster than with per-column arrays); the shift and the
    scaling are skipped where no column needs them (x - 0 and x / 1 are exact)."""
    lo, hi, c, h, same, shift, scale = limits
    if out is None:
        out = np.empty(np.shape(M))
    if same:
        np.clip(M, lo[0], hi[0], out=out)
    else:
        np.clip(M, lo, hi, out=out)
    if shift:
        out -= c
    if scale:
        out /= h
    return out


def _clip_raw(frame, limits):
    """``frame`` with the columns in ``limits`` clipped to their intervals (as float64)."""
    if not limits:
        return frame
    out = frame.copy(deep=False)
    for v, (lo, hi) in limits.items():
        if v in out.columns:
            out[v] = np.clip(out[v].to_numpy(dtype=float), lo, hi)
    return out
