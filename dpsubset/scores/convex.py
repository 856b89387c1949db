"""Certified scores c(S) for the Huber, logistic and hinge losses (and least squares).

The score of a support S is the ball-constrained, ridge-penalised empirical risk

    c(S) = min_{||beta||_2 <= r} F_S(beta),
    F_S(beta) = (1/n) sum_i l(x_{i,K+S}' beta; y_i) + (lam/2n) ||beta||^2,

with the per-row losses of :mod:`dpsubset.losses` (K: the always-in columns). There
is no closed form, so :class:`ConvexLossScorer` solves many supports at once by a
batched projected Newton method and *certifies* every score by its duality gap.

Solver. At beta the quadratic model of F_S (exact gradient and Hessian, A'diag(l'')A/n
+ lam/n I) is minimised **exactly over the ball** by the secular-equation solver of
the least-squares scores (:func:`dpsubset.scores.base.solve_ball_ridge`), and a
backtracking line search along the segment to that point keeps every iterate in the
ball. Near the solution the step is a Newton step on the constrained problem, so the
convergence is quadratic whether the ball is active or not. All arithmetic is
vectorised over a chunk of supports (stacked (k, n) blocks, k = |K| + s).

Certificate. With alpha_i = l'(eta_i) at the final point and v = A'alpha/n, the Fenchel
dual value

    D = -(1/n) sum_i l*(alpha_i; y_i) - mu r^2/2 - ||v||^2 / (2 (lam/n + mu)),
    mu = max(0, ||v||/r - lam/n)   (the best multiplier for this alpha),

is a lower bound on c(S) for any alpha (weak duality), and F_S(beta) an upper bound.
The scorer returns the upper bound F_S(beta) and records gap = F_S(beta) - D;
``max_score_error`` is the largest gap over every score it has returned. A gap above
the public tolerance ``score_tol`` raises :class:`ScoreAccuracyError` (fail closed).
Because every returned value is within ``score_tol`` of the exact score, the
sensitivity of the computed scores is at most Delta + 2 score_tol, which is what
:func:`dpsubset.selection.base.make_scorer` hands to the mechanisms.

Cuts. The outer approximation needs, at a binary z = 1_S, a linear lower bound on
the convex function c(z) (ridge term (lam/2n) sum_j beta_j^2 / z_j). The dual above,
written for general z, is

    D(z) = -(1/n) sum l* - mu r^2/2 - sum_{j in K} v_j^2 / (2 (lam/n + mu))
           - sum_j v_j^2 z_j / (2 (lam/n + mu z_j)),      v = X' alpha / n over all p,

a lower bound on c(z) for every z in [0, 1]^p and, for fixed (alpha, mu), convex in z
(each term -a z / (b + c z) is convex). So its tangent at 1_S is a valid cut,
whatever the accuracy of alpha:

    c(z') >= D(1_S) + g'(z' - 1_S),
    g_j = -v_j^2 / (2 lam/n) = -(sum_i l'_i x_ij)^2 / (2 n lam)     for j outside S,
    g_j = -(lam/n) v_j^2 / (2 (lam/n + mu)^2)                       for j in S.

At the exact solution v_j = -(lam/n + mu) beta_j on K+S, so g_j = -(lam/2n) beta_j^2
on S, and for the squared loss (l'_i = -rho_i) the cut is the least-squares cut of
dpsubset/scores/least_squares.py exactly. (Under the normalisation of the paper's Appendix C, ridge
(lam/n)||beta||^2, the same derivation gives -(sum_i l'_i x_ij)^2 / (4 n lam).)

Hooks for the search. ``bracket`` gives certified [lower, upper] brackets of many
scores at a fraction of the cost of exact scores, and ``two_swap`` (the interface of
the least-squares scorer's) returns the best members of the two-mistake class around a
support exactly, scoring only the members its brackets cannot rule out.

Cost (CPU, p = 100, s = 5 plus an intercept, a shared 2-core machine): about 0.3 us
per row per support, i.e. ~130 us per score at n = 400 and ~500 us at n = 1600
(2 to 3 Newton steps from the warm start).

Everything here sees clipped, private data. Nothing in this module is released.
"""
from __future__ import annotations

