"""The branch and bound with perspective-relaxation bounds against enumeration.

dpsubset.search.perspective (node bounds) and dpsubset.search.branch_bound (the
search), and their wiring in SubsetSearch (search="branch_and_bound").
"""
import itertools
import time

import numpy as np
import pytest

from dpsubset.scores.least_squares import LeastSquaresScorer
from dpsubset.search import branch_bound as bb
from dpsubset.search.branch_bound import _enumerate, _make_node, branch_and_bound
from dpsubset.search.enumeration import (mistakes_by_enumeration, rank_supports, score_all,
                                         top_r_by_enumeration)
from dpsubset.search.exact import SubsetSearch
from dpsubset.search.outer_approximation import SearchTimeout
from dpsubset.search.perspective import DualPoint, Moments, NodeBound


def _problem(seed, p_range=(8, 15), s_range=(2, 5)):
    """A small problem: correlated columns (a common factor 0.6-0.9 or none), the ball
    binding (r = 0.1, 0.5) or not (r = 10), forced columns or not."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 120))
    p = int(rng.integers(*p_range))
    s = int(rng.integers(*s_range))
    factor = [0.0, 0.6, 0.9][seed % 3]
    X = rng.uniform(-1, 1, (n, p)) + factor * rng.normal(size=(n, 1))
    y = X[:, :s] @ rng.normal(size=s) + 0.5 * rng.normal(size=n)
    r = [0.1, 0.5, 10.0][(seed // 3) % 3]
    lam = [0.1, 1.0, 10.0][(seed // 9) % 3]
    forced = np.ones((n, 1)) if seed % 2 else None
    sc = LeastSquaresScorer(X, y, lam, r, forced)
    if seed % 4 == 3:
        sc._gram = None  # the route without a stored Gram matrix (columns from X)
    return sc, s, rng


def _random_point(mom, rng):
    b = rng.normal(size=mom.P) * rng.uniform(0.01, 1.0)
    c = float(rng.uniform(-0.5, 1.5))
    Gb = mom.cols(np.arange(mom.P)) @ b
    return DualPoint(c, b, c * mom.gy - Gb, float(b @ mom.gy), float(b @ Gb))


@pytest.mark.parametrize("seed", range(60))
def test_node_bound_is_below_every_completion(seed):
    # At a random node (columns fixed in, out, free; sometimes a family rule), the
    # bound at a random dual point and after ascent is <= the true minimum over the
    # node's completions (enumeration), and at the fit of the best completion it is
    # within the rounding allowance of being exact when the node is a single leaf.
    sc, s, rng = _problem(seed, p_range=(6, 11), s_range=(1, 4))
    mom = Moments.from_scorer(sc)
    S, v = score_all(sc, s)
    center, inside = None, None
    if seed % 3 == 0:
        center = S[np.argmin(v)]
        m = int(rng.integers(0, s + 1))
        inside = (s - m, s - m) if seed % 2 else (0, s - m)
    nb = NodeBound(mom, center)
    for _ in range(4):
        perm = rng.permutation(sc.p)
        n_in = int(rng.integers(0, s + 1))
        n_out = int(rng.integers(0, sc.p - s + 1))
        node = _make_node(np.sort(perm[:n_in]), np.sort(perm[n_in + n_out:]), s,
                          sc.k_forced, nb.in_center, inside)
        if node is None:
            continue
        comp = _enumerate(node, s)
        if not len(comp):
            continue
        true = float(sc.score(comp).min())
        tol = 1e-12 * max(1.0, true)
        pt = _random_point(mom, rng)
        assert nb.value(pt, node) <= true + tol
        bound, pt2, sel = nb.improve(pt, node, iters=30)
        assert bound <= true + tol
        assert nb.value(pt2, node) <= true + tol
        assert len(sel) == node.k
        # The fit of the best completion is its exact dual point: for a one-leaf
        # node the bound there is the score itself.
        best = comp[np.argmin(sc.score(comp))]
        leaf = _make_node(best, np.empty(0, dtype=np.intp), s, sc.k_forced, nb.in_center,
                          None)
        _, beta = sc.fit(best[None, :])
        pt3 = DualPoint.from_fit(mom, np.concatenate([np.arange(sc.k_forced),
                                                      sc.k_forced + best]), beta[0])
        np.testing.assert_allclose(nb.value(pt3, leaf), true, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("seed", range(36))
def test_branch_and_bound_top_list_and_best_equal_enumeration(seed):
    sc, s, rng = _problem(seed)
    S, v = score_all(sc, s)
    order = rank_supports(S, v)
    R = int(rng.integers(1, 25))
    res = branch_and_bound(sc, s, keep=R, leaf_max=int(rng.choice([1, 6, 60])))
    np.testing.assert_array_equal(res.supports, S[order[:R]])
    np.testing.assert_allclose(res.scores, v[order[:R]], rtol=1e-12)
    assert res.certificate.closed and res.certificate.method == "branch_and_bound"


@pytest.mark.parametrize("seed", range(18))
def test_branch_and_bound_class_minima_equal_enumeration(seed):
    sc, s, rng = _problem(seed)
    S, v = score_all(sc, s)
    S1 = S[rank_supports(S, v)[0]]
    mistakes = s - np.isin(S, S1).sum(axis=1)
    for k in range(1, min(s, sc.p - s) + 1):
        res = branch_and_bound(sc, s, center=S1, inside=(s - k, s - k), leaf_max=4)
        members = np.flatnonzero(mistakes == k)
        j = members[rank_supports(S[members], v[members])[0]]
        np.testing.assert_array_equal(res.supports[0], S[j])
        np.testing.assert_allclose(res.scores[0], v[j], rtol=1e-12)
    # A family with at least m mistakes and a cut-off: exactly its members below it.
    m = min(2, s)
    fam = np.flatnonzero(mistakes >= m)
    cut = float(np.quantile(v[fam], 0.3))
    res = branch_and_bound(sc, s, keep=1000, center=S1, inside=(0, s - m), cutoff=cut,
                           leaf_max=20)
    want = fam[v[fam] <= cut]
    want = want[rank_supports(S[want], v[want])]
    np.testing.assert_array_equal(res.supports, S[want])


def test_ties_are_kept_in_lexicographic_order():
    # Duplicated columns make exact ties: the list must match enumeration's
    # (score, then lexicographic) order, ties at the R-th place included.
    rng = np.random.default_rng(7)
    n = 60
    base = rng.uniform(-1, 1, (n, 5))
    X = np.hstack([base, base[:, [0, 1, 2]], base[:, [0]]])  # 9 columns, many twins
    y = base[:, :2] @ np.array([1.0, -0.7]) + 0.3 * rng.normal(size=n)
    for r in (0.2, 5.0):
        sc = LeastSquaresScorer(X, y, 1.0, r)
        S, v = score_all(sc, 2)
        # Exact ties in the scores (twins score identically, bit for bit).
        assert len(np.unique(v)) < len(v)
        order = rank_supports(S, v)
        for R in (1, 2, 3, 5, 8):
            res = branch_and_bound(sc, 2, keep=R, leaf_max=1)
            np.testing.assert_array_equal(res.supports, S[order[:R]])


def test_a_bound_that_is_too_high_is_caught(monkeypatch):
    # The comparison with enumeration can fail: raising every node bound above the
    # truth prunes the nodes holding the best supports, and the list goes wrong.
    sc, s, _ = _problem(4)
    S, v = score_all(sc, s)
    order = rank_supports(S, v)
    real = NodeBound.improve

    def too_high(self, *a, **k):
        bound, pt, sel = real(self, *a, **k)
        return bound + 0.5 * abs(bound) + 1.0, pt, sel

    monkeypatch.setattr(NodeBound, "improve", too_high)
    res = branch_and_bound(sc, s, keep=5, leaf_max=1)
    assert not np.array_equal(res.supports, S[order[:5]])


def test_branch_and_bound_from_sufficient_statistics():
    # The moments can come from (G, X'y, y'y) without X: same list.
    sc, s, _ = _problem(5)
    n = sc.n
    mom = Moments.from_gram(sc.X.T @ sc.X / n, sc.Xy, sc.yy, sc.lam, n, sc.r,
                            FF=sc.FF, XF=sc.XF, Fy=sc.Fy)
    a = branch_and_bound(sc, s, keep=7, moments=mom)
    b = branch_and_bound(sc, s, keep=7)
    np.testing.assert_array_equal(a.supports, b.supports)


def test_branch_and_bound_fails_closed_at_the_deadline():
    sc, s, _ = _problem(2)
    with pytest.raises(SearchTimeout, match="time limit") as err:
        branch_and_bound(sc, s, keep=3, leaf_max=1, deadline=time.perf_counter() - 1.0)
    # No scores in the message: only counts, times and a relative gap.
    assert "nothing is released" in str(err.value)


@pytest.mark.parametrize("binds", [True, False])
@pytest.mark.parametrize("seed", [1, 4, 10, 13])
def test_subset_search_branch_and_bound_equals_enumeration(seed, binds, monkeypatch):
    # SubsetSearch with search="branch_and_bound" (the local-optimum certificate
    # switched off, so that the branch and bound does the certifying, and the class
    # refiners forced onto it; with binds=False the exact class solves go to the
    # ridge-bound search): best, top-R and mistake classes as enumeration's.
    sc, s, rng = _problem(seed)
    monkeypatch.setattr(SubsetSearch, "_certify_local_optimum", lambda self, *a: None)
    monkeypatch.setattr(SubsetSearch, "_ball_binds", lambda self, S: binds)
    monkeypatch.setattr(sc, "class_lower_bounds",
                        lambda S, ks, target=None: {k: -np.inf for k in ks}, raising=False)
    ss = SubsetSearch(sc, s, search="branch_and_bound")
    R = 2 + (sc.p - s) * s + 5
    t = ss.top_r(R)
    e = top_r_by_enumeration(sc, s, R)
    np.testing.assert_array_equal(t.supports, e.supports)
    assert any(c.method == "branch_and_bound" for c in t.certificates)
    m = ss.mistake_classes()
    for k in list(m.open_classes):
        m.close(k)
    me = mistakes_by_enumeration(sc, s)
    np.testing.assert_allclose(m.scores, me.scores, rtol=1e-12)
    np.testing.assert_allclose(m.second_best, me.second_best, rtol=1e-12)


def test_auto_picks_branch_and_bound_for_least_squares():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 60))
    sc = LeastSquaresScorer(X, X[:, 0] + rng.normal(size=50), 1.0, 1.0)
    assert SubsetSearch(sc, 5).search == "branch_and_bound"
    assert SubsetSearch(sc, 2).search == "enumeration"
    assert bb.supports_branch_and_bound(sc)


def test_branch_and_bound_is_accepted_for_every_loss():
    # Issue 27: the convex losses have the Fenchel bounds (tests/search/test_bnb_convex.py).
    from dpsubset.search.exact import check_search
    for loss in ("squared", "huber", "logistic", "hinge"):
        assert check_search("branch_and_bound", None, None, loss) == (None, None)


@pytest.mark.parametrize("seed", [2, 7])
def test_node_budget_falls_back_to_enumeration(seed, monkeypatch):
    # Where the relaxation is weak the search gives up after its node budget and
    # scores every support: the answers are still enumeration's.
    sc, s, _ = _problem(seed)
    monkeypatch.setattr(SubsetSearch, "_certify_local_optimum", lambda self, *a: None)
    monkeypatch.setattr(SubsetSearch, "_node_budget", lambda self: 0)
    orig = SubsetSearch._branch_and_bound
    monkeypatch.setattr(SubsetSearch, "_branch_and_bound",
                        lambda self, problem, **kw: orig(self, problem, leaf_max=1, **kw))
    R = 7
    t = SubsetSearch(sc, s, search="branch_and_bound").top_r(R)
    np.testing.assert_array_equal(t.supports, top_r_by_enumeration(sc, s, R).supports)
    assert t.certificates[-1].method == "enumeration"
    m = SubsetSearch(sc, s, search="branch_and_bound").mistake_classes()
    np.testing.assert_allclose(m.scores, mistakes_by_enumeration(sc, s).scores, rtol=1e-12)
    with pytest.raises(bb.NodeBudgetExceeded):
        branch_and_bound(sc, s, keep=3, leaf_max=1, max_nodes=0)


@pytest.mark.parametrize("seed", [4, 13])
def test_class_search_hands_over_past_its_budget(seed, monkeypatch):
    # A class search by perspective bounds that passes its node budget hands over to
    # the ridge-bound search: class minima and the second best still enumeration's.
    from dpsubset.search import mistake_classes
    sc, s, _ = _problem(seed)
    monkeypatch.setattr(mistake_classes, "CLASS_NODE_BUDGET", 0)
    monkeypatch.setattr(SubsetSearch, "_ball_binds", lambda self, S: True)
    monkeypatch.setattr(sc, "class_lower_bounds",
                        lambda S, ks, target=None: {k: -np.inf for k in ks}, raising=False)
    orig = SubsetSearch._branch_and_bound
    monkeypatch.setattr(SubsetSearch, "_branch_and_bound",
                        lambda self, problem, **kw: orig(self, problem, leaf_max=1, **kw))
    m = SubsetSearch(sc, s, search="branch_and_bound").mistake_classes()
    for k in list(m.open_classes):
        m.close(k)
    me = mistakes_by_enumeration(sc, s)
    np.testing.assert_allclose(m.scores, me.scores, rtol=1e-12)
    np.testing.assert_allclose(m.second_best, me.second_best, rtol=1e-12)
    assert s >= 3 and any(c.method == "branch and bound" for c in m.certificates)


def test_progress_shows_counts_and_gap_but_no_scores(capsys):
    sc, s, _ = _problem(4)
    res = branch_and_bound(sc, s, keep=3, leaf_max=1, verbose=True)
    err = capsys.readouterr().err
    assert "branch and bound" in err
    for v in res.scores:
        assert f"{v:.4f}" not in err and f"{v:.3g}" not in err


def _small_scores(seed=0, n=60, p=12, s=3):
    """Scores far below 1 (a response of scale 0.1), where the gap divided by
    max(1, |upper|) is the absolute gap, not the relative one."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, p))
    y = 0.1 * (X[:, 0] - X[:, 1]) + 0.05 * rng.normal(size=n)
    return LeastSquaresScorer(X, y, 1.0, 0.1), s


