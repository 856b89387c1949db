"""DP-SIS and the canonical Lipschitz top-k mechanism (method="dp_sis").

The mechanism's law has no closed form, so it is computed here independently of
the package's class-based sampler: list every size-k set Y, take its canonical loss
from the definition (best excluded and worst included score), and integrate the
report-noisy-max law with exponential noise,

    P(Y) = int_{u_Y}^inf e^{-(z - u_Y)} prod_{Y' != Y} (1 - e^{-(z - u_Y')})_+ dz,
    u_Y = -(eps / 2) L(Y),

by adaptive quadrature. Draws of the sampler must match it (chi-square), the
class sizes of Swope et al.'s Algorithm 2 must not, and on small datasets the exact law must satisfy
eps-DP against neighbours with one row replaced (random, corner and searched),
while Swope et al.'s sensitivity (1 instead of 2 after scaling to [-1, 1]) must fail.
"""
import itertools
import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpsubset.selection.baselines.dp_sis import (canonical_loss, lipschitz_classes,
                                       sample_lipschitz_top_k, sis_scores)


def exact_law(x, k, eps, gamma=0.5, method="gauss"):
    """Output law of the Lipschitz top-k mechanism by enumeration and integration.

    "gauss": Gauss-Legendre (20 nodes) on pieces of width <= 1/4 between the kinks
    z = u_Y (the integrand is smooth on each piece), up to 60 past the largest
    utility (the tail beyond carries < e^-60). "quad": scipy's adaptive quadrature.
    """
    sets = list(itertools.combinations(range(len(x)), k))
    u = np.array([-(eps / 2) * canonical_loss(x, Y, gamma) for Y in sets])
    probs = np.empty(len(sets))
    if method == "gauss":
        edges = np.unique(np.concatenate([u, [u.max() + 60.0]]))
        pieces = [np.linspace(a, b, max(1, int(np.ceil((b - a) / 0.25))) + 1)
                  for a, b in zip(edges[:-1], edges[1:])]
        edges = np.unique(np.concatenate(pieces))
        x0, w0 = np.polynomial.legendre.leggauss(20)
        mid, half = (edges[1:] + edges[:-1]) / 2, (edges[1:] - edges[:-1]) / 2
        z = (mid[:, None] + half[:, None] * x0).ravel()
        w = (half[:, None] * w0).ravel()
        cdf = np.clip(1 - np.exp(-(z[:, None] - u[None, :])), 0, None)      # (T, sets)
        pdf = np.where(z[:, None] >= u[None, :], np.exp(-(z[:, None] - u[None, :])), 0.0)
        for a in range(len(sets)):
            probs[a] = float(np.sum(w * pdf[:, a] * np.prod(np.delete(cdf, a, axis=1), axis=1)))
        return sets, probs
    pts = sorted(set(u.tolist()))
    for a in range(len(sets)):
        others = np.delete(u, a)

        def f(z):
            return math.exp(-(z - u[a])) * float(np.prod(np.clip(1 - np.exp(-(z - others)), 0, None)))

        brk = [q for q in pts if q > u[a]]
        probs[a] = integrate.quad(f, u[a], u[a] + 60, points=brk or None, limit=400,
                                  epsabs=1e-14, epsrel=1e-12)[0]
    return sets, probs


def draw_counts(x, k, eps, draws, seed, **kw):
    rng = np.random.default_rng(seed)
    sets = list(itertools.combinations(range(len(x)), k))
    index = {Y: i for i, Y in enumerate(sets)}
    obs = np.zeros(len(sets))
    for row in sample_lipschitz_top_k(x, k, eps, rng, size=draws, **kw):
        obs[index[tuple(row.tolist())]] += 1
    return obs


@pytest.mark.parametrize("p,k", [(3, 2), (6, 3), (12, 4), (40, 5), (300, 7)])
def test_classes_partition_all_sets(p, k):
    x = np.random.default_rng(p).normal(size=p)
    *_, log_size = lipschitz_classes(x, k)
    total = float(np.sum(np.exp(log_size)))
    assert math.isclose(total, math.comb(p, k), rel_tol=1e-9)
    *_, seed_size = lipschitz_classes(x, k, sizes="seed")
    assert float(np.sum(np.exp(seed_size))) > math.comb(p, k)   # Swope et al.'s classes overlap


