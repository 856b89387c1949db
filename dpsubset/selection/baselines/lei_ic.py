"""``method="lei_ic"``: information criterion plus Laplace noise (Lei et al. 2018).

The method of Lei, Charest, Slavkovic, Smith and Fienberg (2018;
docs/methods/selection.md). Over a public list of candidate models M
(sets of candidate columns; the intercept and ``keep=`` columns are in every
model) it scores

    IC(M) = Q(M) + phi |M|,
    Q(M)  = min over ||beta||_1 <= R1 of  sum_i (y_i - a_i' beta)^2,

the l1-constrained residual sum of squares (sum, not mean: their scale) with
a_i the row of the model's columns and beta all of the model's coefficients
(forced columns included), and releases

    argmin_M  IC(M) + (2 Delta / eps) W_M,   W_M i.i.d. Laplace(0, 1)

(report-noisy-min). Unlike top-R it also chooses the model size: ``s`` is the
largest size on the list, and the released support may be smaller.

Options (``method_options``): ``models``, a list of models given as lists of term
names (default: every non-empty set of at most s candidate columns, refused above
:data:`LEI_MODEL_LIMIT` models); ``R1``, the l1 radius (default: the call's ``r``);
``phi``, the penalty per term (default b_y^2 log n: Lei et al.'s BIC-like
sigma^2 log n with sigma^2 replaced by its public upper bound b_y^2, as Lei et al.'s
DP estimate of sigma^2 is not part of this method). The ridge ``lam`` of the call
is not used. All of them are public.

Sensitivity under row replacement. On the l1 ball, with |y_i| <= b_y and
|x_ij| <= b_j, one row's residual is at most b_y + R1 max_j b_j in absolute value,
so its squared loss lies in [0, (b_y + R1 b_max)^2] and

    Delta = (b_y + R1 b_max)^2

bounds the change of every Q(M) (evaluate the old minimiser on the new data, and
the other way round); phi |M| does not depend on the data. b_max is the largest
public bound over the columns any listed model uses (the intercept counts, with
bound 1). With Lei et al.'s |x_ij| <= 1, |y_i| <= r this is its (r + R)^2.

Guarantee: pure eps-DP. Each IC(M) moves by at most Delta, so the winning
threshold of any model moves by at most 2 Delta, and Laplace noise of scale
2 Delta / eps changes each model's winning probability by a factor at most e^eps
(report-noisy-max for scores of sensitivity Delta, Dwork and Roth 2014, Sec. 3.3).
The model list, R1 and phi must be public (fixed before the data are seen).

Exactness. The argument needs the exact Q(M). It is computed by enumerating the
faces of the l1 ball restricted to linearly independent column sets (some
minimiser always has linearly independent support, so one of the enumerated
candidates is optimal), and certified by the Frank-Wolfe duality gap
2 (R1 ||A'rho||_inf - rho' A beta) >= Q(beta) - Q(M) at the returned feasible
beta. Every gap must be at most :data:`GAP_SLACK` x Delta, and the noise is
calibrated to Delta (1 + GAP_SLACK), which covers the computed values: they are
within GAP_SLACK Delta above the exact ones on both datasets.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..._validation import is_real
from ...mechanisms import noise
from ...search.outer_approximation import SearchTimeout
from ...privacy.budget import Stage
from ..base import Selection, SelectionMethod, register_method
from ...losses import SquaredLoss

#: The guarantee this method declares when it spends (the report's is the weakest declared).
GUARANTEE = "pure"

__all__ = ["LEI_MODEL_LIMIT", "LEI_MAX_TERMS", "GAP_SLACK", "l1_constrained_rss",
           "lei_sensitivity", "lei_noise_scale", "lei_scores", "sample_noisy_min",
           "noisy_min_distribution", "all_models", "validate_lei", "select_lei"]

#: Largest number of candidate models (the default list of all subsets up to size s
#: counts sum_k C(p, k) of them).
LEI_MODEL_LIMIT = 100_000
#: Largest number of coefficients in one model (candidates + intercept + keep=): the
#: exact solve enumerates 3^k faces of the l1 ball.
LEI_MAX_TERMS = 11
#: Relative slack for the certified duality gap of every Q(M) (see module notes).
GAP_SLACK = 1e-8

# Column sets whose Gram block has a relative eigenvalue below this are treated as
# linearly dependent and skipped (an independent subset attains the same optimum).
_RANK_TOL = 1e-10
# Work per chunk of models: models x sign patterns x terms.
_CHUNK = 2_000_000

_NOT_USED = {
    "R": "R is the list length of top-R; the l1 radius of lei_ic is method_options={'R1': ...}",
    "eps0": "eps0 is the gap-test budget of method='mistakes'",
    "delta": "lei_ic (report-noisy-min with Laplace noise) is pure eps-DP; it has no delta",
}


# --------------------------------------------------------------------------- the score
def l1_constrained_rss(G, g, yy, R1):
    """Exact min over ||beta||_1 <= R1 of yy - 2 g'beta + beta'G beta, for a stack of models.

    Parameters
    ----------
    G : ndarray, shape (m, k, k)
        A'A of each model (sum scale).
    g : ndarray, shape (m, k)
        A'y of each model.
    yy : float
        y'y.
    R1 : float
        Radius of the l1 ball.

    Returns
    -------
    value : ndarray, shape (m,)
        The residual sum of squares at ``beta`` (an upper bound on the minimum).
    beta : ndarray, shape (m, k)
        Feasible minimisers.
    gap : ndarray, shape (m,)
        Certified duality gaps: value - gap <= Q <= value.

    Notes
    -----
    The minimum is attained at a point whose non-zero coordinates T index linearly
    independent columns (move along a null direction of A_T, which keeps the fit
    and does not increase the l1 norm, until a coordinate vanishes). Such a point
    is either the least-squares fit on T (inside the ball) or the minimiser on the
    face sign(beta_T)'beta_T = R1, both unique and in closed form. Enumerating every
    T (2^k of them) and every sign pattern gives candidates that are all feasible
    and include the optimum; the smallest value is Q. The Frank-Wolfe gap at the
    chosen point certifies it independently of this argument.
    """
    G = np.asarray(G, dtype=float)
    g = np.asarray(g, dtype=float)
    m, k = g.shape
    best = np.full(m, float(yy))
    beta = np.zeros((m, k))
    for size in range(1, k + 1):
        sig = np.array(list(itertools.product((-1.0, 1.0), repeat=size)))  # (P, t)
        for T in itertools.combinations(range(k), size):
            T = list(T)
            H = G[:, T][:, :, T]
            gt = g[:, T]
            w, V = np.linalg.eigh(H)
            ok = w[:, 0] > _RANK_TOL * np.maximum(w[:, -1], np.finfo(float).tiny)
            if not ok.any():
                continue
            w = np.where(ok[:, None], w, 1.0)
            Hi = np.einsum("mij,mj,mkj->mik", V, 1.0 / w, V)
            b_int = np.einsum("mij,mj->mi", Hi, gt)
            # interior: the least-squares fit on T, if it lies in the ball
            val = yy - 2 * np.sum(gt * b_int, axis=1) + np.einsum("mi,mij,mj->m", b_int, H, b_int)
            feas = ok & (np.abs(b_int).sum(axis=1) <= R1)
            _update(best, beta, T, val, b_int, feas)
            # boundary: minimiser on the face sigma'beta_T = R1, signs must agree with sigma
            Hs = np.einsum("mij,pj->mpi", Hi, sig)                    # H^{-1} sigma
            num = np.einsum("pj,mj->mp", sig, b_int) - R1             # sigma'H^{-1}g - R1
            den = np.einsum("pj,mpj->mp", sig, Hs)                    # sigma'H^{-1}sigma > 0
            b = b_int[:, None, :] - (num / den)[:, :, None] * Hs      # (m, P, t)
            on_face = ok[:, None] & np.all(sig[None] * b >= 0.0, axis=2)
            vb = (yy - 2 * np.einsum("mi,mpi->mp", gt, b)
                  + np.einsum("mpi,mij,mpj->mp", b, H, b))
            vb = np.where(on_face, vb, np.inf)
            j = np.argmin(vb, axis=1)
            rows = np.arange(m)
            _update(best, beta, T, vb[rows, j], b[rows, j], np.isfinite(vb[rows, j]))
    # Make the chosen points exactly feasible (rounding) and evaluate them again.
    l1 = np.abs(beta).sum(axis=1)
    over = l1 > R1
    beta[over] *= (R1 / l1[over])[:, None]
    Gb = np.einsum("mij,mj->mi", G, beta)
    value = yy - 2 * np.sum(g * beta, axis=1) + np.sum(beta * Gb, axis=1)
    grad = 2.0 * (Gb - g)
    gap = np.sum(grad * beta, axis=1) + R1 * np.max(np.abs(grad), axis=1)
    return np.maximum(value, 0.0), beta, np.maximum(gap, 0.0)


def _update(best, beta, T, val, b, mask):
    better = mask & (val < best)
    if better.any():
        best[better] = val[better]
        beta[better] = 0.0
        beta[np.ix_(np.flatnonzero(better), T)] = b[better]


def lei_sensitivity(b_y: float, R1: float, b_max: float) -> float:
    """Delta = (b_y + R1 b_max)^2: row-replacement sensitivity of every Q(M) (sum scale)."""
    return (float(b_y) + float(R1) * float(b_max)) ** 2


def lei_noise_scale(Delta: float, eps: float) -> float:
    """Laplace scale of report-noisy-min: 2 Delta (1 + GAP_SLACK) / eps."""
    return 2.0 * Delta * (1.0 + GAP_SLACK) / eps


def lei_scores(Q, sizes, phi: float) -> np.ndarray:
    """Information criteria IC(M) = Q(M) + phi |M| (|M| = number of candidate columns)."""
    return np.asarray(Q, dtype=float) + float(phi) * np.asarray(sizes, dtype=float)


def model_rss(X, y, forced, models, R1):
    """Q(M) of every model (forced columns in all of them), with certified gaps.

    Parameters
    ----------
    X : ndarray (n, p); y : ndarray (n,); forced : ndarray (n, kf)
    models : list of tuple of int
    R1 : float

    Returns
    -------
    Q : ndarray (len(models),)
    gap : ndarray (len(models),)
    """
    Z = np.hstack([forced, X])
    kf = forced.shape[1]
    yy = float(y @ y)
    Zy = Z.T @ y
    Q = np.empty(len(models))
    gap = np.empty(len(models))
    by_size = {}
    for i, M in enumerate(models):
        by_size.setdefault(len(M), []).append(i)
    gram = Z.T @ Z if Z.shape[1] <= 3000 else None
    for size, idx in by_size.items():
        cols = np.array([list(range(kf)) + [kf + j for j in models[i]] for i in idx],
                        dtype=np.intp).reshape(len(idx), kf + size)
        k = kf + size
        step = max(1, _CHUNK // (3 ** k * max(k, 1)))
        for a in range(0, len(idx), step):
            C = cols[a:a + step]
            if gram is not None:
                G = gram[C[:, :, None], C[:, None, :]]
            else:
                A = Z[:, C]  # (n, m, k)
                G = np.einsum("nmi,nmj->mij", A, A)
            v, _, gp = l1_constrained_rss(G, Zy[C], yy, R1)
            Q[idx[a:a + step]] = v
            gap[idx[a:a + step]] = gp
    return Q, gap


# --------------------------------------------------------------------------- the draw
def sample_noisy_min(scores, scale: float, rng: np.random.Generator) -> int:
    """Report-noisy-min: argmin_M scores[M] + scale W_M, W_M i.i.d. Laplace(0, 1).

    The noisy scores are exact discrete-Laplace releases on a public grid
    (:func:`dpsubset.mechanisms.noise.laplace_release`); ties, of probability about
    K^2 2^-44, go to the first index, a fixed rule the report-noisy-min proof allows.
    """
    return int(np.argmin(noise.laplace_release(np.asarray(scores, dtype=float), scale, rng)))


def noisy_min_distribution(scores, scale: float, log: bool = False, nodes: int = 24):
    """Exact output distribution of :func:`sample_noisy_min` (numerical integration).

    P(M wins) = integral of f_M(u) prod_{k != M} S_k(u) du, with f_k and S_k the
    density and survival function of c_k + scale W_k. Below min c and above max c
    the substitution t = exp(+-(u - c)/scale) makes the integrand a polynomial of
    degree K - 1 in t, integrated exactly by Gauss-Legendre; between the sorted
    scores the integrand is smooth and pieces of length <= 4 scale / K get
    ``nodes`` Gauss-Legendre points (the integrand is a sum of exponentials with
    rates up to K / scale, so this is accurate to rounding). Everything is summed in
    log space, so tiny probabilities keep their relative accuracy.
    """
    c = np.asarray(scores, dtype=float).ravel()
    K = c.size
    b = float(scale)
    if K == 1:
        return np.zeros(1) if log else np.ones(1)
    logs = []
    # left tail, u = lo + b log t
    lo, hi = float(c.min()), float(c.max())
    x, w = np.polynomial.legendre.leggauss(K // 2 + 2)
    t = 0.5 * (x + 1.0)
    lw = np.log(0.5 * w)
    e = (lo - c) / b                                     # <= 0
    logS = np.log1p(-0.5 * t[:, None] * np.exp(e)[None, :])   # (N, K)
    logs.append(lw[:, None] + math.log(0.5) + e[None, :] + logS.sum(1, keepdims=True) - logS)
    # right tail, u = hi - b log t
    e = (c - hi) / b                                     # <= 0
    logS = math.log(0.5) + np.log(t)[:, None] + e[None, :]
    logs.append(lw[:, None] + math.log(0.5) + e[None, :] + logS.sum(1, keepdims=True) - logS)
    # middle pieces
    knots = np.unique(c)
    xm, wm = np.polynomial.legendre.leggauss(nodes)
    step = 4.0 * b / K
    us, ws = [], []
    for a, z in zip(knots[:-1], knots[1:]):
        m = int(math.ceil((z - a) / step))
        edges = np.linspace(a, z, m + 1)
        half = 0.5 * np.diff(edges)
        mid = 0.5 * (edges[1:] + edges[:-1])
        us.append((mid[:, None] + half[:, None] * xm[None, :]).ravel())
        ws.append((half[:, None] * wm[None, :]).ravel())
    if us:
        u = np.concatenate(us)
        wu = np.concatenate(ws)
        d = (u[:, None] - c[None, :]) / b                # (N, K)
        logf = math.log(0.5 / b) - np.abs(d)
        logS = np.where(d <= 0, np.log1p(-0.5 * np.exp(np.minimum(d, 0.0))),
                        math.log(0.5) - np.maximum(d, 0.0))
        logs.append(np.log(wu)[:, None] + logf + logS.sum(1, keepdims=True) - logS)
    L = np.concatenate(logs, axis=0)
    top = L.max(axis=0)
    lp = top + np.log(np.exp(L - top).sum(axis=0))
    return lp if log else np.exp(lp)


# --------------------------------------------------------------------------- models
def all_models(p: int, s: int):
    """Every non-empty set of at most s of the p candidate columns (by size, then lexicographic)."""
    return [M for k in range(1, s + 1) for M in itertools.combinations(range(p), k)]


def n_all_models(p: int, s: int) -> int:
    return sum(math.comb(p, k) for k in range(1, s + 1))


def validate_lei(options, *, s, eps, loss):
    """Check ``models``, ``R1`` and ``phi`` before any data are read.

    Returns
    -------
    dict with ``models`` (list of tuple of str, or None for all subsets up to size
    s), ``R1`` (None: the call's ``r``) and ``phi`` (None: b_y^2 log n).
    """
    opts = dict(options)
    for key in list(opts):
        if key in _NOT_USED:
            raise ValueError(f"method='lei_ic' does not use {key}: {_NOT_USED[key]}")
    models = opts.pop("models", None)
    R1 = opts.pop("R1", None)
    phi = opts.pop("phi", None)
    if opts:
        raise TypeError(f"method='lei_ic' got unknown options {sorted(opts)}; "
                        "it takes 'models', 'R1' and 'phi'")
    if R1 is not None and (not is_real(R1)
                           or not 0 < R1 < math.inf):
        raise ValueError(f"R1 (the l1 radius) must be a finite number > 0, got {R1!r}")
    if phi is not None and (not is_real(phi)
                            or not 0 <= phi < math.inf):
        raise ValueError(f"phi (the penalty per term) must be a finite number >= 0, got {phi!r}")
    if models is not None:
        if isinstance(models, (str, bytes)) or not hasattr(models, "__iter__"):
            raise ValueError("models must be a list of models, each a list of term names, "
                             "e.g. [['x1'], ['x1', 'x2']]")
        out, seen = [], set()
        for M in models:
            if isinstance(M, (str, bytes)) or not hasattr(M, "__iter__"):
                raise ValueError(f"each model must be a list of term names, got {M!r}; "
                                 "write [['x1'], ['x1', 'x2']], not ['x1', 'x2']")
            M = tuple(M)
            if not M or not all(isinstance(t, str) for t in M):
                raise ValueError(f"each model must be a non-empty list of term names, got {list(M)!r}")
            if len(set(M)) != len(M):
                raise ValueError(f"model {list(M)!r} names a term twice")
            if len(M) > s:
                raise ValueError(f"model {list(M)!r} has {len(M)} terms but s = {s} is the largest "
                                 f"size allowed; raise s to {len(M)} or shorten the model")
            key = frozenset(M)
            if key in seen:
                raise ValueError(f"model {sorted(M)!r} is listed twice (it would count double)")
            seen.add(key)
            out.append(M)
        if not out:
            raise ValueError("models is empty: list at least one model")
        if len(out) > LEI_MODEL_LIMIT:
            raise ValueError(f"{len(out)} models is beyond the limit of {LEI_MODEL_LIMIT:,}")
        models = out
    return dict(models=models, R1=None if R1 is None else float(R1),
                phi=None if phi is None else float(phi))


def _model_indices(req):
    names = req.design.spec.candidate_names
    p, s = req.p, req.s
    if req.options["models"] is None:
        total = n_all_models(p, s)
        if total > LEI_MODEL_LIMIT:
            raise ValueError(
                f"method='lei_ic' without a model list scores all {total:,} subsets of at most "
                f"s = {s} of the {p} candidate columns, beyond its limit of {LEI_MODEL_LIMIT:,}; "
                "pass method_options={'models': [...]} or a smaller s")
        return all_models(p, s)
    index = {nm: j for j, nm in enumerate(names)}
    unknown = sorted({t for M in req.options["models"] for t in M if t not in index})
    if unknown:
        raise ValueError(f"models name terms that are not candidate columns: {unknown}; "
                         f"the candidates are {names}")
    return [tuple(sorted(index[t] for t in M)) for M in req.options["models"]]


def select_lei(req) -> Selection:
    """Score the models by the penalised l1-constrained RSS; release the Laplace-noisy minimum."""
    d = req.design
    models = _model_indices(req)  # errors about the list come before any scoring
    kf = d.forced.shape[1]
    k_max = kf + max(len(M) for M in models)
    if k_max > LEI_MAX_TERMS:
        raise ValueError(f"method='lei_ic' solves each model exactly over 3^k faces and allows "
                         f"k <= {LEI_MAX_TERMS} coefficients per model (intercept and keep= "
                         f"included); the largest model here has {k_max}: lower s")
    R1 = req.r if req.options["R1"] is None else req.options["R1"]
    phi = (d.b_y ** 2 * math.log(d.n)) if req.options["phi"] is None else req.options["phi"]
    used = sorted({j for M in models for j in M})
    b_max = max([float(np.max(d.x_bounds[used]))] + [float(b) for b in d.forced_bounds])
    Delta = lei_sensitivity(d.b_y, R1, b_max)

    Q, gap = model_rss(d.X, d.y, d.forced, models, R1)
    if np.any(gap > GAP_SLACK * Delta):
        raise SearchTimeout("lei_ic: the l1-constrained least squares of some model was not "
                            "certified to the required accuracy; nothing was released")
    ic = lei_scores(Q, [len(M) for M in models], phi)
    k = sample_noisy_min(ic, lei_noise_scale(Delta, req.eps), req.rng)
    order = np.lexsort((np.arange(len(ic)), ic))[:100]
    names = d.spec.candidate_names
    req.ledger.spend(Stage.SELECTION, "information criterion + Laplace report-noisy-min (Lei et al. 2018)",
                     req.eps, 0.0, guarantee=GUARANTEE)
    return Selection(
        support=tuple(sorted(models[k])),
        statement=(f"The selection scores {len(models)} public models by the l1-constrained "
                   f"residual sum of squares (R1 = {R1:.4g}) plus phi = {phi:.4g} per term, with "
                   f"sensitivity (b_y + R1 b_max)^2 = {Delta:.4g}; it also chooses the model "
                   f"size (at most s = {req.s})."),
        sensitivity=Delta,
        certificates=[dict(problem=f"l1-constrained RSS of {len(models)} models",
                           method="enumeration of l1-ball faces (duality-gap certified)",
                           closed=True)],
        diagnostics=dict(best_support=[names[j] for j in models[order[0]]],
                         candidate_supports=[[names[j] for j in models[i]] for i in order],
                         candidate_scores=ic[order].copy()))


register_method(SelectionMethod(
    name="lei_ic", select=select_lei, validate=validate_lei, losses=(SquaredLoss.name,),
    description="information criterion (l1-constrained RSS + phi |M|) with Laplace "
                "report-noisy-min over a model list (Lei et al. 2018): pure eps-DP; "
                "chooses the model size up to s"))
