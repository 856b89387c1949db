"""NON-PRIVATE best subset selection: the exact search of the package with no privacy.

:func:`best_subset_nonprivate` runs the same design (formula, bounds, clipping) and
the same exact, certified search as :func:`dpsubset.dp_best_subset`, and returns the
best support itself instead of a private draw. It is **not differentially
private**: use it on public or simulated data, to see what the private release
aims at (vignettes, benchmarks), or to check the search against other exact
solvers (the test suite compares it with R's ``leaps::regsubsets``). Every call
warns with a :class:`~dpsubset.privacy.leaks.PrivacyLeakWarning`.

With a tiny ridge ``lam`` and a radius ``r`` large enough not to bind, the score
of a support is its residual sum of squares / 2n (plus a negligible ridge term),
so the best support is the ordinary least-squares best subset of size ``s``,
with the intercept and ``keep=`` columns always in.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._validation import PARAMETER_RULES
from .design.r_frames import maybe_from_r
from .design import build_design, capture_context
from .privacy.leaks import PrivacyLeakWarning
from .scores.least_squares import LeastSquaresScorer
from .search.exact import SubsetSearch
from .runtime.limits import resolve_time_limit
from .settings import Formula, as_option, moved_arguments

__all__ = ["best_subset_nonprivate", "NonPrivateBestSubset", "NONPRIVATE_BALL"]

LABEL = "NON-PRIVATE: the exact best subset of the data; not covered by any privacy guarantee"


@dataclass(frozen=True)
class NonPrivateBestSubset:
    """Result of :func:`best_subset_nonprivate`. NON-PRIVATE.

    Attributes
    ----------
    support : list of str
        The best ``s`` candidate columns, in the order of the candidates.
    score : float
        Its score c(S) (ball-constrained ridge least squares, mapped units).
    coef : pandas.Series
        The minimiser of the score on the always-in columns and the support, in
        the user's units (for ``lam`` -> 0 and a radius that does not bind: the
        least-squares fit).
    forced, candidates : list of str
    s : int
    lam, r : float
    certificates : list
        The optimality certificates of the search (all closed).
    label : str
    response : str
        The dependent variable (a table's header).
    nobs : int or None
        Rows of the fit (a table's N).
    """

    support: list
    score: float
    coef: pd.Series
    forced: list
    candidates: list
    s: int
    lam: float
    r: float
    certificates: list = field(default_factory=list, repr=False)
    label: str = LABEL
    response: str = ""
    nobs: int | None = None


#: The ball of the non-private search: a tiny ridge and a radius that does not bind.
NONPRIVATE_BALL = dict(r=1e6, lam=1e-8)


@moved_arguments
def best_subset_nonprivate(formula, data, s, *, bounds=None, keep=None, ball=None, search=None):
    """The exact best subset of size ``s`` -- NOT differentially private.

    Parameters
    ----------
    formula : str or dpsubset.Formula
        As for :func:`dpsubset.dp_best_subset`, e.g. ``"mpg ~ ."``.
    data : pandas.DataFrame, mapping of columns, or R data.frame (rpy2)
    s : int
        Support size, 1 <= s <= number of candidate columns.
    bounds : optional
        As for :func:`dpsubset.dp_best_subset`. ``None`` (default) takes each
        column's bound from the data (its largest absolute value), which clips
        nothing: the search then sees the data as they are. Interval bounds
        rescale columns, which changes the ridge term (slightly, for a tiny lam).
    keep : str or list of str, optional
        Columns always in the model.
    ball : dpsubset.Ball or dict, optional
        Its ``r``, the radius of the coefficient ball (default 1e6, so that it does not
        bind), and ``lam``, the ridge of the score (> 0; default 1e-8, for plain least
        squares); the other fields are the private release's stages and are refused.
    search : str, dpsubset.Search or dict, optional
        The route (``"auto"``, ``"enumeration"``, ``"branch_and_bound"``,
        ``"outer_approximation"``, ``"pyomo"``, ``"scip"``), ``time_limit`` (seconds for
        the whole search, default 600 s; ``math.inf``: no limit; past it,
        SearchTimeout), ``solver`` and ``solver_options``, as for
        :func:`dpsubset.dp_best_subset`.

    Returns
    -------
    NonPrivateBestSubset

    Warns
    -----
    PrivacyLeakWarning
        Always: the result is a function of the data with no privacy protection.
    """
    # the formula's names: the caller's scope (two frames up, past moved_arguments' wrapper)
    formula, context = (formula.text, formula.context) if isinstance(formula, Formula) else (formula, None)
    context = capture_context(2) if context is None else context
    s = PARAMETER_RULES["s"].check("s", s)  # the same rule as dp_best_subset's
    ball, search = as_option("ball", ball), as_option("search", search)
    if any(getattr(ball, f) is not None for f in ("r_select", "r_refit", "lam_select", "lam_refit")):
        raise ValueError("best_subset_nonprivate: ball takes r and lam only (there are no stages)")
    lam = NONPRIVATE_BALL["lam"] if ball.lam is None else ball.lam
    r = NONPRIVATE_BALL["r"] if ball.r is None else ball.r
    if search.diagnostics:
        raise ValueError("best_subset_nonprivate: Search(diagnostics=True) is for dp_best_subset (this "
                         "result is non-private as a whole)")
    time_limit = resolve_time_limit(search.time_limit)
    data = maybe_from_r(data)
    with warnings.catch_warnings():
        # Bounds from the data are the point here (no clipping); the one warning
        # that matters is issued below.
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        design = build_design(formula, data, bounds, keep, context=context, stacklevel=3)
    p = design.X.shape[1]
    if s > p:
        raise ValueError(f"s = {s} is larger than the number of candidate columns ({p})")
    scorer = LeastSquaresScorer(design.X, design.y, lam, r, design.forced)
    searcher = SubsetSearch(scorer, int(s), search=search.route, time_limit=time_limit,
                            solver=search.solver,
                            solver_options=None if search.solver_options is None else dict(search.solver_options))
    if searcher.search == "enumeration":
        cands = searcher.top_r(1)
        S, value, certs = cands.supports[0], float(cands.scores[0]), list(cands.certificates)
    else:
        S, value = searcher.best()
        value, certs = float(value), list(searcher.certificates)
    S = np.sort(np.asarray(S, dtype=np.intp))
    _, beta = scorer.fit(S[None, :])
    support = [design.spec.candidate_names[j] for j in S]
    coef = design.spec.to_original_scale(beta[0], design.spec.forced_names + support)
    warnings.warn("best_subset_nonprivate() is NOT differentially private: its support and coefficients are "
                  "the exact best subset of the data", PrivacyLeakWarning, stacklevel=2)
    return NonPrivateBestSubset(support=support, score=value, coef=coef, forced=list(design.spec.forced_names),
                                candidates=list(design.spec.candidate_names), s=int(s), lam=float(lam), r=float(r),
                                certificates=certs, response=str(design.spec.response_name),
                                nobs=int(design.X.shape[0]))
