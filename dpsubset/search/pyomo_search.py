"""The mixed-integer formulation (9) of the paper, in Pyomo, for an external MIQCP solver.

For users with Gurobi, SCIP, CPLEX, ... this is an alternative to the HiGHS outer
approximation (``search="pyomo"``). With the package's score (ridge, 1/(2n) scaling,
ball over every coefficient, always-in columns K) the model is

    min   yy/2 - g'b + b'G b / 2 + (lam/2n) (||b_K||^2 + sum_i theta_i)
    s.t.  b_i^2 <= theta_i z_i          (a rotated cone per candidate i)
          ||b_K||^2 + sum_i theta_i <= r^2
          sum_i z_i = s,  z binary,  theta >= 0,
          family rows: lo <= sum_{i in S} z_i <= hi  (mistake classes, no-good cuts)

with G = [F X]'[F X] / n, g = [F X]'y / n, yy = y'y / n. For binary z, theta_i is
b_i^2 on the support and 0 (with b_i = 0) off it, so the optimum is min c(S) over the
family; the theta_i in the objective make the continuous relaxation the perspective
relaxation, as in the paper.

Certificates never trust the solver's objective value. The support the solver returns
is rescored exactly by the package's scorer (the upper bound); the lower bound is the
solver's dual bound. When the two do not meet to GAP_TOL (solvers work to ~1e-9
feasibility tolerances, which can leave a gap of that size when the ball is active),
the returned support is set aside with a temporary no-good row and the solve repeated:
every support of the family is then either scored exactly or covered by the new dual
bound, so min(exact scores, new bound) is again a valid lower bound, and it closes as
soon as the next support is separated from the best by more than the solver's
tolerance. If it still does not close after a few rounds the certificate is open, and
the package fails closed as with the outer approximation.

SCIP (``search="scip"``) is this same model solved by Pyomo's in-process SCIP interface
(``scip_direct``, through pyscipopt, whose wheels ship SCIP): an open solver with dual
bounds for users without a commercial licence, and an independent cross-check of the
default search in the tests. SCIP handles the rotated cones as nonlinear constraints (spatial
branch and bound with outer-approximation cuts), so it is exact but slow: seconds per solve
at p = 15.

Pyomo and the solver are optional: nothing here is imported unless search="pyomo" or "scip".
"""
from __future__ import annotations

import contextlib
import difflib
import functools
import logging
import math
import time
from collections.abc import Mapping

import numpy as np

from .candidates import GAP_TOL, Certificate
from .limits import format_gap, relative_gap
from .outer_approximation import FamilyMaster, SearchTimeout, progress
from .protocols import SquaredLossScorer
from ..losses import is_least_squares

__all__ = ["PyomoSearch", "check_solver", "check_scip", "DEFAULT_SOLVERS", "SCIP_SOLVER"]

#: Pyomo solver names tried, in order, when search="pyomo" is given without a solver.
DEFAULT_SOLVERS = ("gurobi_persistent", "gurobi_direct", "scip_direct", "scip", "cplex_direct",
                   "xpress_direct")
#: The Pyomo interface used by search="scip": SCIP in process, through pyscipopt.
SCIP_SOLVER = "scip_direct"

#: Rounds of "set the returned support aside and solve again" per call before a gap
#: that does not close is reported as open.
MAX_ROUNDS = 6

# Exactness settings per solver family (the user's solver_options override them): zero
# MIP gap and 1e-9 feasibility / optimality tolerances. Gurobi's barrier tolerance for
# the cone relaxations is left at its default: a tighter one made Gurobi return
# "suboptimal" supports (open certificates) and was slower, while the default closed
# every certificate in one or two rounds (docs/benchmarks/search-constants.md).
_SOLVER_DEFAULTS = {
    "gurobi": dict(MIPGap=0.0, MIPGapAbs=0.0, FeasibilityTol=1e-9, IntFeasTol=1e-9,
                   OptimalityTol=1e-9, Threads=1, OutputFlag=0),
    "scip": {"limits/gap": 0.0, "limits/absgap": 0.0, "numerics/feastol": 1e-9},
    "cplex": {"mip_tolerances_mipgap": 0.0, "mip_tolerances_absmipgap": 0.0, "threads": 1},
    "xpress": dict(miprelstop=0.0, mipabsstop=0.0, threads=1),
}
_TIME_OPTION = {"gurobi": "TimeLimit", "scip": "limits/time", "cplex": "timelimit",
                "xpress": "maxtime"}


