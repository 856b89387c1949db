"""From (formula, data frame, public bounds) to clipped, publicly mapped matrices.

:func:`build_design` is the design stage's entry: it turns a formula into model-matrix
columns, clips every column and the response to public bounds, maps interval-bounded
columns to [-1, 1] by public numbers, and lints the formula for anything that makes the
result depend on the data in a way the privacy analysis does not cover. It reads as
numbered steps, each one call into a module with one job: :mod:`~dpsubset.design.formula`
(parse, names, lint), :mod:`~dpsubset.design.codebook` (bounds),
:mod:`~dpsubset.design.frames` (reading the frame), :mod:`~dpsubset.design.materialise`
(the raw columns), :mod:`~dpsubset.design.clip` (clip and map). Errors a user can cause
are raised before any of the selection work starts, with a message naming the argument
and the fix.

Choices made here (docs/methods/selection.md, "Data, neighbours and bounds")
------------------------------------------------
Formula
    formulaic (>= 1.1) expands ``"y ~ ."`` itself to all columns of ``data``
    not used on the left-hand side, in the order of the columns. The intercept
    is in the model unless the formula removes it (``0 +``, ``- 1``); it is
    always forced in, never a candidate. Functions and constants the formula
    names that are not columns of ``data`` are looked up in the evaluation
    context, the caller's scope captured once at the entry point (functions,
    modules, classes and single numbers or strings only); anything else from that
    scope (an array, list, tuple, Series, dict, ...) is refused, since it could
    bypass the checks and the clipping and would be kept in the result: write
    lists of levels or knots literally in the formula.

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
    ``design.spec.bounds_public`` is False and the reason is listed in
    ``design.spec.leaks``. The learned bound is kept in the private half only
    (``design.data.learned_bounds``): the spec holds NaN in its place and an open
    clip interval, so that nothing learned can reach a result.

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
    arithmetic (:mod:`dpsubset.design.intervals`; the codebook lists what it derived). Clipping
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
    intervals (tests/design/test_design_scale.py), and the checks and messages are shared.
    With ``gram=`` the rows are reduced to the sufficient statistics of least
    squares in the same blocked pass instead (:mod:`dpsubset.design.suffstats`).

Nothing here keeps the user's data: a :class:`~dpsubset.design.data.Design` pairs the
public :class:`~dpsubset.design.spec.DesignSpec` (names, public maps, the formulaic model
spec, for predictions) with the private :class:`~dpsubset.design.data.DesignData` (the
clipped, mapped arrays). The data half is internal and never released.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ..privacy.leaks import PrivacyLeakWarning
from .centring import release_centres
from .clip import _apply_limits, _clip_raw, _fill_undefined, _interval_map, _limits, _row_blocks, _undefined_error
from .codebook import (Bounds, CodebookQuery, as_bounds, check_codebook_early, raw_clip_limits,
                       resolve_codebook)
from .data import Design, DesignData
from .formula import _INTERCEPT, _fmt_names, capture_context, lint, resolve_names
from .frames import as_frame, _check_finite_columns, _check_stray_strings, _integers_as_float, _text_as_object
from .materialise import materialise
from .spec import DesignSpec

__all__ = ["Bounds", "as_bounds", "Design", "DesignSpec", "DesignData", "build_design"]


def build_design(formula, data, bounds=None, keep=None, *, context=None, stacklevel=2, gram=False,
                 centre=None):
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
    context : mapping, keyword-only, default=None
        The evaluation context: where the formula looks up functions and constants
        that are not columns of ``data``, captured once by the entry point
        (:func:`dpsubset.design.formula.capture_context`) and passed down. None: the
        scope of the function that calls ``build_design`` (which is then the entry
        point), as formulaic's ``model_matrix`` does.
    stacklevel : int, keyword-only, default=2
        Stack level of the warnings only (2: the caller of ``build_design``).
    gram : bool or callable, keyword-only, default=False
        Return the sufficient statistics of least squares (``design.data.gram``, a
        :class:`dpsubset.design.suffstats.SufficientStats`) computed in one blocked pass
        instead of the n x p matrices (``X``, ``forced`` and ``y`` then have no
        rows). For tall data: memory p^2 instead of n p. A callable
        ``gram(n, p, k)`` decides from the public numbers of rows, candidate and
        always-in columns once they are known.
    centre : dpsubset.design.centring.CentreRequest, keyword-only, optional
        Release the centre and spread of every codebook column (and of an interval-bounded
        response) privately, and clip and map by them instead of the codebook's midpoint and
        half-width (:mod:`dpsubset.design.centring`; only with an intercept). The release is
        recorded in ``centre.ledger`` and listed in ``DesignSpec.centring``. None: the
        codebook's maps.

    Returns
    -------
    Design
        ``design.spec`` (public, a :class:`DesignSpec`) and ``design.data``
        (private, a :class:`DesignData`, which alone holds the bounds taken from the
        data); ``design.X``, ``design.x_bounds``, ... are the few reads of every stage
        (see :class:`Design`).

    Raises
    ------
    TypeError
        ``formula`` not a string, ``data`` not a data frame, ``keep``, ``bounds``
        or ``context`` of the wrong type, non-numeric response.
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
    # Step 1: the arguments, cheap checks first (nothing of the data is read)
    args = _check_arguments(formula, data, bounds, keep, stacklevel)
    if context is None:
        context = capture_context(1)
    elif not isinstance(context, Mapping):
        raise TypeError(f"context: expected a mapping of names to objects; got {type(context).__name__}")
    # Step 2: the formula parsed, its names resolved in the evaluation context
    names = resolve_names(formula, args.columns, args.colset, args.dtypes, context)
    # Step 3: the codebook against the formula: names, dtypes and public numbers only,
    # so that what they refuse is refused before the data are read
    check_codebook_early(args.bnds, names.formula, names.lhs_info, names.rhs_info, args.dtypes, names.env,
                         set(names.used), args.colset)
    # Step 4: the used columns checked, converted, and clipped to their codebook intervals
    prepared = _prepare_frame(args, names)
    # Step 5: the formula's transforms that learn from or mix rows (warned at the end)
    pending = lint(names, args.colset)
    # Step 6: the raw model-matrix columns (directly, or through formulaic)
    mat = materialise(names.formula, prepared.frame, formula, names, args.colset, args.dtypes,
                      stacklevel=stacklevel)
    pending += _learned_levels(mat.learned)
    # Step 7: always-in and candidate columns
    forced_names, candidate_names = _split_columns(mat, args.keep)
    # Step 8: a bound, clip interval and map for every column and the response
    settled = _settle_bounds(args, names, mat, prepared.response_bool)
    pending += _bounds_from_data(settled.from_data, mat.response_name)
    # Step 8b: the private centre and spread of the codebook columns (design/centring.py)
    settled, centring = _centre(settled, mat, forced_names + candidate_names, centre, args.n)
    # Step 9: clip and map (the first thing that happens to the numbers)
    arrays = _clip_and_map_rows(mat, settled, forced_names, candidate_names, args.n, gram)
    del mat
    for msg, _ in pending:
        if msg:   # one warning per kind (the learned levels name all their variables at once)
            warnings.warn(msg, PrivacyLeakWarning, stacklevel=stacklevel)
    # Step 10: the public spec and the private data. A bound taken from the data is a
    # statistic of the data: it goes to the data half (labelled), never to the spec, which
    # keeps NaN in its place and an open interval (a predictor does not clip that column).
    learned = {c: float(settled.mapped_bound[c]) for c in settled.from_data}

    def public_bound(c):
        return math.nan if c in learned else settled.mapped_bound[c]

    spec = DesignSpec(
        candidate_names=candidate_names,
        forced_names=forced_names,
        response_name=settled.response_name,
        x_bounds=np.array([public_bound(c) for c in candidate_names], dtype=float),
        forced_bounds=np.array([public_bound(c) for c in forced_names], dtype=float),
        b_y=float(public_bound(settled.response_name)),
        column_maps=settled.column_maps,
        has_intercept=settled.has_intercept,
        bounds_public=not settled.from_data,
        leaks=[leak for _, leak in pending],
        model_spec=settled.model_spec,
        clip_limits={c: ((-math.inf, math.inf) if c in learned else lim)
                     for c, lim in settled.clip_limits.items()},
        eval_context=names.eval_ctx,
        rhs_variables=names.rhs_vars,
        bounds_derived=dict(settled.book.derived),
        bounds_unused=list(settled.book.unused),
        bounds_from_data=list(settled.from_data),
        float_columns=prepared.float_columns,
        raw_limits=prepared.raw_limits,
        centring=centring,
    )
    return Design(spec=spec, data=replace(arrays, learned_bounds=learned) if learned else arrays)


def _centre(settled, mat, columns, centre, n):
    """Step 8b: with a centring request and an intercept, the released boxes and maps replace
    the codebook's for the codebook columns and the response (:mod:`dpsubset.design.centring`)."""
    if centre is None or not settled.has_intercept:
        return settled, ()
    names = [c for c in columns if c != _INTERCEPT]
    y_raw = settled.y_raw if settled.response_name in settled.interval_columns else None
    clip_limits, column_maps, record = release_centres(
        mat.source, y_raw, names, settled.response_name, settled.clip_limits, settled.column_maps,
        settled.interval_columns, settled.coded, centre, n)
    return replace(settled, clip_limits=clip_limits, column_maps=column_maps), record


