"""``dp_best_subset``: the steps of a release in order, each one call.

1. the settings (no data: :func:`dpsubset.settings.build_settings`, one frozen
:class:`~dpsubset.settings.Settings` per call); 2. plan the budget
(:class:`~dpsubset.privacy.budget.BudgetPlan`, no data); 3. build the design (formula,
bounds, clipping: :mod:`dpsubset.design`); 4. select (the optional screen, then the
method: :mod:`dpsubset.selection`, on the scores and the exact search); 5. refit
(objective perturbation on the released support: :mod:`dpsubset.refit`); 6. the privacy
report (a view of the budget ledger: :mod:`dpsubset.privacy.report`) and the results
(public values only: :mod:`dpsubset.results`). Every step after the first takes
``(settings, plan, ledger, rng)`` and what the steps before it made.
"""
from __future__ import annotations

import functools
import math
import sys
import warnings
from dataclasses import replace

import numpy as np
from tqdm.auto import tqdm

from .design.r_frames import maybe_from_r
from .design.dask import dask_design, is_dask_frame
from .defaults import (SUPPORT_RADIUS_CAP, default_lam, default_radius, refit_radius_weight, reference_radius,
                       fitted_sd, fitted_select_radius,
                       support_refit_radius)
from .privacy.sensitivity import largest_row_norm, support_row_bound
from .design import Bounds, as_bounds, build_design, capture_context
from .design.centring import CentreRequest, mapped_moments
from .selection.explained import release_explained
from .design.frames import as_frame
from ._validation import FLOAT_LIMIT, check_budget_representable, check_R, check_sizes
from .losses import CLASSIFICATION_LOSSES, DEFAULT_LOSS, encode_binary_response, make_loss
from .mechanisms import as_generator
from .privacy.budget import DEFAULT_REFIT_SHARE, BudgetLedger, BudgetPlan, Stage
from .privacy.leaks import PrivacyLeakWarning
from .privacy.report import build_report
from .refit import RefitSpec, check_refit_representable, refit_support
from .results.results import DPSubsetResults, NonPrivateDiagnostics, describe_solves
from .runtime.progress import call_progress
from .search.limits import explain_timeout
from .runtime.limits import Deadline, SearchTimeout, paused_garbage_collection
from .design.suffstats import gram_route
from .results.usefulness import BALL_BINDS_NOTE, BallBindsWarning, LowUtilityWarning, release_warnings
from .selection import DEFAULT_DELTA, DEFAULT_EPS0_SHARE, METHODS, SelectionRequest
from .selection.screening import screen_design
from .settings import Formula, StageSettings, build_settings, moved_arguments
from .inference import (coefficient_inference, confidence_of_selection, inference_parts, residual_part,
                        rows_of, split_rows, split_sizes)

__all__ = ["dp_best_subset", "DEFAULT_REFIT_SHARE", "DEFAULT_EPS0_SHARE", "DEFAULT_DELTA"]


