r"""Several fits side by side, the way papers show them: :func:`summary_table`.

Terms are rows and fits are columns, under a header naming each column's dependent
variable; the privacy accounting of each fit (method, loss, s, n, eps, delta,
guarantee, seeded) closes the table. Only released quantities of the private fits go
in: DP coefficients, the released supports, the public budget, and standard errors or
intervals only where a fit releases them. Non-private baselines (statsmodels results,
:func:`dpsubset.best_subset_nonprivate`) may stand beside them, labelled as such
(:mod:`dpsubset.results.columns`).

The features follow modelsummary (Arel-Bundock 2022: ``coef_map``, ``gof_map``,
``statistic``, named models) and stargazer (Hlavac 2022: the dependent-variable
header, decimal alignment). The text rendering is statsmodels' own (``SimpleTable``
inside a ``Summary``, as in ``statsmodels.iolib.summary2.summary_col``); LaTeX is
:mod:`dpsubset.results.latex`; HTML and Markdown are written here, so that no table
dependency is needed.
"""
from __future__ import annotations

import html
import math
import os

import pandas as pd

from .columns import FORCED_NO_COEF, NOT_SELECTED, OPEN_END, OPTIONAL_ROWS, PRIVACY_ROWS, SELECTED_NO_COEF, as_column
from .latex import LATEX_PACKAGES, SIZES, render_latex
from .summary import DPSummary, _latex_escape, _num

__all__ = ["summary_table", "FORMATS", "LATEX_PACKAGES", "NOT_SELECTED", "STATISTICS", "PRIVACY_ROWS"]

#: Output formats of :func:`summary_table`.
FORMATS = ("text", "latex", "html", "markdown", "frame")
#: What may be shown under a coefficient (``statistic=``), where a fit releases it.
STATISTICS = ("std_error", "conf_int")
#: The format a file suffix implies when ``fmt`` is not given.
SUFFIX_FORMATS = {".tex": "latex", ".html": "html", ".htm": "html", ".md": "markdown",
                  ".txt": "text", ".csv": "frame"}
_ = (FORCED_NO_COEF, SELECTED_NO_COEF)
# The index of a row of standard errors (intervals) in ``fmt="frame"``: "<term> (std. error)".
_STAT_STUBS = {"std_error": "std. error", "conf_int": "conf. int."}   # re-exported names of the cells, for users of this module


def _check_results(results, model_names):
    """The columns, and the names from a dict ``{name: result}`` (None otherwise)."""
    from_dict = None
    if hasattr(results, "items") and not hasattr(results, "privacy"):
        if model_names is not None:
            raise TypeError("model_names: the results are a dict {name: result}, whose keys are the "
                            "column names; give the names once")
        from_dict = [str(k) for k in results.keys()]
        results = list(results.values())
    elif isinstance(results, (str, bytes)) or not hasattr(results, "__iter__") or hasattr(results, "privacy"):
        results = [results]
    results = list(results)
    if not results:
        raise ValueError("results: the list is empty; pass at least one result of dp_best_subset")
    if len(results) == 1 and isinstance(results[0], (str, bytes)):
        raise TypeError(f"results: expected a list of DPSubsetResults (from dp_best_subset); "
                        f"got {type(results[0]).__name__}")
    return [as_column(res, f"results[{i}]") for i, res in enumerate(results)], from_dict


def _check_names(model_names, k):
    if model_names is None:
        return [f"({i})" for i in range(1, k + 1)]
    if isinstance(model_names, str) or not hasattr(model_names, "__iter__"):
        raise TypeError(f"model_names: expected a list of {k} strings; got {model_names!r}")
    names = [str(m) for m in model_names]
    if len(names) != k:
        raise ValueError(f"model_names: {len(names)} name(s) for {k} result(s); give one name per result")
    return names   # repeats are allowed: columns may share a title (e.g. "OLS" twice)