# --------------------------------------------------------------------------- step 1


@dataclass(frozen=True)
class _Arguments:
    """The checked arguments of :func:`build_design`."""

    frame: pd.DataFrame
    n: int
    bnds: object
    keep: list
    columns: list
    colset: set
    dtypes: dict


def _check_arguments(formula, data, bounds, keep, stacklevel):
    """Step 1: the types of the arguments, the frame, the bounds and ``keep``."""
    if not isinstance(stacklevel, int) or isinstance(stacklevel, bool) or stacklevel < 1:
        raise TypeError(f"stacklevel: expected an int >= 1; got {stacklevel!r}")
    if not isinstance(formula, str):
        raise TypeError(f"formula: expected a string such as 'y ~ x1 + x2' or 'y ~ .'; got {type(formula).__name__}")
    if "~" not in formula:
        raise ValueError(f"formula: {formula!r} has no '~'; write it as 'y ~ x1 + x2' or 'y ~ .'")
    frame = as_frame(data, "data")
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
    return _Arguments(frame=frame, n=n, bnds=bnds, keep=keep_list, columns=columns,
                      colset=set(columns),  # built once: rebuilding it per factor was quadratic in p
                      dtypes=dict(zip(columns, frame.dtypes.tolist())))


# --------------------------------------------------------------------------- step 4


