"""From (formula, data frame, public bounds) to clipped, publicly mapped matrices.

This is the only module that sees the user's data frame. It turns a formula into
model-matrix columns with formulaic, clips every column and the response to
public bounds, maps interval-bounded columns to [-1, 1] by public numbers, and
lints the formula for anything that makes the result depend on the data in a
way the privacy analysis does not cover. Errors a user can cause are raised
before any of the selection work starts, with a message naming the argument and
the fix.

Choices made here (docs/methods/selection.md, "Data, neighbours and bounds")
------------------------------------------------
Formula
    formulaic (>= 1.1) expands ``"y ~ ."`` itself to all columns of ``data``
    not used on the left-hand side, in the order of the columns. The intercept
    is in the model unless the formula removes it (``0 +``, ``- 1``); it is
    always forced in, never a candidate. Functions and constants the formula
    names that are not columns of ``data`` are looked up in the caller's scope
    (functions, modules, classes and single numbers or strings only); anything
    else from that scope (an array, list, tuple, Series, dict, ...) is refused,
    since it could bypass the checks and the clipping and would be kept in the
    result: write lists of levels or knots literally in the formula.

Neighbours
    Two datasets are neighbours when they differ by **replacing one row**; n is
    fixed and treated as public. Every transform in the formula must therefore
    act row by row: then one replaced row of ``data`` changes exactly one row of
    the design, and the sensitivities of the selection stage hold.

Which bounds are public
    A bound is public when it comes from the user (``bounds=``) or is a property
    of the encoding itself: a dummy column of a categorical variable, or a
    bool column (0/1), lies in the range of its contrast coding (for the
    default treatment coding, {0, 1}; bound 1) whatever the data are; an
    interaction of such columns has the product of their bounds. A bool
    response is taken as 0/1 with the public bound 1. Every other column (and
    a numeric response) without a bound gets one **from the data** (max |value|,
    or 1 for a column of zeros; no mapping): a :class:`~dpsubset.privacy.leaks.PrivacyLeakWarning` is issued,
    ``Design.bounds_public`` is False and the reason is listed in
    ``Design.leaks``.

Scalar and interval bounds
    A scalar ``b`` clips a column to [-b, b] and does **not** rescale it (the
    paper's setting: ``bounds=(0.5, 0.5)`` on raw data, with r and lam in data
    units). A scalar ``Bounds.x`` applies to every non-intercept column except
    the dummy and bool columns, which keep the bound of their coding (1 for
    treatment coding): that bound is exact, and clipping a 0/1 column to
    [-b, b] with b < 1 would rescale every row where it is 1, silently changing
    the meaning of its coefficient. (The paper's experiments have no dummies,
    so b_j = b_x for all j there.) A dict entry naming a dummy column or a
    categorical term overrides its coding bound. An interval
    (lo, hi) clips to [lo, hi] and maps the column affinely to [-1, 1] by the
    public midpoint and half-width, x' = (x - (lo + hi)/2) / ((hi - lo)/2); the
    mapped column has bound 1 (the half-width is widened where the rounded midpoint
    would leave an end further away, so that this holds in floating point too).
    Bounds are numbers in [1e-150, 1e150] (ends and half-widths of intervals too):
    beyond them floating point cannot map or square them.

The no-intercept rule
    When the model has no intercept ("y ~ 0 + ." or "- 1"), a shift of a column
    or of the response would change the model (the shift can no longer be
    absorbed by an intercept), so an interval is mapped by scaling only:
    centre 0, half-width max(|lo|, |hi|). The mapped column still lies in
    [-1, 1] and has bound 1.

Where bounds apply
    Bounds apply to model-matrix columns (after the formula's row-wise
    transforms) and to the materialised response. ``Bounds.x`` is a codebook
    for the data set: an entry may name a model-matrix column or a term of the
    formula, in the formula's spelling or formulaic's (for a categorical
    variable the entry applies to all of its dummy columns), or a column of the
    data that this formula does not use (it is then listed as unused). A
    transform of bounded columns (``I(x**2)``, ``np.log(x)``, ``x:z``) without
    an entry of its own gets the bound that follows from public interval
    arithmetic (dpsubset/bounds.py, which lists what it derived). Clipping
    happens as soon as the matrix exists, before anything else touches it; and
    the raw columns that transforms and interactions read are clipped to their
    codebook intervals before the formula is evaluated, so that no row outside
    the box can make a transform fail. A transform undefined or unbounded
    somewhere on that box is refused, before the data are read, unless its term
    has a bound of its own; its non-finite values are then placed by a fixed
    rule (+-inf to the ends, nan to the midpoint). Errors that remain depend on
    rows outside the data's domain only (docs/guide/privacy-caveats.md).

Categorical variables
    String, object and pandas Categorical variables expand to dummy columns
    (treatment coding, formulaic's default), each dummy a separate candidate.
    Which levels occur is a function of the data, and the levels decide the
    columns of the design; so levels **learned from the data** raise a
    PrivacyLeakWarning naming the variable and the fix. Levels count as public
    when written in the formula, ``C(x, levels=[...])``, or carried by a
    pandas Categorical dtype (its categories are explicit, unused ones included;
    they are public provided the user fixed them in advance, not with
    ``pd.Categorical(values)``, which learns them from the values: the user's
    responsibility, as for any bound). ``C(x)`` on a bool or numeric column
    learns its levels too. ``hashed(x, levels=k)`` has public levels. A value
    outside levels given in ``C(x, levels=[...])`` is an error.

Transforms that learn from the data
    Stateful transforms (formulaic marks them as such) compute something from
    all rows: ``center``, ``scale``, ``standardize``, orthogonal ``poly`` and
    spline bases (``bs``, ``cr``, ``cs``, ``cc``) that pick knots or boundary
    knots from the data. They raise a PrivacyLeakWarning naming the term and
    the fix (``poly(x, d, raw=True)``; ``knots=``, ``lower_bound=`` and
    ``upper_bound=`` given explicitly), as does any other stateful transform.
    Transforms that mix rows (``lag``, ``np.cumsum``, ``x.shift()``,
    ``x.mean()``, ...) break the row-replacement relation and warn too. An
    arbitrary Python function in the formula cannot be checked: it must act
    row by row.

Data
    ``data`` may be a pandas DataFrame, a mapping of column names to
    equal-length columns, or an object with a ``to_pandas()`` method (polars,
    pyarrow). Missing or infinite values in the columns the formula uses are an
    error (never silently dropped: that would change n). A non-numeric response
    is a TypeError; a bool response is accepted as 0/1. A text column whose
    entries are mostly numbers is an error naming the column and the number of
    entries that are not (as text it would become one level per value), and so
    is a column named ``Intercept`` (it would merge with the intercept). Integer
    columns used inside transforms are converted to float first, so that
    ``I(x * x)`` cannot wrap around. Messages name columns and counts, never
    values: error texts of formulaic or numpy are scrubbed of the values of the
    text columns used.

Two routes to the same matrices
    A formula that names numeric data columns as they are (``"y ~ ."``,
    ``"y ~ 0 + ."``, ``"y ~ a + b"`` on float or integer columns) is read directly
    from the frame, in row blocks, into one clipped and mapped copy of X (no
    formulaic materialisation, no per-column pandas access; ``"y ~ ."`` on such a
    frame is expanded without one formula term per column). Everything else goes
    through formulaic. Both routes give the same matrices, names, bounds and clip
    intervals (tests/test_design_scale.py), and the checks and messages are shared.
    With ``gram=`` the rows are reduced to the sufficient statistics of least
    squares in the same blocked pass instead (:mod:`dpsubset.design.suffstats`).

Nothing here keeps the user's data: a :class:`Design` holds only the clipped,
mapped arrays, public maps and the formulaic model spec (for predictions). It
is internal to the package and never released.
"""
from __future__ import annotations

