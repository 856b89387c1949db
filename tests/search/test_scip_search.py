"""search="scip": formulation (9) solved by SCIP (pyscipopt), an independent exact solver.

SCIP's answers are checked against enumeration and against the default search on small
problems whose columns share one common factor (correlation 0.7), with the ball active
and inactive and with and without always-in columns: the same next-best supports, top-R
list and mistake-class minima, and closed certificates whose upper end is the package's
exact score. SCIP is exact but slow on this model (seconds per solve at p = 15), so the
problems are small and few.
"""
import numpy as np
import pandas as pd
import pytest

from dpsubset import Search, SearchTimeout, dp_best_subset, Ball
from dpsubset.scores.least_squares import LeastSquaresScorer
from dpsubset.search.enumeration import mistakes_by_enumeration, top_r_by_enumeration
from dpsubset.search.exact import SubsetSearch, check_search, default_R

pytest.importorskip("pyomo.environ", reason="pyomo is not installed (pip install 'dpsubset[test]')")
pytest.importorskip("pyscipopt", reason="pyscipopt is not installed (pip install 'dpsubset[scip]')")
from dpsubset.search.pyomo_search import SCIP_SOLVER, PyomoSearch  # noqa: E402


def _problem(seed, p=12, s=3, r=None, forced=True, n=120):
    """Columns with one common factor (pairwise correlation 0.7); a small r makes the
    ball active at the best supports."""
    rng = np.random.default_rng(seed)
    f = rng.normal(size=(n, 1))
    X = np.clip(np.sqrt(0.7) * f + np.sqrt(0.3) * rng.normal(size=(n, p)), -2, 2)
    beta = np.zeros(p)
    beta[rng.choice(p, s, replace=False)] = rng.uniform(0.3, 1.0, s)
    y = np.clip(X @ beta + 0.2 + rng.normal(size=n), -4, 4)
    r = 2.0 if r is None else r  # 2: the ball is inactive at the best supports
    F = np.ones((n, 1)) if forced else None
    return LeastSquaresScorer(X, y, float(rng.uniform(0.5, 2)), r, F), s


def _ball_active(sc, S):
    _, beta = sc.fit(np.asarray(S)[None, :])
    return np.linalg.norm(beta) >= sc.r * (1 - 1e-9)


@pytest.mark.parametrize("seed,p,s,r,forced", [(0, 10, 2, None, True), (1, 10, 3, 0.15, False),
                                               (2, 11, 4, 0.15, True)])
def test_scip_next_best_supports_match_enumeration(seed, p, s, r, forced):
    sc, s = _problem(seed, p=p, s=s, r=r, forced=forced)
    e = top_r_by_enumeration(sc, s, 2)
    assert _ball_active(sc, e.supports[0]) == (r is not None)
    ps = PyomoSearch(sc, s, solver=SCIP_SOLVER)
    for k in range(2):
        S, v, cert = ps.solve(f"support {k + 1}")
        np.testing.assert_array_equal(S, e.supports[k])
        assert v == pytest.approx(e.scores[k], rel=1e-12)
        assert cert.closed and cert.method == "scip + exact rescoring", cert
        assert cert.upper == float(sc.score(S[None, :])[0])  # rescored, not SCIP's objective
        ps.exclude(S)


@pytest.mark.parametrize("seed,s,r", [(3, 3, None), (4, 3, 0.15)])
def test_subset_search_scip_matches_enumeration_and_auto(seed, s, r, monkeypatch):
    # Without the analytic shortcut the best support (and each class subproblem's)
    # comes from SCIP.
    monkeypatch.setattr(SubsetSearch, "_certify_local_optimum", lambda self, *a: None)
    sc, s = _problem(seed, p=10, s=s, r=r, forced=seed % 2 == 1)
    R = default_R(sc.p, s)
    scip = SubsetSearch(sc, s, search="scip")
    t, e = scip.top_r(R), top_r_by_enumeration(sc, s, R)
    np.testing.assert_array_equal(t.supports, e.supports)
    np.testing.assert_allclose(t.scores, e.scores, rtol=1e-12)
    auto = SubsetSearch(sc, s, search="auto").top_r(R)  # enumeration at this size
    np.testing.assert_array_equal(t.supports, auto.supports)
    m, me = scip.mistake_classes(), mistakes_by_enumeration(sc, s)
    for k in m.open_classes:  # classes the lazy draw would only bracket: solve them
        m.close(k)
    np.testing.assert_allclose(m.scores, me.scores, rtol=1e-12)
    assert m.second_best == pytest.approx(me.second_best, rel=1e-12)
    certs = t.certificates + m.certificates
    assert all(c.closed for c in certs)
    assert any(c.method.startswith("scip") for c in certs)


