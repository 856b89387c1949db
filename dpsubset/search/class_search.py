"""Exact best member of a mistake class, for the least-squares score, by branch and bound.

A member of the mistake class P_k around the best support S_1 keeps a base B of
s - k elements of S_1 and adds k columns from outside S_1. For one base the problem is

    min over J, |J| = k, J outside S_1, of c(B + J),

best subset selection of size k with B (and the intercept, and ``keep=`` columns)
always in. Outer approximation solves it, but where the landscape is flat (many
noise columns of almost equal merit: the paper's setting at n ~ 1000) its master
problem needs very many rounds. This module solves it by a depth-first branch and
bound over the added columns that works on the Schur complement of the base:

* Let A be the always-in columns plus B and K = A'A/n + (lam/n) I. For the outside
  columns O, h = X_O'y/n - K_OA K^{-1} A'y/n and M = X_O'X_O/n + (lam/n) I - K_OA K^{-1} K_AO.
  The ridge value (no ball) of A + J is value(A) - h_J' M_JJ^{-1} h_J / 2.
* Adding one column j to a partial set J is a rank-one update: with the Cholesky
  factor L of M_JJ, R = L^{-1} M_J,: and w = L^{-1} h_J, the new column's residual
  h_j - R_j'w and pivot M_jj - ||R_j||^2 give the gain (h_j - R_j'w)^2 / pivot.
  Nodes are expanded in batches (vectorised over nodes and columns).
* A node needing t more columns is pruned when even the largest conceivable gain
  cannot reach the cut-off: the Schur complement of M on the added columns has all
  eigenvalues >= lambda_min(M) (interlacing), so the further gain is at most
  (sum of the t largest squared residuals h_l^2 among the allowed l) / lambda_min(M).
* The ridge value is a lower bound on c (the ball only adds a constraint) and equals
  it when the ridge minimiser lies in the ball. Where the ball binds, the ridge is
  shifted by the base's own ball multiplier mu and the values lowered by mu r^2 / 2
  (a Lagrangian bound, valid for every mu >= 0 and nearly exact there). Leaves below the cut-off are therefore
  re-scored exactly by the scorer (the secular equation), and only exact scores
  become the incumbent.

With a ``cutoff`` the search returns the exact class minimum if it is below the
cut-off, and otherwise a proof that the minimum is at least the cut-off: both are
what the lazy mistakes draw and the gap check need. Floating-point safety: pruning
and leaf filtering keep everything within ``tol`` (relative 1e-12) of the cut-off,
and the eigenvalue bound is lowered by a rounding allowance, so rounding can only
make the search do more work, never drop a member that could be below the cut-off.

Every value here is a score of the private data and stays inside the call.
"""
from __future__ import annotations

import time
from itertools import combinations
from math import comb

import numpy as np

from .limits import MemoryBudget, SearchTimeout
from .outer_approximation import progress
from .protocols import SquaredLossScorer
from ..losses import is_least_squares

__all__ = ["supports_class_search", "class_minimum"]

# Outside columns beyond which the q x q Schur complement is not formed (memory q^2).
MAX_OUTSIDE = 4000
# Outside columns up to which lambda_min of the Schur complement is computed (past it
# lam_n is used: for large q the q x q eigenvalue problem per base costs more than the
# pruning it saves; docs/benchmarks/search-constants.md).
_EIG_MAX = 500
# Nodes expanded per vectorised batch (memory: nodes x depth x q doubles).
_BATCH_ELEMENTS = 4_000_000
# Leaves re-scored exactly per round (best ridge values first).
_RESCORE_BATCH = 256
# Leaves waiting for an exact score at most (past it more batches are scored at once:
# scoring a leaf early never loses one; 2^18 leaves hold at most 23 MB at k = 10).
_PENDING_MAX = 2 ** 18


def supports_class_search(scorer, s: int) -> bool:
    """Whether :func:`class_minimum` applies: a least-squares scorer with few enough columns."""
    return (isinstance(scorer, SquaredLossScorer) and is_least_squares(scorer.loss)
            and scorer.p - s <= MAX_OUTSIDE)