def test_class_loss_matches_definition():
    rng = np.random.default_rng(3)
    x = rng.normal(size=7)
    for gamma in (0.5, 0.2):
        order, h, t, loss, _ = lipschitz_classes(x, 3, gamma)
        for c in range(len(h)):
            # One member of the class: head, the first admissible body, tail.
            H, T = int(h[c]), int(t[c])
            body = list(range(H + 2, H + 2 + 3 - H - 1)) if c else []
            pos = list(range(1, H + 1)) + body + [T] if c else [1, 2, 3]
            Y = order[np.array(pos) - 1]
            assert math.isclose(loss[c], canonical_loss(x, Y, gamma), abs_tol=1e-12)


def test_exact_law_sums_to_one_and_quadratures_agree():
    x = np.array([3.0, 2.5, 1.0, 0.2, 0.0])
    _, a = exact_law(x, 2, 1.0)
    _, b = exact_law(x, 2, 1.0, method="quad")
    assert abs(a.sum() - 1) < 1e-10
    assert np.max(np.abs(np.log(a) - np.log(b))) < 1e-7


@pytest.mark.parametrize("x,k,eps,gamma", [
    ([3.0, 2.5, 1.0, 0.2, 0.0], 2, 1.0, 0.5),
    ([2.0, 2.0, 1.5, 0.0, -0.5, 1.0], 3, 2.0, 0.5),
    ([1.0, 0.3, 0.8, 0.1, 0.6], 2, 1.0, 0.25),
])
def test_sampler_matches_independent_law(x, k, eps, gamma):
    x = np.asarray(x)
    _, probs = exact_law(x, k, eps, gamma)
    draws = 20_000
    obs = draw_counts(x, k, eps, draws, seed=5, gamma=gamma)
    pval = stats.chisquare(obs, probs * draws).pvalue
    assert pval > 1e-3, f"Lipschitz sampler disagrees with the exact law (p = {pval:.2e})"


def test_sampling_test_rejects_seed_class_sizes():
    """Swope et al.'s overlapping class sizes give a visibly different law."""
    x = np.array([3.0, 2.5, 1.0, 0.2, 0.0])
    _, probs = exact_law(x, 2, 1.0)
    draws = 20_000
    obs = draw_counts(x, 2, 1.0, draws, seed=5, sizes="seed")
    pval = stats.chisquare(obs, probs * draws).pvalue
    assert pval < 1e-6, f"seed class sizes not detected (p = {pval:.2e})"


def test_huge_classes_stay_finite():
    x = np.linspace(5, 0, 20_000)
    S = sample_lipschitz_top_k(x, 50, 1.0, np.random.default_rng(0))
    assert S.size == 50 and len(set(S.tolist())) == 50


# --------------------------------------------------------------------------- privacy audit
# Tiny data with entries at the corners of the box: n = 6 rows, p = 4 columns, k = 2.
# Every neighbour that replaces one row by a corner row (6 rows x 2^4 x 2 = 192) is
# checked, plus random interior replacements.
N, P, K = 6, 4, 2


def _law(X, y, eps, sensitivity=2.0):
    return exact_law(np.abs(X.T @ y) / sensitivity, K, eps)[1]


def _worst(X, y, eps, sensitivity=2.0, interior=20, seed=0):
    base = np.log(_law(X, y, eps, sensitivity))
    rng = np.random.default_rng(seed)
    rows = [(i, np.array([1.0 if (sg >> j) & 1 else -1.0 for j in range(P)]), yv)
            for i in range(N) for sg in range(2 ** P) for yv in (-1.0, 1.0)]
    rows += [(int(rng.integers(N)), rng.uniform(-1, 1, P), float(rng.uniform(-1, 1)))
             for _ in range(interior)]
    worst = 0.0
    for i, xr, yv in rows:
        X2, y2 = X.copy(), y.copy()
        X2[i], y2[i] = xr, yv
        worst = max(worst, float(np.max(np.abs(base - np.log(_law(X2, y2, eps, sensitivity))))))
    return worst / eps


def _data(seed):
    rng = np.random.default_rng(seed)
    return rng.choice([-1.0, 1.0], (N, P)), rng.choice([-1.0, 1.0], N)


