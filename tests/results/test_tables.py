"""summary_table as a paper table (issue 28, items 8 and 9): column titles, coef_map, the
dependent-variable header, non-private baselines, standard errors, decimal alignment,
no internal names; every LaTeX variant compiled with pdflatex and checked for overfull boxes."""
import re
import shutil
import subprocess
import warnings

import numpy as np
import pandas as pd
import pytest

import dpsubset as dps
from dpsubset.results.latex import LATEX_PACKAGES
from dpsubset.results.results import DPSubsetResults


@pytest.fixture(scope="module")
def hitters():
    df = dps.load_hitters().dropna(subset=["Salary"]).drop(columns=["Player"])
    xb = dps.hitters_bounds()
    yb = xb.pop("Salary")
    return df, dps.Bounds(x=xb, y=yb)


@pytest.fixture(scope="module")
def fits(hitters):
    df, bounds = hitters
    a = dps.dp_best_subset("Salary ~ .", df, eps=2.0, s=5, bounds=bounds, random_state=2026)
    b = dps.dp_best_subset("Salary ~ .", df, eps=16.0, s=3, bounds=bounds, random_state=7)
    return a, b


@pytest.fixture(scope="module")
def ols(hitters, fits):
    import statsmodels.formula.api as smf
    df, _ = hitters
    return smf.ols("Salary ~ CAtBat + PutOuts + Assists + Errors + NewLeague", df).fit()


# ---------------------------------------------------------------- compiling

DOC = r"""\documentclass{article}
\usepackage{%s}
\begin{document}
Text before the table.
\input{table.tex}
\end{document}
"""


