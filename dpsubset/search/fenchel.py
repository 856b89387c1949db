"""Certified lower bounds on a convex-loss score over a node of the branch and bound.

The score of a support S (:mod:`dpsubset.scores.convex`) is

    c(S) = min over ||b|| <= r, b on K + S of  (1/n) sum_i l(a_i'b; y_i) + (lam_n/2) ||b||^2,

with the per-row losses of :mod:`dpsubset.losses` (logistic, softplus hinge,
pseudo-Huber, and the squared loss) and lam_n = lam/n. The least-squares bound of
:mod:`dpsubset.search.perspective` rests on 1/2 ||v||^2 >= alpha'v - 1/2 ||alpha||^2;
for any convex loss the same step is Fenchel's inequality l(eta) >= alpha eta - l*(alpha).
With the ball relaxed by a multiplier mu >= 0 and the ridge fit on S dualised, for
EVERY alpha in the domain of the conjugate and every completion S of a node,

    c(S) >= -(1/n) sum_i l*(alpha_i; y_i) - psi(tau),     u = A'alpha/n,
    tau  = sum_{i in F1} u_i^2 + (the largest sum of u_i^2 over k free columns allowed
           by the family rule),

with psi the ball's closed form of :func:`dpsubset.search.perspective.psi`
(docs/methods/branch-and-bound.md, "Every convex loss"). The support enters only
through tau, as for least squares, so the node bookkeeping (tau, the family rule,
the branching column) is the least-squares one and :class:`FenchelBound` inherits it.

Dual points. Unlike least squares, a dual point is a vector of n numbers in a box (the
conjugate's domain) and u costs one pass over the data. A point is built from fitted
margins, alpha = l'(A b) (the exact dual at a leaf: the bound there is the score), and
moved by convex combinations of such points, which stay in the box. One ascent step
takes the relaxation's primal point for the current alpha (b = -u_W / gamma on the
columns W attaining tau), its margins' derivatives alpha_t = l'(A_W b), and the best
point on the segment [alpha, alpha_t]; then the best multiple t alpha, t in [0, 1]
(alpha = 0 is in every domain, with l*(0) = 0). Along both segments the conjugate term
is bounded by convexity of l* (its chord), which keeps the line searches O(1) per trial
step; the point chosen is then evaluated exactly.

Validity whatever the accuracy. Every alpha is clipped into the domain before it is
used, so every point gives a valid bound; the solver's accuracy only affects
tightness. Rounding is accounted for by an allowance: a relative BOUND_RTOL of the
terms added up, plus the worst-case error of the n-term products in u (at most
n eps max|a_ij| max|alpha_i| each) times r sqrt(|W|) (psi is r-Lipschitz in
||u_W||), subtracted before any comparison.

The always-in columns (the intercept, forced terms: K, always part of F1) enter in one
place, :meth:`ConvexDuals.u_of` (the first k_forced entries of u), and are then fixed
in at every node like any column fixed in.

A single-precision pass. The pass u = X'alpha/n is the node's main cost, and reading X
in single precision takes about a sixth of the time at n = 3000, p = 1000 (half the
bytes, and then the copy stays in cache). Its entries are screens, not bounds: each is
within a proven distance E of the exact value (the worst case of a float32 product
of n terms, Higham 2002, section 3.1: E = (n + 4) eps32 max|a| max|alpha|, eps32 =
2^-23), and before a bound is computed the entries that can attain tau (the columns
fixed in, and every free column within 2E of the k-th largest |u|) are recomputed in
double precision from alpha (:meth:`FenchelBound.settle`). Every other free column is
then provably below the top k, so tau, and the bound, are those of the double-precision
pass; only which entries were computed twice differs. A completion's own bound (leaves)
reads |u_j| + E for an entry not recomputed, and recomputes the entries of the
completions that this upper value does not rule out.

Every value here is a score bound of the private data and stays inside the call.
"""
from __future__ import annotations

import weakref