@moved_arguments
def dp_best_subset(formula, data, *, eps, s, bounds=None, method="top_r", loss=DEFAULT_LOSS, keep=None,
                   refit=True, inference=False, centre=None, random_state=None, verbose=None,
                   budget=None, ball=None, search=None):
    """Differentially private best subset selection with a DP refit.

    The settings changed most are flat arguments; the others are grouped in option
    objects (``budget=``, ``ball=``, ``search=``, and ``method=``, ``loss=``, ``refit=``,
    ``inference=`` beyond their defaults), each documented in :mod:`dpsubset.settings`
    and docs/guide/settings.md. A keyword of an older version (``r=``, ``eps_select=``,
    ``time_limit=``, ...) is a TypeError that names its new place.

    Parameters
    ----------
    formula : str or dpsubset.Formula
        A formulaic formula such as ``"y ~ ."``. The intercept is always in the
        model (never selected) unless removed with ``0 +`` or ``- 1``. The names it
        uses that are not columns of ``data`` are looked up in the caller's scope, or in
        ``Formula(text, context=...)``'s mapping.
    data : pandas.DataFrame
        Or a mapping of columns, an object with ``to_pandas()`` (polars, pyarrow), an R
        data.frame from rpy2 (factors keep their levels), or a ``dask.dataframe.DataFrame``
        (least squares with top_r or mistakes; bounds and categorical levels must be
        public; see docs/guide/large-data.md).
    eps : float
        Total privacy budget of the call (every stage together).
    s : int
        Number of candidate columns to select.
    bounds : pair (b_x, b_y), dpsubset.Bounds, dict, or None
        Public bounds. ``(b_x, b_y)`` clips every column to [-b_x, b_x] and y to
        [-b_y, b_y] without rescaling (the paper's setting). Intervals (lo, hi) are
        clipped and mapped to [-1, 1]. Missing bounds are taken from the data with a
        PrivacyLeakWarning and the result's guarantee is void.
    method : str or dpsubset.Method
        The private selection (:data:`dpsubset.selection.base.METHODS`); a name, or
        ``Method(name, R=, gap_check=, screen=, **options)`` with its options:

        * ``"top_r"`` (default): exact top-R (Prastakos, Behdin and Mazumder 2025),
          pure eps-DP; every loss.
        * ``"mistakes"``: their mistakes mechanism, with a private gap check
          (``gap_check="ptr"``, (eps, delta)-DP) or the paper's conditional
          guarantee (``gap_check="assume"``); every loss.
        * ``"samp_agg"``: sample-and-aggregate Lasso (Kifer, Smith and Thakurta
          2012), block votes and a Laplace top-s; pure eps-DP.
        * ``"dp_sis"``: DP sure independence screening (Swope et al. 2024), pure eps-DP.
        * ``"exponential"``: the exponential mechanism over all C(p, s) supports,
          by enumeration; pure eps-DP; small C(p, s) only.
        * ``"lei_ic"``: an information criterion with report-noisy-min over a
          model list (Lei et al. 2018), pure eps-DP; chooses the size up to s.
        * ``"mcmc"``: Metropolis-Hastings over supports (Roy and Tewari 2023);
          (eps, delta)-DP only as far as the chain has mixed.
        * ``"peeling"``: DP iterative hard thresholding with private peeling (Cai,
          Wang and Zhang 2021); (eps, delta)-DP, pure at large eps.
        * ``"frank_wolfe"``: private Frank-Wolfe over the l1 ball (Talwar, Thakurta
          and Zhang 2015); pure eps-DP at the default steps, (eps, delta)-DP with many.

        All but ``"top_r"`` and ``"mistakes"`` are for ``loss="squared"`` only.
    loss : {"squared", "huber", "logistic", "hinge"} or a loss option
        The loss of the scores and of the refit (one definition for both;
        ``dpsubset/losses.py``). ``"squared"``: least squares. ``"huber"``
        (``Huber(h=)``): the pseudo-Huber loss, for regression with outliers.
        ``"logistic"`` (``Logistic(levels=)``) and ``"hinge"`` (``Hinge(h=, levels=)``,
        softplus-smoothed) are for two classes, mapped to -1/+1 by a public coding
        reported in ``result.response_levels``; the bound of the response is then 1 and
        any y bound given is ignored. The linear predictor's sign gives the class.
    keep : list of str, optional
        Further columns always in the model.
    refit : bool or dpsubset.Refit
        Fit DP coefficients on the released support by objective perturbation;
        ``Refit(split=True)`` refits on rows the selection did not see.
    inference : bool or dpsubset.Inference
        Release private uncertainty too (docs/guide/inference.md): standard errors,
        confidence intervals, t statistics and p-values of the coefficients
        (``res.bse``, ``res.conf_int()``, ``res.tvalues``, ``res.pvalues``; ``loss``
        "squared", "huber" or "logistic"), by a parametric bootstrap of the refit on
        privately released second moments (Ferrando, Wang and Sheldon 2022); and a
        selection confidence (``res.selection_confidence``; ``method`` "top_r" or
        "exponential"): private 95 % confidence bounds on the probability that the
        mechanism released the best-scoring support, with a verdict. Its budget is
        ``Budget(inference=)`` (default ``0.2 * eps``, off the top); the privacy
        report lists both stages with their eps.
    centre : None, bool or dict, optional
        The private centre and spread of the codebook's columns (docs/methods/centring.md).
        With an intercept, each column bounded by a codebook interval (and each dummy, and an
        interval-bounded response of a regression loss) is clipped and mapped around its
        privately released mean instead of its interval's midpoint, and its box is tightened
        to the released mean +- 3 released standard deviations where the values fill a small
        part of the interval (never for a column whose values sit at the two ends of its
        interval, such as a 0/1 indicator). The estimand is then the regression on the columns
        clipped to the released boxes, which the result lists (``res.centring``). It costs
        ``0.1 * eps``, taken off the top and listed in the privacy report as the stage
        "centring"; for least squares with the response centred, ``0.02 * eps`` more releases
        how much of the response the best support explains, which sizes the selection's ball
        (docs/methods/centring.md, "The best support's fit"). None (default): on when ``bounds``
        holds an interval, off for scalar bounds (the paper's setting) and without an
        intercept; True: on; False: off; a dict sets ``share`` (of eps, default 0.1),
        ``fit_share`` (of eps, default 0.02; 0: no fit released), ``tighten`` (default True),
        ``spreads`` (default 3) and ``min_interior`` (default 0.5; :mod:`dpsubset.design.centring`). If
        no column can be centred, nothing is spent. Giving both ``Budget(select=)`` and
        ``Budget(refit=)`` leaves the default off (the split is then the user's whole plan).
    random_state : None, int >= 0 or numpy.random.Generator
        None (the default, and what a release should use): fresh randomness from
        the operating system. An int (or a Generator you pass, seeded or not) makes
        the draws reproducible by whoever knows the seed or the generator's state,
        and then the release is private only while that stays secret: whoever knows
        it and the other rows can undo the noise. The privacy report of such a
        result says so (``result.privacy.seeded``). A negative int is an error.
    verbose : None (default), True or False
        None: when the call has run for 2 s and stderr is a terminal, a progress bar
        on stderr names the stage (design, selection, refit), the seconds spent and
        the seconds left before the time limit; a quick call, or output to a file or
        a notebook, shows nothing. True: that bar at once, the bars of the exact
        search's loops, and after the selection the search's solves (how many, by
        which route, whether each closed). False: nothing. NON-PRIVATE: how long the
        search takes and its solves depend on the data, so they are for the data
        owner's terminal only; the released result says only that every solve was
        certified (dpsubset/runtime/progress.py, docs/guide/time-limits.md).
    budget : dpsubset.Budget or dict, optional
        How eps (and delta) are shared: ``select``, ``refit``, ``inference``,
        ``gap_test``, ``delta``, ``refit_delta``. Default: half of what the centring and
        the inference leave to the selection, half to the refit.
    ball : dpsubset.Ball or dict, optional
        The radius and ridge of each stage: ``r``, ``lam``, ``r_select``, ``r_refit``,
        ``lam_select``, ``lam_refit``. Default: public defaults from the bounds, ``s``,
        the loss and each stage's ``n eps`` (docs/guide/defaults.md).
    search : str, dpsubset.Search or dict, optional
        The exact search: ``route`` (a string here is the route), ``time_limit``
        (default 600 s for the whole call), ``memory_limit``, ``solver``,
        ``solver_options``, ``diagnostics``. Past a limit nothing is released.

    Returns
    -------
    DPSubsetResults, or (DPSubsetResults, NonPrivateDiagnostics) with
    ``Search(diagnostics=True)``.

    Warns
    -----
    PrivacyLeakWarning
        Bounds or levels taken from the data, transforms that learn from the data.
    LowUtilityWarning
        Settings under which no data could make the release useful (the selection
        no better than chance, or the refit's noise larger than the response's
        range), judged from public quantities only (dpsubset/results/usefulness.py), with
        what would help.
    BallBindsWarning
        ``inference=True`` and the released coefficients lie on the sphere of the
        refit's ball: the truth may lie beyond it, and the intervals reach out on that
        side (not with ``Inference(truth_in_ball=True)``; docs/guide/inference.md, "When
        the ball binds").
    """
    # The formula's evaluation context, captured once here and passed down as a mapping:
    # the caller's scope, two frames up (moved_arguments' wrapper sits in between).
    if isinstance(formula, Formula):
        formula, context = formula.text, formula.context
    else:
        context = None
    context = capture_context(2) if context is None else context
    data = maybe_from_r(data)  # an R data.frame from rpy2 -> pandas (rpy2 stays optional)
    # Step 1: the settings, checked (no data)
    settings = build_settings(eps=eps, s=s, bounds=bounds, method=method, loss=loss, keep=keep, refit=refit,
                              inference=inference, centre=centre, random_state=random_state,
                              verbose=verbose, budget=budget, ball=ball, search=search,
                              on_dask=is_dask_frame(data))
    # (A with block adds no frame, so the warnings' stack levels stay as they are;
    # runtime/limits.py says why: 1-2 s of a wide call were the collector's passes.)
    with paused_garbage_collection():
        return _release(formula, data, settings, context)