def test_scores_are_normalised_by_replacement_sensitivity():
    X, y = _data(0)
    np.testing.assert_allclose(sis_scores(X, y, np.full(P, 1.0), 1.0), np.abs(X.T @ y) / 2)
    np.testing.assert_allclose(sis_scores(0.5 * X, 0.5 * y, np.full(P, 0.5), 0.5),
                               np.abs(X.T @ y) / 2)


@pytest.mark.parametrize("seed,eps", [(8, 2.0), (8, 0.5), (1, 1.0)])
def test_dp_sis_pure_dp_on_all_corner_neighbours(seed, eps):
    X, y = _data(seed)
    worst = _worst(X, y, eps)
    assert worst <= 1.0 + 1e-7, f"DP-SIS privacy loss {worst:.4f} eps > eps"
    assert worst > 0.3, f"neighbours barely moved the output ({worst:.4f} eps)"


def test_dp_sis_audit_detects_add_remove_sensitivity():
    """Swope et al.'s sensitivity 1 (add/remove neighbours) is too small for row replacement."""
    X, y = _data(8)
    worst = _worst(X, y, 2.0, sensitivity=1.0, interior=0)
    assert worst > 1.0, f"understated sensitivity not detected: {worst:.3f} eps"


# ------------------------------------------------- the exact race (issue 41)
def _race_law(utility, log_m):
    """P(argmax_c u_c + M_c = c) by quadrature: the density of M_c times the others' CDFs."""
    from scipy import integrate
    u, m = np.asarray(utility, float), np.exp(np.asarray(log_m, float))
    lo = min(u) - 1.0

    def dens(z, c):
        x = z - u[c]
        if x <= 0:
            return 0.0
        f = m[c] * np.exp(-x) * (1 - np.exp(-x)) ** (m[c] - 1)
        for j in range(len(u)):
            if j != c:
                xj = z - u[j]
                f *= 0.0 if xj <= 0 else (1 - np.exp(-xj)) ** m[j]
        return f

    return np.array([integrate.quad(dens, lo, max(u) + 60, args=(c,), limit=400)[0] for c in range(len(u))])


UTIL, LOGM = np.array([0.4, 0.0, 0.9, -0.3]), np.log([1.0, 3.0, 1.0, 7.0])


@pytest.mark.parametrize("first_bits", [53, 3])
def test_the_max_exponential_race_has_the_mechanisms_law(first_bits):
    """Chi-square against the law by quadrature; first_bits=3 makes almost every draw go
    through the decimal refinement (more bits of the contenders' uniforms)."""
    from dpsubset.mechanisms.max_exponential import max_exponential_argmax
    probs = _race_law(UTIL, LOGM)
    assert abs(probs.sum() - 1) < 1e-8
    rng = np.random.default_rng(11)
    draws = 6000 if first_bits == 3 else 20_000
    obs = np.bincount([max_exponential_argmax(UTIL, LOGM, rng, first_bits=first_bits) for _ in range(draws)],
                      minlength=4)
    assert stats.chisquare(obs, probs * draws).pvalue > 1e-3


def test_the_race_test_catches_gumbel_noise_in_place_of_the_maximum():
    """Known-bad: the Gumbel race with log m added (the large-m limit of the maximum of m
    exponentials) is a different law at small m, and the same test rejects it."""
    from dpsubset.mechanisms import noise
    probs = _race_law(UTIL, LOGM)
    rng = np.random.default_rng(11)
    draws = 20_000
    obs = np.bincount([noise.gumbel_max(UTIL + LOGM, rng) for _ in range(draws)], minlength=4)
    assert stats.chisquare(obs, probs * draws).pvalue < 1e-6


def test_the_race_handles_astronomical_classes():
    """Class sizes near e^700: the float bounds and the decimal refinement stay finite and
    the larger class wins when the utilities are equal."""
    from dpsubset.mechanisms.max_exponential import MaxExponentialRace, max_exponential_argmax
    rng = np.random.default_rng(0)
    wins = [max_exponential_argmax([0.0, 0.0], [700.0, 0.0], rng) for _ in range(50)]
    assert wins == [0] * 50
    race = MaxExponentialRace([700.0, 699.0], np.random.default_rng(1), first_bits=2)
    lo, hi = race.interval(np.zeros(2), np.zeros(2))
    assert np.all(np.isfinite(lo)) and np.all(lo <= hi)
    assert race.decide(np.zeros(2), [0, 1]) in (0, 1)
