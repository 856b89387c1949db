"""The inference stages of a release, as ``dp_best_subset`` calls them (Steps 4b and 5b).

:func:`coefficient_inference`: the noisy second moments of the released support
(:mod:`~dpsubset.inference.moments`), the simulation model they give, and the parametric
bootstrap of the release's own refit (:mod:`~dpsubset.inference.bootstrap`), kept as a
:class:`~dpsubset.inference.intervals.CoefficientInference`. :func:`confidence_of_selection`:
the selection confidence (:mod:`~dpsubset.inference.confidence`). Each spends its part of
the plan from the ledger.
"""
from __future__ import annotations

import functools

import numpy as np

from ..mechanisms import noise
from ..refit.exact_grid import objective_perturbation_exact, objective_perturbation_gram_exact
from ..refit.objective import objective_perturbation, objective_perturbation_gram
from . import bootstrap
from .bootstrap import InferenceTimeout, bootstrap_moment_fits, bootstrap_refits, check_deadline
from .confidence import selection_confidence
from .fast_refit import BootstrapRefit
from .intervals import BeyondTheBall, CoefficientInference, to_user_units
from .moments import (NoisyMoments, gram_from_moments, least_squares_from_moments, release_second_moments,
                      simulation_model, symmetric_laplace)
from ..privacy.budget import Stage
from .budget import residual_part
from .prediction import RESIDUAL_MECHANISM, release_residual_variance
from ..losses import is_least_squares, loss_class

__all__ = ["refit_callable", "support_moments", "coefficient_inference", "confidence_of_selection"]

MOMENTS_MECHANISM = "Laplace noise on [X_S, y]'[X_S, y] (sufficient statistics perturbation)"
CONFIDENCE_MECHANISM = "Laplace noise on the log-odds of releasing the best-scoring support"


def refit_callable(*, loss, n, eps, row_bound, b_y, r, delta, loss_options):
    """The release's refit with its public settings, as ``refit(A, y, rng) -> coef``.

    The mechanism :func:`dpsubset.api.dp_best_subset` releases: the exact-grid refit when
    pure (``delta = 0``, :mod:`dpsubset.refit.exact_grid`), the Gaussian variant otherwise;
    for least squares from A'A and A'y (the same mechanism and noise as the matrix route).
    """
    if not delta:
        if is_least_squares(loss):
            def refit(A, y, rng):
                return objective_perturbation_gram_exact(A.T @ A, A.T @ y, n, eps=eps, row_bound=row_bound,
                                                         b_y=b_y, r=r, rng=rng).coef
        else:
            def refit(A, y, rng):
                return objective_perturbation_exact(A, y, loss=loss, eps=eps, row_bound=row_bound, b_y=b_y,
                                                    r=r, rng=rng, **loss_options).coef
    elif is_least_squares(loss):
        def refit(A, y, rng):
            return objective_perturbation_gram(A.T @ A, A.T @ y, n, eps=eps, row_bound=row_bound,
                                               b_y=b_y, r=r, rng=rng, delta=delta).coef
    else:
        def refit(A, y, rng):
            return objective_perturbation(A, y, loss=loss, eps=eps, row_bound=row_bound, b_y=b_y,
                                          r=r, rng=rng, delta=delta, **loss_options).coef
    return refit


def support_moments(design, support_idx):
    """Exact ``Z'Z`` of ``Z = [forced, X_S, y]`` and the public bounds of Z's columns.

    Reads the rows, or on the Gram route the matching block of the sufficient statistics.
    """
    support_idx = np.asarray(support_idx, dtype=np.intp)
    bounds = np.concatenate([design.forced_bounds, design.x_bounds[support_idx], [design.b_y]])
    if design.gram is not None:
        k = design.gram.k_forced
        idx = np.concatenate([np.arange(k), k + support_idx, [design.gram.ZtZ.shape[0] - 1]])
        return design.gram.ZtZ[np.ix_(idx, idx)].copy(), bounds
    Z = np.hstack([design.forced, design.X[:, support_idx], design.y[:, None]])
    return Z.T @ Z, bounds


