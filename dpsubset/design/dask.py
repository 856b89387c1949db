"""Data beyond one machine: a Dask DataFrame reduced to the sufficient statistics of least squares.

``dp_best_subset(formula, ddf, ...)`` with a ``dask.dataframe.DataFrame`` (and through
it Parquet or CSV datasets on disk or on a cluster) never brings the rows together:

1. **The model is fixed without the data.** The formula is expanded on Dask's
   ``_meta_nonempty``, a two-row frame of made-up values with the columns' dtypes (it
   carries no data). That is only sound when nothing of the model would be learned
   from the data, which is what the privacy lint of :func:`dpsubset.design.build.build_design`
   checks: bounds for every column and the response, categorical levels fixed by a
   Categorical dtype with known categories or ``C(x, levels=[...])``, no stateful or
   row-mixing transforms. Anything it flags is refused here with the lint's reason,
   rather than learned from the data.
2. **Each partition is mapped and clipped** by that model (the same public clip
   intervals and maps as the pandas route), and reduced to its Gram matrix of
   [forced, X, y] (:class:`dpsubset.design.suffstats.SufficientStats`, blocked and
   compensated).
3. **The partitions' statistics are summed** in a binary tree of compensated sums, in
   one pass over the data, and the rest of ``dp_best_subset`` (scores, exact search,
   private release, refit) runs on the p x p result.

Least squares only: the other losses need the rows at every step of the search.
Dask is an optional dependency (``pip install 'dpsubset[dask]'``).
"""
from __future__ import annotations

import warnings

import numpy as np

from ..privacy.leaks import PrivacyLeakWarning
from .build import build_design
from .clip import _clip_raw, _fill_undefined, _rows
from .data import Design, DesignData
from .frames import _bad_rows
from .suffstats import GRAM_MAX_COLUMNS, SufficientStats
from ..losses import SquaredLoss

__all__ = ["is_dask_frame", "check_dask_request", "dask_design"]

#: What a Dask DataFrame can be used with.
DASK_LOSSES = (SquaredLoss.name,)
DASK_METHODS = ("top_r", "mistakes")


def is_dask_frame(data):
    """Whether ``data`` is a Dask DataFrame (without importing Dask)."""
    return type(data).__module__.startswith("dask.") and hasattr(data, "to_delayed") \
        and hasattr(data, "npartitions")


def check_dask_request(*, loss, method):
    """Refuse, before any work, what the Dask route cannot do (every search works on
    the Gram matrix the route builds, so ``search`` is not restricted)."""
    if loss not in DASK_LOSSES or method not in DASK_METHODS:
        raise ValueError(
            f"data: a Dask DataFrame is supported with loss in {DASK_LOSSES} and method in {DASK_METHODS} "
            f"(least squares from sufficient statistics); got loss={loss!r}, method={method!r}. "
            "For other losses or methods, compute on a sample that fits in memory (ddf.compute())")