def test_timeout_names_the_problem_and_the_scale_free_gap(monkeypatch):
    # issue 23, item 8: the time-out said (upper - lower) / max(1, |upper|), the
    # absolute gap for scores below 1, and left SearchTimeout.problem and .gap None.
    from dpsubset.search.limits import format_gap, relative_gap
    sc, s = _small_scores()
    seen = []

    def spy(lower, upper):
        seen.append((lower, upper))
        return relative_gap(lower, upper)

    monkeypatch.setattr(bb, "relative_gap", spy)
    known = np.array([[0, 1, 2], [0, 1, 3], [0, 1, 4]])  # incumbents: a finite upper bound
    with pytest.raises(SearchTimeout) as err:
        branch_and_bound(sc, s, keep=3, leaf_max=1, problem="top-R list",
                         seeds=[(known, sc.score(known))], deadline=time.perf_counter() - 1.0)
    e = err.value
    lower, upper = seen[-1]
    assert 0 < upper < 1 and lower < upper
    assert e.problem == "top-R list" and e.seconds is not None
    assert e.gap == relative_gap(lower, upper) != pytest.approx(upper - lower)
    assert f"relative gap {format_gap(e.gap)}" in str(e)


def test_progress_bar_shows_the_relative_gap_in_percent(capsys):
    import re
    sc, s = _small_scores(seed=1)
    branch_and_bound(sc, s, keep=3, leaf_max=1, verbose=True)
    gaps = re.findall(r"gap=([^,\]]+)", capsys.readouterr().err)
    assert gaps and all(g.endswith("%") or g == "none proved" for g in gaps), gaps[:5]


