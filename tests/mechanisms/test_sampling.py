"""The samplers draw from exactly the distributions the privacy audits examine.

Chi-square tests at fixed seeds (p-value threshold 1e-3): Gumbel-max against
log-softmax, the uniform helpers against the uniform law, and the released
supports of top-R, mistakes and the gap check against their exact
distributions over all supports. Also: huge multiplicities, reproducibility.
"""
import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpsubset.mechanisms import (as_generator, gumbel_max, log_multiplicity, log_softmax,
                                 log_weights, mistakes_distribution, mistakes_log_weights,
                                 ptr_distribution, ptr_pass_probability, sample_gap_checked,
                                 sample_mistakes, sample_top_r, top_r_distribution,
                                 top_r_log_weights, uniform_member_of_class,
                                 uniform_support_outside)
from dpsubset.scores.least_squares import LeastSquaresScorer
from dpsubset.privacy.sensitivity import score_sensitivity
from dpsubset.search.candidates import MistakeCandidates, TopRCandidates
from dpsubset.search.enumeration import (all_supports, mistakes_by_enumeration,
                                         top_r_by_enumeration)

P_MIN = 1e-3


def chi2_pvalue(counts, probs):
    counts = np.asarray(counts, dtype=float)
    expected = np.asarray(probs, dtype=float) * counts.sum()
    assert expected.min() >= 5, "test design: some expected counts are below 5"
    return stats.chisquare(counts, expected).pvalue


# --------------------------------------------------------------------------- Gumbel-max

def test_gumbel_max_matches_log_softmax():
    # Ten classes, multiplicities from 1 to C(60, 3), scores spread over ~15 units
    # of eps / (2 Delta): the weights span many orders of magnitude before mixing.
    scores = np.array([0.0, 0.2, 0.25, 0.9, 1.3, 2.0, 2.1, 2.6, 3.0, 3.4])
    mult = [1, 1, 3, 10, 40, 200, 1000, math.comb(20, 3), 20_000, math.comb(60, 3)]
    lw = log_weights(scores, eps=1.0, Delta=0.12, multiplicities=mult)
    probs = np.exp(log_softmax(lw))
    assert probs.sum() == pytest.approx(1.0, abs=1e-12)
    rng = np.random.default_rng(12345)
    n = 200_000
    draws = np.fromiter((gumbel_max(lw, rng) for _ in range(n)), dtype=int, count=n)
    counts = np.bincount(draws, minlength=len(lw))
    pval = chi2_pvalue(counts, probs)
    assert pval > P_MIN, f"Gumbel-max frequencies {counts / n} vs {probs} (p = {pval:.2e})"


def test_gumbel_max_is_shift_invariant_and_handles_large_log_weights():
    # Adding a constant to all log-weights changes neither the draw nor the law.
    lw = np.array([0.0, -1.0, -2.5, 0.3])
    a = [gumbel_max(lw, np.random.default_rng(s)) for s in range(200)]
    b = [gumbel_max(lw + 1e4, np.random.default_rng(s)) for s in range(200)]
    assert a == b
    np.testing.assert_allclose(log_softmax(lw - 5e3), log_softmax(lw), atol=1e-9)
    assert gumbel_max(np.array([-np.inf, 0.0, -np.inf]), np.random.default_rng(0)) == 1


def test_log_weights_definition():
    lw = log_weights([0.1, 0.4], eps=2.0, Delta=0.05, multiplicities=[1, 7])
    np.testing.assert_allclose(lw, [-2.0 * 0.1 / 0.1, math.log(7) - 2.0 * 0.4 / 0.1])
    with pytest.raises(ValueError):
        log_weights([0.1], eps=0.0, Delta=1.0)
    with pytest.raises(ValueError):
        log_multiplicity(0)
    with pytest.raises(TypeError):
        log_multiplicity(2.0)


# --------------------------------------------------------------------------- huge multiplicities

