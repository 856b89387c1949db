"""Glue between R and the Python implementation: the R wrapper (reticulate) and rpy2.

Every computation stays in :func:`dpsubset.dp_best_subset`; this module only moves
data and results across the language boundary.

Two ways in
-----------
reticulate (the R package in ``r-wrapper/``)
    The functions :func:`fit`, :func:`predict`, :func:`result_to_plain` and
    :func:`result_from_pickle` take and return **plain Python values only**
    (``bytes``/``bytearray``, ``str``, ``int``, ``float``, ``bool``, ``None``,
    lists and dicts of those), never numpy or pandas objects. reticulate 1.28
    (Debian 12's R) cannot convert numpy >= 2 arrays or pandas >= 3 frames, and
    converting a long R vector element by element (``as.list``) is slow, so the R
    side sends every column as one raw little-endian byte string (doubles as
    float64, codes as int32, strings as UTF-8 bytes with their byte lengths) and
    the DataFrame is built here. Results go back as lists of floats and strings,
    which reticulate turns into R vectors without numpy.

rpy2 (an R ``data.frame`` passed as ``data`` to the Python API)
    :func:`maybe_from_r` turns an ``rpy2.robjects.vectors.DataFrame`` into a
    pandas DataFrame column by column (rpy2's pandas converter is not used, as it
    lags behind new pandas releases). :func:`dpsubset.dp_best_subset` calls it
    first, so ``dp_best_subset("mpg ~ .", r_df, ...)`` works. rpy2 stays an
    optional dependency: it is imported only when such an object is passed.

Both ways build the same columns from the same R data frame: numeric and integer
columns become float64 (R's ``NA`` becomes NaN, which the design rejects where a
formula uses it), logical columns become bool (object with None where ``NA``),
character columns become object strings, and **factors become pandas
Categoricals with the factor's levels**, in the factor's order, unused levels
included (``ordered`` kept). The design treats the categories of a Categorical
as public levels (see :mod:`dpsubset.design.build`): they are the user's responsibility,
like a bound, so a factor's levels must be fixed in advance
(``factor(x, levels = c(...))``), not learned from the data. A character column
has no levels; the design then learns them from the data, warns and voids the
guarantee.
"""
from __future__ import annotations

import base64
import math
import pickle
import warnings

import numpy as np
import pandas as pd

from ..design.r_frames import frame_from_columns, maybe_from_r, rpy2_to_pandas
from ..losses import DEFAULT_LOSS

__all__ = ["maybe_from_r", "rpy2_to_pandas", "frame_from_columns", "fit", "predict",
           "result_to_plain", "result_from_pickle", "result_to_pickle", "frame_to_plain",
           "summary_table", "model_names", "released", "prediction_frame", "R_FORMULA_FUNCTIONS"]

# Functions an R user writes in a formula that formulaic does not define under
# that name. The R wrapper passes the formula to formulaic as text, and these to
# dp_best_subset in the formula's evaluation context (``_call_dp_best_subset``
# below). All act row by row.
R_FORMULA_FUNCTIONS = {"sqrt": np.sqrt, "log1p": np.log1p, "expm1": np.expm1}


def _as_int(name, v):
    """R sends whole numbers as doubles (``s = 3``); make them ints, refuse fractions."""
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, float):
        if not v.is_integer():
            raise ValueError(f"{name} must be a whole number, got {v!r}")
        return int(v)
    return v


def _screen_from_r(v):
    """``screen`` from R: TRUE/FALSE, a whole number k (sent as a double), or a named
    list with ``k``, ``share``, ``gamma``."""
    if isinstance(v, dict):
        v = dict(v)
        if v.get("k") is not None:
            v["k"] = _as_int("screen$k", v["k"])
        return v
    return _as_int("screen", v)


def _bound_value(v, where):
    """A scalar, or an interval from a length-2 R vector."""
    if isinstance(v, (list, tuple)):
        if len(v) == 1:
            return float(v[0])
        if len(v) == 2:
            return (float(v[0]), float(v[1]))
        raise ValueError(f"bounds {where}: give a number b or an interval c(lo, hi); got {len(v)} numbers")
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    raise TypeError(f"bounds {where}: give a number b or an interval c(lo, hi); got {v!r}")


