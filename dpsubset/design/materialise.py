"""Materialisation: the formula evaluated on the frame, as raw model-matrix columns.

Two routes give the same matrices, names, bounds and clip intervals
(tests/design/test_design_scale.py): plain numeric columns named as they are (``"y ~ ."``) are
read directly from the frame in row blocks (:func:`_materialise_direct`); everything else
goes through formulaic (:func:`_materialise_formulaic`), which also tells the structure of
the terms, the public bounds of coded (dummy and bool) columns and which categorical
levels were learned from the data. Both return a :class:`Materialised`.
"""
from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .formula import _INTERCEPT, _FactorInfo, _arg_given, _fmt_names, _plain_columns, _resolve
from .frames import _FrameColumns, _MatrixColumns, _scrub_values
from .intervals import coding_range, product_range

__all__ = ["Materialised"]


@dataclass(frozen=True)
class Materialised:
    """The raw model-matrix columns and what the formula's structure says of them.

    Attributes
    ----------
    model_spec : formulaic.ModelSpecs or None
        None on the direct route (plain numeric columns).
    response_name : str
    y_raw : ndarray, shape (n,)
        The response, not yet clipped.
    names : list of str
        Model-matrix column names (the intercept first, if present).
    source : _ColumnSource
        Their raw values, read in row blocks.
    term_of : dict
        Column -> the label of its term.
    term_cols : dict
        Term label -> its columns.
    single_var_cols : dict
        Data variable -> the columns of the terms made of that variable alone.
    inherent : dict
        Column -> public bound of its coding (dummy, bool; products for
        interactions), or None.
    has_intercept : bool
    learned : list of (str, str)
        (variable, expression) of the categorical factors whose levels were
        learned from the data.
    inherent_range : dict
        Coded column -> (min, max) of its coding (the clip interval shown).
    encoder_state : dict
        formulaic's ``model_spec.rhs.encoder_state`` (empty on the direct route).
    info_by_expr : dict
        Factor expression -> its ``_FactorInfo`` (for resolving the codebook).
    """

    model_spec: object
    response_name: str
    y_raw: np.ndarray
    names: list
    source: object
    term_of: dict
    term_cols: dict
    single_var_cols: dict
    inherent: dict
    has_intercept: bool
    learned: list
    inherent_range: dict
    encoder_state: dict
    info_by_expr: dict

    @property
    def xcols(self):
        """The model-matrix columns but the intercept."""
        return [c for c in self.names if c != _INTERCEPT]


def materialise(F, frame, formula, names, colset, dtypes, *, stacklevel):
    """Step 6 of ``build_design``: the raw columns, by the direct route when the formula
    names plain numeric columns as they are, through formulaic otherwise.

    ``names`` is the formula's :class:`dpsubset.design.formula.FormulaNames`; formulaic's
    own warnings are re-issued at ``stacklevel`` (counted from this function's caller).
    """
    plain = _plain_columns(F, dtypes, colset)
    if plain is not None:
        return _materialise_direct(frame, F, *plain)
    return _materialise_formulaic(F, frame, formula, names.eval_ctx, names.env, names.all_info, colset,
                                  stacklevel + 1, names.lhs_vars, names.rhs_vars)


def _numeric_matrix(mm, names, argname):
    try:
        frame = mm[names] if names is not None else mm
    except KeyError as exc:
        raise ValueError(f"{argname}: the formula did not produce the columns of the training data ({exc}); "
                         "check that categorical variables have the same levels") from exc
    try:
        return np.ascontiguousarray(frame.to_numpy(dtype=float))
    except (TypeError, ValueError):
        # pandas' message quotes the first value it could not convert: name the columns instead
        bad = [str(c) for c, dt in zip(frame.columns, frame.dtypes)
               if not (pd.api.types.is_numeric_dtype(dt) or pd.api.types.is_bool_dtype(dt))]
        raise ValueError(f"{argname}: the formula produced non-numeric values in "
                         f"{_fmt_names(bad) if bad else 'a column'} (the values are not shown); convert the "
                         "column to numbers, or declare it categorical (C(x, levels=[...]) or a pandas "
                         "Categorical)") from None


