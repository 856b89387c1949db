"""Sample-and-aggregate support selection (``method="samp_agg"``).

The two-stage selector of Kifer, Smith and Thakurta (2012), as the "Lasso
Samp-Agg" baseline of Prastakos, Behdin and Mazumder (2025):

1. Split the n rows into m = floor(sqrt(n)) disjoint blocks of consecutive rows
   (m is a function of the public n only).
2. In each block, run a non-private selector that returns exactly s columns: the
   Lasso, with the s columns of largest |coefficient|. Each block casts one 0/1
   vote vector z_b with exactly s ones.
3. Average the votes, v = (1/m) sum_b z_b, add i.i.d. Laplace(2 s / (m eps)) noise
   to each of the p coordinates, and release the s largest noisy coordinates.

Privacy (row replacement, pure eps-DP)
--------------------------------------
Replacing one row changes one block only, so only one vote vector changes, from
z_b to z_b'. Both have exactly s ones, hence ||z_b - z_b'||_1 <= 2 s and the L1
sensitivity of v is 2 s / m. The Laplace mechanism with scale 2 s / (m eps)
releases the noisy vector with eps-DP, and the top-s set is post-processing.
Nothing here depends on the Lasso being stable or on the data: a block's vote may
be *any* function of that block's rows alone, which is why the Lasso penalty may
be tuned inside each block (``penalty="path"``) without any privacy cost. A
penalty tuned on the whole data set would break this argument, and is not offered.

Two differences from the paper's published code, both needed for the guarantee:
its blocks vote for *every* non-zero Lasso coefficient (up to p votes per block,
so 2 s / m is not the sensitivity), and its ranking uses |noisy average|.
Here each block votes for exactly s columns and the ranking uses the signed
noisy average.

Per-block Lasso
---------------
``penalty="path"`` (default): the first s columns to enter the Lasso path of the
block, computed exactly by least-angle regression with the Lasso modification
(Efron, Hastie, Johnstone and Tibshirani 2004): no penalty to choose and O(s n_b p)
work per block. ``penalty=<float alpha>``: the Lasso at the fixed penalty alpha of
``statsmodels.OLS.fit_regularized(L1_wt=1)`` (objective RSS / (2 n_b) +
alpha ||beta||_1), then the s largest |coefficients| (ties, e.g. among zero
coefficients, broken uniformly at random). Within a block, y and the columns are
centred by the block's own means (block-local, so private by the same argument).

The exact output law of the aggregation stage (:func:`vote_distribution`) is a
one-dimensional integral per support; ``tests/audit/test_samp_agg_audit.py``
audits it over every pair of neighbouring vote vectors of small problems.
"""
from __future__ import annotations

import math
from itertools import combinations

import numpy as np
from scipy import integrate

from ..._validation import is_integer, is_real
from ...mechanisms import noise
from ...privacy.budget import Stage
from ..base import Selection, SelectionMethod, register_method
from ...losses import SquaredLoss

#: The guarantee this method declares when it spends (the report's is the weakest declared).
GUARANTEE = "pure"

__all__ = ["n_blocks", "block_slices", "lars_first_s", "lasso_top_s", "block_votes",
           "laplace_scale", "sample_votes_top_s", "vote_distribution"]

_OPTIONS = ("blocks", "penalty")


# --------------------------------------------------------------------------- blocks
def n_blocks(n: int) -> int:
    """The default number of blocks, floor(sqrt(n)) (a function of the public n)."""
    return max(1, math.isqrt(int(n)))


def block_slices(n: int, m: int):
    """m disjoint blocks of consecutive rows whose sizes differ by at most one."""
    edges = np.linspace(0, n, m + 1).round().astype(int)
    return [slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]