def _bounds_from_r(b):
    """Turn the bounds sent by the R side into what ``dp_best_subset`` takes.

    ``{"pair": [b_x, b_y]}`` -> ``(b_x, b_y)``; ``{"x": ..., "y": ..., "default": ...}``
    -> :class:`dpsubset.Bounds`, where ``x`` is a number or a dict of column -> number
    or interval, and ``y``/``default`` a number or an interval.
    """
    from ..design.codebook import Bounds

    if b is None:
        return None
    if "pair" in b:
        bx, by = b["pair"]
        return (None if bx is None else float(bx), None if by is None else float(by))
    x = b.get("x")
    if isinstance(x, dict):
        x = {str(k): _bound_value(v, f"x[{k!r}]") for k, v in x.items()}
    elif x is not None:
        x = _bound_value(x, "x")
        if isinstance(x, tuple):
            raise ValueError("bounds x: an interval must name its column, e.g. list(x = list(hp = c(0, 400)))")
    y = None if b.get("y") is None else _bound_value(b["y"], "y")
    default = None if b.get("default") is None else _bound_value(b["default"], "default")
    return Bounds(x=x, y=y, default=default)


def _args_from_r(args):
    """The arguments of ``dp_best_subset`` as R sent them, in the Python API's types.

    The option objects arrive as named lists (dicts: ``ball = list(r = 0.5)``, ``method =
    list(name = "mistakes", R = 50)``), which the API takes as they are; whole numbers
    that must be ints (``s``, ``random_state``, ``R``, a screen's ``k``) arrive as doubles,
    and the classes of a loss as a list.
    """
    args = dict(args)
    for k in ("s", "random_state"):
        if k in args:
            args[k] = _as_int(k, args[k])
    method = args.get("method")
    if isinstance(method, dict):
        method = dict(method)
        if method.get("R") is not None:
            method["R"] = _as_int("method$R", method["R"])
        if method.get("screen") is not None:
            method["screen"] = _screen_from_r(method["screen"])
        args["method"] = method
    loss = args.get("loss")
    if isinstance(loss, dict) and loss.get("levels") is not None:
        args["loss"] = dict(loss, levels=_response_levels_from_r(loss["levels"]))
    if isinstance(args.get("keep"), list) and not args["keep"]:
        args["keep"] = None
    search = args.get("search")
    if isinstance(search, dict) and search.get("diagnostics"):
        raise ValueError("search$diagnostics = TRUE is not available from R: the non-private values would "
                         "cross into the R session unlabelled; use the Python API")
    return args


def _response_levels_from_r(levels):
    """``response_levels`` from R: a list of two values as a tuple.

    R sends ``c(-1, 1)`` as doubles; whole doubles become ints, so that the
    released ``response_levels`` (and the class labels of ``predict``) read
    ``-1`` and ``1`` in R, as the user wrote them, not ``-1.0`` and ``1.0``.
    Strings and logicals pass as they are; ``dp_best_subset`` validates the pair.
    """
    if not isinstance(levels, (list, tuple)):
        return levels
    return tuple(int(v) if isinstance(v, float) and v.is_integer() else v for v in levels)


def _r_context():
    # The R side is the entry point: the formula's context is this scope (as a Python
    # caller's would be) with R's helper functions over it, captured once and passed down.
    from ..design.formula import capture_context
    return {**capture_context(1), **R_FORMULA_FUNCTIONS}


def _call_dp_best_subset(formula, data, kwargs):
    from ..api import dp_best_subset
    from ..settings import Formula
    return dp_best_subset(Formula(formula, context=_r_context()), data, **kwargs)


def model_names(formula, cols):
    """The model's column and term names as the Python package spells them (formulaic's).

    The R wrapper calls this before a fit when ``bounds`` or ``keep`` name something
    that is not a data column (``"I(wt^2)"``, ``"poly(wt, 2, raw = TRUE)1"``): it maps
    these names to R's spelling (``names.R``) and translates the user's keys back.
    Nothing is released: the names are public (the formula's terms and the declared
    levels of factors), and only the R session that holds the data sees them.

    Parameters
    ----------
    formula : str
        The formula as formulaic text.
    cols : dict
        A few rows of the data (see :func:`frame_from_columns`); a character
        column's levels are then those of these rows, so its dummies may be missing
        (a name not found is passed on unchanged and the fit names the problem).

    Returns
    -------
    dict
        ``columns``: the model-matrix columns but the intercept; ``terms``: the
        formula's terms but the intercept ``"1"``; or ``{"error": {"type", "message"}}``
        when the design cannot be built from these rows (no translation is then made).
    """
    from ..design.build import build_design

    try:
        with warnings.catch_warnings():
            # bounds from these rows (a preview only): its privacy warnings say nothing
            warnings.simplefilter("ignore")
            design = build_design(formula, frame_from_columns(cols), context=_r_context())
    except Exception as exc:
        return dict(error=dict(type=type(exc).__name__, message=str(exc)))
    spec = design.spec
    columns = [str(c) for c in list(spec.forced_names) + list(spec.candidate_names) if c != "Intercept"]
    terms = []
    if spec.model_spec is not None:   # None on the direct route: terms are the columns
        terms = [str(t) for t in spec.model_spec.rhs.terms if str(t) != "1"]
    return dict(columns=columns, terms=[t for t in terms if t not in columns])


