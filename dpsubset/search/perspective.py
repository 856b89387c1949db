"""Certified lower bounds on the least-squares score over a node of the branch and bound.

A node fixes some candidate columns in (F1, which also holds the always-in columns),
some out, and leaves k columns to choose from the free set U (possibly with a family
rule: between lo and hi of the chosen columns inside a centre set, for the mistake
classes and the top-R completion). With everything divided by n, the score is

    c(S) = min over ||b|| <= r, b on S + K of  yy/2 - b'g + b'(G + lam_n I) b / 2,

with G = A'A/n, g = A'y/n, yy = y'y/n for the augmented design A = [K, X] and
lam_n = lam/n. For ANY dual point alpha = c y - A b (a scalar c and a vector b), with
u = A'alpha/n = c g - G b, a1 = alpha'y/n and a2 = ||alpha||^2/n, every completion S of
the node satisfies

    c(S) >= a1 - a2/2 - psi(tau),
    tau  = sum_{i in F1} u_i^2 + (the largest sum of u_i^2 over k free columns allowed
           by the family rule),
    psi(t) = t / (2 lam_n)               if sqrt(t) <= lam_n r,
             r sqrt(t) - lam_n r^2 / 2    otherwise.

Derivation (docs/methods/branch-and-bound.md): relax the ball with a multiplier mu >= 0,
dualise the ridge fit on S (weak duality: the bound holds for every alpha), bound
||A_S'alpha||^2 by tau (the only place the support enters), and take the best mu in
closed form. No step needs the relaxation to be solved accurately, so the bound is
certified whatever the ascent below achieves; only floating-point rounding is
accounted for, by a relative allowance subtracted before any comparison.

The bound needs only X'alpha and ||alpha||^2, which for alpha = c y - A b come from the
second moments (G, g, yy): :class:`Moments` holds them, built from a scorer (X in
memory) or from a Gram matrix directly.

**The diagonal shift.** For any d >= 0 with [A, y]'[A, y]/n - d diag(1, ..., 1, 0) positive
semi-definite, G + lam_n I = (G - d I) + (lam_n + d) I, so every score is the same
problem with the moments G - d I and the ridge lam_n + d, and the bound above applies
to that pair. Its relaxation then treats lam_n + d of the quadratic perspectively
instead of lam_n: much tighter when the ridge is small and the columns are far from
collinear (n well above P). :func:`diagonal_shift` finds such a d from the smallest
eigenvalue of G and proves it with a Cholesky factorisation (docs/methods/
branch-and-bound.md, "The diagonal shift"; Frangioni and Gentile 2006, Dong, Chen and
Linderoth 2015).

Every value here is a score bound of the private data and stays inside the call.
"""
from __future__ import annotations

import weakref
from collections import OrderedDict

import numpy as np
import scipy.linalg

__all__ = ["Moments", "NodeBound", "DualPoint", "psi", "diagonal_shift"]

# Relative rounding allowance of a bound (the moments are sums of n products; the
# scorer's exact scores carry errors of the same order; 1e-10 is far above both).
BOUND_RTOL = 1e-10
# Dual ascent at a node stops when its steps would take more than 1 / SLOW times the
# remaining steps to reach the target.
SLOW = 1.0
# Without a stored Gram matrix, the columns of A'A/n that the search has computed are
# kept for reuse, least recently used first out, in at most this many bytes and this
# share of the memory limit: a long search touches a few hundred columns, far fewer
# than the whole matrix (800 MB at p = 10,000, 20 GB at p = 50,000); the measurement:
# docs/benchmarks/search-constants.md.
COLUMN_CACHE_BYTES = 256 * 2 ** 20
COLUMN_CACHE_SHARE = 1 / 8
# The diagonal shift needs the smallest eigenvalue of the stored P x P Gram matrix and a
# Cholesky factorisation of the moment matrix (0.1 s at P = 1000, about 1 s at 2000, on
# one core); above this many columns it is not computed (and the Gram matrix is mostly
# not stored there anyway).
SHIFT_MAX_COLUMNS = 2000
# The shift is taken a little below the eigenvalue (relative), so that the Cholesky
# proof of the next step does not fail on a matrix that is only just semi-definite.
SHIFT_BELOW = 1e-3