import numpy as np

from .perspective import BOUND_RTOL, NodeBound, _line_search, _psi_vec, psi

__all__ = ["ConvexDuals", "FenchelPoint", "FenchelBound"]

_EPS = np.finfo(float).eps
_EPS32 = float(np.finfo(np.float32).eps)
# The single-precision copy of X for the screening pass is kept when it takes at most
# this many bytes (and at most a tenth of the search's memory limit), and when n is
# small enough for the float32 error bound to be useful (n eps32 <= N_EPS32_MAX).
SINGLE_COPY_BYTES = 256 * 2 ** 20
N_EPS32_MAX = 0.01
# Nodes with at most this many completions are scored exactly (FenchelBound.leaf_max).
LEAF_MAX = 8
# Quasi-Newton (L-BFGS-B, on the conjugate's box) iterations after the ascent, where the
# ascent stalls short of the target: the bound is not smooth where the top-k selection
# ties, which stops the ascent (one selection per step) well below the relaxation's
# value (13 % below the best support at the root of p = 100, n = 1000, hinge, r = 4,
# lam = 1, against 8 % after 50 quasi-Newton iterations, each one pass over the data).
POLISH_ITERS = 50
# ... only at nodes whose bound after the ascent is within this share of the target
# (farther below, a polish of a few per cent does not prune the node: its cost is lost),
# and at most this deep (columns fixed in or out): the children start from the polished
# point, and a polish at every node made easy searches several times slower (p = 100,
# n = 1000, hinge, r = 1.1, lam = 180: 1.2 s without, 7.6 s with; docs/benchmarks/regimes.md).
POLISH_REACH = 0.25
POLISH_DEPTH = 0