import math

import numpy as np

from ..losses import LogisticLoss, Loss, make_loss
from .base import check_scorer_inputs, one_swap_neighbours, solve_ball_ridge
from ..privacy.sensitivity import convex_sensitivity

__all__ = ["ConvexLossScorer", "convex_sensitivity", "ScoreAccuracyError", "SCORE_TOL"]

#: Public bound on |computed score - exact score| that every returned score must
#: certify (absolute; scores are O(1) means of per-row losses).
SCORE_TOL = 1e-10
# Iterate until the gap is below this (well inside SCORE_TOL; round-off of the
# n-term means is ~1e-15).
_TARGET_GAP = 1e-13
_MAX_ITER = 60
# Memory for the stacked (m, k, n) blocks of one chunk.
_CHUNK_BYTES = 4 * 2**20
#: Most supports whose certified solutions a scorer keeps (about 0.3 KB each at s = 5,
#: so at most about 15 MB).
CACHE_SUPPORTS = 50_000


class ScoreAccuracyError(RuntimeError):
    """A score could not be certified to ``score_tol``: nothing may be released."""


class ConvexLossScorer:
    """Certified scores for batches of supports under a smooth convex loss.

    Same interface as :class:`dpsubset.scores.least_squares.LeastSquaresScorer`: ``fit``,
    ``score``, ``neighbourhood``, ``cut``, attributes ``X, y, forced, n, p, lam, r,
    k_forced``.

    Parameters
    ----------
    X : ndarray, shape (n, p)
        Candidate columns, clipped (and publicly mapped).
    y : ndarray, shape (n,)
        Response, clipped; in {-1, +1} for the classification losses.
    lam : float
        Ridge parameter (> 0): the penalty on the mean loss is (lam/2n) ||beta||^2.
    r : float
        Radius of the coefficient ball.
    forced : ndarray, shape (n, k), optional
        Always-in columns.
    loss : Loss or str
        See :mod:`dpsubset.losses`; a string gets the default parameters.
    score_tol : float
        Public accuracy every score must certify (absolute).

    Attributes
    ----------
    max_score_error : float
        Largest certified bound (duality gap) on |returned score - exact score| over
        every score returned so far (non-private; <= score_tol).
    n_scored : int
        Supports solved so far (a support solved before is read from the scorer's
        cache of certified solutions, ``CACHE_SUPPORTS`` at most, and not counted).
    newton_iterations : int
        Chunk-iterations of the Newton solver so far (for benchmarks).
    """

    def __init__(self, X, y, lam, r, forced=None, loss=LogisticLoss.name, *, score_tol=SCORE_TOL):
        X, y, forced = check_scorer_inputs(X, y, lam, r, forced)
        n, p = X.shape
        self.loss_fn: Loss = make_loss(loss)
        self.loss = self.loss_fn.name
        if self.loss_fn.classification and not np.all(np.abs(y) == 1.0):
            raise ValueError(f"loss={self.loss!r} needs y in {{-1, +1}}")
        self.X, self.y, self.forced = X, y, forced
        self.n, self.p, self.k_forced = n, p, forced.shape[1]
        self.lam, self.r = float(lam), float(r)
        self.lam_n = self.lam / n
        self.score_tol = float(score_tol)
        # Row-major copies of the columns: gathering a support's columns is then one
        # contiguous (s, n) copy per support.
        self._XT = np.ascontiguousarray(X.T)
        #: The candidate columns as contiguous rows (X.T, the same array), for the
        #: Fenchel bounds of the search (dpsubset.search.protocols.ConvexDualScorer).
        self.XT = self._XT
        self._FT = np.ascontiguousarray(forced.T)
        self.max_score_error = 0.0
        self.n_scored = 0
        self.newton_iterations = 0
        # Warm start: the solution on the best single support fitted so far (the
        # batches the search asks for are mostly supports near it).
        self._anchor_value = np.inf
        self._anchor_dense = np.zeros(p)
        self._anchor_forced = np.zeros(self.k_forced)
        # Certified solutions of the supports solved so far (row bytes -> (score, beta)),
        # at most CACHE_SUPPORTS: the searches ask for the same support more than once
        # (a node's own incumbent is its first leaf; the neighbourhood, the mistake
        # classes and top-R meet again), and one support then has one score.
        self._cache = {}

    # ------------------------------------------------------------------ pieces
    def _blocks(self, S):
        """Stacked design blocks A, shape (m, k, n): forced rows first, then S."""
        m, s = S.shape
        kf = self.k_forced
        A = np.empty((m, kf + s, self.n))
        if kf:
            A[:, :kf, :] = self._FT
        A[:, kf:, :] = self._XT[S]
        return A

    def _gap(self, b, v):
        """Duality gap F(b) - D at (b, alpha = l'(A b)), from k-vectors only.

        With Fenchel's equality l*(l'(eta)) = l'(eta) eta - l(eta) the dual value is
        D = F(b) - gap with gap = ||grad + mu b||^2 / (2 (lam/n + mu)) + (mu/2)(r^2 - ||b||^2),
        grad = v + (lam/n) b, mu = max(0, ||v||/r - lam/n): a sum of two non-negative
        terms for b in the ball (no cancellation of O(1) quantities).
        """
        lam_n = self.lam_n
        nv = np.sqrt(np.einsum("mk,mk->m", v, v))
        mu = np.maximum(0.0, nv / self.r - lam_n)
        res = v + (lam_n + mu)[:, None] * b
        bb = np.einsum("mk,mk->m", b, b)
        gap = np.einsum("mk,mk->m", res, res) / (2.0 * (lam_n + mu)) \
            + 0.5 * mu * np.maximum(self.r ** 2 - bb, 0.0)
        return gap, mu

    def _round_off(self, F):
        """Allowance for the floating-point evaluation of the n-term mean in F."""
        return 16.0 * np.finfo(float).eps * math.log2(max(self.n, 2)) * (np.abs(F) + 1.0)

    def _warm_start(self, S):
        b = np.empty((len(S), self.k_forced + S.shape[1]))
        b[:, :self.k_forced] = self._anchor_forced
        b[:, self.k_forced:] = self._anchor_dense[S]
        nb = np.linalg.norm(b, axis=1)
        over = nb > self.r
        if np.any(over):  # cannot happen for sub-vectors of a feasible anchor; be safe
            b[over] *= (self.r / nb[over])[:, None]
        return b

    def _set_anchor(self, support, value, beta):
        if value < self._anchor_value:
            self._anchor_value = float(value)
            self._anchor_dense = np.zeros(self.p)
            self._anchor_dense[support] = beta[self.k_forced:]
            self._anchor_forced = beta[:self.k_forced].copy()

    def _solve_chunk(self, A, b, max_iter=_MAX_ITER):
        """Projected Newton on a chunk of supports.

        Returns (value, beta, err): the objective at the final point, the point, and
        the certified bound on value - c(S) (duality gap plus round-off allowance).
        With a small ``max_iter`` the result is a bracket [value - err, value].
        """
        loss, y, n, lam_n, r = self.loss_fn, self.y, self.n, self.lam_n, self.r
        m, k, _ = A.shape
        b = np.array(b, dtype=float)
        eta = np.einsum("mk,mkn->mn", b, A)
        lval, d1, d2 = loss.all_derivatives(eta, y)
        F = lval.mean(axis=1) + 0.5 * lam_n * np.einsum("mk,mk->m", b, b)
        value, err = np.empty(m), np.empty(m)
        beta_out = np.empty((m, k))
        live = np.arange(m)
        for it in range(max_iter):
            self.newton_iterations += 1
            v = np.einsum("mkn,mn->mk", A, d1) / n
            gap, _ = self._gap(b, v)
            done = gap <= _TARGET_GAP
            if it == max_iter - 1:
                done[:] = True
            if np.any(done):
                idx = live[done]
                value[idx], beta_out[idx] = F[done], b[done]
                err[idx] = gap[done] + self._round_off(F[done])
                keep = ~done
                live, A, b, eta, d1, d2, F, v = (live[keep], A[keep], b[keep], eta[keep],
                                                 d1[keep], d2[keep], F[keep], v[keep])
                if len(live) == 0:
                    break
            # Exact minimiser of the quadratic model over the ball (the step of
            # projected Newton with the constraint kept exactly).
            B = A * d2[:, None, :]
            H = np.matmul(B, A.transpose(0, 2, 1))
            H /= n
            rhs = np.einsum("mij,mj->mi", H, b) - v
            _, x, _ = solve_ball_ridge(H, rhs, 0.0, lam_n, r)
            d = x - b
            slope = np.einsum("mk,mk->m", v + lam_n * b, d)  # <= 0 (descent direction)
            Ad = np.einsum("mk,mkn->mn", d, A)
            # Backtracking along the segment to x (inside the ball by convexity); a
            # round-off allowance lets the last, tiny steps through.
            t = np.ones(len(live))
            todo = np.arange(len(live))
            for _ in range(60):
                tt = t[todo, None]
                bt = b[todo] + tt * d[todo]
                et = eta[todo] + tt * Ad[todo]
                lt, d1t, d2t = loss.all_derivatives(et, y)
                Ft = lt.mean(axis=1) + 0.5 * lam_n * np.einsum("mk,mk->m", bt, bt)
                ok = Ft <= F[todo] + 0.25 * t[todo] * np.minimum(slope[todo], 0.0) \
                    + 4.0 * np.finfo(float).eps * np.abs(F[todo])
                acc = todo[ok]
                b[acc], eta[acc], F[acc] = bt[ok], et[ok], Ft[ok]
                d1[acc], d2[acc] = d1t[ok], d2t[ok]
                todo = todo[~ok]
                if len(todo) == 0:
                    break
                t[todo] *= 0.5
        return value, beta_out, err

    # ------------------------------------------------------------------ scores
    def fit(self, supports, warm_start=None):
        """Certified scores and minimisers for a batch of supports.

        Parameters
        ----------
        supports : ndarray, shape (m, s)
        warm_start : ndarray, shape (m, k_forced + s), optional
            Starting points in the ball (default: the best single-support solution
            found so far, restricted to each support).

        A support solved before (the same row, in the same order) is not solved again:
        its certified solution is read from the cache, so one support has one score
        however often a search asks for it.

        Returns
        -------
        score : ndarray, shape (m,)
            Upper bounds F_S(beta) within ``max_score_error`` of the exact scores.
        beta : ndarray, shape (m, k_forced + s)
        """
        S = np.atleast_2d(np.asarray(supports, dtype=np.intp))
        m, s = S.shape
        k = self.k_forced + s
        if m == 0:
            return np.empty(0), np.empty((0, k))
        value = np.empty(m)
        beta = np.empty((m, k))
        # Supports solved before are read from the cache (their certified solution);
        # only the others are solved.
        keys = [row.tobytes() for row in S]
        todo = []
        for i, key in enumerate(keys):
            hit = self._cache.get(key)
            if hit is None:
                todo.append(i)
            else:
                value[i], beta[i] = hit
        if todo:
            todo = np.asarray(todo, dtype=np.intp)
            St = S[todo]
            b0 = self._warm_start(St) if warm_start is None else \
                np.asarray(warm_start, float)[todo]
            step = max(1, _CHUNK_BYTES // (8 * self.n * k))
            worst = 0.0
            vt, btt = np.empty(len(todo)), np.empty((len(todo), k))
            for a in range(0, len(todo), step):
                sl = slice(a, a + step)
                v, bt, g = self._solve_chunk(self._blocks(St[sl]), b0[sl])
                vt[sl], btt[sl] = v, bt
                worst = max(worst, float(np.max(g)))
            self._record(worst)
            self.n_scored += len(todo)
            value[todo], beta[todo] = vt, btt
            room = CACHE_SUPPORTS - len(self._cache)
            for i in todo[:max(room, 0)]:
                self._cache[keys[i]] = (float(value[i]), beta[i].copy())
        if m == 1:
            self._set_anchor(S[0], value[0], beta[0])
        return value, beta

    def _record(self, worst):
        self.max_score_error = max(self.max_score_error, worst)
        if not worst <= self.score_tol:
            raise ScoreAccuracyError(
                f"a {self.loss} score could not be certified to {self.score_tol:g} "
                f"(duality gap {worst:.3g}); nothing was released")

    def score(self, supports):
        """Scores c(S) for a batch of supports (shape (m, s)); returns shape (m,)."""
        return self.fit(supports)[0]

    def bracket(self, supports, newton_steps=1):
        """Certified brackets lower <= c(S) <= upper at a fraction of the cost of
        :meth:`score` (a hook for searches that need exact scores only near a threshold).

        ``newton_steps`` Newton steps from the warm start, then the duality gap of the
        last point: upper = F_S(beta), lower = upper - gap - round-off. Supports whose
        gap already met the target are exact (lower = upper up to ``score_tol``), and so
        are supports solved before (their cached score, lower = score - ``score_tol``).

        Returns
        -------
        lower, upper : ndarray, shape (m,)
        """
        S = np.atleast_2d(np.asarray(supports, dtype=np.intp))
        m, s = S.shape
        if m == 0:
            return np.empty(0), np.empty(0)
        k = self.k_forced + s
        upper, err = np.empty(m), np.empty(m)
        # A support solved before has its score: the bracket is [score - score_tol, score].
        hits = np.array([row.tobytes() in self._cache for row in S], dtype=bool)
        for i in np.flatnonzero(hits):
            upper[i], err[i] = self._cache[S[i].tobytes()][0], self.score_tol
        todo = np.flatnonzero(~hits)
        b0 = self._warm_start(S[todo])
        step = max(1, _CHUNK_BYTES // (8 * self.n * k))
        for a in range(0, len(todo), step):
            idx = todo[a:a + step]
            upper[idx], _, err[idx] = self._solve_chunk(self._blocks(S[idx]), b0[a:a + step],
                                                        max_iter=int(newton_steps) + 1)
        return upper - err, upper

    def neighbourhood(self, support):
        """All one-swap neighbours S - {i} + {j} of a support, and their scores.

        Each neighbour starts from the solution on S with the swapped coefficient
        set to zero.

        Returns
        -------
        supports : ndarray, shape ((p - s) s, s), each row sorted
        scores : ndarray, shape ((p - s) s,)
        """
        S = np.sort(np.asarray(support, dtype=np.intp))
        s, kf = len(S), self.k_forced
        _, beta = self.fit(S[None, :])
        outside, nb, order = one_swap_neighbours(S, self.p)
        q = len(outside)
        b0 = np.repeat(beta, s * q, axis=0).reshape(s, q, kf + s)
        for i in range(s):
            b0[i, :, kf + i] = 0.0
        b0 = b0.reshape(s * q, kf + s)
        b0[:, kf:] = np.take_along_axis(b0[:, kf:], order, axis=1)
        value, _ = self.fit(nb, warm_start=b0)
        return nb, value

    def two_swap(self, support, keep, threshold=np.inf, other_values=None):
        """The ``keep`` best supports with exactly two elements swapped out of ``support``.

        The hook of :meth:`dpsubset.scores.least_squares.LeastSquaresScorer.two_swap` for this
        scorer, exact by certified pruning. A member B + {j, k} of the class (B: the
        support less two elements) is first bracketed at its warm start beta_0 (the
        fit on ``support`` restricted to B, zero on j and k): F(beta_0) is an upper
        bound and F(beta_0) - gap(beta_0) a lower bound; the same with the exact fit
        on B as beta_0 gives a second bracket, and the tighter ends are kept. At beta_0
        the linear predictor is that of B alone, so the brackets of all C(p - s, 2)
        members sharing B cost a pass over the data (X' l'(eta_B)) plus O(1) each.
        Only members whose lower bound does not exceed the cut-off (the ``keep``-th
        smallest of ``other_values`` and of the members' upper bounds, capped by
        ``threshold``) are scored exactly. Brackets and exact scores are cached per
        ``support``, so a second call (top-R, then the mistake classes) is cheap.

        Returns
        -------
        supports : ndarray, shape (m, s), rows sorted, m <= keep
            The best members scoring at most ``threshold``, best first (ties by index).
        scores : ndarray, shape (m,)
        bound : float
            Every member not returned scores >= bound.
        """
        from ..search.enumeration import rank_supports

        S1 = np.sort(np.asarray(support, dtype=np.intp))
        s, p = len(S1), self.p
        keep = int(keep)
        outside = np.setdiff1d(np.arange(p), S1)
        q = len(outside)
        if s < 2 or q < 2 or keep < 1:
            return np.empty((0, s), dtype=np.intp), np.empty(0), np.inf
        cache = getattr(self, "_two_swap_cache", None)
        if cache is None or cache[0] != S1.tobytes():
            members, lo, up = self._two_swap_brackets(S1, outside)
            cache = (S1.tobytes(), members, lo, up, np.full(len(members), np.nan))
            self._two_swap_cache = cache
        _, members, lo, up, exact = cache
        known_up = np.where(np.isnan(exact), up, exact)
        pool = known_up if other_values is None else \
            np.concatenate([np.asarray(other_values, dtype=float), known_up])
        kk = min(keep, len(pool))
        cutoff = min(float(threshold), float(np.partition(pool, kk - 1)[kk - 1]))
        need = (lo <= cutoff) & np.isnan(exact)
        if np.any(need):
            exact[need] = self.score(members[need])
        done = ~np.isnan(exact)
        cand = np.flatnonzero(done & (exact <= threshold))
        order = cand[rank_supports(members[cand], exact[cand])][:keep]
        rest = np.ones(len(members), bool)
        rest[order] = False
        known = np.where(done, exact, lo)
        bound = float(np.min(known[rest])) if np.any(rest) else np.inf
        self.two_swap_stats = dict(members=len(members), scored_exactly=int(done.sum()))
        return members[order], exact[order], bound

    def _two_swap_brackets(self, S1, outside):
        """Warm-start brackets [lo, up] of every member of the two-swap class of S1."""
        from itertools import combinations

        s, kf, n, lam_n, r = len(S1), self.k_forced, self.n, self.lam_n, self.r
        _, beta = self.fit(S1[None, :])
        beta = beta[0]
        pairs = np.array(list(combinations(range(len(outside)), 2)), dtype=np.intp)
        pj, pk = pairs[:, 0], pairs[:, 1]
        members, lo, up = [], [], []
        for D in combinations(range(s), 2):
            keep_pos = np.delete(np.arange(s), D)
            B = S1[keep_pos]
            # Two warm starts, each giving a bracket for every member B + {j, k}: the
            # fit on S1 restricted to B (a good upper bound), and the exact fit on B
            # (a good lower bound: only the new columns' terms remain in the gap).
            starts = [np.concatenate([beta[:kf], beta[kf:][keep_pos]])]
            if kf + len(B):
                starts.append(self.fit(B[None, :])[1][0])
            lo_b = np.full(len(pairs), -np.inf)
            up_b = np.full(len(pairs), np.inf)
            for bB in starts:
                eta = self.forced @ bB[:kf] + self.X[:, B] @ bB[kf:]
                lval, d1, _ = self.loss_fn.all_derivatives(eta, self.y)
                FB = float(lval.mean() + 0.5 * lam_n * bB @ bB)
                vB = np.concatenate([self.forced.T @ d1, self.X[:, B].T @ d1]) / n
                vo = self.X[:, outside].T @ d1 / n
                vj, vk = vo[pj], vo[pk]
                nv = np.sqrt(vB @ vB + vj * vj + vk * vk)
                mu = np.maximum(0.0, nv / r - lam_n)
                c = lam_n + mu
                resB = vB[None, :] + c[:, None] * bB[None, :]
                gap = (np.einsum("mk,mk->m", resB, resB) + vj * vj + vk * vk) / (2.0 * c) \
                    + 0.5 * mu * max(r * r - bB @ bB, 0.0)
                err = gap + self._round_off(np.array([FB]))[0]
                lo_b = np.maximum(lo_b, FB - err)
                up_b = np.minimum(up_b, FB)
            rows = np.empty((len(pairs), s), dtype=np.intp)
            rows[:, :s - 2] = B
            rows[:, s - 2] = outside[pj]
            rows[:, s - 1] = outside[pk]
            members.append(rows)
            up.append(up_b)
            lo.append(lo_b)
        return np.sort(np.vstack(members), axis=1), np.concatenate(lo), np.concatenate(up)

    def class_lower_bounds(self, support, ks, target=None):
        """Certified lower bounds on the best score of each mistake class around a support.

        Class k holds the supports B + J, B = ``support`` less k elements, J k outside
        columns. For one base B take the per-row duals alpha = l'(eta_B) of the exact
        fit on B. Weak duality (module notes) bounds every c(B + J) below by

            D(mu) = (1/n) sum_i (l(eta_i) - alpha_i eta_i) - mu r^2 / 2
                    - (||v_{K+B}||^2 + sum_{j in J} v_j^2) / (2 (lam/n + mu)),

        v = X' alpha / n, for any mu >= 0. For every mu the worst J takes the k largest
        v_j^2 outside, and the best mu for that sum has a closed form, so the bound
        for the base is one fit on B and one X' alpha product; the class bound is the
        smallest over the C(s, k) bases. It is the outer-approximation cut at B,
        minimised over the class: tight when adding columns changes little, loose
        otherwise (the caller then falls back to outer approximation). ``target`` is
        accepted for the interface of :meth:`LeastSquaresScorer.class_lower_bounds`
        and not used: nothing here is refined.

        Returns
        -------
        dict
            k -> lower bound on min over class k of c.
        """
        from itertools import combinations

        S1 = np.sort(np.asarray(support, dtype=np.intp))
        s, kf, n, lam_n, r = len(S1), self.k_forced, self.n, self.lam_n, self.r
        outside = np.setdiff1d(np.arange(self.p), S1)
        out = {}
        for k in ks:
            k = int(k)
            if not 1 <= k <= min(s, len(outside)):
                continue
            best = np.inf
            for drop in combinations(range(s), k):
                B = np.delete(S1, drop)
                if kf + len(B):
                    _, bB = self.fit(B[None, :])
                    bB = bB[0]
                    eta = self.forced @ bB[:kf] + self.X[:, B] @ bB[kf:]
                else:
                    eta = np.zeros(n)
                lval, d1, _ = self.loss_fn.all_derivatives(eta, self.y)
                base = float(np.mean(lval - d1 * eta))
                vKB = np.concatenate([self.forced.T @ d1, self.X[:, B].T @ d1]) / n
                vo = self.X[:, outside].T @ d1 / n
                top = float(np.sum(np.sort(vo * vo)[::-1][:k]))
                V2 = float(vKB @ vKB) + top
                mu = max(0.0, math.sqrt(V2) / r - lam_n)
                D = base - 0.5 * mu * r * r - V2 / (2.0 * (lam_n + mu))
                D -= float(self._round_off(np.array([abs(base) + 1.0]))[0])
                best = min(best, D)
            out[k] = best
        return out

    # ------------------------------------------------------------------ cuts
    def cut(self, support):
        """Outer-approximation cut at the binary point z = 1_S (see the module notes).

        c(z') >= value + grad'(z' - 1_S) for every z' in [0, 1]^p, exactly (weak
        duality; no accuracy assumption), with value the dual bound D(1_S), which is
        within ``max_score_error`` below the returned score of S.

        Returns
        -------
        value : float
        grad : ndarray, shape (p,)
        """
        S = np.sort(np.asarray(support, dtype=np.intp))
        kf = self.k_forced
        value, beta = self.fit(S[None, :])
        b = beta[0]
        eta = self.forced @ b[:kf] + self.X[:, S] @ b[kf:]
        alpha = self.loss_fn.derivative(eta, self.y)
        vx = self.X.T @ alpha / self.n
        vf = self.forced.T @ alpha / self.n
        vK = np.concatenate([vf, vx[S]])
        gap, mu = self._gap(b[None, :], vK[None, :])
        # D(1_S) = F(b) - gap (Fenchel's equality at alpha = l'(eta)), less round-off.
        D = float(value[0] - gap[0] - self._round_off(value[:1])[0])
        mu = float(mu[0])
        lam_n = self.lam_n
        grad = -(vx * vx) / (2.0 * lam_n)
        grad[S] = -lam_n * vx[S] ** 2 / (2.0 * (lam_n + mu) ** 2)
        return D, grad
