"""The formula: parse it, resolve its names, lint it (no data are read here).

One job: everything the formula's text tells before any row is read. It parses the
formula (formulaic's parser, or a light one for ``"y ~ ."`` on plain numeric columns),
resolves the names it uses that are not columns in the evaluation context captured once
at the entry point (:func:`capture_context`, as formulaic's ``capture_context``), refuses
objects of that context that could carry data, and lints the transforms that learn from
or mix rows (docs/methods/selection.md, "Data, neighbours and bounds"). The codebook's
name resolution (:func:`normalise_name`, :func:`_resolve`) lives here too, so that the
codebook and the interval arithmetic never import the builder.
"""
from __future__ import annotations

import ast
import builtins
import keyword
import numbers
import re
import sys
from dataclasses import dataclass
from types import ModuleType

import numpy as np

__all__ = ["capture_context", "normalise_name", "FormulaNames", "resolve_names", "parse", "lint"]


_INTERCEPT = "Intercept"


# Methods that, called on a data column inside a formula, combine several rows.
_CROSS_ROW_METHODS = frozenset({
    "mean", "std", "var", "median", "quantile", "rank", "shift", "diff", "cumsum",
    "cumprod", "cummax", "cummin", "sum", "max", "min", "sort_values", "pct_change",
    "rolling", "expanding", "ewm", "interpolate", "ffill", "bfill", "nlargest", "nsmallest",
    "mode", "value_counts", "sem", "skew", "kurt",
})


# numpy functions that combine rows when applied to a column.
_CROSS_ROW_NUMPY = frozenset({
    "mean", "std", "var", "median", "quantile", "percentile", "cumsum", "cumprod",
    "diff", "roll", "sort", "argsort", "sum", "max", "min", "amax", "amin", "nanmean",
    "nanstd", "nanvar", "nanmedian", "nanmax", "nanmin", "nansum", "ptp", "average",
    "gradient", "convolve", "unique", "histogram",
})


def normalise_name(text):
    """A column or term name in one spelling: each ``:``-part parsed as Python and unparsed.

    ``"I(age**2)"`` -> ``"I(age ** 2)"`` (formulaic's spelling); ``"x:np.log(z)"``
    keeps its parts; a name that is not Python (spaces, ``$``) is only stripped.
    """
    if text.__class__ is str and text.isidentifier() and not keyword.iskeyword(text):
        return text  # a plain name (the common case, several times per column)
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


def _fmt_names(names):
    names = [repr(n) for n in names]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _scope_object_allowed(obj):
    """Whether an object of the evaluation context (the caller's scope) may be used by the formula.

    Only what cannot hold rows of data: modules, plain functions (pickled by
    name), classes, numpy ufuncs, and scalars. Arrays, lists, tuples, Series,
    dicts, ``functools.partial`` objects and other containers are refused: they
    could carry data past the checks and clipping, and they would be kept in the
    result (for predictions) and in its pickle.
    """
    import inspect

    if isinstance(obj, (ModuleType, np.ufunc)) or inspect.isclass(obj):
        return True
    if inspect.isfunction(obj) or inspect.isbuiltin(obj) or _named_callable(obj):
        return True
    if obj is None or isinstance(obj, (bool, str, bytes, numbers.Number)):
        return True
    return isinstance(obj, np.generic) and np.ndim(obj) == 0


def _named_callable(obj):
    """A callable that its module exposes under its qualified name (numpy's dispatched
    functions, for instance): pickle stores it by name, with no state of its own."""
    if not callable(obj):
        return False
    mod = sys.modules.get(getattr(obj, "__module__", None) or "")
    qual = getattr(obj, "__qualname__", None)
    if mod is None or not isinstance(qual, str):
        return False
    target = mod
    for part in qual.split("."):
        target = getattr(target, part, None)
    return target is obj


_PLAIN_DOT = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*~\s*(?:([01])\s*\+\s*)?\.\s*(?:([-+])\s*([01])\s*)?$")


class _PlainFactor:
    """A data column used as it is: what build_design reads of a formulaic Factor."""

    __slots__ = ("expr",)

    def __init__(self, expr):
        self.expr = expr

    @property
    def eval_method(self):
        from formulaic.parser.types.factor import Factor
        return Factor.EvalMethod.LOOKUP


class _PlainTerm:
    __slots__ = ("factors",)

    def __init__(self, expr):
        self.factors = (_PlainFactor(expr),)

    def __str__(self):
        return self.factors[0].expr


