"""Exact audit of the gap check (propose-test-release around mistakes).

Claim: (eps_0 + eps, delta)-DP. On every audited neighbour pair the exact
hockey-stick divergence sum_S max(0, P_D(S) - e^(eps_0 + eps) P_D'(S)) must be
<= delta in both directions, both for the released support and for the pair
(which branch ran, released support). Pairs are chosen where it can hurt:

* pairs on which plain mistakes is not eps-DP (gap condition failing);
* pairs whose gap sits at the test's threshold, so that the test passes with very
  different probabilities on D and D';
* pairs whose gap sits at 2 Delta (safe D, unsafe D');
* and an adversarial search over the replacement row on each of these.

The audit is shown able to fail: plain mistakes and a gap check with a wrong
threshold both exceed delta on the known-bad pair.
"""
import math

import numpy as np
import pytest

from dpsubset.mechanisms import ptr_pass_probability, ptr_test, ptr_threshold
from dpsubset.search.candidates import MistakeCandidates

from ._audit import (Evaluated, Setting, adversarial_search, hockey_stick,
                     max_abs_log_ratio, random_neighbours, signal_data, tune_gap,
                     two_sided_hockey_stick)
from .test_mistakes_audit import known_bad_pair

# (eps, eps0, delta): a middle case, a small eps0 (pass probability of unsafe data
# close to delta, heavy mistakes violations at eps = 4), a large eps0.
CONFIGS = [(1.0, 1.0, 0.01), (4.0, 0.1, 0.05), (1.0, 2.0, 0.025)]
SAFE = Setting(n=200, p=6, s=2, b_x=1.0, b_y=1.0, r=1.0, lam=1.0)


def joint(ev: Evaluated, eps, eps0, delta):
    """Exact distribution of (branch, support): [pass & S..., fail & S...]."""
    R = ev.setting.default_R
    q = ev.pass_probability(eps0, delta)
    return np.concatenate([q * np.exp(ev.logp_mistakes(eps)),
                           (1 - q) * np.exp(ev.logp_top_r(eps, R))])


def ptr_losses(a: Evaluated, b: Evaluated, eps, eps0, delta):
    """Two-sided hockey-stick / delta for the support and for (branch, support)."""
    R = a.setting.default_R
    hs_support = two_sided_hockey_stick(a.p_ptr(eps, eps0, delta, R),
                                        b.p_ptr(eps, eps0, delta, R), eps + eps0)
    hs_joint = two_sided_hockey_stick(joint(a, eps, eps0, delta), joint(b, eps, eps0, delta),
                                      eps + eps0)
    return hs_support / delta, hs_joint / delta


def worst_ptr_loss(a, b):
    return max(max(ptr_losses(a, b, *c)) for c in CONFIGS)


def _report(a, b):
    parts = []
    for c in CONFIGS:
        s, j = ptr_losses(a, b, *c)
        parts.append(f"(eps, eps0, delta)={c}: support {s:.4f} delta, joint {j:.4f} delta, "
                     f"P(pass) {a.pass_probability(*c[1:]):.4f} vs {b.pass_probability(*c[1:]):.4f}")
    return f"gap/2Delta {a.gap_ratio:.3f} vs {b.gap_ratio:.3f}; " + "; ".join(parts)


# --------------------------------------------------------------------------- the test itself

def _fake_mistakes(gap):
    return MistakeCandidates(center=np.array([0, 1]), supports=np.array([[0, 1], [0, 2], [2, 3]]),
                             scores=np.array([0.0, gap, gap]), p=4, s=2, second_best=gap)


