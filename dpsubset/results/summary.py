"""The statsmodels-style summary of a release: header rows, coefficient table, notes.

Built from (label, value) lists fed to statsmodels' table builder, as statsmodels'
own ``iolib.summary`` does. Every entry is public or released: the budget, the
guarantee, the public bounds, the DP coefficients; no count of solves, no statistic
of the data.
"""
from __future__ import annotations

import math

from statsmodels.iolib.summary import Summary

from .usefulness import BALL_BINDS_NOTE, BALL_TRUSTED_NOTE
from ..inference.intervals import CLOSE_CALL_RATIO
from ..losses import loss_class
from ..privacy.budget import Stage

__all__ = ["DPSummary", "build_summary", "header_rows", "notes_text"]

#: What the result says about bounds that were not given by the user (their values
#: are statistics of the data and are never shown).
BOUNDS_FROM_DATA = "taken from the data"


def _num(x):
    """A coefficient as statsmodels would print it: about 4 significant digits."""
    x = float(x)
    if not math.isfinite(x):
        return str(x)
    if x == 0:
        return "0"
    a = abs(x)
    if 1e-4 <= a < 1e6:
        digits = max(0, 3 - int(math.floor(math.log10(a))))
        return f"{x:.{digits}f}"
    return f"{x:.3e}"


def _interval(lo_hi):
    lo, hi = lo_hi
    return f"[{lo:.6g}, {hi:.6g}]"


def _pvalue(p):
    """A p-value as the summary prints it: three decimals, ``<0.001`` below them."""
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _latex_escape(text):
    repl = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
            "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\^{}"}
    return "".join(repl.get(ch, ch) for ch in text)


def _html_escape(text):
    import html
    return html.escape(text, quote=False)


class DPSummary(Summary):
    """A statsmodels :class:`~statsmodels.iolib.summary.Summary` whose notes are escaped.

    Identical to the statsmodels class except that the note block is escaped for
    HTML in :meth:`as_html`, and that :meth:`as_latex` of a fit's summary is the
    paper-ready table of ``summary_table(fmt="latex")`` (see :meth:`as_latex`).
    """

    #: Width at which :meth:`as_text` wraps the notes (None: the width of the tables).
    notes_width = None
    #: A function returning the LaTeX of the summary (set by ``DPSubsetResults.summary``);
    #: None: statsmodels' own LaTeX, with the notes escaped.
    latex_table = None

    def as_text(self):
        import textwrap

        extra = self.extra_txt
        if not extra:
            return super().as_text()
        width = self.notes_width or max(
            (len(line) for t in self.tables for line in t.as_text().splitlines()), default=78)
        wrapped = "\n".join(textwrap.fill(line, width=max(width, 40), subsequent_indent="    ")
                             for line in extra.splitlines())
        self.extra_txt = wrapped
        try:
            return super().as_text()
        finally:
            self.extra_txt = extra

    def as_latex(self):
        r"""The summary as LaTeX.

        For a fit's summary: the same floating table as
        ``summary_table([res], fmt="latex")`` (caption, ``booktabs`` rules, the
        dependent variable, decimal-aligned coefficients, the privacy accounting and
        the notes in a ``threeparttable``), which fits an ``article`` page; its
        preamble needs ``\usepackage{booktabs,threeparttable,dcolumn}``.
        statsmodels' own rendering has a commented caption and, with the header's
        long labels, runs past the text width.
        """
        if self.latex_table is not None:
            return self.latex_table()
        extra, self.extra_txt = self.extra_txt, None
        try:
            latex = super().as_latex()
        finally:
            self.extra_txt = extra
        if extra:
            latex += "\n\n" + _latex_escape(extra).replace("\n", " \\newline\n ")
        return latex

    def as_html(self):
        extra, self.extra_txt = self.extra_txt, None
        try:
            out = super().as_html()
        finally:
            self.extra_txt = extra
        if extra:
            out += "<br/><br/>" + _html_escape(extra).replace("\n", "<br/>")
        return out