class _ReferenceKBest(bb._KBest):
    """The list's pending supports as first written (a dict scanned and sorted in full
    at every step): the brute force the heaps and the partition must match exactly."""

    def __init__(self, keep, cutoff, s, others=None):
        super().__init__(keep, cutoff, s, others)
        self.pending = {}

    @property
    def threshold(self):
        merged = np.sort(np.concatenate([self.v, self.others,
                                         [e[2] for e in self.pending.values()]]))
        return self.cutoff if len(merged) < self.keep else \
            min(self.cutoff, float(merged[self.keep - 1]))

    def offer_pending(self, S, lo, up):
        thr = self.threshold
        for i in np.flatnonzero(lo <= thr):
            key = S[i].tobytes()
            if key not in self.keys:
                self.keys.add(key)
                self.pending[key] = (S[i], float(lo[i]), float(up[i]))
        self._drop_pending()

    def _drop_pending(self):
        thr = self.threshold
        for k in [k for k, e in self.pending.items() if e[1] > thr]:
            del self.pending[k]
            self.keys.discard(k)

    def resolve(self, scorer, down_to=0):
        while len(self.pending) > down_to:
            self._drop_pending()
            if len(self.pending) <= down_to:
                break
            items = sorted(self.pending.items(), key=lambda kv: kv[1][1])[:bb.RESOLVE_BATCH]
            for k, _ in items:
                del self.pending[k]
                self.keys.discard(k)
            S = np.array([e[0] for _, e in items])
            self.offer(S, scorer.score(S))


