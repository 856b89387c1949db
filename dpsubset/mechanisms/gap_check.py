r"""Gap check: mistakes made unconditionally private by propose-test-release.

This goes beyond the paper (docs/methods/selection.md, "The gap check"). The mistakes
mechanism is eps-DP only on data whose best support is separated from the
second best by more than 2 Delta. The gap check tests that condition privately
and falls back to top-R (always eps-DP) when the test fails.

The mechanism
-------------
With gap(D) = c(S_(2)) - c(S_(1)), eps_0 > 0 and 0 < delta < 1/2:

1. d(D) = floor(gap(D) / (2 Delta)) - 1;
2. d_hat = d(D) + Z, Z Laplace noise of scale 1/eps_0 (drawn exactly as a discrete
   Laplace on a fine public grid, :func:`dpsubset.mechanisms.noise.laplace_release`);
3. if d_hat > T, T about log(1 / (2 delta)) / eps_0 (the smallest grid point with
   P(Z > T) <= delta under the noise's exact law), release mistakes(D) with eps,
   otherwise release top-R(D) with eps.

Only the outcome of the test (which branch ran) may leave this module besides
the released support; d, d_hat and the gap stay inside.

Guarantee: (eps_0 + eps, delta)-DP under row replacement, provided the
candidate lists are exact and Delta bounds the change of every score.

Why it holds
------------
*The gap moves by at most 2 Delta.* Replacing one row moves every score by at
most Delta, hence also every order statistic of the scores (the k-th smallest of
numbers each moved by at most Delta moves by at most Delta). The gap is a
difference of two order statistics, so it moves by at most 2 Delta.

*d moves by at most 1.* gap / (2 Delta) moves by at most 1, and two reals at
distance <= 1 have floors at distance <= 1. So d has sensitivity 1 and the
Laplace step is an eps_0-DP release of d (and the pass/fail bit, a function of
d_hat, is eps_0-DP too).

*What d certifies.* Call D "safe" when gap(D) > 2 Delta. On a safe D the best
support cannot be changed by one row replacement: if D' had another best support
B, then c(B, D) - Delta <= c(B, D') <= c(S_1, D') <= c(S_1, D) + Delta, so
c(B, D) - c(S_1, D) <= 2 Delta, contradicting the gap. Neighbours then share the
mistake partition, each class minimum moves by at most Delta, and mistakes is
eps-DP on the pair (Theorem 2 of the paper). If d(D) = j >= 1 then gap(D) >=
2 (j + 1) Delta, and after i <= j - 1 replacements the gap is still >= 4 Delta, so
the best support is unchanged along any path of j replacements; d is a lower
bound on the distance from D to the set of unsafe datasets. The part the proof
needs is the converse direction at 0: on an unsafe D, gap(D) <= 2 Delta, so
floor(gap / (2 Delta)) <= 1 and d(D) <= 0.

*Propose-test-release (Dwork and Lei 2009).* Fix neighbours D, D' and an output
set E. Write p_D = P(test passes on D), M_D and T_D for the output distributions
of mistakes and top-R. The released support has distribution
p_D M_D + (1 - p_D) T_D.

- If D or D' is safe, mistakes is eps-DP on this pair, top-R is eps-DP always,
  and p_D <= e^{eps_0} p_D', (1 - p_D) <= e^{eps_0} (1 - p_D'). Term by term,
  P_D(E) <= e^{eps_0 + eps} P_D'(E): pure (eps_0 + eps)-DP on the pair.
- If neither is safe, d(D) <= 0 and d(D') <= 0, so
  p_D <= P(Z > T) <= delta, and likewise p_D' <= delta. Then
  P_D(E) <= p_D + (1 - p_D) T_D(E) <= delta + e^{eps_0 + eps} (1 - p_D') T_D'(E)
  <= delta + e^{eps_0 + eps} P_D'(E).

Either way P_D(E) <= e^{eps_0 + eps} P_D'(E) + delta. The same bound holds for
the pair (which branch ran, released support), so reporting the branch costs
nothing extra. The threshold is set on the exact tail of the noise drawn (for the
continuous Laplace it would be log(1 / (2 delta)) / eps_0, from P(Z > T) =
exp(-eps_0 T) / 2; the grid's law moves it by a relative 2^-21 at most).

Remarks. The bound delta is reached only when an unsafe dataset has d = 0,
i.e. gap exactly 2 Delta; elsewhere unsafe data have d <= -1 and pass with
probability at most delta e^{-eps_0}. (ceil(gap / (2 Delta)) - 1 would satisfy
the same two properties and pass more often; this module follows the package
specification.) The argument assumes exact arithmetic: d is computed in floating
point, which can only matter when gap / (2 Delta) is within rounding of an
integer.

Test: ``tests/audit`` computes the exact hockey-stick divergence of
:func:`ptr_distribution` on adversarial neighbour pairs, including pairs on which
mistakes alone is not eps-DP and pairs on which the test passes on one side only.
"""
from __future__ import annotations

import math

import numpy as np

from . import noise
from .mistakes import mistakes_distribution, sample_mistakes
from .top_r import sample_top_r, top_r_distribution

__all__ = ["GUARANTEE", "ptr_threshold", "ptr_test", "ptr_pass_probability",
           "ptr_distribution", "sample_gap_checked"]

# Key into dpsubset.privacy.leaks.GUARANTEES: (eps_0 + eps, delta)-DP.
GUARANTEE = "approximate"


