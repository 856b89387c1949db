"""What a call to ``dp_best_subset`` releases: the support, DP coefficients, the privacy report.

Only private (or public) quantities live here: no data, no clipped data, no scores
of candidate supports, no noise. Non-private diagnostics, when a user asks for them,
come in a separate, labelled object (:class:`NonPrivateDiagnostics`).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field, fields

import numpy as np
import pandas as pd

from ..design.frames import as_frame
from ..design.centring import centring_frame
from ..design.spec import DesignSpec
from ..privacy.leaks import NotReleasedError
from ..privacy.report import CERTIFIED, FLOAT_CAVEAT, SEEDED_CAVEAT, SEEDED_NOTE, PrivacyReport
from .clipped import clipped_rows
from .summary import BOUNDS_FROM_DATA, DPSummary, _interval, build_summary
from ..losses import DEFAULT_LOSS, loss_class

__all__ = ["PrivacyReport", "SEEDED_CAVEAT", "SEEDED_NOTE", "FLOAT_CAVEAT", "CERTIFIED", "DPSubsetResults",
           "NonPrivateDiagnostics", "ModelInfo", "DPSummary", "describe_bounds", "describe_solves",
           "BOUNDS_FROM_DATA", "NotReleasedError", "WITHHELD", "PREDICT_WHICH",
           "PredictionClippedWarning"]


class PredictionClippedWarning(UserWarning):
    """Rows of ``newdata`` in :meth:`DPSubsetResults.predict` lay outside the public bounds.

    They are clipped to the codebook's box, as the training data were (that is the
    model that was fitted), so their predictions are those at the box's edge. A value
    far outside the box is often a units mistake. The message names the columns and
    the number of rows clipped, never a value.
    """


_FROM_DATA = ("it would be computed from the private (training) data and is not covered by the "
              "privacy guarantee. Use res.predict(newdata) on data you may use (public or held-out "
              "rows) and compare with their response there")
_NO_INFERENCE = ("dpsubset releases no robust standard errors, covariances or test families: none is "
                 "computed privately, and a non-private one would leak the data. Private standard "
                 "errors, confidence intervals and Wald tests come with dp_best_subset(..., "
                 "inference=True) (loss 'squared', 'huber' or 'logistic') as res.bse, res.conf_int(), "
                 "res.tvalues, res.pvalues and res.cov_params(), and res.summary() shows them")
#: Why the private inference attributes are missing, and how to get them.
_ASK_INFERENCE = ("private standard errors, covariances, confidence intervals and tests of the "
                  "coefficients are released only when the fit asks for them: call "
                  "dp_best_subset(..., inference=True) (loss 'squared', 'huber' or 'logistic', "
                  "refit=True), which spends eps_inference (default 0.2 * eps) on private second "
                  "moments of the released columns and bootstraps the refit "
                  "(docs/guide/inference.md); without it, report the DP coefficients with their "
                  "privacy report (res.summary(), res.tidy(), res.privacy)")
_FIT_STAT = ("it is a goodness-of-fit statistic of the private (training) data and is not released "
             "privately. To compare models, score them on public or held-out data with res.predict(newdata)")

#: Attributes of statsmodels results that a private fit withholds: name -> reason and remedy.
WITHHELD = {
    **{name: _FROM_DATA for name in (
        "resid", "fittedvalues", "wresid", "resid_pearson", "resid_deviance", "resid_response",
        "resid_working", "resid_anscombe", "resid_generalized", "resid_dev", "mu",
        "influence", "get_influence", "outlier_test", "weights")},
    **{name: _ASK_INFERENCE for name in ("bse", "conf_int", "pvalues", "tvalues", "cov_params")},
    "selection_confidence": ("it is released only with dp_best_subset(..., inference=True) and "
                             "method 'top_r' (or 'exponential'): private confidence bounds on "
                             "the probability that the mechanism released the best-scoring support"),
    **{name: _NO_INFERENCE for name in (
        "zvalues", "normalized_cov_params",
        "cov_type", "HC0_se", "HC1_se", "HC2_se", "HC3_se", "t_test", "f_test", "wald_test",
        "wald_test_terms", "t_test_pairwise", "get_robustcov_results", "compare_f_test",
        "compare_lm_test", "compare_lr_test")},
    **{name: _FIT_STAT for name in (
        "llf", "llnull", "llr", "llr_pvalue", "aic", "bic", "aicc", "hqic", "deviance",
        "null_deviance", "pearson_chi2", "rsquared", "rsquared_adj", "prsquared", "ssr", "ess",
        "centered_tss", "uncentered_tss", "mse_resid", "mse_model", "mse_total", "scale",
        "fvalue", "f_pvalue", "condition_number", "eigenvals", "pred_table")},
    "summary2": ("there is no summary2(): use res.summary() (a statsmodels Summary, with "
                 ".as_text(), .as_latex(), .as_html()), res.tidy() and res.glance() (data frames), "
                 "or dpsubset.summary_table([res, ...]) for several fits side by side"),
    "get_prediction": ("confidence intervals of the mean response need the covariance of the "
                       "coefficients, released only with dp_best_subset(..., inference=True) (loss "
                       "'squared', 'huber' or 'logistic'; then res.get_prediction(newdata)); "
                       "res.predict(newdata) gives point predictions"),
}

#: Values of ``which=`` in :meth:`DPSubsetResults.predict`.
PREDICT_WHICH = ("mean", "linear", "class")


def describe_bounds(spec):
    """The public description of the bounds of a design, for the results object.

    Parameters
    ----------
    spec : dpsubset.design.spec.DesignSpec
        The design's public half (a result holds nothing else).

    Returns
    -------
    dict or str
        ``{column: (lo, hi)}``, the clipping interval (in the units of the model
        matrix) of every always-in column but the intercept, every candidate and
        the response, when all bounds are public; otherwise the string
        :data:`BOUNDS_FROM_DATA` (the learned values are not private and are
        not copied into the result).
    """
    if not spec.bounds_public:
        return BOUNDS_FROM_DATA
    names = [c for c in spec.forced_names if c != "Intercept"] + list(spec.candidate_names)
    names.append(spec.response_name)
    return {c: tuple(float(v) for v in spec.clip_limits[c]) for c in names}


@dataclass(frozen=True)
class ModelInfo:
    """What was fitted: the public specification of a :class:`DPSubsetResults`.

    Attributes
    ----------
    formula : str
    response : str
    terms : tuple of str
        Always-in terms first, then all candidates, in model-matrix order.
    forced, candidates : tuple of str
    loss : str
    method : str
    """

    formula: str
    response: str
    terms: tuple
    forced: tuple
    candidates: tuple
    loss: str
    method: str

    def __getitem__(self, key):
        # dict-style access as well (``res.model["formula"]``)
        try:
            return getattr(self, key)
        except AttributeError:
            raise KeyError(key) from None

    def keys(self):
        return [f.name for f in fields(self)]


@dataclass
class DPSubsetResults:
    """Result of :func:`dpsubset.dp_best_subset`: everything it releases, nothing else.

    Attributes
    ----------
    support : list of str
        The released model-matrix columns (the always-in columns are not listed).
    params : pandas.Series or None
        DP coefficients in the user's units over the always-in columns and all
        candidates (zeros off the support); None when ``refit=False``.
    forced : list of str
        Columns always in the model (the intercept, ``keep=``).
    candidates : list of str
        All candidate columns, in model-matrix order.
    method : str
        The selection method (``method=`` of ``dp_best_subset``).
    nobs : int
        Number of rows n (public under the replace-one relation).
    formula : str
    response : str
        Name of the response.
    privacy : PrivacyReport
        What was spent, on what, and which guarantee holds.
    loss : str
        The loss of the scores and of the refit.
    s : int
        Requested support size.
    eps_select, eps_refit : float
        Budget of the selection stage (gap test included) and of the refit
        (0 when ``refit=False``).
    bounds : dict or str
        Public description of the bounds: ``{column: (lo, hi)}``, the clipping
        interval of every candidate and always-in column (model-matrix units; the
        intercept is omitted) and of the response; or ``"taken from the data"``
        when some bound was learned from the data (then the guarantee is void and
        the learned values are not shown).
    r, lam : float
        Ball radius (mapped units) and ridge of the selection's scores (they set its
        Delta). The refit's are ``r_refit`` and :attr:`lam_refit`; every stage's are in
        ``privacy.stage_settings`` (docs/guide/defaults.md).
    response_levels : tuple or None
        For the two-class losses, ``(level coded -1, level coded +1)``, a public
        coding fixed before the data were read; None otherwise.
    screened : list of str or None
        The columns a private screen kept (its release; ``screen=``), None without a screen.
    loss_params : dict
        The loss's public parameters (``huber_h``, ``hinge_h``); a default Huber
        threshold computed from a response bound taken from the data is None.
    inference : CoefficientInference or None
        With ``inference=True`` (loss "squared", "huber" or "logistic"): the private bootstrap
        behind :attr:`bse`, :meth:`conf_int`, :attr:`tvalues`, :attr:`pvalues` and
        :meth:`cov_params` (:mod:`dpsubset.inference.intervals`); None otherwise.
    selection_confidence : SelectionConfidence
        With ``inference=True`` (top-R): private 95 % confidence bounds on the probability
        that the mechanism released the best-scoring support, with its verdict in
        words (``res.privacy.selection_confidence`` is the same); otherwise
        NotReleasedError says how to get it.

    Notes
    -----
    There is deliberately no ``fittedvalues`` or ``resid``: they would be computed
    from the private data and are not covered by the guarantee. Use
    :meth:`predict` on data you are allowed to use. Nor are there standard errors,
    t statistics, p-values, likelihoods or information criteria: none is released
    privately. Accessing any such statsmodels attribute (the names in
    :data:`WITHHELD`, e.g. ``res.bse``, ``res.conf_int``, ``res.aic``,
    ``res.summary2``) raises :class:`NotReleasedError`, an AttributeError (so
    ``hasattr`` is False) whose message says why and what to use instead.

    The object holds no data, no clipped data, no scores of candidate supports and
    no noise; pickling it is safe in that sense. The public maps and bounds used by
    :meth:`predict` are kept in the design's public spec
    (:class:`~dpsubset.design.spec.DesignSpec`: no X, y or Gram matrix can be reached
    from the result; when bounds were taken from the data, the learned
    bounds are the one non-public number the object keeps, for predictions, and it
    is never printed).

    Examples
    --------
    >>> res = dps.dp_best_subset("Salary ~ .", hitters, eps=2, s=5, bounds=...)  # doctest: +SKIP
    >>> print(res.summary())                                                  # doctest: +SKIP
    >>> res.tidy(); res.glance()                                              # doctest: +SKIP
    >>> dps.summary_table([res, res2], fmt="latex")                           # doctest: +SKIP
    """

    support: list
    params: pd.Series | None
    forced: list
    candidates: list
    method: str
    nobs: int
    formula: str
    response: str
    privacy: PrivacyReport
    loss: str = DEFAULT_LOSS
    s: int | None = None
    eps_select: float | None = None
    eps_refit: float | None = None
    bounds: dict | str | None = None
    r: float | None = None
    #: the refit's radius (its default grows with eps_refit; dpsubset/defaults.py)
    r_refit: float | None = None
    lam: float | None = None
    response_levels: tuple | None = None
    screened: list | None = None
    loss_params: dict = field(default_factory=dict)
    inference: object = field(default=None, repr=False)
    _selection_confidence: object = field(default=None, repr=False)
    _predictor: DesignSpec | None = field(default=None, repr=False)
    _coef_mapped: np.ndarray | None = field(default=None, repr=False)
    _used_columns: list = field(default_factory=list, repr=False)

    def __post_init__(self):
        if self.s is None:
            self.s = len(self.support)
        if self.bounds is None and self._predictor is not None:
            self.bounds = describe_bounds(self._predictor)

    def __getattr__(self, name):
        # Only called when normal lookup fails: statsmodels attributes that are
        # withheld say why; any other name is the usual AttributeError.
        if name in WITHHELD:
            raise NotReleasedError(f"res.{name} is not released: {WITHHELD[name]}.")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # ---- public description -------------------------------------------------------
    @property
    def p(self) -> int:
        """Number of candidate columns."""
        return len(self.candidates)

    @property
    def terms(self) -> list:
        """Always-in terms, then all candidates (the index of :attr:`params`)."""
        return list(self.forced) + list(self.candidates)

    @property
    def model(self) -> ModelInfo:
        """The public model specification (formula, terms, loss, method, response)."""
        return ModelInfo(formula=self.formula, response=self.response, terms=tuple(self.terms),
                         forced=tuple(self.forced), candidates=tuple(self.candidates),
                         loss=self.loss, method=self.method)

    @property
    def lam_refit(self) -> float | None:
        """The ridge the refit used, max(lam_refit, 2 lambda / eps) (None without refit)."""
        return next((st["lam"] for st in self.privacy.stage_settings if st["stage"] == "refit"), None)

    @property
    def refit_mechanism(self) -> str | None:
        """The refit's mechanism as the privacy report names it (None without refit)."""
        for st in self.privacy.stages:
            if st["stage"] == "refit":
                return st["mechanism"]
        return None

    @property
    def bounds_derived(self) -> dict:
        """Bounds derived from the codebook by interval arithmetic: ``{column: (lo, hi)}``.

        Transforms of bounded columns (``I(x ** 2)``, ``np.log(x)``, ``x:z``, ...)
        that had no entry of their own; public, since they are functions of the
        given bounds only (see ``dpsubset/design/codebook.py``).
        """
        return {} if self._predictor is None else dict(self._predictor.bounds_derived or {})

    @property
    def bounds_unused(self) -> list:
        """Entries of the codebook (``Bounds.x``) that this formula does not use."""
        return [] if self._predictor is None else list(self._predictor.bounds_unused or [])

    @property
    def centring(self) -> pd.DataFrame:
        """The released centring (``centre=``, docs/methods/centring.md): per column, its codebook
        interval, the box used (``tightened`` or not) and the centre; empty when none ran."""
        return centring_frame(() if self._predictor is None else getattr(self._predictor, "centring", ()))

    @property
    def bounds_description(self) -> str:
        """The bounds in one line (public numbers only)."""
        if not isinstance(self.bounds, dict):
            return "not recorded" if self.bounds is None else str(self.bounds)
        return "public (given by the user or by the coding of the columns)"

    def _response_bound(self):
        if isinstance(self.bounds, dict) and self.response in self.bounds:
            return _interval(self.bounds[self.response])
        return BOUNDS_FROM_DATA if self.bounds == BOUNDS_FROM_DATA else ""

    def _status(self, name):
        if name in self.forced:
            return "forced"
        return "selected" if name in self.support else "not selected"

    # ---- private inference (inference=True) -----------------------------------------
    def _inference(self, name):
        # a missing inference falls through to __getattr__, which says how to get it
        if self.inference is None:
            raise NotReleasedError(f"res.{name} is not released: {WITHHELD[name]}.")
        return self.inference

    def _over_terms(self, values):
        """Values of the refit's columns over every term (NaN for terms not estimated)."""
        return values.reindex(self.terms)

    @property
    def bse(self):
        """Private standard errors (parametric bootstrap of the refit), NaN off the support.

        Raises NotReleasedError unless the fit had ``inference=True``.
        """
        return self._over_terms(self._inference("bse").bse)

    @property
    def conf_int(self):
        """``conf_int(alpha=0.05)``: private ``1 - alpha`` confidence intervals (columns 0 and 1).

        Basic bootstrap intervals from the parametric bootstrap of the refit, conditional
        on the released support (or, with ``split=True``, from rows the selection did
        not see); NaN for terms off the support. A property that returns the method, so
        that without ``inference=True`` the attribute itself raises NotReleasedError
        (``hasattr(res, "conf_int")`` is then False, as for every withheld name).
        """
        inf = self._inference("conf_int")

        def conf_int(alpha=0.05):
            return inf.conf_int(alpha).reindex(self.terms)
        return conf_int

    @property
    def tvalues(self):
        """The normal score of :attr:`pvalues` with the estimate's sign (NaN off the support);
        not ``params / bse`` (:attr:`CoefficientInference.tvalues`)."""
        return self._over_terms(self._inference("tvalues").tvalues)

    @property
    def pvalues(self):
        """Two-sided p-values that invert :meth:`conf_int`: ``p < alpha`` exactly when the
        ``1 - alpha`` interval leaves out 0 (NaN off the support)."""
        return self._over_terms(self._inference("pvalues").pvalues)

    @property
    def cov_params(self):
        """``cov_params()``: the bootstrap covariance of the refit's coefficients (its columns
        only); the attribute raises NotReleasedError without ``inference=True``."""
        return self._inference("cov_params").cov_params

    @property
    def get_prediction(self):
        """``get_prediction(newdata)``: a :class:`~dpsubset.inference.prediction.PredictionResults`
        whose ``summary_frame(alpha)`` has statsmodels' columns (``mean``, ``mean_se``,
        ``mean_ci_*`` and, for least squares and Huber, the observation interval ``obs_ci_*``),
        from the same bootstrap as :meth:`conf_int`; the attribute raises NotReleasedError
        without ``inference=True``.
        """
        from ..inference.prediction import PredictionResults
        inf = self._inference("get_prediction")

        def get_prediction(newdata):
            M = self._predictor.transform_new(newdata)
            names = self._predictor.forced_names + self._predictor.candidate_names
            A = M[:, [names.index(c) for c in self._used_columns]]
            index = getattr(newdata, "index", None)
            response_map = (None if self.response_levels is not None
                            else self._predictor.column_maps.get(self.response, (0.0, 1.0)))
            return PredictionResults(inf, A, self._coef_mapped, response_map,
                                     index=index if index is not None and len(index) == len(A) else None)
        return get_prediction

    @property
    def selection_confidence(self):
        """The selection confidence (``inference=True``, top-R); NotReleasedError otherwise."""
        if self._selection_confidence is None:
            raise NotReleasedError(f"res.selection_confidence is not released: "
                                   f"{WITHHELD['selection_confidence']}.")
        return self._selection_confidence

    # ---- predictions ---------------------------------------------------------------
    def predict(self, newdata=None, which=None):
        """Predictions for new data from the DP coefficients.

        Parameters
        ----------
        newdata : pandas.DataFrame, mapping of columns, or object with ``to_pandas()``
            Must hold the columns the right-hand side of the formula uses (the
            response is not needed). Required: there are no in-sample
            predictions (fitted values would be computed from the private data);
            calling ``predict()`` without it raises a TypeError that says so.
        which : {"mean", "linear", "class"}, optional
            What to predict, in statsmodels' spelling (``GLMResults.predict``):

            * ``"mean"``: the mean response. For ``loss="squared"`` and
              ``"huber"`` this is the prediction in the units of the response
              (the same as ``"linear"``); for ``loss="logistic"`` it is the
              probability of the class coded +1, ``response_levels[1]``.
              Default for every loss except the hinge.
            * ``"linear"``: the linear predictor ``x'beta`` (the margin for the
              two-class losses; its sign gives the class).
            * ``"class"``: class labels (two-class losses only): a pandas
              Categorical with the levels ``response_levels``, the second level
              where the linear predictor is > 0. Default for ``loss="hinge"``,
              whose smoothed hinge loss has no probability model, so its
              "response" is the label (``which="mean"`` is then an error; use
              ``"linear"`` for the margin).

        Returns
        -------
        pandas.Series
            One prediction per row of ``newdata`` (with its index when it has
            one), named after the response.

        Raises
        ------
        TypeError
            ``newdata`` not given.
        ValueError
            ``which`` not valid for the loss; ``refit=False`` (no coefficients);
            a categorical variable of ``newdata`` with a level the model does not
            know (the message names the column and the number of rows).

        Warns
        -----
        PredictionClippedWarning
            Rows of ``newdata`` outside the public bounds: the message names the
            columns and the number of rows clipped (never a value).

        Notes
        -----
        New data go through the formula's model spec (the same transforms and
        categorical levels), are clipped to the same public bounds and mapped by
        the same public maps as the training data. Clipping is kept (it is the
        model that was fitted) but warned about: a value far outside the box is
        often a units mistake. Predictions are post-processing
        of the released coefficients and cost no privacy budget.
        """
        if newdata is None:
            raise TypeError(
                "predict() needs newdata: dpsubset releases no fitted values, since they would be "
                "computed from the private data and are not covered by the privacy guarantee. "
                "Call res.predict(newdata) with data you may use (public or held-out rows holding "
                "the columns the formula uses)")
        which = self._check_which(which)
        if self._coef_mapped is None:
            raise ValueError("predict needs coefficients: fit with refit=True")
        frame = as_frame(newdata, "newdata")
        M = self._predictor.transform_new(frame)
        counts, n_rows = clipped_rows(self._predictor, frame)
        if n_rows:
            cols = ", ".join(f"{c} ({k} row{'s' if k != 1 else ''})" for c, k in list(counts.items())[:10])
            if len(counts) > 10:
                cols += f" and {len(counts) - 10} more column(s)"
            warnings.warn(
                f"predict: {n_rows} of {len(frame)} row(s) of newdata lie outside the public bounds "
                f"and were clipped to them, as the training data were: {cols}. Their predictions are "
                "those at the edge of the bounds; check the units of these columns (or the codebook)",
                PredictionClippedWarning, stacklevel=2)
        names = self._predictor.forced_names + self._predictor.candidate_names
        idx = [names.index(c) for c in self._used_columns]
        eta = M[:, idx] @ self._coef_mapped
        index = getattr(newdata, "index", None)
        if index is None or len(index) != len(eta):
            index = None
        levels = self.response_levels
        if levels is None:
            centre, half = self._predictor.column_maps.get(self.response, (0.0, 1.0))
            return pd.Series(centre + half * eta, index=index, name=self.response)
        # two classes coded -1 / +1 (response_levels[1] is +1); the response is not mapped
        if which == "linear":
            return pd.Series(eta, index=index, name=self.response)
        if which == "mean":   # logistic: P(y = +1 | x) = 1 / (1 + exp(-eta))
            from scipy.special import expit
            return pd.Series(expit(eta), index=index, name=self.response)
        labels = pd.Categorical.from_codes((eta > 0).astype(int), categories=list(levels))
        return pd.Series(labels, index=index, name=self.response)

    def _check_which(self, which):
        """Resolve ``which=`` of :meth:`predict` for this loss (before any work)."""
        two_class = self.response_levels is not None
        if which is None:
            return "mean" if loss_class(self.loss).has_mean else "class"
        if which not in PREDICT_WHICH:
            raise ValueError(f"which: expected one of {PREDICT_WHICH}; got {which!r}")
        if which == "class" and not two_class:
            raise ValueError(f"which='class' is for the two-class losses (logistic, hinge); this fit has "
                             f"loss={self.loss!r}: use which='mean'")
        if which == "mean" and not loss_class(self.loss).has_mean:
            raise ValueError("which='mean': the (smoothed) hinge loss has no probability model, so there "
                             "is no mean response; use which='class' for labels or which='linear' for "
                             "the margin (or fit with loss='logistic' for probabilities)")
        return which

    def __repr__(self):
        return (f"DPSubsetResults(method={self.method!r}, support={self.support}, "
                f"guarantee={self.privacy.guarantee!r}, eps={self.privacy.eps:.4g})")

    # ---- broom-style frames -----------------------------------------------------------
    def tidy(self, conf_int=False, conf_level=0.95):
        """One row per term, the shape broom's ``tidy()`` gives.

        Parameters
        ----------
        conf_int : bool, default False
            Add ``conf.low`` and ``conf.high``, the private intervals at ``conf_level``
            (needs ``inference=True``; otherwise NotReleasedError says how to get them).
        conf_level : float in (0, 1), default 0.95

        Returns
        -------
        pandas.DataFrame
            Rows: the always-in terms, then every candidate, in model-matrix order.
            Columns: ``term`` (str), ``estimate`` (float: the DP coefficient in the
            user's units, 0 off the support, NaN for every term when
            ``refit=False``), ``selected`` (bool: released by the selection),
            ``forced`` (bool: always in), ``status`` (``"forced"``,
            ``"selected"`` or ``"not selected"``), ``clip_lo`` and ``clip_hi``
            (the public clipping interval of the column; NaN for the intercept and
            when the bounds were taken from the data). With ``inference=True``,
            broom's ``std.error``, ``statistic`` and ``p.value`` (and ``conf.low``,
            ``conf.high``) follow ``estimate``, NaN off the support
            (:mod:`dpsubset.results.broom`); without it there are none.
        """
        from .broom import tidy_inference
        terms = self.terms
        uncertainty = tidy_inference(self, terms, conf_int, conf_level)   # checks before any work
        if self.params is None:
            est = np.full(len(terms), np.nan)
        else:
            est = self.params.reindex(terms).to_numpy(dtype=float)
        bnd = self.bounds if isinstance(self.bounds, dict) else {}
        lo = [float(bnd[t][0]) if t in bnd else np.nan for t in terms]
        hi = [float(bnd[t][1]) if t in bnd else np.nan for t in terms]
        support = set(self.support)
        forced = set(self.forced)
        return pd.DataFrame({
            "term": pd.Series(terms, dtype=object),
            "estimate": est,
            **uncertainty,
            "selected": np.array([t in support for t in terms], dtype=bool),
            "forced": np.array([t in forced for t in terms], dtype=bool),
            "status": pd.Series([self._status(t) for t in terms], dtype=object),
            "clip_lo": np.array(lo, dtype=float),
            "clip_hi": np.array(hi, dtype=float),
        })

    def glance(self):
        """One row for the fit, the shape broom's ``glance()`` gives.

        Returns
        -------
        pandas.DataFrame
            Columns ``nobs``, ``n_candidates`` (p), ``n_forced``, ``s``,
            ``method``, ``loss``, ``refit`` (the refit mechanism, or None),
            ``eps`` and ``delta`` (totals), ``eps_select``, ``eps_refit``,
            ``guarantee``, ``seeded`` (bool: the call was given ``random_state``, so
            the release is private only while the seed is secret; see
            :attr:`PrivacyReport.seeded`), ``sensitivity`` (score sensitivity Delta;
            NaN when the bounds were taken from the data, since it is then a
            statistic of the data),
            ``certificates_closed`` (bool: True for every release, since a search
            that does not certify releases nothing), ``gap_check_passed``,
            ``bounds_public``, ``r``, ``r_refit``, ``lam``, ``lam_refit``, ``formula``, ``response``. No
            goodness-of-fit statistics: they would be computed from the private data.
            No count of the exact solves either: it depends on the data
            (:attr:`PrivacyReport.exact_search`). With ``inference=True``: ``eps_inference``,
            ``inference_mode``, ``ball_binds``, ``truth_in_ball`` and the selection confidence (``selection_conf_low``,
            ``selection_conf_high``, ``selection_conf_level``, ``selection_verdict``;
            :func:`dpsubset.results.broom.glance_inference`).
        """
        from .broom import glance_inference
        rep = self.privacy
        row = dict(
            nobs=int(self.nobs), n_candidates=int(self.p), n_forced=len(self.forced),
            s=int(self.s), method=self.method, loss=self.loss, refit=self.refit_mechanism,
            eps=float(rep.eps), delta=float(rep.delta),
            eps_select=float("nan") if self.eps_select is None else float(self.eps_select),
            eps_refit=float("nan") if self.eps_refit is None else float(self.eps_refit),
            guarantee=rep.guarantee, seeded=bool(rep.seeded),
            sensitivity=(float("nan") if rep.sensitivity is None or not rep.bounds_public
                         else float(rep.sensitivity)),
            certificates_closed=bool(rep.all_certificates_closed),
            gap_check_passed=rep.gap_check_passed,
            bounds_public=bool(rep.bounds_public),
            r=float("nan") if self.r is None else float(self.r),
            r_refit=float("nan") if self.r_refit is None else float(self.r_refit),
            lam=float("nan") if self.lam is None else float(self.lam),
            lam_refit=float("nan") if self.lam_refit is None else float(self.lam_refit),
            formula=self.formula, response=self.response,
        )
        row.update(glance_inference(self))
        return pd.DataFrame([row])

    def plot(self, others=None, **kwargs):
        """A coefficient plot, ``others`` ({name: fit}) beside: :func:`~dpsubset.results.plots.coef_plot`."""
        from .plots import coef_plot
        return coef_plot({"DP": self, **dict(others or {})}, **kwargs)

    def summary(self, title=None):
        """A statsmodels ``Summary`` of the fit.

        Parameters
        ----------
        title : str, optional
            Title of the header table.

        Returns
        -------
        DPSummary
            A :class:`statsmodels.iolib.summary.Summary` (``print`` it, or call
            ``.as_text()``, ``.as_latex()``, ``.as_html()``) with a header (response,
            loss, method, refit, n, p, s, eps per stage, delta, guarantee, bounds,
            score sensitivity Delta, whether the exact search was certified, which
            every release is), a coefficient table (the
            always-in and the selected terms: DP coefficient, status, public clipping
            interval) and notes that state the guarantee in words. ``.as_latex()``
            is the paper-ready table of ``summary_table([res], fmt="latex")``.
        """
        from .tables import summary_table   # tables reads results by what they hold: no cycle

        def latex():
            return summary_table([self], ["DP coef"], "latex",
                                 title=title or "Differentially private best subset selection")
        return build_summary(self, title, latex_table=latex)