def _unseen_levels_message(model_spec, frame):
    """Which categorical variables of ``frame`` have levels the model does not know (no values)."""
    parts = []
    for expr, (kind, state) in model_spec.rhs.encoder_state.items():
        if getattr(kind, "value", kind) != "categorical" or not isinstance(state, dict):
            continue
        levels = state.get("categories")
        var = expr if expr in frame.columns else None
        if var is None:  # C(x, ...): the first argument names the column
            m = re.match(r"\s*C\(\s*([A-Za-z_][A-Za-z0-9_.]*)\s*[,)]", expr)
            var = m.group(1) if m and m.group(1) in frame.columns else None
        if var is None or levels is None:
            parts.append(f"{expr!r} (rows not counted)")
            continue
        k = int((~frame[var].isin(list(levels)) & frame[var].notna()).sum())
        if k:
            parts.append(f"{var!r} ({k} row{'s' if k != 1 else ''})")
    where = ", ".join(dict.fromkeys(parts)) or "a categorical variable"
    return (f"newdata: {where} with a level the model does not know (not among the levels of the "
            "training data); the model has no coefficient for it. Recode those rows to a known level or "
            "leave them out; to allow a level, fit with it in C(x, levels=[...]) or the Categorical's categories")


def _outside_levels_message(spec, all_info, frame):
    """The error for values outside the levels given in C(x, levels=[...]): the
    variables and the number of such rows, never the values."""
    from formulaic.transforms import TRANSFORMS

    enc = spec.rhs.encoder_state
    parts = []
    for info in all_info:
        body = info.tree.body if info.tree is not None else None
        if not (isinstance(body, ast.Call) and _resolve(body.func, TRANSFORMS) is TRANSFORMS["C"]
                and info.data_vars and info.expr in enc):
            continue
        levels = enc[info.expr][1].get("categories") if isinstance(enc[info.expr][1], dict) else None
        if levels is None:
            continue
        col = frame[info.data_vars[0]]
        k = int((~col.isin(levels) & col.notna()).sum())
        if k:
            parts.append(f"{info.data_vars[0]!r} in {info.expr!r} ({k} row{'s' if k != 1 else ''})")
    where = "; ".join(parts) if parts else "a variable in C(..., levels=[...])"
    return (f"data: values outside the levels given in the formula: {where} (the values are not shown). "
            "Add the missing levels to levels=[...] if they are valid categories, or recode or remove "
            "those rows")


def _categorical_public(info, env, frame):
    """Whether the levels of a categorical factor are fixed by the formula or the dtype."""
    from formulaic.transforms import TRANSFORMS

    if info.tree is None:  # a lookup of a column
        return bool(info.data_vars) and isinstance(frame[info.data_vars[0]].dtype, pd.CategoricalDtype)
    body = info.tree.body
    if isinstance(body, ast.Call):
        fn = _resolve(body.func, env)
        if fn is TRANSFORMS["hashed"]:
            return True
        if fn is TRANSFORMS["C"]:
            if _arg_given(body, None, "levels"):
                return True
            a = body.args[0] if body.args else None
            if isinstance(a, ast.Name):
                nm = info.aliases.get(a.id, a.id)
                if nm in frame.columns and isinstance(frame[nm].dtype, pd.CategoricalDtype):
                    return True
    return False


def _coding_bound(state, info, env):
    """Largest |value| of the contrast coding of a categorical factor, or None if unknown."""
    from formulaic.transforms import TRANSFORMS

    cs = state.get("contrasts") if isinstance(state, dict) else None
    if cs is not None:
        try:
            return max(float(np.abs(np.asarray(cs.contrasts.get_coding_matrix(cs.levels, reduced_rank=rr),
                                               dtype=float)).max(initial=0.0)) for rr in (True, False))
        except Exception:
            return None
    if info.tree is not None and isinstance(info.tree.body, ast.Call):
        if _resolve(info.tree.body.func, env) is TRANSFORMS["hashed"] and not _arg_given(info.tree.body, 2, "contrasts"):
            return 1.0  # treatment coding of a fixed number of buckets
    return None


def _materialise_direct(frame, F, response, cols, has_intercept):
    """The direct route for plain numeric columns: the same outputs as
    :func:`_materialise_formulaic` (no model spec), without an n x p copy yet."""
    names_all = ([_INTERCEPT] if has_intercept else []) + list(cols)
    y_raw = np.array(frame[response].to_numpy(dtype=float), dtype=float)
    one = {c: [c] for c in cols}
    return Materialised(model_spec=None, response_name=response, y_raw=y_raw, names=names_all,
                        source=_FrameColumns(frame, cols), term_of={c: c for c in cols}, term_cols=one,
                        single_var_cols=dict(one), inherent={c: None for c in cols},
                        has_intercept=has_intercept, learned=[], inherent_range={}, encoder_state={},
                        info_by_expr={})