def compile_table(tex, tmp_path, packages=LATEX_PACKAGES, png=False):
    """pdflatex on a document holding the table; returns the log (fails on errors and overfull boxes)."""
    exe = shutil.which("pdflatex")
    if exe is None:
        import os
        if os.environ.get("DPSUBSET_REQUIRE_LATEX"):
            pytest.fail("pdflatex not found but DPSUBSET_REQUIRE_LATEX is set")
        pytest.skip("pdflatex not installed (set DPSUBSET_REQUIRE_LATEX to make this a failure)")
    (tmp_path / "table.tex").write_text(tex)
    (tmp_path / "doc.tex").write_text(DOC % ",".join(packages))
    proc = subprocess.run([exe, "-interaction=nonstopmode", "-halt-on-error", "doc.tex"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    log = (tmp_path / "doc.log").read_text(errors="replace")
    assert proc.returncode == 0, log[-3000:]
    assert "Overfull" not in log and "\n! " not in log, log[-3000:]
    assert (tmp_path / "doc.pdf").stat().st_size > 1000
    if png and shutil.which("pdftoppm"):   # for a look at the table: tmp_path/doc-1.png
        subprocess.run(["pdftoppm", "-png", "-r", "110", "-f", "1", "-l", "1", "doc.pdf", "doc"],
                       cwd=tmp_path, check=False, timeout=60)
    return log


def test_summary_as_latex_is_the_paper_table_and_fits_the_page(fits, tmp_path):
    """Item 8: no commented caption, no overfull box (statsmodels' rendering ran 49.7 pt over)."""
    tex = fits[0].summary().as_latex()
    assert "%\\caption" not in tex and r"\caption{Differentially private best subset selection}" in tex
    assert r"\begin{threeparttable}" in tex and r"\toprule" in tex
    assert tex == dps.summary_table([fits[0]], ["DP coef"], "latex",
                                    title="Differentially private best subset selection")
    compile_table(tex, tmp_path)
    # with a title of the user's
    assert r"\caption{My fit}" in fits[0].summary(title="My fit").as_latex()


@pytest.mark.parametrize("align", [True, False])
def test_every_latex_variant_compiles_without_overfull_boxes(fits, ols, tmp_path, align):
    tables = [
        dps.summary_table(list(fits), fmt="latex", align=align),
        dps.summary_table({"eps = 2": fits[0], "eps = 16": fits[1], "OLS": ols}, fmt="latex",
                          title="Private and non-private fits of Salary", label="tab:x", align=align,
                          coef_map={"Intercept": "Constant", "CAtBat": "Career at bats",
                                    "NewLeague[T.N]": "New league: N", "Salary": "Salary (\\$1000)"},
                          escape=False),
        dps.summary_table(list(fits) + [ols], fmt="latex", statistic="conf_int", align=align, digits=2),
        dps.summary_table(list(fits), fmt="latex", all_terms=True, align=align, internal_names=True),
    ]
    packages = LATEX_PACKAGES if align else tuple(p for p in LATEX_PACKAGES if p != "dcolumn")
    for i, tex in enumerate(tables):
        sub = tmp_path / str(i)
        sub.mkdir()
        compile_table(tex, sub, packages, png=(i == 1))


# ---------------------------------------------------------------- item 9

def test_columns_may_share_a_title_or_be_named_by_a_dict(fits):
    frame = dps.summary_table(list(fits), ["DP", "DP"], fmt="frame")
    assert list(frame.columns) == ["DP", "DP"]
    text = dps.summary_table({"eps = 2": fits[0], "eps = 16": fits[1]})
    header = next(ln for ln in text.splitlines() if "eps = 2" in ln)
    assert header.index("eps = 2") < header.index("eps = 16")
    with pytest.raises(TypeError, match="model_names"):
        dps.summary_table({"a": fits[0]}, model_names=["b"])


def test_coef_map_reorders_renames_and_drops_rows(fits):
    a, b = fits
    cmap = {"NewLeague[T.N]": "New league", "Intercept": "Constant", "CAtBat": "Career at bats"}
    frame = dps.summary_table(list(fits), fmt="frame", coef_map=cmap)
    terms = [i for i in frame.index if i not in dps.results.tables.PRIVACY_ROWS]
    assert terms == ["New league", "Constant", "Career at bats"]
    assert frame.loc["Constant", "(1)"] == dps.summary_table([a], fmt="frame").loc["Intercept", "(1)"]
    # a list keeps the names; a term not selected by a fit shows the em dash
    frame = dps.summary_table(list(fits), fmt="frame", coef_map=["CAtBat", "Intercept"])
    assert list(frame.index[:2]) == ["CAtBat", "Intercept"]
    assert frame.loc["CAtBat", "(2)"] == ("\u2014" if "CAtBat" not in b.support else frame.loc["CAtBat", "(2)"])
    with pytest.raises(ValueError, match=r"coef_map: \['Hitz'\] are not terms"):
        dps.summary_table(list(fits), coef_map={"Hitz": "Hits"})
    with pytest.raises(TypeError, match="coef_map"):
        dps.summary_table(list(fits), coef_map={"Hits": "H"}, labels={"Hits": "H"})
    with pytest.raises(ValueError, match="one fit has two of them"):
        dps.summary_table(list(fits), coef_map={"Intercept": "x", "CAtBat": "x"})


def test_dependent_variable_header_per_column(fits, hitters):
    df, bounds = hitters
    logsal = df.assign(LogSalary=np.log(df["Salary"]))
    other = dps.dp_best_subset("LogSalary ~ Hits + CRuns + Walks", logsal, eps=4.0, s=1,
                               bounds=dps.Bounds(x=dps.hitters_bounds(), y=(3, 9)), random_state=1)
    tex = dps.summary_table(list(fits) + [other], fmt="latex",
                            labels={"Salary": "Salary (thousands)", "LogSalary": "log Salary"})
    assert r"\multicolumn{2}{c}{Salary (thousands)} & \multicolumn{1}{c}{log Salary} \\" in tex
    assert r"\cmidrule(lr){2-3} \cmidrule(lr){4-4}" in tex
    html = dps.summary_table(list(fits) + [other], fmt="html")
    assert '<th colspan="2" style="text-align:center">Salary</th>' in html
    text = dps.summary_table(list(fits) + [other])
    row = next(ln for ln in text.splitlines() if ln.startswith("Dep. variable"))
    assert row.split()[2:] == ["Salary", "Salary", "LogSalary"]
    # the notes name each response with its label and its columns
    md = dps.summary_table(list(fits) + [other], fmt="markdown", labels={"LogSalary": "log Salary"})
    assert "Dependent variables: Salary in (1), (2); log Salary in (3)." in md
    assert "| *Dependent variable* | Salary | Salary | log Salary |" in md
    assert "Dep. variable" not in dps.summary_table(list(fits), dep_var=False)


def test_notes_name_the_response_with_its_label(fits):
    tex = dps.summary_table(list(fits), fmt="latex", labels={"Salary": "Salary (1987, \\$1000)"},
                            escape=False)
    assert r"Dependent variable: Salary (1987, \$1000)." in tex
    text = dps.summary_table(list(fits), coef_map={"Intercept": "Constant", "Salary": "Annual salary"})
    assert "Dependent variable: Annual salary." in text.replace("\n    ", " ")
    # what the em dash and an empty cell mean is said only when the table has one
    one = dps.summary_table([fits[0]])
    assert "not selected" not in one and "not in that model" not in one
    assert "not selected (coefficient 0)" in dps.summary_table(list(fits)).replace("\n    ", " ")


def test_a_non_private_baseline_beside_the_private_fits(fits, ols):
    out = dps.summary_table({"eps = 2": fits[0], "eps = 16": fits[1], "OLS": ols}, fmt="frame")
    assert out.loc["CAtBat", "OLS"] == dps.summary_table([ols], fmt="frame").loc["CAtBat", "(1)"]
    assert float(out.loc["CAtBat", "OLS"]) == pytest.approx(ols.params["CAtBat"], rel=1e-3)
    # its standard errors, in parentheses in the row under the estimate
    i = list(out.index).index("CAtBat")
    assert out.index[i + 1] == "CAtBat (std. error)" and out.index.is_unique
    assert out.iloc[i + 1]["OLS"] == f"({dps.results.summary._num(ols.bse['CAtBat'])})"
    assert out.iloc[i + 1]["eps = 2"] == ""    # no standard error is released for a private fit
    tex = dps.summary_table([fits[0], ols], fmt="latex")
    assert "\n & & (" in tex.replace("  ", " ")    # in the table itself the row has no stub
    assert out.loc["Guarantee", "OLS"] == "none" and out.loc["N", "OLS"] == "263"
    assert out.loc["Method", "OLS"] == "OLS"
    text = dps.summary_table({"eps = 2": fits[0], "OLS": ols}).replace("\n    ", " ")
    assert "NOT private: OLS, fitted on the same data without privacy" in text
    assert "Under the estimates: standard errors in parentheses." in text
    assert "No standard errors for the private fits: none is released privately." in text
    # intervals instead of standard errors
    ci = dps.summary_table([fits[0], ols], fmt="frame", statistic="conf_int", conf_level=0.9)
    lo, hi = ols.conf_int(alpha=0.1).loc["CAtBat"]
    i = list(ci.index).index("CAtBat")
    assert ci.index[i + 1] == "CAtBat (conf. int.)"
    assert ci.iloc[i + 1]["(2)"] == f"[{dps.results.summary._num(lo)}, {dps.results.summary._num(hi)}]"
    text = dps.summary_table([fits[0], ols], statistic="conf_int", conf_level=0.9).replace("\n    ", " ")
    assert "90% confidence intervals in brackets" in text
    assert "No confidence intervals for the private fits: none is released privately." in text
    assert "CAtBat (std. error)" not in dps.summary_table([fits[0], ols], fmt="frame", statistic=None).index
    # statsmodels on numpy arrays: 'const', x1, ... (standard errors matched by position);
    # coef_map puts its const on the private fits' Intercept row
    import statsmodels.api as sm
    frame = ols.model.data.frame
    X = sm.add_constant(frame[["CAtBat", "PutOuts"]].to_numpy())
    bare = sm.OLS(frame["Salary"].to_numpy(), X).fit()
    merged = dps.summary_table([fits[0], bare], fmt="frame",
                               coef_map={"Intercept": "Constant", "const": "Constant", "x1": "CAtBat (OLS)"})
    assert merged.loc["Constant", "(1)"] == dps.results.summary._num(fits[0].params["Intercept"])
    assert merged.loc["Constant", "(2)"] == dps.results.summary._num(bare.params[0])
    assert merged.loc["Constant (std. error)", "(2)"] == f"({dps.results.summary._num(bare.bse[0])})"
    assert merged.loc["CAtBat (OLS) (std. error)", "(2)"] == f"({dps.results.summary._num(bare.bse[1])})"
    # the exact non-private best subset is a baseline too
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        best = dps.best_subset_nonprivate("Salary ~ .", ols.model.data.frame, s=5)
    frame = dps.summary_table([fits[0], best], fmt="frame")
    assert frame.loc["Guarantee", "(2)"] == "none"
    assert all(frame.loc[t, "(2)"] not in ("", "\u2014") for t in best.support)


def test_private_standard_errors_are_shown_when_a_fit_releases_them(fits, monkeypatch):
    """summary_table reads res.bse / res.conf_int(): where a private fit releases them (issue 26),
    they appear under its estimates; where it raises NotReleasedError, none is shown."""
    a, b = fits
    se = pd.Series(0.5, index=a.terms)

    def bse(self):
        if self is not a:
            raise dps.NotReleasedError("not released")
        return se
    monkeypatch.setattr(DPSubsetResults, "bse", property(bse), raising=False)
    frame = dps.summary_table([a, b], fmt="frame")
    i = list(frame.index).index("Intercept")
    assert frame.index[i + 1] == "Intercept (std. error)" and frame.iloc[i + 1].tolist() == ["(0.5000)", ""]
    text = dps.summary_table([a, b]).replace("\n    ", " ")
    assert "No standard errors for (2): none is released privately." in text


def test_no_internal_names_unless_asked(fits):
    for fmt in ("text", "latex", "html", "markdown"):
        out = dps.summary_table(list(fits), fmt=fmt)
        assert "top_r" not in out and "top\\_r" not in out and "closed" not in out, fmt
        assert "top-R" in out
    assert "top_r" in dps.summary_table(list(fits), internal_names=True)


def test_privacy_rows_choose_and_order_the_accounting(fits):
    frame = dps.summary_table(list(fits), fmt="frame", privacy_rows=["eps", "Guarantee"])
    assert list(frame.index[-2:]) == ["eps", "Guarantee"] and "Method" not in frame.index
    assert "Method" not in dps.summary_table(list(fits), fmt="frame", privacy_rows=[]).index
    with pytest.raises(ValueError, match="privacy_rows"):
        dps.summary_table(list(fits), privacy_rows=["AIC"])


def test_latex_numbers_are_aligned_on_the_decimal_point(fits, ols):
    tex = dps.summary_table([fits[0], fits[1], ols], fmt="latex", digits=2)
    assert r"\begin{tabular}{@{}l*{3}{D{.}{.}{-1}}@{}}" in tex
    body = tex[tex.index(r"\midrule"):tex.index(r"\bottomrule")]
    cells = [c.strip().removesuffix("\\\\").strip() for ln in body.splitlines() for c in ln.split("&")[1:]]
    # numbers bare (math mode in a D column: '-' is a minus sign), text centred in \multicolumn
    assert any(re.fullmatch(r"-\d+\.\d\d", c) for c in cells)
    assert any(re.fullmatch(r"\(\d+\.\d\d\)", c) for c in cells)          # a standard error
    assert r"\multicolumn{1}{c}{---}" in cells
    assert all(re.fullmatch(r"(\(?-?\d+(\.\d+)?\)?|\\multicolumn\{1\}\{c\}\{.*\}|10\^\{-?\d+\}|)", c)
               for c in cells), cells
    assert "$-$" not in body


@pytest.mark.parametrize("kw,exc,msg", [
    (dict(statistic="t"), ValueError, "statistic"),
    (dict(conf_level=95), ValueError, "conf_level"),
    (dict(dep_var="yes"), TypeError, "dep_var"),
    (dict(align=1), TypeError, "align"),
    (dict(coef_map="Hits"), TypeError, "coef_map"),
    (dict(privacy_rows="eps"), TypeError, "privacy_rows"),
])
def test_new_arguments_are_checked(fits, kw, exc, msg):
    with pytest.raises(exc, match=msg):
        dps.summary_table(list(fits), **kw)


def test_a_baseline_without_coefficients_is_refused(fits):
    with pytest.raises(TypeError, match=r"results\[1\].*non-private baseline"):
        dps.summary_table([fits[0], object()])


def test_private_inference_shows_its_standard_errors_and_its_eps(fits):
    """With inference=True (issue 26) the private standard errors appear under the DP
    coefficients and the eps they cost gets its row; without it neither does."""
    from dpsubset.studies.simulate import make_regression
    df, _ = make_regression(2000, 8, s=2, random_state=0, as_frame=True)
    res = dps.dp_best_subset("y ~ .", df, eps=4, s=2, bounds=(0.5, 0.5), random_state=1, inference=True)
    frame = dps.summary_table([res], fmt="frame")
    spent = sum(st["eps"] for st in res.privacy.stages if st["stage"].startswith("inference"))
    assert spent > 0 and frame.loc["eps (inference)", "(1)"] == f"{spent:.4g}"
    for term in res.support:
        assert frame.loc[f"{term} (std. error)", "(1)"] == f"({dps.results.summary._num(res.bse[term])})"
    assert "eps (inference)" not in dps.summary_table(list(fits), fmt="frame").index
    assert r"$\varepsilon$ (inference)" in dps.summary_table([res, fits[0]], fmt="latex")


# ---------------------------------------------------------------- issue 39: a page, by default

@pytest.fixture(scope="module")
def three_with_baselines(hitters):
    df, bounds = hitters
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = dps.dp_best_subset("Salary ~ .", df, eps=2.0, s=5, bounds=bounds, random_state=2026, inference=True)
        m = dps.dp_best_subset("Salary ~ .", df, eps=16.0, s=5, bounds=bounds, random_state=7,
                               method="mistakes", inference=True)
        npv = dps.best_subset_nonprivate("Salary ~ .", df, s=5, bounds=bounds)
    return a, m, npv


@pytest.mark.parametrize("statistic", ["conf_int", "std_error"])
def test_three_fits_with_a_non_private_column_fit_an_article_page(three_with_baselines, ols, tmp_path,
                                                                  statistic):
    a, m, npv = three_with_baselines
    for i, third in enumerate([npv, ols]):
        tex = dps.summary_table({"DP (eps = 2)": a, "DP mistakes (eps = 16)": m, "Non-private best subset": third},
                                fmt="latex", statistic=statistic)
        sub = tmp_path / f"{statistic}{i}"
        sub.mkdir()
        compile_table(tex, sub)      # no Overfull \hbox (this table ran 62-97 pt over the page)
        assert r"\multicolumn{3}{c}{Salary}" in tex      # one dependent-variable header over every column
        frame = dps.summary_table([a, m, third], fmt="frame")
        assert (frame.loc["N"] == "263").all()          # N for every column, the baseline's too
    # the long heading is set on two lines, the accounting words are short, and say so
    assert r"DP mistakes\\(eps = 16)" in tex
    assert r"approx." in tex and r"approx.: approximate" in tex


def test_size_resize_and_abbreviate_are_options(three_with_baselines, tmp_path):
    a, m, npv = three_with_baselines
    fits = {"DP (eps = 2)": a, "DP mistakes (eps = 16)": m, "Non-private": npv}
    full = dps.summary_table(fits, fmt="latex", statistic="conf_int", abbreviate=False, size="scriptsize")
    assert "approximate" in full and "approx." not in full and r"\scriptsize" in full
    compile_table(full, tmp_path)
    big = dps.summary_table(fits, fmt="latex", statistic="conf_int", resize=True)
    assert r"\resizebox{\linewidth}{!}{%" in big and "graphicx" in big.splitlines()[0]
    sub = tmp_path / "resized"
    sub.mkdir()
    compile_table(big, sub, LATEX_PACKAGES + ("graphicx",))
    with pytest.raises(ValueError, match="size"):
        dps.summary_table(fits, fmt="latex", size="tiny")
    with pytest.raises(TypeError, match="resize"):
        dps.summary_table(fits, fmt="latex", resize="yes")


def test_intervals_too_wide_for_the_smallest_font_go_on_two_lines(tmp_path):
    from dpsubset.results.latex import render_latex
    wide = "[-1.694e+08, 5.829e+07]"
    rows = [("coef", "Intercept", ["1197", "267.9", "141.7", "12.5"]), ("stat", "", [wide] * 4),
            ("coef", "x", ["0.5", "0.25", "0.75", "1.5"]), ("stat", "", ["[0.1, 0.9]"] * 4)]
    tex = render_latex(rows, ["DP one", "DP two", "DP three", "DP four"])
    assert r"\begin{tabular}[t]{@{}c@{}}[$-1.694\times 10^{8}$,\\$5.829\times 10^{7}$]" in tex
    assert r"[$0.1$,\\$0.9$]" in tex              # every interval of that table, the narrow ones too
    compile_table(tex, tmp_path)                   # and it fits the page (no Overfull \hbox)
    narrow = render_latex(rows[2:], ["DP one", "DP two", "DP three", "DP four"])
    assert "[$0.1$, $0.9$]" in narrow and r"\begin{tabular}[t]" not in narrow   # one line where it fits