def _rows(columns, all_terms):
    """Term rows in order: always-in terms, then candidates, by first appearance."""
    forced, cands = [], []
    for col in columns:
        forced += [t for t in col.forced if t not in forced]
    for col in columns:
        keep = col.candidates if all_terms else [t for t in col.candidates if t in col.selected]
        cands += [t for t in keep if t not in cands and t not in forced]
    if not all_terms:
        # keep the model-matrix order of the first fit that has each term
        order = {}
        for col in columns:
            for t in col.candidates:
                order.setdefault(t, len(order))
        cands.sort(key=lambda t: order[t])
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


def _check_labels(labels, terms, responses):
    """Display names of terms and responses: ``{name: label}`` (names not given keep theirs)."""
    if labels is None:
        return {}
    if callable(labels):
        out = {t: str(labels(t)) for t in list(terms) + list(responses)}
    elif hasattr(labels, "items"):
        out = {str(t): str(v) for t, v in labels.items() if t in terms or t in responses}
    else:
        raise TypeError(f"labels: expected a dict {{term: label}} or a function of the term; got {labels!r}")
    shown = [out.get(t, t) for t in terms]
    dup = sorted({x for x in shown if shown.count(x) > 1})
    if dup:
        raise ValueError(f"labels: two terms would have the same label {dup}; give distinct labels")
    return out


def _check_coef_map(coef_map, columns, responses):
    """Rows chosen, ordered and renamed (modelsummary's ``coef_map``): (terms, labels)."""
    if isinstance(coef_map, str) or not (hasattr(coef_map, "items") or hasattr(coef_map, "__iter__")):
        raise TypeError(f"coef_map: expected a dict {{term: label}} (rows in that order, others dropped) or a "
                        f"list of terms; got {coef_map!r}")
    pairs = [(str(t), str(v)) for t, v in coef_map.items()] if hasattr(coef_map, "items") else \
        [(str(t), str(t)) for t in coef_map]
    known = {t for col in columns for t in col.forced + col.candidates}
    unknown = [t for t, _ in pairs if t not in known and t not in responses]
    if unknown:
        raise ValueError(f"coef_map: {unknown} are not terms of any of the fits; terms are named as in "
                         "res.terms (e.g. 'League[T.N]', 'I(Hits ** 2)')")
    # terms given one label share a row (modelsummary's merge: 'const' of a baseline and
    # 'Intercept'), as long as no fit has two of them
    rows = {}
    for t, v in pairs:
        if t in known:
            rows.setdefault(v, []).append(t)
    for v, ts in rows.items():
        if any(sum(col.has(t) for t in ts) > 1 for col in columns):
            raise ValueError(f"coef_map: {ts} would share the row {v!r}, but one fit has two of them; "
                             "give them distinct labels")
    return list(rows.items()), dict(pairs)


def _check_privacy_rows(rows, columns, internal_names):
    if rows is None:   # every row, and an optional one only when a column fills it
        accounts = [col.privacy_cells(internal_names) for col in columns]
        return [r for j, r in enumerate(PRIVACY_ROWS)
                if r not in OPTIONAL_ROWS or any(a[j] for a in accounts)]
    if isinstance(rows, str) or not hasattr(rows, "__iter__"):
        raise TypeError(f"privacy_rows: expected a list of row names from {PRIVACY_ROWS}; got {rows!r}")
    rows = list(rows)
    bad = [r for r in rows if r not in PRIVACY_ROWS]
    if bad:
        raise ValueError(f"privacy_rows: {bad} are not rows of the table; choose from {PRIVACY_ROWS}")
    return rows


def _check_notes(notes):
    if notes is None:
        return []
    if isinstance(notes, str):
        return [notes]
    if not hasattr(notes, "__iter__") or not all(isinstance(n, str) for n in notes):
        raise TypeError(f"notes: expected a string or a list of strings; got {notes!r}")
    return list(notes)


def _groups(heads):
    """Runs of adjacent columns with the same dependent variable: [(label, span)]."""
    out = []
    for h in heads:
        if out and out[-1][0] == h:
            out[-1] = (h, out[-1][1] + 1)
        else:
            out.append((h, 1))
    return out


