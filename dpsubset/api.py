"""``dp_best_subset``: the steps of a release in order, each one call.

1. check the settings (no data: :mod:`dpsubset._validation`); 2. plan the budget
(:class:`~dpsubset.privacy.budget.BudgetPlan`, no data); 3. build the design (formula,
bounds, clipping: :mod:`dpsubset.design`); 4. select (the optional screen, then the
method: :mod:`dpsubset.selection`, on the scores and the exact search); 5. refit
(objective perturbation on the released support: :mod:`dpsubset.refit`); 6. the privacy
report (a view of the budget ledger: :mod:`dpsubset.privacy.report`) and the results
(public values only: :mod:`dpsubset.results`).
"""
from __future__ import annotations

import functools
import math
import sys
import warnings
from dataclasses import dataclass, replace

import numpy as np
from tqdm.auto import tqdm

from .interfaces.r_frames import maybe_from_r
from .design.dask import check_dask_request, dask_design, is_dask_frame
from .defaults import default_lam, default_radius, largest_row_norm
from .design import Bounds, as_bounds, build_design, capture_context
from .design.centring import CentreRequest, check_centre
from .design.frames import as_frame
from ._validation import (FLOAT_LIMIT, PARAMETER_RULES, check_budget_representable, check_eps_ceiling, check_R,
                          check_sizes, check_stage_settings, validate_params)
from .losses import CLASSIFICATION_LOSSES, check_response_levels, encode_binary_response, make_loss
from .mechanisms import as_generator
from .privacy.budget import DEFAULT_REFIT_SHARE, BudgetLedger, BudgetPlan
from .privacy.leaks import PrivacyLeakWarning
from .privacy.report import build_report
from .refit import check_refit_representable, objective_perturbation, objective_perturbation_exact
from .results.results import DPSubsetResults, NonPrivateDiagnostics, describe_solves
from .search.exact import check_search
from .search.progress import call_progress
from .search.limits import (Deadline, SearchTimeout, explain_timeout, resolve_memory_limit,
                            resolve_time_limit)
from .design.suffstats import gram_route, refit_from_gram
from .results.usefulness import BALL_BINDS_NOTE, BallBindsWarning, LowUtilityWarning, release_warnings
from .selection import DEFAULT_DELTA, DEFAULT_EPS0_SHARE, METHODS, SelectionRequest
from .selection.screening import check_screen, screen_design
from .inference import (coefficient_inference, confidence_of_selection, inference_parts, rows_of,
                        split_rows, split_sizes)

__all__ = ["dp_best_subset", "DEFAULT_REFIT_SHARE", "DEFAULT_EPS0_SHARE", "DEFAULT_DELTA"]


