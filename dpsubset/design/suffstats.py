"""Sufficient statistics of least squares: the Gram matrix of [forced, X, y] and n.

For the squared loss every stage of ``dp_best_subset`` needs the data only through
X'X, X'y, y'y and n of the clipped, mapped design (always-in columns included): the
scores c(S) (ridge fits on Gram sub-blocks), the whole exact search (the one-swap and
two-swap updates, the class bounds and the outer-approximation cuts are all Gram
algebra) and the closed-form refit. When n is large next to p these take p^2 numbers
instead of n p, and they are computed in **one blocked pass** over the rows.

Accuracy. Each block of at most B rows is multiplied by BLAS (dgemm), whose error on
an entry is at most gamma_B sum_i |z_ij z_ik| over the block's rows (Higham 2002,
Thm 3.5; gamma_m = m u / (1 - m u), u = 2^-53); the block products are summed with
Kahan's compensated summation, which adds at most 2u |total| + O(N u^2) sum |blocks|
(Higham 2002, Thm 4.8). With the public bounds |z_ij| <= b_j of the clipped columns
this gives the entrywise bound :meth:`SufficientStats.entry_error`,
|computed - exact| <= gamma_{B+4} n b_j b_k, which the refit's certificate uses
instead of the correctly rounded sums of the matrix route. Partitions (Dask) are
merged the same way, so the bound holds with B the largest block.

Everything here is private (computed from the clipped data) and internal.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..losses import DEFAULT_LOSS, is_least_squares

__all__ = ["SufficientStats", "gram_route"]

_U = np.finfo(float).eps / 2
#: Largest number of columns (forced + candidates) for which the Gram route is used:
#: the p x p matrix then stays below ~70 MB (the scorer keeps a scaled copy).
GRAM_MAX_COLUMNS = 3000
#: The Gram route is used when n >= TALL_RATIO * (number of columns + 1) and
#: n >= TALL_MIN_ROWS: below that the matrices are small and the matrix route (exact
#: sums in the refit's certificate) costs nothing extra.
TALL_RATIO = 4
TALL_MIN_ROWS = 5000
#: Most rows in one BLAS product of the blocked pass. The entrywise error bound is
#: gamma_B n b_j b_k (module docstring): with B in the tens of thousands (one product per
#: memory block, before) it reached 3e-7 on 54,000 rows and the refit's certificate could
#: not reach its d_max = 1e-8 r on a collinear support (diamonds' carat and x, issue 36);
#: at 1,024 rows it is 100 times smaller, and the pass is no slower (measured at n = 10^6,
#: 21-101 columns, and n = 10^5, 1,001 columns: docs/benchmarks/scale.md).
BLAS_ROWS = 1024


def gram_route(n, p, k_forced=1, *, loss=DEFAULT_LOSS, method="top_r", search="auto"):
    """Whether ``dp_best_subset`` runs on the sufficient statistics (public (n, p) only).

    Parameters
    ----------
    n, p, k_forced : int
        Rows, candidate columns and always-in columns (public).
    loss, method, search : str
        The Gram route serves the squared loss with the exact methods (top-R, mistakes).
    """
    m = p + k_forced
    return (is_least_squares(loss) and method in ("top_r", "mistakes") and m <= GRAM_MAX_COLUMNS
            and n >= TALL_RATIO * (m + 1) and n >= TALL_MIN_ROWS)


@dataclass(frozen=True)
class SufficientStats:
    """Z'Z for Z = [forced, X, y] (clipped and mapped), n and how it was summed.

    Attributes
    ----------
    ZtZ : ndarray, shape (k + p + 1, k + p + 1)
        Unnormalised sums; the last row and column are Z'y, with y'y in the corner.
    n : int
        Number of rows.
    k_forced : int
        Always-in columns (first k).
    block_rows : int
        Largest number of rows multiplied in one BLAS call (for :meth:`entry_error`).
    """

    ZtZ: np.ndarray
    n: int
    k_forced: int
    block_rows: int

    @property
    def p(self):
        """Number of candidate columns."""
        return self.ZtZ.shape[0] - 1 - self.k_forced

    @property
    def G(self):
        """Gram matrix of [forced, X] (a view)."""
        return self.ZtZ[:-1, :-1]

    @property
    def Zty(self):
        """[forced, X]' y (a view)."""
        return self.ZtZ[:-1, -1]

    @property
    def yty(self):
        return float(self.ZtZ[-1, -1])

    @classmethod
    def from_blocks(cls, blocks, k_forced=None):
        """One pass over row blocks ``(Z_block, y_block)``, Z_block = [forced, X] rows.

        Parameters
        ----------
        blocks : iterable of (ndarray (b, m), ndarray (b,))
        k_forced : int, optional
            Number of always-in columns (the first ones); default: set by the caller
            through :meth:`with_forced`, 0 here.
        """
        acc = _KahanSum()
        n = 0
        rows = 0
        for Zb, yb in blocks:
            Zb = np.column_stack([Zb, yb]) if Zb.shape[1] else np.asarray(yb, float)[:, None]
            # one BLAS product per at most BLAS_ROWS rows: the error bound grows with the rows
            # of one product (gamma_B n), and the refit's certificate needs it small
            for a in range(0, Zb.shape[0], BLAS_ROWS):
                part = Zb[a:a + BLAS_ROWS]
                acc.add(part.T @ part)
                rows = max(rows, part.shape[0])
            n += Zb.shape[0]
        if acc.total is None:
            raise ValueError("data: has no rows")
        return cls(ZtZ=acc.total, n=n, k_forced=int(k_forced or 0), block_rows=rows)

    @classmethod
    def from_arrays(cls, forced, X, y, k_forced=None):
        """From materialised (clipped, mapped) arrays, in row blocks."""
        forced = np.asarray(forced, float).reshape(len(y), -1)
        k = forced.shape[1] if k_forced is None else k_forced
        m = forced.shape[1] + X.shape[1] + 1
        step = max(1, 2**21 // m)
        return cls.from_blocks(((np.hstack([forced[a:a + step], X[a:a + step]]), y[a:a + step])
                                for a in range(0, len(y), step)), k_forced=k)

    def with_forced(self, k_forced):
        return SufficientStats(self.ZtZ, self.n, int(k_forced), self.block_rows)

    def merge(self, other):
        """The statistics of the union of two disjoint sets of rows (partitions)."""
        acc = _KahanSum()
        acc.add(self.ZtZ)
        acc.add(other.ZtZ)
        return SufficientStats(acc.total, self.n + other.n, self.k_forced,
                               max(self.block_rows, other.block_rows))

    def entry_error(self, bounds):
        """Entrywise bound on |ZtZ - exact Z'Z| from the public column bounds.

        Parameters
        ----------
        bounds : array_like, shape (k + p + 1,)
            Public bounds of |z_ij| of the mapped columns, the response last.
        """
        b = np.asarray(bounds, dtype=float)
        m = self.block_rows + 4
        gamma = m * _U / (1.0 - m * _U)
        return (gamma * (1.0 + 1e-12) * self.n) * np.multiply.outer(b, b)


class _KahanSum:
    """Compensated running sum of equally shaped arrays (Kahan 1965)."""

    def __init__(self):
        self.total = None
        self._c = None

    def add(self, x):
        x = np.asarray(x, dtype=float)
        if self.total is None:
            self.total = x.copy()
            self._c = np.zeros_like(self.total)
            return
        yv = x - self._c
        t = self.total + yv
        self._c = (t - self.total) - yv
        self.total = t
