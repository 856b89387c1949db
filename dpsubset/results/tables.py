r"""Several private fits side by side, the way papers show them: :func:`summary_table`.

Terms are rows and fits are columns; the privacy accounting of each fit (method,
loss, s, n, eps, delta, guarantee, seeded) closes the table. Only released quantities go
in: DP coefficients, the released supports and the public budget.

The text rendering is statsmodels' own (``SimpleTable`` inside a ``Summary``, as
in ``statsmodels.iolib.summary2.summary_col``); LaTeX (a floating ``table`` with
``booktabs`` rules and ``threeparttable`` notes, ready to ``\input``), HTML and
Markdown are written here, so that no table dependency is needed.
"""
from __future__ import annotations

import html
import math
import os

import pandas as pd

from .results import DPSubsetResults
from .summary import DPSummary, _latex_escape, _num

__all__ = ["summary_table", "FORMATS", "LATEX_PACKAGES", "NOT_SELECTED"]

#: Output formats of :func:`summary_table`.
FORMATS = ("text", "latex", "html", "markdown", "frame")
#: The format a file suffix implies when ``fmt`` is not given.
SUFFIX_FORMATS = {".tex": "latex", ".html": "html", ".htm": "html", ".md": "markdown",
                  ".txt": "text", ".csv": "frame"}
#: LaTeX packages the ``fmt="latex"`` table needs in the preamble.
LATEX_PACKAGES = ("booktabs", "threeparttable")

#: Cell of a candidate that a fit did not select (its coefficient is 0 by selection):
#: an em dash, distinct from a minus sign (``---`` in LaTeX).
NOT_SELECTED = "\u2014"
#: Cell of a selected term when the fit has no coefficients (``refit=False``).
SELECTED_NO_COEF = "selected"
#: Cell of an always-in term when the fit has no coefficients (``refit=False``).
FORCED_NO_COEF = "forced"

_PRIVACY_ROWS = ("Method", "Loss", "Refit", "s", "p", "N", "eps", "eps (select + refit)",
                 "delta", "Guarantee", "Seeded", "Certificates")


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


def _formatter(digits):
    """How a coefficient is written: ``digits`` decimals, a format spec, or about 4 significant digits."""
    if digits is None:
        return _num
    if isinstance(digits, bool) or not isinstance(digits, (int, str)):
        raise TypeError(f"digits: expected an int (decimal places) or a format spec such as '.3g'; "
                        f"got {digits!r}")
    if isinstance(digits, int):
        if not 0 <= digits <= 12:
            raise ValueError(f"digits: expected 0 to 12 decimal places; got {digits}")
        spec = f".{digits}f"
    else:
        spec = digits
        try:
            format(1.5, spec)
        except ValueError:
            raise ValueError(f"digits: {digits!r} is not a format spec for a number (e.g. '.3g', '.2f')") from None

    def fmt(x):
        x = float(x)
        return str(x) if not math.isfinite(x) else format(x, spec)
    return fmt


def _cell(res, term, fmt_num):
    if term not in res.forced and term not in res.candidates:
        return ""
    if term not in res.forced and term not in set(res.support):
        return NOT_SELECTED
    if res.params is None:
        return FORCED_NO_COEF if term in res.forced else SELECTED_NO_COEF
    return fmt_num(res.params[term])


def _privacy_column(res):
    rep = res.privacy
    es = "" if res.eps_select is None else f"{res.eps_select:.4g}"
    er = "" if res.eps_refit is None else f"{res.eps_refit:.4g}"
    return [res.method, res.loss, (res.refit_mechanism or "none").split(" (")[0], str(res.s),
            str(res.p), str(res.nobs), f"{rep.eps:.4g}", f"{es} + {er}", f"{rep.delta:.3g}",
            rep.guarantee, "yes" if rep.seeded else "no",
            # the same words for every release of the method: no count of the solves
            "all certified" if rep.exact_search else "not needed"]


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


# Stubs of the privacy rows in LaTeX (math for the symbols) and HTML.
_LATEX_STUBS = {"eps": r"$\varepsilon$", "eps (select + refit)": r"$\varepsilon$ (select + refit)",
                "delta": r"$\delta$", "s": "$s$", "p": "$p$", "N": "$N$"}