@dataclass(frozen=True)
class _Prepared:
    """The frame as the formula reads it (step 4)."""

    frame: pd.DataFrame
    float_columns: list
    raw_limits: dict
    response_bool: bool


def _prepare_frame(args, names):
    """Step 4: checks of the used columns (dtypes, missing or infinite values, text that
    looks numeric, a column named like the intercept), integers used in transforms as
    float, string dtypes as object, and raw values clipped to the codebook's intervals."""
    dtypes, used = args.dtypes, names.used
    odd = [c for c in used
           if not (isinstance(dtypes[c], np.dtype) and dtypes[c].kind in "fiub")  # the common case, quickly
           and (pd.api.types.is_datetime64_any_dtype(dtypes[c]) or pd.api.types.is_timedelta64_dtype(dtypes[c])
                or pd.api.types.is_complex_dtype(dtypes[c]) or isinstance(dtypes[c], pd.PeriodDtype))]
    if odd:
        raise TypeError(f"data: column(s) {_fmt_names(odd)} have dtype "
                        f"{', '.join(str(dtypes[c]) for c in odd)}, which a model matrix cannot use; convert "
                        "them to numbers (e.g. days since a fixed public date) or leave them out of the formula")
    frame = args.frame
    _check_finite_columns(frame, used, "data")
    _check_stray_strings(frame, used, names.all_info, env_for=names.eval_ctx)
    if _INTERCEPT in used:
        raise ValueError(f"data: a column is named {_INTERCEPT!r}, the name of the model's intercept, and "
                         "the two would be merged; rename the column, e.g. "
                         f"data = data.rename(columns={{{_INTERCEPT!r}: 'intercept_col'}})")
    frame, float_columns = _integers_as_float(frame, names.all_info, names.eval_ctx)
    frame = _text_as_object(frame, used, dtypes)
    # Raw values are clipped to the codebook's intervals before any transform sees them:
    # then np.log(b) of a row with b = 0 outside b's interval (1, 4) is np.log(1), not an
    # error that would tell the data set from its neighbour without that row.
    raw_limits = raw_clip_limits(args.bnds, names.lhs_info, names.rhs_info, dtypes, names.env, args.colset)
    frame = _clip_raw(frame, raw_limits)
    response_bool = False
    if names.lhs_info[0].tree is None and len(names.lhs_info) == 1:
        var = names.lhs_vars[0]
        s = frame[var]
        response_bool = pd.api.types.is_bool_dtype(s)
        if not response_bool and (not pd.api.types.is_numeric_dtype(s) or pd.api.types.is_complex_dtype(s)):
            raise TypeError(
                f"data: the response {var!r} has dtype {s.dtype}; a numeric response is required "
                f"(a bool response is used as 0/1). Convert it, e.g. data[{var!r}] = "
                f"(data[{var!r}] == 'yes').astype(float)"
            )
    return _Prepared(frame=frame, float_columns=float_columns, raw_limits=raw_limits, response_bool=response_bool)