def test_pass_probability_exact_values():
    Delta = 0.1
    for eps0, delta in [(1.0, 1e-2), (0.1, 0.05), (2.0, 1e-6)]:
        gaps = np.linspace(0.0, 2 * Delta, 101)
        p_unsafe = [ptr_pass_probability(g, Delta, eps0, delta) for g in gaps]
        # Unsafe data (gap <= 2 Delta, so d <= 0) pass with probability <= delta,
        # and = delta exactly at gap = 2 Delta (d = 0).
        assert max(p_unsafe) <= delta * (1 + 1e-12), max(p_unsafe)
        assert p_unsafe[-1] == pytest.approx(delta, rel=1e-12)
        # one unit of d lower: a factor e^-eps0 (to the noise grid's inflation of the
        # scale, a relative 2^-21 at most: dpsubset.mechanisms.noise.laplace_grid)
        assert p_unsafe[0] == pytest.approx(delta * math.exp(-eps0), rel=eps0 * 2.0 ** -20)
        # Non-decreasing in the gap, one Laplace step per unit of d.
        grid = np.linspace(0.0, 40 * Delta, 400)
        p = np.array([ptr_pass_probability(g, Delta, eps0, delta) for g in grid])
        assert np.all(np.diff(p) >= 0)
        # Sensitivity-1 statistic: neighbouring d values differ by at most e^eps0.
        d_vals = np.arange(-3, math.ceil(ptr_threshold(eps0, delta)) + 4)
        pd = np.array([ptr_pass_probability(2 * Delta * (d + 1.5), Delta, eps0, delta)
                       for d in d_vals])
        assert np.all(pd[1:] <= math.exp(eps0) * pd[:-1] * (1 + 1e-12))
        assert np.all(1 - pd[:-1] <= math.exp(eps0) * (1 - pd[1:]) * (1 + 1e-12))
    # d exactly at the threshold: T = 2 for eps0 = 1, delta = e^-2 / 2, d = 2 when
    # gap / (2 Delta) is in [3, 4).
    # (T sits on the noise's grid, a relative 2^-21 above 2: the probability a hair below 1/2)
    assert ptr_pass_probability(2 * Delta * 3.5, Delta, 1.0, math.exp(-2) / 2) == \
        pytest.approx(0.5, abs=1e-6)
    assert ptr_threshold(1.0, math.exp(-2) / 2) == pytest.approx(2.0)
    # A single feasible support (infinite gap) always passes.
    assert ptr_pass_probability(math.inf, Delta, 1.0, 0.01) == 1.0


@pytest.mark.parametrize("gap_units", [0.5, 2.5, 3.5, 4.5])
def test_ptr_test_matches_pass_probability(gap_units):
    """Monte Carlo frequency of ptr_test vs the exact Laplace probability."""
    Delta, eps0, delta = 0.1, 1.0, math.exp(-2) / 2
    cands = _fake_mistakes(2 * Delta * gap_units)
    rng = np.random.default_rng(5)
    n = 40_000
    hits = sum(ptr_test(cands, Delta, eps0, delta, rng) for _ in range(n))
    p = ptr_pass_probability(cands.gap, Delta, eps0, delta)
    z = (hits - n * p) / math.sqrt(n * p * (1 - p))
    assert abs(z) < 4.5, f"pass frequency {hits / n:.4f} vs exact {p:.4f} (z = {z:.2f})"
    assert isinstance(ptr_test(cands, Delta, eps0, delta, rng), bool)


# --------------------------------------------------------------------------- audits

def test_gap_check_on_pairs_where_mistakes_fails():
    base, nb, value = known_bad_pair(eps=1.0)
    assert value > 1.0  # plain mistakes is not eps-DP on this pair
    for eps, eps0, delta in CONFIGS:
        hs_support, hs_joint = ptr_losses(base, nb, eps, eps0, delta)
        assert max(hs_support, hs_joint) <= 1.0, _report(base, nb)


@pytest.mark.parametrize("eps, eps0, delta", [(4.0, 0.1, 0.05), (1.0, 1.0, 0.01)])
def test_gap_check_audit_can_fail(eps, eps0, delta):
    """On the known-bad pair, mechanisms without a valid test exceed delta."""
    base, nb, _ = known_bad_pair(eps=1.0)
    R = base.setting.default_R
    # Plain mistakes exceeds delta even when granted the larger budget eps0 + eps.
    pm, qm = np.exp(base.logp_mistakes(eps)), np.exp(nb.logp_mistakes(eps))
    plain = two_sided_hockey_stick(pm, qm, eps + eps0)
    assert plain > delta, f"plain mistakes hockey-stick {plain:.4f} <= delta {delta}"
    if eps0 < 1.0:
        # A gap check with threshold 0 (pass iff d_hat > 0) lets unsafe data (d = -1)
        # through with probability e^-eps0 / 2, far above delta.
        d = [math.floor(ev.gap_ratio) - 1 for ev in (base, nb)]
        assert d == [-1, -1]
        q_bad = [0.5 * math.exp(-eps0 * (0 - di)) for di in d]
        wrong = [q * np.exp(ev.logp_mistakes(eps)) + (1 - q) * np.exp(ev.logp_top_r(eps, R))
                 for q, ev in zip(q_bad, (base, nb))]
        wrong_hs = two_sided_hockey_stick(wrong[0], wrong[1], eps + eps0)
        assert wrong_hs > delta, f"threshold-0 variant {wrong_hs:.4f} <= delta {delta}"
        # The real gap check on the same pair stays within delta.
        assert max(ptr_losses(base, nb, eps, eps0, delta)) <= 1.0, _report(base, nb)


