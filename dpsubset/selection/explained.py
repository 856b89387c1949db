"""How much of the response's spread the best support explains, released privately.

On a centred design (docs/methods/centring.md) the selection's ball only has to hold the
best support's least-squares coefficients, and their size is set by how much of the
response's spread the support explains: a weak signal (a health survey, R^2 = 0.07) needs a
ball a quarter the size of a strong one (diamonds' prices, R^2 = 0.9). The public default
radius cannot tell the two apart; this release can. It is part of the centring stage's
budget (``Centre(fit_share=0.02)`` of eps, on top of the means and spreads) and runs after the
design, before the selection:

1. the reference ball ``r_ref = hypot(level(y), 4 sd(y))`` (released numbers only:
   :func:`dpsubset.defaults.reference_radius`), large enough for a fit that explains all of
   the response;
2. in that ball, the score of the always-in columns alone (the intercept: half the
   response's variance on the clipped data) less the certified best score of size ``s``,
   ``D = c(K) - min_S c(S)``, released with Laplace noise of scale
   ``(Delta_K + Delta_s) / eps_fit``; for least squares 2 D is the variance of the best
   support's fitted values (the residuals are orthogonal to them);
3. post-processing (:mod:`dpsubset.defaults`): the fitted values' spread at an upper
   confidence bound, and from it the selection's radius.

Privacy: replacing one row moves c(K) by at most Delta_K (the sensitivity of a score with no
candidate column) and every c(S) with |S| = s by at most Delta_s, so it moves their minimum by
at most Delta_s too (an order statistic: Lemma A.2 of Prastakos, Behdin and Mazumder 2025),
and D by at most Delta_K + Delta_s (each bound at ``r_ref``:
:func:`dpsubset.privacy.sensitivity.score_sensitivity`, plus the certified search's slack).
The Laplace mechanism with that scale is eps_fit-DP, and ``r_ref`` is a function of the
centring's earlier release (adaptive composition). tests/audit/test_explained_audit.py checks
the bound by brute force on neighbouring data sets at the box's corners, with a known-bad case.

Nothing here is released but the noisy difference; the support S_1 and the exact scores stay
inside.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..losses import SquaredLoss
from ..mechanisms.noise import laplace_release
from ..privacy.budget import Stage
from ..privacy.sensitivity import score_sensitivity
from ..search.exact import SubsetSearch
from .base import SelectionRequest, make_scorer, require_closed, search_slack

__all__ = ["ReleasedFit", "release_explained", "explained_sensitivity"]


@dataclass(frozen=True)
class ReleasedFit:
    """The released score difference and what it was released with (all public).

    Attributes
    ----------
    explained : float
        c(K) - c(S_1) + Laplace(scale), mapped units: half the variance of the best
        support's fitted values, plus noise.
    scale : float
        The Laplace scale, (Delta_K + Delta_s) / eps at the reference ball.
    """

    explained: float
    scale: float


def explained_sensitivity(design, s, r_ref):
    """Sensitivity of D = c(K) - min_{|S| = s} c(S) at the ball ``r_ref`` (public): the sum of
    the two scores' sensitivities, Delta_K + Delta_s, plus the certified search's slack on the
    minimum (it may be off by tau on each neighbour: 2 tau, as the selection's Delta has;
    :func:`dpsubset.selection.base.search_slack`). c(K) is a closed form, with no slack."""
    slack = search_slack(SquaredLoss(), design.b_y)
    return (score_sensitivity(design.x_bounds, design.b_y, r_ref, 0, design.forced_bounds, design.n)
            + score_sensitivity(design.x_bounds, design.b_y, r_ref, s, design.forced_bounds, design.n)
            + 2.0 * slack)


def release_explained(design, s, r_ref, lam, eps, rng, ledger, *, search="auto", time_limit=None,
                      memory_limit=None):
    """Release how much the best support of size ``s`` lowers the score of the always-in
    columns alone, in the ball ``r_ref``: c(K) - min_S c(S) + Laplace.

    Parameters
    ----------
    design : dpsubset.design.build.Design
        The centred, clipped design (rows or sufficient statistics).
    s : int
    r_ref, lam : float
        The ball and the selection's ridge (public).
    eps : float
        This release's budget (> 0), spent from the centring stage's part of the ledger.
    rng : numpy.random.Generator
    ledger : dpsubset.privacy.budget.BudgetLedger
    search, time_limit, memory_limit
        As for the selection's search (:class:`dpsubset.search.exact.SubsetSearch`).

    Returns
    -------
    ReleasedFit

    Raises
    ------
    SearchTimeout
        The search did not certify its minimum: nothing is released.
    """
    request = SelectionRequest(design=design, s=int(s), eps=float(eps), lam=float(lam), r=float(r_ref),
                               loss=SquaredLoss.name, rng=rng, options={}, search=search, time_limit=time_limit,
                               memory_limit=memory_limit, ledger=ledger)
    scorer, _ = make_scorer(request)
    searcher = SubsetSearch(scorer, int(s), **request.search_options())
    if searcher.search == "enumeration":
        cands = searcher.top_r(1)
        best, certificates = float(cands.scores[0]), list(cands.certificates)
    else:
        _, best = searcher.best()
        best, certificates = float(best), list(searcher.certificates)
    require_closed(certificates)
    alone = float(scorer.score(np.empty((1, 0), dtype=np.intp))[0])  # the always-in columns only
    scale = explained_sensitivity(design, s, r_ref) / float(eps)
    released = float(laplace_release(alone - best, scale, rng))
    ledger.spend(Stage.CENTRING, "Laplace: how much of y the best support explains", float(eps), guarantee="pure")
    return ReleasedFit(explained=released, scale=scale)
