"""Exact scores c(S) of supports for the least-squares loss, and their sensitivity.

The score of a support S (docs/methods/selection.md) is the optimum of a
ball-constrained ridge regression on the columns S plus the always-in columns K:

    c(S) = min_{||beta||_2 <= r} (1/2n) ||y - A beta||^2 + (lam/2n) ||beta||^2,
    A = X_{K+S}.

With G = A'A/n and g = A'y/n the minimiser is beta(mu) = (G + (lam/n + mu) I)^{-1} g,
with mu = 0 when that point lies in the ball and otherwise mu > 0 the root of the
secular equation ||beta(mu)|| = r. Both are solved exactly on the eigen-decomposition
of G, batched over many supports at once (stacked k x k problems, k = |K| + s).

Everything here sees clipped, private data. Nothing in this module is released.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..search.enumeration import rank_supports

__all__ = ["LeastSquaresScorer", "sensitivity", "solve_ball_ridge"]

# Past this many columns in total the full Gram matrix is not formed (memory grows as p^2).
_FULL_GRAM_MAX_COLUMNS = 3000
# Supports scored per chunk when the Gram blocks are built from X directly.
_CHUNK_BYTES = 64 * 2**20
# Columns per base whose Gram row maxima the class bounds compute before checking
# whether more are needed (largest h^2 first).
_ROWMAX_FIRST = 256
# The same when the caller gives a target (the bounds need only clear it): start short.
_ROWMAX_FIRST_TARGET = 16
# Rows of the two-swap search whose Gram row maxima are computed at a time.
_TWO_SWAP_REFINE_CHUNK = 256
# Largest rows x p product the two-swap search forms against all of X (64 MB; at most a
# quarter of X).
_FULL_PRODUCT_MAX_ELEMENTS = 8 * 2**20
# Pairs per vectorised block of two_swap (at most; a sixteenth of X's size when less).
_PAIR_BLOCK_ELEMENTS = 2_000_000
# The two-swap search's copy of a base's columns: at most this many bytes and 1/share of X.
_PREFIX_MAX_BYTES = 64 * 2**20
_PREFIX_X_SHARE = 16


def solve_ball_ridge(G, g, yy, lam_n, r, *, tol=1e-14, max_iter=100):
    """Solve min_{||b|| <= r} 0.5*yy - b'g + 0.5 b'(G + lam_n I) b for a stack of problems.

    Parameters
    ----------
    G : ndarray, shape (m, k, k)
        Symmetric positive semi-definite matrices (A'A/n per support).
    g : ndarray, shape (m, k)
        Right-hand sides (A'y/n per support).
    yy : float
        y'y/n, common to all problems.
    lam_n : float
        Ridge weight lam/n, strictly positive.
    r : float
        Radius of the ball.

    Returns
    -------
    value : ndarray, shape (m,)
        Optimal objective values.
    beta : ndarray, shape (m, k)
        Minimisers.
    mu : ndarray, shape (m,)
        Multipliers of the ball constraint (0 where the ball is not active).

    Notes
    -----
    On the eigenbasis G = V diag(w) V', the norm of beta(mu) is
    sum_i gt_i^2 / (w_i + lam_n + mu)^2 with gt = V'g, strictly decreasing in mu.
    Newton's method on phi(mu) = 1/||beta(mu)|| - 1/r (concave and increasing)
    started at mu = 0 converges monotonically from the left (More and Sorensen 1983),
    so no bracketing safeguard is needed; lam_n > 0 rules out the "hard case".
    """
    G = np.asarray(G, dtype=float)
    g = np.asarray(g, dtype=float)
    w, V = np.linalg.eigh(G)
    w = np.maximum(w, 0.0)  # G is PSD; clip rounding below zero
    gt = np.einsum("mki,mk->mi", V, g)
    gt2 = gt * gt
    d = w + lam_n
    norm2 = np.sum(gt2 / (d * d), axis=1)
    r2 = r * r
    mu = np.zeros(len(g))
    active = norm2 > r2
    if np.any(active):
        ga, wa = gt2[active], d[active]
        m = np.zeros(len(ga))
        for _ in range(max_iter):
            dd = wa + m[:, None]
            nrm2 = np.sum(ga / dd**2, axis=1)
            nrm = np.sqrt(nrm2)
            phi = 1.0 / nrm - 1.0 / r
            dphi = np.sum(ga / dd**3, axis=1) / (nrm2 * nrm)
            m = m - phi / dphi
            if np.all(np.abs(phi) * r <= tol):
                break
        mu[active] = m
    bt = gt / (d + mu[:, None])
    value = 0.5 * yy - np.sum(bt * gt, axis=1) + 0.5 * np.sum(d * bt * bt, axis=1)
    beta = np.einsum("mik,mk->mi", V, bt)
    return value, beta, mu


def sensitivity(bounds, b_y, r, s, forced_bounds=(), n=1):
    """Sensitivity Delta of every score c(S) with |S| = s under row replacement.

    One row's loss lies in [0, (|y_i| + ||x_{i,K+S}|| r)^2] / (2n) on the ball, so
    replacing a row moves every c(S) (and every order statistic of the scores,
    Lemma A.2 of the paper) by at most

        Delta = (b_y + r sqrt(B_s))^2 / (2n),

    with B_s the sum of the s largest squared candidate bounds plus the squared
    bounds of the always-in columns (1 for the intercept).

    Parameters
    ----------
    bounds : array_like, shape (p,)
        Public bounds b_j of the candidate columns (after any public rescaling).
    b_y : float
        Public bound of the response.
    r : float
        Radius of the coefficient ball.
    s : int
        Support size.
    forced_bounds : array_like
        Bounds of the always-in columns.
    n : int
        Number of rows (public under row replacement).
    """
    b = np.sort(np.asarray(bounds, dtype=float) ** 2)[::-1]
    B_s = float(np.sum(b[:s])) + float(np.sum(np.asarray(forced_bounds, dtype=float) ** 2))
    return (b_y + r * math.sqrt(B_s)) ** 2 / (2.0 * n)


class LeastSquaresScorer:
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

    loss = "squared"

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
        s, p = len(S), self.p
        outside = np.setdiff1d(np.arange(p), S)
        q = len(outside)
        if self._gram is not None:
            C = self._gram[:, S]
        else:
            C = self.X.T @ self.X[:, S] / self.n  # (p, s)
        # neighbour (i, j): S with position i replaced by outside[j]
        nb = np.repeat(S[None, :], s * q, axis=0).reshape(s, q, s)
        value = np.empty((s, q))
        norm2 = np.empty((s, q))
        hj = self.Xy[outside]
        dj = self.Xdiag[outside] + self.lam_n
        for i in range(s):
            nb[i, :, i] = outside
            value_B, beta_B, Cq, P = self._base_fit(C, S, np.delete(S, i), outside)
            h = hj - Cq.T @ beta_B
            d = dj - np.einsum("kq,kq->q", Cq, P)
            b = h / d  # the new column's coefficient
            value[i] = value_B - 0.5 * h * b
            # ||beta||^2 with beta_B' = beta_B - P_j b_j and the new coefficient b_j
            norm2[i] = (float(beta_B @ beta_B) - 2.0 * b * (P.T @ beta_B)
                        + b * b * (np.einsum("kq,kq->q", P, P) + 1.0))
        nb = nb.reshape(s * q, s)
        value, norm2 = value.ravel(), norm2.ravel()
        # Rows are stored with the swapped-in index at position i; sort each support.
        nb = np.take_along_axis(nb, np.argsort(nb, axis=1), axis=1)
        # Where the ball binds the update is only a lower bound: score exactly. (A
        # relative margin keeps rounding on the boundary on the exact side.)
        active = norm2 > self.r * self.r * (1.0 - 1e-9)
        if np.any(active):
            value[active] = self.score(nb[active], cross=(S, C))
        self.n_scored += s * q - int(np.count_nonzero(active))
        return nb, value

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

    # ------------------------------------------------------------ two swaps
    def two_swap(self, support, keep, threshold=np.inf, other_values=None,
                 block_elements=None):
        """The ``keep`` best supports with exactly two elements swapped out of ``support``.

        Exact, without scoring the whole class one support at a time. A member of
        the class is B + {j, k}: a base B (``support`` minus two elements, C(s, 2)
        bases) and a pair of outside columns. For a base, the unconstrained ridge
        value of B + {j, k} follows from the fit on B by a rank-two block update,

            value = value(B) - h' S^{-1} h / 2,

        with h_j = X_j' (y - A_B beta_B) / n and S the 2 x 2 Schur complement of the
        ridge Gram matrix. That value is exact when the minimiser lies in the ball
        and a lower bound when it does not (the ball only adds a constraint); the
        few candidates whose minimiser leaves the ball are re-scored exactly.

        Pairs are pruned before any pair work with a bound that uses per-column
        quantities only: with t_j = |h_j| / sqrt(S_jj) and |S_jk| <= mu sqrt(S_jj S_kk),
        h' S^{-1} h <= (t_j^2 + t_k^2 + 2 mu t_j t_k) / (1 - mu^2). S = lam_n I + W with
        W positive semi-definite gives mu <= rho = max_j (1 - lam_n / S_jj) for every
        pair; for a column j whose largest off-diagonal |Gram| entry is known (the row
        maxima the class bounds use, computed here too for the rows that would
        otherwise pair with a long prefix of columns), |S_jk| <= m_j for every k gives
        a much smaller mu. A pair is skipped only when the bound proves its value is
        above the running cut-off (the ``keep``-th best value found so far, or
        ``threshold``).

        Parameters
        ----------
        support : array_like of int, shape (s,)
        keep : int
            How many of the best class members to return.
        threshold : float
            Only members scoring at most this are of interest (a certified upper
            bound on the value of the last member the caller needs).
        other_values : array_like, optional
            Scores of supports outside the class that compete for the same list
            (for top-R: S_1 and its one-swap neighbours). The cut-off is then the
            ``keep``-th smallest of these and the members found so far, so fewer
            pairs are evaluated; only class members are returned.
        block_elements : int, optional
            Pairs evaluated per vectorised block (memory: about ten arrays of this
            many float64 values live at once). By default 2 million, or a sixteenth of
            X's size if that is less, so that the working memory stays small next
            to X for small problems.

        Returns
        -------
        supports : ndarray, shape (m, s), rows sorted, m <= keep
            The best members with score <= threshold, best first (ties by index).
        scores : ndarray, shape (m,)
        bound : float
            Every member not returned scores >= bound (exactly: the cut-off in
            force when the search ended).
        """
        S1 = np.sort(np.asarray(support, dtype=np.intp))
        s, p, n = len(S1), self.p, self.n
        keep = int(keep)
        if block_elements is None:
            block_elements = max(100_000, min(_PAIR_BLOCK_ELEMENTS, self.data_size // 16))
        outside = np.setdiff1d(np.arange(p), S1)
        q = len(outside)
        if s < 2 or q < 2 or keep < 1:
            return np.empty((0, s), dtype=np.intp), np.empty(0), np.inf
        C1 = self._gram[:, S1] if self._gram is not None else self.X.T @ self.X[:, S1] / n
        # The running list of the best members: (values, supports) arrays.
        best_v = np.empty(0)
        best_S = np.empty((0, s), dtype=np.intp)
        cutoff = float(threshold)
        others = np.sort(np.asarray(other_values if other_values is not None else [], float))
        others = others[:keep]
        if len(others) >= keep:
            cutoff = min(cutoff, float(others[keep - 1]))

        def offer(vals, sups):
            nonlocal best_v, best_S, cutoff
            best_v = np.concatenate([best_v, vals])
            best_S = np.vstack([best_S, sups])
            if len(best_v) > keep:
                # Keep the `keep` best (ties at the boundary by the lexicographic rule);
                # a partition first, so the full sort only sees the boundary ties.
                kth = np.partition(best_v, keep - 1)[keep - 1]
                cand = np.flatnonzero(best_v <= kth)
                order = cand[rank_supports(best_S[cand], best_v[cand])[:keep]]
                best_v, best_S = best_v[order], best_S[order]
            if len(best_v) + len(others) >= keep:
                both = np.concatenate([others, best_v])
                cutoff = min(cutoff, float(np.partition(both, keep - 1)[keep - 1]))

        tol = 1e-12 * max(1.0, abs(self.yy))
        rowmax = self._rowmax_store(outside)  # shared with the class bounds
        for drop in itertools.combinations(range(s), 2):
            B = np.delete(S1, drop)
            # Pair values under the Lagrangian shift of the base's own ball multiplier
            # (_dual_shift): lower bounds that stay close to the scores of B + {j, k}
            # where the ball binds (two weak added columns barely move the
            # multiplier), so few pairs are left for an exact score. With shift = 0
            # they are the unconstrained ridge values, exact wherever the ball is slack.
            shift = self._dual_shift(B)
            lam_b = self.lam_n + shift
            value_B, beta_B, Cq, P = self._base_fit(C1, S1, B, outside, shift)
            value_B -= 0.5 * shift * self.r * self.r
            nB = float(beta_B @ beta_B)
            h = self.Xy[outside] - Cq.T @ beta_B
            v = np.einsum("kq,kq->q", Cq, P)  # what B explains of each column
            d = self.Xdiag[outside] + lam_b - v
            u = P.T @ beta_B
            Qd = np.einsum("kq,kq->q", P, P)
            t = np.abs(h) / np.sqrt(d)
            rho = float(np.max(1.0 - lam_b / d))
            # Rows in decreasing t: for row position a, only columns b > a with
            # t_b >= tau_a can beat the cut-off, a prefix of the order.
            order = np.argsort(-t, kind="stable")
            ts = t[order]
            # mu_j bounds |E_jl| / sqrt(d_j d_l) over all partners l: rho for every
            # column, much less for a column whose Gram row maximum is known.
            sv = np.sqrt(np.maximum(v, 0.0))
            scale = np.sqrt(d * float(d.min()))
            mus = np.full(q, rho)

            def set_mu(pos):
                """mu at the t-order positions ``pos`` from the stored row maxima."""
                j = order[pos]
                m = rowmax[j] + sv[j] * float(sv.max())
                mus[pos] = np.minimum(rho, np.where(np.isnan(m), rho, m / scale[j]))

            set_mu(np.arange(q))
            mu_suf = np.maximum.accumulate(mus[::-1])[::-1]
            prefix = _PrefixColumns(self.X, outside[order]) if self._gram is None else None
            # Row blocks small enough that skipping the lower triangle pays.
            rows_per_block = max(1, min(block_elements // q, max(64, q // 8)))
            a = 0
            while a < q - 1:
                need = 2.0 * (value_B - cutoff) - tol
                if need > 0 and _pair_gain_bound(mu_suf[a], ts[a], ts[a + 1]) < need:
                    break  # no later pair can reach the cut-off either
                if np.isnan(rowmax[order[a]]) and (
                        need <= 0 or _pair_prefix(ts, ts[a:a + 1], mus[a:a + 1], need) - a
                        > max(q // 8, 1)):
                    # This row would pair with a long prefix: computing the Gram row
                    # maxima of the next rows first (once per support, kept for later
                    # bases and calls) usually shortens their prefixes a lot.
                    pos = np.arange(a, min(q, a + _TWO_SWAP_REFINE_CHUNK))
                    pos = pos[np.isnan(rowmax[order[pos]])]
                    rowmax[order[pos]] = self._gram_row_max(outside, order[pos])
                    set_mu(pos)
                    mu_suf = np.maximum.accumulate(mus[::-1])[::-1]
                # As many rows as fit in the block's memory: the block spans the
                # columns after its first row up to the longest prefix any of its rows
                # needs, and it is at most twice as tall as it is wide (its lower
                # triangle is skipped work). Fewer, taller blocks gather fewer columns
                # of X, which costs more than the products themselves when X is
                # stored by rows.
                look = np.arange(a, min(q, a + max(rows_per_block, block_elements)))
                if need > 0:
                    ends = np.maximum.accumulate(_pair_prefix_ends(ts, ts[look], mus[look], need))
                else:
                    ends = np.full(len(look), q)
                widths = np.maximum(ends - a - 1, 1)
                fits = (np.arange(1, len(look) + 1) * widths <= block_elements) & (
                    np.arange(1, len(look) + 1) <= np.maximum(widths // 2, 1))
                nrows = max(rows_per_block, int(np.argmin(fits)) if not fits.all() else len(look))
                ra = look[:nrows]
                # (The same prefix as ends[nrows - 1], taken from the rows themselves so
                # that the block's size only ever decides speed, never which pairs are
                # looked at.)
                ncol = _pair_prefix(ts, ts[ra], mus[ra], need) if need > 0 else q
                rows = order[ra]
                if ncol <= a + 1:
                    a += len(rows)
                    continue
                c0 = a + 1
                cols = order[c0:ncol]
                Xo_r, Xo_c = outside[rows], outside[cols]
                if self._gram is not None:
                    G = self._gram[Xo_r[:, None], Xo_c[None, :]]
                else:
                    G = prefix.product(Xo_r, c0, ncol)
                    if G is None:
                        G = self._cross_block(Xo_r, Xo_c)
                E = G - Cq[:, rows].T @ P[:, cols]
                dr, dc = d[rows], d[cols]
                hr, hc = h[rows], h[cols]
                # gain = h' S^{-1} h for S = [[dr, E], [E, dc]], in as few passes as possible
                det = np.multiply.outer(dr, dc) - E * E
                num = np.multiply.outer(hr * hr, dc) + np.multiply.outer(dr, hc * hc)
                num -= 2.0 * E * np.multiply.outer(hr, hc)
                val = value_B - 0.5 * num / det
                # Each unordered pair once: column position must come after row position.
                val[np.arange(c0, ncol)[None, :] <= ra[:, None]] = np.inf
                flat = val.ravel()
                # Probe the most promising pairs first: their exact scores tighten the
                # cut-off before the rest of the block is filtered against it.
                live = np.isfinite(flat) & (flat <= cutoff + tol)
                # As many as it takes to fill the list (``others`` count towards it):
                # then the cut-off is finite. With top-R's R - 1 other values that is
                # one pair, where probing ``keep`` pairs re-scored up to R of them
                # exactly against an infinite cut-off (p = 10,000: 50,000 re-scores
                # for a list that kept one member).
                m_probe = min(max(keep - len(others), 1), int(np.count_nonzero(live)))
                done = np.zeros(0, dtype=np.intp)
                if 0 < m_probe < len(flat):
                    done = np.argpartition(np.where(live, flat, np.inf), m_probe - 1)[:m_probe]
                    done = done[live[done]]
                    self._offer_pairs(done, val.shape, E, det, val, rows, cols, B, outside,
                                      P, u, Qd, nB, d, h, offer, lambda: cutoff, tol, shift,
                                      (S1, C1, G))
                    live[done] = False
                live &= flat <= cutoff + tol
                rest = np.flatnonzero(live)
                self._offer_pairs(rest, val.shape, E, det, val, rows, cols, B, outside,
                                  P, u, Qd, nB, d, h, offer, lambda: cutoff, tol, shift,
                                  (S1, C1, G))
                self.n_scored += len(done) + len(rest)
                a += len(rows)
        if len(best_v):
            order = rank_supports(best_S, best_v)
            best_v, best_S = best_v[order], best_S[order]
        # Members above the final cut-off cannot be among the `keep` best overall.
        below = best_v <= min(threshold, cutoff) + tol
        return best_S[below], best_v[below], cutoff

    def _cross_block(self, rows, cols):
        """X[:, rows]' X[:, cols] / n for a short list ``rows`` and any list ``cols``.

        X is stored by rows (C order), so X[:, cols] gathers scattered elements of
        every row, about one cache miss per element: in t-order that is several
        times the cost of the product itself (0.18 s for 12,000 of 50,000 columns at
        n = 1000, against 0.02 s for the product with 40 rows). The gather is done in
        index order (memory order; the columns are put back in the caller's order
        afterwards on the small result). The product with all of X instead costs
        2 n p flops per row and no gather; it is cheaper once the columns exceed
        about len(rows) p / 200 (measured at p = 50,000 and 100,000, n = 1000, one
        thread), and it is taken then if its len(rows) x p result stays within 64 MB
        and a quarter of X.
        """
        n, p = self.n, self.p
        Xr = self.X[:, rows]
        if len(cols) * 200 > len(rows) * p and len(rows) * p <= min(_FULL_PRODUCT_MAX_ELEMENTS,
                                                                     self.X.size // 4):
            return (Xr.T @ self.X)[:, cols] / n
        perm = np.argsort(cols, kind="stable")
        G = np.empty((len(rows), len(cols)))
        G[:, perm] = Xr.T @ self.X[:, cols[perm]]
        G /= n
        return G

    def _offer_pairs(self, flat_idx, shape, E, det, val, rows, cols, B, outside, P, u, Qd, nB,
                     d, h, offer, get_cutoff, tol, shift=0.0, known=None):
        """Exact scores of the pairs at ``flat_idx`` of a two-swap block, offered to the
        running list: the rank-two value where the minimiser stays in the ball, an
        exact re-score where the ball binds (there the update is only a lower bound).
        Under a Lagrangian shift (> 0) the block values are bounds only, so every
        pair offered is re-scored exactly. ``known`` = (S1, X'X_S1/n, the block's raw
        Gram entries) lets the re-scores skip X."""
        if len(flat_idx) == 0:
            return
        ii, jj = np.unravel_index(flat_idx, shape)
        rj, ck = rows[ii], cols[jj]
        # The new coefficients (S^{-1} h) of the pair, needed for the ball check.
        e, dt = E[ii, jj], det[ii, jj]
        vj = (d[ck] * h[rj] - e * h[ck]) / dt
        vk = (d[rj] * h[ck] - e * h[rj]) / dt
        Qjk = np.einsum("km,km->m", P[:, rj], P[:, ck])
        norm2 = (nB - 2.0 * (vj * u[rj] + vk * u[ck]) + vj * vj * Qd[rj]
                 + 2.0 * vj * vk * Qjk + vk * vk * Qd[ck] + vj * vj + vk * vk)
        vals = val[ii, jj].copy()
        s = len(B) + 2
        sups = np.sort(np.column_stack([np.broadcast_to(B, (len(ii), s - 2)),
                                        outside[rj], outside[ck]]), axis=1)
        active = norm2 > self.r * self.r
        if shift > 0:
            active[:] = True
        if np.any(active):
            if known is not None:
                S1, C1, Graw = known
                vals[active] = self.score(sups[active], cross=(S1, C1),
                                          pair_gram=Graw[ii, jj][active])
            else:
                vals[active] = self.score(sups[active])
        keep_mask = vals <= get_cutoff() + tol
        offer(vals[keep_mask], sups[keep_mask])

    # ------------------------------------------------------- mistake-class bounds
    def class_lower_bounds(self, support, ks, target=None):
        """Certified lower bounds on the best score of each mistake class around a support.

        Class k holds the supports B + J with B = ``support`` minus k elements and J
        k outside columns. For one base B the unconstrained ridge value is exact by
        block elimination,

            value(B + J) = value(B) - h_J' S_J^{-1} h_J / 2,    S_J = lam_n I + W_J,

        with W_J the Gram matrix of J after removing what B explains (positive
        semi-definite), and the ball can only raise the score, so a bound on the
        gain h_J' S_J^{-1} h_J <= ||h_J||^2 / lambda_min(S_J) over all J gives a bound
        on the class. lambda_min(S_J) >= lam_n always; Gershgorin's theorem gives
        more: lambda_min(S_J) >= min over j in J of lam_n + W_jj - (radius of row j),
        the radius being the sum of |W_jl| over the other members l of J.

        The radii need bounds m_j >= max_l |W_jl| over all outside columns l, and
        the exact ones cost a pass over the p x p Gram matrix. Only the columns with
        large h_j^2 need them, so they are computed ("refined") for a short list:

        - J with no unrefined member: row j's radius is at most (k - 1) m_j, with
          m_j from the exact largest |Gram| entry of column j plus a Cauchy-Schwarz
          term for the part B explains (and never above sqrt(W_jj max_l W_ll));
        - J with one unrefined member i: by symmetry |W_il| <= m_l for every refined
          l, so row i's radius is at most (k - 1) max over refined m_l;
        - J with u >= 2 unrefined members: only lambda_min >= lam_n is used, so the
          gain is at most (the k - u largest h^2 overall + the u largest unrefined
          h^2) / lam_n.

        The first two cases give one threshold e_j per column and the maximum of
        sum_J h^2 / max(lam_n, min_J e) over J is found exactly (_max_ratio). More
        columns are refined, largest h^2 first, until the third case is below the
        first two (so the unrefined columns no longer decide the bound) or every
        column is refined. With the usual ridge this needs a few hundred columns per
        base instead of all p, and the row maxima are computed once per support and
        kept for later calls.

        Everything above holds with lam_n replaced by lam_n + mu and the bound lowered
        by mu r^2 / 2, for any mu >= 0 (:meth:`_dual_shift`); each base is bounded at
        mu = 0, at its own ball multiplier and at S1's, and keeps the largest.

        Parameters
        ----------
        support : array_like of int, shape (s,)
        ks : iterable of int
            Classes (numbers of mistakes) to bound, each in 1..min(s, p - s).
        target : float, optional
            Stop refining once every bound is above this value (the caller only
            needs to know that): the refinement starts from a short list per base
            and grows only while some class is still at or below the target. The
            bounds are valid either way, but may be lower than without a target.

        Returns
        -------
        dict
            k -> lower bound on min over class k of c (inf for an empty class).
        """
        S1 = np.sort(np.asarray(support, dtype=np.intp))
        s, p, n = len(S1), self.p, self.n
        outside = np.setdiff1d(np.arange(p), S1)
        q = len(outside)
        ks = [int(k) for k in ks]
        out = {k: np.inf for k in ks if not 1 <= k <= min(s, q)}  # empty classes
        ks = [k for k in ks if k not in out]
        if not ks:
            return out
        C1 = self._gram[:, S1] if self._gram is not None else self.X.T @ self.X[:, S1] / n
        # One entry per (class, base, shift): what the gain bound needs about every
        # outside column. Each base is bounded with the plain ridge and under the
        # Lagrangian shifts of its own ball multiplier and of S1's (_dual_shift: every
        # J's score is at least the shifted ridge value minus shift r^2 / 2; a member
        # B + J has s columns like S1, so where the ball binds S1's multiplier is
        # usually close to its own even when B alone sits inside the ball), and keeps
        # the largest bound. The shift is what makes the bound bite where the ball
        # binds. Only the entry with the largest shift decides which Gram row maxima
        # are worth computing (the plain one would ask for nearly all of them, an
        # n p^2 pass with a weak ridge, to tighten a bound the shifted one already
        # exceeds); the others use whatever row maxima are known.
        mu1 = self._dual_shift(S1)
        bases = []
        for k in ks:
            for drop in itertools.combinations(range(s), k):
                B = np.delete(S1, drop)
                shifts = sorted({0.0, self._dual_shift(B), mu1})
                shift = shifts[-1]
                for sh in shifts:
                    value_B, beta_B, Cq, P = self._base_fit(C1, S1, B, outside, sh)
                    h = self.Xy[outside] - Cq.T @ beta_B
                    v = np.maximum(np.einsum("kq,kq->q", Cq, P), 0.0)
                    wd = np.maximum(self.Xdiag[outside] - v, 0.0)  # W_jj
                    bases.append((k, value_B - 0.5 * sh * self.r * self.r, h * h, wd,
                                  np.sqrt(v), self.lam_n + sh, drop, sh == shift))
        rowmax = self._rowmax_store(outside)
        first = _ROWMAX_FIRST if target is None else _ROWMAX_FIRST_TARGET
        want = np.concatenate([_top_indices(b[2], min(q, first)) for b in bases if b[-1]])
        # ||h_J|| bound of the ball cap: the root of the k largest h^2, per entry
        tops = [float(np.sqrt(np.sum(np.partition(b[2], q - b[0])[q - b[0]:]))) if b[0] < q
                else float(np.sqrt(np.sum(b[2]))) for b in bases]
        for _ in range(64):
            todo = np.unique(want)
            todo = todo[np.isnan(rowmax[todo])]
            if len(todo):
                rowmax[todo] = self._gram_row_max(outside, todo)
            known = ~np.isnan(rowmax)
            gains, more = [], []
            for k, value_B, h2, wd, sv, lam_b, _, drives in bases:
                g, extra = _class_gain(k, h2, wd, sv, rowmax, known, lam_b)
                gains.append(g)
                if drives:
                    more.append(extra)
            want = np.concatenate(more)
            if len(want) == 0:
                break
            if target is not None and min(
                    self._bounds_from(bases, gains, tops, out).values()) > target:
                break  # the caller's question is settled
        else:  # not settled after many rounds (never seen): refine everything left
            todo = np.flatnonzero(np.isnan(rowmax))
            rowmax[todo] = self._gram_row_max(outside, todo)
            known = np.ones(q, dtype=bool)
            gains = [_class_gain(k, h2, wd, sv, rowmax, known, lam_b)[0]
                     for k, value_B, h2, wd, sv, lam_b, *_ in bases]
        self.n_rowmax = int(np.count_nonzero(~np.isnan(rowmax)))  # for the bench
        return self._bounds_from(bases, gains, tops, out)

    def _bounds_from(self, bases, gains, tops, empty):
        """Class bounds from each (class, base, shift) entry's gain bound: per base the
        best of its shifts, per class the worst of its bases. ``empty``: the bounds
        of the empty classes (inf), copied into the result."""
        out = dict(empty)
        per_base = {}  # (k, dropped positions) -> the best of its bounds
        for (k, value_B, _, _, _, lam_b, drop, _), g, a in zip(bases, gains, tops):
            # The ball caps the gain too: with beta_B minimised out, the score of B + J
            # is value(B) - h_J' b + b' S_J b / 2 at b = beta_J, and ||b|| <= r, so the
            # gain is at most max over t in [0, r] of a t - lam_b t^2 / 2 with
            # a = ||h_J|| (at most the root of the k largest h^2) and S_J >= lam_b I.
            # With a small ridge and columns whose Gram row maxima are not known,
            # this is far below the eigenvalue bound g / 2.
            per_base[k, drop] = max(per_base.get((k, drop), -np.inf),
                                    value_B - min(0.5 * g, _ball_gain_cap(a, lam_b, self.r)))
        for (k, _), bound in per_base.items():
            out[k] = min(out.get(k, np.inf), bound)
        return out

    def _base_fit(self, C1, S1, B, outside, shift=0.0):
        """Unconstrained ridge fit on a base B (always-in columns first) and what the
        block updates need: value(B), beta_B, Cq = A_B' X_outside / n and
        P = M_B^{-1} Cq, with M_B the ridge Gram matrix of B. ``C1`` is X' X_{S1} / n
        and B is a subset of S1. With ``shift`` > 0 the ridge is lam_n + shift (the
        Lagrangian bound of :meth:`_dual_shift`); the returned value does not yet
        include its offset - shift r^2 / 2."""
        kf = self.k_forced
        bpos = np.searchsorted(S1, B)
        kB = kf + len(B)
        gB = np.concatenate([self.Fy, self.Xy[B]])
        Cq = np.vstack([self.XF[outside].T, C1[outside][:, bpos].T])  # (kB, q)
        if kB == 0:
            return 0.5 * self.yy, np.zeros(0), Cq, Cq
        M = np.empty((kB, kB))
        M[:kf, :kf] = self.FF
        M[kf:, :kf] = self.XF[B]
        M[:kf, kf:] = self.XF[B].T
        M[kf:, kf:] = C1[B][:, bpos]
        M[np.diag_indices(kB)] += self.lam_n + shift
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
        u32 = float(np.finfo(np.float32).eps) / 2
        gamma = n * u32 / (1 - n * u32)
        if getattr(self, "_xmax", None) is None:
            self._xmax = max(float(self.X.max()), -float(self.X.min()))  # no |X| copy
        err = (gamma + 2.5 * u32) * self._xmax ** 2
        outside = np.zeros(p, dtype=bool)
        outside[cols] = True
        # single-precision entries per temporary: 64 MB, or an eighth of X's size if less
        budget = max(2**18, min(64 * 2**20 // 4, self.X.size // 8))
        row_step = max(1, min(N, budget // n, 4096))
        for a in range(0, N, row_step):
            r = rows[a:a + row_step]
            R32 = self.X[:, r].astype(np.float32)  # (n, nr)
            acc = np.zeros(len(r), dtype=np.float32)
            col_step = max(256, budget // max(len(r), n))
            for c in range(0, p, col_step):
                d = min(p, c + col_step)
                G = R32.T @ self.X[:, c:d].astype(np.float32)  # (nr, d - c)
                np.abs(G, out=G)
                G[:, ~outside[c:d]] = 0.0  # the support's own columns are not candidates
                mine = np.flatnonzero((r >= c) & (r < d))
                G[mine, r[mine] - c] = 0.0  # nor is the column itself
                np.maximum(acc, G.max(axis=1), out=acc)
            res[a:a + row_step] = acc.astype(float) / n + err
        return res

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


def check_scorer_inputs(X, y, lam, r, forced):
    """Arrays of a scorer as contiguous floats (forced as an n x k block); lam, r > 0."""
    X = np.ascontiguousarray(X, dtype=float)
    y = np.asarray(y, dtype=float).ravel()
    n = X.shape[0]
    forced = np.empty((n, 0)) if forced is None else forced
    forced = np.ascontiguousarray(forced, dtype=float).reshape(n, -1)
    if lam <= 0:
        raise ValueError("lam must be > 0")
    if r <= 0:
        raise ValueError("r must be > 0")
    return X, y, forced


def _chol_solve(L, b):
    """Solve (L L') x = b for a lower Cholesky factor L of a small matrix.

    Through the explicit inverse of L: the matrices here are tiny (s + |K| columns)
    and well conditioned (ridge), and scipy's cho_solve costs ~1000 times more per
    call for a k x k system with many right-hand sides (measured 16 ms vs 13 us).
    """
    Linv = np.linalg.inv(L)
    return Linv.T @ (Linv @ b)


def _pair_gain_bound(mu, ta, tb):
    """Largest h' S^{-1} h of a two-column block with t = |h| / sqrt(diag S) equal to
    (ta, tb) and off-diagonal correlation |S_ab| / sqrt(S_aa S_bb) at most mu < 1:
    (ta^2 + tb^2 + 2 mu ta tb) / (1 - mu^2), increasing in ta, tb and mu."""
    return (ta * ta + tb * tb + 2.0 * mu * ta * tb) / (1.0 - mu * mu)


class _PrefixColumns:
    """Columns of X in one base's t-order, gathered once for a run of pair blocks.

    The pair blocks of one base need the column ranges [c0, ncol) of that order with
    c0 growing and ncol (mostly) shrinking from block to block, so each range lies
    inside the one before. Gathering the first short enough range once and taking
    every later block's columns as a slice of it (a view: no copy) replaces one
    scattered gather of X per block, the largest cost of the search at p = 100,000.
    Only ranges of at most min(64 MB, X / 16) are kept, so the copy stays small
    next to X.
    """

    def __init__(self, X, cols_in_order):
        self.X, self.cols = X, cols_in_order
        cap = min(_PREFIX_MAX_BYTES, X.nbytes // _PREFIX_X_SHARE)
        self.max_cols = max(1, cap // (8 * X.shape[0]))
        self.span, self.block = None, None

    def product(self, rows, c0, ncol):
        """X[:, rows]' X[:, cols[c0:ncol]] / n, or None when the range is too wide."""
        if self.span is None or not (self.span[0] <= c0 and ncol <= self.span[1]):
            if ncol - c0 > self.max_cols:
                return None
            idx = self.cols[c0:ncol]
            perm = np.argsort(idx, kind="stable")  # gather in memory order
            block = np.empty((self.X.shape[0], len(idx)))
            block[:, perm] = self.X[:, idx[perm]]
            self.span, self.block = (c0, ncol), block
        a = c0 - self.span[0]
        return self.X[:, rows].T @ self.block[:, a:a + ncol - c0] / self.X.shape[0]


def _pair_prefix_ends(ts, ta, mu, need):
    """Per row i, the length of the prefix of ``ts`` that :func:`_pair_prefix` gives
    for that row alone."""
    tau = np.sqrt((1.0 - mu * mu) * np.maximum(need - ta * ta, 0.0)) - mu * ta
    return np.searchsorted(-ts, -tau, side="right")


def _pair_prefix(ts, ta, mu, need):
    """Length of the prefix of ``ts`` (decreasing) holding every t_b for which some
    row (ta_i, mu_i) has _pair_gain_bound(mu_i, ta_i, t_b) >= need (> 0): the bound
    reaches ``need`` exactly for t_b >= sqrt((1 - mu^2)(need - ta^2)) - mu ta."""
    tau = np.sqrt((1.0 - mu * mu) * np.maximum(need - ta * ta, 0.0)) - mu * ta
    return int(np.searchsorted(-ts, -float(np.min(tau)), side="right"))


def _top_indices(v, m):
    """Indices of the m largest entries of v (any order)."""
    if m >= len(v):
        return np.arange(len(v))
    if m <= 0:
        return np.empty(0, dtype=np.intp)
    return np.argpartition(v, len(v) - m)[len(v) - m:]


def _class_gain(k, h2, wd, sv, rowmax, known, lam_n):
    """Upper bound on max over k outside columns J of h_J' S_J^{-1} h_J for one base
    (see LeastSquaresScorer.class_lower_bounds), and the unrefined columns whose
    row maxima would be needed to stop the J with >= 2 unrefined members from
    deciding it (empty when they do not)."""
    wmax = float(wd.max())
    cs = np.sqrt(wd * wmax)  # |W_jl| <= sqrt(W_jj W_ll) for a PSD W
    svmax = float(sv.max())
    m = np.minimum(np.where(known, rowmax, np.inf) + sv * svmax, cs)
    m_ref = float(m[known].max()) if known.any() else 0.0
    # Refined rows: radius <= (k - 1) m_j. An unrefined member i (the only one in J):
    # |W_il| <= m_l for the refined others, and <= cs_i always.
    radius = np.where(known, m, np.minimum(m_ref, cs))
    d = np.maximum(lam_n + wd - (k - 1) * radius, lam_n)
    gain = _max_ratio(h2, d, k)
    unref = np.flatnonzero(~known)
    if k < 2 or len(unref) < 2:
        return gain, unref[:0]
    # Unrefined h^2 in decreasing order; refining the first c of them leaves hu[c:].
    hu_idx = unref[np.argsort(-h2[unref], kind="stable")]
    hu = h2[hu_idx]
    csum = np.concatenate([[0.0], np.cumsum(hu)])
    ref = np.flatnonzero(known)
    h2r = np.sort(h2[ref])[::-1]
    g_many, need = 0.0, 0
    for u in range(2, min(k, len(hu)) + 1):
        bound = _mixed_bound(k, u, h2[ref], wd[ref], m[ref], h2r, lam_n)
        win = csum[u:] - csum[:-u]  # sums of hu[c:c + u], not increasing in c
        g_many = max(g_many, bound(win[0]))
        if bound(win[0]) <= gain:
            continue
        lo, hi = 0, len(win)  # first c with bound(win[c]) <= gain, or len(win)
        while lo < hi:
            mid = (lo + hi) // 2
            if bound(win[mid]) <= gain:
                hi = mid
            else:
                lo = mid + 1
        need = max(need, lo)
    if need == 0:
        return max(gain, g_many), unref[:0]
    # Refine a little more than needed: the first-case gain moves as the set grows.
    need = min(len(hu), max(need + need // 4, 16))
    return max(gain, g_many), hu_idx[:need]


def _mixed_bound(k, u, h2r, wdr, mr, h2r_sorted, lam_n):
    """For J made of k - u refined columns (arrays restricted to the refined ones)
    and u unrefined columns with sum of h^2 at most b, a function b -> upper bound
    on h_J' S_J^{-1} h_J.

    With x = (x_R, x_U) split the same way, x' S_J x >= lam_R |x_R|^2 + lam_n |x_U|^2
    - 2 c |x_R| |x_U|, where lam_R bounds the smallest eigenvalue of the refined block
    (Gershgorin with k - u - 1 neighbours) and c >= ||W_RU|| (each entry |W_il| <= m_l
    for refined l, so ||W_RU||_F^2 <= u sum_{l in R} m_l^2). Maximising
    2 x'h - x' S_J x over the two norms gives, with A = |h_R|^2,

        h' S^{-1} h <= (lam_n A + lam_R b + 2 c sqrt(A b)) / (lam_R lam_n - c^2)

    when the denominator is positive; (A + b) / lam_n holds always. For the refined
    member i with the smallest Gershgorin value, A <= h2_i + the k - u - 1 largest
    refined h^2 (the bound is increasing in A and decreasing in lam_R)."""
    if k - u == 0 or len(h2r) == 0:
        return lambda b: b / lam_n
    lam_R = np.maximum(lam_n + wdr - (k - u - 1) * mr, lam_n)
    A = h2r + h2r_sorted[:k - u - 1].sum()
    # ||W_RU||^2 <= ||W_RU||_F^2 <= u sum_{l in R} m_l^2, with m_l <= max m for the others.
    c = np.sqrt(u * (mr * mr + (k - u - 1) * float(mr.max()) ** 2))
    det = lam_R * lam_n - c * c
    pos = det > 0
    A_pos, lam_pos, det_pos, c = A[pos], lam_R[pos], det[pos], c[pos]
    A_crude = float(A[~pos].max()) if (~pos).any() else -np.inf

    def bound(b):
        b = max(float(b), 0.0)
        crude = (A_pos + b) / lam_n
        val = (lam_n * A_pos + lam_pos * b + 2.0 * c * np.sqrt(A_pos * b)) / det_pos
        best = float(np.max(np.minimum(val, crude))) if len(A_pos) else -np.inf
        return max(best, (A_crude + b) / lam_n)
    return bound


def _ball_gain_cap(a, lam, r):
    """max over 0 <= t <= r of a t - lam t^2 / 2: the most that columns with residual
    correlations of norm a can lower a score when their coefficients lie in the ball
    of radius r and their Schur complement is at least lam I."""
    return a * r - 0.5 * lam * r * r if a >= lam * r else a * a / (2.0 * lam)


def _max_ratio(h2, d, k, max_exact=4000):
    """max over k-subsets J of sum_J h2 / min_J d (d > 0), or an upper bound on it.

    For the member i of J with the smallest d, the others lie among the columns
    with d_l >= d_i, so f(J) <= (h2_i + the k - 1 largest h2 among those) / d_i,
    with equality for the best such J: the maximum over i of the right-hand side
    is the exact maximum. Columns are examined in decreasing order of the cheap
    upper bound (h2_i + the k - 1 largest h2 overall) / d_i and the scan stops
    once that is below the best value found; after ``max_exact`` columns the
    cheap bound of the next one is returned instead (still an upper bound).
    """
    q = len(h2)
    if k == 1:
        return float(np.max(h2 / d))
    L = min(q, 64 + k)
    top = _top_indices(h2, L)
    top = top[np.argsort(-h2[top], kind="stable")]
    best = float(h2[top[:k]].sum() / d[top[:k]].min())
    ub = (h2 + h2[top[:k - 1]].sum()) / d
    cand = np.flatnonzero(ub > best)
    cand = cand[np.argsort(-ub[cand], kind="stable")]
    for count, i in enumerate(cand):
        if ub[i] <= best:
            break
        if count >= max_exact:
            return float(ub[i])
        sel = top[(d[top] >= d[i]) & (top != i)]
        if len(sel) >= k - 1:
            t = float(h2[sel[:k - 1]].sum())
        elif L < q:
            mask = d >= d[i]
            mask[i] = False
            vals = h2[mask]
            if len(vals) < k - 1:
                continue  # i is the smallest of no k-subset
            t = float(np.partition(vals, len(vals) - (k - 1))[len(vals) - (k - 1):].sum())
        else:
            continue
        best = max(best, (h2[i] + t) / d[i])
    return best
