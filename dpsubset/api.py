"""``dp_best_subset``: validate, build the design, search exactly, release privately, refit.

The stages and their modules: design (formula, bounds, clipping) -> scores -> exact
search (certified candidate sets) -> mechanism (one private release) -> refit
(objective perturbation on the released support) -> results (private values only).
"""
from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import replace

import numpy as np
from tqdm.auto import tqdm

from .design import build_design
from .mechanisms import (as_generator, sample_gap_checked, sample_mistakes, sample_top_r)
from .privacy import GUARANTEES, PrivacyLeakWarning
from .refit import objective_perturbation
from .results import DPSubsetResults, NonPrivateDiagnostics, PrivacyReport
from .scores import LeastSquaresScorer, sensitivity
from .search.exact import SubsetSearch, default_R
from .search.outer_approximation import SearchTimeout

__all__ = ["dp_best_subset", "DEFAULT_REFIT_SHARE", "DEFAULT_EPS0_SHARE", "DEFAULT_DELTA"]

METHODS = ("top_r", "mistakes")
LOSSES = ("squared",)
#: Share of the total eps given to the refit when refit=True and no split is given.
DEFAULT_REFIT_SHARE = 0.5
#: Share of the selection budget spent on the gap test of gap_check="ptr".
DEFAULT_EPS0_SHARE = 0.25
#: Default delta of the gap-checked mechanism.
DEFAULT_DELTA = 1e-6
#: Default ridge lam as a multiple of n (lam / n is the per-coefficient ridge weight
#: of the mean loss). The paper's experiments use lam = 120 at n = 1000 to 8000.
DEFAULT_LAM_PER_ROW = 0.1
NEIGHBOURS = "replace one row (n fixed and public)"


