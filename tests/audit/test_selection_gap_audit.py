"""Privacy audit of the selection's free gap and the verdict it decides (issue 37): docs/methods/inference.md.

Top-R releases the support S and, with it at no extra cost, the gap G: the joint density of
(S, G) is phi(G - L_S) on G > 0, phi the standard logistic density and L_S the log-odds of
releasing S. Since log phi is 1-Lipschitz, the privacy loss of any output (S, G) is at most
|L_S(D) - L_S(D')|, so the pair is eps_mech-DP exactly when every support's log-odds moves
by at most eps_mech between neighbours.

1. Exact: on small problems scored by enumeration, the joint log-density of (S, G) is
   compared between a data set and its neighbours (random, corners, adversarial search),
   over every support and a grid of gaps: the loss stays at most eps_mech.
2. Known-bad: a gap of half the scale (density 2 phi(2 (G - L_S)), a sharper statistic
   that someone might take to be as free) has a loss of up to 2 |L_S - L'_S|; on the
   order-statistics worst case (the best's score up by Delta, the others down) it exceeds
   eps_mech, and the audit's check catches it.
3. The verdict: the exact law of (S, whether G reaches t(L~), the step of the noisy
   log-odds L~) between neighbours stays within eps_mech + eps_c (random, corner and
   adversarial neighbours, and the worst case); known-bad: a threshold stepped on the
   EXACT log-odds exceeds it.
"""
import math

import numpy as np
import pytest

from dpsubset.inference.confidence import released_log_odds
from dpsubset.search.enumeration import all_supports

from ._audit import Evaluated, Setting, adversarial_search, random_neighbours, signal_data

TOL = 1e-9
EPS_MECH = 2.0
AUDIT = Setting(n=12, p=5, s=2, b_x=1.0, b_y=1.0, r=1.5, lam=0.5)
GAPS = np.concatenate([np.linspace(1e-6, 10.0, 41), [30.0, 100.0]])


def _log_phi(x, scale=1.0):
    """Log-density of the logistic distribution of the given scale."""
    z = np.asarray(x, dtype=float) / scale
    return -z - 2.0 * np.logaddexp(0.0, -z) - math.log(scale)


def log_odds_by_support(scores_in_list, supports_in_list, p, s, Delta):
    """{support: L_S} over every support: listed ones by position, the rest as top-R scores them."""
    scores = np.asarray(scores_in_list, dtype=float)
    R = len(scores)
    out = {}
    for k, sup in enumerate(supports_in_list):
        out[tuple(sorted(sup))] = released_log_odds(scores, k, eps_mech=EPS_MECH, Delta=Delta, p=p, s=s)
    if R < math.comb(p, s):
        L_out = released_log_odds(scores, R, eps_mech=EPS_MECH, Delta=Delta, p=p, s=s)
        for sup in all_supports(p, s).tolist():
            out.setdefault(tuple(sup), L_out)
    return out


def _L(ev):
    R = AUDIT.default_R
    return log_odds_by_support(ev.ranking.scores[:R], np.asarray(ev.ranking.supports[:R]).tolist(),
                               AUDIT.p, AUDIT.s, AUDIT.Delta)


def joint_loss(L_a, L_b, scale=1.0):
    """max over supports and the gap grid of |log density(S, G | D) - log density(S, G | D')|."""
    worst = 0.0
    for sup, la in L_a.items():
        lb = L_b[sup]
        worst = max(worst, float(np.max(np.abs(_log_phi(GAPS - la, scale) - _log_phi(GAPS - lb, scale)))))
    return worst


@pytest.mark.parametrize("coefs", [(1.0,), (0.6, 0.3)])
def test_the_pair_support_and_gap_is_eps_mech_dp(coefs):
    rng = np.random.default_rng(5)
    X, y = signal_data(AUDIT, 5, coefs=coefs)
    base = Evaluated(AUDIT, X, y)
    L0 = _L(base)
    assert len(L0) == math.comb(AUDIT.p, AUDIT.s)
    losses = [joint_loss(L0, _L(nb)) for nb in random_neighbours(base, rng, 30, corners=True)]
    worst, _ = adversarial_search(base, lambda b, nb: joint_loss(_L(b), _L(nb)), rng, restarts=6)
    assert max(worst, max(losses)) <= EPS_MECH * (1 + TOL)
    assert max(losses) > 0.0  # the neighbours do move the law


def test_a_gap_of_half_the_scale_is_caught():
    """The worst case of the order-statistics argument (every score moved by Delta, the
    best up and the others down) moves L_S of the best by eps_mech exactly: the released
    gap's loss reaches eps_mech, and a gap of half the scale's reaches twice it."""
    rng = np.random.default_rng(6)
    Delta, p, s = 0.05, 5, 2
    for R in (3, 8, math.comb(p, s)):
        scores = np.r_[0.0, np.sort(rng.uniform(3 * Delta, 0.5, R - 1))]
        sups = all_supports(p, s)[:R].tolist()
        moved = scores + np.r_[Delta, -Delta * np.ones(R - 1)]  # the order is kept
        a = log_odds_by_support(scores, sups, p, s, Delta)
        b = log_odds_by_support(moved, sups, p, s, Delta)
        good, bad = joint_loss(a, b), joint_loss(a, b, scale=0.5)
        assert good <= EPS_MECH * (1 + TOL) and good == pytest.approx(EPS_MECH, rel=1e-3)
        assert bad > EPS_MECH * 1.5  # the audit's check would fail


