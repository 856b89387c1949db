"""R data frames into pandas frames: the conversions both ways into the package share.

rpy2 (an R ``data.frame`` passed as ``data`` to the Python API)
    :func:`maybe_from_r` turns an ``rpy2.robjects.vectors.DataFrame`` into a
    pandas DataFrame column by column (rpy2's pandas converter is not used, as it
    lags behind new pandas releases). rpy2 stays an optional dependency: it is
    imported only when such an object is passed.
reticulate (the R package in ``r-wrapper/``)
    :func:`frame_from_columns` builds the DataFrame from the raw column bytes the R
    side sends (see :mod:`dpsubset.interfaces.r_bridge`).

This module only converts data; it imports nothing else of the package. It sits in
design/, beside the readers of the other kinds of frame (:mod:`dpsubset.design.frames`),
so that the API and the R bridge both reach it in the direction of the stage order.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["maybe_from_r", "rpy2_to_pandas", "frame_from_columns"]


# ----------------------------------------------------------------------------- rpy2


def maybe_from_r(data):
    """Return ``data`` as a pandas DataFrame if it is an R data.frame from rpy2.

    Parameters
    ----------
    data : object
        Anything; only objects of rpy2's R ``data.frame`` class are converted.

    Returns
    -------
    object
        A pandas DataFrame for an rpy2 data.frame, ``data`` itself otherwise.

    Notes
    -----
    rpy2 is never imported here unless ``data`` comes from it (its type is
    checked by module name), so the package works without rpy2.
    """
    module = type(data).__module__ or ""
    if not module.startswith("rpy2"):
        return data
    from rpy2.robjects.vectors import DataFrame as RDataFrame

    if isinstance(data, RDataFrame):
        return rpy2_to_pandas(data)
    return data


def rpy2_to_pandas(df):
    """Convert an rpy2 R ``data.frame`` to pandas, column by column.

    Parameters
    ----------
    df : rpy2.robjects.vectors.DataFrame

    Returns
    -------
    pandas.DataFrame
        Numeric and integer columns as float64 (``NA`` -> NaN), logical columns
        as bool (object with None where ``NA``), character columns as object
        strings (None where ``NA``), factors as Categoricals with the R levels in
        order (``ordered`` kept). Row names are dropped (they are labels, not
        data).

    Raises
    ------
    TypeError
        For a column type the design cannot use (a list column, a matrix column).
    """
    from rpy2 import rinterface as ri
    from rpy2.robjects import vectors as rv

    cols = {}
    for name, col in zip(df.names, df):
        name = str(name)
        cls = tuple(col.rclass) if hasattr(col, "rclass") else ()
        if isinstance(col, rv.FactorVector):
            # the "levels" attribute itself (FactorVector.levels goes through a deprecated converter)
            levels = [str(v) for v in col.do_slot("levels")]
            codes = np.array([-1 if v is ri.NA_Integer else int(v) - 1 for v in col], dtype=np.int64)
            cols[name] = pd.Categorical.from_codes(codes, categories=levels, ordered="ordered" in cls)
        elif isinstance(col, rv.BoolVector):
            vals = [None if v is ri.NA_Logical else bool(v) for v in col]
            cols[name] = _bool_column(vals)
        elif isinstance(col, rv.IntVector):
            if "Date" in cls or "POSIXct" in cls:
                raise TypeError(f"data: column {name!r} is an R {cls[0]}; convert it to numbers first")
            cols[name] = np.array([np.nan if v is ri.NA_Integer else float(v) for v in col], dtype=float)
        elif isinstance(col, rv.FloatVector):
            if "Date" in cls or "POSIXct" in cls:
                raise TypeError(f"data: column {name!r} is an R {cls[0]}; convert it to numbers first")
            # NA_real_ is a NaN: the array keeps it as NaN.
            cols[name] = np.array(col, dtype=float)
        elif isinstance(col, rv.StrVector):
            cols[name] = pd.Series([None if v is ri.NA_Character else str(v) for v in col], dtype=object)
        else:
            raise TypeError(f"data: column {name!r} of the R data.frame has R class {'/'.join(cls) or '?'}, "
                            "which dpsubset cannot use; convert it to a numeric, logical, character or "
                            "factor column")
    n = int(df.nrow)
    frame = pd.DataFrame({k: (v.to_numpy() if isinstance(v, pd.Series) else v) for k, v in cols.items()},
                         index=pd.RangeIndex(n))
    return frame


def _bool_column(vals):
    if any(v is None for v in vals):
        return pd.Series(vals, dtype=object).to_numpy()
    return np.array(vals, dtype=bool)


# ----------------------------------------------------------------------------- reticulate


def _bytes(b):
    return bytes(b) if b is not None else b""


def _strings(spec):
    """Decode a string vector sent by the R side: UTF-8 bytes plus int32 byte lengths."""
    lengths = np.frombuffer(_bytes(spec["lengths"]), dtype="<i4")
    blob = _bytes(spec["data"])
    out, pos = [], 0
    for k in lengths.tolist():
        out.append(blob[pos:pos + k].decode("utf-8"))
        pos += k
    if pos != len(blob):
        raise ValueError("R bridge: string lengths do not add up to the data sent")
    na = spec.get("na")
    if na is not None:
        mask = np.frombuffer(_bytes(na), dtype=np.uint8).astype(bool)
        out = [None if m else v for v, m in zip(out, mask)]
    return out


def frame_from_columns(cols):
    """Build a pandas DataFrame from the column specs sent by the R wrapper.

    Parameters
    ----------
    cols : dict
        ``names``: a string spec (see below) of the column names; ``columns``: a
        list with one dict per column, with key ``kind`` and:

        - ``"double"``: ``data``, float64 little-endian bytes (NA is NaN);
        - ``"logical"``: ``data``, int32 bytes (0, 1, or R's NA_integer_);
        - ``"factor"``: ``codes``, int32 bytes (1-based, NA_integer_ for NA),
          ``levels`` (a string spec) and ``ordered`` (bool);
        - ``"character"``: ``strings`` (a string spec with an NA mask).

        A string spec is a dict with ``data`` (UTF-8 bytes of the strings one
        after another), ``lengths`` (int32 bytes: byte length of each) and
        optionally ``na`` (one byte per string, 1 for NA).

    Returns
    -------
    pandas.DataFrame
    """
    names = _strings(cols["names"])
    specs = list(cols["columns"])
    if len(names) != len(specs):
        raise ValueError("R bridge: column names and columns differ in number")
    n = int(cols["nrow"])
    out = {}
    na_int = np.iinfo(np.int32).min
    for name, spec in zip(names, specs):
        kind = spec["kind"]
        if kind == "double":
            v = np.frombuffer(_bytes(spec["data"]), dtype="<f8").astype(float)
        elif kind == "logical":
            raw = np.frombuffer(_bytes(spec["data"]), dtype="<i4")
            v = _bool_column([None if x == na_int else bool(x) for x in raw.tolist()]) \
                if (raw == na_int).any() else raw.astype(bool)
        elif kind == "factor":
            codes = np.frombuffer(_bytes(spec["codes"]), dtype="<i4").astype(np.int64)
            codes = np.where(codes == na_int, -1, codes - 1)
            levels = _strings(spec["levels"])
            v = pd.Categorical.from_codes(codes, categories=levels, ordered=bool(spec.get("ordered", False)))
        elif kind == "character":
            v = pd.Series(_strings(spec["strings"]), dtype=object).to_numpy()
        else:
            raise ValueError(f"R bridge: unknown column kind {kind!r}")
        if len(v) != n:
            raise ValueError(f"R bridge: column {name!r} has {len(v)} values, expected {n}")
        out[name] = v
    return pd.DataFrame(out, index=pd.RangeIndex(n))
