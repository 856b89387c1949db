"""One codebook per data set: resolving public bounds against a formula.

Users write their public bounds once per data set, as a *codebook*
``{column: (lo, hi) or b}`` over the columns of the data (``hitters_bounds()`` is
one), and use it with any formula. This module decides, for one formula, which
bound each model-matrix column and the response get:

1. **Given.** An entry naming the column, or the term it belongs to, in the
   formula's own spelling or formulaic's (``"I(age**2)"`` and ``"I(age ** 2)"``
   are the same name; every name is compared after parsing it as Python).
2. **The coding.** Dummy and bool columns keep the public range of their coding
   (decided in :mod:`dpsubset.design`).
3. **Derived.** A transform of bounded data columns gets the bound that follows
   from the codebook by interval arithmetic, a function of public numbers only:
   sums, differences, products and quotients (the divisor away from 0), integer
   powers and powers of a non-negative interval, ``np.log`` (``log2``, ``log10``,
   ``log1p``) of a positive interval, ``np.sqrt`` of a non-negative one,
   ``np.exp``, ``np.abs``, ``np.square``, ``I(...)``, raw ``poly(x, d, raw=True)``
   columns and interactions (``x:z``, ``x:g`` with a categorical ``g``, whose
   dummy ranges over its coding). Each enclosure contains every value the
   transform takes on data within the bounds (tests check this on random data),
   so clipping to it is clipping to a public interval. The result lists the
   derived bounds (``DPSubsetResults.bounds_derived``, and a note in ``summary()``).
4. Otherwise the scalar ``Bounds.x`` or ``Bounds.default``, or, failing all,
   bounds from the data (with a PrivacyLeakWarning, in :mod:`dpsubset.design`).

Entries that name a column of the data which this formula does not use are
fine: they are listed (``DPSubsetResults.bounds_unused``), never an error. An
entry that names nothing (not a column of the data, not a column or term of the
model) is an error naming it, since it is most likely a typo.

The response's bound is ``Bounds.y`` or, when that is not given, the codebook's
entry for the response (or one derived from it, for ``np.log(Salary) ~ ...``).

Codebook files (CSV or JSON with ``column``, ``lo``, ``hi``, ``levels``) are read
by :func:`read_codebook`; declared levels are applied by :func:`apply_levels`.
"""
from __future__ import annotations

import ast
import builtins
import json
import keyword
import math
import os
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .design import _resolve  # one resolver of Name / Attribute chains for both modules

__all__ = ["normalise_name", "interval_of", "coding_range", "product_range", "resolve_codebook", "ResolvedBounds",
           "read_codebook", "apply_levels", "Codebook"]


# --------------------------------------------------------------------------- names


def normalise_name(text):
    """A column or term name in one spelling: each ``:``-part parsed as Python and unparsed.

    ``"I(age**2)"`` -> ``"I(age ** 2)"`` (formulaic's spelling); ``"x:np.log(z)"``
    keeps its parts; a name that is not Python (spaces, ``$``) is only stripped.
    """
    parts = []
    for part in str(text).split(":"):
        part = part.strip()
        if part.isidentifier() and not keyword.iskeyword(part):
            parts.append(part)  # a plain name unparses to itself (the common case, p times)
            continue
        try:
            parts.append(ast.unparse(ast.parse(part, mode="eval")))
        except (SyntaxError, ValueError):
            parts.append(part)
    return ":".join(parts)


# --------------------------------------------------------------------------- interval arithmetic


def _finite(iv):
    if iv is None:
        return None
    lo, hi = float(iv[0]), float(iv[1])
    return (lo, hi) if math.isfinite(lo) and math.isfinite(hi) and lo <= hi else None


def _mul(a, b):
    prods = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
    return _finite((min(prods), max(prods)))


def _div(a, b):
    if b[0] > 0 or b[1] < 0:  # the divisor stays away from 0
        return _mul(a, (1.0 / b[1], 1.0 / b[0]))
    return None


def _pow(a, k):
    lo, hi = a
    try:
        if float(k).is_integer():
            k = int(k)
            if k == 0:
                return (1.0, 1.0)
            if k > 0:
                if k % 2 == 1 or lo >= 0:
                    return _finite((lo ** k, hi ** k))
                if hi <= 0:
                    return _finite((hi ** k, lo ** k))
                return _finite((0.0, max(lo ** k, hi ** k)))
            if lo > 0 or hi < 0:  # x^-m is monotone on an interval without 0
                v = sorted((lo ** k, hi ** k))
                return _finite((v[0], v[1]))
            return None
        if lo >= 0 and k > 0:
            return _finite((lo ** k, hi ** k))
        if lo > 0 and k < 0:
            return _finite((hi ** k, lo ** k))
    except (OverflowError, ZeroDivisionError):
        return None
    return None