class _TableScorer:
    """Exact scores from a table; records every batch it is asked for."""

    def __init__(self, table):
        self.table, self.batches = table, []

    def score(self, S):
        self.batches.append(S.tolist())
        return np.array([self.table[row.tobytes()] for row in S])


def _random_offers(seed, keep, cutoff, others, monkeypatch):
    """The list and the brute force side by side under random offers of brackets (on a
    coarse grid, so lower ends, upper ends and scores tie), exact scores and settling
    rounds; after every step the threshold is also recomputed from the list's state."""
    rng = np.random.default_rng(seed)
    monkeypatch.setattr(bb, "RESOLVE_BATCH", 3)
    pool = np.array(list(itertools.combinations(range(9), 3)), dtype=np.intp)
    table = {row.tobytes(): float(rng.integers(0, 12)) for row in pool}
    fast, ref = bb._KBest(keep, cutoff, 3, others), _ReferenceKBest(keep, cutoff, 3, others)
    fast_sc, ref_sc = _TableScorer(table), _TableScorer(table)
    for step in range(150):
        S = pool[rng.choice(len(pool), int(rng.integers(1, 25)))]
        v = np.array([table[row.tobytes()] for row in S])
        kind = rng.random()
        if kind < 0.7:
            lo = v - rng.integers(0, 4, len(v))
            up = v + rng.integers(0, 4, len(v))
            fast.offer_pending(S, lo, up)
            ref.offer_pending(S, lo, up)
        elif kind < 0.85:
            fast.offer(S, v)
            ref.offer(S, v)
        else:
            down_to = int(rng.integers(0, 6))
            fast.resolve(fast_sc, down_to)
            ref.resolve(ref_sc, down_to)
        ups = [e[2] for e in fast.pending.values()]
        every = np.sort(np.concatenate([fast.v, fast.others, ups]))
        brute = cutoff if len(every) < keep else min(cutoff, every[keep - 1])
        assert fast.threshold == ref.threshold == brute, step
        assert {e[0].tobytes() for e in fast.pending.values()} == set(ref.pending), step
        assert fast.keys == ref.keys and fast_sc.batches == ref_sc.batches, step
        assert np.array_equal(fast.S, ref.S) and np.array_equal(fast.v, ref.v), step
    fast.resolve(fast_sc)
    ref.resolve(ref_sc)
    assert np.array_equal(fast.S, ref.S) and fast_sc.batches == ref_sc.batches
    return len(fast_sc.batches)


