"""Exact candidate sets for the selection mechanisms, with optimality certificates.

:class:`SubsetSearch` finds, for one dataset:

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

This module holds the search's building blocks, its certified best support and the
one-swap neighbourhood; the top-R list is in :mod:`dpsubset.search.top_r_list` and
the mistake classes in :mod:`dpsubset.search.mistake_classes` (base classes of
``SubsetSearch``). Why the constants below have their values, with the commands that
measure them: docs/benchmarks/search-constants.md.

All values here are non-private and stay inside the call.
"""
from __future__ import annotations

import time
from math import comb

import numpy as np

from .candidates import Certificate
from .branch_bound import (NodeBudgetExceeded, branch_and_bound, node_data,
                           supports_branch_and_bound)
from .enumeration import rank_supports, score_all
from .heuristics import iht_support, local_search
from .limits import (ENUMERATION_LIMIT, YIELDED, Deadline, MemoryBudget, SearchTimeout,
                     resolve_memory_limit)
from .mistake_classes import MistakeClassSearch
from .outer_approximation import OuterApproximation
from .protocols import ClassBoundScorer, Scorer
from .route import ENUMERATE_BELOW, choose_route  # noqa: F401  (ENUMERATE_BELOW: re-exported)
from .top_r_list import TopRListSearch
from ..losses import DEFAULT_LOSS, is_least_squares

__all__ = ["SubsetSearch", "check_search", "default_R"]

# search="auto" enumerates where the cost model of route.py puts enumeration below the
# certified search (and C(p, s) <= ENUMERATE_BELOW): docs/benchmarks/search-constants.md.
# A branch-and-bound node (bound and dual ascent) costs about as much as scoring this
# many supports: where C(p, s) <= ENUMERATION_LIMIT the search gives up for enumeration
# after C(p, s) / NODE_COST nodes, which bounds the cost of a weak relaxation (pure
# noise with a small ridge) by about that of scoring every support.
NODE_COST = 500
# The same for the convex losses (the Fenchel bounds): a node (a dozen passes over the
# data) costs about as much as one or two scores (Newton solves): 3 ms a node against
# 3.5 ms a score at p = 100, n = 6400 (docs/benchmarks/regimes.md, the profile).
CONVEX_NODE_COST = 2
# The same hand-over for the outer approximation (the route of the convex losses), whose
# master problems can stall where the scores are flat (a small ridge, weak signal).
# Where C(p, s) <= ENUMERATION_LIMIT, all the outer-approximation solves of one search
# together get as many seconds as scoring every support is expected to take (from the
# cost per support measured in the local search, times RACE_FACTOR, at least
# MIN_RACE_SECONDS); then the search scores every support instead, so a call costs at
# most about twice the enumeration.
RACE_FACTOR = 1.0
MIN_RACE_SECONDS = 1.0
#: The values of ``search=``.
SEARCHES = ("auto", "enumeration", "branch_and_bound", "outer_approximation", "pyomo", "scip")
#: The searches that solve formulation (9) with a MIQCP solver (search/pyomo_search.py).
MIQCP_SEARCHES = ("pyomo", "scip")