class ConvexDuals:
    """What the Fenchel bound reads of one data set: the augmented design
    A = [always-in columns, candidates], the response and the loss.

    Index i < k_forced of u is an always-in column; candidate j has index k_forced + j.

    Parameters
    ----------
    scorer : ConvexDualScorer
        A scorer of :mod:`dpsubset.scores.convex` (X, y, forced, loss_fn, lam_n, r).
    memory : MemoryBudget, optional
        The search's memory budget: the single-precision copy of X (the screening
        pass) is made only when it takes at most a tenth of its limit, what the budget
        has left and SINGLE_COPY_BYTES, and is held in the budget while this object
        lives.
    """

    def __init__(self, scorer, memory=None):
        self.X, self.y, self.forced = scorer.X, scorer.y, scorer.forced
        self.loss = scorer.loss_fn
        self.n, self.p, self.k_forced = scorer.n, scorer.p, scorer.k_forced
        self.P = self.k_forced + self.p
        self.lam_n, self.r = float(scorer.lam_n), float(scorer.r)
        # the box of alpha where l*(alpha; y) is finite (docs/methods/branch-and-bound.md)
        self.lower, self.upper = self.loss.conjugate_box(self.y)
        from scipy.optimize import Bounds
        #: The box as scipy's Bounds (for the quasi-Newton polish).
        self.box = Bounds(self.lower, self.upper)
        amax = float(np.max(np.abs(self.X))) if self.X.size else 0.0
        if self.k_forced:
            amax = max(amax, float(np.max(np.abs(self.forced))))
        #: max |a_ij| over the augmented design (for the rounding allowance).
        self.amax = amax
        # Candidate columns as contiguous rows (the double-precision recomputation of a
        # few entries of u, the margins), the scorer's own copy.
        self.XT = scorer.XT
        #: The single-precision copy of X for the screening pass (None: every pass is
        #: in double precision).
        self.X32 = None
        cap = SINGLE_COPY_BYTES
        if memory is not None and memory.share(0.1) is not None:
            # (and within what the budget has left: the copy only saves time, so
            # without room the passes run in double precision instead of stopping)
            cap = min(cap, memory.share(0.1), memory.limit - memory.total)
        if self.p and (self.n + 4) * _EPS32 <= N_EPS32_MAX and 4 * self.X.size <= cap:
            self.X32 = self.X.astype(np.float32)
            if memory is not None:  # held in the budget until this object goes
                key = ("single-precision X", id(self))
                memory.hold(key, self.X32.nbytes,
                            route="the branch and bound (its single-precision copy of X)")
                weakref.finalize(self, memory.release, key)

    def u_of(self, alpha):
        """u = A'alpha/n: the always-in block first, then the candidates (one pass), in
        double precision."""
        return np.concatenate([self.forced.T @ alpha, self.X.T @ alpha]) / self.n

    def screen_of(self, alpha):
        """(u, fine, E): u = A'alpha/n with the candidates' entries from the
        single-precision pass, each within E of its exact value, and ``fine`` marking
        the entries computed in double precision (the always-in block). Without the
        single-precision copy: the double-precision u, fine = None (all), E = 0."""
        if self.X32 is None:
            return self.u_of(alpha), None, 0.0
        kf = self.k_forced
        u = np.empty(self.P)
        u[:kf] = self.forced.T @ alpha / self.n
        u[kf:] = self.X32.T @ alpha.astype(np.float32)
        u[kf:] /= self.n
        fine = np.zeros(self.P, dtype=bool)
        fine[:kf] = True
        amax_alpha = float(np.max(np.abs(alpha))) if len(alpha) else 0.0
        # Rounding alpha and X to float32 (2 eps32 |a alpha|), the n-term float32 sum
        # (n eps32 (1 + eps32)^2 sum |a alpha|, eps32 here twice the unit roundoff),
        # the float64 conversion and division, and alpha's underflow to zero.
        E = ((self.n + 4) * _EPS32 * self.amax * amax_alpha
             + (1.0 + self.amax) * float(np.finfo(np.float32).tiny))
        return u, fine, E

    def refine(self, pt, cols):
        """Recompute the entries ``cols`` (augmented indices) of ``pt.u`` that are not
        yet in double precision, from ``pt.alpha``."""
        if pt.fine is None:
            return
        cols = np.asarray(cols, dtype=np.intp)
        cols = cols[~pt.fine[cols]]
        if not len(cols):
            return
        kf = self.k_forced
        pt.u[cols] = self.XT[cols - kf] @ pt.alpha / self.n  # (the always-in are fine)
        pt.fine[cols] = True
        amax_alpha = float(np.max(np.abs(pt.alpha))) if len(pt.alpha) else 0.0
        pt.u_err = max(pt.u_err, (self.n + 2) * _EPS * self.amax * amax_alpha)

    def margins(self, W, beta):
        """A_W beta for augmented indices W (an always-in column i < k_forced is
        forced[:, i], a candidate k_forced + j is X[:, j])."""
        kf = self.k_forced
        W = np.asarray(W, dtype=np.intp)
        f = W < kf
        eta = self.forced[:, W[f]] @ beta[f] if np.any(f) else np.zeros(self.n)
        if np.any(~f):  # (rows of X' are contiguous: a gather of columns of X is not)
            eta = eta + beta[~f] @ self.XT[W[~f] - kf]
        return eta

    def point(self, alpha):
        """The dual point of ``alpha`` (clipped into the conjugate's domain first)."""
        alpha = np.clip(alpha, self.lower, self.upper)
        lc = self.loss.conjugate(alpha, self.y)
        amax_alpha = float(np.max(np.abs(alpha))) if len(alpha) else 0.0
        # An n-term product has error at most n eps sum |a_ij alpha_i| (Higham 2002,
        # section 3.1), and one more rounding for the division by n.
        u_err = (self.n + 2) * _EPS * self.amax * amax_alpha
        u, fine, E = self.screen_of(alpha)
        return FenchelPoint(alpha, u, float(np.mean(lc)), float(np.mean(np.abs(lc))), u_err,
                            fine, E)

    def fitted_point(self, W, beta):
        """The point alpha = l'(A_W beta) of a fit (the exact dual at its optimum)."""
        return self.point(self.loss.derivative(self.margins(W, beta), self.y))

    def zero_point(self):
        """alpha = 0 (in every domain; l*(0) = 0 for every loss here)."""
        return FenchelPoint(np.zeros(self.n), np.zeros(self.P), 0.0, 0.0, 0.0)


