"""The mistake classes of :class:`dpsubset.search.exact.SubsetSearch` (section 5 of
Prastakos et al. 2025).

The mistakes mechanism needs the best support in every class P_k of supports with k
elements outside the best support S_1, and the exact second-best score for its gap
check. Class 1 is the scored one-swap neighbourhood and class 2 the exact rank-two
search; every class k >= 3 is bracketed by [analytic class bound, warm-start score]
and left open with a *refiner* (a callable that decides a target or solves the
class exactly) unless the bracket closes. The gap check then decides every open
class against the running second best; the lazy draw
(:class:`dpsubset.search.candidates.MistakeCandidates`) asks the refiners of the
classes that could win it.

A refiner is, by route: the perspective branch and bound restricted to the class
(search="branch_and_bound"), the ridge-bound branch and bound over the added columns
of :mod:`dpsubset.search.class_search` (least squares), one best-subset subproblem per
base (scorers that restrict themselves, :class:`~dpsubset.search.protocols.RestrictableScorer`),
else outer approximation. Why each route is where it is, with the timings:
docs/benchmarks/search-constants.md.

The methods live in :class:`MistakeClassSearch`, a base class of ``SubsetSearch``.
All values here are non-private and stay inside the call.
"""
from __future__ import annotations

import time
from itertools import combinations
from math import comb

import numpy as np

from .branch_bound import NodeBudgetExceeded
from .candidates import GAP_TOL, Certificate, MistakeCandidates
from .class_search import class_minimum, supports_class_search
from .enumeration import mistakes_by_enumeration, rank_supports
from .heuristics import local_search
from .limits import YIELDED, SearchTimeout
from .neighbourhood import swap_pairs
from .outer_approximation import progress
from .protocols import RestrictableScorer

__all__ = ["MistakeClassSearch", "CLASS_NODE_BUDGET"]

# Nodes after which a class search by perspective bounds hands over to the ridge-bound
# search of class_search.py: on classes with no column of S_1 at a small radius the
# perspective search needs thousands of nodes where the ridge-bound search is quick,
# while the classes it does well close in a few hundred at most. The timings:
# docs/benchmarks/search-constants.md.
CLASS_NODE_BUDGET = 300


