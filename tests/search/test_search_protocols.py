"""What the exact search needs of a scorer (dpsubset.search.protocols), and the layout of
dpsubset/search: the protocols both scorers satisfy, routes chosen by isinstance, the
stage's exports, the one place for mistakes and one-swap pairs, and no import cycle."""
import ast
import itertools
import pathlib

import numpy as np
import pytest

import dpsubset.search as search
from dpsubset.scores.convex import ConvexLossScorer
from dpsubset.scores.least_squares import LeastSquaresScorer
from dpsubset.search import limits
from dpsubset.search.enumeration import top_r_by_enumeration
from dpsubset.search.exact import SubsetSearch
from dpsubset.search.neighbourhood import count_mistakes, swap_pairs
from dpsubset.search.protocols import (ClassBoundScorer, RestrictableScorer, Scorer,
                                       SquaredLossScorer)

SEARCH_DIR = pathlib.Path(search.__file__).parent


def _data(seed=0, n=80, p=9):
    rng = np.random.default_rng(seed)
    X = np.clip(rng.normal(size=(n, p)), -1, 1)
    y = np.clip(X[:, :3].sum(axis=1) + rng.normal(size=n), -2, 2)
    return X, y


def _scorers():
    X, y = _data()
    n = len(y)
    ls = LeastSquaresScorer(X, y, 1.0, 1.5, np.ones((n, 1)))
    Z = np.column_stack([np.ones(n), X])
    gram = LeastSquaresScorer.from_gram(Z.T @ Z, Z.T @ y, float(y @ y), n, 1.0, 1.5, k_forced=1)
    logistic = ConvexLossScorer(X, np.where(y > 0, 1.0, -1.0), 1.0, 1.5, np.ones((n, 1)),
                                loss="logistic")
    huber = ConvexLossScorer(X, y, 1.0, 1.5, loss="huber")
    return dict(least_squares=ls, gram=gram, logistic=logistic, huber=huber)


@pytest.mark.parametrize("name", ["least_squares", "gram", "logistic", "huber"])
def test_both_scorers_satisfy_the_search_protocols(name):
    sc = _scorers()[name]
    assert isinstance(sc, Scorer)
    assert isinstance(sc, ClassBoundScorer)
    squared = name in ("least_squares", "gram")
    # The least-squares extras (second moments, restriction) are the squared loss's only.
    assert isinstance(sc, SquaredLossScorer) is squared
    assert isinstance(sc, RestrictableScorer) is squared


def test_a_scorer_without_class_hooks_takes_the_other_routes():
    # Only the Scorer protocol (no class bounds, no two-swap, no moments): the search
    # certifies by outer approximation and still returns the exact top-R list.
    ls = _scorers()["least_squares"]

    class Plain:
        loss = "squared"

        def __init__(self, inner):
            for a in ("p", "n", "k_forced", "lam", "r", "X", "y", "forced"):
                setattr(self, a, getattr(inner, a))
            self._inner = inner

        n_scored = property(lambda self: self._inner.n_scored)

        def score(self, supports):
            return self._inner.score(supports)

        def fit(self, supports):
            return self._inner.fit(supports)

        def neighbourhood(self, support):
            return self._inner.neighbourhood(support)

        def cut(self, support):
            return self._inner.cut(support)

    plain = Plain(ls)
    assert isinstance(plain, Scorer) and not isinstance(plain, ClassBoundScorer)
    assert not isinstance(plain, SquaredLossScorer)
    s, R = 3, 12
    got = SubsetSearch(plain, s, search="outer_approximation").top_r(R)
    np.testing.assert_array_equal(got.supports, top_r_by_enumeration(ls, s, R).supports)
    assert not any("class bounds" in c.method or "rank-two" in c.method
                   for c in got.certificates)
    with pytest.raises(ValueError, match="loss='squared'"):
        SubsetSearch(plain, s, search="branch_and_bound")  # needs the second moments


def test_something_that_is_not_a_scorer_is_refused_by_name():
    with pytest.raises(TypeError, match="dpsubset.search.protocols.Scorer"):
        SubsetSearch(object(), 3)


def test_no_attribute_probes_on_the_scorer_in_search():
    # The routes ask for a protocol with isinstance, never hasattr/getattr on the scorer.
    for path in SEARCH_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("hasattr", "getattr") and node.args):
                target = ast.unparse(node.args[0])
                assert "scorer" not in target and target not in ("sc", "self"), \
                    f"{path.name}:{node.lineno}: {ast.unparse(node)}"


def test_search_exports_its_stops_and_never_imports_the_scores():
    assert search.SearchTimeout is limits.SearchTimeout
    assert search.SearchMemoryLimit is limits.SearchMemoryLimit
    assert issubclass(search.SearchMemoryLimit, search.SearchTimeout)
    for name in search.__all__:
        assert hasattr(search, name), name
    # The scorer is passed in: no module of the search imports the scores.
    for path in SEARCH_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                assert not (node.level >= 2 and (node.module or "").startswith("scores")), path.name
                assert not (node.module or "").startswith("dpsubset.scores"), path.name
            elif isinstance(node, ast.Import):
                assert not any(a.name.startswith("dpsubset.scores") for a in node.names), path.name


def _imports(path):
    """Modules of dpsubset/search imported by ``path`` (relative imports only)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            out.add(node.module.split(".")[0])
    return out


def test_no_import_cycle_inside_search():
    graph = {p.stem: _imports(p) for p in SEARCH_DIR.glob("*.py") if p.stem != "__init__"}
    # enumeration -> limits, never back (ENUMERATION_LIMIT lives in limits).
    assert "enumeration" not in graph["limits"]
    assert limits.ENUMERATION_LIMIT == search.enumeration.ENUMERATION_LIMIT

    def reach(a, seen):
        for b in graph.get(a, ()):
            if b not in seen:
                seen.add(b)
                reach(b, seen)
        return seen

    for mod in graph:
        assert mod not in reach(mod, set()), f"import cycle through {mod}"


def test_search_modules_stay_small():
    for path in SEARCH_DIR.glob("*.py"):
        assert len(path.read_text().splitlines()) <= 800, path.name


@pytest.mark.parametrize("seed", range(5))
def test_mistakes_and_swap_pairs_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    p, s = int(rng.integers(5, 10)), int(rng.integers(1, 4))
    center = np.sort(rng.choice(p, s, replace=False))
    supports = np.array(list(itertools.combinations(range(p), s)))
    want = np.array([len(set(S) - set(center)) for S in supports])
    np.testing.assert_array_equal(count_mistakes(supports, center), want)
    neighbours = supports[want == 1]
    rng.shuffle(neighbours)
    gone, added = swap_pairs(center, neighbours)
    for S, g, a in zip(neighbours, gone, added):
        assert set(center) - set(S) == {g} and set(S) - set(center) == {a}