class FenchelPoint:
    """A dual point: alpha (n,), u = A'alpha/n (P,), conj = mean l*(alpha_i; y_i) and
    its terms' mean size, the rounding bound of u's double-precision entries (for the
    allowance), which entries those are (``fine``; None: all) and the screening
    distance E of the others."""

    __slots__ = ("alpha", "u", "conj", "cabs", "u_err", "fine", "coarse")

    def __init__(self, alpha, u, conj, cabs, u_err, fine=None, coarse=0.0):
        self.alpha, self.u, self.conj, self.cabs = alpha, u, conj, cabs
        #: A bound on |u_j - (A'alpha/n)_j| over the entries in double precision
        #: (rounding of the products and of the combinations that made the point).
        self.u_err = u_err
        #: Which entries of u are in double precision (None: all of them).
        self.fine = fine
        #: A bound on |u_j - (A'alpha/n)_j| over the other entries (the screen's E).
        self.coarse = coarse

    @property
    def nbytes(self):
        return self.alpha.nbytes + self.u.nbytes + (0 if self.fine is None else
                                                    self.fine.nbytes)

    def sparse(self):
        """The compact form of a queued point: alpha in single precision (half the
        bytes, no u). Rebuilt by :meth:`FenchelBound.rebuild`, which clips it into the
        domain again, so the rebuilt point is a valid dual point (a slightly different
        one: only tightness can change)."""
        return (self.alpha.astype(np.float32),)