def describe_solves(solves):
    """The per-solve list of an exact search in words, for the data owner's terminal.

    NON-PRIVATE: the number of solves, their routes and whether each closed depend
    on the data. Printed with ``verbose=True`` and available as
    :attr:`NonPrivateDiagnostics.solves`; never part of a release.

    Parameters
    ----------
    solves : list of dict
        ``problem``, ``method``, ``closed`` per solve.

    Returns
    -------
    str
    """
    head = (f"NON-PRIVATE (verbose; do not publish): the exact search needed {len(solves)} "
            f"solve{'' if len(solves) == 1 else 's'}")
    lines = [head + (":" if solves else "")]
    lines += [f"  - {c['problem']}: {c['method']} ({'certified' if c['closed'] else 'OPEN'})"
              for c in solves]
    return "\n".join(lines)


@dataclass
class NonPrivateDiagnostics:
    """NON-PRIVATE intermediate values of one call. Not covered by any guarantee.

    Returned only with ``diagnostics=True``, with a PrivacyLeakWarning. Publishing
    anything in here can reveal information about individual rows.

    Attributes
    ----------
    best_support : list of str
        The exact best support of the data.
    candidate_supports : list of list of str
        The supports the mechanism drew from (the top-R list, or the mistake classes).
    candidate_scores : ndarray
        Their scores.
    certificates : list of dpsubset.search.candidates.Certificate
        The exact search's optimality certificates, with their bounds (scores of
        the data), iterations or nodes, and wall times.
    score_gap : float or None
        c(S_(2)) - c(S_(1)) for the mistakes mechanism.
    solves : list of dict
        ``problem``, ``method`` (the route: enumeration, class bounds, branch and
        bound, ...) and ``closed`` for every solve the release rests on, including
        the accuracy of iteratively computed scores. This list used to be in the
        privacy report; it left it because its length and routes differ between
        neighbouring data sets (:func:`describe_solves` prints it).
    label : str
    """

    best_support: list
    candidate_supports: list
    candidate_scores: np.ndarray
    certificates: list
    score_gap: float | None = None
    solves: list = field(default_factory=list)
    label: str = "NON-PRIVATE: scores of the data; not covered by the privacy guarantee"
