"""``split=True``: select on one random part of the rows, refit (with inference) on the other.

The split is a uniformly random partition of the row positions 1..n into parts of the
public sizes ``n_select = round(fraction * n)`` and ``n - n_select``, drawn from the
call's generator before any row is read, so it is independent of the data. Under the
replace-one relation the replaced row lies in exactly one part: a stage run on the other
part sees identical data. The selection (with its screen and its confidence) is
eps_A-DP in its part and the refit (with the second moments) eps_B-DP in its part, so
the whole release is max(eps_A, eps_B)-DP (parallel composition, McSherry 2009);
tests/audit/test_inference_audit.py checks this on a small case. Because the refit's
rows played no part in choosing the support, its intervals need no conditioning on the
selection (docs/guide/inference.md).
"""
from __future__ import annotations

import numpy as np

from ..mechanisms import noise

__all__ = ["DEFAULT_SPLIT_FRACTION", "split_rows", "split_sizes", "rows_of"]

#: Share of the rows the selection sees with ``split=True``.
DEFAULT_SPLIT_FRACTION = 0.5


def split_sizes(n, fraction=DEFAULT_SPLIT_FRACTION):
    """(rows of the selection, rows of the refit) under ``split=True``: public, from n alone."""
    n_select = int(round(fraction * n))
    return n_select, n - n_select


def split_rows(n, rng, fraction=DEFAULT_SPLIT_FRACTION):
    """A random partition of ``range(n)`` into the selection's rows and the refit's rows.

    Parameters
    ----------
    n : int
        Number of rows (public).
    rng : numpy.random.Generator
    fraction : float
        Share of the rows that go to the selection.

    Returns
    -------
    select_rows, refit_rows : ndarray of int
        Sorted; together a partition of ``range(n)``.

    Raises
    ------
    ValueError
        When a part would have fewer than 2 rows.
    """
    n_select, n_refit = split_sizes(n, fraction)
    if n_select < 2 or n_refit < 2:
        raise ValueError(f"split=True needs at least 2 rows in each part; n = {n} rows split at "
                         f"{fraction:g} gives {n_select} and {n - n_select}: use split=False")
    perm = noise.permutation(n, rng)
    return np.sort(perm[:n_select]), np.sort(perm[n_select:])


def rows_of(design, rows):
    """The design restricted to some rows (spec unchanged: the public bounds do not move)."""
    return design.replace(X=design.X[rows], y=design.y[rows], forced=design.forced[rows], n=len(rows))