def _monotone(fn, lo_min=None, strict=True):
    def apply(a):
        lo, hi = a
        if lo_min is not None and (lo <= lo_min if strict else lo < lo_min):
            return None
        with np.errstate(all="ignore"):
            return _finite((float(fn(lo)), float(fn(hi))))
    return apply


def _abs(a):
    lo, hi = a
    if lo >= 0:
        return a
    if hi <= 0:
        return (-hi, -lo)
    return (0.0, max(-lo, hi))


def _unary_functions(env):
    """Functions of one argument with a known enclosure, by identity of the function object."""
    from formulaic.transforms import TRANSFORMS

    table = [
        ((np.log, math.log, TRANSFORMS.get("log")), _monotone(np.log, 0.0)),
        ((np.log2, math.log2, TRANSFORMS.get("log2")), _monotone(np.log2, 0.0)),
        ((np.log10, math.log10, TRANSFORMS.get("log10")), _monotone(np.log10, 0.0)),
        ((np.log1p, math.log1p), _monotone(np.log1p, -1.0)),
        ((np.sqrt, math.sqrt), _monotone(np.sqrt, 0.0, strict=False)),
        ((np.exp, math.exp, TRANSFORMS.get("exp")), _monotone(np.exp)),
        ((np.exp2, TRANSFORMS.get("exp2")), _monotone(np.exp2)),
        ((TRANSFORMS.get("exp10"),), _monotone(lambda v: 10.0 ** v)),
        ((np.abs, np.absolute, np.fabs, builtins.abs), _abs),
        ((np.square,), lambda a: _pow(a, 2)),
        ((TRANSFORMS.get("I"),), lambda a: a),
    ]
    out = []
    for fns, handler in table:
        for fn in fns:
            if fn is not None:
                out.append((fn, handler))
    return out


def interval_of(node, var_intervals, env, aliases=None):
    """An interval containing every value of an expression, or None when none follows.

    Parameters
    ----------
    node : ast.AST
        The expression (e.g. the body of ``ast.parse("I(age ** 2)", mode="eval")``).
    var_intervals : dict
        Data column -> (lo, hi): the public intervals of the columns.
    env : dict
        Names the formula can use (formulaic's transforms, the caller's modules).
    aliases : dict, optional
        Sanitised name -> column name (formulaic's quoting of odd column names).

    Returns
    -------
    (float, float) or None
    """
    aliases = aliases or {}
    if isinstance(node, ast.Expression):
        node = node.body
    if isinstance(node, ast.Constant):
        if isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return _finite((node.value, node.value))
        return None
    if isinstance(node, ast.Name):
        name = aliases.get(node.id, node.id)
        if name in var_intervals:
            return var_intervals[name]
        obj = env.get(node.id)
        if isinstance(obj, (int, float)) and not isinstance(obj, bool):  # a public constant of the caller
            return _finite((obj, obj))
        return None
    if isinstance(node, ast.UnaryOp):
        a = interval_of(node.operand, var_intervals, env, aliases)
        if a is None:
            return None
        if isinstance(node.op, ast.USub):
            return (-a[1], -a[0])
        return a if isinstance(node.op, ast.UAdd) else None
    if isinstance(node, ast.BinOp):
        a = interval_of(node.left, var_intervals, env, aliases)
        b = interval_of(node.right, var_intervals, env, aliases)
        if a is None or b is None:
            return None
        op = node.op
        if isinstance(op, ast.Add):
            return _finite((a[0] + b[0], a[1] + b[1]))
        if isinstance(op, ast.Sub):
            return _finite((a[0] - b[1], a[1] - b[0]))
        if isinstance(op, ast.Mult):
            return _mul(a, b)
        if isinstance(op, ast.Div):
            return _div(a, b)
        if isinstance(op, ast.Pow) and b[0] == b[1]:
            return _pow(a, b[0])
        return None
    if isinstance(node, ast.Call) and not node.keywords:
        fn = _resolve(node.func, env)
        if fn is None:
            return None
        if fn is np.power and len(node.args) == 2:
            a = interval_of(node.args[0], var_intervals, env, aliases)
            k = interval_of(node.args[1], var_intervals, env, aliases)
            return None if a is None or k is None or k[0] != k[1] else _pow(a, k[0])
        if len(node.args) != 1:
            return None
        for f, handler in _unary_functions(env):
            if fn is f:
                a = interval_of(node.args[0], var_intervals, env, aliases)
                return None if a is None else handler(a)
    return None


