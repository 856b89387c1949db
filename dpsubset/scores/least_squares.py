"""Exact scores c(S) of supports for the least-squares loss.

The score of a support S (docs/methods/selection.md) is the optimum of a
ball-constrained ridge regression on the columns S plus the always-in columns K:

    c(S) = min_{||beta||_2 <= r} (1/2n) ||y - A beta||^2 + (lam/2n) ||beta||^2,
    A = X_{K+S}.

With G = A'A/n and g = A'y/n the minimiser is beta(mu) = (G + (lam/n + mu) I)^{-1} g,
with mu = 0 when that point lies in the ball and otherwise mu > 0 the root of the
secular equation ||beta(mu)|| = r. Both are solved exactly on the eigen-decomposition
of G, batched over many supports at once (stacked k x k problems, k = |K| + s).

The scorer's parts: the scores, the one-swap neighbourhood, the cuts and the Gram
algebra they share are here; the two-swap search is in dpsubset/scores/two_swap.py
and the mistake-class bounds in dpsubset/scores/class_bounds.py (mixins of
:class:`LeastSquaresScorer`); the ridge solve over the ball is in dpsubset/scores/base.py,
the scores' sensitivity in dpsubset/privacy/sensitivity.py.

Everything here sees clipped, private data. Nothing in this module is released.
"""
from __future__ import annotations

import numpy as np

from .base import check_scorer_inputs, one_swap_neighbours, solve_ball_ridge, solve_bordered_ball_ridge
from .class_bounds import ClassBoundsMixin
from .two_swap import TwoSwapMixin
from ..losses import SquaredLoss

__all__ = ["LeastSquaresScorer", "solve_ball_ridge", "check_scorer_inputs"]