# --------------------------------------------------------------------------- steps 6 and 7


def _learned_levels(learned):
    """(warning, leak) for the categorical variables whose levels were learned from the data:
    one warning naming them all (eight text columns make one warning, not eight), and one
    leak per variable in the privacy report."""
    var_list = list(dict.fromkeys(v for v, _ in learned))
    if not var_list:
        return []
    named = []
    for var in var_list:
        exprs = sorted({e for v, e in learned if v == var and e != var})
        named.append(f"{var!r}" + (f" (in {_fmt_names(exprs)})" if exprs else ""))
    first = var_list[0]
    plural = len(var_list) > 1
    message = (
        f"categorical variable{'s' if plural else ''} {', '.join(named)}: "
        f"{'their' if plural else 'its'} levels were learned from the data "
        "(which levels occur is a function of the data, and they decide the columns of the design), so the "
        f"result is not differentially private; fix: write C({first}, levels=[...]) with the levels known in "
        f"advance, or make {first} a pandas Categorical with explicit categories"
        + (", and likewise for the others" if plural else ""))
    leaks = [f"categorical levels of {var!r} learned from the data" for var in var_list]
    # the warning once; the other leaks with an empty message (build_design skips those)
    return [(message, leaks[0])] + [("", leak) for leak in leaks[1:]]


def _split_columns(mat, keep_list):
    """Step 7: (forced_names, candidate_names): the intercept and the ``keep=`` columns
    (named as columns, terms or variables), and every other column."""
    xcols = mat.xcols
    forced_extra, bad_keep = [], []
    for k in keep_list:
        if k == _INTERCEPT:
            if not mat.has_intercept:
                bad_keep.append(k)
            continue
        if k in xcols:
            cols = [k]
        elif k in mat.term_cols:
            cols = mat.term_cols[k]
        elif k in mat.single_var_cols:
            cols = mat.single_var_cols[k]
        else:
            bad_keep.append(k)
            continue
        forced_extra.extend(c for c in cols if c not in forced_extra)
    if bad_keep:
        valid = list(dict.fromkeys(xcols + list(mat.term_cols) + list(mat.single_var_cols)))
        raise ValueError(f"keep: {_fmt_names(bad_keep)} not in the model; valid names: {valid}")
    forced_names = ([_INTERCEPT] if mat.has_intercept else []) + forced_extra
    candidate_names = [c for c in xcols if c not in forced_extra]
    if not candidate_names:
        raise ValueError(
            f"formula: no candidate columns are left for selection (model columns: {mat.names}; keep={keep_list}); "
            "add terms to the formula or force fewer of them with keep="
        )
    return forced_names, candidate_names