def _family(name):
    for fam in _SOLVER_DEFAULTS:
        if fam in name:
            return fam
    return None


def _import_pyomo():
    try:
        import pyomo.environ as pe
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ValueError(
            "search='pyomo' needs Pyomo and a MIQCP solver: pip install 'dpsubset[pyomo]' "
            "gurobipy (or another solver Pyomo knows), or use search='auto'") from err
    return pe


@contextlib.contextmanager
def _quiet(logger="pyomo"):
    """Silence Pyomo's warnings inside the block: the checks here report instead."""
    log = logging.getLogger(logger)
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


@functools.lru_cache(maxsize=None)
def _available(name):
    """Whether Pyomo can run the solver ``name`` here (cached: the check may start a
    licence environment)."""
    pe = _import_pyomo()
    if name not in pe.SolverFactory:
        return False
    # (Pyomo logs a warning and a traceback for a missing executable.)
    with _quiet():
        try:
            opt = pe.SolverFactory(name)
            ok = bool(opt.available(exception_flag=False))
            if ok and hasattr(opt, "license_is_valid"):
                ok = bool(opt.license_is_valid())
        except Exception:
            ok = False
    return ok


def check_solver(solver=None, solver_options=None):
    """Validate the solver of search="pyomo" before any data are read.

    Parameters
    ----------
    solver : str or None
        A Pyomo solver name ("gurobi_persistent", "gurobi_direct", "scip", ...). None
        picks the first available of :data:`DEFAULT_SOLVERS`.
    solver_options : mapping or None
        Options passed to the solver (its own names), on top of the exactness
        defaults (zero MIP gap, tight tolerances).

    Returns
    -------
    (name, options) : (str, dict)

    Raises
    ------
    ValueError
        Pyomo is missing, the name is not a solver Pyomo knows, or the solver is not
        installed or licensed here; the message says how to fix it.
    """
    if solver_options is not None and not isinstance(solver_options, Mapping):
        raise TypeError("solver_options must be a dict of solver options, got "
                        f"{type(solver_options).__name__}")
    options = dict(solver_options or {})
    _import_pyomo()
    if solver is None:
        for name in DEFAULT_SOLVERS:
            if _available(name):
                return name, options
        raise ValueError(
            "search='pyomo' found no MIQCP solver (tried " + ", ".join(DEFAULT_SOLVERS)
            + "). Install one, e.g. pip install gurobipy (size-limited licence included), "
            "or pass solver=<a Pyomo solver name>; search='auto' needs no extra solver.")
    if not isinstance(solver, str) or not solver:
        raise ValueError("solver must be a Pyomo solver name such as 'gurobi_direct', "
                         f"got {solver!r}")
    if not _available(solver):
        raise ValueError(
            f"solver={solver!r} is not available to Pyomo here (unknown name, not installed, "
            "or no licence). Install it (for Gurobi: pip install gurobipy) or pass another "
            f"Pyomo solver name, e.g. one of {DEFAULT_SOLVERS}; search='auto' needs no "
            "extra solver.")
    return solver, options


def check_scip(solver_options=None):
    """Validate search="scip" before any data are read: Pyomo and pyscipopt importable.

    Returns
    -------
    (name, options) : (str, dict)
        :data:`SCIP_SOLVER` and the user's SCIP parameters (SCIP's own names, e.g.
        ``{"limits/nodes": 10000}``), on top of the exactness defaults.
    """
    try:
        import pyscipopt  # noqa: F401
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ValueError("search='scip' needs pyscipopt (its wheels include SCIP) and Pyomo: "
                         "pip install 'dpsubset[scip]', or use search='auto'") from err
    name, options = check_solver(SCIP_SOLVER, solver_options)
    _check_scip_parameters(options)
    return name, options


