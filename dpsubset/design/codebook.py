"""One codebook per data set: resolving public bounds against a formula.

Users write their public bounds once per data set, as a *codebook*
``{column: (lo, hi) or b}`` over the columns of the data (``hitters_bounds()`` is
one), and use it with any formula. This module decides, for one formula, which
bound each model-matrix column and the response get:

1. **Given.** An entry naming the column, or the term it belongs to, in the
   formula's own spelling or formulaic's (``"I(age**2)"`` and ``"I(age ** 2)"``
   are the same name; every name is compared after parsing it as Python).
2. **The coding.** Dummy and bool columns keep the public range of their coding
   (decided in :mod:`dpsubset.design.build`).
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
   A transform known to be undefined or unbounded somewhere on the box (``np.log``
   of an interval reaching 0, a divisor interval containing 0, an overflow) gets
   no bound: without one of its own (given, or a scalar ``Bounds.x`` or
   ``Bounds.default``) the term, or a response without ``Bounds.y``, is refused
   (:func:`undefined_message`), since a bound from the data would void the
   guarantee; :func:`enclosure` tells this apart from an unknown function.
4. Otherwise the scalar ``Bounds.x`` or ``Bounds.default``, or, failing all,
   bounds from the data (with a PrivacyLeakWarning, in :mod:`dpsubset.design.build`).

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

from .build import _resolve  # one resolver of Name / Attribute chains for both modules

__all__ = ["normalise_name", "interval_of", "enclosure", "factor_enclosure", "coding_range", "product_range", "resolve_codebook",
           "ResolvedBounds", "raw_intervals", "undefined_message", "read_codebook", "apply_levels", "Codebook"]


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


class _Undefined(Exception):
    """An operation known to take undefined or infinite values somewhere on its
    argument's interval (log of an interval reaching 0, a divisor interval containing 0,
    an overflow). Raised inside the enclosure, with the reason in words once known."""

    def __init__(self, reason=None):
        super().__init__(reason)
        self.reason = reason


def _fmt_iv(iv):
    return f"[{iv[0]:.6g}, {iv[1]:.6g}]"


def _finite(iv):
    """``iv`` as floats, or _Undefined when an end is not finite (an overflow) or nan."""
    lo, hi = float(iv[0]), float(iv[1])
    if math.isfinite(lo) and math.isfinite(hi) and lo <= hi:
        return (lo, hi)
    raise _Undefined()


def _mul(a, b):
    prods = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
    return _finite((min(prods), max(prods)))


def _div(a, b):
    if b[0] > 0 or b[1] < 0:  # the divisor stays away from 0
        return _mul(a, (1.0 / b[1], 1.0 / b[0]))
    raise _Undefined()


def _pow(a, k):
    """Enclosure of a ** k for a constant k; _Undefined where some power is not finite
    (a negative or fractional power of an interval reaching 0 or below, an overflow)."""
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
        elif lo >= 0 and k > 0:
            return _finite((lo ** k, hi ** k))
        elif lo > 0 and k < 0:
            return _finite((hi ** k, lo ** k))
    except (OverflowError, ZeroDivisionError):
        pass
    raise _Undefined()


def _monotone(fn, lo_min=None, strict=True):
    def apply(a):
        lo, hi = a
        if lo_min is not None and (lo <= lo_min if strict else lo < lo_min):
            raise _Undefined()
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


def _text(node):
    try:
        return ast.unparse(node)
    except Exception:  # pragma: no cover
        return "?"


def _enclose(node, var_intervals, env, aliases):
    """The enclosure of ``node``; None when none is known (an unknown function or
    variable); _Undefined, with the reason, when the expression is known to take
    undefined or infinite values somewhere on the intervals."""
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
        a = _enclose(node.operand, var_intervals, env, aliases)
        if a is None:
            return None
        if isinstance(node.op, ast.USub):
            return (-a[1], -a[0])
        return a if isinstance(node.op, ast.UAdd) else None
    if isinstance(node, ast.BinOp):
        # both sides first: an undefined part is reported even next to an unknown one
        a = _enclose(node.left, var_intervals, env, aliases)
        b = _enclose(node.right, var_intervals, env, aliases)
        if a is None or b is None:
            return None
        op = node.op
        try:
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
        except _Undefined:
            if isinstance(op, ast.Div) and not (b[0] > 0 or b[1] < 0):
                why = f"divides by {_text(node.right)}, which takes values in {_fmt_iv(b)}, 0 included"
            elif isinstance(op, ast.Pow):
                why = f"is undefined or infinite for {_text(node.left)} in {_fmt_iv(a)}"
            else:
                why = "exceeds the floating-point range"
            raise _Undefined(f"{_text(node)} {why}") from None
        return None
    if isinstance(node, ast.Call) and not node.keywords:
        fn = _resolve(node.func, env)
        if fn is None:
            return None
        if fn is np.power and len(node.args) == 2:
            a = _enclose(node.args[0], var_intervals, env, aliases)
            k = _enclose(node.args[1], var_intervals, env, aliases)
            if a is None or k is None or k[0] != k[1]:
                return None
            try:
                return _pow(a, k[0])
            except _Undefined:
                raise _Undefined(f"{_text(node)} is undefined or infinite for {_text(node.args[0])} "
                                 f"in {_fmt_iv(a)}") from None
        if len(node.args) != 1:
            return None
        for f, handler in _unary_functions(env):
            if fn is f:
                a = _enclose(node.args[0], var_intervals, env, aliases)
                if a is None:
                    return None
                try:
                    return handler(a)
                except _Undefined:
                    raise _Undefined(f"{_text(node)} is undefined or infinite for {_text(node.args[0])} "
                                     f"in {_fmt_iv(a)}") from None
    return None


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
        None both when no enclosure is known and when the expression is undefined
        or unbounded somewhere on the intervals (:func:`enclosure` tells them apart).
    """
    return enclosure(node, var_intervals, env, aliases)[0]


