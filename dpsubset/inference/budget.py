"""The inference stages' parts of eps, from the public settings.

``eps_inference`` (default :data:`DEFAULT_INFERENCE_SHARE` of eps) is shared between the
two inference stages that apply: the second moments of the intervals (least squares,
Huber and logistic) and the selection confidence (top-R and the exponential mechanism);
when both apply the confidence takes :data:`CONFIDENCE_SHARE` of it.

With the default ``eps_inference`` the moments get more where the refit's rows are few
(:func:`moments_eps`, a function of the public n and eps only): their noise, relative to
their range, is about sensitivity / (n eps_m), and a simulation model from moments that
noisy makes the bootstrap overstate the error. The extra comes out of the refit's part,
never the selection's (docs/methods/inference.md, "The moments' part of eps").
"""
from __future__ import annotations

from .._validation import check_positive

__all__ = ["DEFAULT_INFERENCE_SHARE", "CONFIDENCE_SHARE", "INTERVAL_LOSSES", "CONFIDENCE_METHODS",
           "MOMENT_ROWS_EPS", "MOMENTS_MIN_ROWS_EPS", "MOMENTS_MAX_SHARE", "inference_parts", "moments_eps"]

#: Share of the total eps spent on inference when ``eps_inference`` is not given. Chosen
#: on the coverage benchmark (docs/benchmarks/coverage.md): the simulation model needs
#: only rough moments, and the refit keeps the larger part of the budget.
DEFAULT_INFERENCE_SHARE = 0.2
#: Share of ``eps_inference`` for the selection confidence when the intervals run too. The
#: noisy log-odds' margin is (eps_select / eps_confidence) ln 20 nats
#: (docs/methods/inference.md): at half of 0.2 eps against the default selection's 0.4 eps
#: it is 12 nats, while the moments only steer the simulation and need less.
CONFIDENCE_SHARE = 0.5
#: Losses with private intervals (the parametric bootstrap of the refit). Not the hinge:
#: its smoothed loss has no model of y given x to simulate from (docs/methods/inference.md).
INTERVAL_LOSSES = ("squared", "huber", "logistic")
#: Selection methods with a selection confidence (their law is the exponential mechanism's).
CONFIDENCE_METHODS = ("top_r", "exponential")
#: The n x eps the second moments aim for by default, n the rows the refit reads. Below a
#: few hundred the simulated design's spread is off by factors of 2-50 and the bootstrap's
#: intervals over-cover (docs/benchmarks/coverage.md).
MOMENT_ROWS_EPS = 750.0
#: The n x eps of the refit's rows below which the moments keep their fixed part: there the
#: refit's own noise fills the ball whatever the simulation model, and taking from it made
#: the intervals wider and more conservative (docs/benchmarks/coverage.md).
MOMENTS_MIN_ROWS_EPS = 2000.0
#: The most of eps the moments may take by default: with ``split=True`` from the refit's
#: rows (the refit keeps at least 0.7 eps there), without a split from the refit's half
#: of what the inference leaves (the refit keeps at least 0.3 eps of its 0.4 eps).
MOMENTS_MAX_SHARE = {True: 0.3, False: 0.2}


def moments_eps(n_refit, eps, floor=None, split=True):
    """Default eps of the second moments, from public numbers only.

    The moments read the refit's rows (all rows without a split), and their extra part
    comes out of the refit's, so it costs the refit some precision but leaves the
    selection as it was. The part is ``MOMENT_ROWS_EPS / n_refit`` (a fixed relative noise
    in the moments) between the fixed part (``floor``) and
    ``MOMENTS_MAX_SHARE[split] * eps``; where ``n_refit * eps`` is below
    :data:`MOMENTS_MIN_ROWS_EPS` it is the fixed part.

    Parameters
    ----------
    n_refit : int
        Rows the refit reads: n, or the refit's part with ``split=True`` (public: n is
        public under replace-one, and the split's sizes are functions of n).
    eps : float
        Total budget.
    floor : float, optional
        The fixed part (default ``(1 - CONFIDENCE_SHARE) * DEFAULT_INFERENCE_SHARE *
        eps``, 0.1 eps: the moments beside the confidence).
    split : bool
        Which cap applies (:data:`MOMENTS_MAX_SHARE`).

    Returns
    -------
    float

    Examples
    --------
    >>> round(moments_eps(500, 4.0), 6)   # n eps of the part 2000: the cap
    1.2
    >>> round(moments_eps(2500, 1.0), 6)  # 2500: 750 / 2500
    0.3
    >>> round(moments_eps(10000, 4.0), 6)  # 40,000: the fixed part
    0.4
    >>> round(moments_eps(1000, 1.0), 6)   # 1000: the refit's noise fills the ball
    0.1
    """
    if floor is None:
        floor = (1.0 - CONFIDENCE_SHARE) * DEFAULT_INFERENCE_SHARE * eps
    if n_refit * eps < MOMENTS_MIN_ROWS_EPS:
        return float(floor)
    return float(min(MOMENTS_MAX_SHARE[bool(split)] * eps, max(floor, MOMENT_ROWS_EPS / n_refit)))


def inference_parts(eps, eps_inference, *, loss, method, refit, n_refit=None, split=False):
    """(eps of the second moments, eps of the selection confidence) of one call.

    Parameters
    ----------
    eps : float
        Total budget.
    eps_inference : float or None
        The user's ``eps_inference`` (None: the default share).
    loss, method : str
    refit : bool
    n_refit : int, optional
        The public number of rows the refit reads (n, or the refit's part with
        ``split=True``). With the default ``eps_inference`` the moments then take
        :func:`moments_eps` (more where the rows are few; the extra comes out of the
        refit's part, never the selection's) and the confidence its usual part.

    Returns
    -------
    (float, float)

    Raises
    ------
    ValueError
        When neither stage applies to the settings, naming what would.
    """
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
    parts = ((total * (1.0 - CONFIDENCE_SHARE), total * CONFIDENCE_SHARE) if intervals and confidence
             else (total, 0.0) if intervals else (0.0, total))
    if n_refit is not None and eps_inference is None and intervals:
        parts = (moments_eps(n_refit, eps, floor=parts[0], split=split), parts[1])
    return parts
