"""The inference columns of ``tidy()`` and ``glance()``, named as broom names them.

A fit made with ``dp_best_subset(..., inference=True)`` releases standard errors,
intervals, and p-values and statistics that invert the intervals, and (with top-R or the
exponential mechanism) a selection confidence (docs/guide/inference.md). ``tidy()``
then carries broom's ``std.error``, ``statistic``, ``p.value`` and, on request,
``conf.low`` and ``conf.high`` (Robinson, Hayes and Couch 2023, broom's column
names, which table packages such as modelsummary read); ``glance()`` carries the
eps spent on inference and the selection confidence.

A fit without private inference has none of these columns: a column of NaN would
look like a result. Asking for the intervals explicitly (``tidy(conf_int=True)``)
raises :class:`~dpsubset.NotReleasedError`, which says how to get them, as
``res.conf_int()`` does. Everything here is read from released quantities only.
"""
from __future__ import annotations

import math

import numpy as np

from ..privacy.budget import Stage
from ..privacy.leaks import NotReleasedError

__all__ = ["TIDY_INFERENCE", "TIDY_INTERVAL", "GLANCE_INFERENCE", "check_tidy_args", "tidy_inference",
           "glance_inference"]

#: Columns ``tidy()`` adds after ``estimate`` when the fit released its uncertainty.
TIDY_INFERENCE = ("std.error", "statistic", "p.value")
#: Columns ``tidy(conf_int=True)`` adds after them.
TIDY_INTERVAL = ("conf.low", "conf.high")
#: Columns ``glance()`` adds when the fit spent eps on inference (the ``selection_conf_*``
#: ones only when a selection confidence was released).
GLANCE_INFERENCE = ("eps_inference", "inference_mode", "ball_binds", "truth_in_ball", "selection_conf_low", "selection_conf_high",
                    "selection_conf_level", "selection_verdict")


def check_tidy_args(conf_int, conf_level):
    """Check ``conf_int=`` and ``conf_level=`` of ``tidy()`` before any work."""
    if not isinstance(conf_int, (bool, np.bool_)):
        raise TypeError(f"conf_int: expected True or False; got {conf_int!r}")
    if isinstance(conf_level, (bool, np.bool_)) or not isinstance(conf_level, (int, float, np.floating)) \
            or not 0.0 < float(conf_level) < 1.0:
        raise ValueError(f"conf_level: expected a number strictly between 0 and 1 (e.g. 0.95); "
                         f"got {conf_level!r}")


def tidy_inference(res, terms, conf_int=False, conf_level=0.95):
    """{column: values over ``terms``} of the released uncertainty, in broom's order.

    Parameters
    ----------
    res : DPSubsetResults
    terms : list of str
        The rows of ``tidy()``.
    conf_int : bool
        Add ``conf.low`` and ``conf.high``.
    conf_level : float in (0, 1)

    Returns
    -------
    dict
        Empty when the fit released no standard errors and no interval was asked for;
        NaN for the terms the refit did not estimate (not selected), as in ``res.bse``.

    Raises
    ------
    NotReleasedError
        ``conf_int=True`` on a fit without private intervals: the message says how to
        get them (``inference=True``).
    """
    check_tidy_args(conf_int, conf_level)
    if getattr(res, "inference", None) is None:
        if conf_int:
            try:
                res.conf_int   # the withheld attribute's own reason
            except NotReleasedError as exc:
                raise NotReleasedError(f"res.tidy(conf_int=True): {exc}") from None
        return {}
    out = {
        "std.error": res.bse.reindex(terms).to_numpy(dtype=float),
        "statistic": res.tvalues.reindex(terms).to_numpy(dtype=float),
        "p.value": res.pvalues.reindex(terms).to_numpy(dtype=float),
    }
    if conf_int:
        ci = res.conf_int(alpha=1.0 - float(conf_level)).reindex(terms)
        out["conf.low"] = ci[0].to_numpy(dtype=float)
        out["conf.high"] = ci[1].to_numpy(dtype=float)
    return out


def glance_inference(res):
    """{column: value} that ``glance()`` adds for a fit with private inference (else empty).

    ``eps_inference`` (the eps of the inference stages, composed as the release is:
    with ``split=True`` the larger of the two parts' totals), ``inference_mode``
    (``"conditional"``, ``"split"``, or None when no intervals were released, e.g. for
    the hinge loss), ``ball_binds`` (the released coefficients lie on the sphere of the
    refit's ball; None without intervals), ``truth_in_ball`` (the user stated that the true
    coefficients lie inside that ball, so the intervals of a release on its sphere assume
    it; None without intervals) and, when a selection confidence was released, its bounds on the
    probability that the mechanism releases the best-scoring support
    (``selection_conf_low``, ``selection_conf_high``), their joint level and the
    verdict in words (``selection_verdict``).
    """
    stages = [(str(st.get("stage", "")), float(st["eps"])) for st in res.privacy.stages
              if str(st.get("stage", "")).startswith("inference")]
    if not stages:
        return {}
    # Accounted as the release is: basic composition within a part of the rows and, with
    # split=True, the larger part's total (the confidence reads the selection's rows, the
    # second moments the refit's; parallel composition), not the sum of the two.
    split = getattr(res.privacy, "split", None) is not None
    parts = {}
    for stage, eps in stages:
        part = Stage(stage).rows if split else "all rows"
        parts.setdefault(part, []).append(eps)
    inf = getattr(res, "inference", None)
    row = dict(eps_inference=max(math.fsum(v) for v in parts.values()),
               inference_mode=None if inf is None else str(inf.mode),
               ball_binds=None if inf is None else bool(inf.on_sphere),
               truth_in_ball=None if inf is None else bool(inf.truth_in_ball))
    conf = getattr(res, "_selection_confidence", None)
    if conf is not None:
        row.update(selection_conf_low=float(conf.prob_lower), selection_conf_high=float(conf.prob_upper),
                   selection_conf_level=float(conf.level), selection_verdict=str(conf.statement))
    return row
