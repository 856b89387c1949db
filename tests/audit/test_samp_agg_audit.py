"""Exact audit of the aggregation stage of sample-and-aggregate (method="samp_agg").

Replacing one row changes one block, hence one block's vote (a size-s set). The
audit lists every vote vector of a small problem (every multiset of m block votes),
computes the exact law of the released support (``vote_distribution``) and checks
max_S |log P(S) - log P'(S)| <= eps over *every* pair of vote vectors that differ in
one block: an exhaustive search over neighbours, not a sample. A Laplace scale
calibrated to a sensitivity of s / m instead of 2 s / m must be caught.
"""
import itertools
import math

import numpy as np
import pytest
from scipy import stats

from dpsubset.selection.baselines.samp_agg import (laplace_scale, sample_votes_top_s,
                                         vote_distribution)

TOL = 1e-9


def _worst_loss(p, s, m, eps, scale=None):
    """max over neighbouring vote vectors of max_S |log ratio|, in units of eps."""
    subsets = list(itertools.combinations(range(p), s))
    cache = {}

    def logp(ms):
        if ms not in cache:
            counts = np.zeros(p, dtype=int)
            for i in ms:
                counts[list(subsets[i])] += 1
            cache[ms] = np.log(vote_distribution(counts, m, s, eps, scale=scale)[1])
        return cache[ms]

    worst = 0.0
    for ms in itertools.combinations_with_replacement(range(len(subsets)), m):
        for pos in range(m):
            rest = ms[:pos] + ms[pos + 1:]
            for new in range(len(subsets)):
                nb = tuple(sorted(rest + (new,)))
                worst = max(worst, float(np.max(np.abs(logp(ms) - logp(nb)))))
    return worst / eps


@pytest.mark.parametrize("p,s,m,eps", [(4, 2, 3, 1.0), (5, 2, 2, 0.5), (4, 1, 4, 2.0)])
def test_samp_agg_pure_dp_over_all_neighbouring_votes(p, s, m, eps):
    worst = _worst_loss(p, s, m, eps)
    assert worst <= 1.0 + TOL, f"samp_agg privacy loss {worst:.4f} eps > eps"
    assert worst > 0.1, f"neighbours barely moved the output ({worst:.4f} eps): vacuous audit"


def test_samp_agg_audit_detects_understated_sensitivity():
    """Laplace noise for sensitivity s/m (half the true 2s/m) exceeds eps somewhere."""
    p, s, m, eps = 4, 2, 3, 1.0
    worst = _worst_loss(p, s, m, eps, scale=s / (m * eps))
    assert worst > 1.0, f"understated scale not detected: {worst:.3f} eps"


def test_vote_distribution_matches_adaptive_quadrature():
    for counts in ([3, 2, 1, 0], [1, 1, 2, 2], [3, 3, 0, 0]):
        _, a = vote_distribution(counts, 3, 2, 1.0)
        _, b = vote_distribution(counts, 3, 2, 1.0, method="quad")
        assert abs(a.sum() - 1) < 1e-12
        assert np.max(np.abs(np.log(a) - np.log(b))) < 1e-8


def test_vote_sampler_matches_exact_law():
    """Chi-square of 20,000 draws of the sampler against vote_distribution."""
    p, s, m, eps = 5, 2, 4, 1.0
    counts = np.array([4, 3, 1, 0, 0])
    supports, probs = vote_distribution(counts, m, s, eps)
    rng = np.random.default_rng(11)
    draws = 20_000
    index = {S: k for k, S in enumerate(supports)}
    obs = np.zeros(len(supports))
    for _ in range(draws):
        obs[index[tuple(sample_votes_top_s(counts, m, s, eps, rng).tolist())]] += 1
    pval = stats.chisquare(obs, probs * draws).pvalue
    assert pval > 1e-3, f"sampler disagrees with the exact law (p = {pval:.2e})"
    assert math.isclose(laplace_scale(s, m, eps), 2 * s / (m * eps))
