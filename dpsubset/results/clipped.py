"""Which rows of new data a prediction clips to the public (or released) boxes.

One job: count, by column, the rows of ``newdata`` that :meth:`DesignSpec.transform_new`
clips, so that :meth:`dpsubset.results.results.DPSubsetResults.predict` can warn
(``PredictionClippedWarning``) with column names and counts, never values.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

__all__ = ["clipped_rows"]


def clipped_rows(spec, frame):
    """Rows of ``frame`` that ``spec.transform_new`` clips: {column: count} and the row total.

    A data column is clipped to its raw interval (the codebook's entry for a column
    that a transform reads, ``raw_limits``) or, when it is itself a model column, to
    its clip interval. A derived column (``I(wt ** 2)``, ``wt:hp``) is then clipped to
    its own interval: from interval arithmetic on the raw ones it holds the raw-clipped
    values already, but a tighter interval the codebook gives the term itself can clip
    more (:func:`_derived_outside`). Intervals taken from the data are infinite in a
    result's spec: nothing is counted against them, so the count says nothing about the
    training data.
    """
    limits = {}
    for name in spec.rhs_variables:   # in the formula's order
        if name in spec.raw_limits or name in spec.clip_limits:
            limits[name] = spec.raw_limits.get(name, spec.clip_limits.get(name))
    counts, outside = {}, np.zeros(len(frame), dtype=bool)
    for name, (lo, hi) in limits.items():
        if name not in frame.columns or not pd.api.types.is_numeric_dtype(frame[name]) \
                or pd.api.types.is_bool_dtype(frame[name]):
            continue
        col = frame[name].to_numpy(dtype=float)
        off = (col < lo) | (col > hi)   # NaN compares False: not clipped
        if off.any():
            counts[name] = int(off.sum())
            outside |= off
    for name, off in _derived_outside(spec, frame).items():
        counts[name] = int(off.sum())
        outside |= off
    return counts, int(outside.sum())


def _derived_outside(spec, frame):
    """{derived column: rows outside its interval}, computed on the raw-clipped data.

    The model matrix is built once more with the same spec but open intervals and no
    map (so nothing is clipped after the raw clip). A transform undefined on some row
    (its value is placed in the interval, not clipped) makes that build refuse: then
    no derived column is counted.
    """
    import math
    from dataclasses import replace

    names = spec.forced_names + spec.candidate_names
    derived = [j for j, nm in enumerate(names) if nm not in spec.rhs_variables and nm != "Intercept"
               and any(math.isfinite(v) for v in spec.clip_limits.get(nm, (-np.inf, np.inf)))]
    if spec.model_spec is None or not derived or len(frame) == 0:
        return {}
    opened = replace(spec, clip_limits={k: (-np.inf, np.inf) for k in spec.clip_limits},
                     column_maps={k: (0.0, 1.0) for k in spec.column_maps})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            M = opened.transform_new(frame)
    except ValueError:
        return {}
    out = {}
    for j in derived:
        lo, hi = spec.clip_limits[names[j]]
        off = (M[:, j] < lo) | (M[:, j] > hi)
        if off.any():
            out[names[j]] = off
    return out