def class_minimum(scorer, S1, k, cutoff=np.inf, *, incumbent=None, deadline=None,
                  verbose=False, memory=None):
    """Exact minimum of c over the supports with exactly k elements outside S1, below a cut-off.

    Parameters
    ----------
    scorer : LeastSquaresScorer
    S1 : array_like of int, shape (s,)
        The centre of the classes (the best support).
    k : int
        Number of mistakes, 1 <= k <= min(s, p - s).
    cutoff : float
        Only members scoring strictly below this are searched for.
    incumbent : (support, score), optional
        A known member; its score lowers the cut-off (it is returned if nothing beats it).
    deadline : float, optional
        ``time.perf_counter()`` value past which SearchTimeout is raised.
    verbose : bool
        A progress bar over the bases (tqdm, stderr).
    memory : MemoryBudget, optional
        The search's memory budget: the depth-first stack of node batches and the
        leaves awaiting exact scores are held in it (SearchMemoryLimit past it). The
        stack holds at most one parent batch per depth (each about _BATCH_ELEMENTS
        numbers) and the pending leaves at most _PENDING_MAX.

    Returns
    -------
    support : ndarray of int, shape (s,), or None
        The best member, or None when no member scores below ``cutoff`` (then the
        class minimum is proved >= cutoff).
    score : float
        Its exact score (``cutoff`` when support is None).
    nodes : int
        Branch-and-bound nodes expanded (a measure of the work).
    """
    S1 = np.sort(np.asarray(S1, dtype=np.intp))
    s, p = len(S1), scorer.p
    outside = np.setdiff1d(np.arange(p), S1)
    if not 1 <= k <= min(s, len(outside)):
        raise ValueError(f"class k = {k} is empty for s = {s}, p = {p}")
    best_S, best_v = None, float(cutoff)
    if incumbent is not None and incumbent[1] < best_v:
        best_S, best_v = np.sort(np.asarray(incumbent[0], dtype=np.intp)), float(incumbent[1])
    state = {"S": best_S, "v": best_v, "nodes": 0}
    bar = progress(verbose, total=comb(s, s - k), unit="base",
                   desc=f"mistake class {k}: branch and bound")
    memory = MemoryBudget(None) if memory is None else memory
    for B in combinations(S1, s - k):
        _search_base(scorer, np.asarray(B, dtype=np.intp), outside, k, state, deadline,
                     memory)
        bar.update()
        bar.set_postfix(nodes=state["nodes"])
    bar.close()
    return state["S"], state["v"], state["nodes"]


def _search_base(scorer, B, outside, k, state, deadline, memory):
    """Branch and bound over the k added columns for one base B; updates ``state``."""
    key = ("class search", object())
    try:
        _search_base_held(scorer, B, outside, k, state, deadline, memory, key)
    finally:
        memory.release(key)