def dp_best_subset(formula, data, *, eps, s, method="top_r", bounds=None, centre=None, r=None, lam=None,
                   r_select=None, r_refit=None, lam_select=None, lam_refit=None,
                   R=None, gap_check="ptr", eps0=None, delta=None, keep=None,
                   loss="squared", huber_h=None, hinge_h=None, response_levels=None, refit=True,
                   eps_select=None, eps_refit=None, refit_delta=None,
                   inference=False, eps_inference=None, split=False, truth_in_ball=False,
                   search="auto", time_limit=None, memory_limit=None, random_state=None,
                   diagnostics=False,
                   verbose=None, method_options=None, solver=None, solver_options=None,
                   screen=None, context=None):
    """Differentially private best subset selection with a DP refit.

    Parameters
    ----------
    formula : str
        A formulaic formula such as ``"y ~ ."``. The intercept is always in the
        model (never selected) unless removed with ``0 +`` or ``- 1``.
    data : pandas.DataFrame
        Or a mapping of columns, an object with ``to_pandas()`` (polars, pyarrow), an R
        data.frame from rpy2 (factors keep their levels), or a ``dask.dataframe.DataFrame``
        (least squares with top_r or mistakes; bounds and categorical levels must be
        public; see docs/guide/large-data.md).
    eps : float
        Total privacy budget of the call (selection + refit).
    s : int
        Number of candidate columns to select.
    method : {"top_r", "mistakes", "samp_agg", "dp_sis", "exponential", "lei_ic", "mcmc", "peeling", "frank_wolfe"}
        The private selection (:data:`dpsubset.selection.base.METHODS`; their options go
        in ``method_options``):

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
    bounds : pair (b_x, b_y), dpsubset.Bounds, dict, or None
        Public bounds. ``(b_x, b_y)`` clips every column to [-b_x, b_x] and y to
        [-b_y, b_y] without rescaling (the paper's setting). Intervals (lo, hi) are
        clipped and mapped to [-1, 1]. Missing bounds are taken from the data with a
        PrivacyLeakWarning and the result's guarantee is void.
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
        "centring". None (default): on when ``bounds`` holds an interval, off for scalar
        bounds (the paper's setting) and without an intercept; True: on; False: off; a dict
        sets ``share`` (of eps, default 0.1), ``tighten`` (default True), ``spreads``
        (default 3) and ``min_interior`` (default 0.5; :mod:`dpsubset.design.centring`). If
        no column can be centred, nothing is spent. Giving both ``eps_select`` and
        ``eps_refit`` leaves the default off (the split is then the user's whole plan).
    r : float, optional
        Radius of the coefficient ball (mapped units) for the scores and the refit
        (both stages; ``r_select=`` and ``r_refit=`` set one each).
        Default: the radius at which the largest prediction the ball allows equals
        the response bound, ``r = b_y / sqrt(B_s)``, where ``B_s`` is the sum of the
        ``s`` largest squared column bounds plus the squared bounds of the always-in
        columns (1 for the intercept), grown with each stage's n eps above 20,000; for
        the classification losses the largest linear predictor (a log-odds or margin)
        is 2 in the selection (``r = 2 / sqrt(B_s)``, chosen by measured recovery) and
        6 in the refit (``r_refit = 6 / sqrt(B_s)``, chosen by held-out accuracy;
        docs/guide/defaults.md). So
        ``r = b_y / (b_x sqrt(s))`` for scalar bounds without an intercept, and
        ``1 / sqrt(s + 1)`` when everything is mapped to [-1, 1] with an intercept.
        It reads only public bounds and ``s``, and it makes the score sensitivity
        ``2 b_y^2 / n`` for least squares. A larger ``r`` raises the sensitivity
        quadratically and buys fit only when the bounds are loose against the
        data's spread (docs/guide/choosing-settings.md).
    lam : float, optional
        Ridge parameter of the selection's scores (> 0): the penalty is
        ``(lam / 2n) ||beta||^2``. Default 1 (one pseudo-row), less above n eps = 10,000:
        small, so that it keeps the scores strictly convex without shrinking the score
        gaps between supports (a ridge that grows with ``n`` eats them;
        docs/guide/choosing-settings.md); for logistic and hinge
        ``max(1, 0.01 n, 5 B_s ln C(p, s) / (2 eps))``, the largest ridge measured
        recovery allows, which keeps the search fast (docs/guide/defaults.md). The
        refit's ridge is ``lam_refit``.
    r_select, r_refit : float, optional
        The radius of one stage, instead of ``r``: ``r_select`` is the ball of the
        selection's scores and sets their sensitivity Delta; ``r_refit`` is the refit's
        ball and scales its noise. None: that stage's default (see ``r``). Giving ``r``
        with either is an error.
    lam_select : float, optional
        The selection's ridge, the same as ``lam`` (giving both is an error).
    lam_refit : float, optional
        A ridge floor for the refit (pseudo-rows of its sum-form objective): it uses
        ``max(lam_refit, 2 lambda / eps_obj)``, the second term being the objective
        perturbation's own (Kifer, Smith and Thakurta 2012). None (default): that
        minimum. The ridge used is ``res.lam_refit``. Not with ``inference=True``.
    R : int, optional
        Length of the top-R list, fixed in advance; default ``2 + (p - s) s``,
        capped at C(p, s) (then top-R is the exponential mechanism over all
        supports). A given R above C(p, s) is an error.
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
    loss : {"squared", "huber", "logistic", "hinge"}
        The loss of the scores and of the refit (one definition for both;
        ``dpsubset/losses.py``). ``"squared"``: least squares. ``"huber"``: the
        pseudo-Huber loss with threshold ``huber_h``, for regression with outliers.
        ``"logistic"`` and ``"hinge"`` (softplus-smoothed, width ``hinge_h``) are
        for two classes, mapped to -1/+1 by a public coding reported in
        ``result.response_levels`` (see ``response_levels``); the bound of the
        response is then 1 and any y bound given is ignored. The linear
        predictor's sign gives the class.
    huber_h : float, optional
        Threshold of the Huber loss in the mapped units of the response (public);
        default ``0.5 * b_y``, about 1.5 standard deviations when y is clipped at
        three. Only with ``loss="huber"``.
    hinge_h : float, optional
        Smoothing width of the hinge (public); default 0.5. The scores and their
        sensitivity are for this smoothed loss. Only with ``loss="hinge"``.
    response_levels : pair, optional
        For ``loss="logistic"`` or ``"hinge"``: ``(class coded -1, class coded +1)``,
        fixed in advance, e.g. ``(-1, 1)`` or ``("control", "case")``. Without it the
        coding comes from the column's type, never from the values that occur: a
        two-level Categorical (an R factor) by its declared categories, bools as
        (False, True), and numbers by the fixed coding (0, 1), so a response coded
        -1/+1 needs ``response_levels=(-1, 1)``. A value outside the coding is an
        error (naming the column and the number of such rows).
    refit : bool
        Fit DP coefficients on the released support by objective perturbation.
    eps_select, eps_refit : float, optional
        Manual budget split; by default half of ``eps`` goes to each stage.
    refit_delta : float, optional
        Use the Gaussian (eps_refit, refit_delta)-DP variant of objective
        perturbation instead of the pure one, drawn in floating point (the report says
        so). Default: pure, the exact-grid objective perturbation
        (:mod:`dpsubset.refit.exact_grid`), whose guarantee survives floating point.
    inference : bool
        Release private uncertainty too (docs/guide/inference.md): standard errors,
        confidence intervals, t statistics and p-values of the coefficients
        (``res.bse``, ``res.conf_int()``, ``res.tvalues``, ``res.pvalues``; ``loss``
        "squared", "huber" or "logistic"), by a parametric bootstrap of the refit on
        privately released second moments (Ferrando, Wang and Sheldon 2022); and a
        selection confidence (``res.selection_confidence``; ``method`` "top_r" or
        "exponential"): private 95 % confidence bounds on the probability that the
        mechanism released the best-scoring support, with a verdict. The privacy report lists both
        stages with their eps.
    eps_inference : float, optional
        The inference stages' budget; default ``0.2 * eps``
        (``dpsubset.inference.DEFAULT_INFERENCE_SHARE``), taken off the top before the
        selection / refit split. When both stages run the selection confidence takes
        half of it and the intervals' second moments the other half. Only with
        ``inference=True``.
    split : bool
        Select on a random half of the rows and refit (with its inference) on the other
        half. The split is drawn independently of the data, so by parallel composition
        under replace-one the release is max(eps of the two parts)-DP, and each part
        may spend the whole ``eps``. The intervals are then valid whatever the
        selection did (docs/guide/inference.md says which mode to use when).
    truth_in_ball : bool
        State that you know, from outside the data, that the true coefficients lie
        inside the refit's ball (norm at most ``r_refit`` in the mapped units). By
        default a release whose coefficients lie on the ball's sphere gets intervals
        that also hold truths beyond it, which can be very wide where the second moments
        are noisy; with ``truth_in_ball=True`` they assume the truth inside the ball, as
        the summary then says (docs/guide/inference.md, "When the ball binds"). Only
        with ``inference=True``.
    search : {"auto", "enumeration", "branch_and_bound", "outer_approximation", "pyomo", "scip"}
        How the exact searches are solved. ``"auto"``: enumeration where a cost
        model of the public (loss, n, p, s) puts it below the certified search
        (small C(p, s); docs/benchmarks/search-constants.md); else rank-one/rank-two updates with certified bounds, and where
        those do not close, the branch and bound with perspective-relaxation bounds
        (``"branch_and_bound"``; for the Huber, logistic and hinge losses their
        Fenchel form, docs/methods/branch-and-bound.md); outer approximation with
        HiGHS (``"outer_approximation"``) on request. ``"pyomo"``: the paper's
        formulation (9) through Pyomo with an external MIQCP solver (``solver``),
        for ``loss="squared"``; needs ``pip install 'dpsubset[pyomo]'`` and a solver.
        ``"scip"``: the same formulation solved by SCIP through pyscipopt (open
        source, no licence; ``pip install 'dpsubset[scip]'``); exact but slow, for
        small p and as a cross-check.
    solver : str, optional
        With ``search="pyomo"``: a Pyomo solver name such as ``"gurobi_persistent"``,
        ``"gurobi_direct"`` or ``"scip_direct"``; default the first one available.
    solver_options : dict, optional
        With ``search="pyomo"`` or ``"scip"``: options for that solver, in its own
        names (the exactness defaults, zero MIP gap and tight tolerances, are set
        already).
    time_limit : float, optional
        Seconds allowed for the whole call (default ``None``: 600 s,
        ``dpsubset.search.limits.DEFAULT_TIME_LIMIT``; ``math.inf``: no limit). Every
        route of the exact search, and the bootstrap of ``inference=True``, stops at
        this one deadline; if it is reached, SearchTimeout is raised and nothing is
        released. Whether a call times out
        depends on the data, so the timeout is a timing side channel that the
        guarantee does not cover: fix the limit (and the settings) before looking
        at the data and do not publish that a call timed out
        (docs/guide/time-limits.md).
    memory_limit : float, optional
        Bytes that the exact search's growing structures (the branch and bound's
        open nodes and its cache of X'X columns, the outer approximation's cuts, the
        class search's queues) may hold together, estimated from their sizes; the
        data and the fixed working memory (about twice the size of X) come on top.
        Default ``None``: half the machine's physical memory
        (``dpsubset.search.limits.DEFAULT_MEMORY_SHARE``); ``math.inf``: no limit; a
        number: bytes (``2e9``). The branch and bound turns to depth-first dives at
        half the limit, which keeps its memory bounded; past the limit the search
        stops like a time-out: SearchMemoryLimit (a SearchTimeout) is raised and
        nothing is released. Like a time-out, whether that happens depends on the
        data (docs/guide/time-limits.md).
    random_state : None, int >= 0 or numpy.random.Generator
        None (the default, and what a release should use): fresh randomness from
        the operating system. An int (or a Generator you pass, seeded or not) makes
        the draws reproducible by whoever knows the seed or the generator's state,
        and then the release is private only while that stays secret: whoever knows
        it and the other rows can undo the noise. The privacy report of such a
        result says so (``result.privacy.seeded``). A negative int is an error.
    diagnostics : bool
        Also return a :class:`NonPrivateDiagnostics` (non-private, with a warning).
    verbose : None (default), True or False
        None: when the call has run for 2 s and stderr is a terminal, a progress bar
        on stderr names the stage (design, selection, refit), the seconds spent and
        the seconds left before ``time_limit``; a quick call, or output to a file or
        a notebook, shows nothing. True: that bar at once, the bars of the exact
        search's loops, and after the selection the search's solves (how many, by
        which route, whether each closed). False: nothing. NON-PRIVATE: how long the
        search takes and its solves depend on the data, so they are for the data
        owner's terminal only; the released result says only that every solve was
        certified (dpsubset/search/progress.py, docs/guide/time-limits.md).
    method_options : dict, optional
        Further options of the chosen method (see :data:`dpsubset.selection.base.METHODS`
        and each method's documentation).
    screen : None, True, int or dict, optional
        Private screening before the search (``method`` "top_r" or "mistakes"):
        DP-SIS keeps ``k`` candidate columns by the canonical Lipschitz top-k
        mechanism on ``|x_j'y|`` (pure DP), and the mechanism then runs on those
        ``k``. ``True`` uses the defaults, an int is ``k``, a dict takes ``k``,
        ``share`` and ``gamma``. Defaults: ``k = 10 s`` (below p) and half of the
        selection budget for the screen (``share=0.5``). The privacy report
        lists the screen as a stage and adds its budget (basic composition); the
        screened columns are in ``result.screened``. See docs/methods/screening.md.
    context : None or mapping, optional
        Where the formula looks up the functions, modules and constants it names that
        are not columns of ``data`` (as formulaic's ``context``). None: the scope of
        the caller of ``dp_best_subset``, captured once here. Objects that could hold
        data (arrays, lists, Series, ...) are refused when the formula uses them.

    Returns
    -------
    DPSubsetResults, or (DPSubsetResults, NonPrivateDiagnostics) with diagnostics=True.

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
        side (not with ``truth_in_ball=True``; docs/guide/inference.md, "When the ball
        binds").
    """
    # The formula's evaluation context, captured once here and passed down as a mapping.
    context = capture_context(1) if context is None else context
    data = maybe_from_r(data)  # an R data.frame from rpy2 -> pandas (rpy2 stays optional)
    # Step 1: check the settings (no data)
    cfg = _check_settings(
        on_dask=is_dask_frame(data), eps=eps, s=s, method=method, loss=loss, huber_h=huber_h,
        hinge_h=hinge_h, response_levels=response_levels, refit=refit,
        stage_settings=check_stage_settings(r=r, lam=lam, r_select=r_select, r_refit=r_refit,
                                       lam_select=lam_select, lam_refit=lam_refit, refit=refit),
        refit_delta=refit_delta, search=search, solver=solver, solver_options=solver_options,
        time_limit=time_limit, memory_limit=memory_limit, gap_check=gap_check, screen=screen,
        verbose=verbose,
        options=dict(method_options or {}, **{k: v for k, v in (("R", R), ("eps0", eps0), ("delta", delta))
                                               if v is not None}))
    clock = Deadline(cfg.time_limit)  # one deadline for the whole call
    centring = _centre_settings(centre, bounds, cfg.on_dask, eps_select, eps_refit)
    # Step 2: plan the budget (no data); the method's options are checked against its part
    eps_moments, eps_confidence = _inference_settings(cfg, inference, eps_inference, split, truth_in_ball)
    plan_budget = functools.partial(_plan_budget, cfg, eps_select=eps_select, eps_refit=eps_refit,
                                    eps_moments=eps_moments, eps_confidence=eps_confidence, split=split)
    plan, options = plan_budget(eps_centre=0.0 if centring is None else centring.share * cfg.eps)
    rng = as_generator(random_state)
    ledger = BudgetLedger(plan)
    bar = call_progress(verbose, clock)  # verbose: None (auto), True, False (search/progress.py)

    # Step 3: build the design: formula, bounds, clipping (errors about data come from here)
    bar.set_description("design")
    if loss in CLASSIFICATION_LOSSES:
        # Two classes -> -1/+1 by a public level order; the bound of y is then 1.
        data, response_levels = encode_binary_response(formula, as_frame(data), cfg.response_levels)
        given = as_bounds(bounds)
        bounds = (Bounds(y=1.0) if given is None
                  else Bounds(x=given.x, y=1.0, default=given.default))
    # Tall data, squared loss: the sufficient statistics instead of X (chosen on n and p only).
    # (screen= scores columns on the rows themselves: the matrix route then)
    # (and lam_refit=: the Gram route's refit takes the mechanism's own ridge only)
    route = (False if cfg.screen is not None or split or cfg.lam_refit is not None
             else functools.partial(gram_route, loss=loss, method=method, search=search))
    if cfg.on_dask:  # partitions mapped, clipped and reduced to X'X, X'y, y'y, n (design/dask.py)
        design = dask_design(formula, data, bounds, keep, context=context, stacklevel=3)
    else:
        request = None if centring is None else CentreRequest(centring, plan.eps_centre, rng, ledger)
        design = build_design(formula, data, bounds, keep, context=context, stacklevel=3, gram=route,
                              centre=request)
    if plan.eps_centre > 0 and not design.spec.centring:
        # nothing could be centred (no intercept, or no codebook column: public facts of the
        # formula and the codebook): nothing was spent, and the share goes back to the stages
        plan, options = plan_budget(eps_centre=0.0)
        ledger.plan = plan
    fit_cfg = _check_design(design, cfg, plan, options, split)
    bar.update()
    # split=True: disjoint random rows for the selection and the refit (drawn before any row is read)
    select_design, refit_design = _split_design(design, split, rng)

    # Step 4: select (after the optional private screen), spending from the ledger
    rng_state = rng.bit_generator.state  # to say, on a timeout, whether any draw was made
    try:
        sel, kept = _select(select_design, cfg, fit_cfg, plan, ledger, options, rng, clock, bar)
    except SearchTimeout as err:
        bar.close()
        raise explain_timeout(err, time_limit=cfg.time_limit, memory_limit=cfg.memory_limit,
                              p=fit_cfg.p, s=cfg.s, method=method, search=search, r=fit_cfg.r,
                              lam=fit_cfg.lam,
                              random_draws=rng.bit_generator.state != rng_state) from err
    except BaseException:  # Ctrl-C or an error in the search: the bar goes with the call
        bar.close()
        raise
    support_idx = [int(kept[j]) for j in sel.support]
    support = [design.candidate_names[j] for j in support_idx]
    if verbose and sel.certificates:
        # the solves depend on the data: on the data owner's terminal only, labelled
        tqdm.write(describe_solves(sel.certificates), file=sys.stderr)
    bar.update()

    # Step 5: refit on the released support
    used_cols = design.forced_names + support
    params = coef_mapped = refit_ridge = None
    if cfg.refit:
        bar.set_description("refit")
        params, coef_mapped, refit_ridge = _refit(refit_design, support_idx, used_cols, cfg, fit_cfg, plan,
                                                  ledger, rng)
    # Step 5b: the inference stages (inference=True): selection confidence, intervals
    try:  # the call's deadline covers the inference stage too: a time-out there releases nothing
        conf, coef_inf = _inference(sel, kept, refit_design, support_idx, used_cols, coef_mapped, cfg,
                                    fit_cfg, plan, ledger, rng, split, truth_in_ball, clock)
    except BaseException:
        bar.close()
        raise
    bar.update()
    bar.close()

    # Step 6: the report (a view of the ledger) and the results (public values only)
    report = build_report(ledger, sel, bounds_public=design.bounds_public, leaks=design.leaks,
                          seeded=random_state is not None, split=_split_sizes(select_design, refit_design),
                          selection_confidence=conf,
                          stage_settings=_stage_report(fit_cfg, refit_ridge if cfg.refit else None))
    res = DPSubsetResults(
        support=support, params=params, forced=list(design.forced_names),
        candidates=list(design.candidate_names), method=method, nobs=fit_cfg.n, formula=formula,
        response=design.response_name, privacy=report, loss=loss, s=cfg.s,
        eps_select=plan.eps_select, eps_refit=plan.eps_refit, r=fit_cfg.r, lam=fit_cfg.lam,
        r_refit=fit_cfg.r_refit if cfg.refit else None,
        response_levels=response_levels,
        # the screened columns are the screen's private release
        screened=None if cfg.screen is None else [design.candidate_names[j] for j in kept],
        loss_params=_public_loss_params(fit_cfg.loss_options, cfg, design),
        _predictor=_public_predictor(design), _coef_mapped=coef_mapped, _used_columns=used_cols,
        inference=coef_inf, _selection_confidence=conf)
    if not diagnostics:
        return res
    warnings.warn("diagnostics=True returns NON-PRIVATE values (scores of supports on your data); "
                  "do not publish them", PrivacyLeakWarning, stacklevel=2)
    return res, _diagnostics(sel)


