"""Mironov's (2012) attack on floating-point Laplace noise, as a reusable check.

``x + rng.laplace(0, b)`` in numpy is fl(x + fl(b log(2 U))) for a uniform U on the
2^53-point grid {k 2^-53} (``random_laplace`` in numpy's distributions.c: for U >= 1/2 the
noise is -fl(b log(fl(fl(2 - U) - U)))). Only 2^53 noise values exist, and where they are
spaced wider than the floats around x + noise, the set of floats reachable from x
differs from the set reachable from a neighbouring x'. An attacker who knows the two
candidate values and the sampler sees a release that x' could not have produced: an
infinite privacy loss, whatever eps was promised.

:func:`numpy_reachable` decides exactly (by bisection on U's 53 bits, the noise being
monotone in U) whether numpy's sampler can release y from the centre c.
:func:`attack_counts` points the attack at any sampler ``release(value, scale, rng)``:
it counts the releases from x and from x' that are impossible from x' under numpy's
sampler. :func:`assert_survives_attack` asks that this event be no more than e^eps
times as likely under x as under x' (with a 10^-6 binomial margin). The floating-point
sampler fails it on a noisy second moment of two neighbouring data sets; the package's
sampler (``dpsubset.mechanisms.noise.laplace_release``) passes, and releases only
points of a public grid, each possible from every value.
"""
import math

import numpy as np
import pytest
from scipy import stats

from dpsubset.inference.moments import release_second_moments, second_moment_sensitivity

TWO53 = 2.0 ** 53


def numpy_float_laplace(value, scale, rng):
    """The known-bad sampler: what the package did before issue 41."""
    return value + rng.laplace(0.0, scale)


def _numpy_release(c, b, k):
    """numpy's x + rng.laplace(0, b) for the uniform U = k 2^-53 (Python floats are IEEE doubles)."""
    u = k / TWO53
    if u >= 0.5:
        return c + (0.0 - b * math.log((2.0 - u) - u))
    return c + (0.0 + b * math.log(u + u))


def numpy_reachable(c, b, y) -> bool:
    """Whether numpy's floating-point Laplace can release exactly y from the centre c.

    The release is non-decreasing in k on each of the two branches (k < 2^52 and
    k >= 2^52), so the smallest k with release >= y is found by bisection and y is
    reachable iff that release equals y.
    """
    for lo, hi in ((1, 2 ** 52 - 1), (2 ** 52, 2 ** 53 - 1)):
        if not _numpy_release(c, b, lo) <= y <= _numpy_release(c, b, hi):
            continue
        while lo < hi:
            mid = (lo + hi) // 2
            if _numpy_release(c, b, mid) < y:
                lo = mid + 1
            else:
                hi = mid
        if _numpy_release(c, b, lo) == y:
            return True
    return False


def attack_counts(release, x, x_prime, scale, draws, seed):
    """Releases from x and from x' (``draws`` each) that numpy could not produce from x'.

    Returns
    -------
    (int, int)
        The attack's event E = "impossible from x' under numpy's sampler", counted on
        the releases from x and on those from x'.
    """
    rng = np.random.default_rng(seed)
    from_x = [float(release(x, scale, rng)) for _ in range(draws)]
    from_xp = [float(release(x_prime, scale, rng)) for _ in range(draws)]
    return (sum(not numpy_reachable(x_prime, scale, y) for y in from_x),
            sum(not numpy_reachable(x_prime, scale, y) for y in from_xp))


def assert_survives_attack(release, x, x_prime, scale, eps, draws=1500, seed=0, level=1e-6):
    """Fail if the attack's event is clearly more than e^eps times likelier under x than x'."""
    a, b = attack_counts(release, x, x_prime, scale, draws, seed)
    p_x_low = stats.beta.ppf(level, a, draws - a + 1) if a else 0.0       # Clopper-Pearson
    p_xp_high = stats.beta.ppf(1 - level, b + 1, draws - b) if b < draws else 1.0
    assert p_x_low <= math.exp(eps) * p_xp_high, (
        f"distinguished: {a} of {draws} releases from x are impossible from x', "
        f"against {b} of {draws} releases from x' (eps = {eps})")


def package_moment_release(value, scale, rng):
    """The package's own release of a cross moment (dpsubset.inference.moments) as a sampler.

    The 2 x 2 second-moment matrix with ``value`` off the diagonal, public bounds 1 (so
    the L1 sensitivity is 4 and eps = 4 / scale); the released off-diagonal entry.
    """
    Z = np.array([[40.0, value], [value, 40.0]])
    return release_second_moments(Z, 40, np.ones(2), eps=4.0 / scale, rng=rng).ZtZ[0, 1]


def neighbouring_moments(n=40, seed=11):
    """The cross moment sum_i x_i y_i of two data sets that differ in one row, and its scale.

    Columns in [-1, 1] (public bounds 1), the release of dpsubset.inference.moments with
    eps = 1: scale = (sum of bounds)^2 / eps.
    """
    rng = np.random.default_rng(seed)
    Z = rng.uniform(-1, 1, size=(n, 2))
    Z2 = Z.copy()
    Z2[0] = (1.0, -1.0)
    eps = 1.0
    scale = second_moment_sensitivity(np.ones(2)) / eps
    return float(Z[:, 0] @ Z[:, 1]), float(Z2[:, 0] @ Z2[:, 1]), scale, eps


def test_the_oracle_knows_numpys_sampler():
    # every value numpy releases from c is reachable from c (the oracle is exact here)
    rng = np.random.default_rng(3)
    for c, b in [(0.3712, 4.0), (-2.25, 0.5), (17.0, 9.0)]:
        assert all(numpy_reachable(c, b, float(c + rng.laplace(0.0, b))) for _ in range(300))


def test_floating_point_laplace_is_distinguished():
    """Known-bad case: a release possible under one data set and impossible under its neighbour."""
    x, x_prime, scale, eps = neighbouring_moments()
    rng = np.random.default_rng(0)
    y = next(y for y in (numpy_float_laplace(x, scale, rng) for _ in range(200))
             if not numpy_reachable(x_prime, scale, y))
    assert numpy_reachable(x, scale, y) and not numpy_reachable(x_prime, scale, y)
    with pytest.raises(AssertionError, match="distinguished"):
        assert_survives_attack(numpy_float_laplace, x, x_prime, scale, eps)


def test_the_package_sampler_survives_the_attack():
    from dpsubset.mechanisms import noise
    x, x_prime, scale, eps = neighbouring_moments()
    assert_survives_attack(noise.laplace_release, x, x_prime, scale, eps)
    # every release is a point of the public grid: possible from x and from x' alike
    g, _ = noise.laplace_grid(scale)
    rng = np.random.default_rng(1)
    for value in (x, x_prime):
        ys = noise.laplace_release(np.full(500, value), scale, rng)
        assert np.all(np.rint(ys / g) == ys / g)


def test_the_released_second_moments_survive_the_attack():
    """The check pointed at the package's release itself (it fails before issue 41)."""
    x, x_prime, scale, eps = neighbouring_moments()
    assert_survives_attack(package_moment_release, x, x_prime, scale, eps)
