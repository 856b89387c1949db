"""The inference stages' parts of eps, from the public settings (before any data are read).

``eps_inference`` (default :data:`DEFAULT_INFERENCE_SHARE` of eps) is shared between the
two inference stages that apply: the second moments of the intervals (least squares,
Huber and logistic) and the selection confidence (top-R and the exponential mechanism); when both apply
the confidence takes :data:`CONFIDENCE_SHARE` of it. Of the second moments' part, the
residual variance of the prediction intervals takes :data:`RESIDUAL_SHARE`
(:func:`residual_part`; least squares and Huber).
"""
from __future__ import annotations

from .._validation import check_positive
from ..losses import INTERVAL_LOSSES as _INTERVAL_LOSSES, loss_class

__all__ = ["DEFAULT_INFERENCE_SHARE", "CONFIDENCE_SHARE", "RESIDUAL_SHARE", "INTERVAL_LOSSES",
           "CONFIDENCE_METHODS", "inference_parts", "residual_part"]

#: Share of the total eps spent on inference when ``eps_inference`` is not given. Chosen
#: on the coverage benchmark (docs/benchmarks/coverage.md): the simulation model needs
#: only rough moments, and the refit keeps the larger part of the budget.
DEFAULT_INFERENCE_SHARE = 0.2
#: Share of ``eps_inference`` for the selection confidence when the intervals run too. The
#: noisy log-odds' margin is (eps_select / eps_confidence) ln 20 nats
#: (docs/methods/inference.md): at half of 0.2 eps against the default selection's 0.4 eps
#: it is 12 nats, while the moments only steer the simulation and need less.
CONFIDENCE_SHARE = 0.5
#: Share of the second moments' budget that goes to the residual variance (least squares
#: and Huber). The moments' noise on the residual sum of squares adds up over all their
#: entries, each of sensitivity up to (sum_j c_j)^2; one statistic of sensitivity
#: (b_y + sum_j |b_j| c_j)^2 is several times sharper at a quarter of the budget
#: (docs/benchmarks/prediction-coverage.md).
RESIDUAL_SHARE = 0.25
#: Losses with private intervals (the parametric bootstrap of the refit). Not the hinge:
#: its smoothed loss has no model of y given x to simulate from (docs/methods/inference.md).
INTERVAL_LOSSES = _INTERVAL_LOSSES
#: Selection methods with a selection confidence (their law is the exponential mechanism's).
CONFIDENCE_METHODS = ("top_r", "exponential")


def inference_parts(eps, eps_inference, *, loss, method, refit):
    """(eps of the second moments, eps of the selection confidence) of one call.

    Parameters
    ----------
    eps : float
        Total budget.
    eps_inference : float or None
        The user's ``eps_inference`` (None: the default share).
    loss, method : str
    refit : bool

    Returns
    -------
    (float, float)

    Raises
    ------
    ValueError
        When neither stage applies to the settings, naming what would; and for a refit
        whose loss has no intervals (the hinge), before any data are read.
    """
    if refit and loss not in INTERVAL_LOSSES:
        # its coefficients would come out without intervals while the call asked for them
        raise ValueError(
            f"inference=True with loss={loss!r}: the smoothed hinge loss is not a likelihood, so there "
            f"is no model of the response to simulate its coefficients' intervals from, and they would be "
            f"released without standard errors. For a two-class model with intervals use "
            f"loss='logistic'; for the support with its selection confidence alone use refit=False "
            f"(method in {CONFIDENCE_METHODS}); or set inference=False")
    intervals = refit and loss in INTERVAL_LOSSES
    confidence = method in CONFIDENCE_METHODS
    if not (intervals or confidence):
        raise ValueError(
            f"inference=True: no private inference is available for loss={loss!r}, method={method!r}"
            f"{'' if refit else ', refit=False'}: intervals need refit=True and loss in "
            f"{INTERVAL_LOSSES}, the selection confidence method in {CONFIDENCE_METHODS}")
    total = (DEFAULT_INFERENCE_SHARE * eps if eps_inference is None
             else check_positive("eps_inference", eps_inference))
    if total >= eps:
        raise ValueError(f"eps_inference = {total:g} must be smaller than eps = {eps:g} "
                         f"(the selection and the refit need the rest)")
    if intervals and confidence:
        return total * (1.0 - CONFIDENCE_SHARE), total * CONFIDENCE_SHARE
    return (total, 0.0) if intervals else (0.0, total)


def residual_part(eps_moments, loss):
    """The residual variance's part of the second moments' eps: :data:`RESIDUAL_SHARE` of it
    for least squares and Huber (their prediction intervals need a residual scale), 0 for
    logistic (a binary response has none)."""
    return RESIDUAL_SHARE * eps_moments if loss_class(loss).response_model == "gaussian" else 0.0