def _centre_settings(centre, bounds, on_dask, eps_select=None, eps_refit=None):
    """Step 1 for ``centre=``: its settings, or None (no centring); no data read."""
    if centre is None and eps_select is not None and eps_refit is not None:
        return None  # an explicit split of the selection and the refit leaves the default off
    settings = check_centre(centre, as_bounds(bounds))
    if on_dask and settings is not None:
        if centre is None:  # the default: the Dask route reduces partitions without a centring pass
            return None
        raise ValueError("centre= is not available for Dask data frames (their partitions are reduced to the "
                         "sufficient statistics in one pass); centre=False, or pass a pandas DataFrame")
    return settings


def _plan_budget(cfg, *, eps_centre, eps_select, eps_refit, eps_moments, eps_confidence, split):
    """Step 2: the budget plan from the settings (no data), and the method's options checked
    against the selection's part (the gap test's eps0 set aside)."""
    plan = BudgetPlan.from_settings(cfg.eps, refit=cfg.refit, eps_select=eps_select, eps_refit=eps_refit,
                                    screen_share=None if cfg.screen is None else cfg.screen.share,
                                    eps_moments=eps_moments, eps_confidence=eps_confidence,
                                    eps_centre=eps_centre, split=split)
    options = METHODS[cfg.method].validate(cfg.options, s=cfg.s, eps=plan.eps_select, loss=cfg.loss)
    return plan.with_gap_test(options.get("eps0")), options  # mistakes' gap test: its part


