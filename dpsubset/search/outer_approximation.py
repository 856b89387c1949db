"""Exact minimisation of c(S) over constrained families of supports by outer approximation.

The score c(z) is convex on [0, 1]^p (the ridge term is a perspective), so every exact
Danskin cut taken at a binary point is a global lower bound (``scorer.cut``). The master
problem

    min eta  s.t.  eta >= c(S_t) + g_t'(z - 1_{S_t})  for every cut t,
                   sum z = s,  family constraints,  z binary,

is a mixed-integer linear program solved to proven optimality by HiGHS (highspy). Its
optimum is a certified lower bound on the constrained minimum; the best support scored
so far is an upper bound. The solve stops when they meet (relative gap GAP_TOL), which is
the optimality certificate the privacy theorems need.

Differences from Algorithm 2 of the paper: cuts are taken exactly at binary points (no
random perturbation of z), the master is kept and grown row by row, and the loop is
seeded with heuristic supports and their cuts.
"""
from __future__ import annotations

import time
import weakref

import highspy
import numpy as np

from .candidates import GAP_TOL, Certificate
from .limits import MemoryBudget, SearchTimeout, describe_gap, format_gap, relative_gap
from ..runtime.progress import progress  # noqa: F401  (the search's modules import it from here)

__all__ = ["FamilyMaster", "OuterApproximation", "SearchTimeout", "progress"]


# Estimated bytes per coefficient of the master's rows, held in the search's memory
# budget: HiGHS keeps each row in its model and copies it for the LP relaxation and the
# MIP search, so a coefficient costs several times its 8 bytes after a solve (the
# measurement this rounds up: docs/benchmarks/search-constants.md). A cut is dense
# (p + 1 coefficients), so the cuts are the master's growing structure.
CUT_BYTES = 64


def _quiet_highs():
    """A HiGHS instance that prints nothing.

    highspy's ``Highs`` wrapper prints the solver's banner on construction (its
    callback set-up logs before ``output_flag`` can be switched off), once per
    master problem; the search uses no Python callbacks, so the core class serves
    where the installed highspy has it.
    """
    core = getattr(highspy, "_Highs", None)
    return core() if core is not None else highspy.Highs()


class FamilyMaster:
    """What every master problem of a family of supports shares: the family rows
    lo <= sum_{i in indices} z_i <= hi (kept for feasibility checks), no-good rows,
    and the best feasible support scored so far (the incumbent, an upper bound).

    Subclasses add the row to their model in ``_add_row(indices, lo, hi)``.
    """

    def _init_family(self, scorer, s):
        self.scorer, self.s, self.p = scorer, int(s), scorer.p
        self.best_support = None
        self.best_value = np.inf
        self.constraints = []  # (indices, lo, hi) of family constraints

    def add_constraint(self, indices, lo, hi):
        """Add lo <= sum_{i in indices} z_i <= hi (a family row)."""
        idx = np.asarray(indices, dtype=np.intp)
        self._add_row(idx, lo, hi)
        self.constraints.append((idx, lo, hi))
        # The incumbent may no longer be feasible.
        if self.best_support is not None and not self.feasible(self.best_support):
            self.best_support, self.best_value = None, np.inf

    def exclude(self, support):
        """No-good row: the exact support is no longer allowed."""
        self.add_constraint(support, -np.inf, self.s - 1)

    def feasible(self, support):
        """Whether a support satisfies the family constraints."""
        return bool(self.feasible_rows(np.asarray(support)[None, :])[0])

    def feasible_rows(self, supports):
        """Feasibility of many supports (rows) at once."""
        supports = np.asarray(supports)
        ok = np.ones(len(supports), dtype=bool)
        if not self.constraints:
            return ok
        member = np.zeros(self.p, dtype=bool)
        for idx, lo, hi in self.constraints:
            member[:] = False
            member[idx] = True
            c = member[supports].sum(axis=1)
            ok &= (c >= lo - 1e-9) & (c <= hi + 1e-9)
        return ok

    def offer(self, supports, values):
        """Offer scored supports as incumbents (no cuts or rows added)."""
        supports, values = np.asarray(supports), np.asarray(values, dtype=float)
        if len(values) == 0:
            return
        ok = np.flatnonzero(self.feasible_rows(supports))
        if len(ok):
            j = ok[np.argmin(values[ok])]
            if values[j] < self.best_value:
                self.best_value, self.best_support = float(values[j]), np.sort(supports[j])