def test_dp_best_subset_with_scip_agrees_with_auto():
    rng = np.random.default_rng(5)
    n, p = 200, 10
    f = rng.normal(size=(n, 1))
    X = np.clip(np.sqrt(0.7) * f + np.sqrt(0.3) * rng.normal(size=(n, p)), -2, 2) / 2
    y = np.clip(X[:, :3].sum(axis=1) + 0.3 * rng.normal(size=n), -2, 2)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)]).assign(y=y)
    kw = dict(eps=1.0, s=3, bounds=(1, 2), ball=dict(r=0.5, lam=1.0), random_state=3)
    with pytest.warns(Warning):  # diagnostics=True
        res, diag = dp_best_subset("y ~ .", df, search=Search(route="scip", diagnostics=True), **kw)
    with pytest.warns(Warning):
        res0, diag0 = dp_best_subset("y ~ .", df, search=Search(diagnostics=True), **kw)
    assert diag.candidate_supports == diag0.candidate_supports
    np.testing.assert_allclose(diag.candidate_scores, diag0.candidate_scores, rtol=1e-12)
    assert res.support == res0.support  # same candidates, same seed: the same release
    assert all(c["closed"] for c in diag.solves)


def test_nonprivate_and_cli_take_scip(tmp_path, monkeypatch):
    from dpsubset.interfaces.cli import build_parser
    from dpsubset.nonprivate import best_subset_nonprivate
    monkeypatch.setattr(SubsetSearch, "_certify_local_optimum", lambda self, *a: None)
    rng = np.random.default_rng(6)
    df = pd.DataFrame(rng.normal(size=(80, 9)), columns=[f"x{j}" for j in range(9)])
    df["y"] = df.x1 - df.x4 + 0.5 * rng.normal(size=80)
    with pytest.warns(Warning):
        # (a moderate r: with the default r = 1e6 the cones are badly scaled for SCIP)
        a = best_subset_nonprivate("y ~ .", df, 2, search="scip", ball=Ball(r=5.0, lam=0.01))
    with pytest.warns(Warning):
        b = best_subset_nonprivate("y ~ .", df, 2, search="enumeration", ball=Ball(r=5.0, lam=0.01))
    assert a.support == b.support == ["x1", "x4"]
    assert any(c.method.startswith("scip") for c in a.certificates)
    args = build_parser().parse_args(["fit", "d.csv", "--formula", "y ~ .", "--eps", "1",
                                      "--s", "2", "--search", "scip"])
    assert args.search == {"name": "scip"}  # the route, as the leading word of --search


def test_scip_settings_are_checked_before_the_data():
    assert check_search("scip", None, None, "squared") == (SCIP_SOLVER, {})
    assert check_search("scip", None, {"limits/nodes": 10}, "squared")[1] == {"limits/nodes": 10}
    with pytest.raises(ValueError, match="solver="):
        check_search("scip", "gurobi_direct", None, "squared")
    with pytest.raises(ValueError, match="loss='squared'"):
        check_search("scip", None, None, "huber")
    with pytest.raises(ValueError, match="solver"):  # raised before the data are read
        dp_best_subset("y ~ .", None, eps=1.0, s=2, search=Search(route="scip", solver="gurobi_direct"))
    # Unknown SCIP parameters and bad values: refused before the data are read, even
    # where the search would certify without calling SCIP (they were accepted silently).
    with pytest.raises(ValueError, match="'limits/nodez' is not a SCIP parameter.*limits/nodes"):
        check_search("scip", None, {"limits/nodez": 10}, "squared")
    with pytest.raises(ValueError, match="'limits/nodes' does not accept 'many'"):
        check_search("scip", None, {"limits/nodes": "many"}, "squared")
    with pytest.raises(ValueError, match="not a SCIP parameter"):
        dp_best_subset("y ~ .", None, eps=1.0, s=2, search=Search(route="scip", solver_options={"gap": 0.1}))


def test_scip_time_limit_fails_closed():
    # p = 60, s = 6 with the ball active takes SCIP about 11 s on an idle machine, so a
    # 1 s limit stops SCIP itself (its own time-limit status), with a wide margin; at
    # p = 15 SCIP can finish inside a fraction of a second and the test would be flaky.
    sc, s = _problem(7, p=60, s=6, r=0.15)
    ps = PyomoSearch(sc, s, solver=SCIP_SOLVER, time_limit=1.0)
    with pytest.raises(SearchTimeout, match="nothing was released"):
        ps.solve()
    # A deadline already past is refused before the solver is called.
    ps = PyomoSearch(sc, s, solver=SCIP_SOLVER, time_limit=0.0)
    with pytest.raises(SearchTimeout, match="nothing was released"):
        ps.solve()
    assert ps.n_solves == 0