def header_rows(res):
    """The summary's header: (label, value) pairs for the left and right columns (public only)."""
    rep = res.privacy
    left = [("Dep. Variable:", res.response), ("Loss:", res.loss),
            ("Method:", res.method),
            ("Refit:", (res.refit_mechanism or "none").split(" (")[0]),
            ("No. Observations:", str(res.nobs)),
            ("No. candidates (p):", str(res.p)),
            ("Support size (s):", str(res.s)),
            ("Always in:", str(len(res.forced)))]
    # each stage's radius and ridge (public: bounds, s, the loss, the stage's n eps)
    if rep.bounds_public and res.r is not None:
        left.append(("Select r, lam:", f"{res.r:.4g}, {res.lam:.4g}"))
        if res.lam_refit is not None:
            left.append(("Refit r, lam:", f"{res.r_refit:.4g}, {res.lam_refit:.4g}"))
    # the same words for every release of the method: no count of the solves
    cert = "all certified" if rep.exact_search else "not needed"
    right = [("Guarantee:", rep.guarantee), ("eps (total):", f"{rep.eps:.4g}")]
    spent = {}  # one row a stage (the centring's means and its released fit add up)
    for st in rep.stages:
        label = st['stage'].replace('selection: ', '').replace('inference: ', '')
        spent[label] = spent.get(label, 0.0) + st['eps']
    right += [(f"eps {label}:", f"{eps:.4g}") for label, eps in spent.items()]
    right += [("delta:", f"{rep.delta:.3g}"),
              ("Bounds:", "public" if isinstance(res.bounds, dict) else
               ("from data" if res.bounds == BOUNDS_FROM_DATA else "not recorded")),
              ("Score sensitivity:", rep._sensitivity_text().split(" (")[0]),
              ("Certificates:", cert)]
    if rep.gap_check_passed is not None:
        right.append(("Gap check:", "passed" if rep.gap_check_passed else "not passed"))
    return left, right


def notes_text(res):
    """The summary's numbered notes: the guarantee in words, what is and is not released."""
    rep = res.privacy
    notes = [rep.statement]
    if res.params is None:
        notes.append("refit=False: no coefficients were released; the table lists the "
                     "released support only.")
    else:
        notes.append(f"DP coefficients in the units of the data: {res.refit_mechanism or 'refit'} "
                     "on the released support. Terms not selected have coefficient 0. "
                     + _inference_note(res))
    conf = getattr(res, "_selection_confidence", None)
    if conf is not None:
        notes.append(f"Selection confidence: {conf}.")
    notes.append("No fitted values or residuals: they would be computed from the private data. "
                 "Use predict() on data you may use.")
    levels = res.response_levels   # set by the API for two-class losses
    if levels is not None:
        what = ("the class label (which='linear': the margin, whose sign gives the class)"
                if not loss_class(res.loss).has_mean else
                f"the probability of {levels[1]!r} (which='linear': the linear predictor; "
                "which='class': the label)")
        notes.append(f"Two classes: {res.response} = {levels[0]!r} coded -1, {levels[1]!r} coded +1; "
                     f"predict() returns {what}.")
    if isinstance(res.bounds, dict):
        rb = res._response_bound()
        notes.append("Public bounds: every column is clipped to its interval shown above"
                     + ("." if levels is not None else f"; {res.response} to {rb}."))
    elif res.bounds == BOUNDS_FROM_DATA:
        notes.append("Bounds were taken from the data: no differential privacy guarantee "
                     "(the learned values are not shown).")
    cen = res.centring
    if not cen.empty:
        eps_c = sum(st["eps"] for st in res.privacy.stages if st["stage"] == Stage.CENTRING)
        tight = [c for c in cen.index if cen.loc[c, "tightened"]]
        k = len(cen) - int(res.response in cen.index)
        notes.append(f"Centring (eps = {eps_c:.4g}): {k} codebook column(s)"
                     + (" and the response" if res.response in cen.index else "")
                     + " mapped around privately released centres"
                     + (f"; the boxes of {', '.join(tight)} tightened to the released spread, so the "
                        "estimand is the regression on the columns winsorised there (res.centring)"
                        if tight else "")
                     + ("; the spread of the best support's fitted values released too (it sizes the "
                        "selection's ball)" if cen["fitted_sd"].notna().any() else "")
                     + ".")
    derived = res.bounds_derived
    if derived:
        notes.append("Bounds derived from the codebook by interval arithmetic: "
                     + "; ".join(f"{c} in {_interval(iv)}" for c, iv in derived.items()) + ".")
    unused = res.bounds_unused
    if unused:
        shown = ", ".join(unused) if len(unused) <= 20 else ", ".join(unused[:20]) + ", ..."
        notes.append(f"{len(unused)} codebook entr{'y' if len(unused) == 1 else 'ies'} not used by "
                     f"this formula: {shown}.")
    off = [c for c in res.candidates if c not in set(res.support)]
    if off:
        shown = ", ".join(off) if len(off) <= 20 else ", ".join(off[:20]) + ", ..."
        notes.append(f"{len(off)} candidate term(s) not selected: {shown}.")
    return "Notes:\n" + "\n".join(f"[{i}] {t}" for i, t in enumerate(notes, 1))


