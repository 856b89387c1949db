"""The public half of a design: what the model is, and how to rebuild it on new data.

A :class:`DesignSpec` holds no row of the data and no bound learned from it: the formula's
spec, the column names, the public clip intervals and maps, the public bounds of the mapped
columns (a bound taken from the data is NaN here and lives in the private half), the levels (in
formulaic's model spec) and the names of the evaluation context. (What a formula itself learns,
levels or a stateful transform's state, stays in the model spec, which a predictor needs; it is
warned about and listed in ``leaks``.) It rematerialises new
data with the same choices (:meth:`DesignSpec.transform_new`, as formulaic's
``ModelSpec.get_model_matrix``) and maps coefficients back to the user's units
(:meth:`DesignSpec.to_original_scale`). Its private counterpart is
:class:`dpsubset.design.data.DesignData`.
"""
from __future__ import annotations

import importlib
import warnings
from dataclasses import dataclass, field
from types import ModuleType

import numpy as np
import pandas as pd

from .clip import _clip_and_map, _clip_raw, _fill_undefined
from .formula import _INTERCEPT, _fmt_names
from .frames import _as_float, as_frame, _check_finite_columns, _FrameColumns, _scrub_values, _text_as_object
from .materialise import _numeric_matrix, _unseen_levels_message

__all__ = ["DesignSpec"]


@dataclass(frozen=True)
class _ModuleRef:
    name: str


@dataclass(frozen=True, eq=False)
class DesignSpec:
    """The public description of a design: the model, its bounds and maps, no data.

    Built by :func:`dpsubset.design.build.build_design` (``design.spec``); kept by a
    result to predict. It holds no row of the data: no X, y, always-in columns or Gram
    matrix (those are in :class:`dpsubset.design.data.DesignData`). Frozen, and
    picklable (the modules of ``eval_context`` are pickled by name).

    Attributes
    ----------
    candidate_names, forced_names : list of str
        Model-matrix column names of the candidates and of the always-in columns
        (the intercept first, if present, then the ``keep=`` columns).
    response_name : str
        Name of the response (the left-hand side as formulaic writes it).
    x_bounds : ndarray, shape (p,)
        Public bounds b_j of the mapped candidate columns (b for a scalar bound, 1.0 for
        an interval-mapped column); NaN for a column whose bound was taken from the
        data (the learned value is in ``DesignData.learned_bounds`` only).
    forced_bounds : ndarray, shape (k,)
        Public bounds of the mapped forced columns (1.0 for the intercept; NaN as in
        ``x_bounds``).
    b_y : float
        Public bound of the mapped response (NaN when taken from the data).
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
    clip_limits : dict
        name -> (lo, hi), the public clipping interval in the model-matrix units;
        (-inf, inf) for a column whose bound was taken from the data (new data are
        not clipped there).
    eval_context : dict
        Names from the evaluation context that the formula uses (functions,
        modules, constants), so that new data are transformed the same way.
    rhs_variables : list of str
        Data columns the right-hand side uses.
    bounds_derived : dict
        Column (or response) -> (lo, hi) derived from the codebook by interval
        arithmetic (public; see :mod:`dpsubset.design.codebook`).
    bounds_unused : list of str
        Entries of the codebook (``Bounds.x``) this formula does not use.
    bounds_from_data : list of str
        Columns (and the response) whose bounds were taken from the data: which
        ones, never the values (those are statistics of the data, kept in
        ``DesignData.learned_bounds`` for the fit only).
    float_columns : list of str
        Integer data columns used inside transforms, converted to float64 before
        the formula is evaluated (on new data too), so that ``I(x * x)`` cannot
        wrap around.
    raw_limits : dict
        Data column -> its public interval (the codebook's entry), for the columns
        that the formula's transforms and interactions read: they are clipped to it
        before the formula is evaluated (on new data too), so that a transform only
        ever sees values inside the codebook's box.
    """

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
    clip_limits: dict = field(default_factory=dict, repr=False)
    eval_context: dict = field(default_factory=dict, repr=False)
    rhs_variables: list = field(default_factory=list, repr=False)
    bounds_derived: dict = field(default_factory=dict, repr=False)
    bounds_unused: list = field(default_factory=list, repr=False)
    bounds_from_data: list = field(default_factory=list, repr=False)
    float_columns: list = field(default_factory=list, repr=False)
    raw_limits: dict = field(default_factory=dict, repr=False)
    centring: tuple = ()

    def __getstate__(self):
        # Modules in the formula's scope (numpy as `numpy`, ...) do not pickle; keep their names.
        state = dict(self.__dict__)
        state["eval_context"] = {
            k: (_ModuleRef(v.__name__) if isinstance(v, ModuleType) else v) for k, v in self.eval_context.items()
        }
        return state

    def __setstate__(self, state):
        state = dict(state)
        state.setdefault("raw_limits", {})  # pickled before raw columns were clipped
        state.setdefault("centring", ())  # pickled before the private centring
        ctx = state.get("eval_context", {})
        state["eval_context"] = {
            k: (importlib.import_module(v.name) if isinstance(v, _ModuleRef) else v) for k, v in ctx.items()
        }
        for k, v in state.items():  # frozen: set through object
            object.__setattr__(self, k, v)

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
        frame = as_frame(newdata, "newdata")
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