# The stacklevel of a warning issued in a step, so that it points at the user's call: the
# frames in between are the step, _release, dp_best_subset and moved_arguments' wrapper.
_STEP_TO_USER = 5


def _release(formula, data, settings, context):
    """Steps 2-6 of one release, from its checked settings."""
    clock = Deadline(settings.time_limit)  # one deadline for the whole call
    # Step 2: plan the budget (no data); the method's options are checked against its part
    plan, settings = _plan_budget(settings, eps_centre=0.0 if settings.centre is None
                                  else _centre_eps(settings))
    rng = as_generator(settings.random_state)
    ledger = BudgetLedger(plan)
    bar = call_progress(settings.verbose, clock)  # verbose: None (auto), True, False (runtime/progress.py)

    # Step 3: build the design: formula, bounds, clipping (errors about data come from here)
    bar.set_description("design")
    design, response_levels = _design(settings, plan, ledger, rng, formula, data, context)
    # the centring kept a share for the best support's fit where it centred the response
    fit = _fit_planned(settings) and _response_centred(design.spec)
    if plan.eps_centre > 0 and not design.spec.centring:
        # nothing could be centred (no intercept, or no codebook column: public facts of the
        # formula and the codebook): nothing was spent, and the share goes back to the stages
        plan, settings = _plan_budget(settings, eps_centre=0.0)
        ledger.plan = plan
    settings = settings.with_stages(_check_design(settings, plan, design))
    bar.update()
    # split: disjoint random rows for the selection and the refit (drawn before any row is read)
    select_design, refit_design = _split_design(design, settings.split, rng)

    # Step 4: select (after the optional private screen), spending from the ledger
    rng_state = rng.bit_generator.state  # to say, on a timeout, whether any draw was made
    try:
        if fit:  # the selection's ball from how much of y the best support explains (released)
            bar.set_description("centring: the best support's fit")
            settings, design = _fitted_radius(settings, plan, ledger, rng, design, clock)
        sel, kept = _select(settings, plan, ledger, rng, select_design, clock, bar)
    except SearchTimeout as err:
        bar.close()
        st = settings.stages
        raise explain_timeout(err, time_limit=settings.time_limit, memory_limit=settings.memory_limit,
                              p=st.p, s=settings.s, method=settings.method.name, search=settings.search.route,
                              r=st.r, lam=st.lam, random_draws=rng.bit_generator.state != rng_state) from err
    except BaseException:  # Ctrl-C or an error in the search: the bar goes with the call
        bar.close()
        raise
    support_idx = [int(kept[j]) for j in sel.support]
    support = [design.spec.candidate_names[j] for j in support_idx]
    if settings.verbose and sel.certificates:
        # the solves depend on the data: on the data owner's terminal only, labelled
        tqdm.write(describe_solves(sel.certificates), file=sys.stderr)
    bar.update()

    # Step 5: refit on the released support; its public settings (one RefitSpec, the row
    # bound public once the support is) are the ones the intervals' bootstrap reruns
    used_cols = design.spec.forced_names + support
    params = coef_mapped = refit_ridge = refit_spec = None
    if settings.refit is not None:
        bar.set_description("refit")
        settings = _support_radius(settings, refit_design, used_cols, plan)
        st = settings.stages
        # pure: the exact-grid refit; Budget(refit_delta=...): the Gaussian one, in floating point
        refit_spec = RefitSpec(loss=settings.loss, eps=plan.eps_refit, r=st.r_refit, ridge=st.lam_refit,
                               row_bound=support_row_bound(design.x_bounds, support_idx, design.forced_bounds),
                               delta=settings.budget.refit_delta or 0.0, loss_options=dict(st.loss_options))
        params, coef_mapped, refit_ridge = _refit(refit_spec, ledger, rng, refit_design, support_idx, used_cols)
    # Step 5b: the inference stages (inference=True): selection confidence, intervals
    try:  # the call's deadline covers the inference stage too: a time-out there releases nothing
        conf, coef_inf = _inference(settings, plan, ledger, rng, sel, kept, refit_design, coef_mapped, clock,
                                    refit_spec)
    except BaseException:
        bar.close()
        raise
    bar.update()
    bar.close()

    # Step 6: the report (a view of the ledger) and the results (public values only)
    st = settings.stages
    report = build_report(ledger, sel, bounds_public=design.spec.bounds_public, leaks=design.spec.leaks,
                          seeded=settings.random_state is not None,
                          split=_split_sizes(select_design, refit_design), selection_confidence=conf,
                          stage_settings=_stage_report(st, refit_ridge))
    res = DPSubsetResults(
        support=support, params=params, forced=list(design.spec.forced_names),
        candidates=list(design.spec.candidate_names), method=settings.method.name, nobs=st.n, formula=formula,
        response=design.spec.response_name, privacy=report, loss=settings.loss, s=settings.s,
        eps_select=plan.eps_select, eps_refit=plan.eps_refit, r=st.r, lam=st.lam,
        r_refit=st.r_refit if settings.refit is not None else None,
        response_levels=response_levels,
        # the screened columns are the screen's private release
        screened=None if settings.screen is None else [design.spec.candidate_names[j] for j in kept],
        loss_params=_public_loss_params(st.loss_options, settings, design),
        _predictor=design.spec, _coef_mapped=coef_mapped, _used_columns=used_cols,
        inference=coef_inf, _selection_confidence=conf)
    if not settings.search.diagnostics:
        return res
    warnings.warn("Search(diagnostics=True) returns NON-PRIVATE values (scores of supports on your data); "
                  "do not publish them", PrivacyLeakWarning, stacklevel=_STEP_TO_USER - 1)
    return res, _diagnostics(sel)