class OuterApproximation(FamilyMaster):
    """A master MILP for one family of supports, grown by cuts and constraints.

    Parameters
    ----------
    scorer : LeastSquaresScorer
        Gives exact scores and cuts.
    s : int
        Support size.
    time_limit : float or None
        Wall-clock limit in seconds for all solves made through this object.
    memory : MemoryBudget, optional
        The search's memory budget: the rows' estimated size (CUT_BYTES per
        coefficient) is held in it, and a cut that would pass the limit raises
        SearchMemoryLimit.

    Notes
    -----
    Cuts are valid for every support, whatever the family constraints, so one object
    can be reused for a sequence of problems that only add constraints (for instance
    the next-best support after a no-good cut), which is how the top-R completion uses it.
    """

    def __init__(self, scorer, s, *, time_limit=None, name="exact search", cuts_per_round=None,
                 verbose=False, memory=None):
        self._init_family(scorer, s)
        self._memory = MemoryBudget(None) if memory is None else memory
        self._mem_key = ("cuts", object())
        self._entries = 0  # coefficients in the master's rows
        weakref.finalize(self, self._memory.release, self._mem_key)
        self.name = name
        self.verbose = bool(verbose)  # a progress bar per solve (iterations, bounds)
        # Besides the master's point, cut at its best in-family one-swap neighbours:
        # a cut costs one X'rho product while a master solve costs a MILP, so a
        # few extra cuts per round save many rounds.
        self.cuts_per_round = 2 * self.s if cuts_per_round is None else int(cuts_per_round)
        self.deadline = None if time_limit is None else time.perf_counter() + float(time_limit)
        h = _quiet_highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("mip_rel_gap", 0.0)
        h.setOptionValue("mip_abs_gap", 0.0)
        h.setOptionValue("mip_feasibility_tolerance", 1e-9)
        h.setOptionValue("primal_feasibility_tolerance", 1e-9)
        h.setOptionValue("threads", 1)
        # We hand HiGHS a strong incumbent every round (the best support scored so
        # far), so its primal heuristics only cost time (most of a master's solve:
        # docs/benchmarks/search-constants.md).
        for opt in ("rins", "rens", "root_reduced_cost", "zi_round", "shifting",
                    "feasibility_jump"):
            h.setOptionValue(f"mip_heuristic_run_{opt}", False)
        p = self.p
        inf = highspy.kHighsInf
        # columns 0..p-1: z (binary); column p: eta (>= 0 since every score is >= 0)
        h.addCols(p, np.zeros(p), np.zeros(p), np.ones(p), 0, np.array([], dtype=np.int32),
                  np.array([], dtype=np.int32), np.array([]))
        h.changeColsIntegrality(p, np.arange(p, dtype=np.int32),
                                np.array([highspy.HighsVarType.kInteger] * p))
        h.addCols(1, np.array([1.0]), np.array([0.0]), np.array([inf]), 0,
                  np.array([], dtype=np.int32), np.array([], dtype=np.int32), np.array([]))
        h.addRow(float(s), float(s), p, np.arange(p, dtype=np.int32), np.ones(p))
        self.h = h
        self._grow(p)
        self.cut_keys = set()
        self.n_cuts = 0

    # -------------------------------------------------------------- model rows
    def _add_row(self, idx, lo, hi):
        inf = highspy.kHighsInf
        self.h.addRow(max(float(lo), -inf), min(float(hi), inf), len(idx),
                      idx.astype(np.int32), np.ones(len(idx)))
        self._grow(len(idx))

    def _grow(self, entries):
        """Hold the rows' estimated size in the memory budget (it may stop the search)."""
        self._entries += entries
        self._memory.hold(self._mem_key, CUT_BYTES * self._entries, problem=self.name,
                          route="outer approximation (its cuts)")

    def add_cut(self, support, value=None, grad=None):
        """Add the exact cut at support S (computing it if not given); returns c(S)."""
        S = np.sort(np.asarray(support, dtype=np.intp))
        key = S.tobytes()
        if value is None or grad is None:
            value, grad = self.scorer.cut(S)
        if key not in self.cut_keys:
            self.cut_keys.add(key)
            # eta - g'z >= c(S) - g_S'1
            idx = np.arange(self.p + 1, dtype=np.int32)
            coef = np.concatenate([-grad, [1.0]])
            self.h.addRow(float(value - grad[S].sum()), highspy.kHighsInf, self.p + 1, idx, coef)
            self.n_cuts += 1
            self._grow(self.p + 1)
        if value < self.best_value and self.feasible(S):
            self.best_value, self.best_support = float(value), S
        return value

    def _cut_neighbours(self, S):
        nb, vals = self.scorer.neighbourhood(S)
        ok = self.feasible_rows(nb)
        nb, vals = nb[ok], vals[ok]
        self.offer(nb, vals)
        for j in np.argsort(vals)[: self.cuts_per_round]:
            self.add_cut(nb[j])

    # -------------------------------------------------------------- solving
    def _solve_master(self, bound=None, first_only=False):
        """Solve the master MILP.

        With ``bound``, nodes whose relaxation is already >= bound are pruned
        (HiGHS' objective_bound): "infeasible" then means that every support of the
        family has cut-model value >= bound (or that the family is empty). With
        ``first_only`` the solver stops at the first support whose cut-model value
        is below the bound, which is all a feasibility round needs.
        Returns "infeasible", None (time limit), or (lower bound, support).
        """
        h = self.h
        if self.deadline is not None:
            left = self.deadline - time.perf_counter()
            if left <= 0:
                return None
            h.setOptionValue("time_limit", float(left))
        h.setOptionValue("objective_bound", float(bound) if bound is not None else highspy.kHighsInf)
        h.setOptionValue("mip_max_improving_sols", 1 if first_only else 2147483647)
        give_incumbent = (self.best_support is not None and not first_only
                          and (bound is None or self.best_value < bound))
        if give_incumbent:
            sol = highspy.HighsSolution()
            x = np.zeros(self.p + 1)
            x[self.best_support] = 1.0
            x[self.p] = self.best_value
            sol.col_value = list(x)
            sol.value_valid = True
            h.setSolution(sol)
        h.run()
        status = h.getModelStatus()
        if status == highspy.HighsModelStatus.kInfeasible:
            return "infeasible"
        if first_only and status == highspy.HighsModelStatus.kSolutionLimit:
            # Not a lower bound: the cut-model value of the support found.
            z = np.asarray(h.getSolution().col_value[: self.p])
            return h.getInfo().objective_function_value, np.flatnonzero(z > 0.5)
        if status != highspy.HighsModelStatus.kOptimal:
            return None
        info = h.getInfo()
        z = np.asarray(h.getSolution().col_value[: self.p])
        lower = min(info.mip_dual_bound, info.objective_function_value)
        return lower, np.flatnonzero(z > 0.5)

    def find_below(self, target, problem):
        """A support of the family scoring below ``target``, or a proof that none does.

        Feasibility rounds: the master only has to produce a support whose cut-model
        value is below the target (no optimality proof per round); its exact cut is
        added and, if its true score is below the target too, it is returned. When
        the master has no such support, every support of the family scores >= target.

        Returns
        -------
        (support, score, Certificate) with support None when the bound is proved.
        """
        t0 = time.perf_counter()
        bar = progress(self.verbose, desc=f"{self.name}: {problem}", unit="round")
        try:
            return self._find_below(target, problem, t0, bar)
        finally:
            bar.close()

    def _find_below(self, target, problem, t0, bar):
        it = 0
        while True:
            it += 1
            bar.update()
            if self.verbose:
                bar.set_postfix(cuts=self.n_cuts)
            out = self._solve_master(bound=target, first_only=True)
            if out is None:
                secs = time.perf_counter() - t0
                raise SearchTimeout(
                    f"{self.name}: time limit reached while solving '{problem}' by outer "
                    f"approximation ({it - 1} rounds, {self.n_cuts} cuts, {secs:.1f} s); "
                    "nothing was released.", problem=problem, seconds=secs)
            if out == "infeasible":
                cert = Certificate(problem + " (bound >= target proved)", "outer_approximation bound",
                                   float(target), float(target), it, time.perf_counter() - t0)
                return None, None, cert
            model_value, S = out
            if len(S) != self.s:
                raise RuntimeError("master problem returned a support of the wrong size")
            key = np.sort(S).tobytes()
            seen = key in self.cut_keys
            value = float(self.scorer.score(S[None, :])[0]) if seen else self.add_cut(S)
            if value < target:
                cert = Certificate(problem + " (member below target found)", "outer_approximation",
                                   value, value, it, time.perf_counter() - t0)
                return np.sort(S), value, cert
            if seen:
                # The exact cut at S is in, so its model value is >= c(S) >= target up to
                # the solver's feasibility tolerance: the master is at the bound. The
                # certificate records the bound actually proved (closed only if within
                # GAP_TOL of the target).
                cert = Certificate(problem + " (bound >= target proved)", "outer_approximation bound",
                                   float(min(model_value, target)), float(target), it,
                                   time.perf_counter() - t0)
                return None, None, cert
            if self.cuts_per_round:
                self._cut_neighbours(S)

    def solve(self, problem="best support", max_iter=10_000, target=None):
        """Minimise c over the current family; returns (support, value, Certificate).

        With ``target`` given, stop as soon as the certified lower bound reaches it:
        then (None, None, Certificate) is returned, the certificate proving that every
        support of the family scores >= target (lower = upper = the bound proved).

        Raises
        ------
        SearchTimeout
            When the time limit is reached before the certificate closes.
        """
        bar = progress(self.verbose, desc=f"{self.name}: {problem}", unit="it")
        try:
            return self._solve(problem, max_iter, target, bar)
        finally:
            bar.close()

    def _solve(self, problem, max_iter, target, bar):
        t0 = time.perf_counter()
        lower = -np.inf
        it = 0
        for it in range(1, max_iter + 1):
            bar.update()
            if (self.verbose or bar.due()) and it > 1:  # the relative gap of the previous round (no bounds:
                # they are scores of the data)
                bar.set_postfix(gap=format_gap(relative_gap(lower, self.best_value)),
                                cuts=self.n_cuts)
            out = self._solve_master(bound=target)
            if out == "infeasible":
                if target is not None:
                    # Every support of the family has cut-model value >= target.
                    cert = Certificate(problem + " (bound >= target proved)",
                                       "outer_approximation bound", float(target), float(target),
                                       it, time.perf_counter() - t0)
                    return None, None, cert
                raise ValueError(f"{problem}: no support satisfies the constraints")
            if out is None:
                gap, secs = relative_gap(lower, self.best_value), time.perf_counter() - t0
                raise SearchTimeout(
                    f"{self.name}: time limit reached while solving '{problem}' by outer "
                    f"approximation ({describe_gap(gap)} after {it - 1} rounds, "
                    f"{secs:.1f} s); nothing was released.", problem=problem, gap=gap,
                    seconds=secs)
            lower, S = out
            if target is not None and lower >= target:
                cert = Certificate(problem + " (bound >= target proved)", "outer_approximation bound",
                                   float(lower), float(lower), it, time.perf_counter() - t0)
                return None, None, cert
            if len(S) != self.s:
                raise RuntimeError("master problem returned a support of the wrong size")
            if (self.best_support is not None
                    and self.best_value - lower <= GAP_TOL * max(1.0, abs(self.best_value))):
                break
            key = np.sort(S).tobytes()
            if key in self.cut_keys:
                # The master's optimum sits on a point whose exact cut is already in:
                # then lower >= c(S) >= best, up to the solver's tolerances.
                self.offer([S], [self.scorer.score(S[None, :])[0]])
                break
            self.add_cut(S)
            if self.cuts_per_round:
                self._cut_neighbours(S)
        cert = Certificate(problem, "outer_approximation", float(min(lower, self.best_value)),
                           float(self.best_value), it, time.perf_counter() - t0)
        return self.best_support.copy(), float(self.best_value), cert