@pytest.mark.parametrize("keep,cutoff,others", [
    (1, np.inf, None), (4, np.inf, None), (4, 6.0, None), (6, np.inf, [3.0, 5.0, 5.0]),
    (30, 7.0, [2.0, 9.0]), (3, 0.5, None)])
def test_pending_threshold_matches_brute_force(keep, cutoff, others, monkeypatch):
    # The pending brackets are kept in heaps and the threshold from a partition: after
    # every offer, drop and settling round the threshold, the pending set, the list and
    # the batches sent to the scorer equal the full-sort version's, ties included.
    batches = sum(_random_offers(seed, keep, cutoff, others, monkeypatch) for seed in range(6))
    assert batches > 0 or cutoff < 1  # exact scoring happened (not a vacuous comparison)


def test_pending_threshold_ignoring_upper_ends_is_caught(monkeypatch):
    # The deliberately wrong variant: a threshold that forgets the pending upper ends
    # when it is recomputed. The brute-force comparison sees it.
    monkeypatch.setattr(bb._Brackets, "upper_ends", lambda self: np.empty(0))
    with pytest.raises(AssertionError):
        for seed in range(6):
            _random_offers(seed, 4, np.inf, None, monkeypatch)


# ---------------------------------------------------------------- the diagonal shift

def test_diagonal_shift_is_proved_and_only_where_the_rows_outnumber_the_columns():
    # Tall data: a positive shift d with [A, y]'[A, y]/n - d diag(1, ..., 1, 0) positive
    # semi-definite (checked here by its eigenvalues), close to the smallest eigenvalue
    # of A'A/n. Wide data (n <= P): none.
    from dpsubset.search.perspective import diagonal_shift
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 30))
    X[:, 1:] += 0.7 * X[:, :-1]
    y = X[:, :3] @ [1.0, -1.0, 0.5] + rng.normal(size=400)
    sc = LeastSquaresScorer(X, y, 1.0, 10.0)
    mom = Moments.from_scorer(sc)
    G = X.T @ X / 400
    lam_min = np.linalg.eigvalsh(G)[0]
    assert 0.99 * lam_min < mom.shift <= lam_min
    assert mom.lam_n == pytest.approx(sc.lam_n + mom.shift)
    M = np.block([[G, sc.Xy[:, None]], [sc.Xy[None, :], np.array([[sc.yy]])]])
    M[np.diag_indices(30)] -= mom.shift
    assert np.linalg.eigvalsh(M)[0] >= 0.0
    # the shifted columns: the same moments, minus d on the diagonal
    np.testing.assert_allclose(mom.cols([2, 5]), G[:, [2, 5]] - mom.shift * np.eye(30)[:, [2, 5]])
    assert Moments.from_scorer(sc, shift=False).shift == 0.0
    wide = LeastSquaresScorer(X[:25], y[:25], 1.0, 10.0)
    assert Moments.from_scorer(wide).shift == 0.0
    # y in the columns' span: the Schur complement of y is 0, so no shift is proved
    assert diagonal_shift(G, G[:, 0], G[0, 0]) == 0.0