def test_gap_check_adversarial_from_known_bad_data():
    base, _, _ = known_bad_pair(eps=1.0)
    rng = np.random.default_rng(21)
    neighbours = random_neighbours(base, rng, 10) + random_neighbours(base, rng, 10, corners=True)
    worst_random = max(worst_ptr_loss(base, nb) for nb in neighbours)
    value, nb = adversarial_search(base, worst_ptr_loss, rng, restarts=10, passes=2)
    assert max(worst_random, value) <= 1.0, _report(base, nb)
    # The search reaches pairs with a real (if sub-delta) divergence.
    assert value > 0.05, _report(base, nb)


def _crossing_pair(target, eps0, delta):
    """A dataset with gap / (2 Delta) just above ``target`` and the neighbour that
    moves the pass probability of the test the most."""
    base = tune_gap(SAFE, seed=0, target=target + 0.005, tol=0.01)

    def crossing(a, b):
        return abs(a.pass_probability(eps0, delta) - b.pass_probability(eps0, delta))

    _, nb = adversarial_search(base, crossing, np.random.default_rng(3), restarts=6, passes=1)
    return base, nb


def test_gap_check_at_the_threshold():
    """d(D) = 2 and d(D') = 1 with T = 1.5: the test passes w.p. 0.82 vs 0.18."""
    eps, eps0, delta = 1.0, 2.0, 0.025
    base, nb = _crossing_pair(3.0, eps0, delta)
    pa, pb = base.pass_probability(eps0, delta), nb.pass_probability(eps0, delta)
    assert base.gap_ratio >= 3.0 > nb.gap_ratio, (base.gap_ratio, nb.gap_ratio)
    assert abs(pa - pb) > 0.5, (pa, pb)
    # Both datasets are safe, so the gap check is pure (eps0 + eps)-DP on the pair.
    R = SAFE.default_R
    P, Q = base.p_ptr(eps, eps0, delta, R), nb.p_ptr(eps, eps0, delta, R)
    loss = max_abs_log_ratio(np.log(P), np.log(Q))
    assert loss <= eps + eps0 + 1e-9, f"|log ratio| {loss:.4f} > eps0 + eps; " + _report(base, nb)
    assert hockey_stick(P, Q, eps + eps0) <= 1e-12 and hockey_stick(Q, P, eps + eps0) <= 1e-12
    # Searching further around the threshold dataset for the hockey-stick.
    value, worst = adversarial_search(base, worst_ptr_loss, np.random.default_rng(8),
                                      restarts=6, passes=1)
    assert value <= 1.0, _report(base, worst)


def test_gap_check_at_two_delta():
    """Safe D (gap just above 2 Delta, d = 0) next to unsafe D' (d = -1)."""
    eps, eps0, delta = 4.0, 0.1, 0.05
    base = tune_gap(SAFE, seed=0, target=1.005, tol=0.01)

    def lower_gap(a, b):
        return -b.gap_ratio

    _, nb = adversarial_search(base, lower_gap, np.random.default_rng(4), restarts=6, passes=1)
    assert base.gap_ratio > 1.0 > nb.gap_ratio, (base.gap_ratio, nb.gap_ratio)
    # Theorem 2 needs the gap on one side only: mistakes is eps-DP on this pair.
    loss = max_abs_log_ratio(base.logp_mistakes(eps), nb.logp_mistakes(eps))
    assert loss <= eps + 1e-9, f"mistakes |log ratio| {loss / eps:.4f} eps"
    assert worst_ptr_loss(base, nb) <= 1.0, _report(base, nb)
    value, worst = adversarial_search(base, worst_ptr_loss, np.random.default_rng(9),
                                      restarts=6, passes=1)
    assert value <= 1.0, _report(base, worst)