# --------------------------------------------------------------------------- step 8


@dataclass(frozen=True)
class _Settled:
    """Every column's public clip interval, map and mapped bound (step 8)."""

    clip_limits: dict
    column_maps: dict
    mapped_bound: dict
    from_data: list
    book: object
    y_raw: np.ndarray
    response_name: str
    has_intercept: bool
    model_spec: object
    interval_columns: frozenset = frozenset()  # columns (and the response) bounded by an interval
    coded: frozenset = frozenset()  # dummy columns, clipped to their coding's range


def _fallbacks(bnds):
    """(scalar ``Bounds.x``, ``Bounds.default``): the bounds of the columns that the
    codebook and the coding leave open (each None when not given)."""
    scalar_x = bnds.x if (bnds is not None and bnds.x is not None and not isinstance(bnds.x, dict)) else None
    return scalar_x, (bnds.default if bnds is not None else None)


def _column_specs(args, mat, book):
    """Column -> its bound before settling (a scalar, an interval, or None: from the
    data), and the coded columns, whose bound is their coding's. In order of precedence:
    the codebook's entry for the column, for its term, the coding, a scalar ``Bounds.x``,
    ``Bounds.default``."""
    scalar_x, default = _fallbacks(args.bnds)
    xdict = book.columns
    specs, coded_cols = {}, set()
    for c in mat.names:
        if c == _INTERCEPT:
            continue
        coded = False
        if c in xdict:
            sp = xdict[c]
        elif mat.term_of.get(c) in xdict:
            sp = xdict[mat.term_of[c]]
        elif mat.inherent.get(c) is not None:
            sp, coded = mat.inherent[c], True
        elif scalar_x is not None:
            sp = scalar_x
        else:
            sp = default
        specs[c] = sp
        if coded:
            coded_cols.add(c)
    return specs, coded_cols


def _settle_bounds(args, names, mat, response_bool):
    """Step 8: the codebook resolved against this formula (names in the formula's
    spelling, unused entries listed, bounds of transforms derived), then a clip interval,
    a public map and a mapped bound for every column and the response; bounds that are
    missing are taken from the data (max |value|), and the formula's non-finite values
    are placed by a fixed rule where the bound is public."""
    bnds = args.bnds
    scalar_x, default = _fallbacks(bnds)
    response_name, source = mat.response_name, mat.source
    query = CodebookQuery(
        data_columns=args.columns, xcols=mat.xcols, term_cols=mat.term_cols,
        structure=mat.model_spec.rhs.structure if mat.model_spec is not None else [],
        encoder_state=mat.encoder_state, factor_info=mat.info_by_expr, env=names.env, lhs_info=names.lhs_info,
        response_name=response_name, lhs_vars=names.lhs_vars, rhs_vars=names.rhs_vars, inherent=mat.inherent,
        coding_ranges=mat.inherent_range, fallback=scalar_x is not None or default is not None)
    book = resolve_codebook(bnds.x if (bnds is not None and isinstance(bnds.x, dict)) else {},
                            bnds.y if bnds is not None else None, query)
    column_maps, clip_limits, mapped_bound = {}, {}, {}
    from_data = []

    def settle(name, spec_, absmax):
        if spec_ is None:
            b = absmax
            b = b if b > 0 else 1.0
            from_data.append(name)
            spec_ = b
        if isinstance(spec_, tuple):
            lo, hi = spec_
            clip_limits[name] = (lo, hi)
            column_maps[name] = _interval_map(lo, hi, mat.has_intercept)
            mapped_bound[name] = 1.0
        else:
            clip_limits[name] = (-spec_, spec_)
            column_maps[name] = (0.0, 1.0)
            mapped_bound[name] = float(spec_)

    if mat.has_intercept:
        clip_limits[_INTERCEPT] = (1.0, 1.0)
        column_maps[_INTERCEPT] = (0.0, 1.0)
        mapped_bound[_INTERCEPT] = 1.0
    specs, coded_cols = _column_specs(args, mat, book)
    y_spec = book.y
    if y_spec is None and response_bool:
        y_spec = 1.0
    # Non-finite values where the bound is to be taken from the data cannot be placed:
    # an error naming the columns (the guarantee is void there in any case).
    learned = {c for c, sp in specs.items() if sp is None} | ({response_name} if y_spec is None else set())
    y_raw = mat.y_raw
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
        if c in coded_cols and c in mat.inherent_range:
            # a dummy's values lie in its coding's range ({0, 1} for treatment coding): clip to
            # that interval (the same numbers; the map and the bound b stay those of the coding)
            clip_limits[c] = mat.inherent_range[c]
    settle(response_name, y_spec, float(np.max(np.abs(y_raw))))
    # ... and where the bound is public, a fixed rule places them (nan to the midpoint of
    # the clip interval, +-inf to its ends by the clip): no error depends on the values
    source.fill_undefined(clip_limits, learned)
    if y_bad:
        y_raw = _fill_undefined(y_raw[:, None], [response_name], clip_limits, "data", learned)[:, 0]
    interval_columns = frozenset(c for c, sp in list(specs.items()) + [(response_name, y_spec)]
                                 if isinstance(sp, tuple))
    coded = frozenset(c for c in coded_cols if c in mat.inherent_range)
    return _Settled(clip_limits=clip_limits, column_maps=column_maps, mapped_bound=mapped_bound,
                    from_data=from_data, book=book, y_raw=y_raw, response_name=response_name,
                    has_intercept=mat.has_intercept, model_spec=mat.model_spec,
                    interval_columns=interval_columns, coded=coded)


