"""The selection's free gap and the verdict it decides (issue 37).

Top-R draws the released support as a Gumbel-max over every support; the gap between the
winner's perturbed log-weight and the best of the others' is, given the winner S, logistic
with location L_S (the log-odds of releasing S) truncated to (0, inf). The package draws,
after the support, only whether that gap reaches a threshold that the noisy log-odds sets
(an exact Bernoulli): these tests check that its law is the Gumbel-max gap's, that L_S is
top-R's exact law, that the rule's false "trusted" rate stays at most 5 % wherever the best
support's probability is below one half, and that it says "trusted" more often than the
free gap alone where the best support is likely.
"""
import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit

from dpsubset.inference.confidence import (FALSE_TRUST, GapRule, gap_passes, gap_rule, released_log_odds,
                                           selection_confidence, trusted_probability)
from dpsubset.mechanisms import top_r_distribution
from dpsubset.mechanisms.noise import bernoulli, laplace_release
from dpsubset.mechanisms.top_r import top_r_log_weights
from dpsubset.search.candidates import TopRCandidates
from dpsubset.search.enumeration import all_supports

P, S = 5, 2


def _cands(scores):
    sup = all_supports(P, S)[: len(scores)]
    return TopRCandidates(sup, np.asarray(scores, dtype=float), P, S)


@pytest.mark.parametrize("R", [3, 6, 10])
def test_released_log_odds_is_top_rs_own_law(R):
    rng = np.random.default_rng(R)
    scores = np.sort(rng.uniform(0.0, 0.4, R))
    eps, Delta = 2.0, 0.05
    probs = top_r_distribution(_cands(scores), eps, Delta)
    index = {tuple(r): j for j, r in enumerate(all_supports(P, S).tolist())}
    for k, sup in enumerate(all_supports(P, S)[:R].tolist()):
        L = released_log_odds(scores, k, eps_mech=eps, Delta=Delta, p=P, s=S)
        assert expit(L) == pytest.approx(probs[index[tuple(sup)]], rel=1e-9)
    if R < math.comb(P, S):  # a support outside the list
        L = released_log_odds(scores, R, eps_mech=eps, Delta=Delta, p=P, s=S)
        assert expit(L) == pytest.approx(probs[index[tuple(all_supports(P, S)[-1].tolist())]], rel=1e-9)


def test_the_gap_test_has_the_gumbel_max_gaps_law():
    """Gumbel-max on top-R's log-weights, by simulation: how often the winner's gap reaches
    t given the winner, against the package's exact Bernoulli, and the winners' frequencies."""
    rng = np.random.default_rng(0)
    scores = np.array([0.0, 0.02, 0.05, 0.06])
    eps, Delta = 4.0, 0.05
    cands = _cands(scores)
    lw = top_r_log_weights(cands, eps, Delta)
    # every support of the remainder class has the list's last log-weight
    full = np.concatenate([lw[:-1], np.full(math.comb(P, S) - len(scores), lw[len(scores) - 1])])
    g = full + rng.gumbel(size=(40000, full.size))
    top2 = np.sort(g, axis=1)[:, -2:]
    winner, gap = np.argmax(g, axis=1), top2[:, 1] - top2[:, 0]
    for k in (0, 1, 5):  # two of the list, and one support outside it
        L = released_log_odds(scores, min(k, len(scores)), eps_mech=eps, Delta=Delta, p=P, s=S)
        assert np.mean(winner == k) == pytest.approx(expit(L), abs=0.01)
        for t in (0.5, 2.0, 3.7):
            sim = np.mean(gap[winner == k] >= t)
            ours = np.mean([gap_passes(L, t, rng) for _ in range(4000)])
            se = math.sqrt(sim * (1 - sim) / max(np.sum(winner == k), 1) + ours * (1 - ours) / 4000)
            assert abs(sim - ours) < 4 * se + 1e-3, (k, t, sim, ours)


def test_the_gap_test_is_stable_far_out():
    rng = np.random.default_rng(1)
    rate = lambda L, t: np.mean([gap_passes(L, t, rng) for _ in range(4000)])
    assert rate(60.0, 3.0) == 1.0 and rate(math.inf, 30.0) == 1.0
    # truncated far in its tail the gap is exponential(1) above 0: P(G >= 3) = e^-3
    assert rate(-60.0, 3.0) == pytest.approx(math.exp(-3.0), abs=0.012)
    assert rate(0.0, 0.0) == 1.0