def _warnings_plain(caught):
    return [dict(category=w.category.__name__, message=str(w.message)) for w in caught]


def fit(formula, cols, args):
    """Run :func:`dpsubset.dp_best_subset` for the R wrapper.

    Parameters
    ----------
    formula : str
        The formula as formulaic text (translated from R by the wrapper).
    cols : dict
        The data, see :func:`frame_from_columns`.
    args : dict
        The keyword arguments of ``dp_best_subset`` as plain values; ``bounds`` in
        the form of :func:`_bounds_from_r`; whole numbers may arrive as floats.

    Returns
    -------
    list
        ``[result, plain]`` on success, where ``result`` is the
        :class:`~dpsubset.DPSubsetResults` (kept by R as a reference, for
        ``predict``) and ``plain`` is :func:`result_to_plain` of it plus
        ``warnings`` (list of dicts ``category``, ``message``). On an error,
        ``[None, {"error": {"type": ..., "message": ...}, "warnings": [...]}]``:
        the R side raises it as an R error with the Python message, without a
        Python traceback.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            args = _args_from_r(args)
            args["bounds"] = _bounds_from_r(args.get("bounds"))
            data = frame_from_columns(cols)
            res = _call_dp_best_subset(formula, data, args)
        except Exception as exc:  # every user error reaches R as one clean message
            return [None, dict(error=dict(type=type(exc).__name__, message=str(exc)),
                               warnings=_warnings_plain(caught))]
    plain = result_to_plain(res)
    plain["warnings"] = _warnings_plain(caught)
    return [res, plain]


def result_to_plain(res):
    """The released fields of a result as plain Python values (no numpy, no pandas).

    Parameters
    ----------
    res : DPSubsetResults

    Returns
    -------
    dict
        ``support``, ``forced``, ``candidates`` (lists of str), ``coef_names`` and
        ``coef_values`` (None when the fit had ``refit=False``), ``method``,
        ``nobs``, ``formula``, ``response``, ``loss``, ``response_levels`` (the
        classes coded -1/+1 for a classification loss, else None), ``privacy`` (a dict of the
        :class:`~dpsubset.PrivacyReport` fields; ``stages`` as a list of dicts;
        ``exact_search`` and ``all_certificates_closed``, ``selection_confidence`` (its
        sentence, or None), but no per-solve certificate list, which depends on the
        data), ``bounds_unused`` (codebook
        entries this formula does not use), ``privacy_text`` (its printed form) and ``pickle``
        (the whole result, pickled and base64-encoded, so that R can save the fit
        with ``saveRDS`` and still predict after reloading it).
    """
    rep = res.privacy
    privacy = dict(
        guarantee=str(rep.guarantee), statement=str(rep.statement), eps=float(rep.eps), delta=float(rep.delta),
        stages=[dict(stage=str(st["stage"]), mechanism=str(st["mechanism"]), eps=float(st["eps"]),
                     delta=float(st["delta"])) for st in rep.stages],
        neighbours=str(rep.neighbours),
        # NaN (NA in R) when the bounds came from the data: Delta is then not kept
        sensitivity=float("nan") if rep.sensitivity is None else float(rep.sensitivity),
        seeded=bool(getattr(rep, "seeded", False)),
        bounds_public=bool(rep.bounds_public), leaks=[str(x) for x in rep.leaks],
        # no per-solve list: which solves the search needed depends on the data
        exact_search=bool(getattr(rep, "exact_search", False)),
        gap_check_passed=None if rep.gap_check_passed is None else bool(rep.gap_check_passed),
        all_certificates_closed=bool(rep.all_certificates_closed),
        # released with inference=True (top-R, exponential): its sentence, as the report prints it
        selection_confidence=(None if getattr(rep, "selection_confidence", None) is None
                              else str(rep.selection_confidence)),
    )
    out = dict(
        support=[str(x) for x in res.support], forced=[str(x) for x in res.forced],
        candidates=[str(x) for x in res.candidates], method=str(res.method), nobs=int(res.nobs),
        formula=str(res.formula), response=str(res.response), privacy=privacy,
        privacy_text=repr(rep), pickle=result_to_pickle(res),
        coef_names=None, coef_values=None,
    )
    # codebook entries for data columns this formula does not use (public: the user's keys)
    out["bounds_unused"] = [str(x) for x in getattr(res, "bounds_unused", [])]
    # bounds of model columns derived from the codebook (public: interval arithmetic on it)
    out["bounds_derived"] = {str(k): [float(x) for x in v]
                             for k, v in (getattr(res, "bounds_derived", None) or {}).items()}
    levels = getattr(res, "response_levels", None)  # classification losses only
    out["response_levels"] = None if levels is None else [str(x) for x in levels]
    out["loss"] = str(getattr(res, "loss", DEFAULT_LOSS))
    if res.params is not None:
        out["coef_names"] = [str(x) for x in res.params.index]
        out["coef_values"] = [float(x) for x in res.params.to_numpy(dtype=float)]
    # broom-style frames exactly as the Python API builds them, so that R's
    # tidy()/glance() have the same columns, names and values.
    out["tidy"] = frame_to_plain(res.tidy())
    out["glance"] = frame_to_plain(res.glance())
    return out


def _plain_value(v):
    if v is None or v is pd.NA or v is pd.NaT:
        return None
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v) if math.isfinite(v) else None
    return str(v)


def frame_to_plain(frame):
    """A small pandas DataFrame as plain values, column by column, for R.

    Parameters
    ----------
    frame : pandas.DataFrame

    Returns
    -------
    dict
        ``names`` (list of str) and ``columns``: one dict per column with ``kind``
        (``"logical"``, ``"integer"``, ``"double"`` or ``"character"``, from the
        pandas dtype, so that an all-missing column keeps its type) and ``values``
        (a list of plain values, None for a missing or non-finite value).
    """
    cols = []
    for name in frame.columns:
        col = frame[name]
        if pd.api.types.is_bool_dtype(col):
            kind = "logical"
        elif pd.api.types.is_integer_dtype(col):
            kind = "integer"
        elif pd.api.types.is_float_dtype(col):
            kind = "double"
        else:  # object columns: logical if every non-missing value is a bool
            vals = [v for v in col.tolist() if v is not None and not (isinstance(v, float) and math.isnan(v))]
            kind = "logical" if vals and all(isinstance(v, (bool, np.bool_)) for v in vals) else "character"
            if not vals and name == "gap_check_passed":  # None when there was no gap test
                kind = "logical"
        cols.append(dict(kind=kind, values=[_plain_value(v) for v in col.tolist()]))
    return dict(names=[str(c) for c in frame.columns], columns=cols)


def result_to_pickle(res):
    """Pickle a result to an ASCII string (base64), for R's ``saveRDS``."""
    return base64.b64encode(pickle.dumps(res, protocol=pickle.HIGHEST_PROTOCOL)).decode("ascii")


