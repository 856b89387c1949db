"""Exact privacy audit of the mistakes mechanism (conditional guarantee).

Two facts are checked, with the exact output distributions:

* the audit can fail: on a neighbour pair where the gap condition of Theorem 2
  fails (the best support changes with one row), mistakes exceeds eps;
* where the gap condition holds (on D and on the neighbours), mistakes stays
  within eps for random, corner and adversarial neighbours.
"""
import numpy as np
import pytest

from ._audit import (Evaluated, Setting, adversarial_search, max_abs_log_ratio,
                     random_neighbours, signal_data)

TOL = 1e-9

# n = 40 rows; y = x_0, so the supports {0, j} nearly tie and the gap is ~0.
BAD = Setting(n=40, p=6, s=2, b_x=1.0, b_y=1.0, r=1.0, lam=1.0)
# Enough rows for a gap above 2 Delta: y = (x_0 + x_1) / 2 (and (x_0 + x_1 + x_2) / 3).
GOOD = {
    "p6s2": (Setting(n=120, p=6, s=2, b_x=1.0, b_y=1.0, r=1.0, lam=1.0), (0.5, 0.5)),
    "p7s3": (Setting(n=200, p=7, s=3, b_x=1.0, b_y=1.0, r=1.0, lam=1.0), (1 / 3, 1 / 3, 1 / 3)),
}


def mistakes_loss(eps):
    def loss(a, b):
        return max_abs_log_ratio(a.logp_mistakes(eps), b.logp_mistakes(eps)) / eps
    return loss


def known_bad_pair(eps=1.0):
    """A neighbour pair on which plain mistakes is not eps-DP (found by search)."""
    base = Evaluated(BAD, *signal_data(BAD, seed=2, coefs=(1.0,)))
    value, nb = adversarial_search(base, mistakes_loss(eps), np.random.default_rng(0),
                                   restarts=6, passes=1)
    return base, nb, value


@pytest.mark.parametrize("eps", [1.0, 4.0])
def test_mistakes_audit_detects_violation_without_gap(eps):
    base, nb, value = known_bad_pair(eps)
    # Theorem 2 does not apply: the gap is below 2 Delta on both datasets ...
    assert base.gap_ratio <= 1.0 and nb.gap_ratio <= 1.0, (base.gap_ratio, nb.gap_ratio)
    # ... the best support moved ...
    assert not np.array_equal(base.mistakes.center, nb.mistakes.center)
    # ... and the audit sees a privacy loss well above eps.
    assert value > 1.5, (
        f"expected mistakes to violate eps without the gap; worst |log ratio| = {value:.3f} eps")


@pytest.mark.parametrize("name", sorted(GOOD))
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_mistakes_within_eps_when_gap_holds(name, eps):
    st, coefs = GOOD[name]
    base = Evaluated(st, *signal_data(st, seed=0, coefs=coefs))
    assert base.gap_ratio > 1.0, f"setting lost its gap: {base.gap_ratio:.3f}"
    rng = np.random.default_rng(11)
    neighbours = random_neighbours(base, rng, 10) + random_neighbours(base, rng, 10, corners=True)
    loss = mistakes_loss(eps)
    worst_random = max(loss(base, nb) for nb in neighbours)
    worst_adv, nb = adversarial_search(base, loss, rng, restarts=8, passes=1)
    worst = max(worst_random, worst_adv)
    # The condition of Theorem 2 holds on D; check it on the worst neighbour too.
    assert nb.gap_ratio > 1.0, f"worst neighbour has gap / 2 Delta = {nb.gap_ratio:.3f}"
    assert worst <= 1.0 + TOL, (
        f"mistakes exceeded eps with the gap condition: random {worst_random:.4f} eps, "
        f"adversarial {worst_adv:.4f} eps (gap/2Delta: D {base.gap_ratio:.3f}, "
        f"D' {nb.gap_ratio:.3f})")
    assert worst > 0.05, f"neighbours barely moved mistakes: {worst:.4f} eps"