def _body(columns, terms, fmt_num, statistic, conf_level, privacy_rows, internal_names):
    """(kind, stub, cells) rows: a term's estimates, its standard errors (if any), the accounting.

    ``terms`` is a list of (label, [term, ...]): a row shows, in each column, the first
    of its terms that the column's fit has.
    """
    rows = []
    for label, group in terms:
        pick = [next((t for t in group if col.has(t)), group[0]) for col in columns]
        rows.append(("coef", label, [col.cell(t, fmt_num) for col, t in zip(columns, pick)]))
        stats = [col.uncertainty(t, statistic, conf_level, fmt_num) for col, t in zip(columns, pick)]
        if any(stats):
            rows.append(("stat", "", stats))
    accounts = [col.privacy_cells(internal_names) for col in columns]
    for name in privacy_rows:
        j = PRIVACY_ROWS.index(name)
        rows.append(("privacy", name, [a[j] for a in accounts]))
    return rows


def _which(names, idx):
    return ", ".join(names[i] for i in idx)


def _notes(columns, names, heads, rows, statistic, conf_level, own, user):
    """The table's own notes: ``own`` writes our text for the format, ``user`` the labels.

    What the em dash and an empty cell mean is said only when the table has one.
    """
    private = [i for i, c in enumerate(columns) if c.private]
    baseline = [i for i, c in enumerate(columns) if not c.private]
    by_response = {}
    for i, h in enumerate(heads):
        if h:
            by_response.setdefault(h, []).append(i)
    notes = []
    if len(by_response) == 1:
        lead = own("Dependent variable: ") + user(next(iter(by_response))) + own(". ")
    elif by_response:
        lead = own("Dependent variables: ") + own("; ").join(
            user(h) + own(f" in {_which(names, idx)}") for h, idx in by_response.items()) + own(". ")
    else:
        lead = ""
    shows = {i for i, c in enumerate(columns) if statistic and c.releases(statistic, conf_level)}
    what = ("standard errors in parentheses" if statistic == "std_error" else
            f"{100 * conf_level:g}% confidence intervals in brackets")
    text = ("DP coefficients in the units of the data" if private else "Coefficients in the units of the data")
    cells = [v for kind, _, row in rows if kind == "coef" for v in row]
    text += "".join([f"; {NOT_SELECTED}: not selected (coefficient 0)" if NOT_SELECTED in cells else "",
                     "; empty: not in that model" if "" in cells else "", "."])
    if shows:
        text += f" Under the estimates: {what}."
        if any(OPEN_END in v for kind, _, row in rows if kind == "stat" for v in row):
            text += (f" {OPEN_END}: the refit's ball binds, and the release does not bound the "
                     "coefficient on that side" + ("" if statistic == "conf_int" else
                                                   " (statistic=\"conf_int\" shows the ends it does bound)")
                     + " (docs/guide/inference.md, \"When the ball binds\").")
    none = "No confidence intervals" if statistic == "conf_int" else "No standard errors"
    if private and not shows & set(private):
        text += (f" {none} for the private fits: none is released privately." if baseline
                 else f" {none}: none is released privately.")
    elif private and not set(private) <= shows:
        text += (f" {none} for {_which(names, [i for i in private if i not in shows])}: "
                 "none is released privately.")
    notes.append(lead + own(text))
    if baseline:
        notes.append(own(f"NOT private: {_which(names, baseline)}, fitted on the same data without "
                         "privacy, for comparison; publishing it is not covered by any privacy guarantee."))
    guarantees = {c.result.privacy.guarantee for c in columns if c.private}
    if "void" in guarantees:
        notes.append(own("At least one fit has NO privacy guarantee (guarantee 'void'): see its privacy report."))
    if "conditional" in guarantees:
        notes.append(own("'conditional': eps-DP only on data satisfying a condition that is not checked."))
    if any(c.result.privacy.seeded for c in columns if c.private):
        notes.append(own("Seeded 'yes': the fit was given random_state, so it is private only "
                         "while the seed is secret."))
    return notes