@pytest.mark.parametrize("p, s", [(10_000, 5), (100_000, 8), (10_000, 500)])
def test_huge_multiplicities_give_finite_log_weights(p, s):
    m = math.comb(p, s)
    if s == 500:
        with pytest.raises(OverflowError):
            float(m)  # far beyond float range: must never be converted
    # Reference: sum of log((p - i) / (i + 1)), accurate to a few ulps.
    exact = math.fsum(math.log((p - i) / (i + 1)) for i in range(s))
    assert log_multiplicity(m) == pytest.approx(exact, rel=1e-12)
    # top-R with R = 3 on this (p, s): the last class holds C(p, s) - 3 supports.
    rng = np.random.default_rng(0)
    sup = np.array([np.arange(s), np.arange(1, s + 1), np.r_[np.arange(s - 1), s + 1]])
    cands = TopRCandidates(sup, np.array([0.10, 0.11, 0.12]), p, s)
    lw = top_r_log_weights(cands, eps=1.0, Delta=1e-3)
    assert np.all(np.isfinite(lw)) and lw[-1] == pytest.approx(
        math.log(m - 3) - 1.0 * 0.12 / 2e-3, rel=1e-12)
    out = sample_top_r(cands, 1.0, 1e-3, rng)  # the remainder class dominates here
    assert out.shape == (s,) and np.all(np.diff(out) > 0) and out.max() < p
    # mistakes: |P_k| = C(s, k) C(p - s, k) up to k = s.
    K = min(s, p - s)
    mc = MistakeCandidates(np.arange(s), np.zeros((K + 1, s), dtype=int),
                           np.linspace(0.1, 0.2, K + 1), p, s, 0.11)
    lw = mistakes_log_weights(mc, eps=1.0, Delta=1e-3)
    assert np.all(np.isfinite(lw))
    out = sample_mistakes(mc, 1.0, 1e-3, rng)
    assert out.shape == (s,) and len(np.unique(out)) == s


# --------------------------------------------------------------------------- reproducibility

def _tiny_problem(seed=0, n=20, p=6, s=2, R=4):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, p))
    y = np.clip(0.4 * X[:, 0] + 0.3 * X[:, 1] + 0.2 * rng.normal(size=n), -1, 1)
    scorer = LeastSquaresScorer(X, y, lam=1.0, r=1.0, forced=np.ones((n, 1)))
    Delta = score_sensitivity([1.0] * p, 1.0, 1.0, s, forced_bounds=(1.0,), n=n)
    return top_r_by_enumeration(scorer, s, R), mistakes_by_enumeration(scorer, s), Delta


def test_seeded_runs_are_reproducible_bit_for_bit():
    topr, mist, Delta = _tiny_problem()

    def run(seed):
        rng = as_generator(seed)
        out = [sample_top_r(topr, 1.0, Delta, rng) for _ in range(50)]
        out += [sample_mistakes(mist, 1.0, Delta, rng) for _ in range(50)]
        out += [sample_gap_checked(mist, topr, 1.0, 0.5, 0.4, Delta, rng)[0] for _ in range(50)]
        out.append(rng.random(3))  # the generator state after the run
        return np.concatenate(out)

    a, b = run(2024), run(2024)
    assert a.tobytes() == b.tobytes()
    assert run(2025).tobytes() != a.tobytes()
    g = np.random.default_rng(1)
    assert as_generator(g) is g
    assert isinstance(as_generator(None), np.random.Generator)
    with pytest.raises(TypeError):
        as_generator("seed")


# --------------------------------------------------------------------------- uniform helpers

@pytest.mark.parametrize("p, s, n_excluded", [(6, 2, 5), (5, 2, 7), (9, 3, 20)])
def test_uniform_support_outside_is_uniform_and_excludes(p, s, n_excluded):
    supports = all_supports(p, s)
    rng = np.random.default_rng(7)
    excluded_idx = rng.choice(len(supports), n_excluded, replace=False)
    excluded = supports[excluded_idx][:, ::-1]  # row order must not matter
    index = {tuple(r): j for j, r in enumerate(supports.tolist())}
    n = 30_000
    counts = Counter(index[tuple(uniform_support_outside(p, s, excluded, rng).tolist())]
                     for _ in range(n))
    assert not set(counts) & set(excluded_idx.tolist()), "returned an excluded support"
    allowed = sorted(set(range(len(supports))) - set(excluded_idx.tolist()))
    obs = [counts.get(j, 0) for j in allowed]
    pval = chi2_pvalue(obs, np.full(len(allowed), 1 / len(allowed)))
    assert pval > P_MIN, f"not uniform: {obs} (p = {pval:.2e})"
    with pytest.raises(ValueError):
        uniform_support_outside(p, s, supports, rng)


