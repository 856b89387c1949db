"""Reading the user's frames: pandas, mappings of columns, polars and arrow.

One job: turn what the user passed as ``data`` (or ``newdata``) into a pandas frame with
string column names, check the columns the formula uses (missing or infinite values, text
columns that look numeric, odd dtypes), convert them where the formula needs it (integers
to float inside transforms, string dtypes to object) and read them in row blocks
(:class:`_FrameColumns`, :class:`_MatrixColumns`). Messages name columns and counts, never
values (:func:`_scrub_values` removes them from third-party texts).
"""
from __future__ import annotations

import ast
import re
from collections.abc import Mapping

import numpy as np
import pandas as pd

from .clip import _apply_limits, _fill_undefined, _limits, _row_blocks
from .formula import _INTERCEPT, _arg_given, _call_name, _resolve

__all__ = ["as_frame"]


def as_frame(data, argname="data"):
    if isinstance(data, pd.DataFrame):
        frame = data
    elif isinstance(data, Mapping):
        try:
            frame = pd.DataFrame(dict(data))
        except Exception as exc:
            raise TypeError(f"{argname}: could not make a DataFrame from the mapping ({exc}); "
                            "pass a pandas DataFrame") from exc
    elif hasattr(data, "to_pandas") and callable(data.to_pandas):
        frame = data.to_pandas()
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"{argname}: {type(data).__name__}.to_pandas() did not return a DataFrame")
    else:
        raise TypeError(
            f"{argname}: expected a pandas DataFrame (or a dict of columns); got {type(data).__name__}. "
            "A formula needs named columns: wrap arrays as pd.DataFrame(X, columns=[...])"
        )
    bad = [c for c in frame.columns.tolist() if not isinstance(c, str)]
    if bad:
        raise TypeError(f"{argname}: column names must be strings; got {bad[:5]!r}. Rename them, "
                        "e.g. data.columns = [f'x{j}' for j in range(data.shape[1])]")
    dup = sorted(set(frame.columns[frame.columns.duplicated()]))
    if dup:
        raise ValueError(f"{argname}: duplicate column names {dup}")
    return frame


def _bad_rows(s):
    bad = s.isna().to_numpy(dtype=bool)
    if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
        try:
            arr = s.to_numpy(dtype=float, na_value=np.nan)
            bad = bad | ~np.isfinite(arr)
        except (TypeError, ValueError):
            pass
    return int(bad.sum())


def _single_float_block(frame):
    """Whether all columns of ``frame`` are float64 in one pandas block: then
    ``frame.to_numpy()`` is a view of its memory, not a copy of the whole frame."""
    mgr = getattr(frame, "_mgr", None)  # pandas internals; without them, take the copying path
    return (getattr(mgr, "nblocks", None) == 1
            and all(isinstance(d, np.dtype) and d == np.float64 for d in frame.dtypes.tolist()))


def _check_finite_columns(frame, columns, argname):
    columns = list(columns)
    dtypes = dict(zip(frame.columns.tolist(), frame.dtypes.tolist()))
    plain = [c for c in columns if isinstance(dtypes[c], np.dtype) and dtypes[c].kind == "f"]
    counts = {}
    if plain:  # one vectorised pass over the plain float columns (the common case, and many of them)
        src = _FrameColumns(frame, plain)
        bad = np.zeros(len(plain), dtype=np.int64)
        for a, b in _row_blocks(src.n, len(plain)):  # in row blocks: no n x p temporary
            bad += (~np.isfinite(src.block(plain, a, b))).sum(axis=0)
        counts.update(zip(plain, bad.tolist()))
    # numpy integer and bool columns hold no missing or infinite values
    counts.update({c: 0 for c in columns if c not in counts and isinstance(dtypes[c], np.dtype)
                   and dtypes[c].kind in "iub"})
    counts.update({c: _bad_rows(frame[c]) for c in columns if c not in counts})
    counts = {c: counts[c] for c in columns if counts[c]}
    if counts:
        desc = ", ".join(f"{c!r} ({k} row{'s' if k != 1 else ''})" for c, k in counts.items())
        raise ValueError(
            f"{argname}: missing or infinite values in columns the formula uses: {desc}. "
            f"Remove or impute them first, e.g. {argname} = {argname}.replace([np.inf, -np.inf], np.nan)"
            f".dropna(subset={list(counts)})"
        )