@dataclass(frozen=True)
class _Settings:
    """The settings of one call after Step 1 (checked, defaults not yet resolved)."""

    eps: float
    s: int
    method: str
    loss: str
    huber_h: float | None
    hinge_h: float | None
    response_levels: tuple | None
    r: float | None  # the selection's radius as given (None: its default)
    lam: float | None  # the selection's ridge as given
    r_refit: float | None  # the refit's radius as given
    lam_refit: float | None  # the refit's ridge floor as given (None: the mechanism's own)
    refit: bool
    refit_delta: float | None
    time_limit: float | None
    memory_limit: float | None
    search: str
    solver: str | None
    solver_options: dict | None
    screen: object  # ScreenSpec or None
    options: dict  # the method's options, not yet checked against the budget
    on_dask: bool
    verbose: bool


def _check_settings(*, on_dask, eps, s, method, loss, huber_h, hinge_h, response_levels, stage_settings,
                    refit, refit_delta, search, solver, solver_options, time_limit, memory_limit,
                    gap_check, screen, options, verbose):
    """Step 1: every setting that needs no data, by the rules of :mod:`dpsubset._validation`.

    Returns
    -------
    _Settings
    """
    v = validate_params(dict(eps=eps, s=s), PARAMETER_RULES)
    check_eps_ceiling(v["eps"])
    if method not in METHODS:
        raise ValueError(f"method must be one of {tuple(METHODS)}, got {method!r}")
    v.update(validate_params(dict(loss=loss), PARAMETER_RULES))
    if loss not in METHODS[method].losses:
        raise ValueError(f"method={method!r} supports loss in {METHODS[method].losses}, got loss={loss!r}")
    v.update(validate_params(dict(huber_h=huber_h, hinge_h=hinge_h), PARAMETER_RULES))
    for name, value, own in (("huber_h", huber_h, "huber"), ("hinge_h", hinge_h, "hinge")):
        if value is not None and loss != own:
            raise ValueError(f"{name} is only used with loss='{own}' (got loss={loss!r})")
    if response_levels is not None:
        if loss not in CLASSIFICATION_LOSSES:
            raise ValueError(f"response_levels is only used with loss in {CLASSIFICATION_LOSSES} "
                             f"(got loss={loss!r})")
        response_levels = check_response_levels(response_levels)
    time_limit = resolve_time_limit(time_limit)
    memory_limit = resolve_memory_limit(memory_limit)  # bytes, None for no limit
    solver, solver_options = check_search(search, solver, solver_options, loss)
    if on_dask:
        check_dask_request(loss=loss, method=method)
    v.update(validate_params(dict(refit=refit), PARAMETER_RULES))
    if refit_delta is not None:
        if not refit:
            raise ValueError("refit_delta was given but refit=False")
        refit_delta = validate_params(dict(refit_delta=refit_delta), PARAMETER_RULES)["refit_delta"]
        if refit_delta >= 0.5:
            raise ValueError(f"refit_delta must be < 0.5 (and much smaller than 1/n), got {refit_delta}")
    if method == "mistakes":
        options.setdefault("gap_check", gap_check)
    elif gap_check != "ptr":
        raise ValueError("gap_check is only used with method='mistakes'")
    screen_spec = check_screen(screen, s=v["s"], method=method)
    if on_dask and stage_settings["lam_refit"] is not None:
        raise ValueError("lam_refit= is not available for Dask data frames (their refit runs on the "
                         "sufficient statistics with the mechanism's own ridge); drop lam_refit=")
    if on_dask and screen_spec is not None:
        raise ValueError("screen= is not available for Dask data frames (the Dask route keeps only "
                         "the sufficient statistics); screen=None, or pass a pandas DataFrame")
    return _Settings(eps=v["eps"], s=v["s"], method=method, loss=loss, huber_h=v["huber_h"],
                     hinge_h=v["hinge_h"], response_levels=response_levels,
                     r=stage_settings["r_select"], lam=stage_settings["lam_select"],
                     r_refit=stage_settings["r_refit"], lam_refit=stage_settings["lam_refit"],
                     refit=refit, refit_delta=refit_delta, time_limit=time_limit,
                     memory_limit=memory_limit, search=search, solver=solver,
                     solver_options=solver_options, screen=screen_spec, options=options,
                     on_dask=on_dask, verbose=verbose)