def coding_range(state):
    """(min, max) of the contrast coding of a categorical factor (None if unknown)."""
    cs = state.get("contrasts") if isinstance(state, dict) else None
    if cs is None:
        return None
    try:
        mats = [np.asarray(cs.contrasts.get_coding_matrix(cs.levels, reduced_rank=rr), dtype=float)
                for rr in (True, False)]
    except Exception:
        return None
    vals = np.concatenate([m.ravel() for m in mats])
    return (float(vals.min(initial=0.0)), float(vals.max(initial=0.0))) if vals.size else None


def product_range(ranges):
    """The interval of a product of factors with intervals ``ranges`` (None if any is None)."""
    if not ranges or any(r is None for r in ranges):
        return None
    out = ranges[0]
    for r in ranges[1:]:
        out = _mul(out, r)
        if out is None:
            return None
    return out


def _poly_raw_var(tree, env):
    """For ``poly(x, d, raw=True)``: the argument node, else None."""
    from formulaic.transforms import TRANSFORMS

    body = tree.body if isinstance(tree, ast.Expression) else tree
    if not isinstance(body, ast.Call) or _resolve(body.func, env) is not TRANSFORMS.get("poly"):
        return None
    raw = [kw.value for kw in body.keywords if kw.arg == "raw"]
    if len(body.args) > 2:
        raw.append(body.args[2])
    if len(raw) == 1 and isinstance(raw[0], ast.Constant) and raw[0].value is True and body.args:
        return body.args[0]
    return None


# --------------------------------------------------------------------------- resolution


@dataclass
class ResolvedBounds:
    """The bound of every column a codebook settles for one formula.

    Attributes
    ----------
    columns : dict
        Model-matrix column -> scalar b or interval (lo, hi): given by the user
        (by column or by term), or derived.
    derived : dict
        Column -> (lo, hi) derived by interval arithmetic (also in ``columns``).
    y : float, (float, float) or None
        The response's bound (``Bounds.y``, else the codebook's entry).
    y_derived : bool
        Whether ``y`` was derived from the codebook by interval arithmetic.
    unused : list of str
        Codebook entries that this formula does not use.
    """

    columns: dict = field(default_factory=dict)
    derived: dict = field(default_factory=dict)
    y: object = None
    y_derived: bool = False
    unused: list = field(default_factory=list)


