"""The refit of one release: objective perturbation on the released support of a design.

:func:`refit_support` is the refit stage's door for ``dp_best_subset``: it takes the
design (its private rows, or on the Gram route its sufficient statistics) and the
released columns, and runs the refit the settings ask for:

- pure (the default): the exact-grid objective perturbation
  (:mod:`dpsubset.refit.exact_grid`), whose guarantee survives floating point, on the
  rows or on the sufficient statistics;
- ``delta > 0``: the Gaussian variant (:mod:`dpsubset.refit.objective`), drawn in
  floating point (the report says so).

It spends nothing itself: the caller records the returned ``eps`` and ``delta`` in its
ledger, with the refit's mode. Its public settings are one :class:`RefitSpec`, which the
inference stage's bootstrap reads too (it reruns the same refit).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .exact_grid import objective_perturbation_exact, objective_perturbation_gram_exact
from .objective import objective_perturbation, objective_perturbation_gram

__all__ = ["RefitSpec", "refit_support"]


@dataclass(frozen=True)
class RefitSpec:
    """The public settings of one release's refit, fixed once its support is released.

    Attributes
    ----------
    loss : str
        The loss (the Gram route is least squares only).
    eps : float
        The refit's budget.
    row_bound : float
        Public bound of one row's norm over the refit's columns
        (:func:`dpsubset.privacy.sensitivity.support_row_bound`).
    r : float
        The refit's ball.
    delta : float
        0: the pure, exact-grid refit; > 0: the Gaussian variant.
    ridge : float or None
        A ridge floor (``Ball(lam_refit=...)``; not on the Gram route, not with inference).
    loss_options : dict
        The loss's public parameters (``huber_h``, ``hinge_h``).
    """

    loss: str
    eps: float
    row_bound: float
    r: float
    delta: float = 0.0
    ridge: float | None = None
    loss_options: dict = field(default_factory=dict)


def refit_support(design, support_idx, spec, *, rng):
    """Private coefficients on the released columns of ``design`` (mapped units).

    Parameters
    ----------
    design : dpsubset.design.build.Design
        The rows the refit may read (all of them, or the refit's part with ``split=True``);
        on the Gram route (``design.gram`` set) only its sufficient statistics are read.
    support_idx : sequence of int
        The released candidate columns; the always-in columns come first.
    spec : RefitSpec
        The refit's public settings.
    rng : numpy.random.Generator

    Returns
    -------
    dpsubset.refit.objective.RefitResult
    """
    if design.gram is not None:
        return _from_gram(design, support_idx, eps=spec.eps, row_bound=spec.row_bound, r=spec.r, rng=rng,
                          delta=spec.delta)
    A = np.hstack([design.forced, design.X[:, support_idx]])
    common = dict(loss=spec.loss, eps=spec.eps, row_bound=spec.row_bound, b_y=design.b_y, r=spec.r, rng=rng,
                  ridge=spec.ridge, **spec.loss_options)
    return (objective_perturbation(A, design.y, delta=spec.delta, **common) if spec.delta
            else objective_perturbation_exact(A, design.y, **common))


def _from_gram(design, support_idx, *, eps, row_bound, r, rng, delta):
    """The squared-loss refit from ``design.gram``: the released columns' block of the
    Gram matrix, with the entries' rounding errors for the certificate."""
    stats = design.gram
    k = stats.k_forced
    idx = np.concatenate([np.arange(k), k + np.asarray(support_idx, dtype=np.intp)]).astype(np.intp)
    bounds = np.concatenate([design.forced_bounds, design.x_bounds, [design.b_y]])
    err = stats.entry_error(bounds)
    args = (stats.G[np.ix_(idx, idx)], stats.Zty[idx], stats.n)
    entry_error = (err[np.ix_(idx, idx)], err[idx, -1])
    if not delta:  # pure: the exact-grid refit, whose guarantee survives floating point
        return objective_perturbation_gram_exact(*args, eps=eps, row_bound=row_bound, b_y=design.b_y, r=r,
                                                 rng=rng, entry_error=entry_error)
    return objective_perturbation_gram(*args, eps=eps, row_bound=row_bound, b_y=design.b_y, r=r, rng=rng,
                                       delta=delta, entry_error=entry_error)
