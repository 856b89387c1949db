"""Which rows of new data a prediction clips to the public (or released) boxes.

One job: count, by column, the rows of ``newdata`` that :meth:`DesignSpec.transform_new`
clips, so that :meth:`dpsubset.results.results.DPSubsetResults.predict` can warn
(``PredictionClippedWarning``) with column names and counts, never values.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

__all__ = ["clipped_rows"]


def clipped_rows(spec, frame):
    """Rows of ``frame`` that ``spec.transform_new`` clips: {column: count} and the row total.

    A data column is clipped to its raw interval (the codebook's entry for a column
    that a transform reads, ``raw_limits``) or, when it is itself a model column, to
    its clip interval. A derived column (``I(wt ** 2)``, ``wt:hp``) is then clipped to
    its own interval: from interval arithmetic on the raw ones it holds the raw-clipped
    values already, but a tighter interval the codebook gives the term itself can clip
    more (:func:`_derived_outside`). Intervals taken from the data are infinite in a
    result's spec: nothing is counted against them, so the count says nothing about the
    training data.
    """
    limits = {}
    for name in spec.rhs_variables:   # in the formula's order
        if name in spec.raw_limits or name in spec.clip_limits:
            limits[name] = spec.raw_limits.get(name, spec.clip_limits.get(name))
    counts, outside = {}, np.zeros(len(frame), dtype=bool)
    for name, (lo, hi) in limits.items():
        if name not in frame.columns or not pd.api.types.is_numeric_dtype(frame[name]) \
                or pd.api.types.is_bool_dtype(frame[name]):
            continue
        col = frame[name].to_numpy(dtype=float)
        off = (col < lo) | (col > hi)   # NaN compares False: not clipped
        if off.any():
            counts[name] = int(off.sum())
            outside |= off
    for name, off in _derived_outside(spec, frame).items():
        counts[name] = int(off.sum())
        outside |= off
    return counts, int(outside.sum())


def _derived_outside(spec, frame):
    """{derived column: rows outside its interval}, computed on the raw-clipped data.

    The model matrix is built once more with the same spec but open intervals and no
    map (so nothing is clipped after the raw clip). A transform undefined on some row
    (its value is placed in the interval, not clipped) makes that build refuse: then
    no derived column is counted.
    """
    import math
    from dataclasses import replace

    names = spec.forced_names + spec.candidate_names
    derived = [j for j, nm in enumerate(names) if nm not in spec.rhs_variables and nm != "Intercept"
               and any(math.isfinite(v) for v in spec.clip_limits.get(nm, (-np.inf, np.inf)))]
    if spec.model_spec is None or not derived or len(frame) == 0:
        return {}
    opened = replace(spec, clip_limits={k: (-np.inf, np.inf) for k in spec.clip_limits},
                     column_maps={k: (0.0, 1.0) for k in spec.column_maps})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            M = opened.transform_new(frame)
    except ValueError:
        return {}
    out = {}
    for j in derived:
        lo, hi = spec.clip_limits[names[j]]
        off = (M[:, j] < lo) | (M[:, j] > hi)
        if off.any():
            out[names[j]] = off
    return out


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