def _fmt_names(names):
    names = [repr(n) for n in names]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def resolve_codebook(xdict, y, *, data_columns, xcols, term_cols, structure, encoder_state,
                     factor_info, env, lhs_info, response_name, lhs_vars, rhs_vars, inherent):
    """Settle the bounds of one formula from a codebook (see the module docstring).

    Parameters
    ----------
    xdict : dict
        ``Bounds.x`` as a dict (name -> scalar or interval), possibly empty.
    y : None, float or (float, float)
        ``Bounds.y``.
    data_columns : list of str
        Columns of the data frame.
    xcols : list of str
        Model-matrix columns (no intercept).
    term_cols : dict
        Term label -> its columns.
    structure : list
        formulaic's ``model_spec.rhs.structure``.
    encoder_state : dict
        formulaic's ``model_spec.rhs.encoder_state``.
    factor_info : dict
        Factor expression -> object with ``tree``, ``aliases`` and ``data_vars``
        (design's ``_FactorInfo``).
    env : dict
        Names the formula can use.
    lhs_info : list
        Factor infos of the left-hand side.
    response_name, lhs_vars, rhs_vars
        The response's column name and the data columns of both sides.
    inherent : dict
        Column -> public bound of its coding (None when it has none).

    Returns
    -------
    ResolvedBounds

    Raises
    ------
    ValueError
        An entry that names no column of the data and no column or term of the model.
    """
    out = ResolvedBounds(y=y)
    by_norm = {}
    for key, val in xdict.items():
        by_norm.setdefault(normalise_name(key), (key, val))
    norm_cols = {normalise_name(c): c for c in xcols}
    norm_terms = {normalise_name(t): t for t in term_cols}
    data_set = set(data_columns)
    lhs_set = set(lhs_vars)

    # ---- entries that name nothing at all
    bad = [key for norm, (key, _) in by_norm.items()
           if norm not in norm_cols and norm not in norm_terms and key not in data_set
           and norm != normalise_name(response_name)]
    if bad:
        hints = []
        if any(k == "Intercept" for k in bad):
            hints.append("the intercept is the constant 1 and takes no bound")
        hint = ("; " + "; ".join(hints)) if hints else ""
        valid = list(dict.fromkeys(xcols + list(term_cols)))
        raise ValueError(f"bounds: x names {_fmt_names(bad)}, not a column of the data nor a column or term "
                         f"of the model{hint}. Valid names: {valid}, or any column of the data")

    used = set()
    # ---- given: by column, then by term
    for c in xcols:
        hit = by_norm.get(normalise_name(c))
        if hit is None:
            continue
        out.columns[c] = hit[1]
        used.add(hit[0])
    for t, cols in term_cols.items():
        hit = by_norm.get(normalise_name(t))
        if hit is None:
            continue
        used.add(hit[0])
        for c in cols:
            out.columns.setdefault(c, hit[1])

    # ---- public intervals of the data columns (scalars b read as [-b, b])
    var_iv = {}
    for norm, (key, val) in by_norm.items():
        if key in data_set:
            var_iv[key] = (-val, val) if not isinstance(val, tuple) else val

    # ---- derived, column by column, for what is still open
    for st in structure:
        label = str(st.term)
        cols = [str(c) for c in st.columns]
        if label == "1" or all(c in out.columns or inherent.get(c) is not None for c in cols):
            continue
        factors = list(st.term.factors)
        if len(factors) == 1 and len(cols) > 1:
            info = factor_info.get(factors[0].expr)
            arg = _poly_raw_var(info.tree, env) if info is not None and info.tree is not None else None
            if arg is None:
                continue
            base = interval_of(arg, var_iv, env, getattr(info, "aliases", {}))
            if base is None:
                continue
            for i, c in enumerate(cols):
                iv = _pow(base, i + 1)
                if iv is not None and c not in out.columns:
                    _derive(out, c, iv, info.data_vars, used)
            continue
        ivs, vars_ = [], []
        for fac in factors:
            info = factor_info.get(fac.expr)
            kind, state = encoder_state.get(fac.expr, (None, {}))
            if getattr(kind, "value", kind) == "categorical":
                ivs.append(coding_range(state))
                continue
            if info is None:
                ivs.append(None)
                continue
            vars_ += list(info.data_vars)
            if info.tree is None:  # a plain column
                ivs.append(var_iv.get(info.data_vars[0]) if info.data_vars else None)
            else:
                ivs.append(interval_of(info.tree, var_iv, env, getattr(info, "aliases", {})))
        if any(iv is None for iv in ivs) or len(cols) < 1:
            continue
        iv = ivs[0]
        for nxt in ivs[1:]:
            iv = _mul(iv, nxt)
            if iv is None:
                break
        if iv is None:
            continue
        for c in cols:
            if c not in out.columns and inherent.get(c) is None:
                _derive(out, c, iv, vars_, used)

    # ---- the response: Bounds.y, else the codebook's entry (or one derived from it)
    resp_hit = by_norm.get(normalise_name(response_name))
    if resp_hit is not None and resp_hit[0] in xdict:
        if out.y is None:
            out.y = resp_hit[1]
            used.add(resp_hit[0])
    if out.y is None and len(lhs_info) == 1 and lhs_info[0].tree is not None:
        iv = interval_of(lhs_info[0].tree, var_iv, env, getattr(lhs_info[0], "aliases", {}))
        if iv is not None and iv[0] < iv[1]:
            out.y, out.y_derived = iv, True
            out.derived[response_name] = iv
            used.update(v for v in lhs_info[0].data_vars if v in xdict)

    # variables whose bound entered a given column through a term named by the variable itself
    for v in rhs_vars:
        if v in xdict and v in term_cols:
            used.add(v)
    out.unused = [key for key in xdict if key not in used
                  and not (key in lhs_set and out.y is not None and key == response_name)]
    return out


def _derive(out, column, iv, variables, used):
    lo, hi = iv
    if not lo < hi:   # a constant column: nothing to clip or map
        return
    out.columns[column] = (float(lo), float(hi))
    out.derived[column] = (float(lo), float(hi))
    used.update(variables)


# --------------------------------------------------------------------------- codebook files


@dataclass
class Codebook:
    """A codebook read from a file: public bounds and public levels per column.

    Attributes
    ----------
    bounds : dict
        Column -> (lo, hi) for the numeric columns.
    levels : dict
        Column -> list of levels for the categorical columns.
    """

    bounds: dict
    levels: dict


