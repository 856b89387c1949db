"""Several private fits side by side, the way papers show them: :func:`summary_table`.

Terms are rows and fits are columns; the privacy accounting of each fit (method,
loss, s, n, eps, delta, guarantee) closes the table. Only released quantities go
in: DP coefficients, the released supports and the public budget.

The text, LaTeX and HTML renderings are statsmodels' own (``SimpleTable`` inside a
``Summary``, as in ``statsmodels.iolib.summary2.summary_col``); Markdown is written
here, so that no table dependency is needed.
"""
from __future__ import annotations

import pandas as pd

from .results import DPSubsetResults, DPSummary, _num

__all__ = ["summary_table", "FORMATS"]

#: Output formats of :func:`summary_table`.
FORMATS = ("text", "latex", "html", "markdown", "frame")

#: Cell of a candidate that a fit did not select (its coefficient is 0 by selection).
NOT_SELECTED = "-"
#: Cell of a selected term when the fit has no coefficients (``refit=False``).
SELECTED_NO_COEF = "selected"
#: Cell of an always-in term when the fit has no coefficients (``refit=False``).
FORCED_NO_COEF = "forced"

_PRIVACY_ROWS = ("Method", "Loss", "Refit", "s", "p", "N", "eps", "eps (select + refit)",
                 "delta", "Guarantee", "Certificates")


def _check_results(results):
    if isinstance(results, DPSubsetResults):
        results = [results]
    if isinstance(results, (str, bytes)) or not hasattr(results, "__iter__"):
        raise TypeError(f"results: expected a list of DPSubsetResults (from dp_best_subset); "
                        f"got {type(results).__name__}")
    results = list(results)
    if not results:
        raise ValueError("results: the list is empty; pass at least one result of dp_best_subset")
    for i, res in enumerate(results):
        if not isinstance(res, DPSubsetResults):
            raise TypeError(f"results[{i}]: expected a DPSubsetResults (from dp_best_subset); "
                            f"got {type(res).__name__}")
    return results


def _check_names(model_names, k):
    if model_names is None:
        return [f"({i})" for i in range(1, k + 1)]
    if isinstance(model_names, str) or not hasattr(model_names, "__iter__"):
        raise TypeError(f"model_names: expected a list of {k} strings; got {model_names!r}")
    names = [str(m) for m in model_names]
    if len(names) != k:
        raise ValueError(f"model_names: {len(names)} name(s) for {k} result(s); give one name per result")
    dup = sorted({m for m in names if names.count(m) > 1})
    if dup:
        raise ValueError(f"model_names: duplicate name(s) {dup}; the columns need distinct names")
    return names


def _rows(results, all_terms):
    """Term rows in order: always-in terms, then candidates, by first appearance."""
    forced, cands = [], []
    for res in results:
        forced += [t for t in res.forced if t not in forced]
    for res in results:
        keep = res.candidates if all_terms else [t for t in res.candidates if t in set(res.support)]
        cands += [t for t in keep if t not in cands and t not in forced]
    if not all_terms:
        # keep the model-matrix order of the first fit that has each term
        order = {}
        for res in results:
            for j, t in enumerate(res.candidates):
                order.setdefault(t, (len(order), j))
        cands.sort(key=lambda t: order[t][0])
    return forced + cands


def _cell(res, term):
    if term not in res.forced and term not in res.candidates:
        return ""
    if term not in res.forced and term not in set(res.support):
        return NOT_SELECTED
    if res.params is None:
        return FORCED_NO_COEF if term in res.forced else SELECTED_NO_COEF
    return _num(res.params[term])


def _privacy_column(res):
    rep = res.privacy
    es = "" if res.eps_select is None else f"{res.eps_select:.4g}"
    er = "" if res.eps_refit is None else f"{res.eps_refit:.4g}"
    return [res.method, res.loss, (res.refit_mechanism or "none").split(" (")[0], str(res.s),
            str(res.p), str(res.nobs), f"{rep.eps:.4g}", f"{es} + {er}", f"{rep.delta:.3g}",
            rep.guarantee, "closed" if rep.all_certificates_closed else "OPEN"]