@dataclass(frozen=True)
class _FitSettings:
    """What Step 3 adds to the settings from the design's public numbers."""

    n: int
    p: int
    r: float
    lam: float
    loss_options: dict
    r_refit: float = None  # the refit's radius (None: the selection's r)
    lam_refit: float = 0.0  # the refit's ridge floor (0: the objective perturbation's own minimum)


def _check_design(design, cfg, plan, options, split=False):
    """Step 3's checks: sizes, the defaults of r and lam, representable budgets, usefulness.

    Reads only the design's public numbers (n, p, bounds); warns (LowUtilityWarning)
    where no data could make the release useful.

    Returns
    -------
    _FitSettings
    """
    # One loss object for the scores and the refit: the same shape, the same h.
    loss_options = make_loss(cfg.loss, b_y=design.b_y, huber_h=cfg.huber_h,
                             hinge_h=cfg.hinge_h).refit_options()
    p, n, s = design.X.shape[1], design.n, cfg.s
    if s > p:
        raise ValueError(f"s = {s} is larger than the number of candidate columns ({p}); choose s <= {p}")
    if s == p:
        raise ValueError(f"s = {s} equals the number of candidate columns: there is nothing to select")
    if cfg.screen is not None:
        cfg.screen.k_for(p, s)  # a k that keeps every column is an error before any release
    # Defaults from public numbers only (bounds, s, the loss): dpsubset/defaults.py.
    # Defaults grow with each stage's public n eps (dpsubset/defaults.py): the selection's
    # radius and ridge from eps_select, the refit's radius from eps_refit, each with the
    # rows its stage sees (split=True: the parts' public sizes).
    # Each stage has its own default (stage=): for logistic and hinge the selection's ball
    # and ridge were chosen by measured recovery, the refit's by held-out accuracy. The
    # selection's r and lam set its Delta; the refit's r_refit and lam_refit its noise.
    n_select, n_refit = split_sizes(n) if split else (n, n)
    r, r_refit, lam = cfg.r, cfg.r_refit, cfg.lam
    if r is None:
        r = default_radius(design.x_bounds, design.b_y, s, design.forced_bounds, cfg.loss,
                           n=n_select, eps=plan.eps_select, stage="select")
    if r_refit is None:
        r_refit = default_radius(design.x_bounds, design.b_y, s, design.forced_bounds, cfg.loss,
                                 n=n_refit, eps=plan.eps_refit, stage="refit") if plan.eps_refit > 0 else r
    if lam is None:
        lam = default_lam(n_select, plan.eps_select, cfg.loss, stage="select", x_bounds=design.x_bounds, s=s,
                          forced_bounds=design.forced_bounds)
    lam_refit = default_lam(n_refit, plan.eps_refit, cfg.loss, stage="refit") \
        if cfg.lam_refit is None else cfg.lam_refit
    if lam_refit > FLOAT_LIMIT:
        raise ValueError(f"lam_refit = {lam_refit:.3g} would overflow the refit's sums; "
                         f"use lam_refit <= {FLOAT_LIMIT:g}")
    # public sizes and the floating-point range, before any search (dpsubset/_validation.py)
    check_sizes(n, p, s)
    if cfg.method in ("top_r", "mistakes"):
        check_R(options.get("R"), p, s)
    check_budget_representable(eps_select=plan.eps_select, selection_parts=[options.get("eps0")])
    check_refit_representable(
        eps_refit=plan.eps_refit, refit=cfg.refit, loss=cfg.loss, dim=len(design.forced_names) + s,
        row_bound=largest_row_norm(design.x_bounds, s, design.forced_bounds),
        b_y=design.b_y, r=r_refit, refit_delta=cfg.refit_delta or 0.0, loss_options=loss_options,
        bounds_public=design.bounds_public)
    # settings under which no data could make the release useful (public inputs only)
    for msg in release_warnings(design, s=s, loss=cfg.loss, loss_options=loss_options, r=r,
                                method=cfg.method, eps_select=plan.eps_select, eps_refit=plan.eps_refit,
                                refit=cfg.refit, refit_delta=cfg.refit_delta, r_refit=r_refit,
                                n_select=n_select, n_refit=n_refit):
        warnings.warn(msg, LowUtilityWarning, stacklevel=3)
    return _FitSettings(n=n, p=p, r=r, lam=lam, loss_options=loss_options, r_refit=r_refit,
                        lam_refit=lam_refit)


