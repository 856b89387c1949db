"""One codebook per data set: public bounds, and their resolution against a formula.

Users write their public bounds once per data set, as a *codebook*
``{column: (lo, hi) or b}`` over the columns of the data (``hitters_bounds()`` is
one), and use it with any formula (:class:`Bounds`, :func:`as_bounds`). This module
decides, for one formula, which bound each model-matrix column and the response get:

1. **Given.** An entry naming the column, or the term it belongs to, in the
   formula's own spelling or formulaic's (``"I(age**2)"`` and ``"I(age ** 2)"``
   are the same name; every name is compared after parsing it as Python,
   :func:`dpsubset.design.formula.normalise_name`).
2. **The coding.** Dummy and bool columns keep the public range of their coding
   (decided in :mod:`dpsubset.design.materialise`).
3. **Derived.** A transform of bounded data columns gets the bound that follows
   from the codebook by interval arithmetic (:mod:`dpsubset.design.intervals`), a
   function of public numbers only. Each enclosure contains every value the
   transform takes on data within the bounds (tests check this on random data),
   so clipping to it is clipping to a public interval. The result lists the
   derived bounds (``DPSubsetResults.bounds_derived``, and a note in ``summary()``).
   A transform known to be undefined or unbounded somewhere on the box (``np.log``
   of an interval reaching 0, a divisor interval containing 0, an overflow) gets
   no bound: without one of its own (given, or a scalar ``Bounds.x`` or
   ``Bounds.default``) the term, or a response without ``Bounds.y``, is refused
   (:func:`undefined_message`), since a bound from the data would void the
   guarantee.
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

import json
import math
import numbers
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .formula import _fmt_names, _is_coding_call, normalise_name
from .intervals import (undefined_somewhere, _fmt_iv, _mul, _poly_raw_var, _pow, _powers_undefined, _Undefined, coding_range, enclosure,
                        factor_enclosure)

__all__ = ["Bounds", "as_bounds", "CodebookQuery", "ResolvedBounds", "resolve_codebook", "raw_intervals",
           "undefined_message", "check_codebook_early", "raw_clip_limits", "Codebook", "read_codebook",
           "apply_levels"]


def _is_real(v):
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def _parse_scalar(v, where):
    from .._validation import BOUND_MAX, BOUND_MIN

    if not _is_real(v):
        raise TypeError(f"{where}: a bound must be a positive number b or an interval (lo, hi); got {v!r}")
    b = float(v)
    if not math.isfinite(b) or b <= 0:
        raise ValueError(f"{where}: a scalar bound must be finite and > 0; got {v!r}")
    if not BOUND_MIN <= b <= BOUND_MAX:
        raise ValueError(f"{where}: a scalar bound must lie in [{BOUND_MIN:g}, {BOUND_MAX:g}] (squares and "
                         f"ratios of bounds must stay within floating point); got {b:g}. Give the column "
                         "in other units (e.g. thousands or millionths)")
    return b


def _parse_interval(v, where):
    from .._validation import BOUND_MAX, BOUND_MIN

    vals = list(v)
    if len(vals) != 2 or not all(_is_real(t) for t in vals):
        raise TypeError(f"{where}: an interval bound must be a pair of numbers (lo, hi); got {v!r}")
    lo, hi = float(vals[0]), float(vals[1])
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"{where}: interval {v!r} must have finite ends")
    if lo >= hi:
        raise ValueError(f"{where}: interval {v!r} must have lo < hi")
    # The map to [-1, 1] needs a finite centre and a half-width that is neither 0 nor
    # subnormal, and the squares of the ends must be finite: checked here, on public
    # numbers, so that an absurd codebook fails before the data are read.
    if max(abs(lo), abs(hi)) > BOUND_MAX:
        raise ValueError(f"{where}: interval ({lo:g}, {hi:g}) has an end beyond +-{BOUND_MAX:g}, which floating "
                         "point cannot square; give the column in other units (e.g. thousands), with ends "
                         "known in advance")
    if hi / 2 - lo / 2 < BOUND_MIN:  # halved first: hi - lo itself may overflow
        raise ValueError(f"{where}: interval ({lo:g}, {hi:g}) is narrower than 2 * {BOUND_MIN:g}, too narrow "
                         "to be mapped to [-1, 1] by representable numbers; give the column in other units "
                         "(e.g. millionths)")
    return (lo, hi)


def _parse_bound(v, where):
    """A scalar b (float) or an interval (lo, hi) (tuple of floats)."""
    if isinstance(v, (tuple, list, np.ndarray)):
        return _parse_interval(v, where)
    return _parse_scalar(v, where)


class Bounds:
    """Public bounds on the columns of the design and on the response.

    Parameters
    ----------
    x : None, float or dict, optional
        None: no bounds for the predictors (bounds of non-dummy columns are then
        taken from the data, which voids the privacy guarantee). A positive
        scalar ``b``: every non-intercept column is clipped to [-b, b] and not
        rescaled, except dummy and bool columns, which keep the public bound of
        their coding (1 for treatment coding). A dict (a codebook) mapping a
        column of the data, a model-matrix column name or a term of the formula
        (in its own spelling) to a scalar ``b`` or an interval ``(lo, hi)``;
        entries the formula does not use are listed, not an error, and bounds
        of transforms of bounded columns are derived (:mod:`dpsubset.design.intervals`).
    y : None, float or (float, float), optional
        Bound of the (materialised) response: a scalar ``b_y`` (clip to
        [-b_y, b_y]) or an interval ``(lo, hi)`` (clip and map to [-1, 1]).
    default : None, float or (float, float), optional
        Bound for the non-dummy columns that a dict ``x`` does not name (or for
        all of them when ``x`` is None). None means missing.

    Notes
    -----
    Bounds must be fixed before seeing the data (from the measurement scale, a
    codebook, the design of a study): bounds computed from the data are not
    public. The numbers are validated here; whether the names exist in the
    model is checked by :func:`build_design`.
    """

    def __init__(self, x=None, y=None, default=None):
        if x is None:
            self.x = None
        elif isinstance(x, Mapping):
            xd = {}
            for key, val in x.items():
                if not isinstance(key, str):
                    raise TypeError(f"bounds x: keys must be column names (str); got {key!r}")
                xd[key] = _parse_bound(val, f"bounds x[{key!r}]")
            self.x = xd
        elif isinstance(x, (tuple, list, np.ndarray)):
            raise TypeError(
                f"bounds x: got {x!r}; give a scalar b for all columns, or a dict "
                "{column: b or (lo, hi)} for per-column bounds or intervals"
            )
        else:
            self.x = _parse_scalar(x, "bounds x")
        self.y = None if y is None else _parse_bound(y, "bounds y")
        self.default = None if default is None else _parse_bound(default, "bounds default")

    def __repr__(self):
        return f"Bounds(x={self.x!r}, y={self.y!r}, default={self.default!r})"

    def __eq__(self, other):
        if not isinstance(other, Bounds):
            return NotImplemented
        return (self.x, self.y, self.default) == (other.x, other.y, other.default)


def as_bounds(bounds):
    """Normalise the ``bounds`` argument.

    Parameters
    ----------
    bounds : None, Bounds, (b_x, b_y) or dict
        None (bounds missing), a :class:`Bounds`, a pair ``(b_x, b_y)`` (the
        paper's setting: scalars, clip without rescaling; each may also be None,
        and ``b_y`` may be an interval), a dict with keys among ``"x"``,
        ``"y"``, ``"default"``, or a codebook: any other dict
        ``{column: b or (lo, hi)}`` (such as ``hitters_bounds()``), read as
        ``Bounds(x=codebook)``, whose entry for the response bounds y. (A
        codebook whose only columns are named x and y is ambiguous: pass
        ``Bounds(x=codebook)`` then.)

    Returns
    -------
    Bounds or None

    Raises
    ------
    TypeError
        If ``bounds`` has another type.
    ValueError
        If a bound is not valid (scalar <= 0, interval with lo >= hi, non-finite
        numbers).
    """
    if bounds is None or isinstance(bounds, Bounds):
        return bounds
    if isinstance(bounds, Mapping):
        if set(bounds) - {"x", "y", "default"}:
            # a codebook {column: b or (lo, hi)}; its entry for the response bounds y
            return Bounds(x=dict(bounds))
        return Bounds(**bounds)
    if isinstance(bounds, (tuple, list)):
        if len(bounds) != 2:
            raise ValueError(f"bounds: a pair (b_x, b_y) is expected; got {len(bounds)} entries")
        return Bounds(x=bounds[0], y=bounds[1])
    raise TypeError(
        f"bounds: expected None, a Bounds, a pair (b_x, b_y) or a dict; got {type(bounds).__name__}. "
        "Example: bounds=Bounds(x={'Hits': (0, 250)}, y=(0, 2500))"
    )


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


@dataclass(frozen=True)
class CodebookQuery:
    """What one formula asks of a codebook: its columns, terms and factors (public).

    The inputs of :func:`resolve_codebook` besides the codebook itself, grouped.

    Attributes
    ----------
    data_columns : list of str
        Columns of the data frame.
    xcols : list of str
        Model-matrix columns (no intercept).
    term_cols : dict
        Term label -> its columns.
    structure : list
        formulaic's ``model_spec.rhs.structure`` (empty on the direct route).
    encoder_state : dict
        formulaic's ``model_spec.rhs.encoder_state``.
    factor_info : dict
        Factor expression -> object with ``tree``, ``aliases`` and ``data_vars``
        (:class:`dpsubset.design.formula._FactorInfo`).
    env : dict
        Names the formula can use.
    lhs_info : list
        Factor infos of the left-hand side.
    response_name : str
        The response's column name.
    lhs_vars, rhs_vars : list of str
        The data columns of both sides.
    inherent : dict
        Column -> public bound of its coding (None when it has none).
    coding_ranges : dict
        Coded column -> (min, max) of its coding: an interval given for a coded
        column must be that range.
    fallback : bool
        Whether a scalar ``Bounds.x`` or ``Bounds.default`` bounds the columns that
        get nothing here (then a term undefined on the box takes that bound).
    """

    data_columns: list
    xcols: list
    term_cols: dict
    structure: list
    encoder_state: dict
    factor_info: dict
    env: dict
    lhs_info: list
    response_name: str
    lhs_vars: list
    rhs_vars: list
    inherent: dict
    coding_ranges: dict = field(default_factory=dict)
    fallback: bool = False


def resolve_codebook(xdict, y, query):
    """Settle the bounds of one formula from a codebook (see the module docstring).

    Parameters
    ----------
    xdict : dict
        ``Bounds.x`` as a dict (name -> scalar or interval), possibly empty.
    y : None, float or (float, float)
        ``Bounds.y``.
    query : CodebookQuery
        The formula's columns, terms and factors.

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
    q = query
    out = ResolvedBounds(y=y)
    by_norm = {}
    for key, val in xdict.items():
        by_norm.setdefault(normalise_name(key), (key, val))
    _refuse_unknown_entries(by_norm, q)
    used = set()
    # given: by column, then by term
    _given(out, by_norm, q, used)
    # public intervals of the data columns (scalars b read as [-b, b])
    var_iv = raw_intervals(xdict, q.data_columns)
    # derived, column by column, for what is still open
    for st in q.structure:
        label = str(st.term)
        cols = [str(c) for c in st.columns]
        if label == "1" or all(c in out.columns or q.inherent.get(c) is not None for c in cols):
            continue
        factors = list(st.term.factors)
        if len(factors) == 1 and len(cols) > 1:
            _derive_polynomial(out, label, cols, factors[0], var_iv, q, used)
        else:
            _derive_term(out, label, cols, factors, var_iv, q, used)
    # the response: Bounds.y, else the codebook's entry (or one derived from it)
    _response_bound(out, by_norm, xdict, var_iv, q, used)
    # variables whose bound entered a given column through a term named by the variable itself
    for v in q.rhs_vars:
        if v in xdict and v in q.term_cols:
            used.add(v)
    lhs_set = set(q.lhs_vars)
    out.unused = [key for key in xdict if key not in used
                  and not (key in lhs_set and out.y is not None and key == q.response_name)]
    return out