class _LiteralMethod:
    """What the steps read of formulaic's ``Factor.EvalMethod.LITERAL``: its value."""

    value = "literal"


class _InterceptFactor:
    """The intercept's factor ``1`` of ``"y ~ ."``, as formulaic spells it."""

    __slots__ = ()
    expr = "1"
    eval_method = _LiteralMethod


class _InterceptTerm:
    """The intercept term of ``"y ~ ."``: formulaic's term ``1`` without formulaic (whose
    import, pyarrow's included, was half a second of a first call on plain columns)."""

    __slots__ = ()
    factors = (_InterceptFactor(),)

    def __str__(self):
        return "1"


class _PlainSide(tuple):
    """One side of a light formula: its terms, printed as formulaic prints a side."""

    def __str__(self):
        return " + ".join(str(t) for t in self)


class _PlainFormula:
    def __init__(self, lhs, rhs):
        self.lhs, self.rhs = _PlainSide(lhs), _PlainSide(rhs)

    def __str__(self):
        return f"{self.lhs} ~ {self.rhs}"


def _parse_plain_dot(formula, columns, dtypes):
    """``"y ~ ."``, ``"y ~ 0 + ."``, ``"y ~ . - 1"`` (and the like) on plain numeric
    columns, without building one formulaic term per column (seconds at p = 100,000).

    Returns a formula-like object with the same terms, in the same order, as formulaic's
    expansion of ``.`` (intercept first, then every column but the response in the
    frame's order), or None when the formula is anything else or a column is not plain
    numeric; build_design then parses it with formulaic.
    """
    m = _PLAIN_DOT.match(formula)
    if not m:
        return None
    lhs, pre, sign, post = m.groups()
    if lhs not in dtypes or _INTERCEPT in dtypes:
        return None
    if pre is not None and post is not None:
        return None  # e.g. "0 + . + 1": leave the precedence rules to formulaic
    intercept = not (pre == "0" or (sign == "-" and post == "1") or (sign == "+" and post == "0"))
    if sign == "-" and post == "0":
        return None
    if not all(isinstance(d, np.dtype) and d.kind in "fiu" for d in dtypes.values()):
        return None
    rhs = ([_InterceptTerm()] if intercept else []) + [_PlainTerm(c) for c in columns if c != lhs]
    return _PlainFormula((_PlainTerm(lhs),), rhs)


def _parse_formula(formula, columns):
    from formulaic import Formula
    from formulaic.errors import FormulaicError
    from formulaic.formula import SimpleFormula

    try:
        F = Formula(formula, _context={"__formulaic_variables_available__": list(columns)})
    except (FormulaicError, SyntaxError, ValueError) as exc:
        msg = re.sub(r"\x1b\[[0-9;]*m|[⧛⧚]", "", str(exc))
        raise ValueError(f"formula: could not parse {formula!r}: {msg}") from exc
    if not hasattr(F, "lhs") or not hasattr(F, "rhs"):
        raise ValueError(f"formula: {formula!r} has no response; write it as 'y ~ x1 + x2' or 'y ~ .'")
    if not isinstance(F.rhs, SimpleFormula) or not isinstance(F.lhs, SimpleFormula):
        raise ValueError(f"formula: {formula!r} has several parts; give one response and one right-hand side")
    if len(list(F.lhs)) != 1:
        raise ValueError(f"formula: {formula!r} must have exactly one response on the left of '~'")
    return F


class _FactorInfo:
    """What the formula text of one factor tells: data variables, calls, names."""

    __slots__ = ("factor", "expr", "data_vars", "other_names", "calls", "tree", "aliases")  # one per column

    def __init__(self, factor, columns):
        self.factor = factor
        self.expr = factor.expr
        self.data_vars = []
        self.other_names = []
        self.calls = []
        self.tree = None
        if isinstance(factor, _PlainFactor):  # a column of "y ~ ." on plain data
            (self.data_vars if factor.expr in columns else self.other_names).append(factor.expr)
            return
        method = factor.eval_method.value  # compared by value: no import on this per-column path
        if method == "literal":
            return
        if method == "lookup":
            (self.data_vars if factor.expr in columns else self.other_names).append(factor.expr)
            return
        from formulaic.utils.code import sanitize_variable_names

        aliases = {}
        try:
            tree = ast.parse(sanitize_variable_names(factor.expr, {}, aliases), mode="eval")
        except SyntaxError as exc:
            raise ValueError(f"formula: could not parse the term {factor.expr!r}: {exc.msg}") from exc
        self.tree = tree
        bound = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                bound.add(node.id)
            elif isinstance(node, ast.arg):
                bound.add(node.arg)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                self.calls.append(node)
                # Q("name") looks a column up by a string.
                if isinstance(node.func, ast.Name) and node.func.id == "Q" and node.args \
                        and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                    nm = node.args[0].value
                    (self.data_vars if nm in columns else self.other_names).append(nm)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in bound:
                nm = aliases.get(node.id, node.id)
                if nm in columns:
                    self.data_vars.append(nm)
                else:
                    self.other_names.append(nm)
        self.aliases = aliases


