"""The scores and refit stages after the split of issue 24: the scorers satisfy the search's
protocols, both enumerate the one-swap neighbourhood through one helper, and no module of
dpsubset/scores, dpsubset/refit or the losses exceeds 800 lines or has a function body over
120 lines."""
from __future__ import annotations

import ast
import pathlib

import numpy as np
import pytest

import dpsubset
from dpsubset.scores import ConvexLossScorer, LeastSquaresScorer
from dpsubset.scores.base import one_swap_neighbours

PKG = pathlib.Path(dpsubset.__file__).parent


def _scorers():
    rng = np.random.default_rng(4)
    n, p = 60, 8
    X = np.clip(rng.normal(size=(n, p)), -1, 1)
    y = np.clip(X[:, :2].sum(axis=1) + rng.normal(size=n), -2, 2)
    F = np.ones((n, 1))
    Z = np.column_stack([F, X])
    return dict(
        least_squares=LeastSquaresScorer(X, y, 1.0, 1.2, F),
        gram=LeastSquaresScorer.from_gram(Z.T @ Z, Z.T @ y, float(y @ y), n, 1.0, 1.2, k_forced=1),
        logistic=ConvexLossScorer(X, np.where(y > 0, 1.0, -1.0), 1.0, 1.2, F, loss="logistic"),
        huber=ConvexLossScorer(X, y, 1.0, 1.2, F, loss="huber"))


def test_scorers_satisfy_the_search_protocols():
    protocols = pytest.importorskip("dpsubset.search.protocols")
    for name, sc in _scorers().items():
        assert isinstance(sc, protocols.Scorer), name
        assert isinstance(sc, protocols.ClassBoundScorer), name
        squared = getattr(protocols, "SquaredLossScorer", None)
        if squared is not None:
            assert isinstance(sc, squared) == (name in ("least_squares", "gram")), name


def test_one_swap_neighbours_is_what_both_scorers_score():
    S = np.array([1, 4, 6])
    outside, sups, order = one_swap_neighbours(S[::-1], 8)
    assert list(outside) == [0, 2, 3, 5, 7]
    assert sups.shape == (15, 3) and np.all(np.diff(sups, axis=1) > 0)
    # row i q + j is S with position i replaced by outside[j]
    for i in range(3):
        for j, o in enumerate(outside):
            expect = np.sort(np.concatenate([np.delete(S, i), [o]]))
            assert list(sups[i * 5 + j]) == list(expect)
            unsorted = S.copy()
            unsorted[i] = o
            assert list(unsorted[order[i * 5 + j]]) == list(expect)
    for name, sc in _scorers().items():
        nb, vals = sc.neighbourhood(S)
        assert np.array_equal(nb, sups), name
        np.testing.assert_allclose(vals, sc.score(sups), rtol=1e-9, atol=1e-9)


def _files():
    return ([PKG / "losses.py", PKG / "defaults.py"] + sorted((PKG / "scores").glob("*.py"))
            + sorted((PKG / "refit").glob("*.py")))


@pytest.mark.parametrize("path", _files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_modules_and_functions_within_the_layout_limits(path):
    text = path.read_text()
    assert len(text.splitlines()) <= 800
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(
                    getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str):
                body = body[1:]
            if body:
                assert body[-1].end_lineno - body[0].lineno + 1 <= 120, node.name
