"""Best-first branch and bound over size-s supports for the least-squares score.

The search keeps the ``keep`` best supports of a family (every support, a mistake
class, or the supports with at least m mistakes) and is exact by construction:

* a node fixes columns in and out; its bound is the certified dual bound of
  :mod:`dpsubset.search.perspective` (the perspective relaxation with the ball,
  valid at any dual point, lowered by a rounding allowance);
* nodes are expanded lowest bound first; a node is dropped only when its certified
  bound is strictly above the current threshold (the ``keep``-th best score found
  so far, or the caller's cut-off), so every support that could enter the list,
  ties included, is reached;
* a node with few completions (at most ``leaf_max``) has them all scored exactly in
  one batch by the scorer; only exact scores enter the list, ranked by score with
  ties broken lexicographically (the rule of :class:`TopRCandidates`). Under the
  Fenchel bounds a node with one free slot is settled the same way after its ascent
  (``one_slot_leaves``), and for logistic and hinge its completions are kept with
  certified brackets and scored exactly only if they can still enter when the queue
  is empty (``lazy_leaves``, :meth:`_KBest.resolve`; the threshold meanwhile reads
  their upper ends, each at least its score, so every prune stays valid);
* the branching column is the free column at the boundary of the relaxation's top-k
  selection (the k-th largest |x_j' alpha| among the free columns): the two children
  move the bound most there.

When the queue is empty every support outside the list scores above the threshold,
so the certificate closes (lower = upper). A deadline raises SearchTimeout, which
reports counts, times and the scale-free relative gap of
:func:`dpsubset.search.limits.relative_gap`, never a score.

Memory. An open node holds O(s) numbers besides two short lists: the columns fixed
out on its path (one per "out" branch above it) and its dual point in sparse form
(alpha = c y - A b with b non-zero only on the columns the ascent touched on the way,
:meth:`DualPoint.sparse`); its free set and the dense vectors of its point (2 P
numbers, which the best-first queue once kept for every open node, growing to
gigabytes at p = 10,000: docs/benchmarks/search-constants.md) are rebuilt when it is
expanded. The nodes queued last are kept whole within WHOLE_BYTES (best first often
expands a node queued shortly before) and made compact when they leave that window.
The queue's size is estimated from its
arrays (deterministic) and held in the search's MemoryBudget; past DIVE_SHARE of the
memory limit new nodes go to a depth-first stack that is emptied before the next
best-first pop (a dive: it keeps memory bounded by the depth and finds incumbents
that lower the threshold), and past the limit itself the search stops with
SearchMemoryLimit. Neither changes what is returned: nodes are still dropped only
when their certified bound is strictly above the threshold.

Every value here is a score of the private data and stays inside the call.
"""
from __future__ import annotations

import heapq
import time
from collections import OrderedDict
from itertools import combinations
from math import comb

import numpy as np

from .candidates import Certificate
from .enumeration import rank_supports
from .limits import MemoryBudget, SearchTimeout, describe_gap, format_gap, relative_gap
from .outer_approximation import progress
from .fenchel import ConvexDuals, FenchelBound
from .perspective import Moments, NodeBound
from .protocols import ConvexDualScorer, SquaredLossScorer
from ..losses import is_least_squares

__all__ = ["supports_branch_and_bound", "branch_and_bound", "BranchAndBoundResult",
           "NodeBudgetExceeded", "node_data"]

# Nodes with at most this many completions are scored exactly in one batch.
LEAF_MAX = 200
# The queue turns to depth-first dives once it holds this share of the memory limit.
DIVE_SHARE = 0.5
# The most recently queued nodes are kept whole, with their dense dual points, within
# this many bytes: best first often expands a node queued shortly before, and the
# others are rebuilt from their compact form (a share of a node's time at large p;
# small p keeps every open node whole). docs/benchmarks/search-constants.md.
WHOLE_BYTES = 64 * 2 ** 20
# Pending supports (brackets) are scored exactly this many at a time when the list is
# settled, lowest lower end first: each batch's scores may lower the threshold, which
# drops pending supports before they are scored.
RESOLVE_BATCH = 64
# At most this many pending supports are kept: past it, the lowest lower ends are scored
# exactly until half remain (an exact score is always valid), so the brackets' memory is
# bounded whatever the data.
PENDING_MAX = 20_000
# Estimated bytes of an open node besides its arrays' data: the node and point objects,
# the queue's entry, the array headers.
NODE_OVERHEAD = 800