def _refuse_unknown_entries(by_norm, q):
    """Entries that name nothing at all: not a column of the data, nor a column or term of
    the model, nor the response (most likely a typo)."""
    norm_cols = {normalise_name(c) for c in q.xcols}
    norm_terms = {normalise_name(t) for t in q.term_cols}
    data_set = set(q.data_columns)
    bad = [key for norm, (key, _) in by_norm.items()
           if norm not in norm_cols and norm not in norm_terms and key not in data_set
           and norm != normalise_name(q.response_name)]
    if bad:
        hints = []
        if any(k == "Intercept" for k in bad):
            hints.append("the intercept is the constant 1 and takes no bound")
        hint = ("; " + "; ".join(hints)) if hints else ""
        valid = list(dict.fromkeys(q.xcols + list(q.term_cols)))
        raise ValueError(f"bounds: x names {_fmt_names(bad)}, not a column of the data nor a column or term "
                         f"of the model{hint}. Valid names: {valid}, or any column of the data")


def _given(out, by_norm, q, used):
    """The entries that name a model-matrix column, then those that name a term."""
    for c in q.xcols:
        hit = by_norm.get(normalise_name(c))
        if hit is None:
            continue
        _check_coded(hit, c, q.inherent, q.coding_ranges)
        out.columns[c] = hit[1]
        used.add(hit[0])
    for t, cols in q.term_cols.items():
        hit = by_norm.get(normalise_name(t))
        if hit is None:
            continue
        used.add(hit[0])
        for c in cols:
            if c not in out.columns:
                _check_coded(hit, c, q.inherent, q.coding_ranges)
                out.columns[c] = hit[1]