_HTML_STUBS = {"eps": "\u03b5", "eps (select + refit)": "\u03b5 (select + refit)", "delta": "\u03b4"}
# Short names of the refit mechanisms in LaTeX (a three-fit table must fit a page), with the note.
_LATEX_SHORT = {"objective perturbation": r"obj.\ pert."}


def _latex_number(cell):
    """A number as LaTeX: a true minus sign, powers of ten for e-notation; other text escaped."""
    text = cell.strip()
    try:
        float(text)
    except ValueError:
        return _latex_escape(cell)
    sign = r"$-$" if text.startswith("-") else ""
    text = text.lstrip("+-")
    if "e" in text.lower():
        mant, exp = text.lower().split("e")
        power = f"10^{{{int(exp)}}}"
        return f"{sign}${power}$" if float(mant) == 1 else f"{sign}${mant} \\times {power}$"
    return sign + text


def _latex(frame, n_terms, title, label, notes, escape):
    """A floating table: caption, label, booktabs rules, notes in a threeparttable.

    ``notes`` are LaTeX already (escaped by the caller); ``escape`` applies to the
    title, the term labels and the model names.
    """
    esc = _latex_escape if escape else str
    k = frame.shape[1]
    out = [f"% needs in the preamble: \\usepackage{{{','.join(LATEX_PACKAGES)}}}",
           r"\begin{table}[htbp]", r"\centering", r"\begin{threeparttable}"]
    if title:
        out.append(rf"\caption{{{esc(title)}}}")
    if label:
        out.append(rf"\label{{{label}}}")
    out += [rf"\begin{{tabular}}{{@{{}}l*{{{k}}}{{r}}@{{}}}}", r"\toprule",
            " & ".join([""] + [esc(str(c)) for c in frame.columns]) + r" \\", r"\midrule"]
    short_used = False
    for i, (stub, row) in enumerate(frame.iterrows()):
        if i == n_terms and n_terms:
            out.append(r"\midrule")
        cells = []
        for v in row:
            v = str(v)
            if v == NOT_SELECTED:
                cells.append("---")
            elif i >= n_terms and v in _LATEX_SHORT:
                cells.append(_LATEX_SHORT[v])
                short_used = True
            else:
                cells.append(_latex_number(v))
        stub = esc(str(stub)) if i < n_terms else _LATEX_STUBS.get(stub, _latex_escape(str(stub)))
        out.append(" & ".join([stub] + cells) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}"]
    notes = list(notes)
    if short_used:
        notes.append(r"obj.\ pert.: objective perturbation.")
    if notes:
        out += [r"\begin{tablenotes}[flushleft]", r"\footnotesize"]
        out += [rf"\item[] {n}" for n in notes]
        out.append(r"\end{tablenotes}")
    out += [r"\end{threeparttable}", r"\end{table}"]
    return "\n".join(out) + "\n"


def _html(frame, n_terms, title, notes, escape):
    esc = (lambda x: html.escape(str(x), quote=False)) if escape else str
    k = frame.shape[1]
    out = ['<table class="dpsubset-summary">']
    if title:
        out.append(f"<caption>{esc(title)}</caption>")
    out.append("<thead><tr><th></th>" + "".join(f"<th>{esc(c)}</th>" for c in frame.columns)
               + "</tr></thead>")
    for part, rows in (("terms", frame.iloc[:n_terms]), ("privacy", frame.iloc[n_terms:])):
        if len(rows):
            out.append(f'<tbody class="{part}">')
            for stub, row in rows.iterrows():
                name = esc(stub) if part == "terms" else html.escape(_HTML_STUBS.get(stub, stub), quote=False)
                out.append(f'<tr><th style="text-align:left">{name}</th>'
                           + "".join(f'<td style="text-align:right">{html.escape(str(v), quote=False)}</td>'
                                     for v in row) + "</tr>")
            out.append("</tbody>")
    if notes:
        out.append("<tfoot>" + "".join(f'<tr><td colspan="{k + 1}">{esc(n)}</td></tr>' for n in notes)
                   + "</tfoot>")
    out.append("</table>")
    return "\n".join(out) + "\n"


def _check_labels(labels, terms):
    if labels is None:
        return {}
    if callable(labels):
        out = {t: str(labels(t)) for t in terms}
    elif hasattr(labels, "items"):
        out = {str(t): str(v) for t, v in labels.items() if t in terms}
    else:
        raise TypeError(f"labels: expected a dict {{term: label}} or a function of the term; got {labels!r}")
    shown = [out.get(t, t) for t in terms]
    dup = sorted({x for x in shown if shown.count(x) > 1})
    if dup:
        raise ValueError(f"labels: two terms would have the same label {dup}; give distinct labels")
    return out


