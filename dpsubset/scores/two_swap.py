"""The two-swap search of the least-squares scorer: the best supports two swaps away, exactly.

The class of a support S1 holds the supports B + {j, k}: a base B (S1 less two
elements, C(s, 2) bases) and a pair of outside columns. The search never scores the
whole class one support at a time: per base, a rank-two block update gives every pair's
unconstrained ridge value, and a bound from per-column quantities skips the pairs that
cannot reach the running cut-off (:meth:`TwoSwapMixin.two_swap` has the derivation).
The steps, for each base:

1. fit the base and compute what the pairs need of every outside column
   (:class:`_PairBase`);
2. scan the pairs in blocks of rows in decreasing t order, each row against the prefix
   of columns the bound cannot rule out (:meth:`TwoSwapMixin._scan_base`), refining
   the Gram row maxima where a row would pair with a long prefix;
3. score a block's surviving pairs exactly where the ball binds and offer them to the
   running list of the best members (:class:`_BestList`), which lowers the cut-off.

Everything here sees clipped, private data. Nothing in this module is released.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ..search.enumeration import rank_supports

__all__ = ["TwoSwapMixin"]

# Rows of the two-swap search whose Gram row maxima are computed at a time.
_TWO_SWAP_REFINE_CHUNK = 256
# A row's Gram row maximum is computed when its pairs would span more than this share
# of the outside columns. A row maximum (one single-precision pass over X, about 1 ms at
# n = 1000, p = 50,000) costs as much as the row's screened pairs with a fifth to a third
# of the columns, and it serves every later base; measured there, 1/8 beat 1/12, 1/4
# and 1/3 (issue 42).
_REFINE_MIN_SHARE = 1 / 8
# Largest rows x p product the two-swap search forms against all of X (64 MB; at most a
# quarter of X).
_FULL_PRODUCT_MAX_ELEMENTS = 8 * 2**20
# Pairs per vectorised block of two_swap (at most; a sixteenth of X's size when less).
_PAIR_BLOCK_ELEMENTS = 2_000_000
# The two-swap search's copy of a base's columns: at most this many bytes and 1/share of X.
_PREFIX_MAX_BYTES = 64 * 2**20
_PREFIX_X_SHARE = 8
# Whole rows of X'X/n kept from the products against all of X: at most this many bytes
# and 1/share of X. The rows do not depend on the base, and the bases' top rows in t
# order are mostly the same columns (p = 50,000: 531 such rows for 381 columns).
_ROW_CACHE_MAX_BYTES = 64 * 2**20
_ROW_CACHE_X_SHARE = 8


class _BestList:
    """The running list of the ``keep`` best class members, and the cut-off it implies.

    The cut-off is the ``keep``-th smallest of the competing values from outside the
    class (``others``) and the members found so far, capped by ``threshold``: a pair
    whose value is provably above it cannot be among the ``keep`` best.
    """

    def __init__(self, keep, s, threshold, other_values):
        self.keep = keep
        self.values = np.empty(0)
        self.supports = np.empty((0, s), dtype=np.intp)
        self.cutoff = float(threshold)
        others = np.sort(np.asarray(other_values if other_values is not None else [], float))
        self.others = others[:keep]
        if len(self.others) >= keep:
            self.cutoff = min(self.cutoff, float(self.others[keep - 1]))

    def offer(self, vals, sups):
        """Add members (exact scores ``vals`` of the supports ``sups``) and lower the cut-off."""
        keep = self.keep
        best_v = np.concatenate([self.values, vals])
        best_S = np.vstack([self.supports, sups])
        if len(best_v) > keep:
            # Keep the `keep` best (ties at the boundary by the lexicographic rule);
            # a partition first, so the full sort only sees the boundary ties.
            kth = np.partition(best_v, keep - 1)[keep - 1]
            cand = np.flatnonzero(best_v <= kth)
            order = cand[rank_supports(best_S[cand], best_v[cand])[:keep]]
            best_v, best_S = best_v[order], best_S[order]
        self.values, self.supports = best_v, best_S
        if len(best_v) + len(self.others) >= keep:
            both = np.concatenate([self.others, best_v])
            self.cutoff = min(self.cutoff, float(np.partition(both, keep - 1)[keep - 1]))

    def result(self, threshold, tol):
        """The members found, best first (ties by index), that can be among the best."""
        best_v, best_S = self.values, self.supports
        if len(best_v):
            order = rank_supports(best_S, best_v)
            best_v, best_S = best_v[order], best_S[order]
        # Members above the final cut-off cannot be among the `keep` best overall.
        below = best_v <= min(threshold, self.cutoff) + tol
        return best_S[below], best_v[below], self.cutoff


class _PairBase:
    """What the pairs of one base B need of every outside column (step 1).

    Pair values are taken under the Lagrangian shift of the base's own ball multiplier
    (``_dual_shift``): lower bounds that stay close to the scores of B + {j, k} where the
    ball binds (two weak added columns barely move the multiplier), so few pairs are left
    for an exact score. With shift = 0 they are the unconstrained ridge values, exact
    wherever the ball is slack.

    Attributes: ``value_B`` (shifted value of the base), ``beta_B``, ``Cq`` and ``P`` (of
    ``_base_fit``), per outside column ``h`` (residual correlation), ``d`` (pivot),
    ``u = P' beta_B``, ``Qd = diag(P'P)``, ``t = |h| / sqrt(d)``; ``order`` (decreasing
    t), ``ts = t[order]``, ``mus`` and ``mu_suf`` (bounds on the pivots' correlations in
    t order, and their suffix maxima).
    """

    def __init__(self, scorer, C1, S1, B, outside, rowmax, shift):
        self.B = B
        self.rowmax = rowmax
        self.shift = shift
        lam_b = scorer.lam_n + shift
        value_B, beta_B, Cq, P = scorer._base_fit(C1, S1, B, outside, shift)
        self.value_B = value_B - 0.5 * shift * scorer.r * scorer.r
        self.beta_B, self.Cq, self.P = beta_B, Cq, P
        self.nB = float(beta_B @ beta_B)
        self.h = scorer.Xy[outside] - Cq.T @ beta_B
        v = np.einsum("kq,kq->q", Cq, P)  # what B explains of each column
        self.d = d = scorer.Xdiag[outside] + lam_b - v
        self.u = P.T @ beta_B
        self.Qd = np.einsum("kq,kq->q", P, P)
        t = np.abs(self.h) / np.sqrt(d)
        self.rho = float(np.max(1.0 - lam_b / d))
        # Rows in decreasing t: for row position a, only columns b > a with
        # t_b >= tau_a can beat the cut-off, a prefix of the order.
        self.order = np.argsort(-t, kind="stable")
        self.ts = t[self.order]
        # mu_j bounds |E_jl| / sqrt(d_j d_l) over all partners l: rho for every
        # column, much less for a column whose Gram row maximum is known.
        self.sv = np.sqrt(np.maximum(v, 0.0))
        self.scale = np.sqrt(d * float(d.min()))
        self.mus = np.full(len(outside), self.rho)
        self.set_mu(np.arange(len(outside)))

    def set_mu(self, pos):
        """mu at the t-order positions ``pos`` from the stored row maxima."""
        j = self.order[pos]
        m = self.rowmax[j] + self.sv[j] * float(self.sv.max())
        self.mus[pos] = np.minimum(self.rho, np.where(np.isnan(m), self.rho, m / self.scale[j]))
        self.mu_suf = np.maximum.accumulate(self.mus[::-1])[::-1]


class TwoSwapMixin:
    """The two-swap search of :class:`dpsubset.scores.least_squares.LeastSquaresScorer`.

    A mixin: it uses the scorer's Gram algebra (``_base_fit``, ``_dual_shift``,
    ``_rowmax_store``, ``_gram_row_max``, ``score``) and its attributes ``X``, ``Xy``,
    ``Xdiag``, ``_gram``, ``lam_n``, ``r``, ``p``, ``n``, ``yy``, ``data_size`` and
    ``n_scored``.
    """

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
        best = _BestList(keep, s, threshold, other_values)
        tol = 1e-12 * max(1.0, abs(self.yy))
        rowmax = self._rowmax_store(outside)  # shared with the class bounds
        for B, shift in self._bases_best_first(C1, S1):
            # Step 1: the base's fit and what its pairs need of every outside column.
            base = _PairBase(self, C1, S1, B, outside, rowmax, shift)
            # Steps 2 and 3: its pairs, block by block; the survivors are offered to `best`.
            self._scan_base(base, S1, C1, outside, best, block_elements, tol)
        return best.result(threshold, tol)

    def _bases_best_first(self, C1, S1):
        """The bases S1 minus two elements with their ball multipliers (the Lagrangian
        shift of :class:`_PairBase`), in increasing order of their own (shifted) value: a base whose value is low holds most of the class's best members, and
        scanning it first brings the cut-off down for the others (p = 50,000: the first
        bases in index order scanned wide prefixes against a cut-off that a later base
        then lowered). The order changes only how much is pruned, never the result."""
        bases = [np.delete(S1, drop) for drop in itertools.combinations(range(len(S1)), 2)]
        none = np.empty(0, dtype=np.intp)
        shifts = [self._dual_shift(B) for B in bases]
        keys = [self._base_fit(C1, S1, B, none, shift)[0] - 0.5 * shift * self.r * self.r
                for B, shift in zip(bases, shifts)]
        return [(bases[i], shifts[i]) for i in np.argsort(keys, kind="stable")]

    def _scan_base(self, base, S1, C1, outside, best, block_elements, tol):
        """Step 2: the pairs of one base, in blocks of rows in decreasing t order.

        For row position a only the columns after it with t_b >= tau_a can beat the
        cut-off: a prefix of the order, which shrinks as the cut-off falls."""
        q = len(outside)
        ts, order = base.ts, base.order
        prefix = screen = None
        if self._gram is None:
            prefix = _PrefixColumns(self.X, outside[order])
            if self.wants_single_precision:
                screen = _PrefixColumns(self.single_precision_X(), outside[order])
        # Row blocks small enough that skipping the lower triangle pays.
        rows_per_block = max(1, min(block_elements // q, max(64, q // 8)))
        a = 0
        while a < q - 1:
            need = 2.0 * (base.value_B - best.cutoff) - tol
            if need > 0 and _pair_gain_bound(base.mu_suf[a], ts[a], ts[a + 1]) < need:
                break  # no later pair can reach the cut-off either
            if need > 0:
                self._refine_row_maxima(base, outside, a, need, rows_per_block)
            ra, ncol, step = _block_extent(base, a, need, rows_per_block, block_elements)
            if len(ra) and ncol > ra[0] + 1:
                cpos = np.arange(ra[0] + 1, ncol)
                if need > 0 and screen is not None:
                    ra, cpos = self._screen_block(base, outside, ra, cpos, screen, need)
                if len(ra) and len(cpos):
                    block = self._pair_block(base, outside, ra, cpos, prefix)
                    # Step 3: exact scores of the block's survivors, offered to the list.
                    self._offer_block(block, base, (S1, C1, block.G), outside, best, tol)
            a += step

    def _refine_row_maxima(self, base, outside, a, need, rows_per_block):
        """Gram row maxima of the coming rows that would otherwise pair with a long
        prefix: computing them first (once per support, kept for later bases and calls)
        usually shortens those rows' prefixes to nothing.

        A row maximum costs one pass over X in single precision, about as much as that
        row's pairs with _REFINE_MIN_SHARE of the columns. When a row of the coming block
        (positions ``a`` to ``a + rows_per_block``) needs one, every row that needs one
        among the next _TWO_SWAP_REFINE_CHUNK positions is computed with it: a batch
        reads X once, whatever its size, and that read dominates small batches."""
        rowmax, order, ts, mus = base.rowmax, base.order, base.ts, base.mus
        q = len(outside)
        pos = np.arange(a, min(q - 1, a + max(rows_per_block, _TWO_SWAP_REFINE_CHUNK)))
        pos = pos[np.isnan(rowmax[order[pos]])]
        if len(pos) == 0:
            return
        width = _pair_prefix_ends(ts, ts[pos], mus[pos], need) - pos - 1
        pos = pos[width > max(int(q * _REFINE_MIN_SHARE), 1)]
        if len(pos) and pos[0] < a + rows_per_block:
            rowmax[order[pos]] = self._gram_row_max(outside, order[pos])
            base.set_mu(pos)

    def _screen_block(self, base, outside, ra, cpos, screen, need):
        """The rows and columns of a block that hold a pair the bound cannot rule out,
        with each pair's own Gram entry in single precision.

        A pair's gain is at most _pair_gain_bound(m, t_j, t_k) with m any bound on
        |E_jk| / sqrt(d_j d_k); here m comes from E_jk computed with the Gram entry in
        single precision, widened by the rounding allowance of :meth:`_gram_row_max`
        (a rigorous bound on the error of the entry). Far tighter than the row maxima
        (every pair gets its own entry) and about two thirds of the double-precision
        block's cost (p = 50,000: all but 1.5 % of the screened pairs are ruled out here). Only the rows and
        columns with a surviving pair go on to the exact block."""
        order = base.order
        rows, cols = order[ra], order[cpos]
        G = screen.product(outside[rows], cpos[0], cpos[-1] + 1)
        if G is None:
            G = _gathered_product(screen.X, outside[rows], outside[cols])
        E = G.astype(float) / self.n - base.Cq[:, rows].T @ base.P[:, cols]
        np.abs(E, out=E)
        E += self._single_precision_allowance()
        mu = E / np.sqrt(np.multiply.outer(base.d[rows], base.d[cols]))
        tr, tc = base.ts[ra][:, None], base.ts[cpos][None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            bound = np.where(mu < 1.0, _pair_gain_bound(np.minimum(mu, 1.0), tr, tc), np.inf)
        live = (bound >= need * (1.0 - 1e-9)) & (cpos[None, :] > ra[:, None])
        return ra[live.any(axis=1)], cpos[live.any(axis=0)]

    def _pair_block(self, base, outside, ra, cpos, prefix):
        """The rank-two values of the pairs (rows at t-positions ``ra``) x (columns at
        t-positions ``cpos``, increasing): value(B) - h' S^{-1} h / 2, each unordered
        pair once."""
        order = base.order
        rows, cols = order[ra], order[cpos]
        Xo_r, Xo_c = outside[rows], outside[cols]
        contiguous = cpos[-1] - cpos[0] + 1 == len(cpos)
        if self._gram is not None:
            G = self._gram[Xo_r[:, None], Xo_c[None, :]]
        else:
            G = prefix.product(Xo_r, cpos[0], cpos[-1] + 1) if contiguous else None
            G = self._cross_block(Xo_r, Xo_c) if G is None else G / self.n
        E = G - base.Cq[:, rows].T @ base.P[:, cols]
        dr, dc = base.d[rows], base.d[cols]
        hr, hc = base.h[rows], base.h[cols]
        # gain = h' S^{-1} h for S = [[dr, E], [E, dc]], in as few passes as possible
        det = np.multiply.outer(dr, dc) - E * E
        num = np.multiply.outer(hr * hr, dc) + np.multiply.outer(dr, hc * hc)
        num -= 2.0 * E * np.multiply.outer(hr, hc)
        val = base.value_B - 0.5 * num / det
        # Each unordered pair once: column position must come after row position.
        val[cpos[None, :] <= ra[:, None]] = np.inf
        return _PairBlock(rows=rows, cols=cols, G=G, E=E, det=det, val=val)

    def _offer_block(self, block, base, known, outside, best, tol):
        """Step 3: the pairs of a block that can reach the cut-off, scored and offered."""
        flat = block.val.ravel()
        # Probe the most promising pairs first: their exact scores tighten the
        # cut-off before the rest of the block is filtered against it.
        live = np.isfinite(flat) & (flat <= best.cutoff + tol)
        # As many as it takes to fill the list (``others`` count towards it):
        # then the cut-off is finite. With top-R's R - 1 other values that is
        # one pair, where probing ``keep`` pairs re-scored up to R of them
        # exactly against an infinite cut-off (p = 10,000: 50,000 re-scores
        # for a list that kept one member).
        m_probe = min(max(best.keep - len(best.others), 1), int(np.count_nonzero(live)))
        done = np.zeros(0, dtype=np.intp)
        if 0 < m_probe < len(flat):
            done = np.argpartition(np.where(live, flat, np.inf), m_probe - 1)[:m_probe]
            done = done[live[done]]
            self._offer_pairs(done, block, base, outside, best, tol, known)
            live[done] = False
        live &= flat <= best.cutoff + tol
        rest = np.flatnonzero(live)
        self._offer_pairs(rest, block, base, outside, best, tol, known)
        self.n_scored += len(done) + len(rest)

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
        if len(cols) * 200 > len(rows) * p and len(rows) * p <= min(_FULL_PRODUCT_MAX_ELEMENTS,
                                                                     self.X.size // 4):
            return self._whole_gram_rows(rows)[:, cols]
        return _gathered_product(self.X, rows, cols) / n

    def _whole_gram_rows(self, rows):
        """X[:, rows]' X / n, the rows computed before read from a cache (the most
        recently used first kept, within _ROW_CACHE_MAX_BYTES and 1/_ROW_CACHE_X_SHARE
        of X). The same product as without the cache, so the same numbers."""
        cache = getattr(self, "_gram_rows", None)
        if cache is None:
            cache = self._gram_rows = {}
        missing = [j for j in dict.fromkeys(int(r) for r in rows) if j not in cache]
        if missing:
            new = (self.X[:, missing].T @ self.X) / self.n
            for j, row in zip(missing, new):
                cache[j] = row
        out = np.stack([cache[int(r)] for r in rows])
        for r in rows:  # most recently used last (dicts keep insertion order)
            cache[int(r)] = cache.pop(int(r))
        cap = max(1, min(_ROW_CACHE_MAX_BYTES, self.X.nbytes // _ROW_CACHE_X_SHARE)
                  // (8 * self.p))
        while len(cache) > cap:
            del cache[next(iter(cache))]
        return out

    def _offer_pairs(self, flat_idx, block, base, outside, best, tol, known=None):
        """Exact scores of the pairs at ``flat_idx`` of a block, offered to the running
        list: the rank-two value where the minimiser stays in the ball, an exact
        re-score where the ball binds (there the update is only a lower bound). Under a
        Lagrangian shift (> 0) the block values are bounds only, so every pair offered
        is re-scored exactly. ``known`` = (S1, X'X_S1/n, the block's raw Gram entries)
        lets the re-scores skip X."""
        if len(flat_idx) == 0:
            return
        ii, jj = np.unravel_index(flat_idx, block.val.shape)
        rj, ck = block.rows[ii], block.cols[jj]
        d, h, P, u, Qd = base.d, base.h, base.P, base.u, base.Qd
        # The new coefficients (S^{-1} h) of the pair, needed for the ball check.
        e, dt = block.E[ii, jj], block.det[ii, jj]
        vj = (d[ck] * h[rj] - e * h[ck]) / dt
        vk = (d[rj] * h[ck] - e * h[rj]) / dt
        Qjk = np.einsum("km,km->m", P[:, rj], P[:, ck])
        norm2 = (base.nB - 2.0 * (vj * u[rj] + vk * u[ck]) + vj * vj * Qd[rj]
                 + 2.0 * vj * vk * Qjk + vk * vk * Qd[ck] + vj * vj + vk * vk)
        vals = block.val[ii, jj].copy()
        B = base.B
        s = len(B) + 2
        sups = np.sort(np.column_stack([np.broadcast_to(B, (len(ii), s - 2)),
                                        outside[rj], outside[ck]]), axis=1)
        active = norm2 > self.r * self.r
        if base.shift > 0:
            active[:] = True
        if np.any(active):
            if known is not None:
                S1, C1, Graw = known
                vals[active] = self.score(sups[active], cross=(S1, C1),
                                          pair_gram=Graw[ii, jj][active])
            else:
                vals[active] = self.score(sups[active])
        keep_mask = vals <= best.cutoff + tol
        best.offer(vals[keep_mask], sups[keep_mask])


@dataclass(frozen=True)
class _PairBlock:
    """One block of pairs: t-ordered rows x a prefix of columns (outside positions),
    their raw Gram entries G, Schur off-diagonals E, determinants and values."""

    rows: np.ndarray
    cols: np.ndarray
    G: np.ndarray
    E: np.ndarray
    det: np.ndarray
    val: np.ndarray


def _block_extent(base, a, need, rows_per_block, block_elements):
    """The rows (t-positions ``ra``) of the block starting at position ``a``, the end
    ``ncol`` of the column prefix they need and the number of positions it covers.

    As many rows as fit in the block's memory: the block spans the columns after its
    first row up to the longest prefix any of its rows needs, and it is at most twice as
    tall as it is wide (its lower triangle is skipped work). Fewer, taller blocks gather
    fewer columns of X, which costs more than the products themselves when X is stored
    by rows. Rows of the range whose own prefix ends at or before their position have
    no pair that can reach the cut-off and are left out of ``ra``. While the cut-off
    is above the base's own value (``need`` <= 0: no pair can be ruled out) the block
    is a sixteenth of the usual size (one row at p = 50,000): its pairs usually bring
    the cut-off down enough for the next block to prune (p = 50,000: a block of 40
    rows by every column, 2 million pairs, was the largest cost of the search)."""
    ts, mus = base.ts, base.mus
    q = len(ts)
    if need <= 0:
        nrows = max(1, min(rows_per_block, block_elements // (16 * q), q - 1 - a))
        return np.arange(a, a + nrows), q, nrows
    look = np.arange(a, min(q, a + max(rows_per_block, block_elements)))
    own = _pair_prefix_ends(ts, ts[look], mus[look], need)
    ends = np.maximum.accumulate(own)
    widths = np.maximum(ends - a - 1, 1)
    fits = (np.arange(1, len(look) + 1) * widths <= block_elements) & (
        np.arange(1, len(look) + 1) <= np.maximum(widths // 2, 1))
    nrows = max(rows_per_block, int(np.argmin(fits)) if not fits.all() else len(look))
    ra = look[:nrows]
    ra = ra[own[:nrows] > ra + 1]
    # (The same prefix as the rows' own ends, taken from the rows themselves so that
    # the block's size only ever decides speed, never which pairs are looked at.)
    ncol = _pair_prefix(ts, ts[ra], mus[ra], need) if len(ra) else a + 1
    return ra, ncol, min(nrows, q - a)


def _gathered_product(X, rows, cols):
    """X[:, rows]' X[:, cols] (in X's precision), the columns gathered in index order
    (memory order; put back in the caller's order on the small result)."""
    perm = np.argsort(cols, kind="stable")
    G = np.empty((len(rows), len(cols)), dtype=X.dtype)
    G[:, perm] = X[:, rows].T @ X[:, cols[perm]]
    return G


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
        self.max_cols = max(1, cap // (X.itemsize * X.shape[0]))
        self.span, self.block = None, None

    def product(self, rows, c0, ncol):
        """X[:, rows]' X[:, cols[c0:ncol]] (not divided by n; in X's precision), or None
        when the range is too wide."""
        if self.span is None or not (self.span[0] <= c0 and ncol <= self.span[1]):
            if ncol - c0 > self.max_cols:
                return None
            idx = self.cols[c0:ncol]
            perm = np.argsort(idx, kind="stable")  # gather in memory order
            block = np.empty((self.X.shape[0], len(idx)), dtype=self.X.dtype)
            block[:, perm] = self.X[:, idx[perm]]
            self.span, self.block = (c0, ncol), block
        a = c0 - self.span[0]
        return self.X[:, rows].T @ self.block[:, a:a + ncol - c0]


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