def _check_scip_parameters(options):
    """Every SCIP parameter name and value, checked on an empty SCIP model before any data
    are read: a search that certifies without calling SCIP would otherwise accept a
    misspelt parameter silently, and one that calls it would fail deep inside the solve."""
    import pyscipopt
    model = pyscipopt.Model()
    model.hideOutput()
    known = model.getParams()
    for key, value in options.items():
        if key not in known:
            close = difflib.get_close_matches(str(key), list(known), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(f"solver_options: {key!r} is not a SCIP parameter{hint}; SCIP's "
                             "parameter names look like 'limits/nodes' (see SCIP's parameter list)")
        try:
            model.setParam(key, value)
        except (ValueError, TypeError, KeyError, LookupError) as err:
            raise ValueError(f"solver_options: SCIP parameter {key!r} does not accept "
                             f"{value!r} ({err})") from err


class PyomoSearch(FamilyMaster):
    """Formulation (9) for one family of supports, with the OuterApproximation interface.

    Parameters
    ----------
    scorer : LeastSquaresScorer
        Exact scores (the upper end of every certificate) and the data of the model.
    s : int
    solver : str or None
        Pyomo solver name (validated by :func:`check_solver`).
    solver_options : dict or None
    time_limit : float or None
        Wall-clock limit in seconds for all solves made through this object.
    name : str
    verbose : bool
        Show a progress bar over the solver calls of each solve.

    Notes
    -----
    Family rows (``add_constraint``, ``exclude``) stay in the model, as in the outer
    approximation, so one object serves a sequence of problems that only add rows.
    ``add_cut`` adds no row (the model is exact): it scores the support and keeps it
    as an incumbent (passed to the solver as a warm start where it accepts one).
    """

    def __init__(self, scorer, s, *, solver=None, solver_options=None, time_limit=None,
                 name="exact search", verbose=False):
        if not (isinstance(scorer, SquaredLossScorer) and is_least_squares(scorer.loss)):
            raise ValueError("search='pyomo' is for the least-squares score (loss='squared'); "
                             "use search='auto' for the other losses")
        self.solver_name, options = check_solver(solver, solver_options)
        self.pe = _import_pyomo()
        self._init_family(scorer, s)
        self.name = name
        self.verbose = bool(verbose)
        self.deadline = None if time_limit is None else time.perf_counter() + float(time_limit)
        fam = _family(self.solver_name)
        self.options = {**_SOLVER_DEFAULTS.get(fam, {}), **options}
        self._time_option = _TIME_OPTION.get(fam)
        # The route named in certificates: "scip" for SCIP through pyscipopt.
        self.label = "scip" if self.solver_name == SCIP_SOLVER else f"pyomo ({self.solver_name})"
        self.n_solves = 0
        self._build()
        self.opt = self.pe.SolverFactory(self.solver_name)
        self.persistent = hasattr(self.opt, "set_instance")
        if self.persistent:
            self.opt.set_instance(self.model)

    # -------------------------------------------------------------- the model
    def _build(self):
        pe, sc = self.pe, self.scorer
        p, kf, r = self.p, sc.k_forced, sc.r
        k = kf + p
        G = np.empty((k, k))
        G[:kf, :kf] = sc.FF
        G[kf:, :kf] = sc.XF
        G[:kf, kf:] = sc.XF.T
        G[kf:, kf:] = sc.gram if sc.gram is not None else sc.X.T @ sc.X / sc.n
        g = np.concatenate([sc.Fy, sc.Xy])
        m = pe.ConcreteModel(name=self.name)
        m.z = pe.Var(range(p), domain=pe.Binary)
        m.b = pe.Var(range(k), bounds=(-r, r))  # [forced..., candidates...]
        m.theta = pe.Var(range(p), bounds=(0.0, r * r))
        m.cone = pe.Constraint(range(p), rule=lambda m, i: m.b[kf + i] ** 2 <= m.theta[i] * m.z[i])
        m.ball = pe.Constraint(expr=pe.quicksum(m.b[j] ** 2 for j in range(kf))
                               + pe.quicksum(m.theta[i] for i in range(p)) <= r * r)
        m.card = pe.Constraint(expr=pe.quicksum(m.z[i] for i in range(p)) == self.s)
        iu, ju = np.triu_indices(k, 1)
        nz = G[iu, ju] != 0.0
        quad = (pe.quicksum(0.5 * float(G[a, a]) * m.b[a] ** 2 for a in range(k))
                + pe.quicksum(float(G[a, c]) * m.b[a] * m.b[c]
                              for a, c in zip(iu[nz].tolist(), ju[nz].tolist())))
        ridge = 0.5 * sc.lam_n * (pe.quicksum(m.b[j] ** 2 for j in range(kf))
                                  + pe.quicksum(m.theta[i] for i in range(p)))
        m.obj = pe.Objective(expr=0.5 * sc.yy - pe.quicksum(float(g[a]) * m.b[a] for a in range(k))
                             + quad + ridge, sense=pe.minimize)
        m.family = pe.ConstraintList()
        m.aside = pe.ConstraintList()  # temporary no-goods of one solve
        self.model = m

    def _row(self, con_list, indices, lo, hi):
        pe, m = self.pe, self.model
        expr = pe.quicksum(m.z[int(i)] for i in indices)
        lo = None if lo is None or not np.isfinite(lo) else float(lo)
        hi = None if hi is None or not np.isfinite(hi) else float(hi)
        if lo is not None and hi is not None:
            con = con_list.add(pe.inequality(lo, expr, hi) if lo != hi else expr == lo)
        elif lo is not None:
            con = con_list.add(expr >= lo)
        else:
            con = con_list.add(expr <= hi)
        if self.persistent:
            self.opt.add_constraint(con)
        return con

    # -------------------------------------------------------------- OuterApproximation interface
    def _add_row(self, idx, lo, hi):
        self._row(self.model.family, idx, lo, hi)

    def add_cut(self, support, value=None, grad=None):
        """No row (the model is exact): score the support and keep it as an incumbent."""
        S = np.sort(np.asarray(support, dtype=np.intp))
        if value is None:
            value = float(self.scorer.score(S[None, :])[0])
        self.offer(S[None, :], [float(value)])
        return value

    # -------------------------------------------------------------- solving
    def _warm_start(self, aside):
        """Load the incumbent into the model's variables; True if the solver may use it."""
        S = self.best_support
        if S is None or any(np.array_equal(S, A) for A in aside):
            return False
        if not getattr(self.opt, "warm_start_capable", lambda: False)():
            return False
        m = self.model
        _, beta = self.scorer.fit(S[None, :])
        kf = self.scorer.k_forced
        for i in range(self.p):
            m.z[i].set_value(0)
            m.theta[i].set_value(0.0)
            m.b[kf + i].set_value(0.0)
        for j in range(kf):
            m.b[j].set_value(float(beta[0, j]))
        for i, v in zip(S.tolist(), beta[0, kf:].tolist()):
            m.z[i].set_value(1)
            m.b[kf + i].set_value(v)
            m.theta[i].set_value(v * v)
        return True

    def _solve_once(self, problem, aside):
        """One solver call. Returns (support or None, dual bound); support None means
        the (current) family is empty."""
        from pyomo.opt import TerminationCondition as TC
        options = dict(self.options)
        if self.deadline is not None:
            left = self.deadline - time.perf_counter()
            if left <= 0:
                raise SearchTimeout(f"{self.name}: time limit reached while solving '{problem}' "
                                    f"with {self.solver_name}; nothing was released.",
                                    problem=problem)
            if self._time_option:
                options[self._time_option] = left
        kw = dict(options=options, load_solutions=False)
        if self._warm_start(aside):
            kw["warmstart"] = True
        try:
            res = self.opt.solve(**kw) if self.persistent else self.opt.solve(self.model, **kw)
        except Exception as err:  # e.g. a size-limited licence refusing the model
            raise RuntimeError(
                f"{self.name}: {self.solver_name} failed on '{problem}' at p = {self.p}: {err}. "
                "Nothing was released; use search='auto' or a solver that takes this size."
            ) from err
        self.n_solves += 1
        tc = res.solver.termination_condition
        if tc in (TC.infeasible, TC.infeasibleOrUnbounded):
            return None, np.inf
        if tc == TC.maxTimeLimit:
            raise SearchTimeout(f"{self.name}: time limit reached while solving '{problem}' "
                                f"with {self.solver_name}; nothing was released.",
                                problem=problem)
        lower = res.problem.lower_bound
        lower = -np.inf if lower is None or not math.isfinite(float(lower)) else float(lower)
        try:
            # A solution with a "suboptimal" status is loaded without Pyomo's warning:
            # it is rescored exactly and the certificate says whether it is optimal.
            with _quiet():
                if len(res.solution):
                    self.model.solutions.load_from(res)
                else:
                    self.opt.load_vars()
        except Exception as err:
            raise SearchTimeout(f"{self.name}: {self.solver_name} returned no solution for "
                                f"'{problem}' (status {tc}); nothing was released.") from err
        z = np.array([self.model.z[i].value or 0.0 for i in range(self.p)])
        S = np.flatnonzero(z > 0.5)
        if len(S) != self.s:
            raise RuntimeError(f"{self.solver_name} returned a support of size {len(S)}, "
                               f"not {self.s}")
        return S, lower

    def _rounds(self, problem, stop, max_rounds):
        """Solve, rescore, and set supports aside until ``stop(lower, upper, found)``
        says the answer is settled. Returns (lower bound over the family, rounds)."""
        m = self.model
        aside, aside_vals = [], []
        lower, rounds = -np.inf, 0
        bar = progress(self.verbose, desc=f"{self.name}: {problem}", unit="solve")
        try:
            for rounds in range(1, max_rounds + 1):
                S, bound = self._solve_once(problem, aside)
                if S is not None:
                    value = float(self.scorer.score(S[None, :])[0])
                    self.offer(np.asarray(S)[None, :], [value])
                    found = value
                else:
                    found = None
                # Every member of the family is set aside (scored exactly) or covered by
                # the solver's bound on the rest.
                lower = min([bound] + aside_vals)
                upper = self.best_value
                bar.update()
                if self.verbose:  # the relative gap only: the bounds are scores of the data
                    bar.set_postfix(gap=format_gap(relative_gap(lower, upper)))
                if stop(lower, upper, found) or S is None:
                    break
                aside.append(S)
                aside_vals.append(found)
                self._row(m.aside, S, -np.inf, self.s - 1)
        finally:
            bar.close()
            for con in list(m.aside.values()):
                if con.active:
                    if self.persistent:
                        self.opt.remove_constraint(con)
                    con.deactivate()
        return lower, rounds

    @staticmethod
    def _closed(lower, upper):
        return upper - lower <= GAP_TOL * max(1.0, abs(upper))

    def solve(self, problem="best support", max_iter=10_000, target=None):
        """Minimise c over the current family; returns (support, value, Certificate).

        With ``target``: (None, None, Certificate) once the bound proves every support
        of the family scores >= target, as in :meth:`OuterApproximation.solve`.
        """
        t0 = time.perf_counter()

        def stop(lower, upper, found):
            return (target is not None and lower >= target) or self._closed(lower, upper)

        lower, it = self._rounds(problem, stop, max(1, min(int(max_iter), MAX_ROUNDS)))
        seconds = time.perf_counter() - t0
        if target is not None and lower >= target:
            return None, None, Certificate(problem + " (bound >= target proved)",
                                           f"{self.label} bound", float(lower),
                                           float(lower), it, seconds)
        if self.best_support is None:
            if target is not None:
                return None, None, Certificate(problem + " (bound >= target proved)",
                                               f"{self.label} bound", float(target),
                                               float(target), it, seconds)
            raise ValueError(f"{problem}: no support satisfies the constraints")
        cert = Certificate(problem, f"{self.label} + exact rescoring",
                           float(min(lower, self.best_value)), float(self.best_value), it, seconds)
        return self.best_support.copy(), float(self.best_value), cert

    def find_below(self, target, problem):
        """A support of the family scoring below ``target``, or a proof that none does
        (same contract as :meth:`OuterApproximation.find_below`)."""
        t0 = time.perf_counter()
        if self.best_value < target:  # a member below the target is already known
            v = float(self.best_value)
            return self.best_support.copy(), v, Certificate(
                problem + " (member below target known)", "incumbent", v, v, 0, 0.0)

        def stop(lower, upper, found):
            return upper < target or lower >= target

        lower, it = self._rounds(problem, stop, MAX_ROUNDS)
        seconds = time.perf_counter() - t0
        if self.best_value < target:
            v = float(self.best_value)
            return (self.best_support.copy(), v,
                    Certificate(problem + " (member below target found)",
                                f"{self.label} + exact rescoring", v, v, it, seconds))
        return None, None, Certificate(problem + " (bound >= target proved)",
                                       f"{self.label} bound",
                                       float(min(lower, target)), float(target), it, seconds)
