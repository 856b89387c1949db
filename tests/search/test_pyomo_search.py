"""search="pyomo": formulation (9) through Pyomo and an MIQCP solver (Gurobi from gurobipy).

The solver's answers are checked against enumeration and the default search: the same
best support, top-R list and mistake-class minima, with closed certificates whose upper
end is the package's exact score. Validation errors come before any data are read.
"""
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from dpsubset import Ball, Search, dp_best_subset
from dpsubset.scores.least_squares import LeastSquaresScorer
from dpsubset.search.enumeration import mistakes_by_enumeration, top_r_by_enumeration
from dpsubset.search.exact import SubsetSearch, default_R
from dpsubset.search.outer_approximation import SearchTimeout

pytest.importorskip("pyomo.environ", reason="pyomo is not installed (pip install 'dpsubset[test]')")
from dpsubset.search.pyomo_search import PyomoSearch, check_solver  # noqa: E402

SOLVER = "gurobi_persistent"
try:
    check_solver(SOLVER)
    _missing = None
except ValueError as err:  # pragma: no cover - the test extra installs gurobipy
    _missing = str(err)
needs_solver = pytest.mark.skipif(_missing is not None, reason=f"no MIQCP solver: {_missing}")


def _problem(seed, n=80, p=None, r=None, forced=True):
    """A random problem with p in 10..15 and s = 3; small r makes the ball active."""
    rng = np.random.default_rng(seed)
    p = int(rng.integers(10, 16)) if p is None else p
    s = 3
    X = np.clip(rng.normal(size=(n, p)), -1, 1)
    beta = np.zeros(p)
    beta[rng.choice(p, s, replace=False)] = rng.uniform(0.5, 1.5, s)
    y = np.clip(X @ beta + 0.3 + rng.normal(size=n) * rng.uniform(0.3, 2), -3, 3)
    r = rng.uniform(0.3, 3) if r is None else r
    F = np.ones((n, 1)) if forced else None
    return LeastSquaresScorer(X, y, rng.uniform(0.3, 3), r, F), s


def _ball_active(sc, S):
    _, beta = sc.fit(np.asarray(S)[None, :])
    return np.linalg.norm(beta) >= sc.r * (1 - 1e-9)


@needs_solver
@pytest.mark.parametrize("seed,r", [(0, None), (1, None), (2, 0.2), (3, 0.2), (4, 0.5), (5, None)])
def test_next_best_by_no_good_rows_matches_enumeration(seed, r):
    sc, s = _problem(seed, r=r, forced=seed % 2 == 0)
    e = top_r_by_enumeration(sc, s, 5)
    if r == 0.2:
        assert _ball_active(sc, e.supports[0])
    ps = PyomoSearch(sc, s, solver=SOLVER)
    for k in range(5):
        S, v, cert = ps.solve(f"support {k + 1}")
        np.testing.assert_array_equal(S, e.supports[k])
        assert v == pytest.approx(e.scores[k], rel=1e-12)
        assert cert.closed, cert
        # the upper end is the package's exact score, not the solver's objective
        assert cert.upper == float(sc.score(S[None, :])[0])
        ps.exclude(S)


@needs_solver
@pytest.mark.parametrize("seed", range(4))
def test_class_rows_give_the_class_minima(seed):
    sc, s = _problem(seed, r=0.3 if seed % 2 else None)
    me = mistakes_by_enumeration(sc, s)
    S1 = me.supports[0]
    for k in range(1, s + 1):
        ps = PyomoSearch(sc, s, solver=SOLVER)
        ps.add_constraint(S1, s - k, s - k)
        S, v, cert = ps.solve(f"class {k}")
        np.testing.assert_array_equal(S, me.supports[k])
        assert cert.closed
        # the bound form used by the lazy draw: above and below the class minimum
        U, u, c_hi = ps.solve("above", target=v * (1 - 1e-6))
        assert U is None and c_hi.closed and c_hi.lower >= v * (1 - 1e-6)
        U, u, c_lo = ps.find_below(v * (1 + 1e-6), "below")
        np.testing.assert_array_equal(U, S)


