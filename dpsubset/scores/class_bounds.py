"""Certified lower bounds on whole mistake classes around a support (least squares).

Class k around S1 holds the supports B + J, B = S1 less k elements and J k outside
columns. The exact search (dpsubset/search/) needs, for top-R and the mistakes
mechanism, a certified lower bound on the best score of each class, far cheaper than
scoring the class: block elimination on each base B, Gershgorin bounds on the Schur
complement from the Gram row maxima (computed only for the columns that decide the
bound), a Lagrangian shift for the ball and a cap from the ball itself
(:meth:`ClassBoundsMixin.class_lower_bounds` has the derivation).

Everything here sees clipped, private data. Nothing in this module is released.
"""
from __future__ import annotations

import itertools

import numpy as np

__all__ = ["ClassBoundsMixin"]

# Columns per base whose Gram row maxima the class bounds compute before checking
# whether more are needed (largest h^2 first).
_ROWMAX_FIRST = 256
# The same when the caller gives a target (the bounds need only clear it): start short.
_ROWMAX_FIRST_TARGET = 16


class ClassBoundsMixin:
    """The mistake-class bounds of :class:`dpsubset.scores.least_squares.LeastSquaresScorer`.

    A mixin: it uses the scorer's ``_base_fit``, ``_dual_shift``, ``_rowmax_store`` and
    ``_gram_row_max`` and its attributes ``X``, ``Xy``, ``Xdiag``, ``_gram``, ``lam_n``,
    ``r``, ``p`` and ``n``.
    """

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
