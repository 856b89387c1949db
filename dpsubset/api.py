"""``dp_best_subset``: validate, build the design, search exactly, release privately, refit.

The stages and their modules: design (formula, bounds, clipping) -> scores -> exact
search (certified candidate sets) -> mechanism (one private release) -> refit
(objective perturbation on the released support) -> results (private values only).
"""
from __future__ import annotations

import functools
import math
import numbers
import sys
import warnings
from dataclasses import replace

import numpy as np
from tqdm.auto import tqdm

from .interfaces.r_frames import maybe_from_r
from .design.dask import check_dask_request, dask_design, is_dask_frame
from .defaults import DEFAULT_LAM, default_radius
from .design.build import Bounds, _as_frame, as_bounds, build_design
from ._validation import check_budget_representable, check_eps_ceiling, check_R, check_sizes
from .losses import CLASSIFICATION_LOSSES, check_response_levels, encode_binary_response, make_loss
from .mechanisms import as_generator
from .privacy.leaks import GUARANTEES, PrivacyLeakWarning
from .refit.objective import objective_perturbation
from .results.results import (SEEDED_NOTE, DPSubsetResults, NonPrivateDiagnostics, PrivacyReport,
                      describe_solves)
from .search.exact import check_search
from .search.limits import (Deadline, SearchTimeout, explain_timeout, resolve_memory_limit,
                            resolve_time_limit)
from .design.suffstats import gram_route, refit_from_gram
from .results.usefulness import LowUtilityWarning, release_warnings
from .selection.base import DEFAULT_DELTA, DEFAULT_EPS0_SHARE, METHODS, SelectionRequest
from .selection.screening import check_screen, screen_design

__all__ = ["dp_best_subset", "DEFAULT_REFIT_SHARE", "DEFAULT_EPS0_SHARE", "DEFAULT_DELTA"]

LOSSES = ("squared", "huber", "logistic", "hinge")
#: Share of the total eps given to the refit when refit=True and no split is given.
DEFAULT_REFIT_SHARE = 0.5
NEIGHBOURS = "replace one row (n fixed and public)"


