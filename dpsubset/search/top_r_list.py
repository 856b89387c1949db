"""The exact top-R list of :class:`dpsubset.search.exact.SubsetSearch`.

Algorithm 1 of Prastakos et al. (2025) needs S_1..S_R to be exactly the R best
supports. The list is built in steps:

1. the pool: the best support S_1, its one-swap neighbourhood N1 and the members of
   the two-mistake class that can be among the R best (an exact rank-two search);
2. a certified analytic bound on every support with more mistakes, which often shows
   that none of them can enter the list;
3. otherwise a completion: a branch and bound over that family (least squares), or
   next-best supports found by outer approximation with no-good cuts, until the R-th
   smallest score in the pool is at most the certified bound on everything outside it
   (docs/methods/selection.md, "Top-R"). The paper's code stops with "check fails"
   where this completion is needed;
4. the R best of the pool, ranked by score with ties broken lexicographically.

The methods live in :class:`TopRListSearch`, a base class of ``SubsetSearch``: they
use its certified best support, neighbourhood, class bounds and solvers. All values
here are non-private and stay inside the call.
"""
from __future__ import annotations

import time
from math import comb

import numpy as np

from .branch_bound import NodeBudgetExceeded
from .candidates import Certificate, TopRCandidates
from .enumeration import rank_supports, top_r_by_enumeration
from .limits import YIELDED, SearchTimeout
from .neighbourhood import count_mistakes
from .outer_approximation import progress
from .protocols import ClassBoundScorer
from ..losses import is_least_squares

__all__ = ["TopRListSearch"]


def _rth_score(pool_S, pool_c, R):
    """The R-th smallest score of the pool (ties ranked lexicographically), inf while
    the pool holds fewer than R supports."""
    S_all, c_all = np.vstack(pool_S), np.concatenate(pool_c)
    order = rank_supports(S_all, c_all)
    return c_all[order[R - 1]] if len(order) >= R else np.inf