def _plan_budget(settings, *, eps_centre):
    """Step 2: the budget plan from the settings (no data), and the settings with the
    method's options checked against the selection's part (the gap test's eps0 set aside)."""
    eps_moments, eps_confidence = (0.0, 0.0) if settings.inference is None else inference_parts(
        settings.eps, settings.budget.inference, loss=settings.loss, method=settings.method.name,
        refit=settings.refit is not None)
    plan = BudgetPlan.from_settings(settings.eps, refit=settings.refit is not None,
                                    eps_select=settings.budget.select, eps_refit=settings.budget.refit,
                                    screen_share=None if settings.screen is None else settings.screen.share,
                                    eps_moments=eps_moments, eps_confidence=eps_confidence,
                                    eps_residual=residual_part(eps_moments, settings.loss),
                                    eps_centre=eps_centre, split=settings.split)
    given = settings.method.selection_options()
    given.update({k: v for k, v in (("eps0", settings.budget.gap_test), ("delta", settings.budget.delta))
                  if v is not None})
    options = METHODS[settings.method.name].validate(given, s=settings.s, eps=plan.eps_select,
                                                     loss=settings.loss)
    return plan.with_gap_test(options.get("eps0")), replace(settings, options=options)


def _design(settings, plan, ledger, rng, formula, data, context):
    """Step 3: the design (formula, bounds, clipping, the optional centring) and the
    response's public coding (classification losses; None otherwise)."""
    bounds, response_levels = settings.bounds, None
    if settings.loss in CLASSIFICATION_LOSSES:
        # Two classes -> -1/+1 by a public level order; the bound of y is then 1.
        data, response_levels = encode_binary_response(formula, as_frame(data), settings.response_levels)
        given = as_bounds(bounds)
        bounds = (Bounds(y=1.0) if given is None
                  else Bounds(x=given.x, y=1.0, default=given.default))
    # Tall data, squared loss: the sufficient statistics instead of X (chosen on n and p only).
    # (a screen scores columns on the rows themselves: the matrix route then)
    # (and lam_refit: the Gram route's refit takes the mechanism's own ridge only)
    route = (False if settings.screen is not None or settings.split or settings.ball.lam_refit is not None
             else functools.partial(gram_route, loss=settings.loss, method=settings.method.name,
                                    search=settings.search.route))
    # build_design's warnings point at the user's call: one frame further than a step's
    if settings.on_dask:  # partitions mapped, clipped and reduced to X'X, X'y, y'y, n (design/dask.py)
        design = dask_design(formula, data, bounds, settings.keep, context=context, stacklevel=_STEP_TO_USER + 1)
    else:
        # (the best support's fit, released after the design, keeps its share of the stage)
        request = None if settings.centre is None else CentreRequest(
            settings.centre, plan.eps_centre, rng, ledger,
            fit_eps=_fit_eps(settings))
        design = build_design(formula, data, bounds, settings.keep, context=context, stacklevel=_STEP_TO_USER + 1,
                              gram=route, centre=request)
    return design, response_levels