def _check_params(Delta, eps0, delta):
    if not (Delta > 0 and math.isfinite(Delta)):
        raise ValueError(f"Delta must be positive and finite, got {Delta}")
    if not (eps0 > 0 and math.isfinite(eps0)):
        raise ValueError(f"eps0 must be positive and finite, got {eps0}")
    if not 0 < delta < 0.5:
        raise ValueError(f"delta must be in (0, 1/2), got {delta}")


def _stability(gap: float, Delta: float) -> float:
    """d = floor(gap / (2 Delta)) - 1 (sensitivity 1; <= 0 wherever gap <= 2 Delta).

    An infinite gap (a single feasible support) gives d = +inf: the output is
    then constant and any test outcome is harmless.
    """
    if math.isnan(gap):
        raise ValueError("gap is NaN")
    if math.isinf(gap):
        return math.inf if gap > 0 else -math.inf
    return float(math.floor(gap / (2.0 * Delta)) - 1)


def ptr_threshold(eps0: float, delta: float) -> float:
    """Threshold T of the test: the smallest point of the noise's public grid with
    P(noise > T) <= delta, about log(1 / (2 delta)) / eps_0 (the continuous Laplace's).

    The noise is the discrete Laplace of :func:`dpsubset.mechanisms.noise.laplace_release`
    with scale 1 / eps_0; T is chosen on its exact law, so the delta of the module
    docstring is exact for the noise actually drawn.
    """
    return noise.laplace_threshold(1.0 / eps0, delta)


def ptr_test(cands_mistakes, Delta: float, eps0: float, delta: float,
             rng: np.random.Generator) -> bool:
    """Privately test whether mistakes may be used: True means "run mistakes".

    Parameters
    ----------
    cands_mistakes : MistakeCandidates
        Provides the gap c(S_(2)) - c(S_(1)) (exact).
    Delta : float
        Row-replacement sensitivity of the scores.
    eps0 : float
        Budget spent on the test.
    delta : float
        Target delta, in (0, 1/2).
    rng : numpy.random.Generator

    Returns
    -------
    bool
        Whether d + Laplace(1/eps0) (exact, on its grid) exceeded :func:`ptr_threshold`. Nothing else
        (not d, not the noisy value, not the gap) is returned, because only the
        bit is covered by the analysis.

    Notes
    -----
    Guarantee: the returned bit is eps_0-DP. Combined with an eps-DP top-R
    fallback and mistakes on success, the whole release is (eps_0 + eps, delta)-DP
    (see the module docstring).
    """
    _check_params(Delta, eps0, delta)
    d = _stability(cands_mistakes.gap, Delta)
    if math.isinf(d):  # a single feasible support: the output is constant anyway
        return d > 0
    return bool(noise.laplace_release(d, 1.0 / eps0, rng) > ptr_threshold(eps0, delta))


def ptr_pass_probability(gap: float, Delta: float, eps0: float, delta: float) -> float:
    """Exact probability that :func:`ptr_test` passes on data with this gap.

    P(release(d) > T) for the discrete Laplace release of scale 1/eps0 on its grid
    (:func:`dpsubset.mechanisms.noise.laplace_release_sf`).
    For audits and documentation; it is a function of the private gap and must
    not be released.
    """
    _check_params(Delta, eps0, delta)
    d = _stability(gap, Delta)
    if math.isinf(d):
        return 1.0 if d > 0 else 0.0
    return noise.laplace_release_sf(d, 1.0 / eps0, ptr_threshold(eps0, delta))


def ptr_distribution(topr_cands, mistake_cands, eps: float, eps0: float, delta: float,
                     Delta: float) -> np.ndarray:
    """Exact output distribution of the gap-checked mechanism over all supports.

    P(pass) * mistakes_distribution + (1 - P(pass)) * top_r_distribution, in the
    lexicographic order of ``all_supports(p, s)``. For small problems; used by
    the audits.

    Parameters
    ----------
    topr_cands : TopRCandidates
    mistake_cands : MistakeCandidates
        Both computed exactly on the same data.
    eps : float
        Budget of whichever selection mechanism runs.
    eps0, delta : float
        Budget of the test and the target delta.
    Delta : float

    Returns
    -------
    ndarray, shape (C(p, s),)

    Notes
    -----
    Guarantee of the mechanism described: (eps_0 + eps, delta)-DP.
    """
    q = ptr_pass_probability(mistake_cands.gap, Delta, eps0, delta)
    out = (1.0 - q) * top_r_distribution(topr_cands, eps, Delta)
    if q > 0.0:
        out = out + q * mistakes_distribution(mistake_cands, eps, Delta)
    return out


def sample_gap_checked(mistake_cands, topr_cands, eps: float, eps0: float, delta: float,
                       Delta: float, rng: np.random.Generator):
    """Release one support by the gap-checked mechanism.

    Parameters
    ----------
    mistake_cands : MistakeCandidates
    topr_cands : TopRCandidates or callable
        The exact top-R list, or a function of no argument returning it; a callable
        is only called when the test fails, so the top-R search can be skipped
        when mistakes runs (which search ran is the test bit, already covered).
    eps, eps0, delta, Delta : float
    rng : numpy.random.Generator

    Returns
    -------
    support : ndarray, shape (s,)
        Sorted released support.
    passed : bool
        Whether the test passed (mistakes ran). May be reported.

    Notes
    -----
    Guarantee: (eps_0 + eps, delta)-DP under row replacement when both candidate
    sets are exact and R is fixed in advance.
    """
    passed = ptr_test(mistake_cands, Delta, eps0, delta, rng)
    if passed:
        return sample_mistakes(mistake_cands, eps, Delta, rng), True
    cands = topr_cands() if callable(topr_cands) else topr_cands
    return sample_top_r(cands, eps, Delta, rng), False