def result_from_pickle(text):
    """Inverse of :func:`result_to_pickle`.

    Only for strings this package wrote: unpickling runs code named in the data.
    """
    return pickle.loads(base64.b64decode(text.encode("ascii")))


def _predict_which(res, frame, which):
    """``res.predict(frame, which=which)`` for a two-class fit, ``res.predict(frame)``
    (predictions in the response's units) for the regression losses."""
    if which is None or getattr(res, "response_levels", None) is None:
        return res.predict(frame)
    return res.predict(frame, which=which)


def predict(res, cols, which=None):
    """Predictions of a result on new data sent by the R side.

    Parameters
    ----------
    res : DPSubsetResults or str
        The result, or its :func:`result_to_pickle` string (after R reloaded a
        saved fit).
    cols : dict
        The new data, see :func:`frame_from_columns`.
    which : {None, "linear", "mean", "class"}
        For a two-class loss: the linear predictor, the probability of the level
        coded +1 (logistic only), or the class label. None: the API's default.
        Ignored for the regression losses (predictions in the response's units).

    Returns
    -------
    dict
        ``{"values": list of float}`` (``{"labels": list of str}`` for
        ``which="class"``) or ``{"error": {"type", "message"}}``.
    """
    try:
        if isinstance(res, str):
            res = result_from_pickle(res)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            pred = _predict_which(res, frame_from_columns(cols), which)
    except Exception as exc:
        return dict(error=dict(type=type(exc).__name__, message=str(exc)))
    if which == "class" and getattr(res, "response_levels", None) is not None:
        return dict(labels=[None if v is None else str(v) for v in list(pred)], warnings=_warnings_plain(caught))
    vals = [float(v) if math.isfinite(v) else float("nan") for v in np.asarray(pred, dtype=float).tolist()]
    return dict(values=vals, warnings=_warnings_plain(caught))