def _check_design(settings, plan, design):
    """Step 3's checks: sizes, the defaults of r and lam, representable budgets, usefulness.

    Reads only the design's public numbers (n, p, bounds); warns (LowUtilityWarning)
    where no data could make the release useful.

    Returns
    -------
    dpsubset.settings.StageSettings
    """
    # One loss object for the scores and the refit: the same shape, the same h.
    loss_options = make_loss(settings.loss, b_y=design.b_y, huber_h=settings.huber_h,
                             hinge_h=settings.hinge_h).refit_options()
    p, n, s = design.X.shape[1], design.n, settings.s
    if s > p:
        raise ValueError(f"s = {s} is larger than the number of candidate columns ({p}); choose s <= {p}")
    if s == p:
        raise ValueError(f"s = {s} equals the number of candidate columns: there is nothing to select")
    if settings.screen is not None:
        settings.screen.k_for(p, s)  # a k that keeps every column is an error before any release
    # Defaults from public numbers only (bounds, s, the loss): dpsubset/defaults.py.
    # Defaults grow with each stage's public n eps (dpsubset/defaults.py): the selection's
    # radius and ridge from eps_select, the refit's radius from eps_refit, each with the
    # rows its stage sees (Refit(split=True): the parts' public sizes).
    # Each stage has its own default (stage=): for logistic and hinge the selection's ball
    # and ridge were chosen by measured recovery, the refit's by held-out accuracy. The
    # selection's r and lam set its Delta; the refit's r_refit and lam_refit its noise.
    n_select, n_refit = split_sizes(n) if settings.split else (n, n)
    ball, refit = settings.ball, settings.refit is not None
    r, r_refit, lam = ball.r_select, ball.r_refit, ball.lam_select
    if r is None:
        r = default_radius(design.x_bounds, design.b_y, s, design.forced_bounds, settings.loss,
                           n=n_select, eps=plan.eps_select, stage="select")
    if r_refit is None:
        r_refit = default_radius(design.x_bounds, design.b_y, s, design.forced_bounds, settings.loss,
                                 n=n_refit, eps=plan.eps_refit, stage="refit") if plan.eps_refit > 0 else r
    if lam is None:
        lam = default_lam(n_select, plan.eps_select, settings.loss, stage="select", x_bounds=design.x_bounds,
                          s=s, forced_bounds=design.forced_bounds)
    lam_refit = default_lam(n_refit, plan.eps_refit, settings.loss, stage="refit") \
        if ball.lam_refit is None else ball.lam_refit
    if lam_refit > FLOAT_LIMIT:
        raise ValueError(f"Ball.lam_refit = {lam_refit:.3g} would overflow the refit's sums; "
                         f"use lam_refit <= {FLOAT_LIMIT:g}")
    # public sizes and the floating-point range, before any search (dpsubset/_validation.py)
    check_sizes(n, p, s)
    if settings.method.name in ("top_r", "mistakes"):
        check_R(settings.options.get("R"), p, s)
    check_budget_representable(eps_select=plan.eps_select, selection_parts=[settings.options.get("eps0")])
    refit_delta = settings.budget.refit_delta
    check_refit_representable(
        eps_refit=plan.eps_refit, refit=refit, loss=settings.loss, dim=len(design.spec.forced_names) + s,
        row_bound=largest_row_norm(design.x_bounds, s, design.forced_bounds),
        b_y=design.b_y, r=r_refit, refit_delta=refit_delta or 0.0, loss_options=loss_options,
        bounds_public=design.spec.bounds_public)
    # settings under which no data could make the release useful (public inputs only)
    for msg in release_warnings(design, s=s, loss=settings.loss, loss_options=loss_options, r=r,
                                method=settings.method.name, eps_select=plan.eps_select,
                                eps_refit=plan.eps_refit, refit=refit, refit_delta=refit_delta,
                                r_refit=r_refit, n_select=n_select, n_refit=n_refit):
        warnings.warn(msg, LowUtilityWarning, stacklevel=_STEP_TO_USER)
    return StageSettings(n=n, p=p, r=r, lam=lam, loss_options=loss_options, r_refit=r_refit,
                         lam_refit=lam_refit)