# --------------------------------------------------------------------------- Lasso
def lars_first_s(X, y, s: int, *, return_path: bool = False):
    """The first s columns to enter the Lasso path (LARS with the Lasso modification).

    Parameters
    ----------
    X : ndarray, shape (n, p)
    y : ndarray, shape (n,)
    s : int
    return_path : bool
        Also return the list of knots (C, active set): C = max_j |X_j' r| at the knot.

    Returns
    -------
    active : ndarray of int, shape (s,) (fewer only if the path ends first)
    path : list of (float, tuple), only with ``return_path``

    Notes
    -----
    At penalty alpha (objective ||y - X b||^2 / (2 n) + alpha ||b||_1) the Lasso
    solution's support is the active set of the knot interval containing
    C = n alpha. The returned set is the active set just after the s-th column
    joined; with the Lasso modification a column whose coefficient crosses zero
    leaves the active set first.
    """
    X = np.asarray(X, dtype=float)
    r = np.asarray(y, dtype=float).copy()
    n, p = X.shape
    beta = np.zeros(p)
    c = X.T @ r
    usable = np.einsum("ij,ij->j", X, X) > 1e-12
    active: list[int] = []
    path = []
    tiny = 1e-12
    for _ in range(8 * p + 8 * s):
        cabs = np.where(usable, np.abs(c), -np.inf)
        C = float(np.max(cabs)) if not active else float(np.max(np.abs(c[active])))
        if not active:
            j = int(np.argmax(cabs))
            if not np.isfinite(cabs[j]) or cabs[j] <= tiny:
                break
            active.append(j)
            path.append((C, tuple(sorted(active))))
        if len(active) >= s:
            break
        A = np.array(active)
        sgn = np.sign(c[A])
        XA = X[:, A] * sgn
        G = XA.T @ XA
        try:
            Ginv1 = np.linalg.solve(G, np.ones(len(A)))
        except np.linalg.LinAlgError:
            break
        AA = 1.0 / math.sqrt(max(float(np.sum(Ginv1)), tiny))
        w = AA * Ginv1
        u = XA @ w
        a = X.T @ u
        inactive = np.setdiff1d(np.flatnonzero(usable), A)
        gam = np.inf
        j_add = -1
        if inactive.size:
            cj, aj = c[inactive], a[inactive]
            with np.errstate(divide="ignore", invalid="ignore"):
                g1 = (C - cj) / (AA - aj)
                g2 = (C + cj) / (AA + aj)
            g = np.concatenate([g1, g2])
            g[~(g > tiny)] = np.inf
            k = int(np.argmin(g))
            gam, j_add = float(g[k]), int(inactive[k % inactive.size])
        d = sgn * w
        with np.errstate(divide="ignore", invalid="ignore"):
            gdrop = -beta[A] / d
        gdrop[~(gdrop > tiny)] = np.inf
        k_drop = int(np.argmin(gdrop))
        if gdrop[k_drop] < gam:
            step = float(gdrop[k_drop])
            beta[A] += step * d
            beta[A[k_drop]] = 0.0
            r -= step * u
            active.pop(k_drop)
        else:
            if not np.isfinite(gam):
                break
            beta[A] += gam * d
            r -= gam * u
            active.append(j_add)
        c = X.T @ r
        path.append((float(np.max(np.abs(c[active]))) if active else 0.0, tuple(sorted(active))))
    out = np.array(sorted(active[:s]), dtype=np.intp)
    return (out, path) if return_path else out


def lasso_top_s(X, y, s: int, alpha: float, rng: np.random.Generator):
    """The s largest |coefficients| of the Lasso at penalty alpha (statsmodels).

    Ties (typically among zero coefficients) are broken uniformly at random.
    """
    import statsmodels.api as sm
    fit = sm.OLS(np.asarray(y, dtype=float), np.asarray(X, dtype=float)).fit_regularized(
        method="elastic_net", alpha=float(alpha), L1_wt=1.0)
    mag = np.abs(np.asarray(fit.params, dtype=float))
    # lexsort: primary key -|coef|, secondary a random permutation (random tie-break).
    order = np.lexsort((noise.permutation(mag.size, rng), -mag))
    return np.sort(order[:s]).astype(np.intp)


def block_votes(X, y, s: int, m: int, penalty="path", rng=None):
    """Vote counts of the m blocks: counts[j] = number of blocks voting for column j.

    Each block centres its own columns and response, runs the per-block Lasso and
    votes for exactly s columns.
    """
    n, p = X.shape
    rng = noise.as_generator(rng)
    counts = np.zeros(p, dtype=np.int64)
    for sl in block_slices(n, m):
        Xb = X[sl] - X[sl].mean(axis=0)
        yb = y[sl] - y[sl].mean()
        if penalty == "path":
            vote = lars_first_s(Xb, yb, s)
            if vote.size < s:  # path ended early (e.g. constant block): fill at random
                rest = np.setdiff1d(np.arange(p), vote)
                vote = np.concatenate([vote, rest[noise.uniform_subset(len(rest), s - vote.size, rng)]])
        else:
            vote = lasso_top_s(Xb, yb, s, penalty, rng)
        counts[vote] += 1
    return counts


