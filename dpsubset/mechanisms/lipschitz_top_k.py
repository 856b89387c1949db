"""The canonical Lipschitz top-k mechanism (Shekelyan and Loukides), run without listing the sets.

Used by DP-SIS (``method="dp_sis"``, :mod:`dpsubset.selection.baselines.dp_sis`) and by the
private screen before the exact search (:mod:`dpsubset.selection.screening`), both on
normalised scores of sensitivity 1 each.

The canonical Lipschitz top-k mechanism
---------------------------------------
For a size-k set Y let out(Y) = max_{j not in Y} x_j (best excluded score) and
in(Y) = min_{i in Y} x_i (worst included score). The generalised canonical loss
with parameter gamma in [0, 1) is

    L(Y) = (1 - gamma) max(out(Y), in(Y)) - gamma in(Y)

(for gamma = 1/2 this is max(0, out(Y) - in(Y)) / 2, the l_inf distance from x to
the set of score vectors whose top k is Y). Both max(out, in) and in are
1-Lipschitz in l_inf, so L has sensitivity 1. The mechanism releases

    Y* = argmax_Y  ( -(eps / 2) L(Y) + E_Y ),   E_Y i.i.d. standard exponential,

which is report-noisy-max with exponential noise (equivalently permute-and-flip)
over all C(p, k) sets with a utility of sensitivity 1: pure eps-DP.

It is run without listing the C(p, k) sets: with the scores sorted,
x_[1] >= ... >= x_[p] at indices j_1, ..., j_p, a set is determined by its
"head" h (the largest h < k with j_1..j_h all in Y), its "tail" t (the position of
its worst member) and a "body" of the remaining k - h - 1 members strictly
between positions h + 1 and t. L is constant on each class C(h, t):

- C(k - 1, k) = {top k}, size 1, L = (1 - 2 gamma) x_[k];
- for h < k, t > k: L = (1 - gamma) x_[h+1] - gamma x_[t], and since position
  h + 1 is excluded by definition the body is drawn from positions h + 2 .. t - 1,
  so |C(h, t)| = C(t - h - 2, k - h - 1).

These p k - k^2 + 1 classes partition the C(p, k) sets. The maximum of m i.i.d.
standard exponentials is F^{-1}(U^{1/m}) = -log(1 - U^{1/m}) = -log(-expm1(log(U) / m)).
The class with the largest (utility + class noise) wins, decided exactly for real
uniforms known bit by bit (:mod:`dpsubset.mechanisms.max_exponential`: no floating-point
noise is released, and huge class sizes stay exact), and a uniformly random member of it is
released (every member had the same utility and i.i.d. noise, so each is equally
likely to have carried the maximum). O(p k) work after the sort.

Swope et al.'s Algorithm 2 updates the class size as m <- m (t - h - 1) / (k - h - 1),
i.e. |C(h, t)| = C(t - h - 1, k - h - 1), which lets the body include position
h + 1; then the classes overlap (for p = 3, k = 2 they hold 4 sets, not 3) and
some sets get two noise draws, which is not the mechanism of the theorem. This
module uses the partition above; ``tests/selection/test_dp_sis.py`` checks that its class
sizes add up to C(p, k) and that draws follow the law of the mechanism computed
independently, and that Swope et al.'s counts fail that test.

Guarantee: pure eps-DP for scores of sensitivity 1 each in the l_inf norm.
"""
from __future__ import annotations

import numpy as np
from scipy.special import gammaln

from . import noise
from .max_exponential import max_exponential_argmax

__all__ = ["GUARANTEE", "canonical_loss", "lipschitz_classes", "sample_lipschitz_top_k"]

#: The guarantee of one draw (scores of sensitivity 1 each).
GUARANTEE = "pure"


def canonical_loss(x, Y, gamma=0.5):
    """L(Y) = (1 - gamma) max(out(Y), in(Y)) - gamma in(Y), from its definition."""
    x = np.asarray(x, dtype=float)
    mask = np.zeros(x.size, dtype=bool)
    mask[list(Y)] = True
    inn = float(np.min(x[mask]))
    out = float(np.max(x[~mask])) if (~mask).any() else -np.inf
    return (1 - gamma) * max(out, inn) - gamma * inn


