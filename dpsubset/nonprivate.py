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
from .interfaces.r_frames import maybe_from_r
from .design import build_design, capture_context
from .privacy.leaks import PrivacyLeakWarning
from .scores.least_squares import LeastSquaresScorer
from .search.exact import SubsetSearch
from .search.limits import resolve_time_limit

__all__ = ["best_subset_nonprivate", "NonPrivateBestSubset"]

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


def best_subset_nonprivate(formula, data, s, *, bounds=None, lam=1e-8, r=1e6, keep=None, search="auto",
                           time_limit=None, solver=None, solver_options=None):
    """The exact best subset of size ``s`` -- NOT differentially private.

    Parameters
    ----------
    formula : str
        As for :func:`dpsubset.dp_best_subset`, e.g. ``"mpg ~ ."``.
    data : pandas.DataFrame, mapping of columns, or R data.frame (rpy2)
    s : int
        Support size, 1 <= s <= number of candidate columns.
    bounds : optional
        As for :func:`dpsubset.dp_best_subset`. ``None`` (default) takes each
        column's bound from the data (its largest absolute value), which clips
        nothing: the search then sees the data as they are. Interval bounds
        rescale columns, which changes the ridge term (slightly, for a tiny lam).
    lam : float
        Ridge parameter of the score (> 0); tiny by default, for plain least squares.
    r : float
        Radius of the coefficient ball; large by default so that it does not bind.
    keep : str or list of str, optional
        Columns always in the model.
    search : {"auto", "enumeration", "branch_and_bound", "outer_approximation", "pyomo", "scip"}
    time_limit : float, optional
        Seconds for the whole search (default ``None``: 600 s; ``math.inf``: no
        limit); past it, SearchTimeout.
    solver, solver_options : optional
        With ``search="pyomo"`` (or ``"scip"``, options only): the Pyomo solver name
        and its options, as for :func:`dpsubset.dp_best_subset`.

    Returns
    -------
    NonPrivateBestSubset

    Warns
    -----
    PrivacyLeakWarning
        Always: the result is a function of the data with no privacy protection.
    """
    context = capture_context(1)  # the formula's names: the caller's scope, captured once here
    s = PARAMETER_RULES["s"].check("s", s)  # the same rule as dp_best_subset's
    time_limit = resolve_time_limit(time_limit)
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
    searcher = SubsetSearch(scorer, int(s), search=search, time_limit=time_limit,
                            solver=solver, solver_options=solver_options)
    if searcher.search == "enumeration":
        cands = searcher.top_r(1)
        S, value, certs = cands.supports[0], float(cands.scores[0]), list(cands.certificates)
    else:
        S, value = searcher.best()
        value, certs = float(value), list(searcher.certificates)
    S = np.sort(np.asarray(S, dtype=np.intp))
    _, beta = scorer.fit(S[None, :])
    support = [design.candidate_names[j] for j in S]
    coef = design.to_original_scale(beta[0], design.forced_names + support)
    warnings.warn("best_subset_nonprivate() is NOT differentially private: its support and coefficients are "
                  "the exact best subset of the data", PrivacyLeakWarning, stacklevel=2)
    return NonPrivateBestSubset(support=support, score=value, coef=coef, forced=list(design.forced_names),
                                candidates=list(design.candidate_names), s=int(s), lam=float(lam), r=float(r),
                                certificates=certs, response=str(design.response_name),
                                nobs=int(design.X.shape[0]))