def _materialise_formulaic(F, frame, formula, eval_ctx, env, all_info, colset, stacklevel,
                           lhs_vars, rhs_vars):
    """The model matrices through formulaic (transforms, categoricals, interactions).

    Returns a :class:`Materialised`, with the term structure, the inherent (coding)
    bounds and ranges, the categorical variables whose levels were learned from the
    data and the factor information by expression (for resolving the codebook).
    """
    from formulaic import model_matrix
    from formulaic.errors import DataMismatchWarning, FormulaicError

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            mm = model_matrix(F, frame, context=dict(eval_ctx), na_action="ignore")
        except (FormulaicError, TypeError, ValueError, NameError, KeyError, AttributeError) as exc:
            # formulaic's and numpy's texts may quote values of the data: scrubbed, and
            # the original exception is not chained (its text would print in tracebacks)
            text = _scrub_values(str(exc), frame, lhs_vars + rhs_vars)
            raise ValueError(f"formula: could not build the model matrix for {formula!r}: "
                             f"{type(exc).__name__}: {text}") from None
    for w in caught:
        if issubclass(w.category, DataMismatchWarning):
            raise ValueError(_outside_levels_message(mm.model_spec, all_info, frame)) from None
    for w in caught:
        if not issubclass(w.category, (DataMismatchWarning, RuntimeWarning)):
            warnings.warn(w.message, w.category, stacklevel=stacklevel)
    spec = mm.model_spec
    lhs_mm, rhs_mm = mm.lhs, mm.rhs
    if lhs_mm.shape[1] != 1:
        raise TypeError(f"data: the response {str(F.lhs)!r} is not numeric (it expands to "
                        f"{lhs_mm.shape[1]} columns); a numeric response is required")
    response_name = str(lhs_mm.columns[0])
    lhs_state = spec.lhs.encoder_state
    if any(getattr(k, "value", k) == "categorical" for k, _ in lhs_state.values()):
        raise TypeError(f"data: the response {response_name!r} is categorical; a numeric response is required")
    y_raw = _numeric_matrix(lhs_mm, None, "data")[:, 0]
    names_all = [str(c) for c in rhs_mm.columns]
    M = _numeric_matrix(rhs_mm, None, "data")
    # Non-finite values (a transform undefined somewhere) are placed by build_design once
    # the bounds are known: by a fixed rule where the bound is public (_fill_undefined).

    # ---- structure: terms, intercept, categorical lint, inherent bounds
    info_by_expr = {i.expr: i for i in all_info}
    enc = spec.rhs.encoder_state
    term_of = {}           # column -> term label
    term_cols = {}         # term label -> columns
    single_var_cols = {}   # data variable -> columns of terms made of that variable alone
    inherent = {}          # column -> public bound from the coding, or None
    inherent_range = {}    # column -> (min, max) of its coding (the clip interval shown)
    has_intercept = False
    learned = []
    for st in spec.rhs.structure:
        label = str(st.term)
        cols = [str(c) for c in st.columns]
        if label == "1":
            has_intercept = True
            continue
        term_cols.setdefault(label, []).extend(cols)
        fb, fr = [], []
        term_vars = set()
        for fac in st.term.factors:
            info = info_by_expr.get(fac.expr) or _FactorInfo(fac, colset)
            term_vars.update(info.data_vars)
            kind, state = enc.get(fac.expr, (None, {}))
            kind = getattr(kind, "value", kind)
            if kind == "categorical":
                if not _categorical_public(info, env, frame):
                    learned.append((info.data_vars[0] if info.data_vars else fac.expr, fac.expr))
                fb.append(_coding_bound(state, info, env))
                fr.append(coding_range(state))
            elif info.tree is None and info.data_vars and pd.api.types.is_bool_dtype(frame[info.data_vars[0]]):
                fb.append(1.0)
                fr.append((0.0, 1.0))
            else:
                fb.append(None)
                fr.append(None)
        if all(b is not None for b in fb):
            b = fb[0] if len(fb) == 1 else float(np.prod([max(1.0, v) for v in fb]))
        else:
            b = None
        if len(st.term.factors) == 1 and len(term_vars) == 1:
            single_var_cols.setdefault(next(iter(term_vars)), []).extend(cols)
        rng = product_range(fr) if b is not None else None
        for c in cols:
            term_of[c] = label
            inherent[c] = b
            if rng is not None and max(abs(rng[0]), abs(rng[1])) <= b:
                inherent_range[c] = rng
    del mm, rhs_mm, lhs_mm  # M holds the values now; the frames are a second copy
    return Materialised(model_spec=spec, response_name=response_name, y_raw=y_raw, names=names_all,
                        source=_MatrixColumns(M, names_all), term_of=term_of, term_cols=term_cols,
                        single_var_cols=single_var_cols, inherent=inherent, has_intercept=has_intercept,
                        learned=learned, inherent_range=inherent_range, encoder_state=enc,
                        info_by_expr=info_by_expr)