import ast
import builtins
import importlib
import math
import numbers
import re
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import ModuleType

import numpy as np
import pandas as pd

from ..privacy.leaks import PrivacyLeakWarning

__all__ = ["Bounds", "as_bounds", "Design", "build_design"]

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


# --------------------------------------------------------------------------- bounds


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
        of transforms of bounded columns are derived (dpsubset/bounds.py).
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


# --------------------------------------------------------------------------- Design


@dataclass(frozen=True)
class _ModuleRef:
    name: str



@dataclass
class Design:
    """Clipped, publicly mapped model matrices, with their public bounds.

    Internal: built by :func:`build_design`, consumed by the scoring, search
    and refit stages; never released to the user.

    Attributes
    ----------
    X : ndarray, shape (n, p)
        Candidate columns, clipped and mapped.
    y : ndarray, shape (n,)
        Response, clipped and mapped.
    forced : ndarray, shape (n, k)
        Always-in columns: the intercept first (if present), then the ``keep=``
        columns; clipped and mapped.
    candidate_names, forced_names : list of str
        Model-matrix column names, in the order of ``X`` and ``forced``.
    response_name : str
        Name of the response (the left-hand side as formulaic writes it).
    x_bounds : ndarray, shape (p,)
        Bounds b_j of the mapped candidate columns (b for a scalar bound, 1.0 for
        an interval-mapped column).
    forced_bounds : ndarray, shape (k,)
        Bounds of the mapped forced columns (1.0 for the intercept).
    b_y : float
        Bound of the mapped response.
    column_maps : dict
        name -> (centre, half_width) of the public map x' = (x - centre) / half_width,
        for every column and for the response ((0, 1) when not mapped).
    has_intercept : bool
    bounds_public : bool
        False when any bound was taken from the data.
    leaks : list of str
        Why the guarantee is void or weakened (empty when nothing was found).
    model_spec : formulaic.ModelSpecs or None
        To build the same columns on new data (:meth:`transform_new`); None when
        the formula names plain numeric columns only (they are read directly).
    n : int
        Number of rows.
    clip_limits : dict
        name -> (lo, hi), the clipping interval in the model-matrix units.
    eval_context : dict
        Names from the caller's scope that the formula uses (functions, modules,
        constants), so that new data are transformed the same way.
    rhs_variables : list of str
        Data columns the right-hand side uses.
    bounds_derived : dict
        Column (or response) -> (lo, hi) derived from the codebook by interval
        arithmetic (public; see :mod:`dpsubset.design.codebook`).
    bounds_unused : list of str
        Entries of the codebook (``Bounds.x``) this formula does not use.
    bounds_from_data : list of str
        Columns (and the response) whose bounds were taken from the data: their
        entries in ``clip_limits``, ``x_bounds`` and ``b_y`` are statistics of the
        data, which the API keeps out of a result.
    float_columns : list of str
        Integer data columns used inside transforms, converted to float64 before
        the formula is evaluated (on new data too), so that ``I(x * x)`` cannot
        wrap around.
    gram : dpsubset.design.suffstats.SufficientStats or None
        With ``build_design(..., gram=True)``: the Gram matrix of [forced, X, y]
        and n, in place of the matrices (which then have no rows).
    raw_limits : dict
        Data column -> its public interval (the codebook's entry), for the columns
        that the formula's transforms and interactions read: they are clipped to it
        before the formula is evaluated (on new data too), so that a transform only
        ever sees values inside the codebook's box.
    """

    X: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    forced: np.ndarray = field(repr=False)
    candidate_names: list
    forced_names: list
    response_name: str
    x_bounds: np.ndarray
    forced_bounds: np.ndarray
    b_y: float
    column_maps: dict
    has_intercept: bool
    bounds_public: bool
    leaks: list
    model_spec: object = field(repr=False)
    n: int
    clip_limits: dict = field(default_factory=dict, repr=False)
    eval_context: dict = field(default_factory=dict, repr=False)
    rhs_variables: list = field(default_factory=list, repr=False)
    bounds_derived: dict = field(default_factory=dict, repr=False)
    bounds_unused: list = field(default_factory=list, repr=False)
    bounds_from_data: list = field(default_factory=list, repr=False)
    float_columns: list = field(default_factory=list, repr=False)
    gram: object = field(default=None, repr=False)
    raw_limits: dict = field(default_factory=dict, repr=False)

    def __getstate__(self):
        # Modules in the formula's scope (numpy as `numpy`, ...) do not pickle; keep their names.
        state = dict(self.__dict__)
        state["eval_context"] = {
            k: (_ModuleRef(v.__name__) if isinstance(v, ModuleType) else v) for k, v in self.eval_context.items()
        }
        return state

    def __setstate__(self, state):
        state.setdefault("raw_limits", {})  # pickled before raw columns were clipped
        ctx = state.get("eval_context", {})
        state["eval_context"] = {
            k: (importlib.import_module(v.name) if isinstance(v, _ModuleRef) else v) for k, v in ctx.items()
        }
        self.__dict__.update(state)

    def to_original_scale(self, coef_mapped, names):
        """Map coefficients of the mapped model back to the user's units.

        Parameters
        ----------
        coef_mapped : array_like, shape (m,)
            Coefficients fitted on the mapped design (columns of ``forced`` and
            ``X``), in the order of ``names``.
        names : sequence of str
            The column names of ``coef_mapped``. When the model has an
            intercept, ``"Intercept"`` must be among them.

        Returns
        -------
        pandas.Series
            Coefficients in the user's units, indexed by ``names`` (same order).

        Notes
        -----
        With y' = (y - c_y)/h_y and x_j' = (x_j - c_j)/h_j, the model
        y' = a' + sum_j b_j' x_j' is y = a + sum_j b_j x_j with
        b_j = h_y b_j' / h_j and a = c_y + h_y a' - sum_j b_j c_j. Without an
        intercept every centre is 0 (the no-intercept rule), so no adjustment
        is needed. This is exact for the unclipped part of the data only.
        """
        coef = np.asarray(coef_mapped, dtype=float)
        names = [str(nm) for nm in names]
        if coef.ndim != 1 or coef.shape[0] != len(names):
            raise ValueError(
                f"coef_mapped: expected a vector with one entry per name ({len(names)}); got shape {coef.shape}"
            )
        unknown = [nm for nm in names if nm not in self.column_maps or nm == self.response_name]
        if unknown:
            raise ValueError(f"names: {unknown} are not columns of the design; valid: {self.forced_names + self.candidate_names}")
        if len(set(names)) != len(names):
            raise ValueError("names: duplicate column names")
        if self.has_intercept and _INTERCEPT not in names:
            raise ValueError("names: the model has an intercept, so 'Intercept' must be among the names")
        c_y, h_y = self.column_maps[self.response_name]
        out = np.empty_like(coef)
        shift = 0.0
        for i, nm in enumerate(names):
            if nm == _INTERCEPT:
                continue
            c, h = self.column_maps[nm]
            out[i] = h_y * coef[i] / h
            shift += out[i] * c
        if self.has_intercept:
            i = names.index(_INTERCEPT)
            out[i] = c_y + h_y * coef[i] - shift
        return pd.Series(out, index=pd.Index(names), name="coef")

    def transform_new(self, newdata):
        """Build the model matrix of new data, mapped and clipped like the training data.

        Parameters
        ----------
        newdata : DataFrame, mapping of columns, or object with ``to_pandas()``
            Must contain the columns the right-hand side uses (the response is
            not needed).

        Returns
        -------
        ndarray, shape (m, k + p)
            Forced columns then candidate columns (``forced_names +
            candidate_names``), clipped to the same public bounds and mapped by
            the same public maps.
        """
        frame = _as_frame(newdata, "newdata")
        missing = [v for v in self.rhs_variables if v not in frame.columns]
        if missing:
            raise ValueError(f"newdata: missing columns {missing} used by the formula")
        _check_finite_columns(frame, self.rhs_variables, "newdata")
        names = self.forced_names + self.candidate_names
        if self.model_spec is None:  # plain numeric columns (the direct route): no formulaic spec
            bad = [c for c in self.rhs_variables if not pd.api.types.is_numeric_dtype(frame[c])
                   or pd.api.types.is_bool_dtype(frame[c])]
            if bad:  # named, never quoted: a value of such a column could be anything
                raise ValueError(f"newdata: column(s) {_fmt_names(bad)} are not numeric, but the model was "
                                 "fitted on numeric columns; convert them to numbers first (the values are "
                                 "not shown)")
            return _FrameColumns(frame, self.rhs_variables).clip_and_map(names, self.clip_limits, self.column_maps)
        frame = _text_as_object(frame, self.rhs_variables, dict(zip(frame.columns, frame.dtypes)))
        frame = _clip_raw(_as_float(frame, self.float_columns), self.raw_limits)
        from formulaic.errors import DataMismatchWarning

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                mm = self.model_spec.rhs.get_model_matrix(frame, context=dict(self.eval_context), na_action="ignore")
            except Exception as exc:  # formulaic raises several types; one message for the user
                text = _scrub_values(str(exc), frame, self.rhs_variables)
                raise ValueError(f"newdata: could not build the model matrix: {type(exc).__name__}: "
                                 f"{text}") from None
        if any(issubclass(w.category, DataMismatchWarning) for w in caught):
            # formulaic would code an unseen level as the reference level; refuse, like patsy
            raise ValueError(_unseen_levels_message(self.model_spec, frame))
        for w in caught:
            warnings.warn(w.message, w.category, stacklevel=2)
        names = self.forced_names + self.candidate_names
        M = _fill_undefined(_numeric_matrix(mm, names, "newdata"), names, self.clip_limits, "newdata")
        return _clip_and_map(M, names, self.clip_limits, self.column_maps)