def _resolve(node, env):
    """Evaluate a Name / Attribute chain in env; None if it cannot be resolved."""
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        return getattr(builtins, node.id, None)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, env)
        return None if base is None else getattr(base, node.attr, None)
    return None


def _call_name(node):
    try:
        return ast.unparse(node.func)
    except Exception:  # pragma: no cover
        return "?"


def _arg_given(call, position, name):
    """Whether an argument is given (positionally at ``position`` or by keyword), not as None."""
    for kw in call.keywords:
        if kw.arg == name:
            return not (isinstance(kw.value, ast.Constant) and kw.value.value is None)
    if position is not None and len(call.args) > position:
        a = call.args[position]
        return not (isinstance(a, ast.Constant) and a.value is None)
    return False


def _arg_literal(call, position, name, default):
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value.value if isinstance(kw.value, ast.Constant) else "?"
    if position is not None and len(call.args) > position:
        a = call.args[position]
        return a.value if isinstance(a, ast.Constant) else "?"
    return default


def _is_coding_call(info, env):
    """Whether a factor is ``C(...)`` or ``hashed(...)``: its variable's values are levels."""
    body = info.tree.body if info.tree is not None else None
    if not isinstance(body, ast.Call):
        return False
    from formulaic.transforms import TRANSFORMS

    return _resolve(body.func, env) in (TRANSFORMS["C"], TRANSFORMS["hashed"])


_MIXES_ROWS = ("term {term!r} uses {fname}(), which combines values from several rows: replacing one row then "
               "changes every row of the design, and the result is not differentially private; fix: use only "
               "row-by-row transforms with public constants")


def _lint_calls(info, env, data_columns):
    """Warnings (term, message) for transforms that learn from or mix rows."""
    if not info.calls:
        return []  # (once per column of "y ~ .": no formulaic import there)
    from formulaic.transforms import TRANSFORMS

    T = TRANSFORMS
    out = []
    for call in info.calls:
        fn = _resolve(call.func, env)
        fname = _call_name(call)
        term = info.expr
        if fn is None:
            if _mixes_rows(call, fn, info, data_columns):
                out.append((term, _MIXES_ROWS.format(term=term, fname=fname)))
            continue
        if fn is T["C"] or fn is T["Q"] or fn is T["hashed"]:
            continue  # categorical levels are checked on the materialised spec; Q is a lookup
        if fn is T["center"] or ((fn is T["scale"] or fn is T["standardize"])):
            if fn is not T["center"]:
                flag2 = "scale" if fn is T["scale"] else "rescale"
                if _arg_literal(call, 1, "center", True) is False and _arg_literal(call, 2, flag2, True) is False:
                    continue
            out.append((term, f"term {term!r} uses {fname}(), which learns the mean and/or the standard deviation "
                              "from the data (a stateful transform): every row then affects every row of the design, "
                              "and the result is not differentially private; fix: use public constants, e.g. "
                              "I((x - c) / s) with c and s known in advance, or give an interval bound, which maps "
                              "the column to [-1, 1] by public numbers"))
        elif fn is T["poly"]:
            if _arg_literal(call, 2, "raw", False) is True:
                continue
            out.append((term, f"term {term!r} uses {fname}(), whose orthogonal basis is computed from the data "
                              "(a stateful transform), so the result is not differentially private; fix: "
                              "poly(x, degree, raw=True) (or I(x**2), ...) with a bound for each column"))
        elif fn in (T["bs"], T["cr"], T["cc"], T["cs"]):
            is_bs = fn is T["bs"]
            pos = (2, 5, 6) if is_bs else (2, 3, 4)
            ok = (_arg_given(call, pos[0], "knots") and _arg_given(call, pos[1], "lower_bound")
                  and _arg_given(call, pos[2], "upper_bound"))
            if ok and not is_bs and _arg_literal(call, 5, "constraints", None) == "center":
                ok = False
            if ok:
                continue
            out.append((term, f"term {term!r} uses the spline basis {fname}(), which places its knots and/or "
                              "boundary knots (or its centring constraint) from the data (a stateful transform), "
                              "so the result is not differentially private; fix: give knots=[...], lower_bound= and "
                              "upper_bound= fixed in advance (and no constraints='center')"))
        elif fn is T["lag"]:
            out.append((term, f"term {term!r} uses {fname}(), which takes values from other rows: replacing one "
                              "row of data then changes several rows of the design, and the sensitivity analysis "
                              "(neighbours replace one row) does not hold; fix: make each row of data one privacy "
                              "unit, with such features already in it"))
        elif getattr(fn, "__is_stateful_transform__", False):
            out.append((term, f"term {term!r} uses {fname}(), a stateful transform that may learn from the data, "
                              "so the result may not be differentially private; fix: replace it by a transform "
                              "that uses only public constants"))
        elif _mixes_rows(call, fn, info, data_columns):
            out.append((term, _MIXES_ROWS.format(term=term, fname=fname)))
    return out