def _search_base_held(scorer, B, outside, k, state, deadline, memory, key):
    """:func:`_search_base`, holding its stack and pending leaves under ``key``."""
    # Ridge values under the Lagrangian shift of the base's own ball multiplier
    # (LeastSquaresScorer._dual_shift): for every J, c(B + J) >= (ridge value of
    # B + J with ridge lam/n + shift) - shift r^2 / 2, nearly exact where the ball
    # binds; with shift = 0 (ball slack) they are the plain ridge values.
    shift = scorer._dual_shift(B)
    lam_n = scorer.lam_n + shift
    # Always-in block A = forced columns + base; its ridge Gram K and right-hand side.
    kf = scorer.k_forced
    a = kf + len(B)
    K = np.empty((a, a))
    K[:kf, :kf] = scorer.FF
    K[kf:, :kf] = scorer.XF[B]
    K[:kf, kf:] = scorer.XF[B].T
    K[kf:, kf:] = _gram(scorer, B, B)
    K[np.diag_indices(a)] += lam_n
    gA = np.concatenate([scorer.Fy, scorer.Xy[B]])
    L = np.linalg.cholesky(K)
    u = np.linalg.solve(L, gA)
    value_A = 0.5 * scorer.yy - 0.5 * float(u @ u) - 0.5 * shift * scorer.r ** 2
    KOA = np.hstack([scorer.XF[outside], _gram(scorer, outside, B)])  # (q, a)
    Z = np.linalg.solve(L, KOA.T)  # (a, q)
    h = scorer.Xy[outside] - Z.T @ u
    M = _gram(scorer, outside, outside) - Z.T @ Z
    M[np.diag_indices(len(outside))] += lam_n
    lam_lb = _min_eigenvalue_bound(M, lam_n)
    tol = 1e-12 * max(1.0, abs(scorer.yy))
    # Columns in decreasing single-column gain: good sets are met early, which lowers
    # the cut-off sooner, and the "later columns only" rule keeps each set once.
    order = np.argsort(-(h * h) / np.diag(M), kind="stable")
    h, M = h[order], M[np.ix_(order, order)]
    cols = outside[order]
    q = len(cols)
    Mdiag = np.diag(M).copy()
    pending = []  # leaves whose ridge value is below the cut-off, awaiting exact scores

    def need():
        # gain a set must reach to score below the current cut-off (ridge value)
        return 2.0 * (value_A - state["v"]) - tol

    # A batch of nodes: positions idx (N, m), R = L_J^{-1} M_J: (N, m, q),
    # w = L_J^{-1} h_J (N, m), gain (N,). The stack holds batches of children still to
    # be formed (a parent batch and the chosen (node, column) pairs), so only one
    # batch of each depth is materialised at a time.
    root = (np.zeros((1, 0), np.intp), np.zeros((1, 0, q)), np.zeros((1, 0)), np.zeros(1))
    stack = [(root, None)]
    arange_q = np.arange(q)
    # Memory held: the stack's parent batches (each once, while an entry uses it) and
    # picks, and the pending leaves.
    parents = {}  # id of a parent batch on the stack -> [its bytes, stack entries using it]
    stack_bytes = 0

    def hold():
        memory.hold(key, stack_bytes + sum(v.nbytes + S.nbytes for v, S in pending),
                    problem=f"mistake class {k}", route="branch and bound over the added columns")

    while stack:
        if deadline is not None and time.perf_counter() > deadline:
            raise SearchTimeout(f"time limit reached while solving mistake class {k} exactly "
                                f"by branch and bound ({state['nodes']} nodes); nothing was "
                                "released.", problem=f"mistake class {k}")
        node, pick = stack.pop()
        if pick is not None:
            ref = parents[id(node)]
            ref[1] -= 1
            stack_bytes -= pick[0].nbytes + pick[1].nbytes
            if not ref[1]:
                stack_bytes -= ref[0]
                del parents[id(node)]
        idx, R, w, gain = node if pick is None else _children(*node, pick, M)
        m = idx.shape[1]
        t = k - m  # columns still to add, >= 1
        state["nodes"] += len(idx)
        hr = h[None, :] - np.einsum("nmq,nm->nq", R, w)
        piv = Mdiag[None, :] - np.einsum("nmq,nmq->nq", R, R)
        last = idx[:, -1] if m else np.full(len(idx), -1)
        after = arange_q[None, :] > last[:, None]
        # The t - 1 columns still needed after this one must fit: position <= q - t.
        allowed = after & (arange_q[None, :] <= q - t)
        piv = np.where(allowed, np.maximum(piv, 1e-300), 1.0)
        child_gain = gain[:, None] + np.where(allowed, hr * hr / piv, -np.inf)
        if t == 1:
            ii, jj = np.nonzero(allowed & (child_gain >= need()))
            if len(ii):
                pending.append((value_A - 0.5 * child_gain[ii, jj],
                                np.column_stack([idx[ii], jj])))
                if sum(len(v) for v, _ in pending) >= _RESCORE_BATCH:
                    _rescore(scorer, B, cols, pending, state, tol)
                hold()
            continue
        # Upper bound on the gain of any completion through child (node, j): the
        # added columns {j} + T have a Schur complement >= lam_lb I, so the further
        # gain is at most (hr_j^2 + sum over T of hr_l^2) / lam_lb, and each l in T
        # comes after j: hr_l^2 <= the largest hr^2 after position j.
        h2 = np.where(after, hr * hr, 0.0)
        later = np.zeros_like(h2)
        later[:, :-1] = np.maximum.accumulate(h2[:, :0:-1], axis=1)[:, ::-1]
        bound = gain[:, None] + (h2 + (t - 1) * later) / lam_lb
        ii, jj = np.nonzero(allowed & (bound >= need()))
        if not len(ii):
            continue
        # Most promising children last on the stack, so they are expanded first.
        rank = np.argsort(child_gain[ii, jj], kind="stable")
        step = max(1, _BATCH_ELEMENTS // max(1, (m + 1) * q))
        parent = (idx, R, w, gain, hr, piv)
        ref = parents[id(parent)] = [sum(a.nbytes for a in parent), 0]
        stack_bytes += ref[0]
        for a0 in range(0, len(rank), step):
            sel = rank[a0:a0 + step]
            pick = (ii[sel], jj[sel])
            stack.append((parent, pick))
            ref[1] += 1
            stack_bytes += pick[0].nbytes + pick[1].nbytes
        hold()
    if pending:
        _rescore(scorer, B, cols, pending, state, tol, final=True)


def _children(idx, R, w, gain, hr, piv, pick, M):
    """Materialise the children (node i, column j) of a parent batch: one rank-one
    Cholesky step each (the new row of R and the new entry of w)."""
    ii, jj = pick
    sq = np.sqrt(piv[ii, jj])
    Ri = R[ii]  # (c, m, q)
    new_row = (M[jj] - np.einsum("cm,cmq->cq", Ri[np.arange(len(ii)), :, jj], Ri)) / sq[:, None]
    R_c = np.concatenate([Ri, new_row[:, None, :]], axis=1)
    w_c = np.column_stack([w[ii], hr[ii, jj] / sq])
    gain_c = gain[ii] + hr[ii, jj] ** 2 / piv[ii, jj]
    return np.column_stack([idx[ii], jj]), R_c, w_c, gain_c


def _rescore(scorer, B, cols, pending, state, tol, final=False):
    """Exact scores for the pending leaves, best ridge value first.

    A leaf's ridge value is a lower bound on its score, so leaves whose ridge value
    is above the incumbent are dropped. During the search one batch is scored (to
    lower the cut-off early; more while over _PENDING_MAX leaves would be left) and
    the rest stays pending; at the end (``final``) the leaves are scored until no
    ridge value can beat the incumbent.
    """
    vals = np.concatenate([v for v, _ in pending])
    sets = np.vstack([s for _, s in pending])
    pending.clear()
    order = np.argsort(vals, kind="stable")
    vals, sets = vals[order], sets[order]
    while len(vals) and vals[0] <= state["v"] + tol:
        take = min(len(vals), _RESCORE_BATCH)
        sup = np.sort(np.column_stack([np.broadcast_to(B, (take, len(B))), cols[sets[:take]]]),
                      axis=1)
        exact = scorer.score(sup)
        j = int(np.argmin(exact))
        if exact[j] < state["v"]:
            state["S"], state["v"] = sup[j], float(exact[j])
        vals, sets = vals[take:], sets[take:]
        live = vals <= state["v"] + tol
        vals, sets = vals[live], sets[live]
        if not final and len(vals) <= _PENDING_MAX:
            break
    keep = vals <= state["v"] + tol  # empty after a final pass
    if np.any(keep):
        pending.append((vals[keep], sets[keep]))


def _min_eigenvalue_bound(M, lam_n):
    """A certified lower bound on the smallest eigenvalue of the Schur complement M.

    M >= lam_n I in exact arithmetic (a Schur complement of a Gram matrix plus lam_n I).
    The computed eigenvalue is lowered by a rounding allowance (backward error of the
    symmetric eigensolver, a small multiple of q u ||M||) before it is trusted; past
    _EIG_MAX columns the eigenvalue problem costs more than it saves and lam_n is used.
    """
    q = len(M)
    if q > _EIG_MAX:
        return lam_n * (1.0 - 1e-12)
    scale = float(np.max(np.abs(np.diag(M))))
    return max(lam_n * (1.0 - 1e-12), float(np.linalg.eigvalsh(M)[0]) - 1e-9 * scale * q)


def _gram(scorer, rows, cols):
    """X_rows' X_cols / n, from the stored Gram matrix when there is one."""
    if scorer.gram is not None:
        return scorer.gram[np.ix_(rows, cols)]
    return scorer.X[:, rows].T @ scorer.X[:, cols] / scorer.n