def diagonal_shift(G, gy, yy):
    """The largest shift d >= 0 this package proves valid: M - d diag(1, ..., 1, 0) is
    positive definite up to a rounding margin, for M the moment matrix of [A, y] over n.

    Parameters
    ----------
    G : ndarray, shape (P, P)
        A'A/n.
    gy : ndarray, shape (P,)
        A'y/n.
    yy : float
        y'y/n.

    Returns
    -------
    float
        0.0 when no positive shift is proved (n <= P, collinear columns, y in their span).

    Notes
    -----
    The candidate is the smallest eigenvalue of G, a little lowered; the proof is a
    Cholesky factorisation of M - d diag(1, ..., 1, 0) - delta I with delta a margin of
    4 (P + 1) times the unit roundoff times trace(M), above the backward error of the
    factorisation, so the matrix is positive semi-definite in exact arithmetic when it
    succeeds. It may fail where y is nearly in the columns' span (the Schur complement
    y'y/n - g'(G - d I)^{-1} g turns negative); the candidate is then halved, five
    times at most.
    """
    G = np.asarray(G, dtype=float)
    P = len(G)
    if P == 0:
        return 0.0
    trace = float(np.trace(G)) + float(yy)
    delta = 4.0 * (P + 1) * np.finfo(float).eps * trace
    lam_min = float(scipy.linalg.eigh(G, eigvals_only=True, subset_by_index=[0, 0])[0])
    d = lam_min * (1.0 - SHIFT_BELOW) - delta
    M = np.empty((P + 1, P + 1))
    for _ in range(6):
        if d <= delta:
            return 0.0
        M[:P, :P] = G
        M[:P, P] = M[P, :P] = gy
        M[P, P] = yy
        M[np.diag_indices(P)] -= d
        M[np.diag_indices(P + 1)] -= delta
        try:
            np.linalg.cholesky(M)
            return float(d)
        except np.linalg.LinAlgError:
            d /= 2.0
    return 0.0


def psi(tau, lam_n, r):
    """psi(tau) and the effective ridge gamma = lam_n + mu at the best multiplier."""
    st = np.sqrt(tau)
    if st <= lam_n * r:
        return tau / (2.0 * lam_n), lam_n
    return r * st - 0.5 * lam_n * r * r, st / r