# ---------------------------------------------------------------------------
# The verdict: (S, whether G reaches t(L~), L~'s step), with L~ the noisy log-odds
# ---------------------------------------------------------------------------

EPS_C = 0.5  # the noisy log-odds' budget: Laplace scale EPS_MECH / EPS_C


def _verdict_law(L_by_support, L1, rule, thresholds_of=None):
    """Exact probabilities of every output (support, passed, step of L~) as a dict.

    P(S, passed, k) = P(L~ in step k) * (sigma(L_S - t_k) if passed else sigma(L_S) - sigma(L_S - t_k)):
    S and the gap come from the selection's Gumbel-max, L~ from independent noise.
    ``thresholds_of`` (known-bad only) replaces the public rule by one read off the exact L1.
    """
    from scipy.special import expit
    steps = rule.step_probabilities(L1)
    t = rule.thresholds if thresholds_of is None else thresholds_of(L1)
    out = {}
    for sup, L in L_by_support.items():
        for k, w in enumerate(steps):
            yes = w * expit(L - t[k])
            out[(sup, True, k)] = yes
            out[(sup, False, k)] = w * expit(L) - yes
    return out


def verdict_loss(L_a, L_b, rule, thresholds_of=None):
    """max over outputs of |log P(output | D) - log P(output | D')| (outputs of mass > 1e-300)."""
    best = lambda L: max(L.values())  # the best support's log-odds is the largest
    a = _verdict_law(L_a, best(L_a), rule, thresholds_of)
    b = _verdict_law(L_b, best(L_b), rule, thresholds_of)
    return max(abs(math.log(a[o]) - math.log(b[o])) for o in a if a[o] > 1e-300 and b[o] > 1e-300)


def test_the_verdict_is_eps_mech_plus_eps_c_dp():
    """Random, corner and adversarially searched neighbours, exact law: the loss of the
    released (support, verdict, noisy log-odds' step) is at most eps_mech + eps_c."""
    from dpsubset.inference.confidence import gap_rule
    rule = gap_rule(EPS_MECH / EPS_C)
    rng = np.random.default_rng(8)
    X, y = signal_data(AUDIT, 7, coefs=(0.6, 0.3))
    base = Evaluated(AUDIT, X, y)
    L0 = _L(base)
    losses = [verdict_loss(L0, _L(nb), rule) for nb in random_neighbours(base, rng, 30, corners=True)]
    worst, _ = adversarial_search(base, lambda b, nb: verdict_loss(_L(b), _L(nb), rule), rng, restarts=4)
    assert max(worst, max(losses)) <= (EPS_MECH + EPS_C) * (1 + TOL)
    assert max(losses) > 0.0


def test_the_verdict_on_the_worst_case_and_a_rule_read_off_the_exact_log_odds_is_caught():
    """On the order-statistics worst case (L of the best moves by eps_mech) the verdict's
    loss stays within eps_mech + eps_c; a rule whose threshold steps on the EXACT log-odds
    (the noisy one skipped: someone might think the gap alone is free, so its threshold is
    too) jumps between neighbours that straddle a step and exceeds it."""
    from dpsubset.inference.confidence import gap_rule
    rule = gap_rule(EPS_MECH / EPS_C)
    sharp = gap_rule(0.5)  # steep steps: thresholds from 20 down to 0
    exact_step = lambda L1: np.full(len(rule.thresholds), sharp.thresholds[int(np.searchsorted(sharp.cuts, L1))])
    rng = np.random.default_rng(9)
    Delta, p, s = 0.05, 5, 2
    worst_good, worst_bad = 0.0, 0.0
    for R in (3, 8, math.comb(p, s)):
        for _ in range(20):
            scores = np.r_[0.0, np.sort(rng.uniform(Delta, 0.2, R - 1))]
            sups = all_supports(p, s)[:R].tolist()
            moved = scores + np.r_[Delta, -Delta * np.ones(R - 1)]
            a = log_odds_by_support(scores, sups, p, s, Delta)
            b = log_odds_by_support(moved, sups, p, s, Delta)
            worst_good = max(worst_good, verdict_loss(a, b, rule))
            worst_bad = max(worst_bad, verdict_loss(a, b, rule, thresholds_of=exact_step))
    assert worst_good <= (EPS_MECH + EPS_C) * (1 + TOL)
    assert worst_bad > (EPS_MECH + EPS_C) * 1.5  # the audit's check would fail