@pytest.mark.parametrize("seed", range(0, 60, 5))
def test_unshifted_node_bound_is_below_every_completion_too(seed):
    # The same check as test_node_bound_is_below_every_completion (which runs with the
    # shift, these problems being tall) with the shift switched off.
    sc, s, rng = _problem(seed, p_range=(6, 11), s_range=(1, 4))
    mom = Moments.from_scorer(sc, shift=False)
    assert mom.shift == 0.0
    nb = NodeBound(mom)
    for _ in range(4):
        perm = rng.permutation(sc.p)
        n_in = int(rng.integers(0, s + 1))
        node = _make_node(np.sort(perm[:n_in]), np.sort(perm[n_in:]), s, sc.k_forced,
                          nb.in_center, None)
        comp = _enumerate(node, s)
        true = float(sc.score(comp).min())
        bound, _, _ = nb.improve(_random_point(mom, rng), node, iters=30)
        assert bound <= true + 1e-12 * max(1.0, true)


def test_a_shift_that_is_too_large_is_caught():
    # Past the smallest eigenvalue the shifted moments are indefinite and the bound is
    # no longer a bound: at the root, after ascent, it exceeds the best score, which the
    # comparison with enumeration sees.
    rng = np.random.default_rng(11)
    X = rng.normal(size=(200, 8))
    y = X[:, :2] @ [1.0, -1.0] + 0.3 * rng.normal(size=200)
    sc = LeastSquaresScorer(X, y, 0.1, 10.0)
    good = Moments.from_scorer(sc)
    assert good.shift > 0
    S, v = score_all(sc, 2)
    root = _make_node(np.empty(0, dtype=np.intp), np.arange(8), 2, 0, np.zeros(8, dtype=bool),
                      None)
    ok, _, _ = NodeBound(good).improve(NodeBound(good).empty_point(), root, iters=40)
    assert ok <= v.min()
    bad = Moments(good.gy, good.yy, sc.lam_n, sc.r, 0, gram=sc._gram, shift=4.0 * good.shift)
    nb = NodeBound(bad)
    worst, _, _ = nb.improve(nb.empty_point(), root, iters=40)
    assert worst > v.min()


def test_no_shift_without_room_in_the_memory_budget():
    # The shift's two transient (P + 1)^2 matrices are not taken past the memory limit
    # (the search then runs with the plain bounds, not stopped), and that 0 is not
    # cached: the same scorer with room gets its shift.
    from dpsubset.search.limits import MemoryBudget
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 20))
    sc = LeastSquaresScorer(X, X[:, 0] + rng.normal(size=300), 1.0, 10.0)
    assert Moments.from_scorer(sc, memory=MemoryBudget(1000)).shift == 0.0
    assert Moments.from_scorer(sc, memory=MemoryBudget(10 ** 8)).shift > 0.0
    assert Moments.from_scorer(sc).shift > 0.0
