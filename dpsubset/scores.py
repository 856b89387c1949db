"""Exact scores c(S) of supports for the least-squares loss, and their sensitivity.

The score of a support S (math-selection.md, section 2) is the optimum of a
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

from .search.enumeration import rank_supports

__all__ = ["LeastSquaresScorer", "sensitivity", "solve_ball_ridge"]

# Past this many columns in total the full Gram matrix is not formed (memory grows as p^2).
_FULL_GRAM_MAX_COLUMNS = 3000
# Supports scored per chunk when the Gram blocks are built from X directly.
_CHUNK_BYTES = 64 * 2**20


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

    # ------------------------------------------------------------------ blocks
    def _blocks(self, supports):
        """Gram blocks G (m,k,k) and right-hand sides g (m,k) for a batch of supports."""
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
        else:
            step = max(1, _CHUNK_BYTES // (8 * self.n * max(s, 1)))
            for a in range(0, m, step):
                Xs = self.X[:, S[a:a + step]]  # (n, mb, s)
                G[a:a + step, kf:, kf:] = np.einsum("nmi,nmj->mij", Xs, Xs) / self.n
        return G, g

    # ------------------------------------------------------------------ scores
    def fit(self, supports):
        """Scores and minimisers for a batch of supports.

        Returns
        -------
        score : ndarray, shape (m,)
        beta : ndarray, shape (m, k_forced + s)
        """
        S = np.atleast_2d(np.asarray(supports, dtype=np.intp))
        if S.shape[0] == 0:
            return np.empty(0), np.empty((0, self.k_forced + S.shape[1]))
        G, g = self._blocks(S)
        value, beta, _ = solve_ball_ridge(G, g, self.yy, self.lam_n, self.r)
        self.n_scored += len(S)
        return value, beta

    def score(self, supports):
        """Scores c(S) for a batch of supports (shape (m, s)); returns shape (m,)."""
        return self.fit(supports)[0]

    def neighbourhood(self, support):
        """All one-swap neighbours S - {i} + {j} of a support, and their exact scores.

        Every neighbour's Gram block is assembled from X'A_S (one p x k product),
        the column norms and X'y: one pass over X for the whole neighbourhood,
        and never the p x p Gram matrix.

        Returns
        -------
        supports : ndarray, shape ((p - s) s, s), each row sorted
        scores : ndarray, shape ((p - s) s,)
        """
        S = np.asarray(support, dtype=np.intp)
        s, p, kf = len(S), self.p, self.k_forced
        outside = np.setdiff1d(np.arange(p), S)
        q = len(outside)
        if self._gram is not None:
            C = self._gram[:, S]
        else:
            C = self.X.T @ self.X[:, S] / self.n  # (p, s)
        # neighbour (i, j): S with position i replaced by outside[j]
        nb = np.repeat(S[None, :], s * q, axis=0).reshape(s, q, s)
        for i in range(s):
            nb[i, :, i] = outside
        nb = nb.reshape(s * q, s)
        # Build blocks from C without touching X again.
        k = kf + s
        m = s * q
        G = np.empty((m, k, k))
        g = np.empty((m, k))
        G[:, :kf, :kf] = self.FF
        g[:, :kf] = self.Fy
        base = C[S]  # (s, s) Gram of S
        for i in range(s):
            sl = slice(i * q, (i + 1) * q)
            Gi = np.broadcast_to(base, (q, s, s)).copy()
            col = C[outside]  # (q, s): G[j, S]
            Gi[:, i, :] = col
            Gi[:, :, i] = col
            Gi[:, i, i] = self.Xdiag[outside]
            G[sl, kf:, kf:] = Gi
            if kf:
                XF = np.broadcast_to(self.XF[S], (q, s, kf)).copy()
                XF[:, i, :] = self.XF[outside]
                G[sl, kf:, :kf] = XF
                G[sl, :kf, kf:] = XF.transpose(0, 2, 1)
            gi = np.broadcast_to(self.Xy[S], (q, s)).copy()
            gi[:, i] = self.Xy[outside]
            g[sl, kf:] = gi
        value, _, _ = solve_ball_ridge(G, g, self.yy, self.lam_n, self.r)
        self.n_scored += m
        # Rows are stored with the swapped-in index at position i; sort each support.
        order = np.argsort(nb, axis=1)
        return np.take_along_axis(nb, order, axis=1), value

    def restricted(self, columns, always_in=()):
        """The scorer of the same data with candidates ``columns`` and the candidate
        columns ``always_in`` moved to the always-in block (after the existing ones).

        Scores are unchanged: c(B + J) here equals c(B + J) of this scorer, because
        the ridge term and the ball treat always-in and selected columns alike.
        """
        cols = np.asarray(columns, dtype=np.intp)
        keep = np.asarray(always_in, dtype=np.intp)
        forced = np.hstack([self.forced, self.X[:, keep]])
        return LeastSquaresScorer(self.X[:, cols], self.y, self.lam, self.r, forced)

    # ------------------------------------------------------------ two swaps
    def two_swap(self, support, keep, threshold=np.inf, other_values=None,
                 block_elements=2_000_000):
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
        quantities only: S = lam_n I + W with W positive semi-definite gives
        |S_jk| <= sqrt((S_jj - lam_n)(S_kk - lam_n)), hence
        h' S^{-1} h <= (|t_j| + |t_k|)^2 / (1 - rho^2), t_j = h_j / sqrt(S_jj),
        rho = max_j (1 - lam_n / S_jj). A pair is skipped only when that bound
        proves its value is above the running cut-off (the ``keep``-th best value
        found so far, or ``threshold``).

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
        block_elements : int
            Pairs evaluated per vectorised block (memory).

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
        outside = np.setdiff1d(np.arange(p), S1)
        q = len(outside)
        if s < 2 or q < 2 or keep < 1:
            return np.empty((0, s), dtype=np.intp), np.empty(0), np.inf
        C1 = self._gram[:, S1] if self._gram is not None else self.X.T @ self.X[:, S1] / n
        lam_n = self.lam_n
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
        for drop in itertools.combinations(range(s), 2):
            B = np.delete(S1, drop)
            value_B, beta_B, Cq, P = self._base_fit(C1, S1, B, outside)
            nB = float(beta_B @ beta_B)
            h = self.Xy[outside] - Cq.T @ beta_B
            d = self.Xdiag[outside] + lam_n - np.einsum("kq,kq->q", Cq, P)
            u = P.T @ beta_B
            Qd = np.einsum("kq,kq->q", P, P)
            t = np.abs(h) / np.sqrt(d)
            rho = float(np.max(1.0 - lam_n / d))
            shrink = max(1.0 - rho * rho, 0.0)
            # Rows in decreasing t: for row position a, only columns b > a with
            # t_a + t_b >= theta can beat the cut-off, a prefix of the order.
            order = np.argsort(-t, kind="stable")
            ts = t[order]
            # Row blocks small enough that skipping the lower triangle pays.
            rows_per_block = max(1, min(block_elements // q, max(64, q // 8)))
            a = 0
            while a < q - 1:
                need = 2.0 * (value_B - cutoff) - tol
                theta = math.sqrt(need * shrink) if need > 0 else 0.0
                if ts[a] + ts[a + 1] < theta:
                    break  # no later row can reach the cut-off either
                rows = order[a:a + rows_per_block]
                ra = np.arange(a, min(a + rows_per_block, q))
                # Columns after the block's first row, up to the prefix long enough for it.
                ncol = int(np.searchsorted(-ts, -(theta - ts[a]), side="right")) if theta > 0 else q
                if ncol <= a + 1:
                    break
                c0 = a + 1
                cols = order[c0:ncol]
                Xo_r, Xo_c = outside[rows], outside[cols]
                if self._gram is not None:
                    G = self._gram[Xo_r[:, None], Xo_c[None, :]]
                else:
                    G = self.X[:, Xo_r].T @ self.X[:, Xo_c] / n
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
                m_probe = min(keep, int(np.count_nonzero(live)))
                done = np.zeros(0, dtype=np.intp)
                if 0 < m_probe < len(flat):
                    done = np.argpartition(np.where(live, flat, np.inf), m_probe - 1)[:m_probe]
                    done = done[live[done]]
                    self._offer_pairs(done, val.shape, E, det, val, rows, cols, B, outside,
                                      P, u, Qd, nB, d, h, offer, lambda: cutoff, tol)
                    live[done] = False
                live &= flat <= cutoff + tol
                rest = np.flatnonzero(live)
                self._offer_pairs(rest, val.shape, E, det, val, rows, cols, B, outside,
                                  P, u, Qd, nB, d, h, offer, lambda: cutoff, tol)
                self.n_scored += len(done) + len(rest)
                a += len(rows)
        if len(best_v):
            order = rank_supports(best_S, best_v)
            best_v, best_S = best_v[order], best_S[order]
        # Members above the final cut-off cannot be among the `keep` best overall.
        below = best_v <= min(threshold, cutoff) + tol
        return best_S[below], best_v[below], cutoff

    def _offer_pairs(self, flat_idx, shape, E, det, val, rows, cols, B, outside, P, u, Qd, nB,
                     d, h, offer, get_cutoff, tol):
        """Exact scores of the pairs at ``flat_idx`` of a two-swap block, offered to the
        running list: the rank-two value where the minimiser stays in the ball, an
        exact re-score where the ball binds (there the update is only a lower bound)."""
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
        if np.any(active):
            vals[active] = self.score(sups[active])
        keep_mask = vals <= get_cutoff() + tol
        offer(vals[keep_mask], sups[keep_mask])

    # ------------------------------------------------------- mistake-class bounds
    def class_lower_bounds(self, support, ks, n_thresholds=64):
        """Certified lower bounds on the best score of each mistake class around a support.

        Class k holds the supports B + J with B = ``support`` minus k elements and J
        k outside columns. For one base B the unconstrained ridge value is exact by
        block elimination,

            value(B + J) = value(B) - h_J' S_J^{-1} h_J / 2,    S_J = lam_n I + W_J,

        (W_J the Gram matrix of J after removing what B explains; positive
        semi-definite), and the ball can only raise the score, so this is a lower
        bound on c(B + J). Gershgorin's theorem bounds the smallest eigenvalue of
        W_J by min_{j in J} (W_jj - (k - 1) m_j), with m_j >= max_l |W_jl| taken from
        the largest off-diagonal Gram entry of column j plus a Cauchy-Schwarz bound
        on the part B explains. Hence h_J' S_J^{-1} h_J <= sum_{j in J} h_j^2 / e
        whenever every column of J has e_j >= e, and the largest such sum is the
        sum of the k largest h_j^2 among those columns. Maximising over a grid of
        thresholds e (and e = lam_n, which always holds) gives the bound.

        Cheap (one pass over the outside columns per base, plus the per-column
        largest |Gram| entry, computed once) and tight when the outside columns are
        nearly uncorrelated; where it is not tight the caller falls back to outer
        approximation.

        Parameters
        ----------
        support : array_like of int, shape (s,)
        ks : iterable of int
            Classes (numbers of mistakes) to bound, each in 1..min(s, p - s).

        Returns
        -------
        dict
            k -> lower bound on min over class k of c.
        """
        S1 = np.sort(np.asarray(support, dtype=np.intp))
        s, p, n = len(S1), self.p, self.n
        outside = np.setdiff1d(np.arange(p), S1)
        lam_n = self.lam_n
        C1 = self._gram[:, S1] if self._gram is not None else self.X.T @ self.X[:, S1] / n
        gmax = self._offdiag_max(outside)
        out = {}
        for k in ks:
            best = np.inf
            for drop in itertools.combinations(range(s), k):
                B = np.delete(S1, drop)
                value_B, beta_B, Cq, P = self._base_fit(C1, S1, B, outside)
                h = self.Xy[outside] - Cq.T @ beta_B
                v = np.einsum("kq,kq->q", Cq, P)
                W_diag = self.Xdiag[outside] - v
                sv = np.sqrt(np.maximum(v, 0.0))
                m = gmax + sv * sv.max()
                e = lam_n + W_diag - (k - 1) * m
                h2 = h * h
                # Every J has all its e_j >= the largest grid value t <= min_J e_j, and
                # the grid starts at min(e), so the maximum over the grid covers all J.
                grid = np.unique(np.quantile(e, np.linspace(0.0, 1.0, n_thresholds)))
                gain = 0.0
                for t in grid:
                    sel = h2[e >= t]
                    if len(sel) < k:
                        break
                    top = np.partition(sel, len(sel) - k)[-k:].sum()
                    gain = max(gain, top / max(lam_n, t))
                best = min(best, value_B - 0.5 * gain)
            out[k] = best
        return out

    def _base_fit(self, C1, S1, B, outside):
        """Unconstrained ridge fit on a base B (always-in columns first) and what the
        block updates need: value(B), beta_B, Cq = A_B' X_outside / n and
        P = M_B^{-1} Cq, with M_B the ridge Gram matrix of B. ``C1`` is X' X_{S1} / n
        and B is a subset of S1."""
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
        M[np.diag_indices(kB)] += self.lam_n
        L = np.linalg.cholesky(M)
        beta_B = _chol_solve(L, gB)
        return 0.5 * self.yy - 0.5 * float(gB @ beta_B), beta_B, Cq, _chol_solve(L, Cq)

    def _offdiag_max(self, cols):
        """max_{l in cols, l != j} |G_jl| for each j in cols (G = X'X/n), in column blocks."""
        if getattr(self, "_gmax_key", None) == cols.tobytes():
            return self._gmax
        q = len(cols)
        res = np.zeros(q)
        step = max(1, (32 * 2**20) // (8 * q))
        if self._gram is None:
            X32 = self.X.astype(np.float32)
            u32 = float(np.finfo(np.float32).eps) / 2
            gamma = self.n * u32 / (1 - self.n * u32)
            # + the error of rounding X itself to single precision (relative u each)
            err = (gamma + 2.5 * u32) * float(np.max(np.abs(self.X))) ** 2
        for a in range(0, q, step):
            rows = cols[a:a + step]
            if self._gram is not None:
                G = np.abs(self._gram[rows[:, None], cols[None, :]])
            else:
                # Single precision halves the cost of this p x p pass; the rounding
                # error of each inner product is at most gamma_n sum_i |x_ij x_il| <=
                # gamma_n n max|x|^2 (Higham, Thm 3.5; gamma_n = n u / (1 - n u)),
                # added below so that the result is still an upper bound.
                G = np.abs(X32[:, rows].T @ X32[:, cols]).astype(float) / self.n + err
            G[np.arange(len(rows)), np.arange(a, a + len(rows))] = 0.0
            res[a:a + step] = G.max(axis=1)
        self._gmax_key, self._gmax = cols.tobytes(), res
        return res

    # ------------------------------------------------------------------ cuts
    def cut(self, support):
        """Exact outer-approximation cut at the binary point z = 1_S.

        c(z') >= c(S) + grad' (z' - 1_S) for every z' in [0, 1]^p, where
        grad_j = -(lam/2n) beta_j^2 for j in S and -(X_j' rho)^2 / (2 n lam)
        for j outside S, with rho the residual of the fit on S (math-selection.md,
        section 7). One X' rho product per cut.

        Returns
        -------
        value : float
        grad : ndarray, shape (p,)
        """
        S = np.asarray(support, dtype=np.intp)
        value, beta = self.fit(S[None, :])
        beta = beta[0]
        kf = self.k_forced
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