def _result(res):
    return result_from_pickle(res) if isinstance(res, str) else res


def _plain_any(value):
    """A released quantity as plain values: a scalar, ``{"values", "names"}`` for a
    vector or Series, ``{"frame", "index"}`` for a DataFrame (see :func:`frame_to_plain`)."""
    if isinstance(value, pd.DataFrame):
        return dict(frame=frame_to_plain(value), index=[str(i) for i in value.index])
    if isinstance(value, pd.Series):
        return dict(values=[_plain_value(v) for v in value.tolist()], names=[str(i) for i in value.index])
    if isinstance(value, (np.ndarray, list, tuple)):
        arr = np.asarray(value, dtype=float)
        if arr.ndim == 2:
            frame = pd.DataFrame(arr, columns=[str(j) for j in range(arr.shape[1])])
            return dict(frame=frame_to_plain(frame), index=[str(i) for i in range(arr.shape[0])])
        return dict(values=[_plain_value(v) for v in arr.ravel().tolist()], names=None)
    return dict(value=_plain_value(value))


def released(res, name, kwargs=None):
    """A quantity of the Python result, by its statsmodels name, for R's accessors.

    R's ``residuals()``, ``confint()``, ``vcov()``, ``sigma()``, ``fit$residuals``,
    ``summary(fit)$r.squared``, ``tidy(fit, conf.int = TRUE)`` ... ask the Python
    result for the same quantity (``resid``, ``conf_int``, ``cov_params``, ``scale``,
    ``rsquared``); the R side never decides alone that a quantity is withheld. Where
    the Python result releases it (a private quantity, e.g. ``conf_int`` of a fit with
    private inference), the value comes back; where it raises
    :class:`~dpsubset.NotReleasedError`, its message (why, and what to do) does, and R
    raises its ``dpsubset_not_released`` condition with it.

    Parameters
    ----------
    res : DPSubsetResults or str
        The result or its pickle.
    name : str
        Attribute of the result (statsmodels' name). A method is called with ``kwargs``.
    kwargs : dict, optional
        Keyword arguments of the method (e.g. ``{"alpha": 0.05}`` for ``conf_int``).

    Returns
    -------
    dict
        ``{"value": ...}``, ``{"values", "names"}`` or ``{"frame", "index"}`` (see
        :func:`_plain_any`); or ``{"error": {"type", "message"}}`` with type
        ``"NotReleasedError"`` (withheld, with the reason), ``"NotAvailable"`` (the
        Python result has no such quantity at all) or the Python error's type.
    """
    return _ask(res, name, lambda value: value(**dict(kwargs or {})) if callable(value) else value)


def _ask(res, name, use):
    """``use(getattr(result, name))`` as plain values, or the error as :func:`released` gives it."""
    from ..privacy.leaks import NotReleasedError

    try:
        value = use(getattr(_result(res), name))
    except NotReleasedError as exc:
        return dict(error=dict(type="NotReleasedError", message=str(exc)))
    except AttributeError as exc:   # after NotReleasedError, which is an AttributeError
        return dict(error=dict(type="NotAvailable", message=str(exc)))
    except Exception as exc:
        return dict(error=dict(type=type(exc).__name__, message=str(exc)))
    return _plain_any(value)


def prediction_frame(res, cols, alpha):
    """Intervals or standard errors of predictions on new data, where released.

    Asks the result for ``get_prediction`` (statsmodels' name); when it is released
    (private inference), returns ``get_prediction(newdata).summary_frame(alpha=alpha)``
    (statsmodels' columns ``mean``, ``mean_se``, ``mean_ci_lower``, ``mean_ci_upper``,
    ``obs_ci_lower``, ``obs_ci_upper``) as ``{"frame", "index"}``; otherwise the
    error, as :func:`released` gives it.
    """
    return _ask(res, "get_prediction",
                lambda get: get(frame_from_columns(cols)).summary_frame(alpha=float(alpha)))