def _derive_polynomial(out, label, cols, factor, var_iv, q, used):
    """A one-factor term with several columns: for a raw polynomial, the powers of its
    argument's enclosure (other such terms, splines say, get nothing here)."""
    info = q.factor_info.get(factor.expr)
    arg = _poly_raw_var(info.tree, q.env) if info is not None and info.tree is not None else None
    if arg is None:
        return
    base, why = enclosure(arg, var_iv, q.env, getattr(info, "aliases", {}))
    ivs = []
    if base is not None:
        try:
            ivs = [_pow(base, i + 1) for i in range(len(cols))]
        except _Undefined:
            why = _powers_undefined(arg, base)
    if why is not None:
        if not q.fallback:
            raise ValueError(undefined_message(label, why, info.data_vars, var_iv))
        return
    for c, iv in zip(cols, ivs):
        if c not in out.columns:
            _derive(out, c, iv, info.data_vars, used)


def _undefined_without_box(info, var_iv, q):
    """The reason a transform of variables without an interval may be undefined, or None."""
    if info is None or info.tree is None or not info.data_vars or all(v in var_iv for v in info.data_vars):
        return None   # every variable has an interval: enclosure() settles it
    return undefined_somewhere(info.tree, list(info.data_vars), q.env, getattr(info, "aliases", {}),
                               known={v: var_iv[v] for v in info.data_vars if v in var_iv})