def _markdown(frame, n_terms, title, notes):
    def esc(x):
        return str(x).replace("|", "\\|")

    cols = [""] + [esc(c) for c in frame.columns]
    lines = []
    if title:
        lines += [f"**{esc(title)}**", ""]
    lines.append("| " + " | ".join(cols) + " |")
    lines.append("|:---|" + "---:|" * len(frame.columns))
    for i, (term, row) in enumerate(frame.iterrows()):
        stub = esc(term) if i < n_terms else f"*{esc(term)}*"
        lines.append("| " + " | ".join([stub] + [esc(v) for v in row]) + " |")
    lines.append("")
    lines += [esc(n) + "  " for n in notes]
    return "\n".join(lines).rstrip() + "\n"


def summary_table(results, model_names=None, fmt="text", *, all_terms=False, title=None):
    """Several private fits side by side: terms as rows, fits as columns, privacy at the bottom.

    Parameters
    ----------
    results : list of DPSubsetResults
        Fits from :func:`dpsubset.dp_best_subset` (a single result is accepted too).
    model_names : list of str, optional
        Column headings, one per result; default ``"(1)"``, ``"(2)"``, ...
    fmt : {"text", "latex", "html", "markdown", "frame"}
        Output format. ``"text"``, ``"latex"`` and ``"html"`` are statsmodels'
        renderings (``Summary.as_text``, ``as_latex``, ``as_html``);
        ``"markdown"`` is a pipe table; ``"frame"`` returns the table as a
        pandas DataFrame of strings.
    all_terms : bool, default False
        List every candidate of every fit. By default only the always-in terms and
        the terms that at least one fit selected are listed.
    title : str, optional
        Title of the table.

    Returns
    -------
    str or pandas.DataFrame
        The rendered table (a DataFrame with ``fmt="frame"``).

    Notes
    -----
    A cell holds the DP coefficient of the term in that fit; ``-`` marks a
    candidate the fit did not select (its coefficient is 0 by selection);
    ``selected`` (``forced``) marks a selected (always-in) term of a fit made
    with ``refit=False``; an empty cell means the term is not in that fit's
    model. There are no standard
    errors: none is released privately. The rows below the coefficients are the
    privacy accounting of each fit: selection method, loss, refit mechanism, s,
    number of candidates p, n, total eps, its split between selection and refit,
    delta, the guarantee and whether every exact solve was certified.

    Examples
    --------
    >>> print(dps.summary_table([res1, res2], model_names=["eps = 1", "eps = 4"]))  # doctest: +SKIP
    >>> dps.summary_table([res1, res2], fmt="latex")                               # doctest: +SKIP
    """
    results = _check_results(results)
    if fmt not in FORMATS:
        raise ValueError(f"fmt: expected one of {FORMATS}; got {fmt!r}")
    names = _check_names(model_names, len(results))
    if not isinstance(all_terms, bool):
        raise TypeError(f"all_terms: expected True or False; got {all_terms!r}")
    terms = _rows(results, all_terms)
    body = [[_cell(res, t) for res in results] for t in terms]
    privacy = list(zip(*[_privacy_column(res) for res in results]))
    frame = pd.DataFrame(body + [list(r) for r in privacy], index=list(terms) + list(_PRIVACY_ROWS),
                         columns=names, dtype=object)
    if fmt == "frame":
        return frame
    responses = list(dict.fromkeys(res.response for res in results))
    notes = [f"Dependent variable: {', '.join(responses)}. DP coefficients in the units of the data; "
             f"'{NOT_SELECTED}': not selected (coefficient 0); empty: not in that model. "
             "No standard errors: none is released privately."]
    guarantees = {res.privacy.guarantee for res in results}
    if "void" in guarantees:
        notes.append("At least one fit has NO privacy guarantee (guarantee 'void'): see its privacy report.")
    if "conditional" in guarantees:
        notes.append("'conditional': eps-DP only on data satisfying a condition that is not checked.")
    if fmt == "markdown":
        return _markdown(frame, len(terms), title, notes)

    from statsmodels.iolib.table import SimpleTable
    from statsmodels.iolib.tableformatting import fmt_params

    data = frame.to_numpy().tolist()
    table = SimpleTable(data, names, list(frame.index), title=title or "",
                        txt_fmt=dict(fmt_params, data_fmts=["%s"]))
    if terms:
        # a rule between the coefficients and the privacy rows (row 0 is the header)
        table[len(terms)].dec_below = "header_dec_below"
    smry = DPSummary()
    smry.tables.append(table)
    smry.add_extra_txt(notes)
    if fmt == "text":
        return smry.as_text()
    if fmt == "latex":
        return smry.as_latex()
    return smry.as_html()