def supports_branch_and_bound(scorer) -> bool:
    """Whether :func:`branch_and_bound` applies: the least-squares score (with a
    stored Gram matrix the moments are sliced from it; without, the columns of
    X'X/n the search touches are computed from X and cached), or a convex-loss score
    with its data in memory (the Fenchel bounds of :mod:`dpsubset.search.fenchel`)."""
    if isinstance(scorer, SquaredLossScorer) and is_least_squares(scorer.loss):
        return True
    return isinstance(scorer, ConvexDualScorer) and scorer.X is not None


def node_data(scorer, memory=None):
    """What the node bounds read of the data, built once per search: the second
    moments (least squares) or the data and loss (:class:`ConvexDuals`)."""
    if isinstance(scorer, SquaredLossScorer) and is_least_squares(scorer.loss):
        return Moments.from_scorer(scorer, memory=memory)
    return ConvexDuals(scorer, memory=memory)


def _node_bounds(data, center):
    """The node bounds of a search: perspective (least squares) or Fenchel."""
    return FenchelBound(data, center) if isinstance(data, ConvexDuals) else NodeBound(data, center)


class NodeBudgetExceeded(RuntimeError):
    """The search expanded more nodes than its budget (the caller then enumerates)."""


class BranchAndBoundResult:
    """The ``keep`` best supports of a family found by :func:`branch_and_bound`.

    Attributes
    ----------
    supports : ndarray, shape (m, s)
        Best first (ties by index); m <= keep, fewer when fewer members score at most
        the cut-off.
    scores : ndarray, shape (m,)
    certificate : Certificate
    nodes : int
        Nodes expanded.
    peak_open_bytes : int
        The largest estimated size of the open nodes (queue, dive stack and kept dense
        points) during the search. Like ``nodes``, a function of the data: for
        benchmarks and tests, never for a release.
    dived : int
        Nodes expanded depth-first (in dives).
    threshold : float
        Every member of the family not returned scores at least this (the final
        threshold of the search).
    """

    def __init__(self, supports, scores, certificate, nodes, peak_open_bytes=0, dived=0,
                 threshold=np.inf):
        self.supports, self.scores = supports, scores
        self.certificate, self.nodes = certificate, nodes
        self.peak_open_bytes, self.dived = peak_open_bytes, dived
        self.threshold = threshold


class _Node:
    """A node: candidate columns fixed in (``fixed``), fixed out (``out``), and the
    family counts. While it waits in the queue only these are kept; ``free``,
    ``free_center``, ``free_other`` and ``fixed_aug`` (O(p)) exist only while it is
    bounded or expanded (:func:`_compact`, :func:`_rebuild`)."""

    __slots__ = ("fixed", "out", "fixed_aug", "free", "free_center", "free_other", "k",
                 "k1_range", "n_center")


def _make_node(fixed, free, s, kf, in_center, inside, out=None):
    """A node with candidate columns ``fixed`` in, ``free`` free and ``out`` out (the
    rest are out too, for a caller that does not track them), or None when no
    completion satisfies the family rule."""
    node = _Node()
    node.fixed = fixed
    node.out = np.empty(0, dtype=np.int32) if out is None else out
    node.fixed_aug = np.concatenate([np.arange(kf), kf + fixed]).astype(np.intp)
    node.free = free
    node.k = s - len(fixed)
    if node.k < 0 or node.k > len(free):
        return None
    node.n_center = int(np.count_nonzero(in_center[fixed]))
    if inside is None:
        node.free_center = free[:0]
        node.free_other = free
        node.k1_range = (0, 0)
        return node
    fc = free[in_center[free]]
    fo = free[~in_center[free]]
    lo = max(0, inside[0] - node.n_center, node.k - len(fo))
    hi = min(inside[1] - node.n_center, node.k, len(fc))
    if lo > hi:
        return None
    node.free_center, node.free_other, node.k1_range = fc, fo, (lo, hi)
    return node


