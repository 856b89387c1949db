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

__all__ = ["render_latex", "LATEX_PACKAGES", "LATEX_PACKAGES_PLAIN", "SIZES", "TEXTWIDTH_PT"]

#: LaTeX packages the table needs in the preamble (``align=True``, the default).
LATEX_PACKAGES = ("booktabs", "threeparttable", "dcolumn")
#: ... and with ``align=False`` (right-aligned ``r`` columns).
LATEX_PACKAGES_PLAIN = ("booktabs", "threeparttable")

# Stubs of the privacy rows in LaTeX (math for the symbols).
_STUBS = {"eps": r"$\varepsilon$", "eps (select + refit)": r"$\varepsilon$ (select + refit)",
          "eps (inference)": r"$\varepsilon$ (inference)",
          "delta": r"$\delta$", "s": "$s$", "p": "$p$", "N": "$N$"}
# Short words of the accounting rows (a three-fit table must fit a page), each with its
# note under the table; ``abbreviate=False`` writes them out.
_SHORT = {"objective perturbation": (r"obj.\ pert.", r"obj.\ pert.: objective perturbation."),
          "subsample and aggregate": (r"samp.\ agg.", r"samp.\ agg.: subsample and aggregate."),
          "approximate": (r"approx.", r"approx.: approximate, $(\varepsilon, \delta)$-DP.")}
_SHORT_STUBS = {"eps (select + refit)": (r"$\varepsilon$ (sel.\,+\,ref.)",
                                         r"sel.\,+\,ref.: the selection's and the refit's parts of $\varepsilon$.")}
#: Font sizes of :func:`render_latex` (``size=``), with their scale relative to the text.
SIZES = {"normalsize": 1.0, "small": 0.9, "footnotesize": 0.8, "scriptsize": 0.7}
#: The width the table must fit: an ``article`` page's \textwidth at 10 pt (345 pt).
TEXTWIDTH_PT = 345.0
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


def _interval_text(text, stack=False):
    """``[lo, hi]`` with true minus signs (text mode), or None when ``text`` is not an interval.

    ``stack``: the two ends on two lines (``[lo,`` over ``hi]``), for a table too wide for the
    page at the smallest font even so.
    """
    m = re.fullmatch(r"\[([^,\]]+), ([^,\]]+)\]", text)
    if not m or not all(_NUMBER.fullmatch(x.strip()) for x in m.groups()):
        return None
    lo, hi = (f"${_math_number(x.strip())}$" for x in m.groups())
    if stack:
        return rf"\begin{{tabular}}[t]{{@{{}}c@{{}}}}[{lo},\\{hi}]\end{{tabular}}"
    return f"[{lo}, {hi}]"


def _cell(value, align, not_selected, privacy, abbreviate=True, stack=False):
    """One body cell (``stack``: an interval on two lines). Returns (latex, the note of the short
    word used, or None)."""
    v = str(value)
    if v == "":
        return "", None
    short = privacy and abbreviate and v in _SHORT
    if v == not_selected:
        text = "---"
    elif short:
        text, short = _SHORT[v]
    else:
        number = _number_cell(v.strip(), align)
        if number is not None:
            return number, None
        text = _interval_text(v.strip(), stack) or _latex_escape(v)
        short = None
    return (rf"\multicolumn{{1}}{{c}}{{{text}}}" if align else text), short


def _header(text, align):
    """A column heading; a long one on two lines (a narrow column, as papers set them)."""
    words = text.split(" ")
    if len(text) > 12 and len(words) > 1:
        cut = min(range(1, len(words)), key=lambda i: abs(len(" ".join(words[:i])) - len(text) / 2))
        text = (r"\begin{tabular}[b]{@{}c@{}}" + " ".join(words[:cut]) + r"\\" + " ".join(words[cut:])
                + r"\end{tabular}")
    return rf"\multicolumn{{1}}{{c}}{{{text}}}" if align else text


# Widths of Computer Modern at 10 pt, in pt: enough to choose a font size that fits.
_WIDE = {"\\times": "\u00d7", "\\varepsilon": "e", "\\delta": "d", "\\,": " ", "\\ ": " ",
         "---": "\u2014"}


def _text_width(latex):
    """About how wide ``latex`` (one cell) sets at 10 pt, in pt (an overestimate by design)."""
    t = re.sub(r"\\multicolumn\{\d+\}\{\w+\}\{(.*)\}$", r"\1", latex)
    t = re.sub(r"\\begin\{tabular\}\[[bt]\]\{@\{\}c@\{\}\}(.*)\\end\{tabular\}",
               lambda m: max(m.group(1).split("\\\\"), key=len), t)
    for k, v in _WIDE.items():
        t = t.replace(k, v)
    t = re.sub(r"\^\{([^}]*)\}", lambda m: "^" * len(m.group(1)), t)     # exponents: small
    t = re.sub(r"[${}]", "", t)
    w = 0.0
    for ch in t:
        # a minus in math, and \times with its spaces, are wider than a digit
        w += (3.6 if ch == "^" else 3.3 if ch in " .,:;()[]'" else 5.0 if ch.isdigit() or ch.islower()
              else 7.8 if ch in "-+=\u2014" else 12.0 if ch == "\u00d7" else 7.5)
    return w