@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_uniform_member_of_class_is_uniform(k):
    p, center = 7, np.array([1, 3, 4])
    s = len(center)
    members = [c for c in all_supports(p, s).tolist()
               if s - len(set(c) & set(center.tolist())) == k]
    assert len(members) == math.comb(s, k) * math.comb(p - s, k)
    index = {tuple(c): j for j, c in enumerate(members)}
    rng = np.random.default_rng(3)
    n = 20_000
    counts = np.zeros(len(members))
    for _ in range(n):
        out = uniform_member_of_class(center, k, p, rng)
        assert np.all(np.diff(out) > 0)
        counts[index[tuple(out.tolist())]] += 1  # KeyError if not in P_k
    if len(members) > 1:
        pval = chi2_pvalue(counts, np.full(len(members), 1 / len(members)))
        assert pval > P_MIN, f"not uniform on P_{k}: {counts} (p = {pval:.2e})"
    with pytest.raises(ValueError):
        uniform_member_of_class(center, 4, p, rng)


# --------------------------------------------------------------------------- mechanisms

def _draw_counts(sampler, p, s, n):
    index = {tuple(r): j for j, r in enumerate(all_supports(p, s).tolist())}
    counts = np.zeros(len(index))
    for _ in range(n):
        counts[index[tuple(sampler().tolist())]] += 1
    return counts


@pytest.mark.parametrize("R", [4, 15])
def test_sample_top_r_matches_exact_distribution(R):
    topr, _, Delta = _tiny_problem(R=R)
    eps = 3.0
    probs = top_r_distribution(topr, eps, Delta)
    rng = np.random.default_rng(99)
    counts = _draw_counts(lambda: sample_top_r(topr, eps, Delta, rng), 6, 2, 60_000)
    pval = chi2_pvalue(counts, probs)
    assert pval > P_MIN, f"top-R draws vs exact: p = {pval:.2e}"
    np.testing.assert_allclose(np.exp(top_r_distribution(topr, eps, Delta, log=True)), probs)


def test_sample_mistakes_matches_exact_distribution():
    _, mist, Delta = _tiny_problem()
    eps = 3.0
    probs = mistakes_distribution(mist, eps, Delta)
    rng = np.random.default_rng(98)
    counts = _draw_counts(lambda: sample_mistakes(mist, eps, Delta, rng), 6, 2, 60_000)
    pval = chi2_pvalue(counts, probs)
    assert pval > P_MIN, f"mistakes draws vs exact: p = {pval:.2e}"
    # Uniform release within a class: all members of P_1 have the same probability,
    # so S~_1 is not singled out (the paper's code would release S~_1 itself).
    S = all_supports(6, 2)
    k = 2 - np.isin(S, mist.center).sum(axis=1)
    assert np.ptp(probs[k == 1]) < 1e-15


def test_sample_gap_checked_matches_exact_distribution():
    topr, mist, Delta = _tiny_problem()
    eps, eps0, delta = 3.0, 0.5, 0.4
    q = ptr_pass_probability(mist.gap, Delta, eps0, delta)
    assert 0.05 < q < 0.95  # both branches are exercised
    probs = ptr_distribution(topr, mist, eps, eps0, delta, Delta)
    rng = np.random.default_rng(97)
    passes = 0

    def draw():
        nonlocal passes
        out, passed = sample_gap_checked(mist, lambda: topr, eps, eps0, delta, Delta, rng)
        passes += passed
        return out

    n = 60_000
    counts = _draw_counts(draw, 6, 2, n)
    pval = chi2_pvalue(counts, probs)
    assert pval > P_MIN, f"gap-check draws vs exact: p = {pval:.2e}"
    z = (passes - n * q) / math.sqrt(n * q * (1 - q))
    assert abs(z) < 4.5, (passes / n, q)


# --------------------------------------------------------------------------- definitions

def _all_scores(seed=0, n=20, p=6, s=2):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, p))
    y = np.clip(0.4 * X[:, 0] + 0.3 * X[:, 1] + 0.2 * rng.normal(size=n), -1, 1)
    scorer = LeastSquaresScorer(X, y, lam=1.0, r=1.0, forced=np.ones((n, 1)))
    S = all_supports(p, s)
    return scorer, S, scorer.score(S)