class FenchelBound(NodeBound):
    """Bounds of the nodes of one search under a convex loss.

    The node bookkeeping (tau, tau_batch, the family rule) is inherited from
    :class:`dpsubset.search.perspective.NodeBound`; the value, the rounding allowance
    and the ascent are the Fenchel versions.

    Parameters
    ----------
    duals : ConvexDuals
    center : array_like of int, optional
        Candidate indices of the centre set for a family rule.
    """

    def __init__(self, duals, center=None):
        super().__init__(duals, center)
        self.duals = duals

    # ------------------------------------------------------------ the hooks of the search
    def start_point(self, scorer, support):
        """The exact dual point of the fit on ``support`` (the root's start)."""
        kf = self.duals.k_forced
        _, beta = scorer.fit(np.asarray(support)[None, :])
        W = np.concatenate([np.arange(kf), kf + np.asarray(support)])
        return self.duals.fitted_point(W, beta[0])

    def empty_point(self):
        return self.duals.zero_point()

    def rebuild(self, compact):
        """A queued point from its compact form (one pass over the data)."""
        return self.duals.point(compact[0].astype(float))

    def dense_bytes(self, p):
        """Bytes of a whole open node with its point (alpha, u, the mask of u's
        double-precision entries and the node's index arrays)."""
        return 8 * (self.duals.n + self.duals.P) + self.duals.P + 32 * p

    #: Nodes with at most this many completions are scored exactly. A convex score
    #: costs about as much as a few node bounds (a Newton solve against a pass over
    #: the data), so leaves are small; docs/benchmarks/regimes.md has the timings.
    leaf_max = LEAF_MAX
    #: A node with one free slot (k = 1) is settled at once after its ascent: each
    #: completion's own bound at the node's point (O(1) each given u), then one Newton
    #: step's bracket, then exact scores, all batched. Branching it instead costs an
    #: ascent (a pass over the data) and a single Newton solve per completion that
    #: enters the list: at p = 1000 the two-mistake class of top-R spent 8.6 s of a 20 s
    #: call in 3100 such ascents (docs/benchmarks/regimes.md, "Where the time goes").
    one_slot_leaves = True

    def score_leaves(self, scorer, S, threshold, pt=None):
        """Exact scores of the completions that can enter the list: those of
        :meth:`bracket_leaves` whose lower end is at most the threshold."""
        S, lo, _ = self.bracket_leaves(scorer, S, threshold, pt)
        S = S[lo <= threshold]
        return S, (scorer.score(S) if len(S) else np.empty(0))

    @property
    def lazy_leaves(self):
        """Whether the search keeps bracketed completions pending (certified [lower,
        upper] ends) and scores exactly only those whose lower end is at most its final
        threshold (branch_bound._KBest.resolve): two thirds of the completions scored
        as they were met at p = 1000 were later dropped by a lower threshold. Not for
        Huber, whose exact score (a few Newton steps on a nearly quadratic loss) costs
        about a bracket: there the looser threshold of the upper ends cost more than
        it saved (p = 1000, n = 3000, rho = 0.8, r = 1.1, lam = 180, top_r: 27.6 s
        against 22.4 s process CPU; hinge, rho = 0.5: 10.9 s against 12.6 s)."""
        return not self.duals.loss.cheap_exact_score

    def bracket_leaves(self, scorer, S, threshold, pt=None):
        """Certified brackets (S, lower, upper) of the completions that can enter.

        Each completion S is first bounded at the node's dual point ``pt`` (the bound
        of the node with S as its only completion: O(s) given u), then bracketed by one
        Newton step (certified lower and upper ends, ``ConvexLossScorer.bracket``);
        those with a lower end above the threshold cannot enter and are dropped."""
        if pt is not None and len(S):
            S = S[self._leaf_bounds(pt, S, upper=True) <= threshold]
            if pt.fine is not None and len(S):
                # The completions not ruled out with |u_j| + E: their entries in double
                # precision, and their bounds again.
                self.duals.refine(pt, self.duals.k_forced + np.unique(S))
                S = S[self._leaf_bounds(pt, S) <= threshold]
        if not len(S):
            return S, np.empty(0), np.empty(0)
        lo, up = scorer.bracket(S)
        ok = lo <= threshold
        return S[ok], lo[ok], up[ok]

    def _leaf_bounds(self, pt, S, upper=False):
        """Certified bounds of single supports (rows of S) at ``pt``: the bound of a node
        whose only completion is S (O(s) each given u). With ``upper`` an entry not in
        double precision reads |u_j| + E (an upper value, so the bound stays valid)."""
        d = self.duals
        au = np.abs(pt.u)
        if upper and pt.fine is not None:
            au = np.where(pt.fine, au, au + pt.coarse)
        u2 = au * au
        tau = float(u2[:d.k_forced].sum()) + u2[d.k_forced + S].sum(axis=1)
        value = -pt.conj - _psi_vec(tau, d.lam_n, d.r)
        width = d.k_forced + S.shape[1]
        allow = (BOUND_RTOL * (pt.cabs + abs(pt.conj) + np.abs(value))
                 + 4.0 * (d.n + 2) * _EPS * pt.cabs + d.r * np.sqrt(width) * pt.u_err)
        return value - allow

    # ------------------------------------------------------------ the bound
    def value(self, pt, node):
        """The bound (not yet lowered by the rounding allowance) at a dual point."""
        self.settle(pt, node)
        tau, _ = self.tau(pt.u, node)
        return -pt.conj - psi(tau, self.duals.lam_n, self.duals.r)[0]

    def settle(self, pt, node):
        """Recompute in double precision the entries of ``pt.u`` that can attain tau at
        ``node`` (module notes, "A single-precision pass"): the columns fixed in, and in
        each group of free columns that tau takes the top kg of (the centre and the
        others under a family rule), every entry not yet in double precision whose
        |u| + E reaches the kg-th largest |u| less E. When nothing is left to recompute,
        every such entry is provably below the top kg, which are all in double
        precision: tau at ``pt.u`` is tau at the exact u (up to ``pt.u_err``)."""
        if pt.fine is None:
            return
        d, E = self.duals, pt.coarse
        d.refine(pt, node.fixed_aug)
        k = node.k
        if k == 0:
            return
        lo, hi = node.k1_range
        groups = [(node.free_other, k)] if hi == 0 else \
            [(node.free_center, hi), (node.free_other, k - lo)]
        for cand, kg in groups:
            if kg <= 0 or not len(cand):
                continue
            idx = d.k_forced + np.asarray(cand, dtype=np.intp)
            if kg >= len(idx):
                d.refine(pt, idx)
                continue
            while True:
                a = np.abs(pt.u[idx])
                thr = float(np.partition(a, len(a) - kg)[len(a) - kg])
                need = idx[~pt.fine[idx] & (a + E >= thr - E)]
                if not len(need):
                    break
                d.refine(pt, need)

    def allowance(self, pt, value, node=None):
        """Rounding allowance of a bound computed at ``pt`` (module notes)."""
        d = self.duals
        width = d.k_forced + d.p if node is None else len(node.fixed_aug) + node.k
        return (BOUND_RTOL * (pt.cabs + abs(pt.conj) + abs(value))
                + 4.0 * (d.n + 2) * _EPS * pt.cabs + d.r * np.sqrt(width) * pt.u_err)

    def certified(self, pt, node):
        v = self.value(pt, node)
        return v - self.allowance(pt, v, node)

    # ------------------------------------------------------------ ascent
    def improve(self, pt, node, *, target=np.inf, iters=12, rtol=1e-7):
        """Ascend the (concave) dual from ``pt``; returns (certified bound, point,
        selection). Every iterate gives a valid bound; the best is kept."""
        d = self.duals
        lam_n, r, kf = d.lam_n, d.r, d.k_forced
        best_pt, best = pt, self.value(pt, node)
        cur, cur_v = pt, best
        for it in range(iters):
            if best - self.allowance(best_pt, best, node) > target:
                break
            tau, sel = self.tau(cur.u, node, want_selection=True)
            _, gamma = psi(tau, lam_n, r)
            W = np.concatenate([node.fixed_aug, kf + sel]).astype(np.intp)
            tgt = d.fitted_point(W, -cur.u[W] / gamma)
            nxt, hv = self._segment(cur, tgt, node, cur_v)
            nxt, hv = self._shrink(nxt, node, hv)
            gain = hv - cur_v
            cur, cur_v = nxt, hv
            if hv > best:
                best_pt, best = nxt, hv
            if gain <= rtol * max(1.0, abs(hv)) or (
                    np.isfinite(target) and gain * (iters - it) < target - best):
                break
        certified = best - self.allowance(best_pt, best, node)
        depth = len(node.fixed) + (0 if node.out is None else len(node.out))
        if POLISH_ITERS and depth <= POLISH_DEPTH and certified <= target and (
                target - certified <= POLISH_REACH * max(abs(target), 1e-12)):
            pol = self._polish(best_pt, node, POLISH_ITERS)
            v = self.value(pol, node)
            if v - self.allowance(pol, v, node) > best - self.allowance(best_pt, best, node):
                best_pt, best = pol, v
        _, sel = self.tau(best_pt.u, node, want_selection=True)
        return best - self.allowance(best_pt, best, node), best_pt, sel

    def _polish(self, pt, node, maxiter):
        """L-BFGS-B on the bound as a function of alpha in the conjugate's box, from
        ``pt`` (the gradient where the top-k selection is unique:
        -((l*)'(alpha) + A_W u_W / gamma) / n). Returns the point at its last iterate,
        with u recomputed from the data (the bound is valid at any alpha: the
        optimiser's accuracy only affects tightness)."""
        from scipy.optimize import minimize

        d = self.duals

        def negative(alpha):
            lc = d.loss.conjugate(alpha, d.y)
            u = d.u_of(alpha)
            tau, sel = self.tau(u, node, want_selection=True)
            ps, gamma = psi(tau, d.lam_n, d.r)
            W = np.concatenate([node.fixed_aug, d.k_forced + sel]).astype(np.intp)
            grad = (d.loss.conjugate_slope(alpha, d.y) + d.margins(W, u[W] / gamma)) / d.n
            return float(np.mean(lc)) + ps, grad

        res = minimize(negative, pt.alpha, jac=True, method="L-BFGS-B", bounds=d.box,
                       options=dict(maxiter=int(maxiter), maxfun=2 * int(maxiter)))
        return d.point(res.x)

    def _segment(self, cur, tgt, node, cur_v):
        """The best point on [cur, tgt]: a line search on the chord bound (convexity
        of l*: conj((1-e) a + e b) <= (1-e) conj(a) + e conj(b)), then the point
        chosen evaluated exactly (never below its chord value)."""
        d = self.duals

        def h(e):
            U = cur.u[None, :] + e[:, None] * (tgt.u - cur.u)[None, :]
            conj = cur.conj + e * (tgt.conj - cur.conj)
            return -conj - _psi_vec(self.tau_batch(U, node), d.lam_n, d.r)

        e, _ = _line_search(h, cur_v)
        if e <= 0.0:
            return cur, cur_v
        alpha = cur.alpha + e * (tgt.alpha - cur.alpha)
        u = cur.u + e * (tgt.u - cur.u)
        nxt = self._exact(alpha, u, (1.0 - e) * cur.u_err + e * tgt.u_err,
                          _both(cur.fine, tgt.fine),
                          (1.0 - e) * max(cur.coarse, cur.u_err) + e * max(tgt.coarse, tgt.u_err))
        return nxt, self.value(nxt, node)

    def _shrink(self, pt, node, v):
        """The best multiple t alpha, t in [0, 1] (the segment to alpha = 0, where the
        chord bound is t conj(alpha) and tau scales by t^2)."""
        d = self.duals
        tau0, _ = self.tau(pt.u, node)
        t = np.linspace(0.0, 1.0, 21)[:-1]
        f = -t * pt.conj - _psi_vec(t * t * tau0, d.lam_n, d.r)
        j = int(np.argmax(f))
        if f[j] <= v:
            return pt, v
        nxt = self._exact(t[j] * pt.alpha, t[j] * pt.u, t[j] * pt.u_err,
                          None if pt.fine is None else pt.fine.copy(),
                          t[j] * max(pt.coarse, pt.u_err))
        return nxt, self.value(nxt, node)

    def _exact(self, alpha, u, u_err, fine=None, coarse=0.0):
        """The point at a combination of points: alpha stays in the domain (a convex
        combination of points in the box; clipped in case of rounding), u is the same
        combination of the u's (linear: no pass over the data), and l* is evaluated
        exactly (O(n)). ``u_err`` is the combination of the points' rounding bounds;
        the combination's own rounding (a few eps of each entry) and the clipping (at
        most 2 eps |alpha_i| per row, so 2 eps max|a| max|alpha| in u) are added, to the
        double-precision entries' bound and to the screened entries' ``coarse`` alike
        (an entry is in double precision when it is in both points)."""
        d = self.duals
        alpha = np.clip(alpha, d.lower, d.upper)
        lc = d.loss.conjugate(alpha, d.y)
        amax_alpha = float(np.max(np.abs(alpha))) if len(alpha) else 0.0
        extra = 4.0 * _EPS * (float(np.max(np.abs(u))) + d.amax * amax_alpha)
        return FenchelPoint(alpha, u, float(np.mean(lc)), float(np.mean(np.abs(lc))),
                            u_err + extra, fine, coarse + extra if fine is not None else 0.0)


def _both(a, b):
    """Entries in double precision in both points (None: all of them)."""
    if a is None:
        return None if b is None else b.copy()
    return a.copy() if b is None else a & b
