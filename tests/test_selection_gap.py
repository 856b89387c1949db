"""The selection's free gap and the verdict it decides (issue 37).

Top-R draws the released support as a Gumbel-max over every support; the gap between the
winner's perturbed log-weight and the best of the others' is, given the winner S, logistic
with location L_S (the log-odds of releasing S) truncated to (0, inf). The package draws it
after the support, by inversion: these tests check that its law is the Gumbel-max gap's,
that L_S is top-R's exact law, and that the verdict's false "trusted" rate stays at most 5 %
wherever the best support's probability is below one half.
"""
import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit

from dpsubset.inference.confidence import (GAP_THRESHOLD, free_gap, released_log_odds, selection_confidence,
                                           trusted_probability)
from dpsubset.mechanisms import top_r_distribution
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


def test_the_gap_drawn_after_the_support_has_the_gumbel_max_gaps_law():
    """Gumbel-max on top-R's log-weights, by simulation: the winner's gap given the winner
    against the package's draw by inversion (KS test), and the winners' frequencies."""
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
        ours = np.array([free_gap(L, rng) for _ in range(4000)])
        assert (ours > 0).all()
        assert stats.ks_2samp(gap[winner == k], ours).pvalue > 1e-3


def test_free_gap_is_stable_far_out():
    rng = np.random.default_rng(1)
    for L in (-60.0, -5.0, 0.0, 5.0, 60.0):
        draws = np.array([free_gap(L, rng) for _ in range(2000)])
        assert np.isfinite(draws).all() and (draws > 0).all()
        if L > 10:  # hardly truncated: the logistic's own median
            assert np.median(draws) == pytest.approx(L, abs=0.2)
        if L < -10:  # truncated far in its tail: exponential(1) above 0
            assert np.mean(draws) == pytest.approx(1.0, abs=0.1)


def test_false_trust_stays_at_most_five_percent_below_one_half():
    """Exact probability of "can be trusted" (sum over every support of sigma(L - ln 40))
    where P(best) < 0.5, over random score lists and budgets (and by simulation in one case)."""
    rng = np.random.default_rng(2)
    worst = 0.0
    for _ in range(300):
        R = int(rng.integers(2, math.comb(P, S) + 1))
        scores = np.sort(rng.uniform(0.0, 0.3, R))
        eps = float(rng.uniform(0.2, 20.0))
        L1 = released_log_odds(scores, 0, eps_mech=eps, Delta=0.05, p=P, s=S)
        if expit(L1) < 0.5:
            worst = max(worst, trusted_probability(scores, eps_mech=eps, Delta=0.05, p=P, s=S))
    assert 0.0 < worst <= 0.05
    # two supports tied at one half each (the third far behind): the bound's worst case, 2 / 41
    tied = trusted_probability(np.array([0.0, 1e-12, 1.0]), eps_mech=1.0, Delta=1e-3, p=3, s=2)
    assert tied == pytest.approx(2 * expit(-GAP_THRESHOLD), rel=1e-3) and tied <= 0.05


def test_the_verdict_follows_the_gap():
    rng = np.random.default_rng(3)
    kw = dict(eps_mech=8.0, Delta=0.05, p=P, s=S, eps=2.0)
    sure = np.array([0.0, 0.2, 0.3, 0.35])     # L about 16: nearly always trusted
    close = np.array([0.0, 1e-4, 2e-4, 3e-4])  # three near ties: P(best) < 0.5, almost never
    says = lambda scores: np.mean([selection_confidence(scores, rng=rng, released=0, **kw).statement
                                   .startswith("can be trusted") for _ in range(400)])
    assert says(sure) > 0.95 and says(close) < 0.05
    conf = selection_confidence(sure, rng=rng, released=0, **kw)
    assert conf.gap > 0 and "selection's gap" in str(conf)
    # the exponential mechanism (a prefix of the ranking) keeps the bounds' verdict, no gap
    assert selection_confidence(sure, rng=rng, outside_as_last=False, **kw).gap is None
