"""The exact discrete Gaussian (noise.discrete_gaussian) and the Gaussian releases of AdaSSP."""
import math
from decimal import Decimal

import numpy as np
import pytest
from scipy import stats

from dpsubset.mechanisms import noise
from dpsubset.refit.adassp import adassp, adassp_noise


def _pmf(sigma, ks):
    allk = np.arange(-60 * math.ceil(sigma), 60 * math.ceil(sigma) + 1)
    return np.exp(-ks ** 2 / (2 * sigma * sigma)) / np.exp(-allk ** 2 / (2 * sigma * sigma)).sum()


def _chisq_pvalue(z, sigma, width=5):
    ks = np.arange(-width, width + 1)
    obs = np.array([(z == k).sum() for k in ks])
    exp = _pmf(sigma, ks) * len(z)
    obs = np.append(obs, len(z) - obs.sum())
    exp = np.append(exp, len(z) - exp.sum())
    return stats.chisquare(obs, exp).pvalue


def test_discrete_gaussian_has_the_discrete_gaussian_law():
    z = noise.discrete_gaussian(1.3, np.random.default_rng(20), 200_000)
    assert _chisq_pvalue(z, 1.3) > 1e-3


def test_the_law_test_catches_a_wrong_sigma():
    # known-bad: draws of sigma 1.4 tested against the law of sigma 1.3
    z = noise.discrete_gaussian(1.4, np.random.default_rng(21), 200_000)
    assert _chisq_pvalue(z, 1.3) < 1e-6


def test_the_acceptance_is_exact_when_refined():
    # with 1 first bit nearly every decision goes to the decimal refinement
    rng = np.random.default_rng(22)
    num = np.array([0, 1, 5, 17], dtype=object)
    acc = np.mean([noise._accept_exp(num, 7, rng, first_bits=1) for _ in range(4000)], axis=0)
    want = [float((-(Decimal(int(a)) / 7)).exp()) for a in num]
    assert np.allclose(acc, want, atol=4 * 0.5 / math.sqrt(4000))
    # known-bad: a biased decision (exp(-x) read as exp(-x/2)) is caught by the same check
    assert not np.allclose(np.exp(-num.astype(float) / 14), want, atol=4 * 0.5 / math.sqrt(4000))


def test_gaussian_release_lies_on_the_public_grid_and_is_seeded():
    g, sigma = noise.gaussian_grid(0.3)
    assert g == 2.0 ** (math.floor(math.log2(0.3)) - noise.GRID_BITS)
    assert 2.0 ** 44 <= sigma / (1 + noise.GAUSS_PAD) < 2.0 ** 45
    a = noise.gaussian_release(np.array([0.1, 2.0, -3.0]), 0.3, np.random.default_rng(5))
    b = noise.gaussian_release(np.array([0.1, 2.0, -3.0]), 0.3, np.random.default_rng(5))
    assert np.array_equal(a, b)
    assert np.all(a / g == np.rint(a / g))


def test_gaussian_release_has_the_stated_spread():
    z = noise.gaussian_release(np.zeros(20_000), 2.0, np.random.default_rng(6))
    assert abs(z.std() / 2.0 - 1.0) < 0.03 and abs(z.mean()) < 0.1


def test_adassp_draws_only_exact_grid_releases(monkeypatch):
    rng = np.random.default_rng(7)
    A = rng.uniform(-1, 1, (200, 3)) / math.sqrt(3)
    y = np.clip(A @ np.array([1.0, -0.5, 0.2]) + 0.1 * rng.standard_normal(200), -1, 1)
    first = adassp(A, y, row_bound=1.0, b_y=1.0, eps=1.0, delta=1e-5, rng=np.random.default_rng(8))
    again = adassp(A, y, row_bound=1.0, b_y=1.0, eps=1.0, delta=1e-5, rng=np.random.default_rng(8))
    assert np.array_equal(first.coef, again.coef)
    seen = []
    real = noise.gaussian_release
    monkeypatch.setattr("dpsubset.refit.adassp.gaussian_release",
                        lambda v, sd, r: seen.append(sd) or real(v, sd, r))
    adassp(A, y, row_bound=1.0, b_y=1.0, eps=1.0, delta=1e-5, rng=np.random.default_rng(8))
    assert sorted(seen) == sorted(adassp_noise(1.0, 1.0, 1.0, 1e-5).values())


def test_adassp_refuses_a_budget_below_the_grid_resolution():
    A = np.eye(3)
    with pytest.raises(ValueError, match="eps is too small"):
        adassp(A, np.zeros(3), row_bound=1.0, b_y=1.0, eps=1e-12, delta=1e-5,
               rng=np.random.default_rng(0))


def test_accept_exp_has_the_metropolis_law_and_keeps_the_seeded_stream():
    rng = np.random.default_rng(30)
    w = noise.uniform_bits(rng, 40_000)
    ratio = np.full(40_000, -0.7)
    acc = noise.accept_exp(w, ratio, rng)
    assert abs(acc.mean() - math.exp(-0.7)) < 4 * math.sqrt(0.25 / 40_000)
    # the same 53 bits as rng.random(): the float rule log U < ratio agrees off near-ties
    u = noise.uniform(np.random.default_rng(30), 40_000)
    assert np.array_equal(np.log(u) < ratio, acc)
    # a ratio >= 0 always accepts; one Generator per entry is accepted
    gens = [np.random.default_rng(k) for k in range(3)]
    assert noise.accept_exp(np.array([2 ** 53 - 1] * 3), np.array([0.0, 1.0, -1e-300]), gens)[:2].all()


def test_accept_exp_refines_a_near_tie_exactly():
    # W's first 53 bits straddle exp(-x): the answer needs more bits, and must be exact
    x = 0.3
    w = np.array([int((-Decimal(x)).exp() * Decimal(2) ** 53)] * 2000)
    acc = noise.accept_exp(w, np.full(2000, -x), np.random.default_rng(31))
    lo = Decimal(int(w[0])) / Decimal(2) ** 53
    frac = float(((-Decimal(x)).exp() - lo) * Decimal(2) ** 53)  # P(W < exp(-x) | first bits)
    assert 0 < frac < 1
    assert abs(acc.mean() - frac) < 4 * math.sqrt(0.25 / 2000)