# --------------------------------------------------------------------------- aggregation
def laplace_scale(s: int, m: int, eps: float) -> float:
    """Laplace scale 2 s / (m eps): L1 sensitivity 2 s / m of the averaged votes over eps."""
    return 2.0 * s / (m * eps)


def sample_votes_top_s(counts, m: int, s: int, eps: float, rng, scale=None):
    """Release the s largest coordinates of counts / m + Laplace(scale) (default 2 s/(m eps))."""
    v = np.asarray(counts, dtype=float) / m
    b = laplace_scale(s, m, eps) if scale is None else scale
    noisy = noise.laplace_release(v, b, rng)
    return np.sort(np.argsort(-noisy, kind="stable")[:s]).astype(np.intp)


def _lap_cdf(t, mu, b):
    z = (t - mu) / b
    return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0)), 1 - 0.5 * np.exp(-np.maximum(z, 0)))


def _lap_pdf(t, mu, b):
    return np.exp(-np.abs(t - mu) / b) / (2 * b)


def _gauss_grid(v, b, width_in_b=0.5, tail_in_b=40.0, nodes=20):
    """Gauss-Legendre nodes and weights on pieces of width <= width_in_b * b that
    have every kink of the Laplace densities (the points v) as an end point."""
    lo, hi = float(np.min(v)) - tail_in_b * b, float(np.max(v)) + tail_in_b * b
    edges = set(np.round(np.asarray(v, dtype=float), 14).tolist()) | {lo, hi}
    edges = np.array(sorted(edges))
    pieces = []
    for a, c in zip(edges[:-1], edges[1:]):
        k = max(1, int(math.ceil((c - a) / (width_in_b * b))))
        pieces.append(np.linspace(a, c, k + 1))
    edges = np.unique(np.concatenate(pieces))
    x0, w0 = np.polynomial.legendre.leggauss(nodes)
    mid, half = (edges[1:] + edges[:-1]) / 2, (edges[1:] - edges[:-1]) / 2
    t = (mid[:, None] + half[:, None] * x0[None, :]).ravel()
    w = (half[:, None] * w0[None, :]).ravel()
    return t, w


def vote_distribution(counts, m: int, s: int, eps: float, scale=None, method="gauss"):
    """Exact law of :func:`sample_votes_top_s` over all size-s supports.

    P(S) = P(min_{i in S} N_i > max_{j not in S} N_j) with N = counts/m + Laplace
    noise, written as a one-dimensional integral over the value t of the largest
    excluded coordinate:

        P(S) = int  d/dt[ prod_{j not in S} F_j(t) ]  prod_{i in S} (1 - F_i(t))  dt.

    Parameters
    ----------
    counts : array_like of int, shape (p,)
    m, s : int
    eps : float
    scale : float, optional
        Laplace scale; default 2 s / (m eps).
    method : {"gauss", "quad"}
        "gauss": Gauss-Legendre (20 nodes) on pieces of width <= scale / 2 between
        the kinks of the densities, all supports at once (the integrand is smooth
        on each piece, so this is exact to about 1e-14; the tails beyond 40 scales
        carry less than e^-40). "quad": scipy's adaptive quadrature, one support
        at a time (slow; an independent check for the tests).

    Returns
    -------
    supports : list of tuple
        All C(p, s) supports, lexicographic.
    probs : ndarray
    """
    v = np.asarray(counts, dtype=float) / m
    p = v.size
    b = laplace_scale(s, m, eps) if scale is None else scale
    supports = list(combinations(range(p), s))
    probs = np.empty(len(supports))
    if method == "gauss":
        t, w = _gauss_grid(v, b)
        F = _lap_cdf(t[:, None], v[None, :], b)          # (T, p)
        f = _lap_pdf(t[:, None], v[None, :], b)
        for k, S in enumerate(supports):
            inn = np.zeros(p, dtype=bool)
            inn[list(S)] = True
            Fo = F[:, ~inn]
            dens = np.prod(Fo, axis=1) * np.sum(f[:, ~inn] / Fo, axis=1)
            probs[k] = float(np.sum(w * dens * np.prod(1 - F[:, inn], axis=1)))
        return supports, probs
    if method != "quad":
        raise ValueError(f"method must be 'gauss' or 'quad', got {method!r}")
    lo, hi = v.min() - 40 * b, v.max() + 40 * b
    brk = sorted(set(np.round(v, 12).tolist()))
    for k, S in enumerate(supports):
        inside = np.array(S)
        out = np.setdiff1d(np.arange(p), inside)

        def integrand(x):
            Fo = _lap_cdf(x, v[out], b)
            dens = sum(_lap_pdf(x, v[out[a]], b) * np.prod(np.delete(Fo, a))
                       for a in range(out.size))
            return dens * np.prod(1 - _lap_cdf(x, v[inside], b))

        probs[k] = integrate.quad(integrand, lo, hi, points=brk, limit=400, epsabs=1e-15,
                                  epsrel=1e-12)[0]
    return supports, probs