def coefficient_inference(design, support_idx, used_cols, *, coef_mapped, refit, eps, rng, ledger,
                          mode="conditional",
                          draws=None, truth_in_ball=False, deadline=None, eps_residual=None):
    """Private standard errors and intervals of the released coefficients.

    Parameters
    ----------
    design : Design
        The rows the refit used (all of them, or the refit's part with ``split=True``).
    support_idx : list of int
        The released candidate columns.
    used_cols : list of str
        Always-in columns, then the released ones (the refit's column order).
    coef_mapped : ndarray
        The released coefficients (mapped units).
    eps : float
        Budget of the second moments (the residual variance's part included).
    refit : dpsubset.refit.support.RefitSpec
        The refit's public settings, which the bootstrap reruns.
    rng : numpy.random.Generator
    ledger : BudgetLedger
    mode : {"conditional", "split"}
    truth_in_ball : bool
        The user states that the true coefficients lie inside the refit's ball: a release
        on the sphere then keeps the intervals of a truth inside it.
    draws : int, optional
        Bootstrap refits; default :data:`dpsubset.inference.bootstrap.DEFAULT_DRAWS`,
        read at call time (bench/coverage.py sets it to state a cheaper run).
    deadline : Deadline, optional
        The call's deadline (``time_limit``), checked before the moments and between the
        bootstrap's chunks.
    eps_residual : float, optional
        The residual variance's part of ``eps``, as the plan fixed it
        (:attr:`dpsubset.privacy.budget.BudgetPlan.eps_residual`); None: the default
        share (:func:`dpsubset.inference.budget.residual_part`).

    Returns
    -------
    CoefficientInference

    Raises
    ------
    InferenceTimeout
        The deadline passed: nothing of the stage is returned (a SearchTimeout; the
        message names the stage and public settings only).
    """
    draws = bootstrap.DEFAULT_DRAWS if draws is None else int(draws)
    try:
        return _coefficient_inference(design, support_idx, used_cols, coef_mapped=coef_mapped, refit_spec=refit,
                                      eps=eps, rng=rng, ledger=ledger, mode=mode, draws=draws,
                                      truth_in_ball=truth_in_ball, deadline=deadline, eps_residual=eps_residual)
    except InferenceTimeout as err:
        # the time spent depends on the data only through public sizes and the solver's steps;
        # the message says which limit and which public settings, never how far it got
        raise InferenceTimeout(
            f"time_limit = {deadline.limit:g} s ran out in the inference stage (inference=True: the "
            f"parametric bootstrap of the {refit.loss} refit, {draws} refits on n = {design.n} simulated rows); "
            f"nothing is released. Give a larger Search(time_limit=...), or inference=False "
            f"(docs/guide/inference.md, 'What it costs')", problem="inference") from err