def _text_widths(lines, k):
    """About how wide each column's text sets at 10 pt (pt), from the tabular's ``lines``."""
    cols = [0.0] * (k + 1)
    left, right = [0.0] * (k + 1), [0.0] * (k + 1)   # a D column aligns its numbers on the point
    for line in lines:
        if " & " not in line or re.search(r"\\multicolumn\{[2-9]", line):
            continue        # rules, and the dependent-variable header (it spans the columns)
        body = line.rstrip()
        body = body[:-2] if body.endswith("\\\\") else body
        for j, cell in enumerate(body.split(" & ")[:k + 1]):
            cell = cell.strip()
            if j and cell and not cell.startswith("\\multicolumn"):
                a, _, b = cell.partition(".")
                left[j] = max(left[j], _text_width(a))
                right[j] = max(right[j], _text_width("." + b) if b else 0.0)
            else:
                cols[j] = max(cols[j], _text_width(cell))
    return [max(c, a + b) for c, a, b in zip(cols, left, right)]


def _fit_size(lines, k):
    """The largest font size at which the tabular (body ``lines``) fits the page, or None."""
    cols = _text_widths(lines, k)
    for name, scale in SIZES.items():
        # the text scales with the font; \tabcolsep (6 pt each side of a fit column) does not
        # (the estimate runs up to about 13 % short on real tables: a margin of 15 %)
        if 1.15 * sum(cols) * scale + 2 * 6.0 * k <= TEXTWIDTH_PT:
            return name
    return None


def render_latex(rows, columns, *, groups=None, title=None, label=None, notes=(), escape=True,
                 align=True, not_selected="\u2014", size=None, resize=False, abbreviate=True):
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
    size : {"normalsize", "small", "footnotesize", "scriptsize"}, optional
        Font size of the table; default the largest at which it fits an ``article``
        page (:data:`TEXTWIDTH_PT`), from an estimate of its width. Where it does not fit
        even at the smallest size, each interval is set on two lines (``[lo,`` over ``hi]``).
    resize : bool
        Scale the whole table to the line width (``\resizebox``; needs ``graphicx``).
    abbreviate : bool
        Short words in the accounting rows (``obj.\ pert.``), each explained in a note.
    """
    esc = _latex_escape if escape else str
    k = len(columns)
    packages = LATEX_PACKAGES if align else LATEX_PACKAGES_PLAIN
    colspec = r"D{.}{.}{-1}" if align else "r"
    if resize:
        packages = packages + ("graphicx",)
    head = [f"% needs in the preamble: \\usepackage{{{','.join(packages)}}}",
            r"\begin{table}[htbp]", r"\centering"]
    out = [r"\begin{threeparttable}"]
    if title:
        out.append(rf"\caption{{{esc(title)}}}")
    if label:
        out.append(rf"\label{{{label}}}")
    out += [rf"\begin{{tabular}}{{@{{}}l*{{{k}}}{{{colspec}}}@{{}}}}", r"\toprule"]
    first = len(out)
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
    body, short_notes = _body(rows, align, not_selected, abbreviate, esc, stack=False)
    if size is None:
        size = "normalsize" if resize else _fit_size(out[first:] + body, k)
        if size is None:   # too wide even at the smallest font: each interval on two lines
            body, short_notes = _body(rows, align, not_selected, abbreviate, esc, stack=True)
            size = _fit_size(out[first:] + body, k) or "scriptsize"
    out += body
    out += [r"\bottomrule", r"\end{tabular}"]
    notes = list(notes) + ([" ".join(short_notes)] if short_notes else [])
    if notes:
        out += [r"\begin{tablenotes}[flushleft]", r"\footnotesize" if SIZES[size] >= 0.8 else r"\scriptsize"]
        out += [rf"\item[] {n}" for n in notes]
        out.append(r"\end{tablenotes}")
    out.append(r"\end{threeparttable}")
    if resize:   # the threeparttable scaled to the line as one box, its notes with it
        out = [r"\resizebox{\linewidth}{!}{%"] + out + ["}"]
    size_line = [] if size == "normalsize" else [rf"\{size}"]
    return "\n".join(head + size_line + out + [r"\end{table}"]) + "\n"


def _body(rows, align, not_selected, abbreviate, esc, stack):
    """The tabular's body lines and the notes of the short words used (``stack``: intervals on
    two lines)."""
    out, short_notes, previous = [], [], None
    for kind, stub, cells in rows:
        if kind == "privacy" and previous not in (None, "privacy"):
            out.append(r"\midrule")
        latex = []
        for v in cells:
            text, short = _cell(v, align, not_selected, kind == "privacy", abbreviate, stack)
            latex.append(text)
            if short and short not in short_notes:
                short_notes.append(short)
        if kind == "privacy" and abbreviate and stub in _SHORT_STUBS:
            stub, short = _SHORT_STUBS[stub]
            if short not in short_notes:
                short_notes.append(short)
        elif kind == "privacy":
            stub = _STUBS.get(stub, _latex_escape(str(stub)))
        else:
            stub = "" if kind == "stat" else esc(str(stub))
        out.append(" & ".join([stub] + latex) + r" \\")
        previous = kind
    return out, short_notes