def _latex_own(text):
    # our notes: escaped, then the symbols as LaTeX
    return _latex_escape(text).replace(NOT_SELECTED, "---").replace("eps-DP", r"$\varepsilon$-DP")


def summary_table(results, model_names=None, fmt=None, *, all_terms=False, coef_map=None, labels=None,
                  statistic="std_error", conf_level=0.95, dep_var=True, privacy_rows=None,
                  internal_names=False, title=None, label=None, notes=None, digits=None, align=True,
                  file=None, escape=True, size=None, resize=False, abbreviate=True):
    r"""Several fits side by side: terms as rows, fits as columns, privacy at the bottom.

    Parameters
    ----------
    results : list or dict of results
        Fits from :func:`dpsubset.dp_best_subset` (a single result is accepted too),
        and optionally NON-PRIVATE baselines to show beside them: statsmodels results
        (``smf.ols(...).fit()``, GLM, Logit, ...) or
        :func:`dpsubset.best_subset_nonprivate`. A dict ``{name: result}`` names the
        columns by its keys (as modelsummary's named list).
    model_names : list of str, optional
        Column headings, one per result (repeats allowed); default ``"(1)"``, ``"(2)"``, ...
    fmt : {"text", "latex", "html", "markdown", "frame"}, optional
        Output format; default from the suffix of ``file`` (``.tex``, ``.html``,
        ``.md``, ``.txt``, ``.csv``), else ``"text"``. ``"text"`` is statsmodels'
        rendering (``Summary.as_text``); ``"latex"`` a floating table ready to
        ``\input`` (see Notes); ``"html"`` a ``<table>`` with every cell
        escaped; ``"markdown"`` a pipe table; ``"frame"`` the table as a pandas
        DataFrame of strings (no header row for the dependent variable; the row of a
        term's standard errors is ``"<term> (std. error)"``, of its intervals
        ``"<term> (conf. int.)"``).
    all_terms : bool, default False
        List every candidate of every fit. By default only the always-in terms and
        the terms that at least one fit selected are listed.
    coef_map : dict or list, optional
        The term rows to show, in this order, with these labels (modelsummary's
        ``coef_map``): ``{"Intercept": "Constant", "Hits": "Hits (1986)"}``; terms not
        named are dropped. A list of terms keeps their names. Terms given the same
        label share a row when no fit has two of them (``{"Intercept": "Constant",
        "const": "Constant"}`` puts a baseline's ``const`` beside the private
        intercepts). An entry for the response renames it in the header and the
        notes. Not with ``labels``.
    labels : dict or callable, optional
        Display names of terms (and of the response), ``{"Hits": "Hits (1986)"}``
        (modelsummary's ``coef_rename``); terms not named keep their names and
        their place. A function of the name works too.
    statistic : {"std_error", "conf_int"} or None, default "std_error"
        What goes under each estimate, for the columns that release it: standard
        errors in parentheses, or ``conf_level`` confidence intervals in brackets
        (``res.bse``, ``res.conf_int()``). A private fit that releases none shows
        none (a note says so); None shows none for any column.
    conf_level : float, default 0.95
        Level of the intervals (``statistic="conf_int"``).
    dep_var : bool, default True
        A header row over the columns naming each column's dependent variable (its
        label), one heading over each run of columns that share it.
    privacy_rows : list of str, optional
        The accounting rows to show, in this order (modelsummary's ``gof_map``), from
        ``PRIVACY_ROWS``; default all (``eps (inference)``, the part of eps spent on
        private standard errors, only when a fit spent some); ``[]`` shows none.
    internal_names : bool, default False
        Show the package's method names (``top_r``) instead of the papers' (``top-R``).
    title : str, optional
        Title of the table (the LaTeX ``\caption``, the HTML ``<caption>``).
    label : str, optional
        LaTeX ``\label`` of the table (with ``title``), e.g. ``"tab:dp-fits"``.
    notes : str or list of str, optional
        Further notes, after the table's own (what the cells mean, the guarantees).
    digits : int or str, optional
        Coefficients with this many decimal places (an int), or with a format
        spec such as ``".3g"``; default about four significant digits.
    align : bool, default True
        LaTeX: numbers aligned on the decimal point (``dcolumn`` ``D`` columns);
        False: right-aligned ``r`` columns, without ``dcolumn``.
    file : str or os.PathLike, optional
        Also write the table to this file (``fmt="frame"``: as CSV).
    escape : bool, default True
        Escape the title, labels, model names and notes for LaTeX (``& % _ $ # { } ~ ^ \``)
        and HTML (``& < >``). False inserts them as written, for LaTeX math in labels.
    size : {"normalsize", "small", "footnotesize", "scriptsize"}, optional
        LaTeX: the table's font size. Default: the largest at which the table fits an
        ``article`` page (345 pt), judged from the widths of its cells.
    resize : bool, default False
        LaTeX: scale the table, notes included, to ``\linewidth`` (``\resizebox``; the
        preamble then needs ``graphicx`` too).
    abbreviate : bool, default True
        LaTeX: short words in the accounting rows (``obj.\ pert.``, ``approx.``,
        ``sel.\,+\,ref.``), each explained in a note under the table.

    Returns
    -------
    str or pandas.DataFrame
        The rendered table (a DataFrame with ``fmt="frame"``).

    Notes
    -----
    A cell holds the coefficient of the term in that fit (the DP coefficient for a
    private fit); an em dash (``---`` in LaTeX), never a minus sign, marks a
    candidate the fit did not select (its coefficient is 0 by selection);
    ``selected`` (``forced``) marks a selected (always-in) term of a fit made with
    ``refit=False``; an empty cell means the term is not in that fit's model. The
    rows below the coefficients are the privacy accounting of each fit: selection
    method, loss, refit mechanism, s, number of candidates p, n, total eps, its
    split between selection and refit, delta, the guarantee, whether the fit was
    seeded (``random_state`` given: private only while the seed is secret; a note
    under the table says so) and the exact search: ``all certified`` (every
    release of an exact method: a search that does not certify releases nothing)
    or ``not needed`` (methods without one). No count or route of the solves: they
    depend on the data. A baseline's guarantee is ``none`` and a note
    names its columns.

    The LaTeX table (:mod:`dpsubset.results.latex`) is a ``table`` float
    (``[htbp]``, centred) holding a ``threeparttable`` with the caption, the label,
    a ``tabular`` with ``booktabs`` rules, the dependent-variable header with
    ``\cmidrule``, decimal-aligned ``dcolumn`` columns, and the notes in a
    ``tablenotes`` block under it; eps and delta are the math symbols. The preamble
    needs::

        \usepackage{booktabs}
        \usepackage{threeparttable}
        \usepackage{dcolumn}

    (``align=False``: no ``dcolumn``). In TeX Live ``dcolumn`` is in the
    ``tools`` bundle (Debian ``texlive-latex-base``), ``booktabs`` in
    latex-recommended, ``threeparttable`` in latex-extra. Long column headings are set on two
    lines, and the font size is the largest at which the table fits an ``article`` page
    (``size=`` and ``resize=`` override it), so that a three-fit table with a non-private
    column and intervals fits the page.

    Examples
    --------
    >>> print(dps.summary_table([res1, res2], model_names=["eps = 1", "eps = 4"]))  # doctest: +SKIP
    >>> ols = smf.ols("Salary ~ Hits + CRuns", hitters).fit()                    # doctest: +SKIP
    >>> dps.summary_table({"eps = 1": res1, "eps = 4": res2, "OLS": ols},
    ...                   coef_map={"Hits": "Hits", "CRuns": "Career runs", "Salary": "Salary ($1000)"},
    ...                   title="Private fits", label="tab:fits", file="fits.tex")   # doctest: +SKIP
    """
    columns, from_dict = _check_results(results, model_names)
    if file is not None and not isinstance(file, (str, os.PathLike)):
        raise TypeError(f"file: expected a path (str); got {type(file).__name__}")
    if fmt is None:
        suffix = os.path.splitext(os.fspath(file))[1].lower() if file is not None else ""
        fmt = SUFFIX_FORMATS.get(suffix, "text")
    if fmt not in FORMATS:
        raise ValueError(f"fmt: expected one of {FORMATS}; got {fmt!r}")
    names = from_dict or _check_names(model_names, len(columns))
    if size is not None and size not in SIZES:
        raise ValueError(f"size: expected one of {tuple(SIZES)} or None (the largest that fits); got {size!r}")
    for arg, val in (("all_terms", all_terms), ("escape", escape), ("dep_var", dep_var),
                     ("internal_names", internal_names), ("align", align), ("resize", resize),
                     ("abbreviate", abbreviate)):
        if not isinstance(val, bool):
            raise TypeError(f"{arg}: expected True or False; got {val!r}")
    for arg, val in (("title", title), ("label", label)):
        if val is not None and not isinstance(val, str):
            raise TypeError(f"{arg}: expected a string; got {val!r}")
    if label is not None and not title:
        raise ValueError("label: a LaTeX \\label refers to a caption; give title= as well")
    if statistic is not None and statistic not in STATISTICS:
        raise ValueError(f"statistic: expected one of {STATISTICS} or None; got {statistic!r}")
    if isinstance(conf_level, bool) or not isinstance(conf_level, (int, float)) or not 0 < conf_level < 1:
        raise ValueError(f"conf_level: expected a number between 0 and 1, e.g. 0.95; got {conf_level!r}")
    extra_notes = _check_notes(notes)
    fmt_num = _formatter(digits)
    rows_shown = _check_privacy_rows(privacy_rows, columns, internal_names)
    responses = [c.response for c in columns if c.response]
    if coef_map is not None:
        if labels is not None:
            raise TypeError("coef_map: give coef_map (rows, order and names) or labels (names only), not both")
        terms, shown = _check_coef_map(coef_map, columns, responses)
    else:
        plain = _rows(columns, all_terms)
        shown = _check_labels(labels, plain, responses)
        terms = [(shown.get(t, t), [t]) for t in plain]
    heads = [shown.get(c.response, c.response) for c in columns]
    rows = _body(columns, terms, fmt_num, statistic, conf_level, rows_shown, internal_names)
    if fmt == "frame":
        # a row of standard errors is named after its term, so that the index stays unique
        index, term = [], None
        for kind, stub, _ in rows:
            term = stub if kind == "coef" else term
            index.append(f"{term} ({_STAT_STUBS[statistic]})" if kind == "stat" else stub)
        frame = pd.DataFrame([cells for _, _, cells in rows], index=index, columns=names, dtype=object)
        if file is not None:
            frame.to_csv(file)
        return frame
    groups = _groups(heads) if dep_var and any(heads) else None
    if fmt == "latex":
        user = _latex_escape if escape else str
        own = _notes(columns, names, heads, rows, statistic, conf_level, _latex_own, user)
        out = render_latex(rows, names, groups=groups, title=title, label=label,
                           notes=own + [user(n) for n in extra_notes], escape=escape, align=align,
                           not_selected=NOT_SELECTED, size=size, resize=resize, abbreviate=abbreviate)
    else:
        table_notes = _notes(columns, names, heads, rows, statistic, conf_level, str, str) + extra_notes
        if fmt == "markdown":
            out = _markdown(rows, names, groups, title, table_notes)
        elif fmt == "html":
            out = _html(rows, names, groups, title, table_notes, escape)
        else:
            out = _text(rows, names, groups, title, table_notes)
    if file is not None:
        with open(file, "w", encoding="utf-8") as fh:
            fh.write(out)
    return out


