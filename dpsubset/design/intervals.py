"""Interval arithmetic on the formula's expressions: public bounds of transforms.

An enclosure of an expression is an interval containing every value it takes when its
data columns lie in their public (codebook) intervals: sums, differences, products and
quotients (the divisor away from 0), integer powers and powers of a non-negative
interval, ``np.log`` (``log2``, ``log10``, ``log1p``) of a positive interval, ``np.sqrt``
of a non-negative one, ``np.exp``, ``np.abs``, ``np.square``, ``I(...)``, raw
``poly(x, d, raw=True)`` columns and the products of an interaction. An expression known
to be undefined or unbounded somewhere on the box gets no enclosure and a reason in
words (:func:`enclosure`). Only public numbers enter: the codebook's intervals and the
formula's constants. Used by :mod:`dpsubset.design.codebook`.
"""
from __future__ import annotations

import ast
import builtins
import math

import numpy as np

from .formula import _resolve

__all__ = ["interval_of", "enclosure", "factor_enclosure", "coding_range", "product_range",
           "undefined_somewhere"]


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


#: The public values at which :func:`undefined_somewhere` tries a transform of variables
#: that have no interval: negative, zero and positive, small and large.
PROBE_VALUES = (-1000.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 1000.0)


def undefined_somewhere(node, variables, env, aliases=None, known=None):
    """Why an expression of variables with no public interval can be undefined, or None.

    A scalar bound clips a model column, not the variables it is made of, so a term such
    as ``np.log(x1)`` has no public domain: rows where it is undefined (nan) would be
    set to the interval's midpoint without a word. This tries the expression on a fixed,
    public grid of values (:data:`PROBE_VALUES` for each variable, at most three
    variables), never on the data, and returns the reason when some value is nan
    (infinite values are not: the clip takes them to the interval's ends).

    Parameters
    ----------
    node : ast.AST
        The expression.
    variables : list of str
        Its data columns (as the formula names them, after ``aliases``).
    env : dict
        Names the formula can use.
    aliases : dict, optional
        Sanitised name -> column name.
    known : dict, optional
        Variable -> its public interval: tried at its ends, its midpoint and 0 (if
        inside) instead of the whole grid.

    Returns
    -------
    str or None
    """
    import itertools

    variables = list(dict.fromkeys(variables))
    if not variables or len(variables) > 3:
        return None
    expr = node if isinstance(node, ast.Expression) else ast.Expression(body=node)
    back = {col: name for name, col in (aliases or {}).items()}
    known = known or {}

    def values(v):
        if v not in known:
            return PROBE_VALUES
        lo, hi = known[v]
        return tuple(sorted({lo, (lo + hi) / 2, hi} | ({0.0} if lo <= 0 <= hi else set())))
    grid = np.array(list(itertools.product(*(values(v) for v in variables))), dtype=float)
    scope = dict(env)
    scope.update({back.get(v, v): grid[:, i] for i, v in enumerate(variables)})
    try:
        with np.errstate(all="ignore"):
            out = np.asarray(eval(compile(ast.fix_missing_locations(expr), "<formula>", "eval"),  # noqa: S307
                                  {"__builtins__": {}}, scope), dtype=float)
    except Exception:   # a function that does not take arrays: no verdict
        return None
    if out.shape != (len(grid),) or not np.isnan(out).any():
        return None
    example = grid[np.flatnonzero(np.isnan(out))[0]]
    at = ", ".join(f"{v} = {x:g}" for v, x in zip(variables, example))
    return f"{_text(expr.body)} is undefined for some values of {_fmt_names(variables)} (e.g. {at})"


def _fmt_names(names):
    names = [repr(n) for n in names]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


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