@pytest.mark.parametrize("R", [1, 2, 3, 10, 14, 15])
def test_top_r_distribution_is_the_truncated_exponential_mechanism(R):
    """Brute force: P(S) proportional to exp(-eps c^(S) / (2 Delta)) over all supports,
    with c^(S) = c(S) on the R best and c(S_R) elsewhere (eq. (7) of the paper)."""
    scorer, S, c = _all_scores()
    Delta, eps = 0.2, 2.5
    topr = top_r_by_enumeration(scorer, 2, R)
    in_list = np.array([any(np.array_equal(row, t) for t in topr.supports) for row in S])
    c_hat = np.where(in_list, c, topr.scores[-1])
    w = np.exp(-eps * (c_hat - c_hat.min()) / (2 * Delta))
    np.testing.assert_allclose(top_r_distribution(topr, eps, Delta), w / w.sum(), rtol=1e-12)
    lw = top_r_log_weights(topr, eps, Delta)
    assert len(lw) == (R if R == len(S) else R + 1)


def test_mistakes_distribution_is_the_class_exponential_mechanism():
    """Brute force: every support with k mistakes is scored by the best score of P_k."""
    scorer, S, c = _all_scores(seed=4, p=7, s=3)
    Delta, eps = 0.2, 2.5
    mist = mistakes_by_enumeration(scorer, 3)
    k = 3 - np.isin(S, mist.center).sum(axis=1)
    c_class = np.array([c[k == kk].min() for kk in range(4)])
    np.testing.assert_allclose(c_class, mist.scores, rtol=1e-12)
    w = np.exp(-eps * (c_class[k] - c.min()) / (2 * Delta))
    np.testing.assert_allclose(mistakes_distribution(mist, eps, Delta), w / w.sum(), rtol=1e-12)
    np.testing.assert_allclose(
        mistakes_log_weights(mist, eps, Delta),
        [math.log(math.comb(3, j) * math.comb(4, j)) - eps * mist.scores[j] / (2 * Delta)
         for j in range(4)], rtol=1e-12)


def test_guarantee_labels():
    from dpsubset.mechanisms import MECHANISM_GUARANTEES
    from dpsubset.privacy.leaks import GUARANTEES
    assert MECHANISM_GUARANTEES == {"top_r": "pure", "mistakes": "conditional",
                                    "gap_check": "approximate"}
    assert set(MECHANISM_GUARANTEES.values()) <= set(GUARANTEES)


# --------------------------------------------------------------------------- exact samplers (issue 41)

from dpsubset.mechanisms import noise  # noqa: E402


@pytest.mark.parametrize("first_bits", [1, 5])
def test_exact_gumbel_max_refinement_matches_log_softmax(first_bits):
    # With uniforms of 1 to 5 first bits nearly every draw goes through the decimal
    # refinement: its law must still be the softmax (and -inf stays impossible).
    lw = np.array([0.0, -0.7, 1.2, -np.inf, 0.4, -3.0])
    probs = np.exp(log_softmax(lw))
    rng = np.random.default_rng(first_bits)
    n = 5_000
    counts = np.bincount([gumbel_max(lw, rng, first_bits=first_bits) for _ in range(n)],
                         minlength=len(lw))
    assert counts[3] == 0
    keep = probs > 0
    assert chi2_pvalue(counts[keep], probs[keep]) > P_MIN


def test_exact_gumbel_max_draws_numpys_gumbel_max_when_clear():
    # the first 53 bits are the uniform numpy's Gumbel sampler makes of the same draw, so
    # seeded releases keep their supports; the argmax differs only in a near-tie
    for seed in range(300):
        lw = np.random.default_rng(10 ** 6 + seed).normal(size=40) * 5
        want = int(np.argmax(lw + np.random.default_rng(seed).gumbel(size=40)))
        assert gumbel_max(lw, np.random.default_rng(seed)) == want


def test_exact_gumbel_max_near_tie_is_decided_exactly():
    # two classes 1e-15 apart in log-weight: the float intervals overlap whenever the
    # uniforms are close, and the race must still return a valid index with the right law
    lw = np.array([0.0, 1e-15])
    rng = np.random.default_rng(7)
    counts = np.bincount([gumbel_max(lw, rng, first_bits=3) for _ in range(5_000)], minlength=2)
    assert chi2_pvalue(counts, [0.5, 0.5]) > P_MIN


