"""Private correlation screening, DP-SIS (``method="dp_sis"``).

Swope, Khanna, Doldo, Roy and Raff (2024), Algorithm 1: score every candidate
column by |x_j' y| and release the k = s best with the canonical Lipschitz top-k
mechanism of Shekelyan and Loukides (their Appendix A, Algorithm 2).

Scores and their sensitivity under row replacement (public bounds)
------------------------------------------------------------------
The design has already clipped every candidate column to its public bound,
|x_ij| <= b_j, and the response to |y_i| <= b_y (interval bounds are mapped to
[-1, 1] first, then b = 1). Swope et al. centre and scale each column by statistics
of the data, which is not private; here nothing but public numbers is used, and
the columns are not centred (map them by public intervals to centre them).

Let f_j(D) = |sum_i x_ij y_i|. Replacing row i by (x', y') changes the inner sum
by x'_j y' - x_ij y_i, which lies in [-2 b_j b_y, 2 b_j b_y], and |.| is
1-Lipschitz, so

    |f_j(D) - f_j(D')| <= Delta_j = 2 b_j b_y      for every j.

(Swope et al.'s sensitivity 1 after scaling to [-1, 1] is for add/remove neighbours;
one-row replacement is twice that.) The mechanism works on the normalised scores
x_j = f_j / Delta_j, so that ||x(D) - x(D')||_inf <= 1.

The mechanism, its classes and its exact race are :mod:`dpsubset.mechanisms.lipschitz_top_k`
(shared with the private screen of :mod:`dpsubset.selection.screening`).

Guarantee: pure eps-DP under one-row replacement, with public bounds. Useful also
as a private screening step before best subset selection for very large p (the
budgets then add up: eps_screen + eps_select).
"""
from __future__ import annotations

import numpy as np

from ..._validation import is_real
from ...mechanisms.lipschitz_top_k import (GUARANTEE, canonical_loss, lipschitz_classes,  # noqa: F401
                                           sample_lipschitz_top_k)
from ...privacy.budget import Stage
from ..base import Selection, SelectionMethod, register_method
from ...losses import SquaredLoss

# the mechanism's names stay importable from here, where the method is
__all__ = ["sis_scores", "lipschitz_classes", "sample_lipschitz_top_k", "canonical_loss"]

_OPTIONS = ("gamma",)


def sis_scores(X, y, x_bounds, b_y):
    """Normalised scores |x_j' y| / (2 b_j b_y) (sensitivity 1 each under row replacement)."""
    X = np.asarray(X, dtype=float)
    f = np.abs(X.T @ np.asarray(y, dtype=float))
    return f / (2.0 * np.asarray(x_bounds, dtype=float) * float(b_y))


# --------------------------------------------------------------------------- method
def _validate(options, *, s, eps, loss):
    opts = dict(options)
    gamma = opts.pop("gamma", 0.5)
    for key in ("R", "eps0", "delta"):
        if key in opts:
            raise ValueError(f"{key} does not apply to method='dp_sis' (pure eps-DP Lipschitz "
                             "top-k; it has no R, gap test or delta); remove it")
    if opts:
        raise TypeError(f"method='dp_sis' got unknown options {sorted(opts)}; "
                        f"it takes {list(_OPTIONS)}")
    if (not is_real(gamma)
            or not 0.0 <= gamma < 1.0):
        raise ValueError(f"method_options['gamma'] must be a number in [0, 1) (default 0.5, "
                         f"the canonical loss), got {gamma!r}")
    return dict(gamma=float(gamma))


def _select(req) -> Selection:
    d = req.design
    x = sis_scores(d.X, d.y, d.x_bounds, d.b_y)
    support = sample_lipschitz_top_k(x, req.s, req.eps, req.rng, req.options["gamma"])
    # The intercept and keep= columns play no part in the screen (module docstring).
    req.ledger.spend(Stage.SELECTION, "DP-SIS: canonical Lipschitz top-k on |x_j'y| (sensitivity 2 b_j b_y)",
                     req.eps, 0.0, guarantee=GUARANTEE)
    return Selection(
        support=tuple(int(j) for j in support),
        sensitivity=1.0, certificates=[],
        diagnostics=dict(normalised_scores=x.copy(),
                         best_support=[d.spec.candidate_names[j] for j in np.argsort(-x, kind="stable")[:req.s]]))


register_method(SelectionMethod(
    name="dp_sis", select=_select, validate=_validate, losses=(SquaredLoss.name,),
    description="DP-SIS (Swope et al. 2024): |x_j'y| screening with the canonical Lipschitz "
                "top-k mechanism; pure eps-DP"))