def _renamed(res, rename):
    """A shallow copy of a result with its term names replaced (public fields only)."""
    import copy

    def m(t):
        return rename.get(str(t), str(t))
    out = copy.copy(res)   # keeps attributes set after construction (response_levels)
    if isinstance(res.bounds, dict):
        out.bounds = {m(k): v for k, v in res.bounds.items()}
    out.params = None if res.params is None else res.params.rename(index=m)
    out.support = [m(t) for t in res.support]
    out.forced = [m(t) for t in res.forced]
    out.candidates = [m(t) for t in res.candidates]
    if getattr(res, "inference", None) is not None:
        # the standard errors and intervals are indexed by the refit's columns: R's names too
        import dataclasses
        out.inference = dataclasses.replace(res.inference, names=[m(t) for t in res.inference.names])
    return out


def summary_table(results, model_names, fmt, renames, options):
    """:func:`dpsubset.summary_table` for the R wrapper, with R's names of the terms.

    Parameters
    ----------
    results : list of (DPSubsetResults or str or dict)
        Results, or their pickles (fits reloaded by R), or an R ``lm()``/``glm()`` as the
        keyword arguments of :class:`~dpsubset.results.columns.PlainBaseline` (NOT private).
    model_names : list of str or None
    fmt : str
    renames : list of dict
        One ``{python name: R name}`` per result.
    options : dict
        Further keyword arguments of :func:`dpsubset.summary_table`.

    Returns
    -------
    dict
        ``{"text": str}``, ``{"frame": plain frame, "index": list of str}`` for
        ``fmt="frame"``, or ``{"error": {"type", "message"}}``.
    """
    from ..results.columns import PlainBaseline
    from ..results.tables import summary_table as _table

    try:
        res = [result_from_pickle(r) if isinstance(r, str) else r for r in results]
        # an R lm()/glm() beside the private fits: its numbers, NOT private (labelled so)
        res = [PlainBaseline(**r) if isinstance(r, dict) else _renamed(r, dict(rn or {}))
               for r, rn in zip(res, renames)]
        out = _table(res, model_names=model_names, fmt=fmt, **dict(options or {}))
    except Exception as exc:
        return dict(error=dict(type=type(exc).__name__, message=str(exc)))
    if isinstance(out, pd.DataFrame):
        return dict(frame=frame_to_plain(out), index=[str(i) for i in out.index])
    return dict(text=str(out))


def plan(args):
    """:func:`dpsubset.plan` for R's ``dpsubset_plan()``: public inputs in, plain values out.

    Parameters
    ----------
    args : dict
        Keyword arguments of :func:`dpsubset.plan` as R sends them (whole numbers may
        arrive as doubles).

    Returns
    -------
    dict
        ``table`` ({column: list of numbers}; an interval width the plan cannot bound is
        ``inf``, which R reads as ``Inf``), ``n_needed``, ``eps_needed`` (None when no
        grid point meets the targets) and ``assumptions`` (text); or ``error``, the
        message of a setting the plan refuses (R stops with it).
    """
    from ..studies.plan import plan as _plan

    args = dict(args)
    for k in ("p", "s", "n", "trials", "random_state"):
        if args.get(k) is not None:
            args[k] = _as_int(k, args[k])
    for k in ("n_grid", "eps_grid"):
        if args.get(k) is not None:
            args[k] = [float(v) for v in (args[k] if isinstance(args[k], (list, tuple)) else [args[k]])]
    if args.get("n_grid") is not None:
        args["n_grid"] = [_as_int("n_grid", v) for v in args["n_grid"]]
    try:
        if args.get("bounds") is not None:  # the forms dp_best_subset takes from R: a pair or a codebook
            args["bounds"] = _bounds_from_r(args["bounds"])
        res = _plan(**args)
    except (ValueError, TypeError) as err:
        return dict(error=str(err))
    table = {str(c): [float(v) for v in res.table[c].tolist()] for c in res.table.columns}
    return dict(table=table, n_needed=res.n_needed, eps_needed=res.eps_needed,
                assumptions=res.assumptions)