# --------------------------------------------------------------------------- method
def _validate(options, *, s, eps, loss):
    opts = dict(options)
    blocks = opts.pop("blocks", None)
    penalty = opts.pop("penalty", "path")
    for key in ("R", "eps0", "delta"):
        if key in opts:
            raise ValueError(f"{key} does not apply to method='samp_agg' (pure eps-DP with a "
                             "Laplace vote; it has no R, gap test or delta); remove it")
    if opts:
        raise TypeError(f"method='samp_agg' got unknown options {sorted(opts)}; "
                        f"it takes {list(_OPTIONS)}")
    if blocks is not None and (not is_integer(blocks)
                               or blocks < 2):
        raise ValueError(f"method_options['blocks'] must be an integer >= 2 (a public number, "
                         f"default floor(sqrt(n))), got {blocks!r}")
    if isinstance(penalty, str):
        if penalty != "path":
            raise ValueError(f"method_options['penalty'] must be 'path' or a number alpha > 0, "
                             f"got {penalty!r}")
    elif (not is_real(penalty)
          or not (math.isfinite(penalty) and penalty > 0)):
        raise ValueError(f"method_options['penalty'] must be 'path' or a finite number alpha > 0, "
                         f"got {penalty!r}")
    else:
        penalty = float(penalty)
    return dict(blocks=None if blocks is None else int(blocks), penalty=penalty)


def _select(req) -> Selection:
    d = req.design
    n, s = d.n, req.s
    m = n_blocks(n) if req.options["blocks"] is None else req.options["blocks"]
    if m > n:
        raise ValueError(f"method_options['blocks'] = {m} exceeds the number of rows ({n})")
    rows = n // m
    if rows <= s:
        raise ValueError(f"samp_agg needs more than s = {s} rows per block; with n = {n} and "
                         f"{m} blocks a block has {rows} rows. Use fewer blocks "
                         f"(method_options={{'blocks': ...}}) or more data")
    counts = block_votes(d.X, d.y, s, m, req.options["penalty"], req.rng)
    support = sample_votes_top_s(counts, m, s, req.eps, req.rng)
    pen = req.options["penalty"]
    lasso = "first s columns on the block's Lasso path" if pen == "path" else f"Lasso(alpha={pen:g}), top s"
    req.ledger.spend(Stage.SELECTION, f"sample-and-aggregate ({m} blocks, {lasso}; Laplace scale 2s/(m eps))",
                     req.eps, 0.0, guarantee=GUARANTEE)
    return Selection(
        support=tuple(int(j) for j in support),
        sensitivity=2.0 * s / m, certificates=[],
        diagnostics=dict(vote_counts=counts.copy(), blocks=m,
                         best_support=[d.spec.candidate_names[j] for j in np.argsort(-counts, kind="stable")[:s]]))


register_method(SelectionMethod(
    name="samp_agg", select=_select, validate=_validate, losses=(SquaredLoss.name,),
    description="sample-and-aggregate Lasso (Kifer, Smith, Thakurta 2012): block votes + "
                "Laplace top-s; pure eps-DP"))