def _centre_eps(settings):
    """The centring stage's eps: ``share`` of eps for the means and spreads, and ``fit_share`` on
    top where the best support's fit is planned (public settings only)."""
    return settings.centre.share * settings.eps + _fit_eps(settings)


def _fit_eps(settings):
    """The part of eps kept for the best support's fit (0 where none is planned)."""
    return settings.centre.fit_share * settings.eps if _fit_planned(settings) else 0.0


def _fit_planned(settings):
    """Whether the centring stage keeps a share for the best support's fit (public settings
    only): least squares, centring on with a fit share, the selection's radius not given, no
    screen (the fit's search would see every column) and no Dask frame."""
    return (settings.centre is not None and settings.centre.fit_share > 0 and settings.ball.r_select is None
            and make_loss(settings.loss).least_squares and settings.screen is None and not settings.on_dask)


def _response_centred(spec):
    """Whether the centring released the response's mean and spread (public: the record)."""
    return any(rec.name == spec.response_name for rec in spec.centring)


def _fitted_radius(settings, plan, ledger, rng, design, clock):
    """(settings, design) with the selection's radius from the released fit of the best support.

    The centring stage's ``fit_share`` of eps releases how much the best support lowers the
    score of the intercept alone, in a reference ball
    (:func:`dpsubset.selection.explained.release_explained`); the spread of its fitted values,
    at an upper confidence bound (:func:`dpsubset.defaults.fitted_sd`), sets the radius
    (:func:`dpsubset.defaults.fitted_select_radius`). The released spread joins the response's
    record (``res.centring``'s ``fitted_sd``), so anyone holding the release can recompute r."""
    spec, st = design.spec, settings.stages
    sds, levels = mapped_moments(spec.centring, spec.column_maps, [spec.response_name])
    y_sd, y_level = float(sds[0]), float(levels[0])
    r_ref = reference_radius(y_sd, y_level)
    # (a response released without spread: the default ball as the reference, and no rule)
    released = release_explained(
        design, settings.s, r_ref if math.isfinite(r_ref) else st.r, st.lam,
        _fit_eps(settings), rng, ledger, search=settings.search.route, time_limit=clock.left(),
        memory_limit=math.inf if settings.memory_limit is None else settings.memory_limit)
    sd_fit = fitted_sd(y_sd, released.explained, released.scale)
    n_select = split_sizes(design.n)[0] if settings.split else design.n
    r = fitted_select_radius(st.r, sd_fit, y_sd, y_level, n_select, plan.eps_select)
    half = spec.column_maps[spec.response_name][1]
    records = tuple(replace(rec, fitted_sd=sd_fit * half) if rec.name == spec.response_name else rec
                    for rec in spec.centring)
    design = replace(design, spec=replace(spec, centring=records))
    how = "from the released fit of the best support" if r != st.r else None  # (the report says where)
    return settings.with_stages(replace(st, r=r, r_from=how)), design


