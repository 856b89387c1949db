"""verbose=True shows progress (stderr) inside the long loops of the exact search;
verbose=False writes nothing."""
import numpy as np
import pandas as pd
import pytest

from dpsubset import dp_best_subset
from dpsubset.scores.least_squares import LeastSquaresScorer
from dpsubset.search.enumeration import mistakes_by_enumeration, top_r_by_enumeration
from dpsubset.search.exact import SubsetSearch, default_R
from dpsubset.search.outer_approximation import OuterApproximation, progress


def _problem(seed=1, n=80, p=12, s=3):
    rng = np.random.default_rng(seed)
    X = np.clip(rng.normal(size=(n, p)), -1, 1)
    y = np.clip(X[:, :s].sum(axis=1) + rng.normal(size=n), -3, 3)
    return LeastSquaresScorer(X, y, 1.0, 1.0, np.ones((n, 1))), s


def _run_all_loops(verbose, monkeypatch):
    """Top-R and mistake classes with every loop forced to run: the best support by
    outer approximation, the top-R completion, and the class subproblems."""
    monkeypatch.setattr(SubsetSearch, "_certify_local_optimum", lambda self, *a: None)
    monkeypatch.setattr(SubsetSearch, "class_bounds",
                        lambda self, ks, target=None: {k: -np.inf for k in ks})
    sc, s = _problem()
    search = SubsetSearch(sc, s, search="outer_approximation", verbose=verbose)
    R = default_R(sc.p, s)
    t = search.top_r(R)
    m = search.mistake_classes()
    for k in m.open_classes:
        m.close(k)
    # The per-base subproblem loop (the route of classes the scorer's branch and bound
    # does not take) is called directly, whichever route the refiner chose.
    S3, v3, _ = search._class_by_subproblems(m.center, 3, "class 3")
    assert v3 == pytest.approx(m.scores[3], rel=1e-12)
    # progress reporting changes nothing in the results
    np.testing.assert_array_equal(t.supports, top_r_by_enumeration(sc, s, R).supports)
    np.testing.assert_allclose(m.scores, mistakes_by_enumeration(sc, s).scores, rtol=1e-12)


def test_search_loops_report_progress_only_when_verbose(capsys, monkeypatch):
    _run_all_loops(False, monkeypatch)
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""
    _run_all_loops(True, monkeypatch)
    err = capsys.readouterr().err
    assert "best support" in err  # outer-approximation iterations
    assert "top-R completion" in err  # completion rounds
    assert "mistake class 3: subproblems" in err  # the per-base loop
    assert "mistake class 3: branch and bound" in err  # the class closed by the draw


def test_outer_approximation_bar_shows_the_gap(capsys):
    sc, s = _problem(seed=4, p=14)
    oa = OuterApproximation(sc, s, verbose=True, name="oa", cuts_per_round=0)
    oa.add_cut(np.arange(s))
    oa.solve("best support")
    err = capsys.readouterr().err
    assert "oa: best support" in err and "gap=" in err


def test_progress_helper_is_a_no_op_when_quiet(capsys):
    bar = progress(False, desc="x", total=3)
    bar.update()
    bar.set_postfix(a=1)
    bar.close()
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("verbose", [False, True])
def test_dp_best_subset_progress(verbose, capsys):
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.uniform(-1, 1, size=(200, 8)), columns=[f"x{j}" for j in range(8)])
    df["y"] = np.clip(df.x0 + df.x1 + 0.3 * rng.normal(size=200), -3, 3)
    dp_best_subset("y ~ .", df, eps=1.0, s=2, bounds=(1, 3), random_state=0, verbose=verbose)
    err = capsys.readouterr().err
    assert (err != "") is verbose