def _select(design, cfg, fit_cfg, plan, ledger, options, rng, clock, bar):
    """Step 4: the private screen (optional), then the method's selection on the kept columns.

    Returns
    -------
    sel : dpsubset.selection.base.Selection
    kept : ndarray of int
        The candidate columns the selection saw (all of them without a screen).
    """
    search_design, kept = design, np.arange(fit_cfg.p)
    if cfg.screen is not None:
        bar.set_description("screening")
        search_design, kept = screen_design(design, cfg.screen, cfg.s, plan.eps_screen, rng, ledger)
    bar.set_description(f"selection ({cfg.method})")
    request = SelectionRequest(
        design=search_design, s=cfg.s, eps=plan.eps_select, lam=fit_cfg.lam, r=fit_cfg.r,
        loss=cfg.loss, rng=rng, options=options, search=cfg.search, time_limit=clock.left(),
        memory_limit=math.inf if cfg.memory_limit is None else cfg.memory_limit,
        verbose=cfg.verbose, loss_options=fit_cfg.loss_options, solver=cfg.solver,
        solver_options=cfg.solver_options, ledger=ledger)
    sel = METHODS[cfg.method].select(request)
    for st in sel.stages:  # a method registered from outside that does its own accounting
        ledger.spend(st["stage"], st["mechanism"], st["eps"], st["delta"])
    return sel, kept


