"""Exact candidate sets for the selection mechanisms, with optimality certificates.

`SubsetSearch` finds, for one dataset:

- the best support S_1 (certified by enumeration when C(p, s) is small; else a
  local optimum certified by class bounds, or, where those do not close, the
  branch and bound with perspective-relaxation bounds of
  :mod:`dpsubset.search.branch_bound` for least squares and outer approximation
  for the other losses; see docs/methods/branch-and-bound.md);
- its one-swap neighbourhood N1, scored exactly and in batch;
- the exact top-R list (Algorithm 1 of Prastakos et al. 2025 needs S_1..S_R to be exactly the R best):
  the pool {S_1} + N1 + {best support with >= 2 mistakes} is extended with next-best
  supports (no-good cuts) until the R-th smallest score in the pool is at most the
  certified bound on everything outside it (docs/methods/selection.md, "Top-R"). The paper's
  code stops with "check fails" where this completion is needed;
- the best support in every mistake class P_k around S_1 (section 5).

All values here are non-private and stay inside the call.
"""
from __future__ import annotations

import time
from itertools import combinations
from math import comb

import numpy as np

from .candidates import GAP_TOL, Certificate, MistakeCandidates, TopRCandidates
from .branch_bound import NodeBudgetExceeded, branch_and_bound, supports_branch_and_bound
from .class_search import class_minimum, supports_class_search
from .enumeration import (ENUMERATION_LIMIT, mistakes_by_enumeration, rank_supports,
                          score_all, top_r_by_enumeration)
from .heuristics import iht_support, local_search
from .limits import Deadline, MemoryBudget, SearchTimeout, resolve_memory_limit
from .outer_approximation import OuterApproximation, progress

__all__ = ["SubsetSearch", "check_search", "default_R"]

# Enumerate when there are at most this many supports (it is then the faster exact route).
ENUMERATE_BELOW = 50_000
# A branch-and-bound node (bound and dual ascent) costs about as much as scoring this
# many supports (measured at p = 40-100, s = 5-8): where C(p, s) <= ENUMERATION_LIMIT the
# search gives up for enumeration after C(p, s) / NODE_COST nodes (pure noise with a
# small ridge, where the relaxation is weak: 17,800 nodes against C(40, 5) = 658,008).
NODE_COST = 500
# The same hand-over for the outer approximation (the route of the convex losses): its
# master problems stall where the scores are flat (a small ridge, weak signal; measured
# at p = 30, s = 5, n = 400, logistic, lam = 1: no certificate after 10 minutes, against
# 10.5 s to score all 142,506 supports). Where C(p, s) <= ENUMERATION_LIMIT, all the
# outer-approximation solves of one search together get as many seconds as scoring
# every support is expected to take (from the cost per support measured in the local
# search, times this factor, at least MIN_RACE_SECONDS); then the search scores every
# support instead, so a call costs at most about twice the enumeration.
RACE_FACTOR = 1.0
MIN_RACE_SECONDS = 1.0
YIELDED = "outer approximation yielded to enumeration"  # in the certificate's problem
# Nodes after which a class search by perspective bounds hands over to the ridge-bound
# search of class_search.py (measured at p = 100, r = 0.2, lam = 1, rho = 0.1: the class
# with no column of S_1 took 11,600 perspective nodes, 93 s, against 5 s for the
# ridge-bound search; classes 3 and 4 took 30 and 91 nodes against 37 and 112 s).
CLASS_NODE_BUDGET = 300
#: The values of ``search=``.
SEARCHES = ("auto", "enumeration", "branch_and_bound", "outer_approximation", "pyomo", "scip")
#: The searches that solve formulation (9) with a MIQCP solver (search/pyomo_search.py).
MIQCP_SEARCHES = ("pyomo", "scip")


