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

import math

import numpy as np

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
        X = np.ascontiguousarray(X, dtype=float)
        y = np.asarray(y, dtype=float).ravel()
        n, p = X.shape
        if forced is None:
            forced = np.empty((n, 0))
        forced = np.ascontiguousarray(forced, dtype=float).reshape(n, -1)
        if lam <= 0:
            raise ValueError("lam must be > 0")
        if r <= 0:
            raise ValueError("r must be > 0")
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