def check_search(search, solver, solver_options, loss):
    """Check ``search=`` and its solver (no data needed); returns (solver, solver_options)
    with the Pyomo solver resolved when search="pyomo" or "scip", else (None, None)."""
    if search not in SEARCHES:
        raise ValueError(f"search must be one of {SEARCHES}, got {search!r}")
    if search not in MIQCP_SEARCHES:
        if solver is not None or solver_options is not None:
            raise ValueError("solver= and solver_options= are only used with search='pyomo' "
                             f"or 'scip' (got search={search!r})")
        return None, None
    if not is_least_squares(loss):
        raise ValueError(f"search={search!r} is for loss={DEFAULT_LOSS!r} (got loss={loss!r}); "
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


class SubsetSearch(TopRListSearch, MistakeClassSearch):
    """Exact searches over size-s supports for one dataset.

    Parameters
    ----------
    scorer : Scorer
        A :class:`~dpsubset.search.protocols.Scorer` (LeastSquaresScorer,
        ConvexLossScorer); the routes that need more of it ask for the other
        protocols of :mod:`dpsubset.search.protocols`.
    s : int
    search : {"auto", "enumeration", "branch_and_bound", "outer_approximation", "pyomo", "scip"}
        "auto" enumerates where a cost model of public settings (loss, n, p, s;
        :func:`dpsubset.search.route.choose_route`) puts enumeration below the
        certified search, and otherwise uses the branch and bound (least squares) or outer approximation (other losses)
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
        if not isinstance(scorer, Scorer):
            raise TypeError("scorer must provide dpsubset.search.protocols.Scorer (p, n, "
                            "k_forced, lam, r, loss, score, fit, neighbourhood, cut, ...), "
                            f"got {type(scorer).__name__}")
        solver, solver_options = check_search(search, solver, solver_options, scorer.loss)
        #: The memory budget of every growing structure of this search (a sub-search shares
        #: its parent's).
        self.memory = (memory_limit if isinstance(memory_limit, MemoryBudget)
                       else MemoryBudget(resolve_memory_limit(memory_limit)))
        self.scorer, self.s, self.p = scorer, int(s), scorer.p
        self.verbose = bool(verbose)
        self.solver, self.solver_options = solver, solver_options
        total = comb(self.p, self.s)
        # The outer approximation hands over to enumeration only on the automatic
        # route: a user who asked for search="outer_approximation" gets it.
        self._race = search == "auto" and total <= ENUMERATION_LIMIT
        if search == "auto":
            if choose_route(scorer.loss, scorer.n, self.p, self.s) == "enumeration":
                search = "enumeration"
            elif supports_branch_and_bound(scorer):
                search = "branch_and_bound"
            else:
                search = "outer_approximation"
        if search == "branch_and_bound" and not supports_branch_and_bound(scorer):
            raise ValueError("search='branch_and_bound' needs the second moments of "
                             "loss='squared' or a convex-loss scorer with its data (a "
                             "ConvexDualScorer); use search='auto' or 'outer_approximation'")
        if search == "enumeration" and total > ENUMERATION_LIMIT:
            raise ValueError(f"C({self.p}, {self.s}) = {total} is too many supports to enumerate")
        self.search = search
        self.miqcp = search in MIQCP_SEARCHES
        self.time_limit = time_limit  # starts the deadline (see the property)
        self.n_seed_cuts = n_seed_cuts
        #: Outer-approximation rounds spent bracketing a mistake class before the draw.
        # (none by default: the lazy draw's targeted refinement is cheaper; see
        # docs/benchmarks/search-constants.md)
        self.bracket_rounds = 0
        self._best = None
        self._class2_best = None  # (supports, scores, bound) of the best two-mistake member
        self._class_lb = {}  # class bounds around S_1: k -> (bound, the target it cleared)
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
        """What the branch and bound's bounds read of the data (built once per search):
        the second moments (least squares) or the data and loss (convex losses)."""
        if self._mom is None:
            self._mom = node_data(self.scorer, memory=self.memory)
        return self._mom

    def _node_budget(self):
        """Nodes after which enumeration is cheaper (None: enumeration is refused)."""
        total = comb(self.p, self.s)
        cost = NODE_COST if is_least_squares(self.scorer.loss) else CONVEX_NODE_COST
        return None if total > ENUMERATION_LIMIT else max(100, total // cost)

    def _branch_and_bound(self, problem, **kw):
        """:func:`branch_and_bound` with this search's deadline, progress and moments.

        Where the caller gives a node budget (and so falls back to enumeration on
        NodeBudgetExceeded), a convex-loss branch and bound on the automatic route also
        races enumeration, as the outer approximation does: a convex node's cost grows
        with n faster than CONVEX_NODE_COST says (Huber, p = 20, s = 5, n = 100,000:
        about 50 scores a node, 532 nodes in 520 s against 186 s to score every
        support), so past the time enumeration is expected to take it yields to it."""
        deadline = self._deadline_at()
        race = (self._race_deadline_at() if kw.get("max_nodes") is not None
                and not is_least_squares(self.scorer.loss) else None)
        raced = race is not None and (deadline is None or race < deadline)
        try:
            return branch_and_bound(self.scorer, self.s, deadline=race if raced else deadline,
                                    verbose=self.verbose, problem=problem,
                                    moments=self._moments(), memory=self.memory, **kw)
        except SearchTimeout:
            if raced and self._lost_race():
                raise NodeBudgetExceeded(f"{problem}: yielded to enumeration") from None
            raise

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
        """When the outer approximation (or a convex-loss branch and bound) of this
        search yields to enumeration (a perf_counter time), or None where it never does. Set at the first solve: one
        budget for all of the search's solves together."""
        if not self._race or self.miqcp or self.search not in ("outer_approximation",
                                                                "branch_and_bound"):
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
            n0 = sc.n_scored
            start = iht_support(sc, self.s)
            S, v, nbhd = local_search(sc, start)
            if sc.n_scored > n0:
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
        if nbhd is None or not isinstance(sc, ClassBoundScorer):
            return None
        if np.min(nbhd[1]) <= v:
            return None
        K = min(self.s, self.p - self.s)
        lb = {}
        if K >= 3:
            # (refined only as far as it takes to clear c(S): the question here)
            # One class at a time, the most mistakes first: those classes have the
            # fewest bases (C(s, k)) and the weakest bounds, so where the bounds do not
            # settle the question (a ridge that is small next to the signal) the first
            # one says so in a millisecond, before the C(s, 3) bases of class 3 are
            # fitted (0.06-0.3 s of a 0.4 s call at p = 1000, s = 8; issue 42).
            for k in range(K, 2, -1):
                lb.update(sc.class_lower_bounds(S, [k], target=v))
                if lb[k] <= v:
                    return None
        if K >= 2:
            if self._want_R is not None:
                # One pass for both the certificate (the class minimum) and the top-R
                # list's two-mistake members: a separate best-member pass is a large
                # share of the search at large p (docs/benchmarks/search-constants.md).
                others = np.concatenate([[v], nbhd[1]])
                listed = self._two_swap(S, v, self._want_R, other_values=others)
                self._class2_list = (S.copy(), self._want_R, others, listed)
                sup2, val2, bound2 = listed
                # The list's first member is the class minimum; the rest of the class
                # scores >= its second member, or >= the list's bound.
                class2 = (sup2[:1], val2[:1], float(val2[1]) if len(val2) > 1 else bound2) \
                    if len(val2) else None
            else:
                class2 = self._two_swap(S, v, 1)
                _, val2, bound2 = class2
            if (len(val2) and val2[0] <= v) or (not len(val2) and bound2 <= v):
                return None
            self._class2_best = class2  # (None: computed when the mistake classes need it)
        # S is S_1 from here on: keep its class bounds for the later searches (with the
        # target they were refined for: a later question with a higher one refines more).
        self._class_lb = {k: (b, v) for k, b in lb.items()}
        return Certificate("best support", "local optimum + exact class 2 + class bounds",
                           float(v), float(v))

    def neighbourhood(self):
        """One-swap neighbours of S_1 and their exact scores."""
        S1, _ = self.best()
        if self._nbhd is None or not np.array_equal(self._nbhd[0], S1):
            nb, vals = self.scorer.neighbourhood(S1)
            self._nbhd = (S1, nb, vals)
        return self._nbhd[1], self._nbhd[2]

    def class_bounds(self, ks, target=None):
        """Certified lower bounds on the best score of mistake classes around S_1 (cached).

        With ``target`` the bounds need only be shown above it (the scorer then stops
        refining them once they are); without, they are as tight as the scorer makes
        them. A cached bound serves a later call if it was computed without a target,
        or if it is above the new target."""
        S1, _ = self.best()
        if not isinstance(self.scorer, ClassBoundScorer):
            return {}
        cache = self._class_lb  # k -> (bound, its target)

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