def test_the_exact_bernoulli():
    rng = np.random.default_rng(7)
    for prob in (0.0, 1.0, 0.3, 1e-300, 0.999):
        draws = [bernoulli(prob, rng) for _ in range(8000)]
        assert np.mean(draws) == pytest.approx(prob, abs=0.016)
    # two first bits: W's interval holds 0.3 a quarter of the time, which the extra bits decide;
    # a dyadic 0.25 is decided by the first bits alone
    assert np.mean([bernoulli(0.3, rng, first_bits=2) for _ in range(8000)]) == pytest.approx(0.3, abs=0.016)
    assert np.mean([bernoulli(0.25, rng, first_bits=2) for _ in range(8000)]) == pytest.approx(0.25, abs=0.016)
    with pytest.raises(ValueError, match="probability"):
        bernoulli(1.5, rng)


@pytest.mark.parametrize("scale", [0.5, 1.0, 2.5, 4.0, 10.0, 100.0])
def test_the_rule_meets_its_size_and_beats_the_free_gap_alone(scale):
    rule = gap_rule(scale)
    t = rule.thresholds
    assert (t >= 0).all() and (np.diff(t) <= 0).all() and rule.size <= FALSE_TRUST
    # the size at the worst null (two supports at one half) by simulation of the release itself
    rng = np.random.default_rng(int(scale * 10))
    noisy = laplace_release(np.zeros(20000), scale, rng)
    sim = np.mean([2.0 * expit(-rule.threshold(x)) for x in noisy])
    assert sim == pytest.approx(rule.size, abs=0.003)
    # where the best support comes out with probability 0.97 (L = 3.5): at least the power of
    # the free gap alone (ln 40, the first rule), and clearly more while the noisy log-odds
    # informs (at scale 100 it hardly does, and the rule is the free gap's at ln 39)
    power = float(rule.step_probabilities(3.5) @ expit(3.5 - t))
    assert power > expit(3.5 - math.log(40.0))
    if scale <= 4:  # the default budget's scale (eps_c a quarter of eps_select): 0.54 against 0.46
        assert power > expit(3.5 - math.log(39.0)) + 0.05
    assert rule.threshold(-100.0) == t[0] and rule.threshold(100.0) == t[-1]


def test_false_trust_stays_at_most_five_percent_below_one_half():
    """Exact probability of "can be trusted" (over the noisy log-odds' steps and every support)
    where P(best) < 0.5, over random score lists and budgets."""
    rng = np.random.default_rng(2)
    worst = 0.0
    for _ in range(300):
        R = int(rng.integers(2, math.comb(P, S) + 1))
        scores = np.sort(rng.uniform(0.0, 0.3, R))
        eps = float(rng.uniform(0.2, 20.0))
        eps_c = eps * float(rng.choice([0.1, 0.25, 1.0]))
        L1 = released_log_odds(scores, 0, eps_mech=eps, Delta=0.05, p=P, s=S)
        if expit(L1) < 0.5:
            worst = max(worst, trusted_probability(scores, eps_mech=eps, Delta=0.05, p=P, s=S, eps=eps_c))
    assert 0.0 < worst <= FALSE_TRUST
    # two supports tied at one half each (the third far behind): the bound's worst case
    tied = trusted_probability(np.array([0.0, 1e-12, 1.0]), eps_mech=1.0, Delta=1e-3, p=3, s=2, eps=0.25)
    assert tied == pytest.approx(gap_rule(4.0).size, rel=1e-3) and tied <= FALSE_TRUST
    # the free gap alone at ln 40 (the rule of one step): 2 / 41 there
    alone = GapRule(np.array([]), np.array([math.log(40.0)]), 0.0, 4.0)
    tied = trusted_probability(np.array([0.0, 1e-12, 1.0]), eps_mech=1.0, Delta=1e-3, p=3, s=2, rule=alone)
    assert tied == pytest.approx(2 / 41, rel=1e-3)


def test_the_verdict_follows_the_gap():
    rng = np.random.default_rng(3)
    kw = dict(eps_mech=8.0, Delta=0.05, p=P, s=S, eps=2.0)
    sure = np.array([0.0, 0.2, 0.3, 0.35])     # L about 16: nearly always trusted
    close = np.array([0.0, 1e-4, 2e-4, 3e-4])  # three near ties: P(best) < 0.5, almost never
    says = lambda scores: np.mean([selection_confidence(scores, rng=rng, released=0, **kw).statement
                                   .startswith("can be trusted") for _ in range(400)])
    assert says(sure) > 0.95 and says(close) < 0.05
    conf = selection_confidence(sure, rng=rng, released=0, **kw)
    assert conf.gap_passed and conf.gap_threshold >= 0 and "selection's gap at least" in str(conf)
    assert conf.gap_threshold in gap_rule(8.0 / 2.0).thresholds
    # the exponential mechanism (a prefix of the ranking) keeps the bounds' verdict, no gap
    expo = selection_confidence(sure, rng=rng, outside_as_last=False, **kw)
    assert expo.gap_threshold is None and expo.gap_passed is None