def _mixes_rows(call, fn, info, data_columns):
    """Known numpy functions and pandas methods that aggregate, sort or shift a column."""
    if (getattr(fn, "__module__", None) or "").startswith("numpy") and getattr(fn, "__name__", "") in _CROSS_ROW_NUMPY:
        return True
    return (isinstance(call.func, ast.Attribute) and call.func.attr in _CROSS_ROW_METHODS
            and _root_name(call.func.value, info) in data_columns)


def _root_name(node, info):
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    if isinstance(node, ast.Name):
        return getattr(info, "aliases", {}).get(node.id, node.id)
    return None


def _plain_columns(F, dtypes, colset):
    """(response, columns, has_intercept) when the formula only names numeric data columns
    as they are ("y ~ .", "y ~ 0 + .", "y ~ a + b"): then no formulaic materialisation is
    needed. None otherwise (transforms, categoricals, bools, interactions, other dtypes)."""
    def plain(fac):
        d = dtypes.get(fac.expr)
        if not (isinstance(d, np.dtype) and d.kind in "fiu" and fac.expr != _INTERCEPT):
            return False
        if isinstance(fac, _PlainFactor):
            return True  # (no formulaic import on the path of "y ~ .")
        from formulaic.parser.types.factor import Factor
        return fac.eval_method == Factor.EvalMethod.LOOKUP

    lhs = [f for t in F.lhs for f in t.factors]
    if len(lhs) != 1 or not plain(lhs[0]):
        return None
    has_intercept, cols = False, []
    for t in F.rhs:
        facs = list(t.factors)
        if str(t) == "1":
            has_intercept = True
        elif len(facs) == 1 and plain(facs[0]):
            cols.append(facs[0].expr)
        else:
            return None
    return lhs[0].expr, cols, has_intercept


# --------------------------------------------------------------------------- the steps


def capture_context(depth=0):
    """The scope in which a formula's names are looked up, captured once, at an entry point.

    As formulaic's ``capture_context``: the globals and locals of the frame ``depth``
    levels above the function that calls this one (0: that function's own frame; 1: its
    caller, the usual choice in an entry point such as ``dp_best_subset``). The mapping
    is then passed down (``build_design(..., context=...)``); nothing below the entry
    point looks at the call stack. Which of its objects the formula may use is decided
    by :func:`resolve_names`.

    Parameters
    ----------
    depth : int, default=0
        Frames above the caller.

    Returns
    -------
    dict
        Name -> object (the frame's locals over its globals); empty where the
        interpreter offers no frames.
    """
    try:
        frame = sys._getframe(depth + 1)
    except (ValueError, AttributeError):
        return {}
    ctx = dict(frame.f_globals)
    ctx.update(frame.f_locals)
    return ctx