def _bounds_from_data(from_data, response_name):
    """(warning, leak) naming the columns (and the response) whose bounds were taken from the data."""
    if not from_data:
        return []
    xs = [d for d in from_data if d != response_name]
    parts = []
    if xs:
        parts.append(f"the column{'s' if len(xs) > 1 else ''} {_fmt_names(xs)}")
    if response_name in from_data:
        parts.append(f"the response {response_name!r}")
    what = " and ".join(parts)
    return [(
        f"bounds for {what} were taken from the data (max |value|); the result is not differentially "
        "private; pass bounds=... to fix, with limits known in advance, e.g. "
        "bounds=Bounds(x={'col': (lo, hi)}, y=(lo, hi)) or bounds=(b_x, b_y)",
        f"bounds for {what} taken from the data",
    )]


# --------------------------------------------------------------------------- step 9


def _clip_and_map_rows(mat, settled, forced_names, candidate_names, n, gram):
    """Step 9: the response, the candidate and the always-in columns clipped to their
    public intervals and mapped; with ``gram`` only X'X, X'y, y'y and n of them (no
    n x p matrix is kept)."""
    clip_limits, column_maps = settled.clip_limits, settled.column_maps
    lo_y, hi_y = clip_limits[settled.response_name]
    c_y, h_y = column_maps[settled.response_name]
    y = (np.clip(settled.y_raw, lo_y, hi_y) - c_y) / h_y
    k = len(forced_names)
    source = mat.source
    if callable(gram):  # the caller's rule, on public quantities only (n, p, k)
        gram = bool(gram(n, len(candidate_names), k))
    if gram:
        from .suffstats import SufficientStats
        order = forced_names + candidate_names
        limits = _limits(order, clip_limits, column_maps)
        stats = SufficientStats.from_blocks(
            ((_apply_limits(source.block(order, a, b), limits), y[a:b])
             for a, b in _row_blocks(n, len(order) + 1)), k_forced=k)
        return DesignData.empty(n, len(candidate_names), k, gram=stats)
    X = source.clip_and_map(candidate_names, clip_limits, column_maps)
    forced = source.clip_and_map(forced_names, clip_limits, column_maps)
    return DesignData(X=X, y=np.ascontiguousarray(y), forced=forced, n=n, gram=None)