@needs_solver
def test_find_below_proves_nothing_is_below():
    sc, s = _problem(7, r=0.3)
    e = top_r_by_enumeration(sc, s, 1)
    ps = PyomoSearch(sc, s, solver=SOLVER)
    U, u, cert = ps.find_below(e.scores[0], "below the best")
    assert U is None and cert.closed
    ps.exclude(e.supports[0])
    with pytest.raises(ValueError, match="no support"):
        ps.add_constraint(e.supports[0], 3, 3)  # only the excluded support is left
        ps.solve()


@needs_solver
@pytest.mark.parametrize("seed", range(8))
def test_subset_search_pyomo_matches_default_and_enumeration(seed, monkeypatch):
    calls = []
    solve_once = PyomoSearch._solve_once
    monkeypatch.setattr(PyomoSearch, "_solve_once",
                        lambda self, *a: calls.append(1) or solve_once(self, *a))
    force = seed % 2 == 1
    if force:
        # Without the analytic shortcut every best support (of the whole problem and
        # of each class subproblem) comes from the solver.
        monkeypatch.setattr(SubsetSearch, "_certify_local_optimum", lambda self, *a: None)
    sc, s = _problem(seed, r=0.3 if seed % 3 == 0 else None)
    R = default_R(sc.p, s)
    ps = SubsetSearch(sc, s, search="pyomo", solver=SOLVER)
    oa = SubsetSearch(sc, s, search="outer_approximation")
    t, t_oa, e = ps.top_r(R), oa.top_r(R), top_r_by_enumeration(sc, s, R)
    np.testing.assert_array_equal(t.supports, e.supports)
    np.testing.assert_array_equal(t.supports, t_oa.supports)
    np.testing.assert_allclose(t.scores, e.scores, rtol=1e-12)
    m, me = ps.mistake_classes(), mistakes_by_enumeration(sc, s)
    for k in m.open_classes:  # classes the lazy draw would only bracket: solve them
        m.close(k)
    np.testing.assert_allclose(m.scores, me.scores, rtol=1e-12)
    assert m.second_best == pytest.approx(me.second_best, rel=1e-12)
    assert all(c.closed for c in t.certificates + m.certificates)
    if force:
        assert len(calls) >= 1 + sum(k > 2 for k in range(s + 1))


@needs_solver
def test_dp_best_subset_with_pyomo():
    rng = np.random.default_rng(0)
    n, p = 300, 12
    X = rng.uniform(-1, 1, size=(n, p))
    y = np.clip(X[:, :3].sum(axis=1) + 0.3 * rng.normal(size=n), -3, 3)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)]).assign(y=y)
    kw = dict(eps=1.0, s=3, bounds=(1, 3), ball=Ball(r=1.0), random_state=3)
    with pytest.warns(Warning):
        res, diag = dp_best_subset("y ~ .", df, search=Search(route="pyomo", solver=SOLVER, diagnostics=True), **kw)
    with pytest.warns(Warning):
        res0, diag0 = dp_best_subset("y ~ .", df, search=Search(diagnostics=True), **kw)
    assert diag.candidate_supports == diag0.candidate_supports
    np.testing.assert_allclose(diag.candidate_scores, diag0.candidate_scores, rtol=1e-12)
    assert all(c["closed"] for c in diag.solves)


@needs_solver
def test_nonprivate_best_subset_with_pyomo():
    from dpsubset.nonprivate import best_subset_nonprivate
    rng = np.random.default_rng(5)
    n, p = 200, 12
    X = rng.normal(size=(n, p))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
    df["y"] = X[:, [1, 4, 7]].sum(axis=1) + rng.normal(size=n)
    with pytest.warns(Warning):
        a = best_subset_nonprivate("y ~ .", df, 3, search=Search(route="pyomo", solver=SOLVER))
    with pytest.warns(Warning):
        b = best_subset_nonprivate("y ~ .", df, 3, search="outer_approximation")
    assert list(a.support) == list(b.support) == ["x1", "x4", "x7"]