def check_search(search, solver, solver_options, loss):
    """Check ``search=`` and its solver (no data needed); returns (solver, solver_options)
    with the Pyomo solver resolved when search="pyomo" or "scip", else (None, None)."""
    if search not in SEARCHES:
        raise ValueError(f"search must be one of {SEARCHES}, got {search!r}")
    if search == "branch_and_bound" and loss is not None and loss != "squared":
        raise ValueError(f"search='branch_and_bound' is for loss='squared' (got loss={loss!r}); "
                         "use search='auto' for the other losses")
    if search not in MIQCP_SEARCHES:
        if solver is not None or solver_options is not None:
            raise ValueError("solver= and solver_options= are only used with search='pyomo' "
                             f"or 'scip' (got search={search!r})")
        return None, None
    if loss != "squared":
        raise ValueError(f"search={search!r} is for loss='squared' (got loss={loss!r}); "
                         "use search='auto' for the other losses")
    if search == "scip":
        from .pyomo_search import SCIP_SOLVER, check_scip
        if solver not in (None, SCIP_SOLVER):  # (SCIP_SOLVER: checked here already)
            raise ValueError(f"search='scip' uses SCIP through pyscipopt; solver={solver!r} is "
                             "for search='pyomo' (solver_options= sets SCIP parameters)")
        return check_scip(solver_options)
    from .pyomo_search import check_solver
    return check_solver(solver, solver_options)


def default_R(p: int, s: int) -> int:
    """The paper's default R = 2 + (p - s) s (the best support, its one-swap
    neighbours, and the best support with two mistakes)."""
    return 2 + (p - s) * s