def _inference_note(res):
    """What the std err and interval columns are, or how to get them."""
    inf = getattr(res, "inference", None)
    if inf is None and any(str(st.get("stage", "")).startswith("inference") for st in res.privacy.stages):
        # inference=True with a loss that has no intervals (the hinge)
        return (f"No standard errors or p-values: loss {res.loss!r} has no model of the response "
                "to simulate from, so inference=True gives no intervals for it "
                "(docs/guide/inference.md).")
    if inf is None:
        return ("No standard errors or p-values: none was requested (dp_best_subset(..., "
                "inference=True) releases them privately).")
    where = ("on rows the selection did not see (Refit(split=True))" if inf.mode == "split"
             else "conditional on the released support")
    note = (f"Std err and 95 % intervals: {inf.method}, {where}; they account for the sampling "
            f"and the privacy noise of the refit (docs/guide/inference.md).")
    note += (" P>|z| inverts the intervals: it is below alpha exactly when the 1 - alpha "
             "interval leaves out 0 (z, in tidy()'s statistic, is its normal score; "
             "docs/guide/inference.md).")
    if inf.on_sphere and not inf.truth_in_ball and bool(inf.open_ends(0.05).to_numpy().any()):
        note += (" An end marked * is open: the truth may lie beyond the refit's sphere on that side, "
                 "so the end is that of least squares on the private second moments (inf: one-sided).")
    close = inf.close_calls(list(res.support))
    if close:  # from released numbers alone: the estimates and the private moments' standard errors
        verb = "lies" if len(close) == 1 else "lie"
        note += (f" Use refit=Refit(split=True) for intervals to report: {', '.join(close)} {verb} within "
                 f"{CLOSE_CALL_RATIO:g} std err of 0, so the selection may have been a close call, and the "
                 "conditional intervals of such a term under-cover (selected and estimated on the same rows; "
                 "docs/guide/inference.md).")
    if inf.on_sphere and inf.truth_in_ball:
        note += (f" {BALL_TRUSTED_NOTE} (docs/guide/inference.md, \"When the ball binds\").")
    elif inf.on_sphere:
        note += f" {BALL_BINDS_NOTE} (docs/guide/inference.md, \"When the ball binds\")."
    return note


def build_summary(res, title=None, latex_table=None):
    """The statsmodels summary of ``res`` (:meth:`DPSubsetResults.summary`).

    Parameters
    ----------
    res : dpsubset.results.results.DPSubsetResults
    title : str, optional
        Title of the header table.
    latex_table : callable, optional
        Returns the summary's LaTeX (:attr:`DPSummary.latex_table`).

    Returns
    -------
    DPSummary
    """
    from statsmodels.iolib.table import SimpleTable
    from statsmodels.iolib.tableformatting import fmt_params

    smry = DPSummary()
    smry.latex_table = latex_table
    left, right = header_rows(res)
    smry.add_table_2cols(res, gleft=[(k, [v]) for k, v in left],
                         gright=[(k, [v]) for k, v in right], yname=res.response,
                         xname=res.terms,
                         title=title or "Differentially Private Best Subset Selection")
    rows, stubs = [], []
    bnd = res.bounds if isinstance(res.bounds, dict) else {}
    inf = getattr(res, "inference", None)
    ci = None if inf is None else inf.conf_int(0.05)
    opened = None if inf is None else inf.open_ends(0.05)
    pvalues = None if inf is None else inf.pvalues
    for name in res.terms:
        if name not in res.forced and name not in res.support:
            continue
        coef = "" if res.params is None else _num(res.params[name])
        clip = _interval(bnd[name]) if name in bnd else ("" if name == "Intercept" or not bnd
                                                         else "")
        stubs.append(name)
        if inf is None:
            rows.append([coef, res._status(name), clip])
        else:  # the private std err and interval of the refit's columns (inference=True)
            if name in ci.index:
                # an open end (the truth may lie beyond the refit's sphere on that side) is starred
                se, pv = _num(inf.bse[name]), _pvalue(pvalues[name])
                lo, hi = (_num(ci.loc[name, k]) + ("*" if opened.loc[name, k] else "") for k in (0, 1))
            else:
                se = pv = lo = hi = ""
            rows.append([coef, se, pv, lo, hi, res._status(name), clip])
    headers = (["DP coef", "status", "clip interval"] if inf is None
               else ["DP coef", "std err", "P>|z|", "[0.025", "0.975]", "status", "clip interval"])
    table = SimpleTable(rows, headers, stubs, txt_fmt=fmt_params)
    # widen the data columns so that the table is as wide as the header
    target = len(smry.tables[0].as_text().splitlines()[-1])
    widths = table.get_colwidths("txt")
    extra = target - (sum(widths) + len(widths) - 1)
    if extra > 0:
        k = len(widths) - 1
        widths = [widths[0]] + [w + extra // k + (i < extra % k) for i, w in enumerate(widths[1:])]
        table = SimpleTable(rows, headers, stubs, txt_fmt=dict(fmt_params, colwidths=widths))
    smry.tables.append(table)
    smry.add_extra_txt([notes_text(res)])
    return smry