def _compact(node):
    """Drop the node's O(p) arrays (it is queued); :func:`_rebuild` restores them."""
    node.free = node.free_center = node.free_other = node.fixed_aug = None
    return node


def _rebuild(node, p, kf, in_center, inside):
    """The free sets and augmented fixed indices of a compact node: every column that
    is neither fixed in nor fixed out is free (as when the node was made)."""
    mask = np.ones(p, dtype=bool)
    mask[node.fixed] = False
    mask[node.out] = False
    free = np.flatnonzero(mask)
    node.free = free
    node.fixed_aug = np.concatenate([np.arange(kf), kf + node.fixed]).astype(np.intp)
    if inside is None:
        node.free_center, node.free_other = free[:0], free
    else:
        node.free_center, node.free_other = free[in_center[free]], free[~in_center[free]]
    return node


def _open_bytes(node, point):
    """Estimated bytes of a queued node with its point: a compact node with its point's
    compact form (a tuple: (c, idx, val) for least squares, alpha in single precision
    for the convex losses), or a whole node with its dense point."""
    if not isinstance(point, tuple):
        return (NODE_OVERHEAD + node.fixed.nbytes + node.out.nbytes + point.nbytes
                + node.free.nbytes + node.free_center.nbytes
                + node.free_other.nbytes + node.fixed_aug.nbytes)
    return (NODE_OVERHEAD + node.fixed.nbytes + node.out.nbytes
            + sum(a.nbytes for a in point if isinstance(a, np.ndarray)))


def _completions(node):
    """Number of completions of a node."""
    if node.k1_range == (0, 0):
        return comb(len(node.free_other), node.k)
    lo, hi = node.k1_range
    return sum(comb(len(node.free_center), k1) * comb(len(node.free_other), node.k - k1)
               for k1 in range(lo, hi + 1))


