"""What one column of :func:`dpsubset.summary_table` shows: a private fit or a baseline.

A private fit (a :class:`~dpsubset.results.results.DPSubsetResults`) shows its DP
coefficients, the em dash for a candidate it did not select, and its privacy
accounting. A baseline is a NON-PRIVATE fit shown beside the private ones, as a
paper shows what the private fits lose: a statsmodels results object (``OLS``,
``GLM``, ``Logit`` ...: ``params``, ``bse``, ``conf_int()``, ``nobs``) or the
exact best subset of :func:`dpsubset.best_subset_nonprivate`. Its accounting rows
say "not private" and are otherwise empty.

Columns are recognised by what they hold (a private fit carries a
:class:`~dpsubset.privacy.report.PrivacyReport`), so this module does not import the
results class and ``results.summary()`` can use the table.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from ..privacy.leaks import NotReleasedError
from ..privacy.report import PrivacyReport

__all__ = ["Column", "PlainBaseline", "as_column", "METHOD_NAMES", "PRIVACY_ROWS", "OPTIONAL_ROWS", "INTERCEPTS"]

#: The accounting rows under the coefficients, in order.
PRIVACY_ROWS = ("Method", "Loss", "Refit", "s", "p", "N", "eps", "eps (select + refit)",
                "eps (inference)", "delta", "Guarantee", "Seeded", "Certificates")
#: Rows shown by default only when a column has a value in them.
OPTIONAL_ROWS = ("eps (inference)",)
#: Names of the selection methods in a table (``internal_names=False``), as the
#: papers name them (docs/methods/); a method registered from outside keeps its name.
METHOD_NAMES = {"top_r": "top-R", "mistakes": "mistakes", "samp_agg": "subsample and aggregate",
                "dp_sis": "DP-SIS", "exponential": "exponential", "lei_ic": "Lei et al. IC",
                "mcmc": "MCMC"}
#: Names of an intercept in a baseline (patsy / formulaic: Intercept; statsmodels' add_constant: const).
INTERCEPTS = ("Intercept", "const", "(Intercept)")
#: Cell of a candidate that a fit did not select (its coefficient is 0 by selection).
NOT_SELECTED = "\u2014"
#: Cell of a selected term when the fit has no coefficients (``refit=False``).
SELECTED_NO_COEF = "selected"
#: Cell of an always-in term when the fit has no coefficients (``refit=False``).
FORCED_NO_COEF = "forced"


def _series(values, index):
    try:
        return pd.Series(values, index=index, dtype=float)
    except (TypeError, ValueError):
        return None


#: How a table shows an end the release leaves open (a standard error of ``inf``).
OPEN_END = "inf"


def _released(res, what, alpha, names):
    """Standard errors (``"std_error"``) or intervals (``"conf_int"``) of ``res``, or None.

    A private fit that releases none raises NotReleasedError: the column then shows
    none (and the table's note says so). No value is made up here. Arrays without an
    index (statsmodels on numpy arrays) are in the order of the coefficients, ``names``.
    """
    try:
        out = res.bse if what == "std_error" else res.conf_int(alpha=alpha)
    except (NotReleasedError, AttributeError, NotImplementedError):
        return None
    if out is None:
        return None
    index = getattr(out, "index", None)
    if index is None and len(out) == len(names):
        index = names
    if what == "std_error":
        return pd.Series(list(out), index=index, dtype=float)
    frame = pd.DataFrame(out, index=index) if not isinstance(out, pd.DataFrame) else out
    if frame.shape[1] != 2:
        return None
    return frame.set_axis(["lo", "hi"], axis=1)


@dataclass
class Column:
    """One column: its terms, cells and accounting.

    Attributes
    ----------
    result : object
        The fit.
    private : bool
        A private fit (False: a baseline, NOT private).
    response : str
        Name of the dependent variable ("" when the baseline does not say).
    forced, candidates : list of str
        Always-in terms, then the other terms, in the model's order.
    selected : set of str
        Candidates with a coefficient.
    coef : pandas.Series or None
        Coefficients (None: a private fit made with ``refit=False``).
    """

    result: object
    private: bool
    response: str
    forced: list
    candidates: list
    selected: set
    coef: pd.Series | None
    _stats: dict = field(default_factory=dict, repr=False)

    def has(self, term):
        return term in self.forced or term in self.candidates

    def cell(self, term, fmt_num):
        """The estimate of ``term`` as text: a number, the em dash, a word, or empty."""
        if not self.has(term):
            return ""
        if term not in self.forced and term not in self.selected:
            return NOT_SELECTED
        if self.coef is None:
            return FORCED_NO_COEF if term in self.forced else SELECTED_NO_COEF
        return fmt_num(self.coef[term])

    def uncertainty(self, term, statistic, conf_level, fmt_num):
        """The standard error ``(se)`` or interval ``[lo, hi]`` of ``term``, or "" when none is released."""
        if statistic is None or not self.has(term) or self.cell(term, str) in ("", NOT_SELECTED):
            return ""
        key = (statistic, conf_level)
        if key not in self._stats:
            names = list(self.coef.index) if self.coef is not None else self.forced + self.candidates
            self._stats[key] = _released(self.result, statistic, 1 - conf_level, names)
        stats = self._stats[key]
        if stats is None or term not in stats.index:
            return ""
        # NaN: not estimated; inf: an open end where the refit's ball binds (the release
        # does not bound the coefficient on that side), shown as such
        if statistic == "std_error":
            se = float(stats[term])
            return "" if math.isnan(se) else f"({fmt_num(se) if math.isfinite(se) else OPEN_END})"
        lo, hi = (float(v) for v in stats.loc[term, ["lo", "hi"]])
        if math.isnan(lo) or math.isnan(hi):
            return ""
        return ((f"[{fmt_num(lo)}" if math.isfinite(lo) else f"(-{OPEN_END}") + ", "
                + (f"{fmt_num(hi)}]" if math.isfinite(hi) else f"{OPEN_END})"))

    def releases(self, statistic, conf_level):
        """Whether this column shows a standard error (interval) for at least one term."""
        return any(self.uncertainty(t, statistic, conf_level, str) for t in self.forced + self.candidates)

    def privacy_cells(self, internal_names):
        """The accounting rows (:data:`PRIVACY_ROWS`) of this column."""
        res = self.result
        if not self.private:
            model = getattr(res, "model", None)
            method = (getattr(res, "method_name", None) or
                      (type(model).__name__ if model is not None else "best subset"))
            nobs = getattr(res, "nobs", None)
            nobs = "" if nobs is None else str(int(nobs))
            return [method, "", "", "", "", nobs, "", "", "", "", "none", "", ""]
        rep = res.privacy
        es = "" if res.eps_select is None else f"{res.eps_select:.4g}"
        er = "" if res.eps_refit is None else f"{res.eps_refit:.4g}"
        method = res.method if internal_names else METHOD_NAMES.get(res.method, res.method)
        # private inference (issue 26) spends its own part of eps, in stages "inference: ..."
        inf = sum(st["eps"] for st in rep.stages if str(st.get("stage", "")).startswith("inference"))
        return [method, res.loss, (res.refit_mechanism or "none").split(" (")[0], str(res.s),
                str(res.p), str(res.nobs), f"{rep.eps:.4g}", f"{es} + {er}", f"{inf:.4g}" if inf else "",
                f"{rep.delta:.3g}",
                rep.guarantee, "yes" if rep.seeded else "no",
                # the same words for every release of the method: no count of the solves
                "all certified" if rep.exact_search else "not needed"]


class PlainBaseline:
    """A NON-PRIVATE fit given as plain numbers (R's ``lm()`` or ``glm()`` through the R
    wrapper): the statsmodels attributes a table reads.

    Parameters
    ----------
    names : list of str
        Terms, in the model's order.
    coef, se : list of float
        Coefficients and their standard errors (None: not given).
    nobs : int
        Rows of the fit.
    response : str
        The dependent variable.
    method : str
        What the Method row shows (``"lm"``, ``"glm"``).
    df_resid : float, optional
        Residual degrees of freedom: t intervals (lm); None: normal intervals (glm).
    """

    def __init__(self, names, coef, se=None, *, nobs, response="", method="baseline", df_resid=None):
        self.params = pd.Series([float(v) for v in coef], index=[str(t) for t in names], dtype=float)
        self.bse = None if se is None else pd.Series([float(v) for v in se], index=self.params.index,
                                                    dtype=float)
        self.nobs, self.response, self.method_name, self.df_resid = int(nobs), str(response), str(method), df_resid

    def conf_int(self, alpha=0.05):
        from scipy import stats
        if self.bse is None:
            return None
        q = (stats.t.ppf(1 - alpha / 2, self.df_resid) if self.df_resid else stats.norm.ppf(1 - alpha / 2))
        return pd.DataFrame({0: self.params - q * self.bse, 1: self.params + q * self.bse})


def _baseline(res, where):
    coef = getattr(res, "params", None)
    if coef is None and isinstance(getattr(res, "coef", None), pd.Series):   # best_subset_nonprivate
        return Column(res, False, str(getattr(res, "response", "") or ""), list(res.forced),
                      list(res.candidates), set(res.support), res.coef.astype(float))
    if coef is None:
        raise TypeError(f"{where}: expected a result of dp_best_subset, or a non-private baseline with "
                        f"coefficients (a statsmodels results object, best_subset_nonprivate); got "
                        f"{type(res).__name__}")
    names = list(getattr(coef, "index", None) if hasattr(coef, "index") else
                 getattr(getattr(res, "model", None), "exog_names", None) or
                 [f"x{j}" for j in range(len(coef))])
    coef = _series(coef, names)
    if coef is None:
        raise TypeError(f"{where}: the baseline's params are not numbers")
    model = getattr(res, "model", None)
    response = getattr(model, "endog_names", None) or getattr(res, "response", None)
    forced = [t for t in names if t in INTERCEPTS]
    return Column(res, False, response if isinstance(response, str) else "", forced,
                  [t for t in names if t not in forced], set(names), coef)


def as_column(res, where="results"):
    """The :class:`Column` of a private fit or a baseline; TypeError for anything else."""
    if isinstance(getattr(res, "privacy", None), PrivacyReport):
        return Column(res, True, res.response, list(res.forced), list(res.candidates), set(res.support),
                      None if res.params is None else pd.Series(res.params, dtype=float))
    return _baseline(res, where)