def _derive_term(out, label, cols, factors, var_iv, q, used):
    """A term's enclosure: the product of its factors' (a categorical factor ranges over
    its coding). Undefined on the box and no bound of its own: refused."""
    ivs, vars_, why = [], [], None
    for fac in factors:
        info = q.factor_info.get(fac.expr)
        kind, state = q.encoder_state.get(fac.expr, (None, {}))
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
            iv, reason = enclosure(info.tree, var_iv, q.env, getattr(info, "aliases", {}))
            ivs.append(iv)
            why = why or reason
    if why is None and q.fallback:
        # a scalar bound clips the column, not its variables: a transform undefined for some
        # of their values would set those rows to the midpoint unseen; refused, before the data
        probe = [_undefined_without_box(q.factor_info.get(fac.expr), var_iv, q) for fac in factors]
        probe = next((r for r in probe if r), None)
        if probe is not None:
            raise ValueError(undefined_message(label, probe, vars_, var_iv, scalar=True))
    iv = None
    if why is None and cols and all(v is not None for v in ivs):
        try:
            iv = ivs[0]
            for nxt in ivs[1:]:
                iv = _mul(iv, nxt)
        except _Undefined:
            iv, why = None, "the product of its factors exceeds the floating-point range"
    if why is not None and not q.fallback:
        # undefined or unbounded on the public box, and no bound of its own: refused
        # (a bound from the data would void the guarantee; the rows' values would decide)
        raise ValueError(undefined_message(label, why, vars_, var_iv))
    if iv is None:
        return
    for c in cols:
        if c not in out.columns and q.inherent.get(c) is None:
            _derive(out, c, iv, vars_, used)


def _response_bound(out, by_norm, xdict, var_iv, q, used):
    """``Bounds.y``, else the codebook's entry for the response, else one derived from
    the entries of its variables (``np.log(Salary) ~ ...``)."""
    resp_hit = by_norm.get(normalise_name(q.response_name))
    if resp_hit is not None and resp_hit[0] in xdict:
        if out.y is None:
            out.y = resp_hit[1]
            used.add(resp_hit[0])
    lhs_info = q.lhs_info
    if out.y is None and len(lhs_info) == 1 and lhs_info[0].tree is not None:
        iv, why = enclosure(lhs_info[0].tree, var_iv, q.env, getattr(lhs_info[0], "aliases", {}))
        if why is not None:
            raise ValueError(undefined_message(q.response_name, why, lhs_info[0].data_vars, var_iv,
                                               response=True))
        if iv is not None and iv[0] < iv[1]:
            out.y, out.y_derived = iv, True
            out.derived[q.response_name] = iv
            used.update(v for v in lhs_info[0].data_vars if v in xdict)


def raw_intervals(xdict, data_columns):
    """Data column -> its public interval, for the codebook's entries that name a column
    of the data (a scalar b read as [-b, b]): the intervals raw values are clipped to
    before the formula's transforms see them, and the box of the interval arithmetic."""
    data_set = set(data_columns)
    return {key: (val if isinstance(val, tuple) else (-val, val))
            for key, val in xdict.items() if key in data_set}