@dataclass(frozen=True)
class FormulaNames:
    """What the formula's text says, before any row is read (step 2 of ``build_design``).

    Attributes
    ----------
    formula : formulaic.Formula or a light stand-in for ``"y ~ ."`` on plain columns
    lhs_info : list of _FactorInfo
        The response's factor(s).
    rhs_info : list of (term, list of _FactorInfo)
        The right-hand side's terms and their factors.
    eval_ctx : dict
        Names of the context the formula uses (functions, modules, single numbers or
        strings): kept in the spec to transform new data the same way.
    env : dict
        formulaic's transforms and ``eval_ctx``: how the formula's calls resolve.
    lhs_vars, rhs_vars : list of str
        Data columns the response and the right-hand side use.
    """

    formula: object
    lhs_info: list
    rhs_info: list
    eval_ctx: dict
    env: dict
    lhs_vars: list
    rhs_vars: list

    @property
    def all_info(self):
        """Every factor: the response's first, then the right-hand side's, in order."""
        return self.lhs_info + [i for _, infos in self.rhs_info for i in infos]

    @property
    def used(self):
        """The data columns the formula uses (response first)."""
        return self.lhs_vars + self.rhs_vars


def parse(formula, columns, dtypes):
    """The formula parsed against the frame's columns (a light parse for ``"y ~ ."`` on
    plain numeric columns, formulaic's otherwise)."""
    return _parse_plain_dot(formula, columns, dtypes) or _parse_formula(formula, columns)


def resolve_names(formula, columns, colset, dtypes, context):
    """Parse the formula and resolve every name in it: a data column, one of formulaic's
    transforms, a builtin, or an object of ``context`` that cannot hold rows of data.

    Parameters
    ----------
    formula : str
    columns : list of str
        The frame's columns, in order.
    colset : set of str
        The same, as a set (built once: rebuilding it per factor is quadratic in p).
    dtypes : dict
        Column -> dtype.
    context : mapping
        The evaluation context captured at the entry point (:func:`capture_context`).

    Returns
    -------
    FormulaNames

    Raises
    ------
    ValueError
        An unknown name; an object of the context that could carry data (an array, a
        list, a Series, ...); a response that uses no column, or a variable on both
        sides.
    """
    F = parse(formula, columns, dtypes)
    if isinstance(F, _PlainFormula):
        TRANSFORMS = {}  # plain columns call nothing (and formulaic is not imported)
    else:
        from formulaic.transforms import TRANSFORMS

    lhs_info = [_FactorInfo(f, colset) for t in F.lhs for f in t.factors]
    rhs_info = [(t, [_FactorInfo(f, colset) for f in t.factors]) for t in F.rhs]
    all_info = lhs_info + [i for _, infos in rhs_info for i in infos]
    eval_ctx, unknown, outside = {}, [], []
    for info in all_info:
        for nm in info.other_names:
            if nm in TRANSFORMS or nm in eval_ctx or (nm not in context and hasattr(builtins, nm)):
                continue
            if nm not in context:
                unknown.append(nm)
                continue
            obj = context[nm]
            if _scope_object_allowed(obj):
                eval_ctx[nm] = obj
            else:
                outside.append(nm)
    if unknown:
        unknown = list(dict.fromkeys(unknown))
        shown = columns if len(columns) <= 30 else columns[:30] + ["..."]
        raise ValueError(f"formula: unknown variable(s) {_fmt_names(unknown)}: not columns of data "
                         f"(columns: {shown})")
    if outside:
        raise ValueError(f"formula: {_fmt_names(list(dict.fromkeys(outside)))}: not column(s) of data but "
                         "object(s) in your session (an array, list, Series, ...); only functions, modules "
                         "and single numbers or strings are taken from there. Put data in data so that "
                         "they are checked and clipped with the rest, and write lists of levels or knots "
                         "literally in the formula, e.g. C(x, levels=['a', 'b'])")
    lhs_vars = list(dict.fromkeys(v for i in lhs_info for v in i.data_vars))
    rhs_vars = list(dict.fromkeys(v for i in all_info[len(lhs_info):] for v in i.data_vars))
    if not lhs_vars:
        raise ValueError(f"formula: the response {str(F.lhs)!r} uses no column of data")
    both = [v for v in lhs_vars if v in rhs_vars]
    if both:
        raise ValueError(f"formula: the response variable {_fmt_names(both)} also appears on the right-hand side")
    env = dict(TRANSFORMS)
    env.update(eval_ctx)
    return FormulaNames(F, lhs_info, rhs_info, eval_ctx, env, lhs_vars, rhs_vars)


def lint(names, colset):
    """The formula's transforms that learn from or mix rows, as (warning, leak) pairs,
    each message once (warned only if the build succeeds)."""
    pending, seen = [], set()
    for info in names.all_info:
        for term, msg in _lint_calls(info, names.env, colset):
            if msg not in seen:
                seen.add(msg)
                pending.append((msg, f"formula: {term!r} learns from or mixes rows of the data"))
    return pending
