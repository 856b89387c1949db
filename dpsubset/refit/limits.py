"""Whether a refit's public constants fit in floating point, before any data are read.

The pure refit is the exact-grid objective perturbation (:mod:`dpsubset.refit.exact_grid`),
whose noise and ridge scale as 1/eps and whose integer grid coordinates must stay below 2^52;
the Gaussian variant (:mod:`dpsubset.refit.objective`) shares the first limit.
"""
from __future__ import annotations

import numpy as np

from .._validation import FLOAT_LIMIT
from .exact_grid import grid_headroom
from .objective import largest_refit_constant

__all__ = ["check_refit_representable"]


def check_refit_representable(*, eps_refit, refit=True, loss, dim, row_bound, b_y, r, refit_delta=0.0,
                              loss_options=None, bounds_public=True):
    """Refuse a refit budget whose noise or ridge would overflow floating point.

    The scale of the refit's noise and ridge is proportional to 1/eps_refit, so the
    smallest workable eps_refit is ``eps_refit * scale / FLOAT_LIMIT`` at the current
    setting, and the message gives it (public inputs only).

    Parameters
    ----------
    eps_refit : float
    refit : bool
    loss : str
    dim : int
        Number of refit coefficients (always-in columns + s).
    row_bound, b_y, r : float
        Public bounds of the refit.
    refit_delta : float
    loss_options : dict
    bounds_public : bool
        False when some bound came from the data: the smallest workable eps_refit
        then depends on the data and is not shown.
    """
    if not refit or dim == 0:
        return
    scale = largest_refit_constant(loss, dim, eps=eps_refit, row_bound=row_bound, b_y=b_y, r=r,
                        delta=refit_delta, **(loss_options or {}))
    need = eps_refit * scale / FLOAT_LIMIT if np.isfinite(scale) else float("inf")
    if not refit_delta and np.isfinite(need):  # the exact-grid refit's integers stay below 2^52
        need = max(need, grid_headroom(loss, dim, eps=max(eps_refit, need), row_bound=row_bound, b_y=b_y, r=r,
                                       **(loss_options or {})))
    if need > eps_refit:
        where = (f"with these bounds, r and s the refit needs eps_refit >= {need:.3g}" if bounds_public
                 else "raise eps_refit")
        raise ValueError(
            f"eps_refit = {eps_refit:.3g} is too small to represent: the refit's noise and ridge "
            f"(proportional to 1/eps_refit) would overflow floating point; {where} (or refit=False)")