def _positive(name, value, *, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def dp_best_subset(formula, data, *, eps, s, method="top_r", bounds=None, r=1.0, lam=None,
                   R=None, gap_check="ptr", eps0=None, delta=None, keep=None,
                   loss="squared", refit=True, eps_select=None, eps_refit=None,
                   search="auto", time_limit=None, random_state=None, diagnostics=False,
                   verbose=False):
    """Differentially private best subset selection with a DP refit.

    Parameters
    ----------
    formula : str
        A formulaic formula such as ``"y ~ ."``. The intercept is always in the
        model (never selected) unless removed with ``0 +`` or ``- 1``.
    data : pandas.DataFrame
    eps : float
        Total privacy budget of the call (selection + refit).
    s : int
        Number of candidate columns to select.
    method : {"top_r", "mistakes"}
        ``"top_r"`` (default): exact top-R, pure eps-DP. ``"mistakes"``: the
        mistakes mechanism; see ``gap_check``.
    bounds : pair (b_x, b_y), dpsubset.Bounds, dict, or None
        Public bounds. ``(b_x, b_y)`` clips every column to [-b_x, b_x] and y to
        [-b_y, b_y] without rescaling (the paper's setting). Intervals (lo, hi) are
        clipped and mapped to [-1, 1]. Missing bounds are taken from the data with a
        PrivacyLeakWarning and the result's guarantee is void.
    r : float
        Radius of the coefficient ball (mapped units) for the scores and the refit.
    lam : float, optional
        Ridge parameter of the scores (> 0); default ``0.1 * n``.
    R : int, optional
        Length of the top-R list, fixed in advance; default ``2 + (p - s) s``.
    gap_check : {"ptr", "assume"}
        For ``method="mistakes"``: ``"ptr"`` runs a private test of the score gap
        and falls back to top-R, giving (eps0 + eps_mech, delta)-DP unconditionally;
        ``"assume"`` is the paper's conditional guarantee (eps-DP only where the
        best support beats the second by more than 2 Delta, not checked).
    eps0 : float, optional
        Budget of the gap test; default a quarter of the selection budget.
    delta : float, optional
        delta of the gap test; default 1e-6.
    keep : list of str, optional
        Further columns always in the model.
    loss : {"squared"}
    refit : bool
        Fit DP coefficients on the released support by objective perturbation.
    eps_select, eps_refit : float, optional
        Manual budget split; by default half of ``eps`` goes to each stage.
    search : {"auto", "enumeration", "outer_approximation"}
    time_limit : float, optional
        Seconds allowed for each exact solve; if reached, nothing is released
        (SearchTimeout).
    random_state : None, int or numpy.random.Generator
        The same int gives the same release.
    diagnostics : bool
        Also return a :class:`NonPrivateDiagnostics` (non-private, with a warning).
    verbose : bool
        Show progress.

    Returns
    -------
    DPSubsetResults, or (DPSubsetResults, NonPrivateDiagnostics) with diagnostics=True.
    """
    # ---- arguments that need no data: checked before anything is built
    eps = _positive("eps", eps)
    if isinstance(s, bool) or not isinstance(s, numbers.Integral) or s < 1:
        raise ValueError(f"s must be an integer >= 1, got {s!r}")
    s = int(s)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    if gap_check not in ("ptr", "assume"):
        raise ValueError(f"gap_check must be 'ptr' or 'assume', got {gap_check!r}")
    r = _positive("r", r)
    lam = _positive("lam", lam, allow_none=True)
    time_limit = _positive("time_limit", time_limit, allow_none=True)
    if R is not None and (isinstance(R, bool) or not isinstance(R, numbers.Integral) or R < 2):
        raise ValueError(f"R must be an integer >= 2 (fixed in advance, not from the data), got {R!r}")
    if delta is not None:
        delta = _positive("delta", delta)
        if delta >= 0.5:
            raise ValueError(f"delta must be < 0.5 (and much smaller than 1/n), got {delta}")
    if not isinstance(refit, bool):
        raise TypeError("refit must be True or False")
    eps_select, eps_refit = _split_budget(eps, refit, eps_select, eps_refit)
    use_ptr = method == "mistakes" and gap_check == "ptr"
    if use_ptr:
        eps0 = DEFAULT_EPS0_SHARE * eps_select if eps0 is None else _positive("eps0", eps0)
        if eps0 >= eps_select:
            raise ValueError(f"eps0 ({eps0}) must be smaller than the selection budget ({eps_select})")
        delta = DEFAULT_DELTA if delta is None else delta
        eps_mech = eps_select - eps0
    else:
        if eps0 is not None:
            raise ValueError("eps0 is only used with method='mistakes', gap_check='ptr'")
        eps_mech = eps_select
    rng = as_generator(random_state)

    bar = tqdm(total=4, disable=not verbose, desc="dp_best_subset")
    # ---- design: formula, bounds, clipping (errors about data come from here)
    bar.set_description("design")
    design = build_design(formula, data, bounds, keep, stacklevel=3)
    p, n = design.X.shape[1], design.n
    if s > p:
        raise ValueError(f"s = {s} is larger than the number of candidate columns ({p}); choose s <= {p}")
    if s == p:
        raise ValueError(f"s = {s} equals the number of candidate columns: there is nothing to select")
    lam = DEFAULT_LAM_PER_ROW * n if lam is None else lam
    R_used = default_R(p, s) if R is None else int(R)
    Delta = sensitivity(design.x_bounds, design.b_y, r, s, design.forced_bounds, n)
    bar.update()

    # ---- exact search and the private release
    bar.set_description("exact search")
    scorer = LeastSquaresScorer(design.X, design.y, lam, r, design.forced)
    searcher = SubsetSearch(scorer, s, search=search, time_limit=time_limit)
    passed = None
    used = {}

    def top_r_cands():
        used["top_r"] = searcher.top_r(R_used)
        return used["top_r"]

    if method == "top_r":
        cands = top_r_cands()
        _require_closed(cands.certificates)
        bar.update(); bar.set_description("release")
        support_idx = sample_top_r(cands, eps_mech, Delta, rng)
    else:
        mc = searcher.mistake_classes()
        used["mistakes"] = mc
        _require_closed(mc.certificates)
        bar.update(); bar.set_description("release")
        if use_ptr:
            support_idx, passed = sample_gap_checked(mc, top_r_cands, eps_mech, eps0, delta, Delta, rng)
            if not passed:
                _require_closed(used["top_r"].certificates)
        else:
            support_idx = sample_mistakes(mc, eps_mech, Delta, rng)
    bar.update()
    lazy = [dict(problem=f"mistake class {k}: certified bracket decided the draw",
                 method="outer_approximation bound", closed=True)
            for k in (used["mistakes"].open_classes if "mistakes" in used else [])]
    support = [design.candidate_names[j] for j in support_idx]

    # ---- refit on the released support
    params = coef_mapped = None
    used_cols = design.forced_names + support
    stages = []
    if use_ptr:
        stages.append(dict(stage="selection: gap test", mechanism="Laplace test of the score gap",
                           eps=eps0, delta=delta))
        stages.append(dict(stage="selection", mechanism="mistakes if the test passed, else top-R",
                           eps=eps_mech, delta=0.0))
    else:
        stages.append(dict(stage="selection", mechanism=method.replace("_", "-"), eps=eps_mech, delta=0.0))
    if refit:
        bar.set_description("refit")
        A = np.hstack([design.forced, design.X[:, support_idx]])
        row_bound = math.sqrt(float(np.sum(design.forced_bounds ** 2))
                              + float(np.sum(design.x_bounds[support_idx] ** 2)))
        fit = objective_perturbation(A, design.y, loss=loss, eps=eps_refit, row_bound=row_bound,
                                     b_y=design.b_y, r=r, rng=rng)
        coef_mapped = np.asarray(fit.coef, dtype=float)
        orig = design.to_original_scale(coef_mapped, used_cols)
        all_names = design.forced_names + design.candidate_names
        params = orig.reindex(all_names).fillna(0.0)
        stages.append(dict(stage="refit", mechanism=f"objective perturbation ({fit.mode})",
                           eps=fit.eps, delta=fit.delta))
    bar.update()
    bar.close()

    certs = []
    for c in used.values():
        for cert in c.certificates:
            certs.append(dict(problem=cert.problem, method=cert.method, closed=cert.closed))
    certs += lazy
    report = _report(stages, Delta, design, method, gap_check, passed, certs)
    predictor = replace(design, X=np.empty((0, p)), y=np.empty(0),
                        forced=np.empty((0, design.forced.shape[1])))
    res = DPSubsetResults(support=support, params=params, forced=list(design.forced_names),
                          candidates=list(design.candidate_names), method=method, nobs=n,
                          formula=formula, response=design.response_name, privacy=report,
                          _predictor=predictor, _coef_mapped=coef_mapped, _used_columns=used_cols)
    if not diagnostics:
        return res
    warnings.warn("diagnostics=True returns NON-PRIVATE values (scores of supports on your data); "
                  "do not publish them", PrivacyLeakWarning, stacklevel=2)
    key = "top_r" if "top_r" in used else "mistakes"
    c = used[key]
    names = lambda S: [design.candidate_names[j] for j in S]  # noqa: E731
    diag = NonPrivateDiagnostics(
        best_support=names(c.supports[0]), candidate_supports=[names(S) for S in c.supports],
        candidate_scores=np.asarray(c.scores).copy(),
        certificates=[cert for v in used.values() for cert in v.certificates],
        score_gap=used["mistakes"].gap if "mistakes" in used else None)
    return res, diag


def _split_budget(eps, refit, eps_select, eps_refit):
    """Fix the selection / refit split before any data are touched."""
    eps_select = _positive("eps_select", eps_select, allow_none=True)
    eps_refit = _positive("eps_refit", eps_refit, allow_none=True)
    if not refit:
        if eps_refit is not None:
            raise ValueError("eps_refit was given but refit=False")
        if eps_select is not None and eps_select > eps * (1 + 1e-12):
            raise ValueError(f"eps_select ({eps_select}) exceeds eps ({eps})")
        return (eps if eps_select is None else eps_select), 0.0
    if eps_select is None and eps_refit is None:
        eps_refit = DEFAULT_REFIT_SHARE * eps
        eps_select = eps - eps_refit
    elif eps_select is None:
        eps_select = eps - eps_refit
    elif eps_refit is None:
        eps_refit = eps - eps_select
    if eps_select <= 0 or eps_refit <= 0 or eps_select + eps_refit > eps * (1 + 1e-12):
        raise ValueError(f"eps_select + eps_refit must be positive parts of eps = {eps}; "
                         f"got {eps_select} + {eps_refit}")
    return eps_select, eps_refit


def _require_closed(certificates):
    open_ = [c for c in certificates if not c.closed]
    if open_:
        c = open_[0]
        raise SearchTimeout(f"exact search did not certify '{c.problem}' (relative gap "
                            f"{c.relative_gap:.2e}); nothing was released")


def _report(stages, Delta, design, method, gap_check, passed, certs):
    eps_total = sum(st["eps"] for st in stages)
    delta_total = sum(st["delta"] for st in stages)
    if not design.bounds_public or design.leaks:
        kind = "void"
        statement = ("No differential privacy guarantee: " + "; ".join(design.leaks)
                     + ". Give public bounds (and explicit levels) to fix this.")
    elif method == "mistakes" and gap_check == "assume":
        kind = "conditional"
        statement = (f"eps = {eps_total:.4g}-DP only if the best support's score beats the "
                     f"second best by more than 2 Delta on these data (Theorem 2 of Prastakos et "
                     f"al. 2025); this condition was NOT checked privately.")
    elif delta_total > 0:
        kind = "approximate"
        statement = f"({eps_total:.4g}, {delta_total:.3g})-differential privacy for the whole output."
    else:
        kind = "pure"
        statement = f"{eps_total:.4g}-differential privacy (pure) for the whole output."
    statement += " Neighbouring datasets differ by replacing one row."
    assert kind in GUARANTEES
    return PrivacyReport(kind, statement, eps_total, delta_total, tuple(stages), NEIGHBOURS,
                         Delta, design.bounds_public, tuple(design.leaks), tuple(certs), passed)