def enclosure(node, var_intervals, env, aliases=None):
    """Like :func:`interval_of`, and why there is none when the expression is known to fail.

    Returns
    -------
    interval : (float, float) or None
    undefined : str or None
        When the expression takes undefined or infinite values somewhere on the
        intervals (``np.log`` of an interval reaching 0, a divisor interval that
        contains 0, ``np.exp`` or a power beyond the floating-point range): the reason
        in words, naming the sub-expression and its interval. None otherwise, also
        when no enclosure is known (a function the package does not know).
    """
    try:
        return _enclose(node, var_intervals, env, aliases or {}), None
    except _Undefined as exc:
        return None, exc.reason or f"{_text(node)} exceeds the floating-point range"


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
    try:
        for r in ranges[1:]:
            out = _mul(out, r)
    except _Undefined:
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


def _poly_degree(tree):
    """The degree of ``poly(x, d, raw=True)`` when it is a literal integer, else None."""
    body = tree.body if isinstance(tree, ast.Expression) else tree
    node = next((kw.value for kw in body.keywords if kw.arg == "degree"), None)
    if node is None and len(body.args) > 1:
        node = body.args[1]
    if node is None:
        return 1  # formulaic's default degree
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return None


def _powers_undefined(arg, base):
    return f"a power of {_text(arg)} in {_fmt_iv(base)} exceeds the floating-point range"


def factor_enclosure(tree, var_intervals, env, aliases=None):
    """:func:`enclosure` of one factor of a formula; for a raw polynomial
    ``poly(x, d, raw=True)``, the hull of the intervals of x, x^2, ..., x^d (its columns)."""
    arg = _poly_raw_var(tree, env)
    if arg is None:
        return enclosure(tree, var_intervals, env, aliases)
    degree = _poly_degree(tree)
    base, why = enclosure(arg, var_intervals, env, aliases)
    if why is not None or base is None or degree is None or degree < 1:
        return None, why
    try:
        ivs = [_pow(base, k) for k in range(1, degree + 1)]
    except _Undefined:
        return None, _powers_undefined(arg, base)
    return (min(iv[0] for iv in ivs), max(iv[1] for iv in ivs)), None


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
                     factor_info, env, lhs_info, response_name, lhs_vars, rhs_vars, inherent,
                     coding_ranges=None, fallback=False):
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
    coding_ranges : dict, optional
        Coded column -> (min, max) of its coding: an interval given for a coded
        column must be that range.
    fallback : bool
        Whether a scalar ``Bounds.x`` or ``Bounds.default`` bounds the columns that
        get nothing here (then a term undefined on the box takes that bound).

    Returns
    -------
    ResolvedBounds

    Raises
    ------
    ValueError
        An entry that names no column of the data and no column or term of the
        model; an interval for a coded (dummy or bool) column other than its
        coding's range; a term (or the response) that is undefined or unbounded
        somewhere on the codebook's box and has no bound of its own
        (:func:`undefined_message`).
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
    coding_ranges = coding_ranges or {}
    # ---- given: by column, then by term
    for c in xcols:
        hit = by_norm.get(normalise_name(c))
        if hit is None:
            continue
        _check_coded(hit, c, inherent, coding_ranges)
        out.columns[c] = hit[1]
        used.add(hit[0])
    for t, cols in term_cols.items():
        hit = by_norm.get(normalise_name(t))
        if hit is None:
            continue
        used.add(hit[0])
        for c in cols:
            if c not in out.columns:
                _check_coded(hit, c, inherent, coding_ranges)
                out.columns[c] = hit[1]

    # ---- public intervals of the data columns (scalars b read as [-b, b])
    var_iv = raw_intervals(xdict, data_columns)

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
            base, why = enclosure(arg, var_iv, env, getattr(info, "aliases", {}))
            ivs = []
            if base is not None:
                try:
                    ivs = [_pow(base, i + 1) for i in range(len(cols))]
                except _Undefined:
                    why = _powers_undefined(arg, base)
            if why is not None:
                if not fallback:
                    raise ValueError(undefined_message(label, why, info.data_vars, var_iv))
                continue
            for c, iv in zip(cols, ivs):
                if c not in out.columns:
                    _derive(out, c, iv, info.data_vars, used)
            continue
        ivs, vars_, why = [], [], None
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
                iv, reason = enclosure(info.tree, var_iv, env, getattr(info, "aliases", {}))
                ivs.append(iv)
                why = why or reason
        iv = None
        if why is None and cols and all(v is not None for v in ivs):
            try:
                iv = ivs[0]
                for nxt in ivs[1:]:
                    iv = _mul(iv, nxt)
            except _Undefined:
                iv, why = None, "the product of its factors exceeds the floating-point range"
        if why is not None and not fallback:
            # undefined or unbounded on the public box, and no bound of its own: refused
            # (a bound from the data would void the guarantee; the rows' values would decide)
            raise ValueError(undefined_message(label, why, vars_, var_iv))
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
        iv, why = enclosure(lhs_info[0].tree, var_iv, env, getattr(lhs_info[0], "aliases", {}))
        if why is not None:
            raise ValueError(undefined_message(response_name, why, lhs_info[0].data_vars, var_iv,
                                               response=True))
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