def lipschitz_classes(x, k: int, gamma: float = 0.5, sizes: str = "partition"):
    """Utility classes (h, t) of the canonical Lipschitz top-k mechanism.

    Parameters
    ----------
    x : array_like, shape (p,)
        Normalised scores (sensitivity 1 each).
    k : int
    gamma : float in [0, 1)
    sizes : {"partition", "seed"}
        "partition" (correct): |C(h, t)| = C(t - h - 2, k - h - 1). "seed": the class
        sizes of Swope et al.'s Algorithm 2, C(t - h - 1, k - h - 1), kept only so that a
        test can show that they give a different (wrong) law.

    Returns
    -------
    order : ndarray of int
        Column indices sorted by decreasing score (ties by index).
    h, t : ndarray of int
        Head length and 1-based tail position of each class.
    loss : ndarray
        Canonical loss of each class.
    log_size : ndarray
        log |C(h, t)|.
    """
    x = np.asarray(x, dtype=float)
    p = x.size
    if not 1 <= k < p:
        raise ValueError(f"k must be in 1..p-1 = {p - 1}, got {k}")
    order = np.lexsort((np.arange(p), -x))
    xs = x[order]                     # xs[i] = x_[i+1]
    hh, tt = np.meshgrid(np.arange(k), np.arange(k + 1, p + 1), indexing="ij")
    h = np.concatenate([[k - 1], hh.ravel()])
    t = np.concatenate([[k], tt.ravel()])
    loss = np.empty(h.size)
    loss[0] = (1 - 2 * gamma) * xs[k - 1]
    loss[1:] = (1 - gamma) * xs[h[1:]] - gamma * xs[t[1:] - 1]
    if sizes == "partition":
        N, K = t - h - 2, k - h - 1
    elif sizes == "seed":
        N, K = t - h - 1, k - h - 1
    else:
        raise ValueError(f"sizes must be 'partition' or 'seed', got {sizes!r}")
    N = N[1:].astype(float)
    K = K[1:].astype(float)
    log_size = np.zeros(h.size)       # class 0 is {top k}: size 1
    log_size[1:] = gammaln(N + 1) - gammaln(K + 1) - gammaln(N - K + 1)
    return order, h, t, loss, log_size


def sample_lipschitz_top_k(x, k: int, eps: float, rng, gamma: float = 0.5,
                           sizes: str = "partition", size: int | None = None):
    """Draws of the canonical Lipschitz top-k mechanism on normalised scores x.

    Parameters
    ----------
    x : array_like, shape (p,)
        Normalised scores, each of sensitivity 1.
    k : int
    eps : float
    rng : numpy.random.Generator
    gamma : float in [0, 1)
    sizes : {"partition", "seed"}
        See :func:`lipschitz_classes` ("seed" only for the tests).
    size : int, optional
        Number of independent draws (the classes are built once).

    Returns
    -------
    ndarray of int, shape (k,) or (size, k)
        Released indices, sorted. Pure eps-DP per draw if every x_j has
        sensitivity 1 (see the module docstring).
    """
    order, h, t, loss, log_size = lipschitz_classes(x, k, gamma, sizes)
    reps = 1 if size is None else int(size)
    utility = -(eps / 2.0) * loss
    # report-noisy-max with the maximum of each class's exponentials, decided exactly
    # (dpsubset/mechanisms/max_exponential.py: no floating-point noise is released)
    winners = [max_exponential_argmax(utility, log_size, rng) for _ in range(reps)]
    out = np.empty((reps, k), dtype=np.intp)
    first_body = 2 if sizes == "partition" else 1       # body starts at 1-based H + 2
    for r, c in enumerate(winners):
        if c == 0:
            chosen = order[:k]
        else:
            H, T = int(h[c]), int(t[c])
            body = H + first_body + noise.uniform_subset(T - H - first_body, k - H - 1, rng)
            pos = np.concatenate([np.arange(1, H + 1), body, [T]]).astype(int)
            chosen = order[pos - 1]
        out[r] = np.sort(chosen)
    return out[0] if size is None else out