class Moments:
    """Second moments of the augmented design A = [always-in columns, candidates] over n.

    Index i < k_forced is an always-in column; candidate j has index k_forced + j.

    Parameters
    ----------
    gy : ndarray, shape (P,)
        A'y/n.
    yy : float
        y'y/n.
    lam_n, r : float
        Ridge weight lam/n and ball radius.
    k_forced : int
    gram : ndarray, shape (P, P), optional
        A'A/n. Without it ``column_fn(idx)`` must return the columns A'A_idx/n; they
        are cached (least recently used out) within COLUMN_CACHE_BYTES and
        COLUMN_CACHE_SHARE of the memory limit.
    memory : MemoryBudget, optional
        The search's memory budget: the cache's size is held in it.
    shift : float, optional
        A diagonal shift d proved valid by :func:`diagonal_shift`: the bounds use the
        moments G - d I and the ridge lam_n + d (the same scores). Default 0.

    Attributes
    ----------
    lam_n : float
        The ridge the bounds use: lam/n plus the shift.
    """

    def __init__(self, gy, yy, lam_n, r, k_forced, *, gram=None, column_fn=None, memory=None,
                 shift=0.0):
        self.gy = np.asarray(gy, dtype=float)
        self.shift = float(shift)
        if self.shift < 0.0:
            raise ValueError("Moments: shift must be >= 0")
        self.yy, self.lam_n, self.r = float(yy), float(lam_n) + self.shift, float(r)
        self.k_forced = int(k_forced)
        self.P = len(self.gy)
        self.p = self.P - self.k_forced
        if gram is None and column_fn is None:
            raise ValueError("Moments needs gram= or column_fn=")
        self.gram = gram
        self._column_fn = column_fn
        self._cache = OrderedDict()
        self._memory = memory
        cap = COLUMN_CACHE_BYTES
        if memory is not None and memory.limit is not None:
            cap = min(cap, COLUMN_CACHE_SHARE * memory.limit)
        #: Columns the cache keeps at most (more only while one request needs them).
        self.cache_columns = max(1, int(cap // (8 * self.P)))
        if memory is not None:
            weakref.finalize(self, memory.release, ("columns", id(self)))
        #: The diagonal of A'A/n (for the rounding allowance); from_scorer sets it
        #: when there is no Gram matrix.
        self.diag = np.diag(gram).copy() if gram is not None else None

    def cols(self, idx):
        """Columns ``idx`` of the shifted moments A'A/n - shift I, shape (P, len(idx))."""
        idx = np.asarray(idx, dtype=np.intp)
        out = self._cols(idx)
        if self.shift and len(idx):
            out[idx, np.arange(len(idx))] -= self.shift  # out is a new array, never the Gram
        return out

    def _cols(self, idx):
        """A'A_idx/n, unshifted (a new array)."""
        if self.gram is not None:
            return self.gram[:, idx]
        if not len(idx):
            return np.empty((self.P, 0))
        cache = self._cache
        keys = [int(i) for i in idx]
        missing = list(dict.fromkeys(i for i in keys if i not in cache))
        for i in keys:
            if i in cache:
                cache.move_to_end(i)
        if missing:
            block = self._column_fn(np.asarray(missing, dtype=np.intp))
            for a, i in enumerate(missing):
                cache[i] = np.ascontiguousarray(block[:, a])
        # (stacked as rows and transposed: a view in Fortran order, without the
        # strided writes of column_stack, which are slower at large P)
        out = np.stack([cache[i] for i in keys]).T
        # Least recently used columns out; the ones of this request were used last.
        while len(cache) > max(self.cache_columns, len(set(keys))):
            cache.popitem(last=False)
        if self._memory is not None and missing:
            self._memory.hold(("columns", id(self)), 8 * self.P * len(cache),
                              route="the branch and bound (its cache of X'X columns)")
        return out

    @classmethod
    def from_scorer(cls, sc, memory=None, shift=True):
        """From a LeastSquaresScorer: its stored Gram matrix when it has one, else
        columns of A'A/n computed from X on demand (and cached, within ``memory``).
        With ``shift`` (and a stored Gram matrix of at most SHIFT_MAX_COLUMNS columns,
        fewer than the rows) the bounds use the diagonal shift, computed once per
        scorer."""
        kf = sc.k_forced
        gy = np.concatenate([sc.Fy, sc.Xy])
        if sc.gram is not None:
            G = sc.gram  # no copy without always-in columns
            if kf:
                P = kf + sc.p
                G = np.empty((P, P))
                G[:kf, :kf] = sc.FF
                G[kf:, :kf] = sc.XF
                G[:kf, kf:] = sc.XF.T
                G[kf:, kf:] = sc.gram
            d = _scorer_shift(sc, G, gy, memory) if shift else 0.0
            return cls(gy, sc.yy, sc.lam_n, sc.r, kf, gram=G, shift=d)
        A_cols = lambda j: (sc.forced[:, j] if j < kf else sc.X[:, j - kf])  # noqa: E731

        def column_fn(idx):
            B = np.column_stack([A_cols(int(i)) for i in idx])
            return np.concatenate([sc.forced.T @ B, sc.X.T @ B]) / sc.n
        mom = cls(gy, sc.yy, sc.lam_n, sc.r, kf, column_fn=column_fn, memory=memory)
        mom.diag = np.concatenate([np.diag(sc.FF), sc.Xdiag])
        return mom

    @classmethod
    def from_gram(cls, G, Xy, yy, lam, n, r, *, FF=None, XF=None, Fy=None, shift=True):
        """From sufficient statistics: G = X'X/n, Xy = X'y/n, yy = y'y/n, and for the
        always-in columns F: FF = F'F/n, XF = X'F/n, Fy = F'y/n; with ``shift`` the
        diagonal shift as in :meth:`from_scorer`."""
        G = np.asarray(G, dtype=float)
        p = len(G)
        kf = 0 if FF is None else len(FF)
        if kf:
            P = kf + p
            A = np.empty((P, P))
            A[:kf, :kf] = FF
            A[kf:, :kf] = XF
            A[:kf, kf:] = np.asarray(XF).T
            A[kf:, kf:] = G
            gy = np.concatenate([np.asarray(Fy, float), np.asarray(Xy, float)])
        else:
            A, gy = G, np.asarray(Xy, dtype=float)
        d = 0.0
        if shift and len(A) < n and len(A) <= SHIFT_MAX_COLUMNS:
            d = diagonal_shift(A, gy, yy)
        return cls(gy, yy, lam / n, r, kf, gram=A, shift=d)


# Shifts already proved, per scorer (a search builds its moments once, but top-R, the
# mistake classes and the certificates run several searches on one scorer).
_SHIFTS = weakref.WeakKeyDictionary()


def _scorer_shift(sc, G, gy, memory=None):
    """The diagonal shift of a scorer's moments (0 where it is not computed, and where
    the memory budget has no room for its two transient (P + 1)^2 matrices: the shift
    only speeds the search up, so it never stops one)."""
    P = len(G)
    if sc.n <= P or P > SHIFT_MAX_COLUMNS:
        return 0.0
    try:
        return _SHIFTS[sc]
    except (KeyError, TypeError):
        pass
    if memory is not None and memory.limit is not None \
            and 16 * (P + 1) ** 2 > memory.limit - memory.total:
        return 0.0  # not cached: a later search may have the room
    d = diagonal_shift(G, gy, sc.yy)
    try:
        _SHIFTS[sc] = d
    except TypeError:  # a scorer that cannot be weakly referenced: not cached
        pass
    return d


class DualPoint:
    """alpha = c y - A b, stored through c, b (dense, augmented index), u = A'alpha/n,
    b'g and b'Gb."""

    __slots__ = ("c", "b", "u", "bg", "bGb")

    def __init__(self, c, b, u, bg, bGb):
        self.c, self.b, self.u, self.bg, self.bGb = c, b, u, bg, bGb

    @classmethod
    def from_fit(cls, mom, support_aug, beta):
        """The dual point of a fit beta on the augmented columns ``support_aug``."""
        return cls.from_sparse(mom, 1.0, support_aug, beta)

    @classmethod
    def from_sparse(cls, mom, c, idx, val):
        """The point alpha = c y - A b with b zero but on ``idx`` (values ``val``):
        u, b'g and b'Gb computed from the moments (the inverse of :meth:`sparse`)."""
        idx = np.asarray(idx, dtype=np.intp)
        val = np.asarray(val, dtype=float)
        b = np.zeros(mom.P)
        b[idx] = val
        Gb = mom.cols(idx) @ val if len(idx) else np.zeros(mom.P)
        u = c * mom.gy - Gb
        return cls(float(c), b, u, float(val @ mom.gy[idx]), float(val @ Gb[idx]))

    @property
    def nbytes(self):
        """Bytes of the dense vectors (b and u)."""
        return self.b.nbytes + self.u.nbytes

    def sparse(self):
        """(c, idx, val): the point without its dense vectors. b is zero outside the
        columns the ascent touched on the way to this point (the start's support and the
        selections of its steps), so this is O(s) to O(s x depth) numbers, where the
        point itself holds 2 P."""
        idx = np.flatnonzero(self.b)
        return self.c, idx.astype(np.int32), self.b[idx]

    def a12(self, yy):
        """a1 - a2/2 = alpha'y/n - ||alpha||^2/(2n)."""
        c = self.c
        return c * yy - self.bg - 0.5 * (c * c * yy - 2.0 * c * self.bg + self.bGb)


class NodeBound:
    """Bounds of the nodes of one search: the moments and the family rule.

    Parameters
    ----------
    mom : Moments
    center : array_like of int, optional
        Candidate indices of the centre set (the best support) for a family rule.
    """

    def __init__(self, mom, center=None):
        self.mom = mom
        self.in_center = np.zeros(mom.p, dtype=bool)
        if center is not None:
            self.in_center[np.asarray(center, dtype=np.intp)] = True

    # ---------------------------------------------------------------- hooks of the search
    # (the same five on :class:`dpsubset.search.fenchel.FenchelBound`, the convex losses)
    def start_point(self, scorer, support):
        """The exact dual point of the fit on ``support`` (the root's start)."""
        kf = self.mom.k_forced
        _, beta = scorer.fit(np.asarray(support)[None, :])
        return DualPoint.from_fit(self.mom, np.concatenate([np.arange(kf), kf + support]),
                                  beta[0])

    def empty_point(self):
        """The point of the empty fit (alpha = y)."""
        return DualPoint(1.0, np.zeros(self.mom.P), self.mom.gy.copy(), 0.0, 0.0)

    def rebuild(self, compact):
        """A queued point from its sparse form (the same alpha)."""
        return DualPoint.from_sparse(self.mom, *compact)

    def dense_bytes(self, p):
        """Bytes of a whole open node with its dense point (b and u, and the node's
        index arrays: about 16 (P + p))."""
        return 16 * (self.mom.P + p)

    #: Nodes with at most this many completions are scored exactly (least-squares
    #: scores are cheap: branch_bound.LEAF_MAX).
    leaf_max = 200
    #: Whether a node with one free slot is settled at once (its completions bounded
    #: one by one at its point, the rest scored) instead of branched: not here, where
    #: the tree's nodes are cheaper than many scores.
    one_slot_leaves = False
    #: Whether leaves are bracketed and scored exactly only when the list is settled:
    #: not here, where an exact score costs about as much as a bracket.
    lazy_leaves = False

    def score_leaves(self, scorer, S, threshold, pt=None):
        """Exact scores of a leaf's completions (all of them: least-squares scores are
        cheap)."""
        return S, scorer.score(S)

    # ---------------------------------------------------------------- tau
    def tau(self, u, node, want_selection=False):
        """tau at u for a node; with want_selection also the chosen free columns
        (candidate indices) that attain the top sum."""
        kf = self.mom.k_forced
        fixed_aug = node.fixed_aug
        t0 = float(u[fixed_aug] @ u[fixed_aug])
        k = node.k
        if k == 0:
            return t0, np.empty(0, dtype=np.intp)
        v = u[kf:] ** 2
        free_c, free_o = node.free_center, node.free_other
        lo, hi = node.k1_range
        if hi == 0:  # no family rule, or nothing left to take from the centre
            cand = free_o
            top = _top_k(v[cand], k)
            sel = cand[top] if want_selection else None
            return t0 + float(v[cand][top].sum()), sel
        vc, vo = v[free_c], v[free_o]
        oc = np.argsort(-vc, kind="stable")[:hi]
        oo = np.argsort(-vo, kind="stable")[:k - lo]
        cc = np.concatenate([[0.0], np.cumsum(vc[oc])])
        co = np.concatenate([[0.0], np.cumsum(vo[oo])])
        best, k1b = -1.0, lo
        for k1 in range(lo, hi + 1):
            if k - k1 > len(oo) or k1 > len(oc):
                continue
            val = cc[k1] + co[k - k1]
            if val > best:
                best, k1b = val, k1
        sel = None
        if want_selection:
            sel = np.concatenate([free_c[oc[:k1b]], free_o[oo[:k - k1b]]])
        return t0 + float(best), sel

    def tau_batch(self, U, node):
        """tau at each row of U (m, P) for a node (the selection is not returned)."""
        kf = self.mom.k_forced
        F = U[:, node.fixed_aug]
        t0 = np.einsum("mi,mi->m", F, F)
        k = node.k
        if k == 0:
            return t0
        lo, hi = node.k1_range
        if hi == 0:
            V = U[:, kf + node.free_other] ** 2
            if k < V.shape[1]:
                V = np.partition(V, V.shape[1] - k, axis=1)[:, V.shape[1] - k:]
            return t0 + V.sum(axis=1)
        Vc = -np.sort(-(U[:, kf + node.free_center] ** 2), axis=1)[:, :hi]
        Vo = -np.sort(-(U[:, kf + node.free_other] ** 2), axis=1)[:, :k - lo]
        cc = np.concatenate([np.zeros((len(U), 1)), np.cumsum(Vc, axis=1)], axis=1)
        co = np.concatenate([np.zeros((len(U), 1)), np.cumsum(Vo, axis=1)], axis=1)
        best = np.full(len(U), -np.inf)
        for k1 in range(lo, hi + 1):
            if k - k1 <= Vo.shape[1] and k1 <= Vc.shape[1]:
                best = np.maximum(best, cc[:, k1] + co[:, k - k1])
        return t0 + best

    def value(self, pt, node):
        """The bound (not yet lowered by the rounding allowance) at a dual point."""
        tau, _ = self.tau(pt.u, node)
        return pt.a12(self.mom.yy) - psi(tau, self.mom.lam_n, self.mom.r)[0]

    def allowance(self, pt, value):
        """Rounding allowance for a bound computed at ``pt``: relative to the size of
        the terms that were added up, and to the moment matrix's rounding (it must be
        positive semi-definite for weak duality; rounding can break that at the level
        of n * eps * its diagonal)."""
        mom = self.mom
        c = pt.c
        nb = float(np.sqrt(pt.b @ pt.b))
        dmax = float(np.max(mom.diag)) if mom.diag is not None else 1.0
        terms = (abs(c) * mom.yy * (1.0 + abs(c)) + abs(pt.bg) * (1.0 + 2.0 * abs(c))
                 + abs(pt.bGb) + abs(value))
        psd = (mom.yy + dmax * mom.P) * ((1.0 - c) ** 2 + (mom.r + nb) ** 2)
        return BOUND_RTOL * terms + 1e-13 * psd

    # ---------------------------------------------------------------- ascent
    def improve(self, pt, node, *, target=np.inf, iters=12, rtol=1e-7):
        """Ascend the (concave) dual from ``pt``; returns (certified bound, point,
        selection). Stops early once the certified bound exceeds ``target`` or the
        gains become small. Every iterate gives a valid bound; the best is kept."""
        mom = self.mom
        yy, lam_n, r = mom.yy, mom.lam_n, mom.r
        kf = mom.k_forced
        best_pt, best = pt, self.value(pt, node)
        cur, cur_v = pt, best
        for it in range(iters):
            tau, sel = self.tau(cur.u, node, want_selection=True)
            if best - self.allowance(best_pt, best) > target:
                break
            _, gamma = psi(tau, lam_n, r)
            W = np.concatenate([node.fixed_aug, kf + sel]).astype(np.intp)
            dW = cur.u[W] / gamma
            GdW = mom.cols(W) @ dW  # (P,)
            du = mom.gy - GdW - cur.u
            dg = float(dW @ mom.gy[W])
            dGd = float(dW @ GdW[W])
            bGd = float(dW @ (cur.c * mom.gy[W] - cur.u[W]))
            c0, bg0, bGb0 = cur.c, cur.bg, cur.bGb

            def h(eta):
                """The bound along the step, for an array of step lengths."""
                c = c0 + eta * (1.0 - c0)
                bg = bg0 + eta * (dg - bg0)
                bGb = bGb0 + 2.0 * eta * (bGd - bGb0) + eta * eta * (dGd - 2.0 * bGd + bGb0)
                a12 = c * yy - bg - 0.5 * (c * c * yy - 2.0 * c * bg + bGb)
                t = self.tau_batch(cur.u[None, :] + eta[:, None] * du[None, :], node)
                return a12 - _psi_vec(t, lam_n, r)

            eta, hv = _line_search(h, cur_v)
            if eta > 0:
                b = cur.b * (1.0 - eta)
                b[W] += eta * dW
                c = c0 + eta * (1.0 - c0)
                nxt = DualPoint(c, b, cur.u + eta * du, bg0 + eta * (dg - bg0),
                                bGb0 + 2.0 * eta * (bGd - bGb0)
                                + eta * eta * (dGd - 2.0 * bGd + bGb0))
            else:
                nxt = cur
            nxt, hv = self._rescale(nxt, node)
            gain = hv - cur_v
            cur, cur_v = nxt, hv
            if hv > best:
                best_pt, best = nxt, hv
            # Stop when the steps stall, or when at this pace the bound would not
            # reach the target within the remaining steps (a child starts from here).
            if gain <= rtol * max(1.0, abs(hv)) or (
                    np.isfinite(target) and gain * (iters - it) < SLOW * (target - best)):
                break
        _, sel = self.tau(best_pt.u, node, want_selection=True)
        return best - self.allowance(best_pt, best), best_pt, sel

    def _rescale(self, pt, node):
        """The best multiple t * alpha (closed form: the bound is concave in t)."""
        mom = self.mom
        yy, lam_n, r = mom.yy, mom.lam_n, mom.r
        c = pt.c
        A1 = c * yy - pt.bg
        A2 = max(c * c * yy - 2.0 * c * pt.bg + pt.bGb, 0.0)
        tau0, _ = self.tau(pt.u, node)
        st = np.sqrt(max(tau0, 0.0))

        def h(t):
            return t * A1 - 0.5 * t * t * A2 - psi(t * t * tau0, lam_n, r)[0]

        cands = [1.0, 0.0]
        if A2 + tau0 / lam_n > 0:
            tq = A1 / (A2 + tau0 / lam_n)
            if st > 0:
                tq = min(tq, lam_n * r / st)
            cands.append(max(tq, 0.0))
        if A2 > 0 and st > 0:
            cands.append(max((A1 - r * st) / A2, lam_n * r / st))
        vals = [h(t) for t in cands]
        j = int(np.argmax(vals))
        t = cands[j]
        if t == 1.0:
            return pt, vals[j]
        return DualPoint(t * c, t * pt.b, t * pt.u, t * pt.bg, t * t * pt.bGb), vals[j]


def _psi_vec(tau, lam_n, r):
    """psi for an array of tau."""
    tau = np.maximum(tau, 0.0)
    st = np.sqrt(tau)
    return np.where(st <= lam_n * r, tau / (2.0 * lam_n), r * st - 0.5 * lam_n * r * r)


def _line_search(h, h0, points=9, rounds=2):
    """Maximise a concave function of the step length on [0, 1] by two vectorised
    grids (the second around the best point of the first); returns (step, value),
    never worse than h(0) = h0."""
    lo, hi = 0.0, 1.0
    best_x, best_f = 0.0, h0
    for _ in range(rounds):
        x = np.linspace(lo, hi, points)
        f = h(x)
        i = int(np.argmax(f))
        if f[i] > best_f:
            best_x, best_f = float(x[i]), float(f[i])
        step = (hi - lo) / (points - 1)
        lo, hi = max(0.0, x[i] - step), min(1.0, x[i] + step)
    return best_x, best_f


def _top_k(v, k):
    """Positions of the k largest entries of v (all if k >= len(v))."""
    if k >= len(v):
        return np.arange(len(v))
    return np.argpartition(v, len(v) - k)[len(v) - k:]