def _check_notes(notes):
    if notes is None:
        return []
    if isinstance(notes, str):
        return [notes]
    if not hasattr(notes, "__iter__") or not all(isinstance(n, str) for n in notes):
        raise TypeError(f"notes: expected a string or a list of strings; got {notes!r}")
    return list(notes)


def summary_table(results, model_names=None, fmt=None, *, all_terms=False, title=None, label=None,
                  notes=None, labels=None, digits=None, file=None, escape=True):
    r"""Several private fits side by side: terms as rows, fits as columns, privacy at the bottom.

    Parameters
    ----------
    results : list of DPSubsetResults
        Fits from :func:`dpsubset.dp_best_subset` (a single result is accepted too).
    model_names : list of str, optional
        Column headings, one per result; default ``"(1)"``, ``"(2)"``, ...
    fmt : {"text", "latex", "html", "markdown", "frame"}, optional
        Output format; default from the suffix of ``file`` (``.tex``, ``.html``,
        ``.md``, ``.txt``, ``.csv``), else ``"text"``. ``"text"`` is statsmodels'
        rendering (``Summary.as_text``); ``"latex"`` a floating table ready to
        ``\input`` (see Notes); ``"html"`` a ``<table>`` with every cell
        escaped; ``"markdown"`` a pipe table; ``"frame"`` the table as a pandas
        DataFrame of strings.
    all_terms : bool, default False
        List every candidate of every fit. By default only the always-in terms and
        the terms that at least one fit selected are listed.
    title : str, optional
        Title of the table (the LaTeX ``\caption``, the HTML ``<caption>``).
    label : str, optional
        LaTeX ``\label`` of the table (with ``title``), e.g. ``"tab:dp-fits"``.
    notes : str or list of str, optional
        Further notes, after the table's own (what the cells mean, the guarantees).
    labels : dict or callable, optional
        Display names of terms, ``{"Hits": "Hits (1986)", "League[T.N]": "National League"}``
        (like modelsummary's ``coef_rename`` or pyfixest's ``labels``); terms not
        named keep their names. A function of the term name works too.
    digits : int or str, optional
        Coefficients with this many decimal places (an int), or with a format
        spec such as ``".3g"``; default about four significant digits.
    file : str or os.PathLike, optional
        Also write the table to this file (``fmt="frame"``: as CSV).
    escape : bool, default True
        Escape the title, labels, model names and notes for LaTeX (``& % _ $ # { } ~ ^ \``)
        and HTML (``& < >``). False inserts them as written, for LaTeX math in labels.

    Returns
    -------
    str or pandas.DataFrame
        The rendered table (a DataFrame with ``fmt="frame"``).

    Notes
    -----
    A cell holds the DP coefficient of the term in that fit; an em dash (``---``
    in LaTeX), never a minus sign, marks a candidate the fit did not select (its
    coefficient is 0 by selection); ``selected`` (``forced``) marks a selected
    (always-in) term of a fit made with ``refit=False``; an empty cell means the
    term is not in that fit's model. There are no standard errors: none is
    released privately. The rows below the coefficients are the privacy
    accounting of each fit: selection method, loss, refit mechanism, s, number
    of candidates p, n, total eps, its split between selection and refit, delta,
    the guarantee, whether the fit was seeded (``random_state`` given: private
    only while the seed is secret; a note under the table says so) and the
    exact search: ``all certified`` (every release of an exact method: a search
    that does not certify releases nothing) or ``not needed`` (methods without
    one). No count or route of the solves: they depend on the data.

    The LaTeX table is a ``table`` float (``[htbp]``, centred) holding a
    ``threeparttable`` with the caption, the label, a ``tabular`` with
    ``booktabs`` rules (``\toprule``, ``\midrule``, ``\bottomrule``) and the
    notes in a ``tablenotes`` block under it; negative numbers have a true minus
    sign and eps and delta are the math symbols. The preamble needs::

        \usepackage{booktabs}
        \usepackage{threeparttable}

    (in TeX Live: ``booktabs`` is in the latex-recommended collection,
    ``threeparttable`` in latex-extra; Debian packages ``texlive-latex-recommended``
    and ``texlive-latex-extra``). A three-fit table fits an ``article`` page.

    Examples
    --------
    >>> print(dps.summary_table([res1, res2], model_names=["eps = 1", "eps = 4"]))  # doctest: +SKIP
    >>> dps.summary_table([res1, res2, res3], title="Private fits", label="tab:fits",
    ...                   labels={"CRuns": "Career runs"}, digits=2,
    ...                   file="fits.tex")                                          # doctest: +SKIP
    """
    results = _check_results(results)
    if file is not None and not isinstance(file, (str, os.PathLike)):
        raise TypeError(f"file: expected a path (str); got {type(file).__name__}")
    if fmt is None:
        suffix = os.path.splitext(os.fspath(file))[1].lower() if file is not None else ""
        fmt = SUFFIX_FORMATS.get(suffix, "text")
    if fmt not in FORMATS:
        raise ValueError(f"fmt: expected one of {FORMATS}; got {fmt!r}")
    names = _check_names(model_names, len(results))
    if not isinstance(all_terms, bool):
        raise TypeError(f"all_terms: expected True or False; got {all_terms!r}")
    if not isinstance(escape, bool):
        raise TypeError(f"escape: expected True or False; got {escape!r}")
    for arg, val in (("title", title), ("label", label)):
        if val is not None and not isinstance(val, str):
            raise TypeError(f"{arg}: expected a string; got {val!r}")
    if label is not None and not title:
        raise ValueError("label: a LaTeX \\label refers to a caption; give title= as well")
    extra_notes = _check_notes(notes)
    fmt_num = _formatter(digits)
    terms = _rows(results, all_terms)
    shown = _check_labels(labels, terms)
    body = [[_cell(res, t, fmt_num) for res in results] for t in terms]
    privacy = list(zip(*[_privacy_column(res) for res in results]))
    frame = pd.DataFrame(body + [list(r) for r in privacy],
                         index=[shown.get(t, t) for t in terms] + list(_PRIVACY_ROWS),
                         columns=names, dtype=object)
    if fmt == "frame":
        if file is not None:
            frame.to_csv(file)
        return frame
    responses = list(dict.fromkeys(res.response for res in results))
    table_notes = [f"Dependent variable: {', '.join(responses)}. DP coefficients in the units of the data; "
                   f"{NOT_SELECTED}: not selected (coefficient 0); empty: not in that model. "
                   "No standard errors: none is released privately."]
    guarantees = {res.privacy.guarantee for res in results}
    if "void" in guarantees:
        table_notes.append("At least one fit has NO privacy guarantee (guarantee 'void'): see its privacy report.")
    if "conditional" in guarantees:
        table_notes.append("'conditional': eps-DP only on data satisfying a condition that is not checked.")
    if any(res.privacy.seeded for res in results):
        table_notes.append("Seeded 'yes': the fit was given random_state, so it is private only "
                           "while the seed is secret.")
    if fmt == "latex":
        # the automatic notes are ours: escape them, then write the symbols as math
        own = [_latex_escape(n).replace(NOT_SELECTED, "---").replace("eps-DP", r"$\varepsilon$-DP")
               for n in table_notes]
        user = [(_latex_escape(n) if escape else n) for n in extra_notes]
        out = _latex(frame, len(terms), title, label, own + user, escape)
    elif fmt == "markdown":
        out = _markdown(frame, len(terms), title, table_notes + extra_notes)
    elif fmt == "html":
        out = _html(frame, len(terms), title, table_notes + extra_notes, escape)
    else:
        out = _text(frame, len(terms), names, title, table_notes + extra_notes)
    if file is not None:
        with open(file, "w", encoding="utf-8") as fh:
            fh.write(out)
    return out


def _text(frame, n_terms, names, title, notes):
    from statsmodels.iolib.table import SimpleTable
    from statsmodels.iolib.tableformatting import fmt_params

    data = frame.to_numpy().tolist()
    table = SimpleTable(data, names, list(frame.index), title=title or "",
                        txt_fmt=dict(fmt_params, data_fmts=["%s"]))
    if n_terms:
        # a rule between the coefficients and the privacy rows (row 0 is the header)
        table[n_terms].dec_below = "header_dec_below"
    smry = DPSummary()
    smry.tables.append(table)
    smry.add_extra_txt(notes)
    return smry.as_text()