def _positive(name, value, *, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def dp_best_subset(formula, data, *, eps, s, method="top_r", bounds=None, r=None, lam=None,
                   R=None, gap_check="ptr", eps0=None, delta=None, keep=None,
                   loss="squared", huber_h=None, hinge_h=None, response_levels=None, refit=True,
                   eps_select=None, eps_refit=None, refit_delta=None,
                   search="auto", time_limit=None, memory_limit=None, random_state=None,
                   diagnostics=False,
                   verbose=False, method_options=None, solver=None, solver_options=None,
                   screen=None):
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
    method : {"top_r", "mistakes", "samp_agg", "dp_sis", "exponential", "lei_ic", "mcmc"}
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

        All but ``"top_r"`` and ``"mistakes"`` are for ``loss="squared"`` only.
    bounds : pair (b_x, b_y), dpsubset.Bounds, dict, or None
        Public bounds. ``(b_x, b_y)`` clips every column to [-b_x, b_x] and y to
        [-b_y, b_y] without rescaling (the paper's setting). Intervals (lo, hi) are
        clipped and mapped to [-1, 1]. Missing bounds are taken from the data with a
        PrivacyLeakWarning and the result's guarantee is void.
    r : float, optional
        Radius of the coefficient ball (mapped units) for the scores and the refit.
        Default: the radius at which the largest prediction the ball allows equals
        the response bound, ``r = b_y / sqrt(B_s)``, where ``B_s`` is the sum of the
        ``s`` largest squared column bounds plus the squared bounds of the always-in
        columns (1 for the intercept); for the classification losses the largest
        linear predictor (a log-odds) is 6 instead, ``r = 6 / sqrt(B_s)``. So
        ``r = b_y / (b_x sqrt(s))`` for scalar bounds without an intercept, and
        ``1 / sqrt(s + 1)`` when everything is mapped to [-1, 1] with an intercept.
        It reads only public bounds and ``s``, and it makes the score sensitivity
        ``2 b_y^2 / n`` for least squares. A larger ``r`` raises the sensitivity
        quadratically and buys fit only when the bounds are loose against the
        data's spread (docs/guide/choosing-settings.md).
    lam : float, optional
        Ridge parameter of the scores (> 0): the penalty is ``(lam / 2n) ||beta||^2``.
        Default 1 (one pseudo-row): small and fixed, so that it keeps the scores
        strictly convex without shrinking the score gaps between supports (a ridge
        that grows with ``n`` eats them; docs/guide/choosing-settings.md).
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
        perturbation instead of the pure one (default: pure, Gamma-norm noise).
    search : {"auto", "enumeration", "branch_and_bound", "outer_approximation", "pyomo", "scip"}
        How the exact searches are solved. ``"auto"``: enumeration for small
        C(p, s); else rank-one/rank-two updates with certified bounds, and where
        those do not close, for least squares the branch and bound with
        perspective-relaxation bounds (``"branch_and_bound"``,
        docs/methods/branch-and-bound.md), for the other losses outer approximation
        with HiGHS (``"outer_approximation"``). ``"pyomo"``: the paper's
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
        route of the exact search stops at this one deadline; if it is reached,
        SearchTimeout is raised and nothing is released. Whether a call times out
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
    verbose : bool
        Show progress on stderr, and after the selection the exact search's solves
        (how many, by which route, whether each closed). NON-PRIVATE: the solves
        depend on the data, so this is for the data owner's terminal only; the
        released result says only that every solve was certified.
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
        range), judged from public quantities only (dpsubset/usefulness.py), with
        what would help.
    """
    data = maybe_from_r(data)  # an R data.frame from rpy2 -> pandas (rpy2 stays optional)
    on_dask = is_dask_frame(data)
    # ---- arguments that need no data: checked before anything is built
    eps = _positive("eps", eps)
    check_eps_ceiling(eps)
    if isinstance(s, bool) or not isinstance(s, numbers.Integral) or s < 1:
        raise ValueError(f"s must be an integer >= 1, got {s!r}")
    s = int(s)
    if method not in METHODS:
        raise ValueError(f"method must be one of {tuple(METHODS)}, got {method!r}")
    spec = METHODS[method]
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    if loss not in spec.losses:
        raise ValueError(f"method={method!r} supports loss in {spec.losses}, got loss={loss!r}")
    huber_h = _positive("huber_h", huber_h, allow_none=True)
    hinge_h = _positive("hinge_h", hinge_h, allow_none=True)
    if huber_h is not None and loss != "huber":
        raise ValueError(f"huber_h is only used with loss='huber' (got loss={loss!r})")
    if hinge_h is not None and loss != "hinge":
        raise ValueError(f"hinge_h is only used with loss='hinge' (got loss={loss!r})")
    if response_levels is not None and loss not in CLASSIFICATION_LOSSES:
        raise ValueError(f"response_levels is only used with loss in {CLASSIFICATION_LOSSES} "
                         f"(got loss={loss!r})")
    if response_levels is not None:
        response_levels = check_response_levels(response_levels)
    r = _positive("r", r, allow_none=True)
    lam = _positive("lam", lam, allow_none=True)
    time_limit = resolve_time_limit(time_limit)
    clock = Deadline(time_limit)  # one deadline for the whole call
    memory_limit = resolve_memory_limit(memory_limit)  # bytes, None for no limit
    solver, solver_options = check_search(search, solver, solver_options, loss)
    if on_dask:
        check_dask_request(loss=loss, method=method)
    if not isinstance(refit, bool):
        raise TypeError("refit must be True or False")
    if refit_delta is not None:
        if not refit:
            raise ValueError("refit_delta was given but refit=False")
        refit_delta = _positive("refit_delta", refit_delta)
        if refit_delta >= 0.5:
            raise ValueError(f"refit_delta must be < 0.5 (and much smaller than 1/n), got {refit_delta}")
    eps_select, eps_refit = _split_budget(eps, refit, eps_select, eps_refit)
    options = dict(method_options or {})
    for name, value in (("R", R), ("eps0", eps0), ("delta", delta)):
        if value is not None:
            options[name] = value
    if method == "mistakes":
        options.setdefault("gap_check", gap_check)
    elif gap_check != "ptr":
        raise ValueError("gap_check is only used with method='mistakes'")
    screen_spec = check_screen(screen, s=s, method=method)
    if on_dask and screen_spec is not None:
        raise ValueError("screen= is not available for Dask data frames (the Dask route keeps only "
                         "the sufficient statistics); screen=None, or pass a pandas DataFrame")
    eps_screen = 0.0
    if screen_spec is not None:
        # The screen takes its share out of the selection budget (the refit's is unchanged).
        eps_screen = screen_spec.share * eps_select
        eps_select = eps_select - eps_screen
    options = spec.validate(options, s=s, eps=eps_select, loss=loss)
    rng = as_generator(random_state)

    bar = tqdm(total=3, disable=not verbose, desc="dp_best_subset")
    # ---- design: formula, bounds, clipping (errors about data come from here)
    bar.set_description("design")
    if loss in CLASSIFICATION_LOSSES:
        # Two classes -> -1/+1 by a public level order; the bound of y is then 1.
        data, response_levels = encode_binary_response(formula, _as_frame(data), response_levels)
        given = as_bounds(bounds)
        bounds = (Bounds(y=1.0) if given is None
                  else Bounds(x=given.x, y=1.0, default=given.default))
    # Tall data, squared loss: the sufficient statistics instead of X (chosen on n and p only).
    # (screen= scores columns on the rows themselves: the matrix route then)
    route = (False if screen_spec is not None
             else functools.partial(gram_route, loss=loss, method=method, search=search))
    if on_dask:  # partitions mapped, clipped and reduced to X'X, X'y, y'y, n (dpsubset/dask_data.py)
        design = dask_design(formula, data, bounds, keep, stacklevel=3)
    else:
        design = build_design(formula, data, bounds, keep, stacklevel=3, gram=route)
    # One loss object for the scores and the refit: the same shape, the same h.
    loss_options = make_loss(loss, b_y=design.b_y, huber_h=huber_h,
                             hinge_h=hinge_h).refit_options()
    p, n = design.X.shape[1], design.n
    if s > p:
        raise ValueError(f"s = {s} is larger than the number of candidate columns ({p}); choose s <= {p}")
    if s == p:
        raise ValueError(f"s = {s} equals the number of candidate columns: there is nothing to select")
    if screen_spec is not None:
        screen_spec.k_for(p, s)  # a k that keeps every column is an error before any release
    # Defaults from public numbers only (bounds, s, the loss): dpsubset/defaults.py.
    if r is None:
        r = default_radius(design.x_bounds, design.b_y, s, design.forced_bounds, loss)
    lam = DEFAULT_LAM if lam is None else lam
    # public sizes and the floating-point range, before any search (dpsubset/guards.py)
    check_sizes(n, p, s)
    if method in ("top_r", "mistakes"):
        check_R(options.get("R"), p, s)
    largest = np.sort(design.x_bounds)[::-1][:s]
    check_budget_representable(
        eps_select=eps_select, eps_refit=eps_refit, selection_parts=[options.get("eps0")],
        refit=refit, loss=loss, dim=len(design.forced_names) + s,
        row_bound=math.sqrt(float(np.sum(design.forced_bounds ** 2)) + float(np.sum(largest ** 2))),
        b_y=design.b_y, r=r, refit_delta=refit_delta or 0.0, loss_options=loss_options,
        bounds_public=design.bounds_public)
    # settings under which no data could make the release useful (public inputs only)
    for msg in release_warnings(design, s=s, loss=loss, loss_options=loss_options, r=r, method=method,
                                eps_select=eps_select, eps_refit=eps_refit, refit=refit,
                                refit_delta=refit_delta):
        warnings.warn(msg, LowUtilityWarning, stacklevel=2)
    bar.update()

    # ---- private screening (optional), then selection on the kept columns
    rng_state = rng.bit_generator.state  # to say, on a timeout, whether any draw was made
    search_design, kept, screen_stages = design, np.arange(p), []
    if screen_spec is not None:
        bar.set_description("screening")
        search_design, kept, stage = screen_design(design, screen_spec, s, eps_screen, rng)
        screen_stages = [stage]
    bar.set_description(f"selection ({method})")
    request = SelectionRequest(design=search_design, s=s, eps=eps_select, lam=lam, r=r, loss=loss,
                               rng=rng, options=options, search=search, time_limit=clock.left(),
                               memory_limit=math.inf if memory_limit is None else memory_limit,
                               verbose=verbose, loss_options=loss_options, solver=solver,
                               solver_options=solver_options)
    try:
        sel = spec.select(request)
    except SearchTimeout as err:
        bar.close()
        raise explain_timeout(err, time_limit=time_limit, memory_limit=memory_limit, p=p, s=s,
                              method=method,
                              search=search, r=r, lam=lam,
                              random_draws=rng.bit_generator.state != rng_state) from err
    support_idx = [int(kept[j]) for j in sel.support]
    support = [design.candidate_names[j] for j in support_idx]
    if verbose and sel.certificates:
        # the solves depend on the data: on the data owner's terminal only, labelled
        tqdm.write(describe_solves(sel.certificates), file=sys.stderr)
    bar.update()

    # ---- refit on the released support
    params = coef_mapped = None
    used_cols = design.forced_names + support
    stages = screen_stages + list(sel.stages)
    if refit:
        bar.set_description("refit")
        row_bound = math.sqrt(float(np.sum(design.forced_bounds ** 2))
                              + float(np.sum(design.x_bounds[support_idx] ** 2)))
        if design.gram is not None:
            fit = refit_from_gram(design, support_idx, eps=eps_refit, row_bound=row_bound, r=r,
                                  rng=rng, delta=refit_delta or 0.0)
        else:
            A = np.hstack([design.forced, design.X[:, support_idx]])
            fit = objective_perturbation(A, design.y, loss=loss, eps=eps_refit, row_bound=row_bound,
                                         b_y=design.b_y, r=r, rng=rng, delta=refit_delta or 0.0,
                                         **loss_options)
        coef_mapped = np.asarray(fit.coef, dtype=float)
        orig = design.to_original_scale(coef_mapped, used_cols)
        all_names = design.forced_names + design.candidate_names
        params = orig.reindex(all_names).fillna(0.0)
        stages.append(dict(stage="refit", mechanism=f"objective perturbation ({fit.mode})",
                           eps=fit.eps, delta=fit.delta))
    bar.update()
    bar.close()

    report = _report(stages, sel, design, seeded=random_state is not None)
    predictor = _public_predictor(design)
    res = DPSubsetResults(support=support, params=params, forced=list(design.forced_names),
                          candidates=list(design.candidate_names), method=method, nobs=n,
                          formula=formula, response=design.response_name, privacy=report,
                          loss=loss, s=s, eps_select=eps_select, eps_refit=eps_refit, r=r, lam=lam,
                          _predictor=predictor, _coef_mapped=coef_mapped, _used_columns=used_cols)
    # Public facts of the loss: (level coded -1, level coded +1) for the
    # classification losses (None otherwise), and the loss's parameters.
    res.response_levels = response_levels
    # The screened columns are the screen's private release (None without a screen).
    res.screened = (None if screen_spec is None
                    else [design.candidate_names[j] for j in kept])
    res.loss_params = dict(loss_options)
    if huber_h is None and "huber_h" in res.loss_params and design.bounds_from_data:
        # the default threshold is 0.5 b_y, a statistic of the data when b_y was learned
        res.loss_params["huber_h"] = None
    if not diagnostics:
        return res
    warnings.warn("diagnostics=True returns NON-PRIVATE values (scores of supports on your data); "
                  "do not publish them", PrivacyLeakWarning, stacklevel=2)
    diag = NonPrivateDiagnostics(
        best_support=sel.diagnostics.get("best_support"),
        candidate_supports=sel.diagnostics.get("candidate_supports", []),
        candidate_scores=sel.diagnostics.get("candidate_scores", np.empty(0)),
        certificates=sel.diagnostics.get("certificates", []),
        score_gap=sel.diagnostics.get("score_gap"),
        solves=[dict(c) for c in sel.certificates])
    return res, diag


def _public_predictor(design):
    """What the result keeps of the design to predict: no rows, and no bound that was
    taken from the data (such a column is not clipped when predicting)."""
    derived = set(design.bounds_from_data)
    clip = {c: ((-math.inf, math.inf) if c in derived else lim)
            for c, lim in design.clip_limits.items()}
    x_b = np.array([math.nan if c in derived else b
                    for c, b in zip(design.candidate_names, design.x_bounds)])
    f_b = np.array([math.nan if c in derived else b
                    for c, b in zip(design.forced_names, design.forced_bounds)])
    return replace(design, X=np.empty((0, design.X.shape[1])), y=np.empty(0),
                   forced=np.empty((0, design.forced.shape[1])), clip_limits=clip,
                   x_bounds=x_b, forced_bounds=f_b, gram=None,
                   b_y=math.nan if design.response_name in derived else design.b_y)


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


def _report(stages, sel, design, *, seeded=False):
    eps_total = sum(st["eps"] for st in stages)
    delta_total = sum(st["delta"] for st in stages)
    if not design.bounds_public or design.leaks:
        kind = "void"
        statement = ("No differential privacy guarantee: " + "; ".join(design.leaks)
                     + ". Give public bounds (and explicit levels) to fix this.")
    elif sel.guarantee == "conditional":
        kind = "conditional"
        statement = f"Total eps = {eps_total:.4g}; the selection is " + sel.statement
    elif delta_total > 0 or sel.guarantee == "approximate":
        kind = "approximate"
        statement = f"({eps_total:.4g}, {delta_total:.3g})-differential privacy for the whole output."
    else:
        kind = "pure"
        statement = f"{eps_total:.4g}-differential privacy (pure) for the whole output."
    if sel.statement and kind in ("pure", "approximate"):
        statement += " " + sel.statement
    statement += " Neighbouring datasets differ by replacing one row."
    if seeded:
        statement += " " + SEEDED_NOTE
    assert kind in GUARANTEES
    # With bounds from the data, Delta is a statistic of the data: not kept.
    sensitivity = sel.sensitivity if design.bounds_public else None
    # Whether an exact search ran is a function of the method (only the exact methods
    # return certificates); which solves it needed, and how, depends on the data and
    # stays out of the report (NonPrivateDiagnostics.solves, verbose=True).
    return PrivacyReport(kind, statement, eps_total, delta_total, tuple(stages), NEIGHBOURS,
                         sensitivity, design.bounds_public, tuple(design.leaks),
                         exact_search=bool(sel.certificates),
                         gap_check_passed=sel.gap_check_passed, seeded=seeded)