# ------------------------------------------------------------ validation
class _Unreadable:
    """Data that fail loudly if anything tries to read them."""

    def __getattr__(self, name):
        raise AssertionError("the data were read before the arguments were checked")


def test_unavailable_solver_is_rejected_before_the_data():
    with pytest.raises(ValueError, match=r"solver='no_such_solver' is not available.*pip install"):
        dp_best_subset("y ~ .", _Unreadable(), eps=1, s=2, bounds=(1, 1), search=Search(route="pyomo", solver="no_such_solver"))


@pytest.mark.parametrize("kwargs,match", [
    (dict(search="bogus"), "Search.route must be one of"),
    (dict(search=dict(solver="gurobi_direct")), "only used with search='pyomo'"),
    (dict(search=dict(route="auto", solver_options={"TimeLimit": 1})), "only used with search='pyomo'"),
    (dict(search="pyomo", loss="huber"), "loss='squared'"),
    (dict(search=dict(route="pyomo", solver="")), "Pyomo solver name"),
    (dict(search=dict(route="pyomo", solver=3)), "Pyomo solver name"),
])
def test_search_arguments_are_checked_first(kwargs, match):
    with pytest.raises(ValueError, match=match):
        dp_best_subset("y ~ .", _Unreadable(), eps=1, s=2, bounds=(1, 1), **kwargs)


def test_solver_options_must_be_a_mapping():
    with pytest.raises(TypeError, match="solver_options"):
        dp_best_subset("y ~ .", _Unreadable(), eps=1, s=2, bounds=(1, 1), search=Search(route="pyomo", solver_options=["MIPGap", 0]))


def test_missing_pyomo_gives_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyomo.environ", None)
    with pytest.raises(ValueError, match=r"needs Pyomo.*dpsubset\[pyomo\]"):
        check_solver("gurobi_direct")


def test_subset_search_checks_the_solver():
    sc, s = _problem(0)
    with pytest.raises(ValueError, match="not available"):
        SubsetSearch(sc, s, search="pyomo", solver="no_such_solver")
    with pytest.raises(ValueError, match="only used with search='pyomo'"):
        SubsetSearch(sc, s, solver="gurobi_direct")


@needs_solver
def test_time_limit_fails_closed():
    sc, s = _problem(1)
    ps = PyomoSearch(sc, s, solver=SOLVER, time_limit=1e-9)
    with pytest.raises(SearchTimeout, match="nothing was released"):
        ps.solve()


def test_package_does_not_import_pyomo():
    code = ("import sys, numpy as np, pandas as pd, dpsubset\n"
            "rng = np.random.default_rng(0)\n"
            "df = pd.DataFrame(rng.uniform(-1, 1, (50, 5)), columns=list('abcde'))\n"
            "df['y'] = df.a + 0.1 * rng.normal(size=50)\n"
            "dpsubset.dp_best_subset('y ~ .', df, eps=1, s=2, bounds=(1, 2), random_state=0)\n"
            "assert 'pyomo' not in sys.modules and 'gurobipy' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)



@needs_solver
def test_progress_only_when_verbose(capsys):
    sc, s = _problem(2)
    PyomoSearch(sc, s, solver=SOLVER).solve("quiet")
    assert capsys.readouterr().err == ""
    PyomoSearch(sc, s, solver=SOLVER, verbose=True, name="pyomo").solve("loud")
    assert "pyomo: loud" in capsys.readouterr().err


@needs_solver
def test_solver_failure_is_reported_clearly(monkeypatch):
    sc, s = _problem(3)
    ps = PyomoSearch(sc, s, solver=SOLVER)

    def refuse(*a, **k):
        raise RuntimeError("Model too large for size-limited license")
    monkeypatch.setattr(ps.opt, "solve", refuse)
    with pytest.raises(RuntimeError, match=r"failed on 'best support' at p = .*Nothing was"):
        ps.solve("best support")