# --------------------------------------------------------------------------- helpers


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



def _as_frame(data, argname="data"):
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


#: Elements per row block in the blocked passes over the data (finite checks, direct
#: materialisation, sufficient statistics): 2 Mi doubles, 16 MB (few transient bytes next to X).
_BLOCK_ELEMENTS = 2**21


def _row_blocks(n, width, block_elements=None):
    """(start, stop) of consecutive row blocks of about ``block_elements`` entries each."""
    step = max(1, (block_elements or _BLOCK_ELEMENTS) // max(1, width))
    return [(a, min(n, a + step)) for a in range(0, n, step)]


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


def _rows(k):
    return f"{k} row{'s' if k != 1 else ''}"


def _undefined_error(argname, counts):
    """Non-finite values of the formula in columns without a public bound: the columns
    and the numbers of rows, never the values."""
    desc = ", ".join(f"{c!r} ({_rows(k)})" for c, k in counts.items())
    return ValueError(
        f"{argname}: the formula produced missing or infinite values (e.g. log of a value <= 0) in {desc}, "
        "whose bound is not public (taken from the data), so no fixed rule can place them; give "
        f"{'these columns' if len(counts) > 1 else 'the column'} a bound in the codebook (an interval "
        "on which the transform is finite for its variables, or one of its own), or change the formula "
        "or the data")


def _fill_undefined(M, names, clip_limits, argname, learned=()):
    """Place the formula's non-finite values into each column's public clip interval.

    A transform of in-range values can still be undefined or infinite (``np.log`` of a
    column without an interval, ``inf - inf``, or a term whose own interval is its only
    bound): a fixed rule maps them, row by row and whatever the other rows are, so that
    no error and no count depends on the data: +-inf go to the interval's ends (the clip
    that follows does that) and nan to its midpoint (set here, in place). A column whose
    bound is not public (``learned``, or an infinite clip interval in a predictor that
    keeps no learned bound) has no interval to map into: an error naming it and the
    number of such rows (the guarantee is void there in any case).

    Parameters
    ----------
    M : ndarray, shape (n, m)
        Raw model-matrix columns ``names`` (modified in place if writeable).
    names : list of str
    clip_limits : dict
    argname : str
        ``"data"`` or ``"newdata"``, for the message.
    learned : collection of str
        Columns whose bounds were taken from the data.

    Returns
    -------
    ndarray
        ``M``, or a copy of it when it was read-only.
    """
    ok = np.ones(M.shape[1], dtype=bool)
    for a, b in _row_blocks(M.shape[0], M.shape[1]):  # no n x m temporary
        ok &= np.isfinite(M[a:b]).all(axis=0)
    if ok.all():
        return M
    refuse = {}
    if not M.flags.writeable:  # a read-only view of pandas' memory (copy-on-write)
        M = M.copy()
    for j in np.flatnonzero(~ok):
        nm = names[j]
        lo, hi = clip_limits[nm]
        col = M[:, j]
        if nm in learned or not (math.isfinite(lo) and math.isfinite(hi)):
            refuse[nm] = int(np.count_nonzero(~np.isfinite(col)))
            continue
        col[np.isnan(col)] = (lo + hi) / 2
    if refuse:
        raise _undefined_error(argname, refuse)
    return M


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


def _interval_map(lo, hi, has_intercept):
    """(centre, half-width) of the public map x' = (x - centre) / half of [lo, hi] onto [-1, 1].

    With an intercept the centre is the midpoint and the half-width (hi - lo) / 2, raised
    to fl(hi - centre) or fl(centre - lo) where the rounded centre leaves an end further
    away (an interval a few units wide near 2^53, say): then every x in [lo, hi] maps into
    [-1, 1] in floating point, not only in exact arithmetic, because rounding is monotone
    (fl(x - c) <= fl(hi - c) <= half, and a quotient a / half with a <= half rounds to at
    most 1; likewise below). Without an intercept (the no-intercept rule) the centre is 0
    and the half-width max(|lo|, |hi|). The interval's ends lie within
    :data:`dpsubset._validation.BOUND_MAX` (checked by :class:`Bounds`), so nothing overflows.
    """
    if not has_intercept:
        return (0.0, float(max(abs(lo), abs(hi))))
    centre = (lo + hi) / 2
    half = max((hi - lo) / 2, hi - centre, centre - lo)
    return (float(centre), float(half))


def _clip_and_map(M, names, clip_limits, column_maps, out=None):
    """Clip the columns of M to their public limits and map them, x' = (x - centre) / half.

    Into ``out`` (a C-ordered array of M's shape, possibly M itself) when given.
    """
    return _apply_limits(M, _limits(names, clip_limits, column_maps), out)


def _limits(names, clip_limits, column_maps):
    """Per-column (lo, hi, centre, half) arrays of ``names``, and whether they are uniform."""
    lims = np.array([clip_limits[nm] for nm in names], dtype=float).reshape(-1, 2)
    maps = np.array([column_maps[nm] for nm in names], dtype=float).reshape(-1, 2)
    lo, hi, c, h = lims[:, 0], lims[:, 1], maps[:, 0], maps[:, 1]
    same = len(lo) > 0 and bool(np.all(lo == lo[0]) and np.all(hi == hi[0]))
    return lo, hi, c, h, same, bool(np.any(c != 0.0)), bool(np.any(h != 1.0))


def _apply_limits(M, limits, out=None):
    """Clip and map by precomputed limits. Scalar limits when every column has the same
    (numpy clips with scalars ~10x faster than with per-column arrays); the shift and the
    scaling are skipped where no column needs them (x - 0 and x / 1 are exact)."""
    lo, hi, c, h, same, shift, scale = limits
    if out is None:
        out = np.empty(np.shape(M))
    if same:
        np.clip(M, lo[0], hi[0], out=out)
    else:
        np.clip(M, lo, hi, out=out)
    if shift:
        out -= c
    if scale:
        out /= h
    return out


def _scope_object_allowed(obj):
    """Whether an object from the caller's scope may be used by the formula.

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
    dtypes = dict(zip(frame.columns, frame.dtypes))
    for c in columns:
        dt = dtypes.get(c)
        if dt is None or c in declared or isinstance(dt, pd.CategoricalDtype) \
                or pd.api.types.is_bool_dtype(dt) or pd.api.types.is_numeric_dtype(dt):
            continue
        if not (pd.api.types.is_object_dtype(dt) or pd.api.types.is_string_dtype(dt)):
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
    from formulaic.transforms import TRANSFORMS

    env = dict(TRANSFORMS)
    env.update(eval_ctx)
    cast = set()
    for info in all_info:
        if info.tree is None:
            continue
        body = info.tree.body
        if isinstance(body, ast.Call) and _resolve(body.func, env) in (TRANSFORMS["C"], TRANSFORMS["hashed"]):
            continue
        cast.update(v for v in info.data_vars if pd.api.types.is_integer_dtype(frame[v])
                    and not pd.api.types.is_bool_dtype(frame[v]))
    cast = sorted(cast)
    return _as_float(frame, cast), cast


def _is_coding_call(info, env):
    """Whether a factor is ``C(...)`` or ``hashed(...)``: its variable's values are levels."""
    from formulaic.transforms import TRANSFORMS

    body = info.tree.body if info.tree is not None else None
    return isinstance(body, ast.Call) and _resolve(body.func, env) in (TRANSFORMS["C"], TRANSFORMS["hashed"])


def _check_codebook_early(bnds, F, lhs_info, rhs_info, dtypes, env, used, colset):
    """What the codebook and the formula refuse by themselves, before the data are read.

    Only names, dtypes and the codebook's numbers are looked at, so these errors are the
    same for every data set with those columns:

    * an interval for a column that is not numeric (a categorical variable takes levels;
      mapping its dummies by the interval would rescale their coding);
    * a transform (or interaction) that is undefined or unbounded somewhere on the box of
      its variables' intervals, for a term with no bound of its own (no entry for the
      term, no scalar ``Bounds.x`` or ``Bounds.default``), and likewise for the response
      (:func:`dpsubset.design.codebook.undefined_message`). An entry that might name one of the
      term's model-matrix columns defers the decision to
      :func:`dpsubset.design.codebook.resolve_codebook`, which makes it once the columns are
      known (and raises the same error).
    """
    if bnds is None or not isinstance(bnds.x, dict) or not bnds.x:
        return
    from .codebook import enclosure, factor_enclosure, normalise_name, raw_intervals, undefined_message

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


def _raw_clip_limits(bnds, lhs_info, rhs_info, dtypes, env, colset):
    """Data column -> public interval, for the numeric columns that the formula's
    transforms and interactions read and that the codebook bounds (Design.raw_limits).

    Columns used only as they are need no raw clip (their model-matrix column is clipped
    to the same interval), and variables inside ``C(...)`` or ``hashed(...)`` are levels,
    not numbers to clip."""
    if bnds is None or not isinstance(bnds.x, dict) or not bnds.x:
        return {}
    from .codebook import raw_intervals

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


def _clip_raw(frame, limits):
    """``frame`` with the columns in ``limits`` clipped to their intervals (as float64)."""
    if not limits:
        return frame
    out = frame.copy(deep=False)
    for v, (lo, hi) in limits.items():
        if v in out.columns:
            out[v] = np.clip(out[v].to_numpy(dtype=float), lo, hi)
    return out


def _as_float(frame, columns):
    if not columns:
        return frame
    out = frame.copy(deep=False)
    for v in columns:
        if v in out.columns and pd.api.types.is_integer_dtype(out[v]):
            out[v] = out[v].astype("float64")
    return out


def _capture_context(depth):
    """The caller's scope, ``depth`` frames above build_design."""
    try:
        frame = sys._getframe(depth + 1)
    except (ValueError, AttributeError):
        return {}
    ctx = dict(frame.f_globals)
    ctx.update(frame.f_locals)
    return ctx


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


class _PlainFormula:
    def __init__(self, lhs, rhs):
        self.lhs, self.rhs = lhs, rhs


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
    base = _parse_formula(f"{lhs} ~ {1 if intercept else 0}", [lhs])
    rhs = list(base.rhs) + [_PlainTerm(c) for c in columns if c != lhs]
    return _PlainFormula(base.lhs, rhs)


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


_MIXES_ROWS = ("term {term!r} uses {fname}(), which combines values from several rows: replacing one row then "
               "changes every row of the design, and the result is not differentially private; fix: use only "
               "row-by-row transforms with public constants")


def _lint_calls(info, env, data_columns):
    """Warnings (term, message) for transforms that learn from or mix rows."""
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


def _fmt_names(names):
    names = [repr(n) for n in names]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _plain_columns(F, dtypes, colset):
    """(response, columns, has_intercept) when the formula only names numeric data columns
    as they are ("y ~ .", "y ~ 0 + .", "y ~ a + b"): then no formulaic materialisation is
    needed. None otherwise (transforms, categoricals, bools, interactions, other dtypes)."""
    from formulaic.parser.types.factor import Factor

    lookup = Factor.EvalMethod.LOOKUP

    def plain(fac):
        d = dtypes.get(fac.expr)
        return (isinstance(d, np.dtype) and d.kind in "fiu" and fac.expr != _INTERCEPT
                and (isinstance(fac, _PlainFactor) or fac.eval_method == lookup))

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


def _materialise_direct(frame, F, response, cols, has_intercept):
    """The direct route for plain numeric columns: the same outputs as
    :func:`_materialise_formulaic` (no model spec), without an n x p copy yet."""
    names_all = ([_INTERCEPT] if has_intercept else []) + list(cols)
    y_raw = np.array(frame[response].to_numpy(dtype=float), dtype=float)
    one = {c: [c] for c in cols}
    return (None, response, y_raw, names_all, _FrameColumns(frame, cols), {c: c for c in cols}, one,
            dict(one), {c: None for c in cols}, has_intercept, [], {}, {}, {})


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


def _materialise_formulaic(F, frame, formula, eval_ctx, env, all_info, colset, stacklevel,
                           lhs_vars, rhs_vars):
    """The model matrices through formulaic (transforms, categoricals, interactions).

    Returns the tuple build_design unpacks: model spec, response name, raw response,
    model-matrix column names, their values (a column source), the term structure,
    the inherent (coding) bounds, whether there is an intercept, the categorical
    variables whose levels were learned from the data, the coding ranges of coded
    columns (the clip interval shown), formulaic's encoder state and the factor
    information by expression (for resolving the codebook).
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
    from .codebook import coding_range, product_range
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
    return (spec, response_name, y_raw, names_all, _MatrixColumns(M, names_all), term_of, term_cols,
            single_var_cols, inherent, has_intercept, learned, inherent_range, enc, info_by_expr)


# --------------------------------------------------------------------------- build


def build_design(formula, data, bounds=None, keep=None, *, stacklevel=2, gram=False):
    """Turn a formula, a data frame and public bounds into clipped, mapped matrices.

    Parameters
    ----------
    formula : str
        A formulaic formula with one response, e.g. ``"y ~ ."``,
        ``"Salary ~ Hits + C(League, levels=['A', 'N'])"``, ``"y ~ 0 + ."``.
        The intercept is in the model unless the formula removes it; it is never
        a candidate.
    data : pandas.DataFrame, mapping of columns, or object with ``to_pandas()``
        The data. Only the columns the formula uses are checked and read.
    bounds : None, Bounds, (b_x, b_y) or dict, optional
        Public bounds, see :class:`Bounds` and :func:`as_bounds`. Missing bounds
        are taken from the data, with a PrivacyLeakWarning.
    keep : str or sequence of str, optional
        Columns always in the model: model-matrix column names, terms of the
        formula, or data variables (all columns of the terms made of that
        variable alone are then forced).
    stacklevel : int, keyword-only
        Stack level of the warnings (2: the caller of ``build_design``). The
        caller's scope at that level is also where the formula looks up
        functions and constants that are not in ``data``.
    gram : bool or callable, keyword-only
        Return the sufficient statistics of least squares (``Design.gram``, a
        :class:`dpsubset.design.suffstats.SufficientStats`) computed in one blocked pass
        instead of the n x p matrices (``X``, ``forced`` and ``y`` then have no
        rows). For tall data: memory p^2 instead of n p. A callable
        ``gram(n, p, k)`` decides from the public numbers of rows, candidate and
        always-in columns once they are known.

    Returns
    -------
    Design

    Raises
    ------
    TypeError
        ``formula`` not a string, ``data`` not a data frame, ``keep`` or
        ``bounds`` of the wrong type, non-numeric response.
    ValueError
        Unparsable formula, unknown variables, missing or infinite values in
        the used columns, invalid bounds, bounds or keep naming columns not in
        the model, no candidate columns.

    Warns
    -----
    PrivacyLeakWarning
        Bounds taken from the data; categorical levels learned from the data;
        stateful or row-mixing transforms in the formula.
    """
    # ---- arguments: cheap checks first
    if not isinstance(stacklevel, int) or isinstance(stacklevel, bool) or stacklevel < 1:
        raise TypeError(f"stacklevel: expected an int >= 1; got {stacklevel!r}")
    if not isinstance(formula, str):
        raise TypeError(f"formula: expected a string such as 'y ~ x1 + x2' or 'y ~ .'; got {type(formula).__name__}")
    if "~" not in formula:
        raise ValueError(f"formula: {formula!r} has no '~'; write it as 'y ~ x1 + x2' or 'y ~ .'")
    frame = _as_frame(data, "data")
    n = int(frame.shape[0])
    if n == 0:
        raise ValueError("data: has no rows")
    bnds = as_bounds(bounds)
    if keep is None:
        keep_list = []
    elif isinstance(keep, str):
        keep_list = [keep]
    elif isinstance(keep, (list, tuple)) and all(isinstance(k, str) for k in keep):
        keep_list = list(dict.fromkeys(keep))
    else:
        raise TypeError(f"keep: expected a column name or a list of column names; got {keep!r}")

    columns = frame.columns.tolist()  # tolist: iterating an Index of strings element-wise is slow
    colset = set(columns)  # built once: rebuilding it per factor made this quadratic in p
    dtypes = dict(zip(columns, frame.dtypes.tolist()))
    F = _parse_plain_dot(formula, columns, dtypes) or _parse_formula(formula, columns)

    # ---- names used by the formula
    user_ctx = _capture_context(stacklevel - 1)
    from formulaic.transforms import TRANSFORMS

    lhs_info = [_FactorInfo(f, colset) for t in F.lhs for f in t.factors]
    rhs_info = [(t, [_FactorInfo(f, colset) for f in t.factors]) for t in F.rhs]
    all_info = lhs_info + [i for _, infos in rhs_info for i in infos]
    eval_ctx, unknown, outside = {}, [], []
    for info in all_info:
        for nm in info.other_names:
            if nm in TRANSFORMS or nm in eval_ctx or (nm not in user_ctx and hasattr(builtins, nm)):
                continue
            if nm not in user_ctx:
                unknown.append(nm)
                continue
            obj = user_ctx[nm]
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
    # ---- the codebook against the formula: names, dtypes and public numbers only, so
    # that what they refuse is refused before the data are read
    _check_codebook_early(bnds, F, lhs_info, rhs_info, dtypes, env, set(lhs_vars + rhs_vars), colset)

    # ---- data checks on the used columns only
    odd = [c for c in lhs_vars + rhs_vars
           if not (isinstance(dtypes[c], np.dtype) and dtypes[c].kind in "fiub")  # the common case, quickly
           and (pd.api.types.is_datetime64_any_dtype(dtypes[c]) or pd.api.types.is_timedelta64_dtype(dtypes[c])
                or pd.api.types.is_complex_dtype(dtypes[c]) or isinstance(dtypes[c], pd.PeriodDtype))]
    if odd:
        raise TypeError(f"data: column(s) {_fmt_names(odd)} have dtype "
                        f"{', '.join(str(dtypes[c]) for c in odd)}, which a model matrix cannot use; convert "
                        "them to numbers (e.g. days since a fixed public date) or leave them out of the formula")
    _check_finite_columns(frame, lhs_vars + rhs_vars, "data")
    _check_stray_strings(frame, lhs_vars + rhs_vars, all_info, env_for=eval_ctx)
    if _INTERCEPT in lhs_vars + rhs_vars:
        raise ValueError(f"data: a column is named {_INTERCEPT!r}, the name of the model's intercept, and "
                         "the two would be merged; rename the column, e.g. "
                         f"data = data.rename(columns={{{_INTERCEPT!r}: 'intercept_col'}})")
    frame, float_columns = _integers_as_float(frame, all_info, eval_ctx)
    frame = _text_as_object(frame, lhs_vars + rhs_vars, dtypes)
    # Raw values are clipped to the codebook's intervals before any transform sees them:
    # then np.log(b) of a row with b = 0 outside b's interval (1, 4) is np.log(1), not an
    # error that would tell the data set from its neighbour without that row.
    raw_limits = _raw_clip_limits(bnds, lhs_info, rhs_info, dtypes, env, colset)
    frame = _clip_raw(frame, raw_limits)
    lhs_factor = lhs_info[0]
    response_bool = False
    if lhs_factor.tree is None and len(lhs_info) == 1:
        s = frame[lhs_vars[0]]
        response_bool = pd.api.types.is_bool_dtype(s)
        if not response_bool and (not pd.api.types.is_numeric_dtype(s) or pd.api.types.is_complex_dtype(s)):
            raise TypeError(
                f"data: the response {lhs_vars[0]!r} has dtype {s.dtype}; a numeric response is required "
                f"(a bool response is used as 0/1). Convert it, e.g. data[{lhs_vars[0]!r}] = "
                f"(data[{lhs_vars[0]!r}] == 'yes').astype(float)"
            )

    # ---- lint of the formula text (warnings are emitted only if the build succeeds)
    pending = []  # (message, leak)
    seen = set()
    for info in all_info:
        for term, msg in _lint_calls(info, env, colset):
            if msg not in seen:
                seen.add(msg)
                pending.append((msg, f"formula: {term!r} learns from or mixes rows of the data"))

    # ---- materialise: plain numeric columns directly, everything else through formulaic
    plain = _plain_columns(F, dtypes, colset)
    if plain is not None:
        mat = _materialise_direct(frame, F, *plain)
    else:
        mat = _materialise_formulaic(F, frame, formula, eval_ctx, env, all_info, colset, stacklevel,
                                     lhs_vars, rhs_vars)
    (spec, response_name, y_raw, names_all, source, term_of, term_cols, single_var_cols, inherent,
     has_intercept, learned, inherent_range, enc, info_by_expr) = mat
    for var in dict.fromkeys(v for v, _ in learned):
        exprs = sorted({e for v, e in learned if v == var and e != var})
        where = f" (in {_fmt_names(exprs)})" if exprs else ""
        pending.append((
            f"categorical variable {var!r}{where}: its levels were learned from the data "
            "(which levels occur is a function of the data, and they decide the columns of the design), so the "
            f"result is not differentially private; fix: write C({var}, levels=[...]) with the levels known in "
            f"advance, or make {var} a pandas Categorical with explicit categories",
            f"categorical levels of {var!r} learned from the data",
        ))
    xcols = [c for c in names_all if c != _INTERCEPT]

    # ---- keep
    forced_extra = []
    bad_keep = []
    for k in keep_list:
        if k == _INTERCEPT:
            if not has_intercept:
                bad_keep.append(k)
            continue
        if k in xcols:
            cols = [k]
        elif k in term_cols:
            cols = term_cols[k]
        elif k in single_var_cols:
            cols = single_var_cols[k]
        else:
            bad_keep.append(k)
            continue
        forced_extra.extend(c for c in cols if c not in forced_extra)
    if bad_keep:
        valid = list(dict.fromkeys(xcols + list(term_cols) + list(single_var_cols)))
        raise ValueError(f"keep: {_fmt_names(bad_keep)} not in the model; valid names: {valid}")
    forced_names = ([_INTERCEPT] if has_intercept else []) + forced_extra
    candidate_names = [c for c in xcols if c not in forced_extra]
    if not candidate_names:
        raise ValueError(
            f"formula: no candidate columns are left for selection (model columns: {names_all}; keep={keep_list}); "
            "add terms to the formula or force fewer of them with keep="
        )

    # ---- bounds per column: the codebook resolved against this formula (names in the
    # formula's spelling, unused entries listed, bounds of transforms derived: bounds.py)
    from .codebook import resolve_codebook
    scalar_x = bnds.x if (bnds is not None and bnds.x is not None and not isinstance(bnds.x, dict)) else None
    default = bnds.default if bnds is not None else None
    book = resolve_codebook(bnds.x if (bnds is not None and isinstance(bnds.x, dict)) else {},
                            bnds.y if bnds is not None else None, data_columns=columns, xcols=xcols,
                            term_cols=term_cols, structure=spec.rhs.structure if spec is not None else [], encoder_state=enc,
                            factor_info=info_by_expr, env=env, lhs_info=lhs_info,
                            response_name=response_name, lhs_vars=lhs_vars, rhs_vars=rhs_vars,
                            inherent=inherent, coding_ranges=inherent_range,
                            fallback=scalar_x is not None or default is not None)
    xdict = book.columns
    column_maps, clip_limits, mapped_bound = {}, {}, {}
    derived = []

    def settle(name, spec_, absmax):
        if spec_ is None:
            b = absmax
            b = b if b > 0 else 1.0
            derived.append(name)
            spec_ = b
        if isinstance(spec_, tuple):
            lo, hi = spec_
            clip_limits[name] = (lo, hi)
            column_maps[name] = _interval_map(lo, hi, has_intercept)
            mapped_bound[name] = 1.0
        else:
            clip_limits[name] = (-spec_, spec_)
            column_maps[name] = (0.0, 1.0)
            mapped_bound[name] = float(spec_)

    if has_intercept:
        clip_limits[_INTERCEPT] = (1.0, 1.0)
        column_maps[_INTERCEPT] = (0.0, 1.0)
        mapped_bound[_INTERCEPT] = 1.0
    specs, coded_cols = {}, set()
    for c in names_all:
        if c == _INTERCEPT:
            continue
        coded = False
        if c in xdict:
            sp = xdict[c]
        elif term_of.get(c) in xdict:
            sp = xdict[term_of[c]]
        elif inherent.get(c) is not None:
            sp, coded = inherent[c], True
        elif scalar_x is not None:
            sp = scalar_x
        else:
            sp = default
        specs[c] = sp
        if coded:
            coded_cols.add(c)
    y_spec = book.y
    if y_spec is None and response_bool:
        y_spec = 1.0
    # Non-finite values where the bound is to be taken from the data cannot be placed:
    # an error naming the columns (the guarantee is void there in any case).
    learned = {c for c, sp in specs.items() if sp is None} | ({response_name} if y_spec is None else set())
    y_bad = int(np.count_nonzero(~np.isfinite(y_raw)))
    # max |value| of the columns without a bound, in one blocked pass
    absmax = dict(zip(*source.absmax([c for c, sp in specs.items() if sp is None])))
    bad = {c: k for c, k in source.count_nonfinite([c for c, v in absmax.items() if not math.isfinite(v)])
           .items() if k}
    if y_bad and y_spec is None:
        bad[response_name] = y_bad
    if bad:
        raise _undefined_error("data", bad)
    for c, sp in specs.items():
        settle(c, sp, absmax.get(c))
        if c in coded_cols and c in inherent_range:
            # a dummy's values lie in its coding's range ({0, 1} for treatment coding): clip to
            # that interval (the same numbers; the map and the bound b stay those of the coding)
            clip_limits[c] = inherent_range[c]
    settle(response_name, y_spec, float(np.max(np.abs(y_raw))))
    # ... and where the bound is public, a fixed rule places them (nan to the midpoint of
    # the clip interval, +-inf to its ends by the clip): no error depends on the values
    source.fill_undefined(clip_limits, learned)
    if y_bad:
        y_raw = _fill_undefined(y_raw[:, None], [response_name], clip_limits, "data", learned)[:, 0]

    if derived:
        xs = [d for d in derived if d != response_name]
        parts = []
        if xs:
            parts.append(f"the column{'s' if len(xs) > 1 else ''} {_fmt_names(xs)}")
        if response_name in derived:
            parts.append(f"the response {response_name!r}")
        what = " and ".join(parts)
        pending.append((
            f"bounds for {what} were taken from the data (max |value|); the result is not differentially "
            "private; pass bounds=... to fix, with limits known in advance, e.g. "
            "bounds=Bounds(x={'col': (lo, hi)}, y=(lo, hi)) or bounds=(b_x, b_y)",
            f"bounds for {what} taken from the data",
        ))

    # ---- clip and map (the first thing that happens to the numbers)
    lo_y, hi_y = clip_limits[response_name]
    c_y, h_y = column_maps[response_name]
    y = (np.clip(y_raw, lo_y, hi_y) - c_y) / h_y
    del y_raw
    k = len(forced_names)
    stats = None
    if callable(gram):  # the caller's rule, on public quantities only (n, p, k)
        gram = bool(gram(n, len(candidate_names), k))
    if gram:  # only X'X, X'y, y'y and n of the clipped, mapped data; no n x p matrix is kept
        from .suffstats import SufficientStats
        order = forced_names + candidate_names
        limits = _limits(order, clip_limits, column_maps)
        stats = SufficientStats.from_blocks(
            ((_apply_limits(source.block(order, a, b), limits), y[a:b])
             for a, b in _row_blocks(n, len(order) + 1)), k_forced=k)
        X, forced, y = np.empty((0, len(candidate_names))), np.empty((0, k)), np.empty(0)
    else:
        X = source.clip_and_map(candidate_names, clip_limits, column_maps)
        forced = source.clip_and_map(forced_names, clip_limits, column_maps)
    del source

    for msg, _ in pending:
        warnings.warn(msg, PrivacyLeakWarning, stacklevel=stacklevel)

    return Design(
        X=X,
        y=np.ascontiguousarray(y),
        forced=forced,
        candidate_names=candidate_names,
        forced_names=forced_names,
        response_name=response_name,
        x_bounds=np.array([mapped_bound[c] for c in candidate_names], dtype=float),
        forced_bounds=np.array([mapped_bound[c] for c in forced_names], dtype=float),
        b_y=float(mapped_bound[response_name]),
        column_maps=column_maps,
        has_intercept=has_intercept,
        bounds_public=not derived,
        leaks=[leak for _, leak in pending],
        model_spec=spec,
        n=n,
        clip_limits=clip_limits,
        eval_context=eval_ctx,
        rhs_variables=rhs_vars,
        bounds_derived=dict(book.derived),
        bounds_unused=list(book.unused),
        bounds_from_data=list(derived),
        float_columns=float_columns,
        gram=stats,
        raw_limits=raw_limits,
    )