# Past this many columns in total the full Gram matrix is not formed (memory grows as p^2).
_FULL_GRAM_MAX_COLUMNS = 3000
# Past this size of X (elements) the scorer keeps a single-precision copy of X for the
# two-swap's screen and the warm start's products (below it the copy costs more than it saves).
_SINGLE_PRECISION_MIN_ELEMENTS = 2**23
# Supports scored per chunk when the Gram blocks are built from X directly.
_CHUNK_BYTES = 64 * 2**20
class LeastSquaresScorer(TwoSwapMixin, ClassBoundsMixin):
    """Exact least-squares scores for batches of supports on one (clipped) dataset.

    Parameters
    ----------
    X : ndarray, shape (n, p)
        Candidate columns, already clipped (and publicly rescaled).
    y : ndarray, shape (n,)
        Response, already clipped.
    lam : float
        Ridge parameter (> 0), in the sum-form normalisation of the paper: the
        penalty on the mean loss is (lam / 2n) ||beta||^2.
    r : float
        Radius of the coefficient ball.
    forced : ndarray, shape (n, k), optional
        Always-in columns (the intercept, forced terms). They are in every fit
        and are never selected.

    Notes
    -----
    Supports are integer arrays of candidate indices (0..p-1), one support per row,
    each row sorted increasingly. Coefficient vectors are ordered [forced..., support...].
    """

    loss = SquaredLoss.name

    def __init__(self, X, y, lam, r, forced=None):
        X, y, forced = check_scorer_inputs(X, y, lam, r, forced)
        n, p = X.shape
        self.X, self.y, self.forced = X, y, forced
        self.n, self.p, self.k_forced = n, p, forced.shape[1]
        self.lam, self.r = float(lam), float(r)
        self.lam_n = self.lam / n
        self.yy = float(y @ y) / n
        # X'y/n and the column norms are one pass over X and are needed everywhere.
        self.Xy = X.T @ y / n
        self.Fy = forced.T @ y / n
        self.Xdiag = np.einsum("ij,ij->j", X, X) / n
        self.FF = forced.T @ forced / n
        self.XF = X.T @ forced / n  # (p, k_forced)
        self._gram = None
        if p + self.k_forced <= _FULL_GRAM_MAX_COLUMNS:
            self._gram = X.T @ X / n
        self.n_scored = 0  # supports scored so far (for the bench and the certificate)

    @property
    def gram(self):
        """X'X / n of the candidate columns (p x p), or None where it is not held (more than
        a few thousand columns: the search then forms the blocks it needs from X). Read-only:
        the search's bounds and heuristics read it; nothing may write to it."""
        return self._gram

    @classmethod
    def from_gram(cls, G, Zty, yty, n, lam, r, k_forced=0):
        """The scorer of a dataset known only through its sufficient statistics.

        Parameters
        ----------
        G : ndarray, shape (k + p, k + p)
            Z'Z for Z = [forced, X] (unnormalised sums; always-in columns first).
        Zty : ndarray, shape (k + p,)
            Z'y.
        yty : float
            y'y.
        n : int
            Number of rows.
        lam, r : float
            As in the constructor.
        k_forced : int
            Number of always-in columns k.

        Notes
        -----
        Every score, neighbourhood, two-swap and class bound of this class is Gram
        algebra; the exceptions read X only when the p x p Gram matrix is not stored,
        and here it always is. The scores equal those of the matrix scorer on the same
        data up to rounding. :meth:`cut` and :meth:`restricted` have Gram forms too,
        and :func:`dpsubset.search.heuristics.iht_support` runs on ``gram_products``.
        """
        G = np.asarray(G, dtype=float)
        Zty = np.asarray(Zty, dtype=float).ravel()
        m, kf, n = G.shape[0], int(k_forced), int(n)
        if G.shape != (m, m) or Zty.shape != (m,) or not 0 <= kf <= m or n < 1:
            raise ValueError(f"from_gram: G must be square (got {G.shape}), Zty of length {m}, "
                             f"0 <= k_forced <= {m}, n >= 1")
        if lam <= 0:
            raise ValueError("lam must be > 0")
        if r <= 0:
            raise ValueError("r must be > 0")
        self = cls.__new__(cls)
        self.X = self.y = self.forced = None  # only the statistics are known
        self._stats = (G, Zty, float(yty))
        self.n, self.p, self.k_forced = n, m - kf, kf
        self.lam, self.r = float(lam), float(r)
        self.lam_n = self.lam / n
        self.yy = float(yty) / n
        self.Xy = Zty[kf:] / n
        self.Fy = Zty[:kf] / n
        self._gram = G[kf:, kf:] / n
        self.Xdiag = np.diagonal(self._gram).copy()
        self.FF = G[:kf, :kf] / n
        self.XF = G[kf:, :kf] / n
        self.n_scored = 0
        return self

    @property
    def gram_only(self):
        """True when the scorer holds only the sufficient statistics (no X)."""
        return self.X is None

    @property
    def data_size(self):
        """n p, the number of entries of X, whether X is held or only its Gram matrix.

        Working memory of the searches is sized from it (a share of the data's own
        size, so small problems stay small); it is a public number, and on the Gram
        route, where X is never formed, it is what X would have taken.
        """
        return self.n * self.p

    # ------------------------------------------------------------------ blocks
    def _blocks(self, supports, cross=None, pair_gram=None):
        """Gram blocks G (m,k,k) and right-hand sides g (m,k) for a batch of supports.

        Without a stored Gram matrix the blocks come from X (an n s^2 pass per
        support), unless ``cross`` = (cols, C) gives the cross products
        C = X' X_cols / n (shape (p, len(cols))) that the caller already holds: then
        every entry with an index in ``cols`` is read from C, the diagonal from the
        column norms, and the one entry of each support with neither index in
        ``cols`` from ``pair_gram`` (shape (m,), for the two-swap pairs). This is
        how the one- and two-swap searches re-score their neighbours exactly
        without touching X again.
        """
        S = np.asarray(supports, dtype=np.intp)
        m, s = S.shape
        kf = self.k_forced
        k = kf + s
        G = np.empty((m, k, k))
        g = np.empty((m, k))
        G[:, :kf, :kf] = self.FF
        if kf:
            XF = self.XF[S]  # (m, s, kf)
            G[:, kf:, :kf] = XF
            G[:, :kf, kf:] = XF.transpose(0, 2, 1)
        g[:, :kf] = self.Fy
        g[:, kf:] = self.Xy[S]
        if self._gram is not None:
            G[:, kf:, kf:] = self._gram[S[:, :, None], S[:, None, :]]
        elif cross is not None and s > 0 and self._blocks_from_cross(S, cross, pair_gram,
                                                                      G[:, kf:, kf:]):
            pass
        else:
            # (at most an eighth of X's size at a time, so small problems stay small)
            chunk = min(_CHUNK_BYTES, max(self.X.nbytes // 8, 2**20))
            step = max(1, chunk // (8 * self.n * max(s, 1)))
            for a in range(0, m, step):
                Xs = self.X[:, S[a:a + step]]  # (n, mb, s)
                G[a:a + step, kf:, kf:] = np.einsum("nmi,nmj->mij", Xs, Xs) / self.n
        return G, g

    def _blocks_from_cross(self, S, cross, pair_gram, out):
        """Fill ``out`` (m, s, s) from known cross products (see :meth:`_blocks`);
        False (``out`` untouched) when some entry is not covered."""
        cols, C = cross
        pos = np.full(self.p, -1, dtype=np.intp)
        pos[np.asarray(cols, dtype=np.intp)] = np.arange(len(cols))
        P = pos[S]
        Pc = np.maximum(P, 0)
        in_b = (P >= 0)[:, None, :]
        in_a = (P >= 0)[:, :, None]
        block = np.where(in_b, C[S[:, :, None], Pc[:, None, :]],
                         np.where(in_a, C[S[:, None, :], Pc[:, :, None]], np.nan))
        s = S.shape[1]
        block[:, np.arange(s), np.arange(s)] = self.Xdiag[S]
        missing = np.isnan(block)
        n_missing = int(np.count_nonzero(missing))
        if n_missing:
            if pair_gram is None or n_missing != 2 * len(S):
                return False
            block[missing] = np.repeat(np.asarray(pair_gram, dtype=float), 2)
        out[...] = block
        return True

    # ------------------------------------------------------------------ scores
    def fit(self, supports, cross=None, pair_gram=None):
        """Scores and minimisers for a batch of supports.

        Returns
        -------
        score : ndarray, shape (m,)
        beta : ndarray, shape (m, k_forced + s)
        """
        S = np.atleast_2d(np.asarray(supports, dtype=np.intp))
        if S.shape[0] == 0:
            return np.empty(0), np.empty((0, self.k_forced + S.shape[1]))
        G, g = self._blocks(S, cross, pair_gram)
        value, beta, _ = solve_ball_ridge(G, g, self.yy, self.lam_n, self.r)
        self.n_scored += len(S)
        return value, beta

    def score(self, supports, cross=None, pair_gram=None):
        """Scores c(S) for a batch of supports (shape (m, s)); returns shape (m,).
        ``cross`` and ``pair_gram``: known cross products (see :meth:`_blocks`)."""
        return self.fit(supports, cross, pair_gram)[0]

    def neighbourhood(self, support):
        """All one-swap neighbours S - {i} + {j} of a support, and their exact scores.

        For each of the s bases B_i = S - {i} the ridge fit on B_i is computed once;
        the unconstrained ridge value of B_i + {j} then follows for every outside
        column j by a rank-one update, value(B_i) - h_j^2 / (2 d_j), with h_j and d_j
        the residual right-hand side and pivot of column j given B_i (as in
        :meth:`two_swap`, with one added column instead of two). That value is the
        exact score when the minimiser lies in the ball; the neighbours where the
        ball binds are re-scored exactly (secular equation). All of it comes from
        X'A_S (one p x k product), the column norms and X'y: one pass over X for the
        whole neighbourhood, never the p x p Gram matrix, and no per-neighbour
        eigendecomposition except where the ball binds.

        Returns
        -------
        supports : ndarray, shape ((p - s) s, s), each row sorted
        scores : ndarray, shape ((p - s) s,)
        """
        S = np.sort(np.asarray(support, dtype=np.intp))
        s = len(S)
        # neighbour i q + j: S with position i replaced by outside[j] (rows sorted)
        outside, nb, _ = one_swap_neighbours(S, self.p)
        q = len(outside)
        if self._gram is not None:
            C = self._gram[:, S]
        else:
            C = self.X.T @ self.X[:, S] / self.n  # (p, s)
        value = np.empty((s, q))
        hj = self.Xy[outside]
        ej = self.Xdiag[outside]
        dj = ej + self.lam_n
        r2 = self.r * self.r
        for i in range(s):
            B = np.delete(S, i)
            value_B, beta_B, Cq, P = self._base_fit(C, S, B, outside)
            h = hj - Cq.T @ beta_B
            d = dj - np.einsum("kq,kq->q", Cq, P)
            b = h / d  # the new column's coefficient
            value[i] = value_B - 0.5 * h * b
            # ||beta||^2 with beta_B' = beta_B - P_j b_j and the new coefficient b_j
            norm2 = (float(beta_B @ beta_B) - 2.0 * b * (P.T @ beta_B)
                     + b * b * (np.einsum("kq,kq->q", P, P) + 1.0))
            # Where the ball binds the update is only a lower bound: score exactly,
            # on the base's eigen-decomposition (one per base, not one per neighbour).
            # (A relative margin keeps rounding on the boundary on the exact side.)
            act = np.flatnonzero(norm2 > r2 * (1.0 - 1e-9))
            if len(act):
                M0, gB, _ = self._base_gram(C, S, B, outside[:0])
                value[i, act] = solve_bordered_ball_ridge(M0, gB, Cq[:, act], ej[act], hj[act],
                                                          self.yy, self.lam_n, self.r)[0]
        self.n_scored += s * q
        return nb, value.ravel()

    def restricted(self, columns, always_in=()):
        """The scorer of the same data with candidates ``columns`` and the candidate
        columns ``always_in`` moved to the always-in block (after the existing ones).

        Scores are unchanged: c(B + J) here equals c(B + J) of this scorer, because
        the ridge term and the ball treat always-in and selected columns alike.
        """
        cols = np.asarray(columns, dtype=np.intp)
        keep = np.asarray(always_in, dtype=np.intp)
        if self.gram_only:
            G, Zty, yty = self._stats
            kf = self.k_forced
            idx = np.concatenate([np.arange(kf), kf + keep, kf + cols]).astype(np.intp)
            return LeastSquaresScorer.from_gram(G[np.ix_(idx, idx)], Zty[idx], yty, self.n, self.lam, self.r,
                                                k_forced=kf + len(keep))
        forced = np.hstack([self.forced, self.X[:, keep]])
        return LeastSquaresScorer(self.X[:, cols], self.y, self.lam, self.r, forced)
    def _base_gram(self, C1, S1, B, outside):
        """The base B's Gram matrix M0 = A_B'A_B/n (always-in columns first; no ridge),
        its right-hand side gB = A_B'y/n and Cq = A_B' X_outside / n. ``C1`` is
        X' X_{S1} / n and B is a subset of S1."""
        kf = self.k_forced
        bpos = np.searchsorted(S1, B)
        kB = kf + len(B)
        gB = np.concatenate([self.Fy, self.Xy[B]])
        Cq = np.vstack([self.XF[outside].T, C1[outside][:, bpos].T])  # (kB, q)
        M = np.empty((kB, kB))
        M[:kf, :kf] = self.FF
        M[kf:, :kf] = self.XF[B]
        M[:kf, kf:] = self.XF[B].T
        M[kf:, kf:] = C1[B][:, bpos]
        return M, gB, Cq

    def _base_fit(self, C1, S1, B, outside, shift=0.0):
        """Unconstrained ridge fit on a base B (always-in columns first) and what the
        block updates need: value(B), beta_B, Cq = A_B' X_outside / n and
        P = M_B^{-1} Cq, with M_B the ridge Gram matrix of B. ``C1`` is X' X_{S1} / n
        and B is a subset of S1. With ``shift`` > 0 the ridge is lam_n + shift (the
        Lagrangian bound of :meth:`_dual_shift`); the returned value does not yet
        include its offset - shift r^2 / 2."""
        M, gB, Cq = self._base_gram(C1, S1, B, outside)
        if len(gB) == 0:
            return 0.5 * self.yy, np.zeros(0), Cq, Cq
        M[np.diag_indices(len(gB))] += self.lam_n + shift
        L = np.linalg.cholesky(M)
        beta_B = _chol_solve(L, gB)
        return 0.5 * self.yy - 0.5 * float(gB @ beta_B), beta_B, Cq, _chol_solve(L, Cq)

    def _dual_shift(self, support):
        """The multiplier mu of the ball in the fit on ``support`` (0 when the ball is slack).

        Used as a Lagrangian shift of the ridge in the bounds on whole families of
        supports around ``support``: for every support S and every mu >= 0,

            c(S) >= min_beta (1/2n) ||y - A beta||^2 + ((lam/n + mu) / 2) ||beta||^2
                    - mu r^2 / 2,

        (weak duality for the ball constraint ||beta||^2 <= r^2), with equality at
        S's own multiplier. The right-hand side is an unconstrained ridge value, so
        the rank-one and rank-two updates and the class bounds apply to it unchanged
        with lam/n replaced by lam/n + mu. Where the ball binds (small r, the
        default), the unconstrained bound (mu = 0) ignores the ball and is far below
        the scores; at the multiplier of a nearby support it is nearly exact.
        """
        G, g = self._blocks(np.asarray(support, dtype=np.intp)[None, :])
        mu = solve_ball_ridge(G, g, self.yy, self.lam_n, self.r)[2]
        return max(float(mu[0]), 0.0)

    def _rowmax_store(self, cols):
        """Row maxima of |G| = |X'X/n| computed so far against the columns ``cols``
        (NaN where not yet computed); kept across calls for the same ``cols``."""
        key = cols.tobytes()
        if getattr(self, "_rowmax_key", None) != key:
            self._rowmax_key, self._rowmax = key, np.full(len(cols), np.nan)
        return self._rowmax

    def _gram_row_max(self, cols, idx):
        """Upper bounds on max_{l in cols, l != j} |G_jl| (G = X'X/n) for j = cols[idx].

        From the stored Gram matrix when there is one. Otherwise the rows are
        computed against all columns in blocks, in single precision (half the cost
        of double) plus a rigorous rounding allowance: an inner product of n terms
        computed in single precision is off by at most gamma_n sum_i |x_ij x_il|
        (Higham, Thm 3.5; gamma_n = n u / (1 - n u), any summation order), and
        rounding X to single precision moves it by at most (2u + u^2) sum_i |x_ij x_il|;
        both are below (gamma_n (1 + u)^2 + 2u + u^2) n max|x|^2, which the
        allowance exceeds. Never holds more than ~64 MB of products at a time.
        """
        idx = np.asarray(idx, dtype=np.intp)
        rows = cols[idx]
        N, n, p = len(rows), self.n, self.p
        res = np.zeros(N)
        if N == 0:
            return res
        if self._gram is not None:
            step = max(1, (32 * 2**20) // (8 * len(cols)))
            for a in range(0, N, step):
                G = np.abs(self._gram[rows[a:a + step]][:, cols])
                G[np.arange(len(G)), idx[a:a + step]] = 0.0
                res[a:a + step] = G.max(axis=1)
            return res
        err = self._single_precision_allowance()
        outside = np.zeros(p, dtype=bool)
        outside[cols] = True
        # single-precision entries per temporary: 64 MB, or an eighth of X's size if less
        budget = max(2**18, min(64 * 2**20 // 4, self.X.size // 8))
        row_step = max(1, min(N, budget // n, 4096))
        X32 = self.single_precision_X()
        for a in range(0, N, row_step):
            r = rows[a:a + row_step]
            R32 = X32[:, r]  # (n, nr)
            acc = np.zeros(len(r), dtype=np.float32)
            col_step = max(256, budget // max(len(r), n))
            for c in range(0, p, col_step):
                d = min(p, c + col_step)
                G = R32.T @ X32[:, c:d]  # (nr, d - c)
                np.abs(G, out=G)
                G[:, ~outside[c:d]] = 0.0  # the support's own columns are not candidates
                mine = np.flatnonzero((r >= c) & (r < d))
                G[mine, r[mine] - c] = 0.0  # nor is the column itself
                np.maximum(acc, G.max(axis=1), out=acc)
            res[a:a + row_step] = acc.astype(float) / n + err
        return res

    def _single_precision_allowance(self):
        """A bound on |G_jl - fl32(X_j' X_l) / n| for every pair of columns: the error of
        an entry of G = X'X/n computed from X in single precision (the derivation is in
        :meth:`_gram_row_max`)."""
        u32 = float(np.finfo(np.float32).eps) / 2
        gamma = self.n * u32 / (1 - self.n * u32)
        if getattr(self, "_xmax", None) is None:
            self._xmax = max(float(self.X.max()), -float(self.X.min()))  # no |X| copy
        return (gamma + 2.5 * u32) * self._xmax ** 2

    @property
    def wants_single_precision(self):
        """Whether X is large enough (_SINGLE_PRECISION_MIN_ELEMENTS) for its
        single-precision copy to pay in the screens and warm starts (False on the Gram
        route, which holds no X)."""
        return self.X is not None and self.X.size >= _SINGLE_PRECISION_MIN_ELEMENTS

    def single_precision_X(self):
        """X in single precision, made once per scorer on the first call that needs it.

        The row maxima are asked for in many small batches (the class bounds' rounds,
        the two-swap's refinements), and converting X's columns again for each batch
        cost more than the products at p = 50,000 (a strided pass over all of X per
        batch: about 1.3 s of a 10 s search; issue 42). The copy is half the size of X.
        The two-swap's screen and the warm start's products at large p use it too.
        """
        if getattr(self, "_x32", None) is None:
            self._x32 = self.X.astype(np.float32)
        return self._x32

    # ------------------------------------------------------------------ cuts
    def cut(self, support):
        """Exact outer-approximation cut at the binary point z = 1_S.

        c(z') >= c(S) + grad' (z' - 1_S) for every z' in [0, 1]^p, where
        grad_j = -(lam/2n) beta_j^2 for j in S and -(X_j' rho)^2 / (2 n lam)
        for j outside S, with rho the residual of the fit on S (see
        docs/methods/exact-search.md). One X' rho product per cut.

        Returns
        -------
        value : float
        grad : ndarray, shape (p,)
        """
        S = np.asarray(support, dtype=np.intp)
        value, beta = self.fit(S[None, :])
        beta = beta[0]
        kf = self.k_forced
        if self.gram_only:  # X' rho = X'y - X'F beta_F - X'X_S beta_S
            xr = self.n * (self.Xy - self.XF @ beta[:kf] - self._gram[:, S] @ beta[kf:])
        else:
            rho = self.y - self.forced @ beta[:kf] - self.X[:, S] @ beta[kf:]
            xr = self.X.T @ rho
        grad = -(xr * xr) / (2.0 * self.n * self.lam)
        grad[S] = -(self.lam / (2.0 * self.n)) * beta[kf:] ** 2
        return float(value[0]), grad

def _chol_solve(L, b):
    """Solve (L L') x = b for a lower Cholesky factor L of a small matrix.

    Through the explicit inverse of L: the matrices here are tiny (s + |K| columns)
    and well conditioned (ridge), and scipy's cho_solve costs ~1000 times more per
    call for a k x k system with many right-hand sides (measured 16 ms vs 13 us).
    """
    Linv = np.linalg.inv(L)
    return Linv.T @ (Linv @ b)