def _refit(design, support_idx, used_cols, cfg, fit_cfg, plan, ledger, rng):
    """Step 5: DP coefficients on the released support (objective perturbation).

    Returns
    -------
    params : pandas.Series
        In the user's units over the always-in columns and every candidate (0 off the support).
    coef_mapped : ndarray
        In the mapped units, over ``used_cols`` (for predictions).
    """
    # the released columns' own row bound: sqrt(B_s) over the support alone
    row_bound = largest_row_norm(design.x_bounds[support_idx], len(support_idx), design.forced_bounds)
    if design.gram is not None:
        # (a lam_refit= call never takes the Gram route: see the route in dp_best_subset)
        fit = refit_from_gram(design, support_idx, eps=plan.eps_refit, row_bound=row_bound,
                              r=fit_cfg.r_refit, rng=rng, delta=cfg.refit_delta or 0.0)
    else:
        A = np.hstack([design.forced, design.X[:, support_idx]])
        settings = dict(loss=cfg.loss, eps=plan.eps_refit, row_bound=row_bound, b_y=design.b_y,
                        r=fit_cfg.r_refit, rng=rng, ridge=fit_cfg.lam_refit, **fit_cfg.loss_options)
        # pure: the exact-grid refit (refit/exact_grid.py); refit_delta: the Gaussian one, in floating point
        fit = (objective_perturbation(A, design.y, delta=cfg.refit_delta, **settings) if cfg.refit_delta
               else objective_perturbation_exact(A, design.y, **settings))
    ledger.spend("refit", f"objective perturbation ({fit.mode})", fit.eps, fit.delta)
    coef_mapped = np.asarray(fit.coef, dtype=float)
    orig = design.to_original_scale(coef_mapped, used_cols)
    params = orig.reindex(design.forced_names + design.candidate_names).fillna(0.0)
    # the ridge the refit used, max(lam_refit, 2 lambda / eps): public, for the report
    return params, coef_mapped, float(fit.regularization)


