"""Bounded memory in the exact search (issue 23, item 6).

The best-first branch and bound once kept, for every open node, its free set and the
dense vectors of its dual point (arrays of length p): at p = 10,000 it grew past 20 GB
in minutes. These tests check that

- an open node is kept compact (O(s) numbers, its excluded columns and a sparse dual
  point), and its estimated size is held in the search's MemoryBudget;
- past half the memory limit the search dives depth first, and the list it returns is
  still exactly enumeration's;
- past the limit it stops with SearchMemoryLimit (a SearchTimeout), releasing nothing,
  and ``dp_best_subset(memory_limit=...)`` says so without counts or scores;
- the other structures that grow with the work are held in the same budget: the
  column cache of the moments, the outer approximation's cuts, the class search's
  stack and pending leaves (the latter also capped).
"""
import math

import numpy as np
import pandas as pd
import pytest

import dpsubset.selection.exact as selection
from dpsubset import LowUtilityWarning, SearchMemoryLimit, SearchTimeout, dp_best_subset, Ball, Search
from dpsubset.interfaces.cli import main
from dpsubset.scores.least_squares import LeastSquaresScorer
from dpsubset.search import branch_bound as bb
from dpsubset.search import class_search
from dpsubset.search.branch_bound import branch_and_bound
from dpsubset.search.enumeration import mistakes_by_enumeration, top_r_by_enumeration
from dpsubset.search.exact import SubsetSearch
from dpsubset.search.limits import MemoryBudget, explain_timeout
from dpsubset.runtime.limits import DEFAULT_MEMORY_SHARE, physical_memory, resolve_memory_limit
from dpsubset.search.outer_approximation import CUT_BYTES, OuterApproximation
from dpsubset.search.perspective import DualPoint, Moments