class SubsetSearch:
    """Exact searches over size-s supports for one dataset.

    Parameters
    ----------
    scorer : LeastSquaresScorer
    s : int
    search : {"auto", "enumeration", "branch_and_bound", "outer_approximation", "pyomo", "scip"}
        "auto" enumerates when C(p, s) <= ENUMERATE_BELOW and otherwise uses the
        branch and bound (least squares) or outer approximation (other losses)
        where the cheap certificates do not close. "pyomo" solves the
        mixed-integer problems as formulation (9) with an external MIQCP solver
        (``solver``) instead of the HiGHS outer approximation (least-squares
        scores only); "scip" is the same with SCIP through pyscipopt.
    time_limit : float or None
        Seconds for all the exact solves of this object together, counted from its
        creation (one deadline; ``self.time_limit`` reads the time left). A solve
        that reaches the deadline raises SearchTimeout and nothing is released.
    verbose : bool
        Progress bars (stderr) inside the long loops of the search.
    memory_limit : None, float, math.inf or MemoryBudget
        Bytes that the search's growing structures (the branch and bound's open nodes
        and column cache, the outer approximation's cuts, the class search's queues)
        may hold together, estimated from their sizes: None (the default) is
        ``limits.DEFAULT_MEMORY_SHARE`` of the machine's memory, math.inf no limit
        (as in :func:`dpsubset.dp_best_subset`, unlike ``time_limit``). Past it the
        search raises SearchMemoryLimit (a SearchTimeout) and nothing is released. A
        MemoryBudget is shared (the sub-searches of one search).
    solver, solver_options : str or None, dict or None
        Pyomo solver name and options for search="pyomo" (see
        :func:`dpsubset.search.pyomo_search.check_solver`).
    """

    def __init__(self, scorer, s, *, search="auto", time_limit=None, n_seed_cuts=None,
                 verbose=False, solver=None, solver_options=None, memory_limit=None):
        solver, solver_options = check_search(search, solver, solver_options,
                                              getattr(scorer, "loss", None))
        memory = resolve_memory_limit(memory_limit)
        #: The memory budget of every growing structure of this search.
        self.memory = memory if isinstance(memory, MemoryBudget) else MemoryBudget(memory)
        self.scorer, self.s, self.p = scorer, int(s), scorer.p
        self.verbose = bool(verbose)
        self.solver, self.solver_options = solver, solver_options
        total = comb(self.p, self.s)
        # The outer approximation hands over to enumeration only on the automatic
        # route: a user who asked for search="outer_approximation" gets it.
        self._race = search == "auto" and total <= ENUMERATION_LIMIT
        if search == "auto":
            if total <= ENUMERATE_BELOW:
                search = "enumeration"
            elif supports_branch_and_bound(scorer):
                search = "branch_and_bound"
            else:
                search = "outer_approximation"
        if search == "branch_and_bound" and not supports_branch_and_bound(scorer):
            raise ValueError("search='branch_and_bound' is for loss='squared'; use "
                             "search='auto' or 'outer_approximation' for the other losses")
        if search == "enumeration" and total > ENUMERATION_LIMIT:
            raise ValueError(f"C({self.p}, {self.s}) = {total} is too many supports to enumerate")
        self.search = search
        self.miqcp = search in MIQCP_SEARCHES
        self.time_limit = time_limit  # starts the deadline (see the property)
        self.n_seed_cuts = n_seed_cuts
        #: Outer-approximation rounds spent bracketing a mistake class before the draw.
        self.bracket_rounds = 0  # measured: the lazy draw's targeted refinement is cheaper
        self._best = None
        self._class2_best = None  # (supports, scores, bound) of the best two-mistake member
        # The R of a top-R list asked for (set before the best support is certified, so
        # that the certificate's two-mistake pass also yields the list's class-2 part).
        self._want_R = None
        self._class2_list = None  # (center, R, other values, two_swap's result)
        self._nbhd = None
        self._mom = None  # second moments for the branch and bound (built on first use)
        self._enumerated = None  # every support and score, when the search fell back
        self._seconds_per_support = None  # measured in the local search (for the race)
        self._race_deadline = None  # perf_counter time at which enumeration takes over
        self._raced_masters = []  # (master, its own deadline) while the race is on
        self.certificates = []

    @property
    def time_limit(self):
        """Seconds left before the search's deadline (None: no limit). Every solve is
        given this, so all of them together stop at the one deadline."""
        return self._deadline.left()

    @time_limit.setter
    def time_limit(self, seconds):
        self._deadline = Deadline(seconds)

    # ------------------------------------------------------------ building blocks
    def _deadline_at(self):
        """The search's deadline as a time.perf_counter() value (None: no limit)."""
        left = self.time_limit
        return None if left is None else time.perf_counter() + left

    def _moments(self):
        """Second moments for the branch and bound (built once per search)."""
        if self._mom is None:
            from .perspective import Moments
            self._mom = Moments.from_scorer(self.scorer, memory=self.memory)
        return self._mom

    def _node_budget(self):
        """Nodes after which enumeration is cheaper (None: enumeration is refused)."""
        total = comb(self.p, self.s)
        return None if total > ENUMERATION_LIMIT else max(100, total // NODE_COST)

    def _branch_and_bound(self, problem, **kw):
        """:func:`branch_and_bound` with this search's deadline, progress and moments."""
        return branch_and_bound(self.scorer, self.s, deadline=self._deadline_at(),
                                verbose=self.verbose, problem=problem,
                                moments=self._moments(), memory=self.memory, **kw)

    def _master(self, name, scorer=None):
        """The mixed-integer master of one family: HiGHS outer approximation, or
        formulation (9) through Pyomo when search="pyomo"."""
        scorer = self.scorer if scorer is None else scorer
        if self.miqcp:
            from .pyomo_search import PyomoSearch
            return PyomoSearch(scorer, self.s, solver=self.solver,
                               solver_options=self.solver_options, time_limit=self.time_limit,
                               name=name, verbose=self.verbose)
        oa = OuterApproximation(scorer, self.s, time_limit=self.time_limit, name=name,
                                verbose=self.verbose, memory=self.memory)
        race = self._race_deadline_at() if scorer is self.scorer else None
        if race is not None and (oa.deadline is None or race < oa.deadline):
            self._raced_masters.append((oa, oa.deadline))
            oa.deadline = race
        return oa

    # ------------------------------------------------------------ enumeration race
    def _race_deadline_at(self):
        """When the outer approximation of this search yields to enumeration (a
        perf_counter time), or None where it never does. Set at the first solve: one
        budget for all of the search's solves together."""
        if not self._race or self.miqcp or self.search != "outer_approximation":
            return None
        if self._race_deadline is None:
            per = self._seconds_per_support
            if per is None:
                return None
            budget = max(MIN_RACE_SECONDS, RACE_FACTOR * per * comb(self.p, self.s))
            self._race_deadline = time.perf_counter() + budget
        return self._race_deadline

    def _lost_race(self):
        """True when a SearchTimeout came from the enumeration race, not from the
        user's time limit (whose deadline has not passed)."""
        race = self._race_deadline
        if race is None or time.perf_counter() < race:
            return False
        left = self.time_limit
        return left is None or left > 0

    def _end_race(self):
        """Give the masters still held (the lazy refiners of mistake classes, used
        during the draw) back their own deadline: once candidates are returned, a
        refinement must not stop at the race's."""
        self._race = False
        for oa, own in self._raced_masters:
            oa.deadline = own
        self._raced_masters = []

    def _enumerate_all(self, problem):
        """Score every support (a weak relaxation, or a lost race); sets the best support
        and keeps every score for top-R and the mistake classes. ``problem`` names the
        certificate."""
        if self._enumerated is None:
            t0 = time.perf_counter()
            S_all, c_all = score_all(self.scorer, self.s, deadline=self._deadline_at(),
                                     problem=problem)
            j = int(rank_supports(S_all, c_all)[0])
            self._enumerated = (S_all, c_all)
            self._best = (S_all[j], float(c_all[j]))
            self.certificates.append(Certificate(problem, "enumeration", float(c_all[j]),
                                                 float(c_all[j]), 1, time.perf_counter() - t0))
        return self._enumerated

    def _new_master(self, name):
        oa = self._master(name)
        # Seed with cuts at the best support and its best neighbours: these are the
        # supports whose cuts are tight near the optimum.
        S1, c1 = self.best()
        nb, vals = self.neighbourhood()
        oa.add_cut(S1)
        k = self.n_seed_cuts if self.n_seed_cuts is not None else min(len(vals), 2 * self.s)
        for j in np.argsort(vals)[:k]:
            oa.add_cut(nb[j])
        return oa

    def best(self):
        """The certified best support S_1 and its score."""
        if self._best is None:
            t0 = time.perf_counter()
            sc = self.scorer
            n0 = getattr(sc, "n_scored", None)
            start = iht_support(sc, self.s)
            S, v, nbhd = local_search(sc, start)
            if n0 is not None and sc.n_scored > n0:
                self._seconds_per_support = (time.perf_counter() - t0) / (sc.n_scored - n0)
            cert = self._certify_local_optimum(S, v, nbhd)
            if cert is not None:
                self._nbhd = (S, *nbhd)
                self.certificates.append(Certificate(cert.problem, cert.method, cert.lower,
                                                     cert.upper, 1, time.perf_counter() - t0))
                self._best = (S, v)
                return self._best
            if self.search == "branch_and_bound":
                seeds = [(S[None, :], np.array([v]))] + ([nbhd] if nbhd is not None else [])
                try:
                    res = self._branch_and_bound("best support", keep=1, seeds=seeds,
                                                 max_nodes=self._node_budget())
                except NodeBudgetExceeded:  # a weak relaxation: score every support
                    self._enumerate_all("best support")
                    return self._best
                if nbhd is not None:
                    self._nbhd = (S, *nbhd)
                c = res.certificate
                self.certificates.append(Certificate(c.problem, c.method, c.lower, c.upper,
                                                     c.iterations, time.perf_counter() - t0))
                self._best = (res.supports[0], float(res.scores[0]))
                return self._best
            oa = self._master("best support", sc)
            oa.add_cut(S, *sc.cut(S))
            if nbhd is not None:
                self._nbhd = (S, *nbhd)
                order = np.argsort(nbhd[1])[: (self.n_seed_cuts or 2 * self.s)]
                for j in order:
                    oa.add_cut(nbhd[0][j])
            try:
                S1, c1, cert = oa.solve("best support")
            except SearchTimeout:
                if not self._lost_race():
                    raise
                self._enumerate_all(f"best support ({YIELDED})")
                return self._best
            cert = Certificate(cert.problem, cert.method, cert.lower, cert.upper,
                               cert.iterations, time.perf_counter() - t0)
            self.certificates.append(cert)
            self._best = (S1, c1)
        return self._best

    def _certify_local_optimum(self, S, v, nbhd):
        """Prove a one-swap local optimum globally optimal without a mixed-integer solve.

        Every other support lies in a mistake class around S: class 1 is the scored
        neighbourhood, class 2 is searched exactly (rank-two updates), classes >= 3
        are bounded analytically. If every class is above c(S), S is the best support.
        Returns a Certificate, or None when the bounds do not settle it.
        """
        sc = self.scorer
        if nbhd is None or not hasattr(sc, "class_lower_bounds") or not hasattr(sc, "two_swap"):
            return None
        if np.min(nbhd[1]) <= v:
            return None
        K = min(self.s, self.p - self.s)
        lb = {}
        if K >= 3:
            # (refined only as far as it takes to clear c(S): the question here)
            lb = sc.class_lower_bounds(S, range(3, K + 1), target=v)
            if min(lb.values()) <= v:
                return None
        if K >= 2:
            if self._want_R is not None:
                # One pass for both the certificate (the class minimum) and the top-R
                # list's two-mistake members (measured at p = 50,000, n = 1000: the
                # best-member pass took 5 of the search's 21 s).
                others = np.concatenate([[v], nbhd[1]])
                listed = sc.two_swap(S, self._want_R, other_values=others)
                self._class2_list = (S.copy(), self._want_R, others, listed)
                sup2, val2, bound2 = listed
                # The list's first member is the class minimum; the rest of the class
                # scores >= its second member, or >= the list's bound.
                class2 = (sup2[:1], val2[:1], float(val2[1]) if len(val2) > 1 else bound2) \
                    if len(val2) else None
            else:
                class2 = sc.two_swap(S, 1)
                _, val2, bound2 = class2
            if (len(val2) and val2[0] <= v) or (not len(val2) and bound2 <= v):
                return None
            self._class2_best = class2  # (None: computed when the mistake classes need it)
        # S is S_1 from here on: keep its class bounds for the later searches (with the
        # target they were refined for: a later question with a higher one refines more).
        self.__dict__["_class_lb"] = {k: (b, v) for k, b in lb.items()}
        return Certificate("best support", "local optimum + exact class 2 + class bounds",
                           float(v), float(v))

    def neighbourhood(self):
        """One-swap neighbours of S_1 and their exact scores."""
        S1, _ = self.best()
        if self._nbhd is None or not np.array_equal(self._nbhd[0], S1):
            nb, vals = self.scorer.neighbourhood(S1)
            self._nbhd = (S1, nb, vals)
        return self._nbhd[1], self._nbhd[2]

    # ------------------------------------------------------------ top-R
    def two_mistake_class(self, keep, other_values=None):
        """The ``keep`` best supports with exactly two elements outside S_1, exactly.

        Uses the scorer's rank-two update with certified pruning
        (:meth:`LeastSquaresScorer.two_swap`), so the class of C(s, 2) C(p - s, 2)
        supports is never scored one by one. Returns (supports, scores, bound):
        every member not returned scores >= bound. None when the scorer has no
        two-swap routine or the class is empty.
        """
        S1, _ = self.best()
        if self.s < 2 or self.p - self.s < 2 or not hasattr(self.scorer, "two_swap"):
            return None
        if keep == 1 and other_values is None:
            # The best member is also needed by the mistake classes and the best
            # support's certificate: compute it once.
            if getattr(self, "_class2_best", None) is None:
                self._class2_best = self.scorer.two_swap(S1, 1)
            return self._class2_best
        cached = self._class2_list
        if (cached is not None and other_values is not None and cached[1] == keep
                and np.array_equal(cached[0], S1) and np.array_equal(cached[2], other_values)):
            return cached[3]
        return self.scorer.two_swap(S1, keep, other_values=other_values)

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
        nb, vals = self.neighbourhood()
        pool_S = [S1[None, :], nb]
        pool_c = [np.array([c1]), vals]
        certs = []
        t0 = time.perf_counter()
        class2 = self.two_mistake_class(R, other_values=np.concatenate([[c1], vals]))
        if class2 is not None:
            # The two-mistake class is searched exactly (all members that can be among
            # the R best), so the family left to bound by outer approximation is the
            # one with at least three mistakes.
            sup2, val2, _ = class2
            pool_S.append(sup2)
            pool_c.append(val2)
            best2 = float(val2[0]) if len(val2) else np.inf
            certs.append(Certificate("supports with exactly 2 mistakes", "rank-two enumeration",
                                     best2, best2, 1, time.perf_counter() - t0))
            min_mistakes = 3
        else:
            min_mistakes = 2
        rounds = 0
        family = range(min_mistakes, min(self.s, self.p - self.s) + 1)
        if len(family) and hasattr(self.scorer, "class_lower_bounds"):
            # A cheap certified bound on every class with >= min_mistakes mistakes
            # often settles the completion without any mixed-integer solve.
            t0 = time.perf_counter()
            S_all, c_all = np.vstack(pool_S), np.concatenate(pool_c)
            order = rank_supports(S_all, c_all)
            v = c_all[order[R - 1]] if len(order) >= R else np.inf
            need = v + 1e-12 * max(1.0, abs(v))
            lb = min(self.class_bounds(family, target=need).values())
            if lb > need:
                certs.append(Certificate(f"supports with >= {min_mistakes} mistakes score above "
                                         "the R-th (bound >= target proved)", "analytic bound",
                                         float(lb), float(lb), 1, time.perf_counter() - t0))
                family = range(0)
        if len(family) and self.search == "branch_and_bound":
            # One branch and bound over the family keeps its R best members scoring at
            # most the pool's R-th score: the list is exact by construction.
            S_all, c_all = np.vstack(pool_S), np.concatenate(pool_c)
            order = rank_supports(S_all, c_all)
            v = c_all[order[R - 1]] if len(order) >= R else np.inf
            try:
                res = self._branch_and_bound(
                    f"supports with >= {min_mistakes} mistakes among the R best", keep=R,
                    center=S1, inside=(0, self.s - min_mistakes), cutoff=v,
                    seeds=[(S1[None, :], np.array([c1]))], max_nodes=self._node_budget())
            except NodeBudgetExceeded:  # a weak relaxation: score every support
                return top_r_by_enumeration(self.scorer, self.s, R, deadline=self._deadline_at())
            certs.append(res.certificate)
            pool_S.append(res.supports)
            pool_c.append(res.scores)
            rounds = len(res.scores)
        elif len(family) and self.s - min_mistakes >= 0 and self.p - self.s >= min_mistakes:
            oa = self._new_master("top-R completion")
            oa.add_constraint(S1, -np.inf, self.s - min_mistakes)
            bar = progress(self.verbose, desc="top-R completion", unit="round")
            try:
                while True:
                    S_all, c_all = np.vstack(pool_S), np.concatenate(pool_c)
                    order = rank_supports(S_all, c_all)
                    v = c_all[order[R - 1]] if len(order) >= R else np.inf
                    bar.update()
                    if self.verbose:
                        bar.set_postfix(added=rounds, pool=len(c_all))
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
            except SearchTimeout:
                if not self._lost_race():
                    raise
                scored = self._enumerate_all(f"top-R completion ({YIELDED})")
                return top_r_by_enumeration(self.scorer, self.s, R, scored=scored)
            finally:
                bar.close()
        S_all, c_all = np.vstack(pool_S), np.concatenate(pool_c)
        order = rank_supports(S_all, c_all)[:R]
        top = S_all[order]
        # How far the list goes past the paper's pool ({S_1} + N1 + one support with
        # two mistakes): the number of extra supports with >= 2 mistakes in it.
        n_far = int(np.sum(np.isin(top, S1).sum(axis=1) <= self.s - 2))
        return TopRCandidates(top, c_all[order], self.p, self.s,
                              list(self.certificates) + certs, max(rounds, n_far - 1))

    # ------------------------------------------------------------ mistakes
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
                                         "rank-two enumeration", scores[-1], scores[-1], 1,
                                         time.perf_counter() - t0))
                continue
            # Warm start inside the class: swap the k weakest members of S_1 for the
            # k best single additions, then a class-preserving local search.
            start = self._class_start(S1, k)
            # A few rounds: this is only the upper end of the class's bracket.
            Sk, vk, _ = local_search(self.scorer, start, center=S1, mistakes=k, max_rounds=3)
            problem = f"best support with exactly {k} mistakes"
            # The class minimum is bracketed by [analytic bound, warm-start score]; the
            # sampler tightens the bracket (outer approximation) only if the class
            # could win the draw.
            lk = self.class_bounds([k]).get(k, -np.inf)
            if vk - lk <= GAP_TOL * max(1.0, abs(vk)):
                certs.append(Certificate(problem, "analytic bound", float(lk), float(vk)))
            else:
                refine = self._class_refiner(S1, k, Sk, problem)
                # A few outer-approximation rounds tighten the bracket before the draw
                # (measured: without them the lazy draw closes flat classes far more often).
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

    def class_bounds(self, ks, target=None):
        """Certified lower bounds on the best score of mistake classes around S_1 (cached).

        With ``target`` the bounds need only be shown above it (the scorer then stops
        refining them once they are); without, they are as tight as the scorer makes
        them. A cached bound serves a later call if it was computed without a target,
        or if it is above the new target."""
        S1, _ = self.best()
        if not hasattr(self.scorer, "class_lower_bounds"):
            return {}
        cache = self.__dict__.setdefault("_class_lb", {})  # k -> (bound, its target)

        def serves(k):
            if k not in cache:
                return False
            bound, was = cache[k]
            return was is None or (target is not None and bound > target)

        todo = [k for k in ks if not serves(k)]
        if todo:
            got = self.scorer.class_lower_bounds(S1, todo, target=target)
            cache.update({k: (b, target) for k, b in got.items()})
        return {k: cache[k][0] for k in ks}

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
        if not hasattr(sc, "restricted"):
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
            sub = SubsetSearch(sc.restricted(outside, B), k, time_limit=self.time_limit,
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
            # Deciding a target: the perspective bounds (measured at p = 100, s = 8,
            # r = 1.1, lam = 120: 1.8 s against 6.3 s for the ridge-bound search over
            # the bases). Solving a class exactly: the ridge-bound search where the ball
            # does not bind at S_1 (its rank-one nodes are cheaper: 6.5 s against 36 s
            # there), the perspective bounds where it does (the ridge values are loose:
            # class 4 at r = 0.45, lam = 1 took 6.5 s against 1.0 s).
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
            # rounds did (measured at p = 100, n = 1000: 22 feasibility rounds, 69 s).
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
        inside = np.isin(nb, S1)
        new = nb[~inside]  # the outsider of each neighbour, row by row
        present = np.zeros((len(nb), len(S1)), dtype=bool)
        rows = np.broadcast_to(np.arange(len(nb))[:, None], nb.shape)
        present[rows[inside], np.searchsorted(S1, nb[inside])] = True
        gone = S1[np.argmin(present, axis=1)]  # the member absent from each neighbour
        add_cost = np.full(self.p, np.inf)
        np.minimum.at(add_cost, new, vals)
        drop_cost = np.full(self.p, np.inf)
        np.minimum.at(drop_cost, gone, vals)
        drop = S1[np.argsort(drop_cost[S1], kind="stable")[:k]]
        outside = np.setdiff1d(np.arange(self.p), S1)
        add = outside[np.argsort(add_cost[outside], kind="stable")[:k]]
        return np.sort(np.concatenate([np.setdiff1d(S1, drop), add]))