def undefined_message(term, why, variables, var_iv, *, response=False, scalar=False):
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
    if scalar:   # a scalar bound only: it clips the column, and says nothing of the variables' domain
        names = _fmt_names(list(variables))
        where = "; a scalar bound clips the model's column, not " + names
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


def check_codebook_early(bnds, F, lhs_info, rhs_info, dtypes, env, used, colset):
    """What the codebook and the formula refuse by themselves, before the data are read.

    Only names, dtypes and the codebook's numbers are looked at, so these errors are the
    same for every data set with those columns:

    * an interval for a column that is not numeric (a categorical variable takes levels;
      mapping its dummies by the interval would rescale their coding);
    * a transform (or interaction) that is undefined or unbounded somewhere on the box of
      its variables' intervals, for a term with no bound of its own (no entry for the
      term, no scalar ``Bounds.x`` or ``Bounds.default``), and likewise for the response
      (:func:`undefined_message`). An entry that might name one of the term's
      model-matrix columns defers the decision to :func:`resolve_codebook`, which makes
      it once the columns are known (and raises the same error).
    """
    if bnds is None or not isinstance(bnds.x, dict) or not bnds.x:
        return
    xdict = bnds.x
    for key, val in xdict.items():
        if isinstance(val, tuple) and key in used and not pd.api.types.is_numeric_dtype(dtypes[key]):
            raise ValueError(
                f"bounds x[{key!r}]: an interval ({val[0]:g}, {val[1]:g}) is given for {key!r}, but {key!r} is not "
                f"numeric (dtype {dtypes[key]}): a categorical variable takes levels, not an interval (its dummy "
                "columns keep the range of their coding). Remove the entry, declare the levels "
                f"(C({key}, levels=[...]) or a pandas Categorical with explicit categories), or convert the "
                "column to numbers")
    var_iv = raw_intervals(xdict, colset)
    if not var_iv:
        return
    norm_keys = {normalise_name(k): k for k in xdict}
    response = lhs_info[0].expr if len(lhs_info) == 1 else None
    if (response is not None and lhs_info[0].tree is not None and bnds.y is None
            and normalise_name(response) not in norm_keys):
        _, why = enclosure(lhs_info[0].tree, var_iv, env, lhs_info[0].aliases)
        if why is not None:
            raise ValueError(undefined_message(response, why, lhs_info[0].data_vars, var_iv, response=True))
    if bnds.default is not None:
        return  # every column has a bound of its own: the default
    labels = {normalise_name(str(t)) for t, _ in rhs_info}
    if response is not None:
        labels.add(normalise_name(response))
    # entries that name neither a data column nor a term: perhaps a model-matrix column
    # of some term (a dummy of an interaction, a column of a raw polynomial)
    unclaimed = any(nk not in labels and k not in colset for nk, k in norm_keys.items())
    for term, infos in rhs_info:
        label = str(term)
        if label == "1" or normalise_name(label) in norm_keys:
            continue
        for info in infos:
            if info.tree is None or _is_coding_call(info, env):
                continue
            _, why = factor_enclosure(info.tree, var_iv, env, info.aliases)
            if why is None or unclaimed:
                continue
            vars_ = [v for i in infos for v in i.data_vars]
            raise ValueError(undefined_message(label, why, vars_, var_iv))


def raw_clip_limits(bnds, lhs_info, rhs_info, dtypes, env, colset):
    """Data column -> public interval, for the numeric columns that the formula's
    transforms and interactions read and that the codebook bounds (``DesignSpec.raw_limits``).

    Columns used only as they are need no raw clip (their model-matrix column is clipped
    to the same interval), and variables inside ``C(...)`` or ``hashed(...)`` are levels,
    not numbers to clip."""
    if bnds is None or not isinstance(bnds.x, dict) or not bnds.x:
        return {}
    var_iv = raw_intervals(bnds.x, colset)
    if not var_iv:
        return {}
    out = {}

    def take(variables):
        for v in variables:
            dt = dtypes.get(v)
            if v in var_iv and pd.api.types.is_numeric_dtype(dt) and not pd.api.types.is_bool_dtype(dt):
                out[v] = var_iv[v]

    for _, infos in rhs_info:
        for info in infos:
            if info.tree is None:
                if len(infos) > 1:  # a column in an interaction
                    take(info.data_vars)
            elif not _is_coding_call(info, env):
                take(info.data_vars)
    if len(lhs_info) == 1 and lhs_info[0].tree is not None:
        take(lhs_info[0].data_vars)
    return out


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