def _noise(seed=2, n=60, p=20, s=4):
    """Pure noise, an inactive ball (r = 10) and a small ridge: the relaxation is weak
    and the branch and bound needs about a thousand nodes with leaf_max=1."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, p))
    y = 0.3 * X[:, 0] + rng.normal(size=n)
    return LeastSquaresScorer(X, y, 1.0, 10.0), s


def _weak(sc):
    """The moments without the diagonal shift, whose bounds would settle these tall
    problems in a few nodes: the tests below need a long search."""
    return Moments.from_scorer(sc, shift=False)


def test_dives_keep_the_list_exact_in_a_tenth_of_the_memory():
    sc, s = _noise()
    free = branch_and_bound(sc, s, keep=5, leaf_max=1, moments=_weak(sc))
    assert free.nodes > 500 and free.dived == 0
    limit = free.peak_open_bytes / 10
    budget = MemoryBudget(limit)
    dived = branch_and_bound(sc, s, keep=5, leaf_max=1, memory=budget, moments=_weak(sc))
    assert dived.dived > 0 and dived.peak_open_bytes <= limit
    np.testing.assert_array_equal(dived.supports, free.supports)
    np.testing.assert_array_equal(dived.scores, free.scores)
    e = top_r_by_enumeration(sc, s, 5)
    np.testing.assert_array_equal(dived.supports, e.supports)
    assert budget.total == 0  # released when the search ends


def test_past_the_limit_the_branch_and_bound_stops():
    sc, s = _noise()
    budget = MemoryBudget(20_000)
    with pytest.raises(SearchMemoryLimit) as err:
        branch_and_bound(sc, s, keep=5, leaf_max=1, memory=budget, problem="best support",
                         moments=_weak(sc))
    assert isinstance(err.value, SearchTimeout)  # callers that catch time-outs catch it
    text = str(err.value)
    assert "memory_limit" in text and "nothing is released" in text
    assert "node" not in text and "gap" not in text  # no counts, no gap
    assert err.value.problem == "best support" and err.value.gap is None
    assert budget.total == 0


def test_open_nodes_are_compact(monkeypatch):
    # A queued node drops its free set and keeps its dual point in sparse form (O(s)
    # numbers plus the excluded columns, not arrays of length p) once it is out of the
    # window of the nodes queued last that are still open (WHOLE_BYTES), kept whole.
    sc, s = _noise(p=40, n=80)
    monkeypatch.setattr(bb, "WHOLE_BYTES", 32 * (16 * sc.p + bb.NODE_OVERHEAD))  # 32 whole
    seen = []
    push = bb.heapq.heappush

    def spy(heap, entry):
        seen.append(heap)
        push(heap, entry)

    monkeypatch.setattr(bb.heapq, "heappush", spy)
    with pytest.raises(bb.NodeBudgetExceeded):  # (200 nodes are enough to look at)
        branch_and_bound(sc, s, keep=3, leaf_max=1, max_nodes=200)
    open_nodes = seen[-1]  # the queue when the search stopped
    assert len(open_nodes) > 100
    compact = [e for e in open_nodes if not isinstance(e[3], DualPoint)]
    assert len(open_nodes) - len(compact) <= 32  # the window of whole nodes
    for entry in compact:
        node, point = entry[2], entry[3]
        assert node.free is None and node.free_center is None and node.free_other is None
        assert len(node.fixed) <= s and len(node.out) < sc.p
        c, idx, val = point  # (c, support of b, values), not a DualPoint with 2 P floats
        assert len(idx) == len(val) < sc.p


def test_subset_search_equals_enumeration_under_a_small_limit(monkeypatch):
    # The whole SubsetSearch (best support by branch and bound, top-R) with a limit
    # small enough that every branch and bound dives: the answers are enumeration's.
    sc, s = _noise(seed=1)
    monkeypatch.setattr(SubsetSearch, "_certify_local_optimum", lambda self, *a: None)
    monkeypatch.setattr(SubsetSearch, "_node_budget", lambda self: None)
    orig = bb.branch_and_bound
    runs = []

    def small_leaves(*args, **kw):
        res = orig(*args, leaf_max=1, **kw)
        runs.append(res)
        return res

    monkeypatch.setattr("dpsubset.search.exact.branch_and_bound", small_leaves)
    ss = SubsetSearch(sc, s, search="branch_and_bound", memory_limit=60_000)
    R = 12
    t = ss.top_r(R)
    np.testing.assert_array_equal(t.supports, top_r_by_enumeration(sc, s, R).supports)
    assert runs and any(r.dived for r in runs)


def test_column_cache_is_bounded_and_held():
    # Without a stored Gram matrix the moments cache the columns of X'X/n they compute,
    # least recently used out, within COLUMN_CACHE_SHARE of the limit.
    rng = np.random.default_rng(0)
    n, p = 40, 60
    X = rng.normal(size=(n, p))
    sc = LeastSquaresScorer(X, X[:, 0] + rng.normal(size=n), 1.0, 1.0)
    sc._gram = None
    P = sc.k_forced + p
    budget = MemoryBudget(8 * 8 * P * 10)  # a share of 1/8: room for 10 columns
    mom = Moments.from_scorer(sc, memory=budget)
    assert mom.cache_columns == 10
    G = X.T @ X / n
    for start in range(0, 50, 7):
        idx = np.arange(start, start + 7)
        np.testing.assert_allclose(mom.cols(idx), G[:, idx], rtol=1e-12, atol=1e-14)
        assert len(mom._cache) <= 10 and budget.total <= 8 * P * 10
    assert len(mom.cols(np.arange(20))[0]) == 20  # one request may need more, briefly


def test_outer_approximation_cuts_are_held_in_the_budget():
    sc, s = _noise()
    p = sc.p
    budget = MemoryBudget(CUT_BYTES * (p + 2 * (p + 1)))  # the size row and two cuts
    oa = OuterApproximation(sc, s, memory=budget)
    oa.add_cut(np.arange(s))
    oa.add_cut(np.arange(1, s + 1))
    with pytest.raises(SearchMemoryLimit, match="outer approximation"):
        oa.add_cut(np.arange(2, s + 2))


def _class_problem(seed=3):
    rng = np.random.default_rng(seed)
    n, p, s = 80, 14, 4
    X = rng.uniform(-1, 1, (n, p))
    X[:, 1] += 0.7 * X[:, 0]
    y = X[:, :s] @ rng.normal(size=s) + rng.normal(size=n)
    sc = LeastSquaresScorer(X, y, 1.0, 10.0, np.ones((n, 1)))
    return sc, s


def test_class_search_pending_leaves_are_capped(monkeypatch):
    # More leaves than the cap waiting for an exact score: more are scored at once, and
    # the class minima are still enumeration's.
    sc, s = _class_problem()
    monkeypatch.setattr(class_search, "_PENDING_MAX", 3)
    monkeypatch.setattr(class_search, "_RESCORE_BATCH", 2)
    me = mistakes_by_enumeration(sc, s)
    for k in range(1, s + 1):
        S, v, _ = class_search.class_minimum(sc, me.supports[0], k, memory=MemoryBudget(1e9))
        assert v == pytest.approx(me.scores[k], rel=1e-12, abs=1e-15)


def test_class_search_stops_at_the_memory_limit():
    sc, s = _class_problem()
    S1 = mistakes_by_enumeration(sc, s).supports[0]
    budget = MemoryBudget(1_000)
    with pytest.raises(SearchMemoryLimit, match="mistake class 3"):
        class_search.class_minimum(sc, S1, 3, memory=budget)
    assert budget.total == 0


def test_resolve_memory_limit():
    total = physical_memory()
    assert total is None or resolve_memory_limit(None) == DEFAULT_MEMORY_SHARE * total
    assert resolve_memory_limit(math.inf) is None
    assert resolve_memory_limit(2e9) == 2e9
    for bad in (0, -1.0, float("nan"), "2GB", True, MemoryBudget(5.0)):
        with pytest.raises(ValueError, match="memory_limit must be a number of bytes"):
            resolve_memory_limit(bad)


def test_a_sub_search_shares_its_parents_memory_budget():
    scorer, s = _noise()
    budget = MemoryBudget(5e8)
    assert SubsetSearch(scorer, s, memory_limit=budget).memory is budget
    assert SubsetSearch(scorer, s, memory_limit=2e9).memory.limit == 2e9


def _frame(seed=0, n=80, p=40):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-0.5, 0.5, (n, p))
    y = np.clip(0.2 * X[:, 0] + 0.3 * rng.normal(size=n), -0.5, 0.5)
    return pd.DataFrame(X, columns=[f"x{j}" for j in range(p)]).assign(y=y)


def test_memory_limit_is_checked_before_the_data_are_read():
    for bad in (0, -5, float("nan"), "2GB", True):
        with pytest.raises(ValueError, match="memory_limit"):
            dp_best_subset("y ~ 0 + .", "not even a data frame", eps=1.0, s=3,
                           bounds=(0.5, 0.5), search=Search(memory_limit=bad))


def test_memory_limit_reaches_the_search(monkeypatch):
    seen = []
    init = SubsetSearch.__init__

    def spy(self, *args, **kwargs):
        init(self, *args, **kwargs)
        seen.append(self.memory.limit)

    monkeypatch.setattr(selection.SubsetSearch, "__init__", spy)
    df = _frame(p=10)
    dp_best_subset("y ~ 0 + .", df, eps=1.0, s=3, bounds=(0.5, 0.5), random_state=0)
    total = physical_memory()
    assert seen[-1] == (None if total is None else DEFAULT_MEMORY_SHARE * total)
    dp_best_subset("y ~ 0 + .", df, eps=1.0, s=3, bounds=(0.5, 0.5), random_state=0,
                   search=Search(memory_limit=math.inf))
    assert seen[-1] is None
    dp_best_subset("y ~ 0 + .", df, eps=1.0, s=3, bounds=(0.5, 0.5), random_state=0,
                   search=Search(memory_limit=3e9))
    assert seen[-1] == 3e9


@pytest.mark.filterwarnings("ignore", category=LowUtilityWarning)
def test_a_call_past_its_memory_limit_releases_nothing(monkeypatch):
    # p = 40, s = 4 of pure noise with the ball inactive: the branch and bound needs many
    # nodes (the cheap certificate is switched off so that it runs). A 20 kB limit stops it.
    monkeypatch.setattr(SubsetSearch, "_certify_local_optimum", lambda self, *a: None)
    df = _frame()
    with pytest.raises(SearchMemoryLimit) as info:
        dp_best_subset("y ~ 0 + .", df, eps=1.0, s=4, bounds=(0.5, 0.5), ball=Ball(r=10.0, lam=1.0),
                       search=Search(route="branch_and_bound", memory_limit=20_000), random_state=0)
    err = info.value
    text = str(err)
    assert isinstance(err, SearchTimeout) and err.gap is None
    assert "memory_limit = 19.5 kB" in text and "Nothing was released" in text
    assert "No random number had been drawn" in text
    assert "a larger memory_limit (now 19.5 kB)" in text and "larger time_limit" not in text
    assert "node" not in text and "gap" not in text


def test_explain_timeout_keeps_the_memory_stop():
    err = SearchMemoryLimit("memory_limit (1 kB) reached while solving 'best support' by "
                            "branch and bound; nothing is released", problem="best support")
    out = explain_timeout(err, time_limit=600.0, memory_limit=1024.0, random_draws=True, p=50,
                          s=5, method="mistakes")
    assert isinstance(out, SearchMemoryLimit)
    assert "within the memory limit" in str(out) and "best support" not in str(out)
    assert out.problem is None and out.gap is None


def test_cli_memory_limit(tmp_path, capsys, monkeypatch):
    # (the stop exits with status 3 and its message; the command once crashed there
    # with a NameError, SearchTimeout not being imported where it is caught)
    monkeypatch.setattr(SubsetSearch, "_certify_local_optimum", lambda self, *a: None)
    path = tmp_path / "d.csv"
    _frame().to_csv(path, index=False)
    with pytest.raises(SystemExit) as stop:
        main(["fit", str(path), "--formula", "y ~ 0 + .", "--eps", "1", "--s", "4",
              "--bounds", "0.5", "0.5", "--ball", "r=10", "--search", "branch_and_bound,memory_limit=20000",
              "--seed", "0"])
    assert stop.value.code == 3
    assert "--search memory_limit=" in capsys.readouterr().err  # the CLI names its own option


def test_single_precision_copy_of_x_is_held_and_released():
    # The Fenchel bounds' float32 copy of X (the screening pass) is held in the budget
    # while the duals live, released when they go, and skipped (every pass in double
    # precision) when the budget has no room left for it.
    import gc

    from dpsubset.scores.convex import ConvexLossScorer
    from dpsubset.search.fenchel import ConvexDuals

    rng = np.random.default_rng(4)
    n, p = 120, 10
    X = rng.uniform(-1, 1, (n, p))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    sc = ConvexLossScorer(X, y, 1.0, 1.0, None, loss="logistic")
    budget = MemoryBudget(10 ** 6)
    duals = ConvexDuals(sc, memory=budget)
    assert duals.X32 is not None and budget.total == duals.X32.nbytes == 4 * n * p
    del duals
    gc.collect()
    assert budget.total == 0
    budget.hold("open nodes", 10 ** 6 - 4 * n * p + 1)  # one byte short of room
    full = ConvexDuals(sc, memory=budget)
    assert full.X32 is None and budget.total == 10 ** 6 - 4 * n * p + 1
    # Held during a search and released with it.
    budget = MemoryBudget(10 ** 7)
    seen = []
    hold = budget.hold
    budget.hold = lambda key, nbytes, **kw: (seen.append(key[0]), hold(key, nbytes, **kw))
    res = branch_and_bound(sc, 3, keep=2, memory=budget)
    np.testing.assert_array_equal(res.supports, top_r_by_enumeration(sc, 3, 2).supports)
    gc.collect()
    assert "single-precision X" in seen and budget.total == 0