def _split_levels(text):
    if isinstance(text, (list, tuple)):
        return [str(v) for v in text]
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return None
    text = str(text).strip()
    if not text:
        return None
    sep = "|" if "|" in text else ";" if ";" in text else ","
    return [t.strip() for t in text.split(sep) if t.strip()]


def read_codebook(path):
    """Read a codebook file: CSV or JSON with ``column``, ``lo``, ``hi``, ``levels``.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.csv`` file with a header row ``column,lo,hi,levels`` (``levels``
        optional: the levels of a categorical column separated by ``|`` or
        ``;``), or a ``.json`` file holding a list of such records or a mapping
        ``{column: {"lo": ..., "hi": ...}}`` / ``{column: {"levels": [...]}}``.
        Each row gives either ``lo`` and ``hi`` or ``levels``.

    Returns
    -------
    Codebook

    Raises
    ------
    ValueError
        A row with neither bounds nor levels, with only one of ``lo``/``hi``,
        with ``lo >= hi``, or a column listed twice; the message names the
        column and the row of the file.
    """
    path = os.fspath(path)
    ext = os.path.splitext(path)[1].lower()
    if ext == ".json":
        with open(path, encoding="utf-8") as fh:
            raw = json.load(fh)
        if isinstance(raw, dict):
            records = [dict(column=k, **(v if isinstance(v, dict) else {"bounds": v})) for k, v in raw.items()]
        elif isinstance(raw, list):
            records = raw
        else:
            raise ValueError(f"codebook {path!r}: expected a list of records or a mapping of columns")
    elif ext in (".csv", ".txt", ""):
        frame = pd.read_csv(path, dtype={"column": str, "levels": str}, keep_default_na=False,
                            na_values={"lo": [""], "hi": [""]})
        records = frame.to_dict("records")
    else:
        raise ValueError(f"codebook {path!r}: expected a .csv or .json file")
    bounds, levels = {}, {}
    for i, rec in enumerate(records, 1):
        if not isinstance(rec, dict) or "column" not in rec:
            raise ValueError(f"codebook {path!r}, entry {i}: needs a 'column'")
        col = str(rec["column"]).strip()
        if col in bounds or col in levels:
            raise ValueError(f"codebook {path!r}: column {col!r} is listed twice")
        if "bounds" in rec and isinstance(rec["bounds"], (list, tuple)):
            rec = dict(rec, lo=rec["bounds"][0], hi=rec["bounds"][1])
        lo, hi = rec.get("lo"), rec.get("hi")
        lo = None if lo is None or (isinstance(lo, float) and math.isnan(lo)) or lo == "" else lo
        hi = None if hi is None or (isinstance(hi, float) and math.isnan(hi)) or hi == "" else hi
        lev = _split_levels(rec.get("levels"))
        if (lo is None) != (hi is None):
            raise ValueError(f"codebook {path!r}, column {col!r}: give both lo and hi (or levels)")
        if lo is not None:
            try:
                lo, hi = float(lo), float(hi)
            except (TypeError, ValueError):
                raise ValueError(f"codebook {path!r}, column {col!r}: lo and hi must be numbers") from None
            if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
                raise ValueError(f"codebook {path!r}, column {col!r}: needs finite lo < hi")
            bounds[col] = (lo, hi)
        elif lev:
            levels[col] = lev
        else:
            raise ValueError(f"codebook {path!r}, column {col!r}: give lo and hi, or levels")
    return Codebook(bounds=bounds, levels=levels)


def apply_levels(frame, levels):
    """Make the columns named in ``levels`` pandas Categoricals with those (public) levels.

    A value that is not among the declared levels is an error naming the column
    and the number of rows (never the value). Numbers in the data are compared
    with the levels as text. Columns not in ``frame`` are skipped (a codebook may
    describe more columns than a file has).

    Returns
    -------
    pandas.DataFrame
        A copy with the categorical columns replaced.
    """
    frame = frame.copy()
    for col, lev in levels.items():
        if col not in frame.columns:
            continue
        s = frame[col]
        text = s.astype("string").str.strip()
        outside = int((text.notna() & ~text.isin(list(lev))).sum())
        if outside:
            raise ValueError(f"data: column {col!r} has {outside} row(s) with a value not among the "
                             f"{len(lev)} levels the codebook declares; add the level to the codebook "
                             "or recode those rows")
        frame[col] = pd.Categorical(text.astype(object).where(text.notna(), None), categories=list(lev))
    return frame