def _spread(groups):
    """The dependent-variable heading of each column (repeated over its run)."""
    return [h for h, span in groups for _ in range(span)]


def _markdown(rows, names, groups, title, notes):
    def esc(x):
        return str(x).replace("|", "\\|")

    lines = []
    if title:
        lines += [f"**{esc(title)}**", ""]
    lines.append("| " + " | ".join([""] + [esc(c) for c in names]) + " |")
    lines.append("|:---|" + "---:|" * len(names))
    if groups:   # Markdown has one header row: the dependent variable is the first body row
        lines.append("| " + " | ".join(["*Dependent variable*"] + [esc(h) for h in _spread(groups)]) + " |")
    for kind, stub, cells in rows:
        stub = f"*{esc(stub)}*" if kind == "privacy" else esc(stub)
        lines.append("| " + " | ".join([stub] + [esc(v) for v in cells]) + " |")
    lines.append("")
    lines += [esc(n) + "  " for n in notes]
    return "\n".join(lines).rstrip() + "\n"


# Stubs of the privacy rows in HTML (the symbols).
_HTML_STUBS = {"eps": "\u03b5", "eps (select + refit)": "\u03b5 (select + refit)",
               "eps (inference)": "\u03b5 (inference)", "delta": "\u03b4"}


def _html(rows, names, groups, title, notes, escape):
    esc = (lambda x: html.escape(str(x), quote=False)) if escape else str
    k = len(names)
    out = ['<table class="dpsubset-summary">']
    if title:
        out.append(f"<caption>{esc(title)}</caption>")
    out.append("<thead>")
    if groups:
        out.append('<tr class="dep-var"><th></th>' + "".join(
            f'<th colspan="{span}" style="text-align:center">{esc(h)}</th>' for h, span in groups) + "</tr>")
    out.append("<tr><th></th>" + "".join(f'<th style="text-align:center">{esc(c)}</th>' for c in names)
               + "</tr></thead>")
    for part in ("terms", "privacy"):
        body = [r for r in rows if (r[0] == "privacy") == (part == "privacy")]
        if not body:
            continue
        out.append(f'<tbody class="{part}">')
        for kind, stub, cells in body:
            name = html.escape(_HTML_STUBS.get(stub, stub), quote=False) if kind == "privacy" else esc(stub)
            out.append(f'<tr class="{kind}"><th style="text-align:left">{name}</th>'
                       + "".join(f'<td style="text-align:right">{html.escape(str(v), quote=False)}</td>'
                                 for v in cells) + "</tr>")
        out.append("</tbody>")
    if notes:
        out.append("<tfoot>" + "".join(f'<tr><td colspan="{k + 1}">{esc(n)}</td></tr>' for n in notes)
                   + "</tfoot>")
    out.append("</table>")
    return "\n".join(out) + "\n"


def _text(rows, names, groups, title, notes):
    from statsmodels.iolib.table import SimpleTable
    from statsmodels.iolib.tableformatting import fmt_params

    data = [list(cells) for _, _, cells in rows]
    stubs = [stub for _, stub, _ in rows]
    if groups:   # one header row in SimpleTable: the dependent variable is the first data row
        data.insert(0, _spread(groups))
        stubs.insert(0, "Dep. variable")
    table = SimpleTable(data, names, stubs, title=title or "",
                        txt_fmt=dict(fmt_params, data_fmts=["%s"]))
    # rules under the dependent variable and between the coefficients and the privacy rows
    # (row 0 of the table is the header)
    first_privacy = next((i for i, r in enumerate(rows) if r[0] == "privacy"), None)
    offset = 1 if groups else 0
    if groups:
        table[1].dec_below = "header_dec_below"
    if first_privacy:
        table[first_privacy + offset].dec_below = "header_dec_below"
    smry = DPSummary()
    smry.tables.append(table)
    smry.add_extra_txt(notes)
    return smry.as_text()