def _select(settings, plan, ledger, rng, design, clock, bar):
    """Step 4: the private screen (optional), then the method's selection on the kept columns.

    Returns
    -------
    sel : dpsubset.selection.base.Selection
    kept : ndarray of int
        The candidate columns the selection saw (all of them without a screen).
    """
    st = settings.stages
    search_design, kept = design, np.arange(st.p)
    if settings.screen is not None:
        bar.set_description("screening")
        search_design, kept = screen_design(design, settings.screen, settings.s, plan.eps_screen, rng, ledger)
    bar.set_description(f"selection ({settings.method.name})")
    request = SelectionRequest(
        design=search_design, s=settings.s, eps=plan.eps_select, lam=st.lam, r=st.r,
        loss=settings.loss, rng=rng, options=settings.options, search=settings.search.route,
        time_limit=clock.left(),
        memory_limit=math.inf if settings.memory_limit is None else settings.memory_limit,
        verbose=settings.verbose, loss_options=st.loss_options, solver=settings.solver,
        solver_options=settings.solver_options, ledger=ledger)
    sel = METHODS[settings.method.name].select(request)
    for stage in sel.stages:  # a method registered from outside that does its own accounting
        ledger.spend(stage["stage"], stage["mechanism"], stage["eps"], stage["delta"],
                     guarantee=stage.get("guarantee", sel.guarantee))
    return sel, kept


def _support_radius(settings, design, used_cols, plan):
    """The settings with the refit's default radius for the released support (least squares
    on a centred design; unchanged otherwise or where the user chose a radius).

    The default radius reads only the bounds, s and n eps; once the support is released, the
    centring's released spreads and means bound what least squares on it needs
    (:func:`dpsubset.defaults.support_refit_radius`). Where the refit's n eps is large its
    noise is small and the refit takes that radius if it is the larger
    (:func:`dpsubset.defaults.refit_radius_weight`; docs/methods/refit.md, "The refit's
    radius"). Every number read is public: the release keeps the record (``res.centring``)."""
    ball, st, spec = settings.ball, settings.stages, design.spec
    if ball.r_refit is not None or not make_loss(settings.loss).least_squares or not spec.centring:
        return settings
    weight = refit_radius_weight(design.n, plan.eps_refit)
    if weight <= 0:
        return settings
    sds, levels = mapped_moments(spec.centring, spec.column_maps, list(used_cols) + [spec.response_name])
    r_support = support_refit_radius(sds[-1], levels[-1], sds[:-1], levels[:-1])
    if not r_support > st.r_refit:  # NaN (no rule) or a smaller ball: the default stays
        return settings
    r_support = min(r_support, SUPPORT_RADIUS_CAP * st.r_refit)
    return settings.with_stages(replace(st, r_refit=st.r_refit + weight * (r_support - st.r_refit),
                                        r_refit_from="grown to the released support's spreads"))