def _score_completions(nb, scorer, node, s, best, pt):
    """Score a node's completions exactly where its bounds do not rule them out
    (``nb.score_leaves``: each completion's own bound at the node's point ``pt``, then
    what the scorer offers) and offer them to ``best``; returns how many were scored."""
    S = _enumerate(node, s)
    if not len(S):
        return 0
    if nb.lazy_leaves:
        S, lo, up = nb.bracket_leaves(scorer, S, best.threshold, pt)
        best.offer_pending(S, lo, up)
        if len(best.pending) > PENDING_MAX:
            best.resolve(scorer, down_to=PENDING_MAX // 2)
    else:
        S, v = nb.score_leaves(scorer, S, best.threshold, pt)
        best.offer(S, v)
    return len(S)


def _enumerate(node, s):
    """All completions of a node, one sorted support per row."""
    if node.k == 1:  # one slot left (the common large leaf): no Python loop
        lo, hi = node.k1_range
        parts = ([node.free_center] if lo <= 1 <= hi else []) + \
            ([node.free_other] if lo <= 0 <= hi else [])
        cols = np.concatenate(parts) if parts else np.empty(0, dtype=np.intp)
        out = np.empty((len(cols), s), dtype=np.intp)
        out[:, :s - 1] = node.fixed
        out[:, s - 1] = cols
        return np.sort(out, axis=1)
    out = []
    lo, hi = node.k1_range
    for k1 in range(lo, hi + 1):
        for a in combinations(node.free_center.tolist(), k1):
            for b in combinations(node.free_other.tolist(), node.k - k1):
                out.append(node.fixed.tolist() + list(a) + list(b))
    if not out:
        return np.empty((0, s), dtype=np.intp)
    return np.sort(np.asarray(out, dtype=np.intp), axis=1)


def _branch_column(node, pt, sel, kf, in_center):
    """The column to branch on: the free column at the boundary of the relaxation's
    selection (its k-th largest |u|). Under a family rule the free columns of the
    centre come first: the relaxation may spread its weight over all of them (a
    fractional base, which makes a class look as good as the centre), and fixing
    the base removes that slack."""
    if node.k1_range != (0, 0) and len(node.free_center):
        c = sel[in_center[sel]]
        if len(c):
            return int(c[np.argmin(pt.u[kf + c] ** 2)])
        fc = node.free_center
        return int(fc[np.argmax(pt.u[kf + fc] ** 2)])
    return int(sel[np.argmin(pt.u[kf + sel] ** 2)])


class _Brackets:
    """Pending supports: certified brackets [lo, up] of their scores, no exact score yet
    (up to PENDING_MAX of them). No step scans or sorts them all: a min-heap by lower end
    (ties in the order they came) gives the next ones to score, a max-heap by lower end
    the ones a threshold drops, and the upper ends sit in a flat array (free slots
    +inf) for the threshold's order statistic. Heap entries of removed supports are
    skipped when met (lazy deletion) and swept out when they outnumber the live ones."""

    def __init__(self):
        self.clear()

    def clear(self):
        # key -> (row, lo, up, seq, slot); seq orders ties and tells live heap entries.
        self.rows = {}
        self._by_lo, self._by_lo_desc = [], []
        self.up = np.full(64, np.inf)
        self._free, self._used, self._seq = [], 0, 0

    def __len__(self):
        return len(self.rows)

    def values(self):
        return self.rows.values()

    def upper_ends(self):
        """The pending upper ends (+inf in free slots)."""
        return self.up[:self._used]

    def add(self, key, row, lo, up):
        if self._free:
            slot = self._free.pop()
        else:
            slot, self._used = self._used, self._used + 1
            if slot == len(self.up):
                self.up = np.concatenate([self.up, np.full(len(self.up), np.inf)])
        self.up[slot] = up
        self._seq += 1
        self.rows[key] = (row, lo, up, self._seq, slot)
        heapq.heappush(self._by_lo, (lo, self._seq, key))
        heapq.heappush(self._by_lo_desc, (-lo, self._seq, key))

    def _live(self, entry):
        e = self.rows.get(entry[2])
        return e is not None and e[3] == entry[1]

    def _remove(self, key):
        e = self.rows.pop(key)
        self.up[e[4]] = np.inf
        self._free.append(e[4])
        return e

    def _sweep(self):
        """Rebuild the heaps from the live entries once the stale ones dominate
        (amortised O(1) per support)."""
        if len(self._by_lo) + len(self._by_lo_desc) > 4 * len(self.rows) + 256:
            self._by_lo = [(e[1], e[3], k) for k, e in self.rows.items()]
            self._by_lo_desc = [(-e[1], e[3], k) for k, e in self.rows.items()]
            heapq.heapify(self._by_lo)
            heapq.heapify(self._by_lo_desc)

    def drop_above(self, thr):
        """Remove the supports whose lower end is above ``thr``; returns their keys."""
        keys, heap = [], self._by_lo_desc
        while heap and (not self._live(heap[0]) or -heap[0][0] > thr):
            entry = heapq.heappop(heap)
            if self._live(entry):
                self._remove(entry[2])
                keys.append(entry[2])
        self._sweep()
        return keys

    def pop_lowest(self, m):
        """Remove and return the ``m`` supports with the lowest lower ends (ties in the
        order they came), as (key, (row, lo, up)) pairs, lowest first."""
        out, heap = [], self._by_lo
        while heap and len(out) < m:
            entry = heapq.heappop(heap)
            if self._live(entry):
                out.append((entry[2], self._remove(entry[2])[:3]))
        self._sweep()
        return out


class _KBest:
    """The ``keep`` best supports offered so far (score, then lexicographic order),
    among those scoring at most ``cutoff``. ``others`` are the scores of supports
    outside the family that the caller will merge with the list (a pool): they count
    for the threshold (only supports among the ``keep`` best of the union matter) but
    are not returned."""

    def __init__(self, keep, cutoff, s, others=None):
        self.keep, self.cutoff = int(keep), float(cutoff)
        self.S = np.empty((0, s), dtype=np.intp)
        self.v = np.empty(0)
        self.keys = set()
        self.others = np.empty(0) if others is None else \
            np.sort(np.asarray(others, dtype=float))[:self.keep]
        # Supports with certified brackets and no exact score yet.
        self.pending = _Brackets()
        # The keep smallest of the members' scores, the others' scores and the pending
        # upper ends (padded with +inf), ascending; None: to be recomputed.
        self._smallest = None
        self._thr = None

    @property
    def threshold(self):
        """Only supports scoring at most this can still enter the list: the keep-th
        smallest of the members' scores, the pending supports' upper ends and the
        others' scores (an upper end is >= its score, so this is >= the threshold the
        exact scores would give)."""
        if self._smallest is None:
            values = np.concatenate([self.v, self.others, self.pending.upper_ends()])
            self._set_smallest(values)
        return self._thr

    def _set_smallest(self, values):
        """Keep the ``keep`` smallest of ``values`` (a partition, not a full sort)."""
        if len(values) > self.keep:
            values = np.partition(values, self.keep - 1)[:self.keep]
        elif len(values) < self.keep:
            values = np.concatenate([values, np.full(self.keep - len(values), np.inf)])
        self._smallest = np.sort(values)
        self._thr = min(self.cutoff, float(self._smallest[-1]))

    def offer_pending(self, S, lo, up):
        """Supports with certified brackets [lo, up] of their scores, scored exactly
        only if they can still enter the list when it is settled (:meth:`resolve`)."""
        thr = self.threshold
        added = []
        for i in np.flatnonzero(lo <= thr):
            key = S[i].tobytes()
            if key not in self.keys:
                self.keys.add(key)
                self.pending.add(key, S[i], float(lo[i]), float(up[i]))
                added.append(float(up[i]))
        if added:  # new upper ends can only lower the keep smallest: merge them in
            self._set_smallest(np.concatenate([self._smallest, added]))
        self._drop_pending()

    def _drop_pending(self):
        """Forget the pending supports whose lower end is above the threshold."""
        # The keep smallest stay as they are: a support came in with its lower end at
        # most the threshold, itself at most the cut-off, so it leaves only once the
        # threshold is the keep-th smallest and below the lower end, and then its upper
        # end is above every one of the keep smallest.
        for k in self.pending.drop_above(self.threshold):
            self.keys.discard(k)

    def resolve(self, scorer, down_to=0):
        """Score exactly the pending supports that can still enter (lower end at most
        the threshold), best lower end first, in batches, until at most ``down_to`` are
        left (0: none, when the list is settled; more to bound their memory)."""
        while len(self.pending) > down_to:
            self._drop_pending()
            if len(self.pending) <= down_to:
                break
            items = self.pending.pop_lowest(RESOLVE_BATCH)
            for k, _ in items:
                self.keys.discard(k)
            self._smallest = None
            S = np.array([e[0] for _, e in items])
            self.offer(S, scorer.score(S))

    def offer(self, S, v):
        ok = v <= self.threshold
        if not np.any(ok):
            return
        S, v = S[ok], v[ok]
        new = []
        for i in range(len(v)):
            key = S[i].tobytes()
            if key not in self.keys:
                self.keys.add(key)
                new.append(i)
        if not new:
            return
        S, v = S[new], v[new]
        o = rank_supports(S, v)
        S, v = S[o], v[o]
        if len(self.v) and np.any(np.isin(v, self.v)):
            # A tie with a member: rank the whole list (ties go by index order).
            S = np.vstack([self.S, S])
            v = np.concatenate([self.v, v])
            order = rank_supports(S, v)
            S, v = S[order], v[order]
        else:
            # No ties with the (ranked) list: merge by score, O(list) instead of a sort.
            pos = np.searchsorted(self.v, v)
            S = np.insert(self.S, pos, S, axis=0)
            v = np.insert(self.v, pos, v)
        for row in S[self.keep:]:
            self.keys.discard(row.tobytes())
        self.S, self.v = S[:self.keep], v[:self.keep]
        self._smallest = None

    def trim(self):
        """Drop the members above the final threshold: with ``others``, members offered
        before the others' scores lowered it (without, there are none). The threshold
        is kept as it was: every member not in the list scores at least it."""
        ok = self.v <= self.threshold
        self.S, self.v = self.S[ok], self.v[ok]


def branch_and_bound(scorer, s, *, keep=1, center=None, inside=None, cutoff=np.inf,
                     seeds=(), others=None, deadline=None, verbose=False,
                     problem="best support",
                     moments=None, leaf_max=None, iters=12, max_nodes=None, memory=None):
    """The ``keep`` best supports of size s (in a family), exactly, by branch and bound.

    Parameters
    ----------
    scorer : LeastSquaresScorer or ConvexLossScorer
        (see :func:`supports_branch_and_bound`)
    s : int
    keep : int
        How many of the best supports to return (1: the best support; R: top-R).
    center, inside : array_like of int, (int, int), optional
        Family rule: only supports S with inside[0] <= |S & center| <= inside[1]
        (a mistake class k: inside = (s - k, s - k); at least m mistakes:
        inside = (0, s - m)).
    cutoff : float
        Only supports scoring at most this are of interest (the R-th score of a pool
        the result will be merged with).
    seeds : iterable of (supports, scores)
        Supports with exact scores (incumbents); those outside the family are ignored.
    others : array_like of float, optional
        Scores of supports outside the family that the result will be merged with:
        only family members among the ``keep`` best of the union are looked for
        (those are returned, at most ``keep``; fewer when the others fill the list).
    deadline : float, optional
        ``time.perf_counter()`` value past which SearchTimeout is raised.
    verbose : bool
        A progress bar (nodes, open nodes, relative gap).
    problem : str
        What is solved, in words, for the certificate and the messages.
    moments : Moments or ConvexDuals, optional
        What the bounds read of the data (:func:`node_data`; built from the scorer
        when not given).
    leaf_max : int, optional
        Nodes with at most this many completions are scored exactly (default: LEAF_MAX
        for least squares, whose scores are cheap, the bounds' ``leaf_max`` for the
        convex losses).
    iters : int
        Dual ascent steps per node at most.
    max_nodes : int, optional
        Raise NodeBudgetExceeded after expanding this many nodes (where the
        relaxation is weak, e.g. pure noise with a small ridge, scoring every
        support is cheaper; the caller decides).
    memory : MemoryBudget, optional
        The search's memory budget (None: no limit). The open nodes' estimated size is
        held in it: past DIVE_SHARE of its limit the search dives depth first, past
        the limit it raises SearchMemoryLimit.

    Returns
    -------
    BranchAndBoundResult

    Raises
    ------
    SearchTimeout
        At the deadline (``problem``, ``gap`` and ``seconds`` set; the message has
        counts, the time and the relative gap, no score).
    SearchMemoryLimit
        When the open nodes would pass the memory limit (the message names the
        problem and the limit only).
    """
    t0 = time.perf_counter()
    p, kf = scorer.p, scorer.k_forced
    memory = MemoryBudget(None) if memory is None else memory
    mom = node_data(scorer, memory) if moments is None else moments
    nb = _node_bounds(mom, center)
    leaf_max = nb.leaf_max if leaf_max is None else leaf_max
    in_center = nb.in_center
    if inside is not None:
        inside = (int(inside[0]), int(inside[1]))
    best = _KBest(keep, cutoff, s, others)
    # The incumbents, and the root's dual point.
    pt = _seed(scorer, nb, seeds, best, in_center, inside)

    nodes = scored = dived = 0
    counter = 0
    # Open nodes: the best-first heap, and the depth-first stack of a dive (emptied
    # first). Entries are [bound, counter, node, point, bytes, selection] (the
    # selection: the relaxation's top-k free columns at the point, k numbers); the
    # last queued that are still open (``whole``, by counter, within WHOLE_BYTES) keep
    # the whole node and its DualPoint, the others a compact node and the point's
    # sparse form.
    heap, stack = [], []
    whole = OrderedDict()
    dive_at = memory.share(DIVE_SHARE)
    whole_max = _whole_max(dive_at, nb.dense_bytes(p))
    key = ("open nodes", object())  # this search's entry in the memory budget
    size = {"open": 0, "peak": 0}
    bar = progress(verbose, desc=problem + ": branch and bound", unit="node")

    def hold(delta):
        size["open"] += delta
        size["peak"] = max(size["peak"], size["open"])
        memory.hold(key, size["open"], problem=problem, route="branch and bound")

    def visit(node, pt):
        """Score a small node's completions, or bound it; returns the queue entry
        (None when the node is done or pruned)."""
        nonlocal counter, scored
        few = _completions(node) <= leaf_max
        if not few:
            bound, pt, sel = nb.improve(pt, node, target=best.threshold, iters=iters)
            if bound > best.threshold:
                return None
        if few or (node.k == 1 and nb.one_slot_leaves):
            scored += _score_completions(nb, scorer, node, s, best, pt)
            return None
        counter += 1
        entry = [bound, counter, node, pt, 0, sel]
        if whole_max:
            whole[counter] = entry
        else:
            entry[3] = pt.sparse()
            _compact(node)
        entry[4] = _open_bytes(node, entry[3])
        hold(entry[4] + _compact_beyond(whole, whole_max))
        return entry

    def drop(entry):
        """A node leaves the open list: its estimated bytes and its window place."""
        whole.pop(entry[1], None)
        hold(-entry[4])

    try:
        root = _make_node(np.empty(0, dtype=np.intp), np.arange(p), s, kf, in_center, inside)
        if root is not None:
            entry = visit(root, pt)
            if entry is not None:
                heapq.heappush(heap, entry)
        while heap or stack:
            if deadline is not None and time.perf_counter() > deadline:
                lower = min(([heap[0][0]] if heap else []) + [e[0] for e in stack],
                            default=np.inf)  # the smallest open bound, for the gap
                raise _timeout(problem, nodes, len(heap) + len(stack), lower, best.threshold, t0)
            # Next node: the top of a dive's stack, else the lowest bound.
            from_stack = bool(stack)
            entry = stack.pop() if from_stack else heapq.heappop(heap)
            drop(entry)
            bound, _, node, pt, _, sel = entry
            # Prune? (the threshold may have dropped since the node was queued)
            if bound > best.threshold:
                if from_stack:
                    continue
                break  # best first: every open node is above the threshold
            nodes += 1
            dived += from_stack
            if max_nodes is not None and nodes > max_nodes:
                raise NodeBudgetExceeded(f"{problem}: more than {max_nodes} nodes")
            if verbose or bar.due():  # counts and the relative gap only, never a score
                bar.update()
                bar.set_postfix(open=len(heap) + len(stack), scored=scored,
                                gap=format_gap(relative_gap(bound, best.threshold)))
            if isinstance(pt, tuple):  # compact: rebuilt (the same alpha)
                _rebuild(node, p, kf, in_center, inside)
                pt = nb.rebuild(pt)
            _incumbent(best, keep, node, sel, nb, scorer)
            # Branch: the column at the boundary of the relaxation's selection, in and out;
            # each child is scored (few completions) or bounded and queued unless pruned.
            children = _children(node, _branch_column(node, pt, sel, kf, in_center), s, kf,
                                 in_center, inside)
            _compact(node)
            queued = [e for e in (visit(c, pt) for c in children) if e is not None]
            if dive_at is not None and (stack or size["open"] > dive_at):
                # A dive: the children go on the stack, the lower bound on top.
                stack.extend(sorted(queued, key=lambda e: (-e[0], -e[1])))
            else:
                for e in queued:
                    heapq.heappush(heap, e)
    finally:
        memory.release(key)
        bar.close()
    best.resolve(scorer)
    best.trim()
    cert = _certificate(best, keep, problem, nodes, time.perf_counter() - t0)
    return BranchAndBoundResult(best.S.copy(), best.v.copy(), cert, nodes,
                                peak_open_bytes=size["peak"], dived=dived,
                                threshold=best.threshold)


def _incumbent(best, keep, node, sel, nb, scorer):
    """A cheap incumbent while the list is short: the relaxation's own selection at an
    expanded node, scored exactly. Not at two free slots when one-slot nodes are
    settled at once: the child with the branching column in has it among its
    completions, scored there in a batch."""
    if len(best.keys) < keep and (node.k > 2 or not nb.one_slot_leaves):
        cand = np.sort(np.concatenate([node.fixed, sel]))[None, :]
        best.offer(cand, scorer.score(cand))


def _whole_max(dive_at, node_bytes):
    """How many of the last queued nodes stay whole (node and dense point, about
    ``node_bytes`` each): as many as fit in WHOLE_BYTES and in a quarter of the dive's
    budget (a small limit keeps none)."""
    cap = WHOLE_BYTES if dive_at is None else min(WHOLE_BYTES, dive_at / 4)
    return int(cap // (node_bytes + NODE_OVERHEAD))


def _compact_beyond(whole, whole_max):
    """Compact the oldest whole entries past the window of ``whole_max`` (their points
    to the sparse form, their nodes without the O(p) arrays); returns the change in
    the open list's estimated bytes."""
    add = 0
    while len(whole) > whole_max:  # out of the window: compact
        _, old = whole.popitem(last=False)
        old[3] = old[3].sparse()
        _compact(old[2])
        nbytes = _open_bytes(old[2], old[3])
        add += nbytes - old[4]
        old[4] = nbytes
    return add


def _seed(scorer, nb, seeds, best, in_center, inside):
    """Offer the seeds (supports with exact scores) in the family to ``best``; returns
    the root's dual point: the exact dual of the fit on the best seed (any seed, in the
    family or not), or the point of the empty fit without seeds."""
    start = None
    for S, v in seeds:
        S = np.atleast_2d(np.asarray(S, dtype=np.intp))
        v = np.atleast_1d(np.asarray(v, dtype=float))
        if len(v) == 0:
            continue
        if inside is None:
            ok = np.ones(len(S), dtype=bool)
        else:
            m = in_center[S].sum(axis=1)
            ok = (m >= inside[0]) & (m <= inside[1])
        best.offer(np.sort(S[ok], axis=1), v[ok])
        j = int(np.argmin(v))
        if start is None or v[j] < start[1]:
            start = (np.sort(S[j]), float(v[j]))
    if start is None:
        return nb.empty_point()
    return nb.start_point(scorer, start[0])


def _children(node, j, s, kf, in_center, inside):
    """The children of ``node`` with column j fixed in and fixed out (those that have
    a completion in the family)."""
    free = node.free[node.free != j]
    child_in = _make_node(np.append(node.fixed, j), free, s, kf, in_center, inside,
                          out=node.out)
    child_out = _make_node(node.fixed, free, s, kf, in_center, inside,
                           out=np.append(node.out, j).astype(np.int32))
    return [c for c in (child_in, child_out) if c is not None]


def _timeout(problem, nodes, n_open, lower, threshold, t0):
    """The SearchTimeout of a search that reached its deadline: counts, the time and
    the scale-free relative gap, never a score."""
    gap = relative_gap(lower, threshold)
    secs = time.perf_counter() - t0
    return SearchTimeout(
        f"time limit reached while solving '{problem}' by branch and bound "
        f"({nodes} nodes expanded, {n_open} open, {describe_gap(gap)}, {secs:.1f} s); "
        "nothing is released", problem=problem, gap=gap, seconds=secs)


def _certificate(best, keep, problem, nodes, secs):
    """The certificate of a finished search: every support outside the list scores
    above the threshold (lower = upper), or, with no member at most the cut-off, the
    proof that the family's minimum is at least it."""
    thr = best.threshold
    if len(best.v):
        last = float(best.v[-1])
        return Certificate(problem, "branch_and_bound", last if len(best.v) >= keep else
                           min(last, thr), last, nodes, secs)
    return Certificate(problem + " (>= target proved)", "branch_and_bound", thr, thr,
                       nodes, secs)