def _coefficient_inference(design, support_idx, used_cols, *, coef_mapped, refit_spec, eps, rng, ledger, mode,
                           draws, truth_in_ball, deadline, eps_residual):
    """:func:`coefficient_inference`'s work (the deadline checked between its steps)."""
    loss, r = refit_spec.loss, refit_spec.r
    check_deadline(deadline)
    ZtZ, bounds = support_moments(design, support_idx)
    # least squares and Huber: a share for the residual variance of the observation intervals
    if eps_residual is None:  # a call outside dp_best_subset, which plans it
        eps_residual = residual_part(eps, loss)
    moments = release_second_moments(ZtZ, design.n, bounds, eps=eps - eps_residual, rng=rng)
    ledger.spend(Stage.MOMENTS, MOMENTS_MECHANISM, eps - eps_residual, 0.0)
    residual = None
    if eps_residual > 0:
        residual = release_residual_variance(ZtZ, coef_mapped, bounds[:-1], design.b_y, design.n,
                                             eps=eps_residual, rng=rng)
        ledger.spend(Stage.RESIDUAL, RESIDUAL_MECHANISM, eps_residual, 0.0)
    # post-processing only from here on
    spec = design.spec
    model_of = functools.partial(simulation_model, coef=coef_mapped, intercept=bool(spec.has_intercept),
                                 x_bounds=bounds[:-1], b_y=design.b_y,
                                 response=loss_class(loss).response_model)
    model = model_of(moments)
    # the bootstrap's refits are never released: the same mechanism without the rounding
    # certificate, many draws at once (inference/fast_refit.py)
    refit = BootstrapRefit(loss=loss, n=design.n, eps=refit_spec.eps, row_bound=refit_spec.row_bound,
                           b_y=design.b_y, r=r, delta=refit_spec.delta, loss_options=refit_spec.loss_options,
                           start=model.coef)
    # the errors are measured from what the refit estimates in the simulated world: for least
    # squares, least squares on its clipped rows (the same simulated data sets); for the other
    # losses the model's own coefficients (their estimands are not least squares'). The target
    # is the simulated world's, so the refits without the ball below keep it.
    if loss_class(loss).least_squares:
        thetas, target = bootstrap_refits(model, design.n, bounds[:-1], design.b_y, refit, draws=draws, rng=rng,
                                          deadline=deadline, least_squares=True)
    else:
        target = model.coef
        thetas = bootstrap_refits(model, design.n, bounds[:-1], design.b_y, refit, draws=draws, rng=rng,
                                  deadline=deadline)
    # where the ball binds the errors' tails are the projection's (intervals.py)
    coef_mapped = np.asarray(coef_mapped, dtype=float)
    tol = refit.sphere_tolerance(len(coef_mapped))
    sphere_share = float(np.mean(_on_sphere(thetas, r, tol)))
    on_sphere = bool(_on_sphere(coef_mapped, r, tol))
    beyond = None
    if on_sphere and not truth_in_ball:
        # the truth may lie beyond the sphere, on a ray from the release: the intervals
        # take the refit's errors without the ball, the ray's direction, and least squares
        # from the noisy moments for the end the ray leaves open (docs/methods/inference.md,
        # "When the release lies on the sphere")
        thetas = bootstrap_refits(model, design.n, bounds[:-1], design.b_y, refit.without_ball(),
                                  draws=draws, rng=rng, deadline=deadline)
        beyond = BeyondTheBall(_ray_directions(moments, model_of, refit, coef_mapped, bounds=bounds,
                                               b_y=design.b_y, intercept=bool(spec.has_intercept),
                                               rng=rng, deadline=deadline))
        if loss_class(loss).response_model == "gaussian":  # a linear model's coefficients: least squares estimates them
            far = least_squares_from_moments(moments.ZtZ, design.n, intercept=bool(spec.has_intercept),
                                             x_bounds=bounds[:-1])
            fits = bootstrap_moment_fits(model_of(moments, coef=far), design.n, bounds[:-1], design.b_y,
                                         moments.scale, draws=draws, rng=rng, deadline=deadline)
            beyond = BeyondTheBall(beyond.directions, far, fits - far)
    user = lambda t: to_user_units(spec, used_cols, t)
    errors = user(thetas) - user(target[None])[0]
    estimate = user(coef_mapped[None])[0]
    obs_noise = None
    if residual is not None:
        # a new observation's error: the released upper bound on the residual sd at the
        # released coefficients (prediction.py) times a standard normal
        obs_noise = residual.sd_upper * noise.normal(rng, draws)
    return CoefficientInference(
        obs_noise_mapped=obs_noise, response_bound=float(design.b_y),
        sampling_se=None if loss_class(loss).response_model != "gaussian" else _sampling_se(moments, model, spec, used_cols, bounds),
        names=list(used_cols), estimate=estimate, errors=errors, eps=float(eps), mode=mode,
        estimate_mapped=coef_mapped, errors_mapped=thetas - target,
        sphere_share=sphere_share, on_sphere=on_sphere, truth_in_ball=bool(truth_in_ball),
        beyond=None if beyond is None else beyond.user_units(spec, used_cols), beyond_mapped=beyond,
        method=(f"parametric bootstrap of the refit ({int(draws)} refits on data simulated from "
                f"private second moments; Ferrando, Wang and Sheldon 2022)"))


def _sampling_se(moments, model, spec, names, bounds):
    """Least squares' standard errors from the sampling noise alone, sqrt(diag(sigma^2
    (X'X)^{-1})), with X'X and sigma^2 from the noisy moments, in the user's units
    (post-processing): the scale of a selection's winner's curse (intervals.close_calls)."""
    G = gram_from_moments(moments.ZtZ, moments.n, intercept=model.intercept, x_bounds=bounds[:-1])
    C = max(model.sigma2, model.sigma2_floor) * np.linalg.inv(G)
    d = len(names)
    L = to_user_units(spec, names, np.eye(d)) - to_user_units(spec, names, np.zeros((1, d)))[0]
    return np.sqrt(np.maximum(np.einsum("ib,ij,jb->b", L, C, L), 0.0))


#: Draws of the ray's direction (each from the noisy moments with fresh noise of their law).
RAY_DRAWS = 200
#: Simulated rows per draw for the Hessian of a loss other than least squares.
RAY_ROWS = 2000