def raw_intervals(xdict, data_columns):
    """Data column -> its public interval, for the codebook's entries that name a column
    of the data (a scalar b read as [-b, b]): the intervals raw values are clipped to
    before the formula's transforms see them, and the box of the interval arithmetic."""
    data_set = set(data_columns)
    return {key: (val if isinstance(val, tuple) else (-val, val))
            for key, val in xdict.items() if key in data_set}


def undefined_message(term, why, variables, var_iv, *, response=False):
    """The refusal of a term (or the response) that is undefined or unbounded somewhere
    on the codebook's box and has no bound of its own: it names the term, the reason,
    the intervals of its variables and both fixes. Public inputs only."""
    variables = list(dict.fromkeys(variables))
    boxed = [v for v in variables if v in var_iv]
    where = (", given the codebook's " + ", ".join(f"{v!r} in {_fmt_iv(var_iv[v])}" for v in boxed)) if boxed else ""
    what = f"the response {term!r}" if response else f"the term {term!r}"
    own = ("give the response its own bound (bounds y=(lo, hi), e.g. Bounds(x=codebook, y=(lo, hi)))"
           if response else f"give {term!r} its own interval in the codebook, e.g. {{{term!r}: (lo, hi)}}")
    names = _fmt_names(boxed) if boxed else "its variables"
    return (f"bounds: {what} has no public bound: {why}{where}. This follows from the codebook and the "
            "formula alone and is refused before the data are read (a bound taken from the data would "
            f"leave no guarantee). Fix: give {names} an interval on which it is finite, or {own}: values "
            "outside that bound, infinite ones included, are then clipped to its ends, and undefined ones "
            "(nan) are set to its midpoint")


def _check_coded(hit, column, inherent, coding_ranges):
    """An interval given for a coded (dummy or bool) column must be its coding's range:
    any other interval would silently rescale the coding (a dummy's 0 and 1 mapped to
    -1 and -0.8 by an interval (0, 10), say). Scalars keep overriding the coding's bound."""
    key, val = hit
    if not isinstance(val, tuple) or inherent.get(column) is None:
        return
    rng = coding_ranges.get(column)
    if rng is not None and (float(rng[0]), float(rng[1])) == (float(val[0]), float(val[1])):
        return
    shown = f"its coding's range {_fmt_iv(rng)}" if rng is not None else "its coding"
    raise ValueError(f"bounds x[{key!r}]: the interval {_fmt_iv(val)} is given for {column!r}, a dummy (or "
                     f"bool) column whose values are fixed by {shown}; an interval for it must be that "
                     "range (which maps the coding onto [-1, 1]). Give that range, a scalar bound, or no "
                     "entry (the coding's range is then used)")


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
    FileNotFoundError
        No file at ``path``.
    ValueError
        A row with neither bounds nor levels, with only one of ``lo``/``hi``,
        with ``lo >= hi``, or a column listed twice; the message names the
        column and the row of the file.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):  # said here, before pandas or json would say it in their words
        what = "is a directory, not a file" if os.path.isdir(path) else "no such file"
        raise FileNotFoundError(f"codebook {path!r}: {what}; give the path of a .csv or .json codebook "
                                "with the fields column, lo, hi and levels")
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