def dask_design(formula, ddf, bounds, keep, *, context, stacklevel=2):
    """The :class:`dpsubset.design.data.Design` of a Dask DataFrame, holding only ``gram``.

    Parameters
    ----------
    formula, bounds, keep
        As in :func:`dpsubset.design.build.build_design`.
    ddf : dask.dataframe.DataFrame
    context : mapping
        The evaluation context captured at the entry point: where the formula looks up
        functions and constants (:func:`dpsubset.design.formula.capture_context`).
    stacklevel : int, default=2
        Stack level of the warnings (2: the caller of ``dask_design``).

    Raises
    ------
    ValueError
        When the model would have to learn something from the data (a bound, a
        categorical level, a stateful transform), or has more than
        ``GRAM_MAX_COLUMNS`` columns.
    """
    import dask

    # Dask's made-up rows with the columns' dtypes (no data); its second row may hold
    # missing values, which the design would refuse, so one row is used.
    meta = ddf._meta_nonempty.iloc[:1]
    unknown = [c for c in ddf.columns if str(ddf.dtypes[c]) == "category" and not ddf[c].cat.known]
    if unknown:
        raise ValueError(
            f"data: the categorical column(s) {unknown} of the Dask DataFrame have unknown categories: their "
            "levels would have to be learned from the data, which is not differentially private; fix: "
            "ddf[col] = ddf[col].cat.set_categories([...]) with the levels known in advance, or write "
            "C(col, levels=[...]) in the formula")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        template = build_design(formula, meta, bounds, keep, context=context, stacklevel=stacklevel + 1)
    if template.spec.leaks:
        raise ValueError(
            "data: with a Dask DataFrame the model must be fixed in advance, but "
            + "; ".join(template.spec.leaks)
            + ". Nothing is learned from a Dask DataFrame: give bounds for every column and the response "
            "(bounds=(b_x, b_y) or Bounds(...)), categorical levels through a Categorical dtype with known "
            "categories or C(x, levels=[...]), and only transforms with public constants")
    for w in caught:
        if not issubclass(w.category, PrivacyLeakWarning):
            warnings.warn(w.message, w.category, stacklevel=stacklevel)
    k, p = len(template.spec.forced_names), len(template.spec.candidate_names)
    if k + p > GRAM_MAX_COLUMNS:
        raise ValueError(f"formula: {k + p} model columns; a Dask DataFrame is supported up to "
                         f"{GRAM_MAX_COLUMNS} (the p x p Gram matrix is formed)")
    model = template.spec  # public only: the partitions are mapped by the spec, nothing else is sent
    parts = [dask.delayed(_partition_stats)(part, model) for part in ddf.to_delayed()]
    while len(parts) > 1:  # a binary tree of compensated merges
        parts = [dask.delayed(_merge)(*parts[i:i + 2]) if i + 1 < len(parts) else parts[i]
                 for i in range(0, len(parts), 2)]
    (stats,) = dask.compute(parts[0])
    if stats is None or stats.n == 0:
        raise ValueError("data: has no rows")
    return Design(spec=model, data=DesignData.empty(int(stats.n), p, k, gram=stats))


def _partition_stats(part, model):
    """Sufficient statistics of one partition, clipped and mapped by the public model
    (a :class:`dpsubset.design.spec.DesignSpec`)."""
    if len(part) == 0:
        return None
    try:
        Z = model.transform_new(part)
        y = _response(part, model)
    except ValueError as exc:
        raise ValueError(str(exc).replace("newdata:", "data (a Dask partition):", 1)) from None
    k = len(model.forced_names)
    return SufficientStats.from_arrays(Z[:, :k], Z[:, k:], y, k_forced=k)


def _response(part, model):
    """The response of one partition, clipped and mapped by the public model.

    As on the pandas route: missing values in the data are an error (input validation,
    naming the column and the number of rows); the raw columns of a transformed response
    are clipped to their public intervals first, and values the transform leaves
    undefined are placed by the same fixed rule (:func:`dpsubset.design.clip._fill_undefined`).
    """
    name = model.response_name
    raw = [name] if model.model_spec is None else sorted(
        v for v in model.model_spec.lhs.required_variables if v in part.columns)
    bad = {v: _bad_rows(part[v]) for v in raw}
    bad = {v: k for v, k in bad.items() if k}
    if bad:
        desc = ", ".join(f"{v!r} ({_rows(k)})" for v, k in bad.items())
        raise ValueError(f"newdata: missing or infinite values in the response's column{'s' if len(bad) > 1 else ''} "
                         f"{desc}; remove or impute them first")
    if model.model_spec is None:
        y = part[name].to_numpy(dtype=float)
    else:
        lhs = _clip_raw(part, model.raw_limits)
        mm = model.model_spec.lhs.get_model_matrix(lhs, context=dict(model.eval_context), na_action="ignore")
        y = _fill_undefined(np.array(mm.to_numpy(dtype=float)), [name], model.clip_limits, "newdata")[:, 0]
    lo, hi = model.clip_limits[name]
    c, h = model.column_maps[name]
    return (np.clip(y, lo, hi) - c) / h


def _merge(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a.merge(b)