def _ray_directions(moments, model_of, refit, coef, *, bounds, b_y, intercept, rng, draws=RAY_DRAWS,
                    deadline=None):
    """Draws of the direction of the ray on which the truth may lie beyond the sphere.

    A release on the sphere minimises the perturbed objective over the ball; by its
    first-order condition the free minimiser (the ball lifted, the same noise) lies on the
    ray ``coef + t H^{-1} coef``, t >= 0, with H the objective's Hessian on the data. Every
    truth whose free refit lands on that ray gives the same release however far out it
    lies, and the noise moves the truth along the ray's side only through the free refit's
    error, which the intervals take from the bootstrap. So the ray's direction depends on
    the release and on H alone. H is private: it is read from the noisy second moments,
    ``2 X'X + Delta`` for least squares and, for the other losses, ``sum phi''(x'coef) x x'
    + Delta`` over rows simulated from them (the Hessian at the release: for a loss that
    is not quadratic the ray is its tangent). Each draw subtracts fresh noise of the
    moments' public Laplace law from them, so the draws spread as far as the moments
    leave H uncertain. Post-processing only.

    Returns
    -------
    ndarray, shape (draws, d)
        Directions in mapped units.
    """
    coef = np.asarray(coef, dtype=float)
    d = len(coef)
    eye = np.eye(d)
    Delta = refit.calibration(d).regularization
    draws_of_moments = moments.ZtZ - symmetric_laplace(rng, moments.scale, moments.ZtZ.shape[0], (int(draws),))
    if is_least_squares(refit.loss):  # all draws at once
        H = 2.0 * gram_from_moments(draws_of_moments, moments.n, intercept=intercept,
                                    x_bounds=bounds[:-1]) + Delta * eye
        return np.linalg.solve(H, np.broadcast_to(coef, (int(draws), d))[..., None])[..., 0]
    out = np.empty((int(draws), d))
    rows = min(moments.n, RAY_ROWS)
    for k, ZtZ in enumerate(draws_of_moments):
        check_deadline(deadline)
        model = model_of(NoisyMoments(ZtZ=ZtZ, n=moments.n, eps=moments.eps, sensitivity=moments.sensitivity))
        A, y = bootstrap.simulate_rows(model, rows, bounds[:-1], b_y, rng)
        H = (refit.hessian(A, y, coef) - Delta * eye) * (moments.n / rows) + Delta * eye
        out[k] = np.linalg.solve(H, coef)
    return out


def _on_sphere(theta, r, tol):
    """Whether each coefficient vector (the last axis) lies on the sphere of radius r, to
    within ``tol``: the refit's output noise may move a point on it a little
    (:meth:`~dpsubset.inference.fast_refit.BootstrapRefit.sphere_tolerance`)."""
    return np.linalg.norm(theta, axis=-1) >= r - tol


def confidence_of_selection(sel, *, eps, eps_mech, p, s, rng, ledger, method="top_r", released_names=None):
    """The selection confidence of a top-R (or exponential-mechanism) release.

    Parameters
    ----------
    sel : Selection
        Read through the log-odds of its top scores (inside the call only) and its
        public sensitivity.
    eps : float
        Budget of the noisy log-odds.
    eps_mech : float
        Budget the selection mechanism ran at.
    p, s : int
        The columns the mechanism chose among (after a screen) and the support size.
    rng, ledger
    method : {"top_r", "exponential"}
        For top-R every support outside its list is scored as the list's last; the
        exponential mechanism's list is a prefix of the ranking.
    released_names : list of str, optional
        The released support (top-R: its position in the list gives the free gap,
        :mod:`dpsubset.inference.confidence`).
    """
    raw = np.asarray(sel.diagnostics.get("candidate_scores", []), dtype=float)
    order = np.argsort(raw, kind="stable")
    scores = raw[order]
    released = None
    if method == "top_r" and released_names is not None:
        listed = [frozenset(sel.diagnostics["candidate_supports"][k]) for k in order]
        target = frozenset(released_names)
        released = listed.index(target) if target in listed else len(listed)
    conf = selection_confidence(scores, eps_mech=eps_mech, Delta=sel.sensitivity, p=p, s=s, eps=eps,
                                rng=rng, outside_as_last=method == "top_r", released=released)
    ledger.spend(Stage.CONFIDENCE, CONFIDENCE_MECHANISM, eps, 0.0)
    return conf