@pytest.mark.parametrize("t, first_bits", [(1, 53), (3, 53), (40, 53), (3, 2), (40, 4)])
def test_discrete_laplace_matches_its_law(t, first_bits):
    # first_bits of 2 or 4: most decisions go through the decimal refinement
    rng = np.random.default_rng(t)
    z = noise.discrete_laplace(t, rng, 100_000 if first_bits == 53 else 20_000, first_bits=first_bits)
    q = math.exp(-1 / t)
    edge = int(3 * t) + 1
    support = np.arange(-edge, edge + 1)
    pmf = (1 - q) / (1 + q) * q ** np.abs(support)
    counts = [(z == k).sum() for k in support] + [(np.abs(z) > edge).sum()]
    probs = np.append(pmf, 1 - pmf.sum())
    assert chi2_pvalue(counts, probs) > P_MIN


def test_laplace_release_grid_accounting_is_exact():
    """The exact audit of the grid: for every pair at distance <= Delta, the discrete
    Laplace's worst log-ratio |k - k'| / t stays within eps = Delta / scale."""
    rng = np.random.default_rng(11)
    for _ in range(3000):
        scale = float(np.exp(rng.uniform(-20, 20)))
        eps = float(np.exp(rng.uniform(np.log(2.0 ** -21), np.log(50.0))))
        Delta = eps * scale
        g, t = noise.laplace_grid(scale)
        x = float(rng.normal() * scale * 10 ** rng.uniform(0, 6))
        for x2 in (x + Delta, x - Delta, np.nextafter(x + Delta, x)):
            while abs(Fraction(x2) - Fraction(x)) > Fraction(Delta):  # neighbours: |x - x'| <= Delta
                x2 = float(np.nextafter(x2, x))
            k, k2 = np.rint(x / g), np.rint(x2 / g)
            assert abs(k - k2) / t <= eps
        # the noise's spread: within a relative 2^-21 of the Laplace scale asked for
        assert 1.0 <= g * t / scale <= 1.0 + 2.0 ** -21


def test_laplace_release_is_on_the_grid_reproducible_and_unbiased():
    scale = 2.5
    g, t = noise.laplace_grid(scale)
    y = noise.laplace_release(np.full(80_000, 0.3712), scale, np.random.default_rng(2))
    assert np.all(np.rint(y / g) == y / g)
    assert np.mean(y) == pytest.approx(0.3712, abs=5 * scale * math.sqrt(2 / 80_000))
    assert np.std(y) == pytest.approx(scale * math.sqrt(2), rel=0.02)
    a = noise.laplace_release([1.0, 2.0], scale, np.random.default_rng(9))
    b = noise.laplace_release([1.0, 2.0], scale, np.random.default_rng(9))
    np.testing.assert_array_equal(a, b)
    assert isinstance(noise.laplace_release(1.0, scale, np.random.default_rng(0)), float)
    with pytest.raises(ValueError, match="finite"):
        noise.laplace_release([np.nan], scale, np.random.default_rng(0))


@pytest.mark.parametrize("scale, delta", [(1.0, 1e-2), (10.0, 1e-6), (0.05, 0.2)])
def test_laplace_threshold_is_the_smallest_safe_grid_point(scale, delta):
    T = noise.laplace_threshold(scale, delta)
    g, _ = noise.laplace_grid(scale)
    assert noise.laplace_release_sf(0.0, scale, T) <= delta
    assert noise.laplace_release_sf(0.0, scale, T - g) > delta
    assert T == pytest.approx(scale * math.log(1 / (2 * delta)), rel=1e-5)


def test_laplace_release_sf_matches_draws():
    scale, x, thr = 1.0, 0.3, 1.1
    y = noise.laplace_release(np.full(100_000, x), scale, np.random.default_rng(4))
    p = noise.laplace_release_sf(x, scale, thr)
    assert abs((y > thr).mean() - p) < 5 * math.sqrt(p * (1 - p) / len(y))


def test_unseeded_generators_draw_from_fresh_entropy():
    a = noise.laplace_release(np.zeros(4), 1.0, as_generator(None))
    b = noise.laplace_release(np.zeros(4), 1.0, as_generator(None))
    assert not np.array_equal(a, b)
