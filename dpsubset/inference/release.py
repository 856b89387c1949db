"""The inference stages of a release, as ``dp_best_subset`` calls them (Steps 4b and 5b).

:func:`coefficient_inference`: the noisy second moments of the released support
(:mod:`~dpsubset.inference.moments`), the simulation model they give, and the parametric
bootstrap of the release's own refit (:mod:`~dpsubset.inference.bootstrap`), kept as a
:class:`~dpsubset.inference.intervals.CoefficientInference`. :func:`confidence_of_selection`:
the selection confidence (:mod:`~dpsubset.inference.confidence`). Each spends its part of
the plan from the ledger.
"""
from __future__ import annotations

import numpy as np

from ..refit.objective import objective_perturbation, objective_perturbation_gram
from . import bootstrap
from .bootstrap import bootstrap_refits
from .confidence import selection_confidence
from .fast_refit import BootstrapRefit
from .intervals import CoefficientInference, to_user_units
from .moments import release_second_moments, simulation_model

__all__ = ["refit_callable", "support_moments", "coefficient_inference", "confidence_of_selection"]

MOMENTS_MECHANISM = "Laplace noise on [X_S, y]'[X_S, y] (sufficient statistics perturbation)"
CONFIDENCE_MECHANISM = "Laplace noise on the log-odds of releasing the best-scoring support"


def refit_callable(*, loss, n, eps, row_bound, b_y, r, delta, loss_options):
    """The release's refit with its public settings, as ``refit(A, y, rng) -> coef``.

    For least squares the closed form from A'A and A'y
    (:func:`~dpsubset.refit.objective.objective_perturbation_gram`, the same mechanism and
    the same noise as the matrix route), otherwise :func:`objective_perturbation` itself.
    """
    if loss == "squared":
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


def coefficient_inference(design, support_idx, used_cols, *, coef_mapped, loss, loss_options, eps,
                          eps_refit, refit_delta, row_bound, r, rng, ledger, mode="conditional",
                          draws=None):
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
    loss, loss_options : str, dict
    eps : float
        Budget of the second moments.
    eps_refit, refit_delta, row_bound, r : float
        The refit's public settings, which the bootstrap reruns.
    rng : numpy.random.Generator
    ledger : BudgetLedger
    mode : {"conditional", "split"}
    draws : int, optional
        Bootstrap refits; default :data:`dpsubset.inference.bootstrap.DEFAULT_DRAWS`,
        read at call time (bench/coverage.py sets it to state a cheaper run).

    Returns
    -------
    CoefficientInference
    """
    draws = bootstrap.DEFAULT_DRAWS if draws is None else int(draws)
    ZtZ, bounds = support_moments(design, support_idx)
    moments = release_second_moments(ZtZ, design.n, bounds, eps=eps, rng=rng)
    ledger.spend("inference: second moments", MOMENTS_MECHANISM, eps, 0.0)
    # post-processing only from here on
    spec = design.spec
    model = simulation_model(moments, coef=coef_mapped, intercept=bool(spec.has_intercept),
                             x_bounds=bounds[:-1], b_y=design.b_y,
                             response="binary" if loss == "logistic" else "gaussian")
    # the bootstrap's refits are never released: the same mechanism without the rounding
    # certificate, many draws at once (inference/fast_refit.py)
    refit = BootstrapRefit(loss=loss, n=design.n, eps=eps_refit, row_bound=row_bound, b_y=design.b_y,
                           r=r, delta=refit_delta, loss_options=loss_options, start=model.coef)
    thetas = bootstrap_refits(model, design.n, bounds[:-1], design.b_y, refit, draws=draws, rng=rng)
    # where the ball binds the errors' tails are the projection's (intervals.py)
    sphere_share = float(np.mean(_on_sphere(thetas, r)))
    errors = to_user_units(spec, used_cols, thetas) - to_user_units(spec, used_cols, model.coef[None])[0]
    estimate = to_user_units(spec, used_cols, np.asarray(coef_mapped, dtype=float)[None])[0]
    return CoefficientInference(
        names=list(used_cols), estimate=estimate, errors=errors, eps=float(eps), mode=mode,
        estimate_mapped=np.asarray(coef_mapped, dtype=float), errors_mapped=thetas - model.coef,
        sphere_share=sphere_share,
        on_sphere=bool(_on_sphere(np.asarray(coef_mapped, dtype=float), r)),
        method=(f"parametric bootstrap of the refit ({int(draws)} refits on data simulated from "
                f"private second moments; Ferrando, Wang and Sheldon 2022)"))


def _on_sphere(theta, r):
    """Whether each coefficient vector (the last axis) lies on the sphere of radius r. The
    output noise of the iterative losses (about 1e-8 r) may move a point on it a little."""
    return np.linalg.norm(theta, axis=-1) >= r * (1.0 - 1e-6)


def confidence_of_selection(sel, *, eps, eps_mech, p, s, rng, ledger, method="top_r"):
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
    """
    scores = np.sort(np.asarray(sel.diagnostics.get("candidate_scores", []), dtype=float))
    conf = selection_confidence(scores, eps_mech=eps_mech, Delta=sel.sensitivity, p=p, s=s, eps=eps,
                                rng=rng, outside_as_last=method == "top_r")
    ledger.spend("inference: selection confidence", CONFIDENCE_MECHANISM, eps, 0.0)
    return conf