class TopRListSearch:
    """The top-R part of :class:`dpsubset.search.exact.SubsetSearch` (a base class of
    it; not used on its own)."""

    def two_mistake_class(self, keep, other_values=None):
        """The ``keep`` best supports with exactly two elements outside S_1, exactly.

        Uses the scorer's rank-two update with certified pruning
        (:meth:`LeastSquaresScorer.two_swap`), so the class of C(s, 2) C(p - s, 2)
        supports is never scored one by one. Returns (supports, scores, bound):
        every member not returned scores >= bound. None when the scorer has no
        two-swap routine or the class is empty.
        """
        S1, c1 = self.best()
        if self.s < 2 or self.p - self.s < 2 or not (isinstance(self.scorer, ClassBoundScorer)
                                                     or self._class2_by_bnb()):
            return None
        if keep == 1 and other_values is None:
            # The best member is also needed by the mistake classes and the best
            # support's certificate: compute it once.
            if self._class2_best is None:
                self._class2_best = self._two_swap(S1, c1, 1)
            return self._class2_best
        cached = self._class2_list
        if (cached is not None and other_values is not None and cached[1] == keep
                and np.array_equal(cached[0], S1) and np.array_equal(cached[2], other_values)):
            return cached[3]
        return self._two_swap(S1, c1, keep, other_values=other_values)

    def _class2_by_bnb(self):
        """Whether the two-mistake class goes through the branch and bound: the convex
        losses on that route (their rank-two pass brackets members loosely and scores
        thousands exactly, 18 s of a 20 s call at p = 100, n = 6400; the Fenchel
        branch and bound scores a few dozen)."""
        return self.search == "branch_and_bound" and not is_least_squares(self.scorer.loss)

    @property
    def _class2_method(self):
        """The certificate's name for the exact two-mistake search."""
        return "branch_and_bound" if self._class2_by_bnb() else "rank-two enumeration"

    def _two_swap(self, S, c, keep, other_values=None):
        """The ``keep`` best supports with exactly two elements outside S (score c), as
        (supports, scores, bound) with every other member scoring >= bound: the scorer's
        rank-two search, or the branch and bound over the class (``other_values``: the
        scores of a pool the list is merged with, as in ``two_swap``)."""
        if not self._class2_by_bnb():
            return self.scorer.two_swap(S, keep, other_values=other_values)
        S = np.sort(np.asarray(S))
        res = self._branch_and_bound("supports with exactly 2 mistakes", keep=keep, center=S,
                                     inside=(self.s - 2, self.s - 2), others=other_values,
                                     seeds=[(S[None, :], np.array([c]))])
        return res.supports, res.scores, float(res.threshold)

    def top_r(self, R: int) -> TopRCandidates:
        """The exact R best supports, in order, with certificates."""
        total = comb(self.p, self.s)
        R = int(min(R, total))
        if self.search == "enumeration":
            return top_r_by_enumeration(self.scorer, self.s, R, deadline=self._deadline_at())
        if self._best is None:
            self._want_R = R
        S1, c1 = self.best()
        if self._enumerated is not None:
            return top_r_by_enumeration(self.scorer, self.s, R, scored=self._enumerated)
        # Step 1: the pool ({S_1} + N1 + the two-mistake class's candidates).
        pool_S, pool_c, certs, min_mistakes = self._top_r_pool(S1, c1, R)
        # Step 2: everything outside the pool has >= min_mistakes mistakes; a cheap
        # certified bound on that family often settles the list.
        family = range(min_mistakes, min(self.s, self.p - self.s) + 1)
        if len(family) and self._family_above_pool(pool_S, pool_c, R, family, certs):
            family = range(0)
        # Step 3: the completion (supports of the family that can enter the list).
        rounds = 0
        if len(family) and self.search == "branch_and_bound":
            try:
                rounds = self._complete_by_branch_and_bound(S1, c1, R, pool_S, pool_c, certs,
                                                            min_mistakes)
            except NodeBudgetExceeded:  # a weak relaxation: score every support
                return top_r_by_enumeration(self.scorer, self.s, R, deadline=self._deadline_at())
        elif len(family) and self.s - min_mistakes >= 0 and self.p - self.s >= min_mistakes:
            oa = self._new_master("top-R completion")
            oa.add_constraint(S1, -np.inf, self.s - min_mistakes)
            try:
                rounds = self._complete_by_outer_approximation(oa, R, pool_S, pool_c, certs,
                                                               min_mistakes)
            except SearchTimeout:
                if not self._lost_race():
                    raise
                scored = self._enumerate_all(f"top-R completion ({YIELDED})")
                return top_r_by_enumeration(self.scorer, self.s, R, scored=scored)
        # Step 4: the R best of the pool.
        S_all, c_all = np.vstack(pool_S), np.concatenate(pool_c)
        order = rank_supports(S_all, c_all)[:R]
        top = S_all[order]
        # How far the list goes past the paper's pool ({S_1} + N1 + one support with
        # two mistakes): the number of extra supports with >= 2 mistakes in it.
        n_far = int(np.sum(count_mistakes(top, S1) >= 2))
        return TopRCandidates(top, c_all[order], self.p, self.s,
                              list(self.certificates) + certs, max(rounds, n_far - 1))

    def _top_r_pool(self, S1, c1, R):
        """Step 1 of :meth:`top_r`: the pool of supports scored exactly, as lists of
        supports and scores, with its certificates and the number of mistakes from
        which on the supports outside the pool start (3 when the two-mistake class is
        searched exactly, else 2)."""
        nb, vals = self.neighbourhood()
        pool_S = [S1[None, :], nb]
        pool_c = [np.array([c1]), vals]
        certs = []
        t0 = time.perf_counter()
        class2 = self.two_mistake_class(R, other_values=np.concatenate([[c1], vals]))
        if class2 is None:
            return pool_S, pool_c, certs, 2
        # The two-mistake class is searched exactly (all members that can be among
        # the R best), so the family left to bound by outer approximation is the
        # one with at least three mistakes.
        sup2, val2, _ = class2
        pool_S.append(sup2)
        pool_c.append(val2)
        best2 = float(val2[0]) if len(val2) else np.inf
        certs.append(Certificate("supports with exactly 2 mistakes", self._class2_method,
                                 best2, best2, 1, time.perf_counter() - t0))
        return pool_S, pool_c, certs, 3

    def _family_above_pool(self, pool_S, pool_c, R, family, certs):
        """Step 2 of :meth:`top_r`: whether the class bounds prove every support of
        ``family`` (mistake counts) above the pool's R-th score (then a certificate
        is appended to ``certs``)."""
        if not isinstance(self.scorer, ClassBoundScorer):
            return False
        t0 = time.perf_counter()
        v = _rth_score(pool_S, pool_c, R)
        need = v + 1e-12 * max(1.0, abs(v))
        lb = min(self.class_bounds(family, target=need).values())
        if lb <= need:
            return False
        certs.append(Certificate(f"supports with >= {family[0]} mistakes score above "
                                 "the R-th (bound >= target proved)", "analytic bound",
                                 float(lb), float(lb), 1, time.perf_counter() - t0))
        return True

    def _complete_by_branch_and_bound(self, S1, c1, R, pool_S, pool_c, certs, min_mistakes):
        """Step 3 of :meth:`top_r` by one branch and bound over the family: it keeps its
        R best members scoring at most the pool's R-th score, so the list is exact by
        construction. Extends the pool and ``certs``; returns the members added.
        Raises NodeBudgetExceeded where enumeration is the cheaper route."""
        v = _rth_score(pool_S, pool_c, R)
        res = self._branch_and_bound(
            f"supports with >= {min_mistakes} mistakes among the R best", keep=R,
            center=S1, inside=(0, self.s - min_mistakes), cutoff=v,
            seeds=[(S1[None, :], np.array([c1]))], max_nodes=self._node_budget())
        certs.append(res.certificate)
        pool_S.append(res.supports)
        pool_c.append(res.scores)
        return len(res.scores)

    def _complete_by_outer_approximation(self, oa, R, pool_S, pool_c, certs, min_mistakes):
        """Step 3 of :meth:`top_r` by outer approximation: next-best supports of the
        family (no-good cuts in the master ``oa``, restricted to the family) join the
        pool until none scores below its R-th score. Extends the pool and ``certs``;
        returns the rounds (supports added)."""
        bar = progress(self.verbose, desc="top-R completion", unit="round")
        rounds = 0
        try:
            while True:
                v = _rth_score(pool_S, pool_c, R)
                bar.update()
                if self.verbose or bar.due():
                    bar.set_postfix(added=rounds, pool=sum(len(c) for c in pool_c))
                # Everything outside the pool has >= min_mistakes mistakes; the R best
                # of the pool are the R best overall once that family is bounded by v.
                problem = f"support with >= {min_mistakes} mistakes below the R-th score"
                if np.isfinite(v):
                    # Only supports scoring below v can enter the list: feasibility
                    # rounds find them (or prove there are none) without proving
                    # the family's optimum each round.
                    # (A hair above v, so that ties at the R-th score are resolved by
                    # the lexicographic rule, not by which tie the search met first.)
                    U, u, cert = oa.find_below(v + 1e-12 * max(1.0, abs(v)), problem)
                else:
                    try:
                        U, u, cert = oa.solve(f"best support with >= {min_mistakes} mistakes")
                    except ValueError:  # the family is empty
                        break
                certs.append(cert)
                if U is None:
                    break
                pool_S.append(U[None, :])
                pool_c.append(np.array([u]))
                rounds += 1
                oa.exclude(U)
        finally:
            bar.close()
        return rounds
