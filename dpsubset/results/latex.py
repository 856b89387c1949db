r"""The LaTeX rendering of :func:`dpsubset.summary_table` (and of ``summary().as_latex()``).

A floating ``table`` holding a ``threeparttable``: caption and label, a ``tabular``
with ``booktabs`` rules, a dependent-variable header over the fit columns
(``\cmidrule`` under each run of columns with the same response, as stargazer and
modelsummary draw it), and the notes in a ``tablenotes`` block. The fit columns
are ``dcolumn`` ``D`` columns (Carlisle's ``dcolumn`` package, in TeX Live's
``tools`` bundle: ``texlive-latex-base``), so that numbers line up on the decimal
point as with stargazer's ``align=TRUE``; text cells (headers, dashes, method
names) are centred with ``\multicolumn{1}{c}{...}``. siunitx ``S`` columns would
do the same but siunitx is not in the packages this project installs.
"""
from __future__ import annotations

import re

from .summary import _latex_escape

__all__ = ["render_latex", "LATEX_PACKAGES", "LATEX_PACKAGES_PLAIN"]

#: LaTeX packages the table needs in the preamble (``align=True``, the default).
LATEX_PACKAGES = ("booktabs", "threeparttable", "dcolumn")
#: ... and with ``align=False`` (right-aligned ``r`` columns).
LATEX_PACKAGES_PLAIN = ("booktabs", "threeparttable")

# Stubs of the privacy rows in LaTeX (math for the symbols).
_STUBS = {"eps": r"$\varepsilon$", "eps (select + refit)": r"$\varepsilon$ (select + refit)",
          "eps (inference)": r"$\varepsilon$ (inference)",
          "delta": r"$\delta$", "s": "$s$", "p": "$p$", "N": "$N$"}
# Short names of the refit mechanisms (a three-fit table must fit a page), with the note.
_SHORT = {"objective perturbation": r"obj.\ pert."}
_SHORT_NOTE = r"obj.\ pert.: objective perturbation."
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _math_number(text):
    """A number as LaTeX math (no ``$``): ``-`` is a minus sign in math, e-notation a power of ten."""
    sign = "-" if text.startswith("-") else ""
    text = text.lstrip("+-")
    if "e" in text.lower():
        mant, exp = text.lower().split("e")
        power = f"10^{{{int(exp)}}}"
        return f"{sign}{power}" if float(mant) == 1 else f"{sign}{mant}\\times {power}"
    return sign + text


def _text_number(text):
    """A number in text mode: a true minus sign ``$-$``, a power of ten in math."""
    sign = "$-$" if text.startswith("-") else ""
    body = _math_number(text.lstrip("+-"))
    return sign + (f"${body}$" if "10^" in body else body)


def _number_cell(text, align):
    """A number or a number in parentheses (a standard error) as LaTeX: math for the
    ``D`` columns (``align``), text otherwise; None when ``text`` is not one."""
    inner, wrap = text, ("", "")
    if len(text) > 2 and text[0] == "(" and text[-1] == ")":
        inner, wrap = text[1:-1], ("(", ")")
    if not _NUMBER.fullmatch(inner):
        return None
    return wrap[0] + (_math_number(inner) if align else _text_number(inner)) + wrap[1]


def _interval_text(text):
    """``[lo, hi]`` with true minus signs (text mode), or None when ``text`` is not an interval."""
    m = re.fullmatch(r"\[([^,\]]+), ([^,\]]+)\]", text)
    if not m or not all(_NUMBER.fullmatch(x.strip()) for x in m.groups()):
        return None
    return "[" + ", ".join(f"${_math_number(x.strip())}$" for x in m.groups()) + "]"


def _cell(value, align, not_selected, privacy):
    """One body cell. Returns (latex, used the short refit name)."""
    v = str(value)
    if v == "":
        return "", False
    short = privacy and v in _SHORT
    if v == not_selected:
        text = "---"
    elif short:
        text = _SHORT[v]
    else:
        number = _number_cell(v.strip(), align)
        if number is not None:
            return number, False
        text = _interval_text(v.strip()) or _latex_escape(v)
    return (rf"\multicolumn{{1}}{{c}}{{{text}}}" if align else text), short


def _header(text, align):
    return rf"\multicolumn{{1}}{{c}}{{{text}}}" if align else text


def render_latex(rows, columns, *, groups=None, title=None, label=None, notes=(), escape=True,
                 align=True, not_selected="\u2014"):
    r"""The table as LaTeX source, ready to ``\input``.

    Parameters
    ----------
    rows : list of (kind, stub, cells)
        ``kind`` is ``"coef"`` (a term's estimates), ``"stat"`` (the standard errors
        or intervals under them; no stub), or ``"privacy"`` (the accounting rows,
        whose stub is one of the package's row names).
    columns : list of str
        Column headings (repeats allowed).
    groups : list of (str, int), optional
        The dependent-variable header: runs of adjacent columns sharing a heading.
    title, label : str, optional
        Caption and ``\label``.
    notes : list of str
        LaTeX already (the caller escapes its own text).
    escape : bool
        Escape the title, the stubs of the terms, the column headings and groups.
    align : bool
        ``D`` columns aligned on the decimal point (``dcolumn``), else ``r`` columns.
    not_selected : str
        The cell value of a candidate not selected (written as an em dash, ``---``).
    """
    esc = _latex_escape if escape else str
    k = len(columns)
    packages = LATEX_PACKAGES if align else LATEX_PACKAGES_PLAIN
    colspec = r"D{.}{.}{-1}" if align else "r"
    out = [f"% needs in the preamble: \\usepackage{{{','.join(packages)}}}",
           r"\begin{table}[htbp]", r"\centering", r"\begin{threeparttable}"]
    if title:
        out.append(rf"\caption{{{esc(title)}}}")
    if label:
        out.append(rf"\label{{{label}}}")
    out += [rf"\begin{{tabular}}{{@{{}}l*{{{k}}}{{{colspec}}}@{{}}}}", r"\toprule"]
    if groups:
        cells, rules, start = [], [], 2
        for text, span in groups:
            cells.append(rf"\multicolumn{{{span}}}{{c}}{{{esc(text)}}}" if text else
                         (" & ".join([""] * span) if span > 1 else ""))
            if text:
                rules.append(rf"\cmidrule(lr){{{start}-{start + span - 1}}}")
            start += span
        out.append(" & ".join([""] + cells) + r" \\")
        if rules:
            out.append(" ".join(rules))
    out += [" & ".join([""] + [_header(esc(str(c)), align) for c in columns]) + r" \\", r"\midrule"]
    short_used, previous = False, None
    for kind, stub, cells in rows:
        if kind == "privacy" and previous not in (None, "privacy"):
            out.append(r"\midrule")
        latex = []
        for v in cells:
            text, short = _cell(v, align, not_selected, kind == "privacy")
            latex.append(text)
            short_used |= short
        if kind == "privacy":
            stub = _STUBS.get(stub, _latex_escape(str(stub)))
        else:
            stub = "" if kind == "stat" else esc(str(stub))
        out.append(" & ".join([stub] + latex) + r" \\")
        previous = kind
    out += [r"\bottomrule", r"\end{tabular}"]
    notes = list(notes) + ([_SHORT_NOTE] if short_used else [])
    if notes:
        out += [r"\begin{tablenotes}[flushleft]", r"\footnotesize"]
        out += [rf"\item[] {n}" for n in notes]
        out.append(r"\end{tablenotes}")
    out += [r"\end{threeparttable}", r"\end{table}"]
    return "\n".join(out) + "\n"