def _refit(spec, ledger, rng, design, support_idx, used_cols):
    """Step 5: DP coefficients on the released support (objective perturbation).

    Returns
    -------
    params : pandas.Series
        In the user's units over the always-in columns and every candidate (0 off the support).
    coef_mapped : ndarray
        In the mapped units, over ``used_cols`` (for predictions).
    """
    # (a lam_refit call never takes the Gram route: see the route in _design)
    fit = refit_support(design, support_idx, spec, rng=rng)
    ledger.spend(Stage.REFIT, f"objective perturbation ({fit.mode})", fit.eps, fit.delta)
    coef_mapped = np.asarray(fit.coef, dtype=float)
    orig = design.spec.to_original_scale(coef_mapped, used_cols)
    params = orig.reindex(design.spec.forced_names + design.spec.candidate_names).fillna(0.0)
    # the ridge the refit used, max(lam_refit, 2 lambda / eps): public, for the report
    return params, coef_mapped, float(fit.regularization)


def _stage_report(stages, refit_ridge):
    """Each stage's radius and ridge for the privacy report (the refit's only if it ran)."""
    out = [dict(stage="selection", r=float(stages.r), lam=float(stages.lam),
                **({"r_from": stages.r_from} if stages.r_from else {}))]
    if refit_ridge is not None:
        out.append(dict(stage="refit", r=float(stages.r_refit), lam=refit_ridge,
                        **({"r_from": stages.r_refit_from} if stages.r_refit_from else {})))
    return out


def _split_design(design, split, rng):
    """(the selection's design, the refit's design): the same design without a split."""
    if not split:
        return design, design
    select_rows, refit_rows = split_rows(design.n, rng)
    return rows_of(design, select_rows), rows_of(design, refit_rows)


def _split_sizes(select_design, refit_design):
    """The public sizes of the two parts with ``Refit(split=True)`` (None without a split)."""
    return None if select_design is refit_design else (select_design.n, refit_design.n)


def _inference(settings, plan, ledger, rng, sel, kept, design, coef_mapped, clock, refit_spec):
    """Step 5b: the selection confidence and the coefficients' intervals, each where planned.

    Returns
    -------
    (SelectionConfidence or None, CoefficientInference or None)
    """
    conf = coef_inf = None
    st, truth_in_ball = settings.stages, settings.truth_in_ball
    support_idx = [int(kept[j]) for j in sel.support]
    used_cols = design.spec.forced_names + [design.spec.candidate_names[j] for j in support_idx]
    if plan.eps_confidence > 0:
        conf = confidence_of_selection(sel, eps=plan.eps_confidence, eps_mech=plan.eps_select,
                                       p=len(kept), s=settings.s, rng=rng, ledger=ledger,
                                       method=settings.method.name,
                                       released_names=[design.spec.candidate_names[kept[j]] for j in sel.support])
    if plan.eps_moments > 0:
        coef_inf = coefficient_inference(
            design, support_idx, used_cols, coef_mapped=coef_mapped, refit=refit_spec, eps=plan.eps_moments,
            rng=rng, ledger=ledger, mode="split" if settings.split else "conditional", truth_in_ball=truth_in_ball,
            deadline=clock, eps_residual=plan.eps_residual)
        # a fact of the release and the public radius: no data value
        if coef_inf.on_sphere and not truth_in_ball:
            warnings.warn(
                f"inference=True: {BALL_BINDS_NOTE} (r_refit = {st.r_refit:.3g}, mapped units). "
                f"For narrower intervals, choose Ball(r_refit=...) from what is known of the effects' size "
                f"before the data are seen, or give tighter codebook ranges or more rows or eps "
                f"(docs/guide/inference.md, 'When the ball binds')",
                BallBindsWarning, stacklevel=_STEP_TO_USER)
    return conf, coef_inf


def _public_loss_params(loss_options, settings, design):
    """The loss's parameters as the result shows them (public facts of the loss)."""
    out = dict(loss_options)
    if settings.huber_h is None and "huber_h" in out and design.spec.bounds_from_data:
        # the default threshold is 0.5 b_y, a statistic of the data when b_y was learned
        out["huber_h"] = None
    return out


def _diagnostics(sel):
    """The NON-PRIVATE values of ``diagnostics=True`` (labelled; never part of a release)."""
    return NonPrivateDiagnostics(
        best_support=sel.diagnostics.get("best_support"),
        candidate_supports=sel.diagnostics.get("candidate_supports", []),
        candidate_scores=sel.diagnostics.get("candidate_scores", np.empty(0)),
        certificates=sel.diagnostics.get("certificates", []),
        score_gap=sel.diagnostics.get("score_gap"),
        solves=[dict(c) for c in sel.certificates])