def _scrub_values(text, frame, columns):
    """``text`` with every value of the used text columns replaced by ``<value>``.

    For error messages from formulaic, pandas or numpy, which may quote the data.
    Only on the error path (it scans the distinct values of each text column)."""
    for c in columns:
        s = frame[c]
        if pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
            continue
        for v in sorted({str(v) for v in pd.unique(s.dropna().astype(object))}, key=len, reverse=True):
            if v and v in text:  # whole tokens only, so that 'a' does not eat 'argument'
                text = re.sub(r"(?<!\w)" + re.escape(v) + r"(?!\w)", "<value>", text)
    return text


def _check_stray_strings(frame, columns, all_info, env_for=None):
    """A text column whose entries are mostly numbers is refused, naming the column
    and the number of entries that are not numbers: taken as a categorical variable
    it would get one level per distinct value, and the values would become names."""
    declared = set()
    for info in all_info:  # variables inside C(..., levels=[...]) have public levels
        body = info.tree.body if info.tree is not None else None
        if isinstance(body, ast.Call) and _call_name(body) == "C" and _arg_given(body, None, "levels"):
            declared.update(info.data_vars)
    # Dtypes first, from one Series: touching each column of a wide frame (p pandas
    # look-ups) cost seconds at p = 10,000 for columns that are plainly numeric.
    # Each distinct dtype is classified once (p = 50,000 float columns: one check, not
    # 50,000 pandas dtype tests).
    dtypes = dict(zip(frame.columns.tolist(), frame.dtypes.tolist()))
    not_text = {}
    for c in columns:
        dt = dtypes.get(c)
        if dt is None or c in declared:
            continue
        if dt not in not_text:
            not_text[dt] = (isinstance(dt, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(dt)
                            or pd.api.types.is_numeric_dtype(dt)
                            or not (pd.api.types.is_object_dtype(dt) or pd.api.types.is_string_dtype(dt)))
        if not_text[dt]:
            continue
        present = frame[c].dropna()
        if present.empty:
            continue
        counts = present.value_counts(sort=False)  # parse each distinct value once
        as_num = pd.to_numeric(pd.Series(counts.index, dtype=object), errors="coerce")
        numeric = int(counts.to_numpy()[as_num.notna().to_numpy()].sum())
        other = int(len(present) - numeric)
        if other and numeric > other:
            raise ValueError(
                f"data: column {c!r} looks numeric but {other} of its {len(present)} entries "
                f"{'is not a number' if other == 1 else 'are not numbers'} (the values are not shown); as text it would become a categorical variable "
                f"with a level per value. Fix the column first, e.g. data[{c!r}] = "
                f"pd.to_numeric(data[{c!r}], errors='coerce') and then drop or impute the missing rows")


def _integers_as_float(frame, all_info, eval_ctx):
    """Integer columns used inside transforms, as float64: integer arithmetic in a
    formula (``I(x * x)``) wraps around silently on overflow; float does not.

    Columns used only as they are, or only inside ``C(...)``/``hashed(...)`` (where
    their values are levels), are left alone."""
    with_calls = [info for info in all_info if info.tree is not None]
    if not with_calls:  # columns used as they are (no formulaic import on this path)
        return _as_float(frame, []), []
    from formulaic.transforms import TRANSFORMS

    env = dict(TRANSFORMS)
    env.update(eval_ctx)
    cast = set()
    for info in with_calls:
        body = info.tree.body
        if isinstance(body, ast.Call) and _resolve(body.func, env) in (TRANSFORMS["C"], TRANSFORMS["hashed"]):
            continue
        cast.update(v for v in info.data_vars if pd.api.types.is_integer_dtype(frame[v])
                    and not pd.api.types.is_bool_dtype(frame[v]))
    cast = sorted(cast)
    return _as_float(frame, cast), cast


def _text_as_object(frame, columns, dtypes):
    """Text columns with a pandas string dtype (``"string"``, pyarrow strings) as object
    columns, which formulaic encodes as categorical (it passes a string dtype through
    unencoded, and converting it to numbers would then quote a value in pandas' error)."""
    cols = [c for c in dict.fromkeys(columns) if isinstance(dtypes.get(c), pd.StringDtype)]
    if not cols:
        return frame
    out = frame.copy(deep=False)
    for c in cols:
        out[c] = out[c].astype(object)
    return out


def _as_float(frame, columns):
    if not columns:
        return frame
    out = frame.copy(deep=False)
    for v in columns:
        if v in out.columns and pd.api.types.is_integer_dtype(out[v]):
            out[v] = out[v].astype("float64")
    return out


class _ColumnSource:
    """Raw values of model-matrix columns, read in row blocks (``block``), so that clipping,
    mapping and the sufficient statistics never need more than one n x p array."""

    n = 0

    def block(self, names, a, b):  # pragma: no cover - interface
        raise NotImplementedError

    def absmax(self, names):
        """(names, max |value| of each column) in one blocked pass."""
        names = list(names)
        m = np.zeros(len(names))
        if names:
            for a, b in _row_blocks(self.n, len(names)):
                np.maximum(m, np.abs(self.block(names, a, b)).max(axis=0), out=m)
        return names, m.tolist()

    def count_nonfinite(self, names):
        """Column -> number of its non-finite values, for the columns ``names`` (blocked)."""
        names = list(names)
        k = np.zeros(len(names), dtype=np.int64)
        if names:
            for a, b in _row_blocks(self.n, len(names)):
                k += (~np.isfinite(self.block(names, a, b))).sum(axis=0)
        return dict(zip(names, k.tolist()))

    def copy_block(self, names, a, b, out):
        """Raw values of rows a:b of the columns ``names`` into ``out``."""
        out[...] = self.block(names, a, b)

    def fill_undefined(self, clip_limits, learned):
        """Non-finite values into the public clip intervals (:func:`_fill_undefined`); the
        direct route's columns were checked finite before, so there is nothing to do."""

    def clip_and_map(self, names, clip_limits, column_maps):
        """The columns ``names`` clipped and mapped, as one C-ordered (n, m) array (the
        only n x m array made: each row block is copied in, then clipped in place)."""
        names = list(names)
        out = np.empty((self.n, len(names)))
        if names:
            limits = _limits(names, clip_limits, column_maps)
            for a, b in _row_blocks(self.n, len(names)):
                self.copy_block(names, a, b, out[a:b])
                _apply_limits(out[a:b], limits, out=out[a:b])
        return out


class _MatrixColumns(_ColumnSource):
    """Columns of a materialised model matrix (formulaic route)."""

    def __init__(self, M, names):
        self.M, self.n = M, M.shape[0]
        self.names = list(names)
        self.idx = {c: j for j, c in enumerate(names)}

    def fill_undefined(self, clip_limits, learned):
        """:func:`_fill_undefined` on the matrix."""
        self.M = _fill_undefined(self.M, self.names, clip_limits, "data", learned)

    def block(self, names, a, b):
        return self.M[a:b][:, [self.idx[c] for c in names]]


class _FrameColumns(_ColumnSource):
    """Plain numeric columns of the user's frame (direct route), and the intercept.

    When the frame is one float64 block the row blocks are read from one view of its
    memory (no per-column pandas access); otherwise each row block is selected through
    pandas (a copy of that block only).
    """

    def __init__(self, frame, cols):
        self.frame, self.n = frame, int(frame.shape[0])
        self.full = None
        if _single_float_block(frame):
            self.full = frame.to_numpy(dtype=float, copy=False)
            self.pos = {c: j for j, c in enumerate(frame.columns.tolist())}
        self._cache = (None, None)

    def _data_columns(self, names):
        """``names`` without the intercept, computed once per list (blocks reuse it)."""
        if getattr(self, "_names_cache", (None,))[0] is not names:
            self._names_cache = (names, [c for c in names if c != _INTERCEPT])
        return self._names_cache[1]

    def _positions(self, cols):
        key = id(cols)  # the lists passed here are internal and never modified
        if self._cache[0] != key:
            pos = np.array([self.pos[c] for c in cols], dtype=np.intp)
            if len(pos) and np.all(np.diff(pos) == 1):
                pos = slice(int(pos[0]), int(pos[-1]) + 1)
            self._cache = (key, pos, cols)  # keeps cols alive, so its id stays unique
        return self._cache[1]

    def copy_block(self, names, a, b, out):
        if self.full is not None and _INTERCEPT not in names:
            pos = self._positions(names)
            if isinstance(pos, slice):
                # The frame's block is column-major and out is row-major: copy in tiles
                # that fit in cache (several times faster than one strided copy).
                src = self.full[a:b, pos]
                m = src.shape[1]
                for j in range(0, m, 256):
                    for i in range(0, b - a, 128):
                        out[i:i + 128, j:j + 256] = src[i:i + 128, j:j + 256]
                return
        out[...] = self.block(names, a, b)

    def block(self, names, a, b):
        cols = self._data_columns(names)
        if self.full is not None:
            vals = self.full[a:b, self._positions(cols)] if cols else np.empty((b - a, 0))
        else:
            try:
                vals = self.frame.iloc[a:b][cols].to_numpy(dtype=float)
            except (TypeError, ValueError):  # pandas' text would quote a value
                raise ValueError("data: the columns the formula uses must be numeric (the values are "
                                 "not shown)") from None
        if len(cols) == len(names):
            return vals
        out = np.ones((b - a, len(names)))
        out[:, [j for j, c in enumerate(names) if c != _INTERCEPT]] = vals
        return out