def _stage_report(fit_cfg, refit_ridge):
    """Each stage's radius and ridge for the privacy report (the refit's only if it ran)."""
    out = [dict(stage="selection", r=float(fit_cfg.r), lam=float(fit_cfg.lam))]
    if refit_ridge is not None:
        out.append(dict(stage="refit", r=float(fit_cfg.r_refit), lam=refit_ridge))
    return out


def _inference_settings(cfg, inference, eps_inference, split, truth_in_ball=False):
    """Step 1 for ``inference=``, ``eps_inference=``, ``split=`` and ``truth_in_ball=``: the
    inference stages' eps."""
    validate_params(dict(inference=inference, split=split, eps_inference=eps_inference,
                         truth_in_ball=truth_in_ball), PARAMETER_RULES)
    if split and cfg.on_dask:
        raise ValueError("split=True needs the rows (it splits them); it is not available for Dask "
                         "data frames: split=False, or pass a pandas DataFrame")
    if inference and cfg.lam_refit is not None:
        raise ValueError("lam_refit= with inference=True: the bootstrap replays the refit with the "
                         "objective perturbation's own ridge; drop lam_refit= or set inference=False")
    if not inference:
        if eps_inference is not None:
            raise ValueError("eps_inference was given but inference=False; add inference=True")
        if truth_in_ball:
            raise ValueError("truth_in_ball=True is about the intervals, but inference=False; "
                             "add inference=True or drop truth_in_ball")
        return 0.0, 0.0
    return inference_parts(cfg.eps, eps_inference, loss=cfg.loss, method=cfg.method, refit=cfg.refit)


def _split_design(design, split, rng):
    """(the selection's design, the refit's design): the same design without a split."""
    if not split:
        return design, design
    select_rows, refit_rows = split_rows(design.n, rng)
    return rows_of(design, select_rows), rows_of(design, refit_rows)


def _split_sizes(select_design, refit_design):
    """The public sizes of the two parts with ``split=True`` (None without a split)."""
    return None if select_design is refit_design else (select_design.n, refit_design.n)


def _inference(sel, kept, design, support_idx, used_cols, coef_mapped, cfg, fit_cfg, plan, ledger, rng,
               split, truth_in_ball=False, clock=None):
    """Step 5b: the selection confidence and the coefficients' intervals, each where planned.

    Returns
    -------
    (SelectionConfidence or None, CoefficientInference or None)
    """
    conf = coef_inf = None
    if plan.eps_confidence > 0:
        conf = confidence_of_selection(sel, eps=plan.eps_confidence, eps_mech=plan.eps_select,
                                       p=len(kept), s=cfg.s, rng=rng, ledger=ledger, method=cfg.method,
                                       released_names=[design.candidate_names[kept[j]] for j in sel.support])
    if plan.eps_moments > 0:
        row_bound = largest_row_norm(design.x_bounds[support_idx], len(support_idx), design.forced_bounds)
        coef_inf = coefficient_inference(
            design, support_idx, used_cols, coef_mapped=coef_mapped, loss=cfg.loss,
            loss_options=fit_cfg.loss_options, eps=plan.eps_moments, eps_refit=plan.eps_refit,
            refit_delta=cfg.refit_delta or 0.0, row_bound=row_bound, r=fit_cfg.r_refit, rng=rng,
            ledger=ledger, mode="split" if split else "conditional", truth_in_ball=truth_in_ball,
            deadline=clock)
        # a fact of the release and the public radius: no data value
        if coef_inf.on_sphere and not truth_in_ball:
            warnings.warn(
                f"inference=True: {BALL_BINDS_NOTE} (r_refit = {fit_cfg.r_refit:.3g}, mapped units). "
                f"For narrower intervals, choose r_refit= from what is known of the effects' size "
                f"before the data are seen, or give tighter codebook ranges or more rows or eps "
                f"(docs/guide/inference.md, 'When the ball binds')",
                BallBindsWarning, stacklevel=4)
    return conf, coef_inf


def _public_loss_params(loss_options, cfg, design):
    """The loss's parameters as the result shows them (public facts of the loss)."""
    out = dict(loss_options)
    if cfg.huber_h is None and "huber_h" in out and design.bounds_from_data:
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


def _public_predictor(design):
    """What the result keeps of the design to predict: its public :class:`DesignSpec` (no
    rows, no Gram matrix), less any bound that was taken from the data (such a column is
    not clipped when predicting, and the learned value is not kept)."""
    derived = set(design.bounds_from_data)
    clip = {c: ((-math.inf, math.inf) if c in derived else lim)
            for c, lim in design.clip_limits.items()}
    x_b = np.array([math.nan if c in derived else b
                    for c, b in zip(design.candidate_names, design.x_bounds)])
    f_b = np.array([math.nan if c in derived else b
                    for c, b in zip(design.forced_names, design.forced_bounds)])
    return replace(design.spec, clip_limits=clip, x_bounds=x_b, forced_bounds=f_b,
                   b_y=math.nan if design.response_name in derived else design.b_y)