class MistakeClassSearch:
    """The mistake-class part of :class:`dpsubset.search.exact.SubsetSearch` (a base
    class of it; not used on its own)."""

    def mistake_classes(self) -> MistakeCandidates:
        """Best support in each class P_k of supports with k elements outside S_1."""
        if self.search == "enumeration":
            return mistakes_by_enumeration(self.scorer, self.s, deadline=self._deadline_at())
        S1, c1 = self.best()
        if self._enumerated is not None:
            return mistakes_by_enumeration(self.scorer, self.s, scored=self._enumerated)
        try:
            mc = self._search_mistake_classes(S1, c1)
        except SearchTimeout:
            if not self._lost_race():
                raise
            return mistakes_by_enumeration(
                self.scorer, self.s, scored=self._enumerate_all(f"mistake classes ({YIELDED})"))
        self._end_race()
        return mc

    def _search_mistake_classes(self, S1, c1):
        """:meth:`mistake_classes` by the certified searches (not enumeration)."""
        nb, vals = self.neighbourhood()
        j = int(rank_supports(nb, vals)[0])
        supports, scores = [S1, nb[j]], [c1, float(vals[j])]
        certs = [Certificate("best support with 1 mistake", "neighbourhood",
                             float(vals[j]), float(vals[j]), 1, 0.0)]
        K = min(self.s, self.p - self.s)
        t0 = time.perf_counter()
        class2 = self.two_mistake_class(1)
        lower = [c1, float(vals[j])]
        refiners = {}
        for k in range(2, K + 1):
            if k == 2 and class2 is not None:
                supports.append(class2[0][0])
                scores.append(float(class2[1][0]))
                lower.append(scores[-1])
                certs.append(Certificate("best support with exactly 2 mistakes",
                                         self._class2_method, scores[-1], scores[-1], 1,
                                         time.perf_counter() - t0))
                continue
            # Warm start inside the class: swap the k weakest members of S_1 for the
            # k best single additions, then a class-preserving local search.
            start = self._class_start(S1, k)
            if self._class2_by_bnb():
                # The convex losses on the branch and bound: a round of the local search
                # fits the whole neighbourhood (about (p - s) s Newton solves, 1.6 s at
                # p = 100, n = 6400), more than the refiner's search costs; the start's
                # own score is the upper end.
                Sk, vk = start, float(self.scorer.score(start[None, :])[0])
            else:
                # A few rounds: this is only the upper end of the class's bracket.
                Sk, vk, _ = local_search(self.scorer, start, center=S1, mistakes=k,
                                         max_rounds=3)
            problem = f"best support with exactly {k} mistakes"
            # The class minimum is bracketed by [analytic bound, warm-start score]; the
            # sampler tightens the bracket (outer approximation) only if the class
            # could win the draw.
            lk = self.class_bounds([k]).get(k, -np.inf)
            if vk - lk <= GAP_TOL * max(1.0, abs(vk)):
                certs.append(Certificate(problem, "analytic bound", float(lk), float(vk)))
            else:
                refine = self._class_refiner(S1, k, Sk, problem)
                # Outer-approximation rounds may tighten the bracket before the draw
                # (self.bracket_rounds, none by default: docs/benchmarks/search-constants.md).
                Sk, vk, cert, exact = refine(max_iter=self.bracket_rounds) if self.bracket_rounds \
                    else (Sk, vk, None, False)
                if cert is not None:
                    lk = max(lk, cert.lower)
                if exact:
                    certs.append(cert)
                else:
                    refiners[k] = refine
            supports.append(Sk)
            scores.append(vk)
            lower.append(min(lk, vk))
        # The gap check needs the exact second-best score over all supports: prove that
        # no open class goes below the best of classes 1 and 2, or close it.
        # Decide every open class against the running second best: a class either is
        # proved above it or yields a member below it (which becomes the new second
        # best, and the other classes are decided against that).
        best12 = min(scores[1:3])
        unsettled = set(refiners)
        while unsettled:
            k = min(unsettled)
            unsettled.discard(k)
            if k not in refiners or lower[k] >= best12:
                continue
            U, u, cert, exact = refiners[k](best12)
            if U is None:  # proved: the class minimum is >= best12
                lower[k] = max(lower[k], cert.lower)
                certs.append(cert)
                continue
            if exact:  # the class was solved: its bracket closes
                supports[k], scores[k], lower[k] = U, u, u
                certs.append(cert)
                del refiners[k]
            elif u < scores[k]:
                supports[k], scores[k] = U, u
                unsettled.add(k)  # its own minimum may lie lower still
            if u < best12:
                best12 = u
                unsettled |= {j for j in refiners if j != k and lower[j] < best12}
        second = min(scores[1:]) if len(scores) > 1 else np.inf
        mc = MistakeCandidates(S1, np.vstack(supports), np.array(scores), self.p, self.s,
                               float(second), list(self.certificates) + certs,
                               lower=np.array(lower), refiners=refiners)
        return mc

    def _class_by_subproblems(self, S1, k, problem):
        """The exact minimum of class k as C(s, s - k) ordinary best-subset problems.

        A member of class k keeps a base B of s - k elements of S_1 and adds k outside
        columns. For a fixed B that is best subset selection of size k over the
        outside columns with B always in, and its score is the same ridge-and-ball
        score (the always-in columns are penalised and constrained alike). Each
        subproblem is solved by the same certified search (a local optimum certified
        by class bounds, or outer approximation), so the class minimum is exact.
        Returns (support, score, Certificate) or None for scorers without the hook.
        """
        sc = self.scorer
        if not isinstance(sc, RestrictableScorer):
            return None
        t0 = time.perf_counter()
        outside = np.setdiff1d(np.arange(self.p), S1)
        best_S, best_v, closed, iters = None, np.inf, True, 0
        # The subproblems use the same kind of master (outer approximation, or the
        # Pyomo formulation when search="pyomo").
        sub_kw = (dict(search=self.search, solver=None if self.search == "scip" else self.solver,
                       solver_options=self.solver_options) if self.miqcp else {})
        bar = progress(self.verbose, total=comb(self.s, self.s - k), unit="base",
                       desc=f"mistake class {k}: subproblems")
        for B in combinations(S1, self.s - k):
            B = np.asarray(B, dtype=np.intp)
            sub = type(self)(sc.restricted(outside, B), k, time_limit=self.time_limit,
                               memory_limit=self.memory, **sub_kw)
            J, v = sub.best()
            closed &= all(c.closed for c in sub.certificates)
            iters += sum(c.iterations for c in sub.certificates)
            if v < best_v:
                best_v, best_S = v, np.sort(np.concatenate([B, outside[J]]))
            bar.update()
        bar.close()
        return best_S, float(best_v), Certificate(
            problem, "subproblem searches (one per base)", float(best_v) if closed else -np.inf,
            float(best_v), iters, time.perf_counter() - t0)

    def _class_refiner(self, S1, k, start, problem):
        """A callable that tightens the bracket of class k.

        For the least-squares score (and candidate sets small enough for its q x q
        Schur complement) a branch and bound over the added columns
        (:mod:`dpsubset.search.class_search`) decides a target or solves the class
        exactly in one go; otherwise ordinary best-subset subproblems, else outer
        approximation."""
        state = {}
        ridge_bnb = not self.miqcp and supports_class_search(self.scorer, self.s)
        if self.search == "branch_and_bound":
            # Deciding a target: the perspective bounds, which decide it faster than
            # the ridge-bound search over the bases. Solving a class exactly: the
            # ridge-bound search where the ball does not bind at S_1 (its rank-one
            # nodes are cheaper), the perspective bounds where it does (the ridge
            # values are loose there). The timings behind this choice, and the command
            # that remeasures them: docs/benchmarks/search-constants.md.
            exact = None if ridge_bnb and not self._ball_binds(S1) else "perspective"
            return self._class_refiner_bnb(S1, k, start, problem, exact=exact,
                                           fallback=ridge_bnb)
        if ridge_bnb:
            known = (np.asarray(start), float(self.scorer.score(np.asarray(start)[None, :])[0]))

            calls = []

            def refine_bnb(target=None, max_iter=None):
                """target None: the exact class minimum. Otherwise the exact minimum if it
                is below the target, or a proof that it is not: (None, None, cert, False).
                From the second call on the class is solved exactly (and so closed): a
                class asked about once is likely to be asked again by later draws, and
                an exact solve costs little more than a decision."""
                t0 = time.perf_counter()
                deadline = None if self.time_limit is None else t0 + self.time_limit
                calls.append(target)
                cut = np.inf if target is None or len(calls) > 1 else float(target)
                S, v, nodes = class_minimum(self.scorer, S1, k, cut, incumbent=known,
                                            deadline=deadline, verbose=self.verbose,
                                            memory=self.memory)
                secs = time.perf_counter() - t0
                if S is None:  # every member scores >= the cut-off
                    return None, None, Certificate(
                        problem + " (>= target proved)", "branch and bound",
                        cut, cut, nodes, secs), False
                return S, v, Certificate(problem, "branch and bound", v, v, nodes, secs), True
            return refine_bnb

        def refine(target=None, max_iter=10_000):
            """target None: solve exactly (or bracket, with max_iter). Otherwise decide
            the target: (None, None, cert, False) if the class minimum is proved
            >= target, (S, c(S), cert, False) for a member S with c(S) < target."""
            if "exact" not in state:
                state["exact"] = self._class_by_subproblems(S1, k, problem)
            if state["exact"] is not None:
                S, v, cert = state["exact"]
                return S, v, cert, cert.closed
            if "oa" not in state:
                oa = self._new_master(f"mistake class {k}")
                oa.add_constraint(S1, self.s - k, self.s - k)
                oa.add_cut(start)
                state["oa"] = oa
            oa = state["oa"]
            if target is None:
                S, v, cert = oa.solve(problem, max_iter=max_iter)
                return S, v, cert, cert.closed
            if oa.best_value < target:  # a member below the target is already known
                return (oa.best_support.copy(), oa.best_value,
                        Certificate(problem + " (member below target known)", "incumbent",
                                    -np.inf, oa.best_value), False)
            # Optimality rounds that stop once the bound reaches the target: cuts at the
            # master's optima close flat classes in fewer rounds than feasibility
            # rounds (docs/benchmarks/search-constants.md).
            S, v, cert = oa.solve(problem, target=target)
            return S, v, cert, S is not None and cert.closed
        return refine

    def _ball_binds(self, S):
        """Whether the ball constraint is active at the fit on S (then the ridge
        values that class_search.py bounds with are loose and the perspective bounds
        of the branch and bound are the tighter ones)."""
        _, beta = self.scorer.fit(np.asarray(S)[None, :])
        return float(beta[0] @ beta[0]) >= self.scorer.r ** 2 * (1.0 - 1e-9)

    def _class_refiner_bnb(self, S1, k, start, problem, exact="perspective", fallback=False):
        """The refiner of class k by the perspective branch and bound restricted to the
        class (exactly s - k columns of S_1); same contract as refine_bnb in
        :meth:`_class_refiner`. With exact=None the exact solves (no target, or a
        class asked about again) go to the ridge-bound search of class_search.py;
        with fallback=True a perspective search that passes CLASS_NODE_BUDGET nodes
        hands over to it too."""
        known = (np.asarray(start)[None, :], self.scorer.score(np.asarray(start)[None, :]))
        calls = []

        def ridge_search(cut):
            t0 = time.perf_counter()
            S, v, nodes = class_minimum(self.scorer, S1, k, cut,
                                        incumbent=(known[0][0], float(known[1][0])),
                                        deadline=self._deadline_at(), verbose=self.verbose,
                                        memory=self.memory)
            secs = time.perf_counter() - t0
            if S is None:  # every member scores >= the cut-off
                return None, None, Certificate(problem + " (>= target proved)",
                                               "branch and bound", cut, cut, nodes, secs), False
            return S, v, Certificate(problem, "branch and bound", v, v, nodes, secs), True

        def refine(target=None, max_iter=None):
            calls.append(target)
            cut = np.inf if target is None or len(calls) > 1 else float(target)
            if not np.isfinite(cut) and exact is None:
                return ridge_search(cut)
            try:
                res = self._branch_and_bound(
                    problem, keep=1, center=S1, inside=(self.s - k, self.s - k), cutoff=cut,
                    seeds=[known], max_nodes=CLASS_NODE_BUDGET if fallback else None)
            except NodeBudgetExceeded:
                return ridge_search(cut)
            c = res.certificate
            if not len(res.scores):  # every member scores above the cut-off
                return None, None, c, False
            return res.supports[0], float(res.scores[0]), c, True
        return refine

    def _class_start(self, S1, k):
        """Warm start in class k: drop the k members whose removal costs least and add
        the k outsiders whose addition helps most, both read off the neighbourhood
        (each neighbour differs from S_1 by one member gone and one outsider in)."""
        nb, vals = self.neighbourhood()
        gone, new = swap_pairs(S1, nb)
        add_cost = np.full(self.p, np.inf)
        np.minimum.at(add_cost, new, vals)
        drop_cost = np.full(self.p, np.inf)
        np.minimum.at(drop_cost, gone, vals)
        drop = S1[np.argsort(drop_cost[S1], kind="stable")[:k]]
        outside = np.setdiff1d(np.arange(self.p), S1)
        add = outside[np.argsort(add_cost[outside], kind="stable")[:k]]
        return np.sort(np.concatenate([np.setdiff1d(S1, drop), add]))
