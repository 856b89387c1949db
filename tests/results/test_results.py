"""The results object (summary, tidy, glance, model, predict) and summary_table, on Hitters."""
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import dpsubset as dps
from dpsubset import api
import dpsubset.refit.support as refit_support_module
from dpsubset.studies.simulate import make_classification, make_regression

TIDY_HEAD = ["term", "estimate", "selected", "forced"]
GLANCE_COLS = ["nobs", "n_candidates", "s", "method", "loss", "eps", "delta", "eps_select",
               "eps_refit", "guarantee", "sensitivity", "certificates_closed"]
PRIVACY_ROWS = ["Method", "Loss", "s", "N", "eps", "delta", "Guarantee"]


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
    c = dps.dp_best_subset("Salary ~ .", df, eps=4.0, s=4, bounds=bounds, random_state=3,
                           method="mistakes", refit=False)
    return a, b, c


# ---------------------------------------------------------------- summary()

def test_summary_text_has_header_terms_and_notes(fits):
    res = fits[0]
    text = res.summary().as_text()
    assert str(res.summary()) == text
    for field in ("Dep. Variable:", "Salary", "Loss:", "squared", "Method:", "top_r", "Refit:",
                  "objective perturbation", "No. Observations:", "No. candidates (p):",
                  "Support size (s):", "Guarantee:", "pure", "eps (total):", "eps selection:",
                  "eps refit:", "delta:", "Bounds:", "public", "Score sensitivity:",
                  "Certificates:", "all certified", "Notes:"):
        assert field in text, field
    assert re.search(r"No\. Observations:\s+263", text)
    assert re.search(r"No\. candidates \(p\):\s+19", text)
    assert re.search(r"Support size \(s\):\s+5", text)
    # 0.1 eps goes to the centring of the codebook's columns (issue 36), half the rest to the refit
    assert re.search(r"eps \(total\):\s+2\b", text) and re.search(r"eps refit:\s+0\.88\b", text)
    flat = " ".join(text.split())  # the notes are wrapped
    # (0.2 for the means and spreads, 0.04 for the best support's fit; here the response's released
    # spread is 0, so the fit gives no rule and the note does not mention it)
    assert "Centring (eps = 0.24)" in flat and "best support's fitted values" not in flat
    assert f"{res.privacy.sensitivity:.4g}" in text
    for term in ["Intercept"] + res.support:
        assert term in text
    # the coefficients shown are the released ones, and the guarantee is stated in words
    assert "differential privacy" in text and "replacing one row" in text
    assert "No fitted values" in text
    # the public bounds of the selected columns and of the response are printed
    for term in res.support:
        lo, hi = res.bounds[term]
        assert f"[{lo:.6g}, {hi:.6g}]" in text
    assert "Salary to [0, 3000]" in text.replace("\n    ", " ")


def test_summary_latex_and_html(fits):
    smry = fits[0].summary()
    latex = smry.as_latex()
    # the paper-ready table of summary_table (issue 28 item 8; compiled in test_tables.py)
    assert latex == dps.summary_table([fits[0]], ["DP coef"], "latex",
                                      title="Differentially private best subset selection")
    assert r"\begin{threeparttable}" in latex and r"\end{tabular}" in latex
    assert "top-R" in latex and "top_r" not in latex and "top\\_r" not in latex
    assert "%\\caption" not in latex and "Dependent variable: Salary" in latex
    html = smry.as_html()
    assert "<table" in html and "</table>" in html and "Notes:" in html
    for term in fits[0].support:
        assert term in html


def test_summary_mistakes_shows_every_stage(fits):
    text = fits[2].summary().as_text()
    assert "eps gap test:" in text and "eps selection:" in text and "Gap check:" in text
    assert "approximate" in text


# ---------------------------------------------------------------- tidy / glance / model

def test_tidy_shape_and_dtypes(fits):
    res = fits[0]
    td = res.tidy()
    assert list(td.columns[:4]) == TIDY_HEAD
    assert len(td) == len(res.forced) + len(res.candidates) == 20
    assert td["term"].tolist() == res.forced + res.candidates          # forced first
    assert all(isinstance(t, str) for t in td["term"])
    assert td["estimate"].dtype == np.float64
    assert td["selected"].dtype == bool and td["forced"].dtype == bool
    assert td.loc[td["selected"], "term"].tolist() == [c for c in res.candidates if c in res.support]
    assert td["forced"].sum() == 1 and not (td["forced"] & td["selected"]).any()
    np.testing.assert_array_equal(td["estimate"].to_numpy(), res.params.to_numpy())
    assert (td.loc[~td["selected"] & ~td["forced"], "estimate"] == 0).all()
    assert set(td["status"]) == {"forced", "selected", "not selected"}
    row = td.set_index("term").loc["Hits"]
    assert (row["clip_lo"], row["clip_hi"]) == (0.0, 300.0)


def test_glance_one_row(fits):
    res = fits[0]
    gl = res.glance()
    assert gl.shape[0] == 1
    assert set(GLANCE_COLS) <= set(gl.columns)
    row = gl.iloc[0]
    assert row["nobs"] == 263 and row["n_candidates"] == 19 and row["s"] == 5
    assert row["method"] == "top_r" and row["loss"] == "squared" and row["guarantee"] == "pure"
    assert row["eps"] == pytest.approx(2.0) and row["delta"] == 0.0
    # Hitters, eps 2: centring 0.2 and the best support's fit 0.04 off the top, half each of the rest
    assert row["eps_select"] == pytest.approx(0.88) and row["eps_refit"] == pytest.approx(0.88)
    assert row["sensitivity"] == pytest.approx(res.privacy.sensitivity)
    assert bool(row["certificates_closed"]) is True
    for col in ("nobs", "n_candidates", "s"):
        assert pd.api.types.is_integer_dtype(gl[col])
    for col in ("eps", "delta", "eps_select", "eps_refit", "sensitivity"):
        assert gl[col].dtype == np.float64
    assert gl["certificates_closed"].dtype == bool
    # several fits stack into one frame, broom style
    both = pd.concat([f.glance() for f in fits], ignore_index=True)
    assert both.shape[0] == 3 and both["eps_refit"].tolist()[2] == 0.0


def test_model_and_privacy_report(fits):
    res = fits[0]
    m = res.model
    assert m.formula == "Salary ~ ." and m.response == "Salary" and m["loss"] == "squared"
    assert m.method == "top_r" and list(m.terms) == res.forced + res.candidates
    assert res.p == 19 and res.s == 5 and res.loss == "squared"
    rep = repr(res.privacy)
    assert rep.startswith("Privacy report: pure") and "refit" in rep
    frame = res.privacy.to_frame()
    # the centring's means and spreads, then its released fit of the best support
    assert frame["stage"].tolist() == ["centring", "centring", "selection", "refit"]
    assert frame["eps"].sum() == pytest.approx(2.0)
    assert not hasattr(res, "fittedvalues") and not hasattr(res, "resid")


# ---------------------------------------------------------------- the exact search's certificates

def test_the_report_says_certified_without_counting_the_solves(fits):
    """Which solves the search needed depends on the data (neighbours can need one or
    three: tests/audit/test_outputs_audit.py), so no output counts or names them."""
    for res in fits:
        rep = res.privacy
        assert rep.exact_search is True and rep.all_certificates_closed is True
        assert "exact search: all solves certified optimal" in repr(rep)
        assert not re.search(r"exact solves|\d+ of \d+ certified|closed \(\d+\)", repr(rep))
        text = res.summary().as_text()
        assert re.search(r"Certificates:\s+all certified", text) and "closed (" not in text
        assert "n_certificates" not in res.glance().columns
        with pytest.raises(dps.NotReleasedError, match="diagnostics=True"):
            rep.certificates
    table = dps.summary_table(list(fits), fmt="frame")
    assert table.loc["Certificates"].tolist() == ["all certified"] * 3


def test_a_method_without_exact_search_says_so(hitters):
    df, bounds = hitters
    res = dps.dp_best_subset("Salary ~ .", df, eps=2.0, s=3, bounds=bounds, method="dp_sis",
                             random_state=1)
    assert res.privacy.exact_search is False
    assert "exact search: not used by this method" in repr(res.privacy)
    assert re.search(r"Certificates:\s+not needed", res.summary().as_text())
    assert dps.summary_table(res, fmt="frame").loc["Certificates", "(1)"] == "not needed"
    assert bool(res.glance()["certificates_closed"].iloc[0]) is True


def test_the_solves_are_in_the_diagnostics_and_on_the_verbose_terminal(capsys):
    """The per-solve list (routes, how many) moved to the non-private outputs, labelled."""
    df, _ = make_classification(300, 8, s=2, random_state=4, as_frame=True)
    with pytest.warns(dps.PrivacyLeakWarning, match="NON-PRIVATE"):
        res, diag = dps.dp_best_subset("y ~ .", df, eps=4.0, s=2, bounds=(4.0, 1.0), ball=dps.Ball(r=1.1),
                                       loss=dps.Logistic(levels=(-1, 1)), random_state=0,
                                       search=dps.Search(diagnostics=True), verbose=True)
    assert diag.solves and all(set(c) == {"problem", "method", "closed"} for c in diag.solves)
    assert all(c["closed"] for c in diag.solves)
    # the accuracy of the iteratively computed scores is one of them
    assert any("score within" in c["problem"] for c in diag.solves)
    err = capsys.readouterr().err
    assert "NON-PRIVATE" in err and f"needed {len(diag.solves)} solve" in err
    for c in diag.solves:
        assert c["problem"] in err and c["method"] in err
    # without verbose nothing is printed, and the release never holds the list
    dps.dp_best_subset("y ~ .", df, eps=4.0, s=2, bounds=(4.0, 1.0), ball=dps.Ball(r=1.1), loss=dps.Logistic(levels=(-1, 1)), random_state=0)
    assert capsys.readouterr().err == ""
    assert "score within" not in repr(res.privacy)


# ---------------------------------------------------------------- predict

def _manual_prediction(res, rows):
    """params . model-matrix row, written out by hand (rows inside the public bounds)."""
    out = np.full(len(rows), res.params["Intercept"])
    for term in res.support:
        m = re.fullmatch(r"(\w+)\[T\.(\w+)\]", term)
        x = (rows[m.group(1)] == m.group(2)).astype(float) if m else rows[term].astype(float)
        out = out + res.params[term] * x.to_numpy()
    return out


def test_predict_on_new_hitters_rows(hitters, fits):
    df, _ = hitters
    res = fits[0]
    new = df.drop(columns=["Salary"]).sample(6, random_state=1)
    pred = res.predict(new)
    assert isinstance(pred, pd.Series) and pred.name == "Salary"
    assert pred.index.equals(new.index)
    np.testing.assert_allclose(pred.to_numpy(), _manual_prediction(res, new), rtol=1e-9, atol=1e-6)
    # a value outside the public bounds is clipped exactly as in training
    num = [t for t in res.support if t in df.columns]
    term = num[0]
    hi = res.bounds[term][1]
    a, b = new.iloc[[0]].copy(), new.iloc[[0]].copy()
    a[term], b[term] = hi, 10 * hi + 1000
    with warnings.catch_warnings():
        warnings.simplefilter("error", dps.PredictionClippedWarning)   # on the edge: not clipped
        at_edge = res.predict(a).iloc[0]
    with pytest.warns(dps.PredictionClippedWarning, match=term):
        assert at_edge == pytest.approx(res.predict(b).iloc[0])
    # a dict of columns works too, and a missing column is an error naming it
    assert np.allclose(res.predict({k: new[k].tolist() for k in new.columns}).to_numpy(), pred.to_numpy())
    with pytest.raises((ValueError, KeyError), match=term):
        res.predict(new.drop(columns=[term]))


def test_predict_outside_the_bounds_warns_with_columns_and_count_not_values():
    """Issue 28 item 5: clipped rows are still clipped, but a warning names the columns and
    counts the rows (a units mistake, wt in pounds instead of 1000 lb, is otherwise silent)."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"wt": rng.uniform(1.5, 5.5, 200), "hp": rng.uniform(50, 350, 200)})
    df["mpg"] = 40 - 3 * df.wt - 0.02 * df.hp + rng.normal(0, 1, 200)
    bounds = dps.Bounds(x=dict(wt=(1, 6), hp=(40, 400)), y=(5, 50))
    new = pd.DataFrame({"wt": [3017.5, 3.0, 2.0, 6.0], "hp": [1000.0, 100.0, 20.0, 400.0]})
    for formula in ("mpg ~ wt + hp", "mpg ~ wt + I(wt**2) + hp", "mpg ~ wt * hp"):
        res = dps.dp_best_subset(formula, df, eps=6, s=1, bounds=bounds, random_state=1)
        with pytest.warns(dps.PredictionClippedWarning) as rec:
            pred = res.predict(new)
        assert len(rec) == 1
        msg = str(rec[0].message)
        assert "2 of 4 row(s)" in msg and "wt (1 row)" in msg and "hp (2 rows)" in msg, msg
        for value in ("3017", "1000", "20"):       # no value of newdata in the message
            assert value not in msg
        # the clipping itself is unchanged: the prediction is the one at the box's corner
        corner = res.predict(pd.DataFrame({"wt": [6.0, 3.0, 2.0], "hp": [400.0, 100.0, 40.0]}))
        np.testing.assert_allclose(pred.to_numpy()[:3], corner.to_numpy())
    with warnings.catch_warnings():   # rows inside the box (edges included): no warning
        warnings.simplefilter("error", dps.PredictionClippedWarning)
        res.predict(new.iloc[[1, 3]])
    # a term the codebook bounds itself, more tightly than its variables' box, is counted too
    tight = dps.Bounds(x={"wt": (1, 6), "hp": (40, 400), "I(wt ** 2)": (1, 20)}, y=(5, 50))
    res = dps.dp_best_subset("mpg ~ wt + I(wt**2) + hp", df, eps=6, s=1, bounds=tight, random_state=1)
    with pytest.warns(dps.PredictionClippedWarning) as rec:
        res.predict(pd.DataFrame({"wt": [5.0, 3.0, 7.0], "hp": [100.0, 100.0, 100.0]}))
    msg = str(rec[0].message)
    assert "2 of 3 row(s)" in msg and "wt (1 row)" in msg and "I(wt ** 2) (2 rows)" in msg, msg
    # bounds taken from the data are never compared with (they are statistics of the data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        void = dps.dp_best_subset("mpg ~ wt + hp", df, eps=6, s=1, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", dps.PredictionClippedWarning)
        void.predict(new)


# ---------------------------------------------------------------- refit=False

def test_refit_false_path(fits):
    res = fits[2]
    assert res.params is None and res.eps_refit == 0.0 and res.refit_mechanism is None
    td = res.tidy()
    assert list(td.columns[:4]) == TIDY_HEAD and td["estimate"].isna().all()
    assert td["selected"].sum() == 4
    text = res.summary().as_text()
    assert "refit=False" in text and all(t in text for t in res.support)
    assert res.summary().as_latex() and res.summary().as_html()
    with pytest.raises(ValueError, match="refit=True"):
        res.predict(pd.DataFrame({"x": [1.0]}))
    assert res.glance()["refit"].iloc[0] is None


# ---------------------------------------------------------------- summary_table

@pytest.mark.parametrize("fmt", ["text", "latex", "html", "markdown"])
def test_summary_table_formats(fits, fmt):
    names = ["eps = 2", "eps = 16", "mistakes"]
    out = dps.summary_table(list(fits), model_names=names, fmt=fmt)
    assert isinstance(out, str)
    for name in names:
        assert name in out
    for res in fits:
        for term in res.support:
            assert term in out
    shown = {"html": {"eps": "\u03b5", "delta": "\u03b4"},
             "latex": {"eps": r"$\varepsilon$", "delta": r"$\delta$", "s": "$s$", "N": "$N$"}}.get(fmt, {})
    for row in PRIVACY_ROWS:
        assert shown.get(row, row) in out
    if fmt == "latex":
        assert r"\begin{tabular}" in out and r"\midrule" in out
    if fmt == "html":
        assert "<table" in out
    if fmt == "markdown":
        lines = out.splitlines()
        assert lines[0].startswith("| ") and all(n in lines[0] for n in names)
        assert re.fullmatch(r"\|:---\|(---:\|){3}", lines[1])
    if fmt == "text":
        # terms are rows, fits are columns: the Intercept row holds one value per fit
        line = next(ln for ln in out.splitlines() if ln.startswith("Intercept"))
        assert len(line.split()) == 4 and line.split()[-1] == "forced"


def test_summary_table_frame_layout(fits):
    a, b, c = fits
    frame = dps.summary_table([a, b], fmt="frame")
    assert list(frame.columns) == ["(1)", "(2)"]
    terms = list(dict.fromkeys(["Intercept"] + [t for t in a.candidates
                                                if t in a.support or t in b.support]))
    assert list(frame.index[:len(terms)]) == terms
    assert list(frame.index[len(terms):][:3]) == ["Method", "Loss", "Refit"]
    for t in terms[1:]:
        for res, col in ((a, "(1)"), (b, "(2)")):
            cell = frame.loc[t, col]
            assert (cell == dps.results.tables.NOT_SELECTED == "\u2014") == (t not in res.support)
            if t in res.support:
                assert float(cell) == pytest.approx(res.params[t], rel=1e-3)
    assert frame.loc["eps", "(2)"] == "16" and frame.loc["N", "(1)"] == "263"
    everything = dps.summary_table([a], fmt="frame", all_terms=True)
    assert len(everything) == 20 + len(frame) - len(terms)
    # a fit with a different formula: its missing terms are blank, not '-'
    df, bounds = make_regression(100, 4, s=1, random_state=0, as_frame=True)[0], (0.5, 0.5)
    other = dps.dp_best_subset("y ~ .", df, eps=1.0, s=1, bounds=bounds, random_state=0)
    mixed = dps.summary_table([a, other], fmt="frame")
    assert mixed.loc[a.support[0], "(2)"] == "" and mixed.loc[other.support[0], "(1)"] == ""


@pytest.mark.parametrize("kw,exc,msg", [
    (dict(results=[]), ValueError, "results"),
    (dict(results="abc"), TypeError, "results"),
    (dict(model_names=["only one"]), ValueError, "model_names"),
    (dict(model_names="ab"), TypeError, "model_names"),
    (dict(fmt="pdf"), ValueError, "fmt"),
    (dict(all_terms="yes"), TypeError, "all_terms"),
    (dict(digits=-1), ValueError, "digits"),
    (dict(digits="abc"), ValueError, "digits"),
    (dict(digits=2.5), TypeError, "digits"),
    (dict(labels=["a"]), TypeError, "labels"),
    (dict(labels=lambda term: "same"), ValueError, "labels"),
    (dict(label="tab:x"), ValueError, "title="),
    (dict(notes=3), TypeError, "notes"),
    (dict(file=3), TypeError, "file"),
])
def test_summary_table_errors(fits, kw, exc, msg):
    args = dict(results=list(fits[:2]))
    args.update(kw)
    with pytest.raises(exc, match=msg):
        dps.summary_table(args.pop("results"), **args)


def test_summary_table_rejects_other_objects(fits):
    with pytest.raises(TypeError, match=r"results\[1\]"):
        dps.summary_table([fits[0], "not a result"])
    assert dps.summary_table(fits[0]).count("Intercept") == 1   # a single result is fine


def test_seeded_flag_in_glance_and_summary_table(fits):
    """glance() and summary_table() carry the report's seeded flag and say what it means."""
    seeded = fits[0]
    df, _ = make_regression(120, 5, s=1, random_state=0, as_frame=True)
    unseeded = dps.dp_best_subset("y ~ .", df, eps=2.0, s=1, bounds=(0.5, 0.5))
    assert seeded.privacy.seeded is True and unseeded.privacy.seeded is False
    assert seeded.glance()["seeded"].tolist() == [True]
    assert unseeded.glance()["seeded"].tolist() == [False]
    assert seeded.glance()["seeded"].dtype == bool
    frame = dps.summary_table([seeded, unseeded], fmt="frame")
    assert frame.loc["Seeded"].tolist() == ["yes", "no"]
    # the note explaining "yes" appears when (and only when) a fit was seeded
    assert "private only while the seed is secret" in dps.summary_table([seeded, unseeded], fmt="markdown")
    assert "seed is secret" not in dps.summary_table([unseeded], fmt="markdown")
    tex = dps.summary_table([seeded], fmt="latex")
    assert re.search(r"Seeded & (\\multicolumn\{1\}\{c\}\{)?yes", tex) and r"random\_state" in tex


# ---------------------------------------------------------------- void guarantee

def test_bounds_from_data_are_not_shown():
    df, _ = make_regression(150, 6, s=2, random_state=1, as_frame=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dps.PrivacyLeakWarning)
        res = dps.dp_best_subset("y ~ .", df, eps=2.0, s=2, random_state=0)
    assert res.privacy.guarantee == "void" and res.bounds == "taken from the data"
    text = res.summary().as_text()
    assert "from data" in text and "void" in text
    # Delta is then a function of max |value|: not kept in the result at all (issue 17)
    assert res.privacy.sensitivity is None
    assert np.isnan(res.glance()["sensitivity"].iloc[0])
    assert res.tidy()["clip_lo"].isna().all()
    assert "void" in dps.summary_table([res], fmt="text").lower()


def test_a_bound_learned_from_the_data_is_in_no_part_of_the_result():
    """By construction (issue 38): the learned bounds live in the design's private half only;
    the spec a result keeps has NaN in their places and open clip intervals, and the
    learned values (max |value| of the columns) are nowhere in the pickled result."""
    import pickle
    from dpsubset.design.build import build_design
    df, _ = make_regression(150, 6, s=2, random_state=1, as_frame=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dps.PrivacyLeakWarning)
        design = build_design("y ~ .", df)
        res = dps.dp_best_subset("y ~ .", df, eps=2.0, s=2, random_state=0)
    learned = design.data.learned_bounds
    assert set(learned) == {"y", *design.spec.candidate_names}
    # the fit reads them, the public half does not hold them
    np.testing.assert_array_equal(design.x_bounds, [learned[c] for c in design.spec.candidate_names])
    assert np.isnan(design.spec.x_bounds).all() and np.isnan(design.spec.b_y)
    spec = res._predictor
    assert np.isnan(spec.x_bounds).all() and np.isnan(spec.b_y)
    assert all(spec.clip_limits[c] == (-np.inf, np.inf) for c in learned)
    blob = pickle.dumps(res)
    for value in learned.values():
        assert np.float64(value).tobytes() not in blob


# ---------------------------------------------------------------- refit plumbing (spec s. 7, T7)

def test_refit_gets_clipped_data_its_budget_and_the_selection_neighbours(monkeypatch, hitters):
    """The API's refit: clipped data within the public bounds it is given, eps = eps_refit,
    the selection's neighbour relation (replace one row), public constants only."""
    df, bounds = hitters
    calls = []
    real = refit_support_module.objective_perturbation_exact

    def spy(X, y, **kw):
        calls.append((np.array(X), np.array(y), dict(kw)))
        return real(X, y, **kw)

    monkeypatch.setattr(refit_support_module, "objective_perturbation_exact", spy)
    res = dps.dp_best_subset("Salary ~ .", df, eps=3.0, budget=dps.Budget(refit=1.0), s=4, bounds=bounds,
                             random_state=5)
    (X, y, kw), = calls
    assert kw["eps"] == pytest.approx(1.0) and kw.get("neighbour", "replace-one") == "replace-one"
    assert "replace one row" in res.privacy.neighbours
    assert X.shape == (263, 1 + 4)
    assert np.all(np.abs(y) <= kw["b_y"] + 1e-12)
    assert np.all(np.linalg.norm(X, axis=1) <= kw["row_bound"] * (1 + 1e-12))
    # b_y and row_bound are public: functions of the bounds and the released support only
    other = df.sample(frac=1.0, random_state=0).assign(Salary=lambda d: d["Salary"] * 0.5)
    calls.clear()
    res2 = dps.dp_best_subset("Salary ~ .", other, eps=3.0, budget=dps.Budget(refit=1.0), s=4, bounds=bounds,
                              random_state=5)
    (_, _, kw2), = calls
    assert kw2["b_y"] == kw["b_y"] == 1.0          # Salary mapped from [0, 3000] to [-1, 1]
    k = len([t for t in res2.support if "[T." in t])  # dummies: bound 1; mapped intervals: 1
    assert kw2["row_bound"] == pytest.approx(np.sqrt(1 + 4)), k


def test_two_class_summary_states_the_coding(hitters):
    df, bounds = hitters
    df = df.assign(High=df["Salary"] > 500).drop(columns=["Salary"])
    res = dps.dp_best_subset("High ~ .", df, eps=4.0, s=2, loss="logistic",
                             bounds=dps.Bounds(x=bounds.x), random_state=0)
    text = res.summary().as_text()
    assert "logistic" in text and "Two classes" in text and "coded -1" in text
    assert res.tidy()["estimate"].notna().all() and res.glance()["loss"].iloc[0] == "logistic"


# ---------------------------------------------------------------- withheld attributes (issue 16, item 2)

@pytest.mark.parametrize("name,why", [
    ("resid", "private"), ("fittedvalues", "private"), ("resid_pearson", "private"),
    ("bse", "standard errors"), ("conf_int", "confidence intervals"), ("pvalues", "tests"),
    ("tvalues", "standard errors"), ("cov_params", "covariances"), ("t_test", "tests"),
    ("llf", "goodness-of-fit"), ("aic", "goodness-of-fit"), ("bic", "goodness-of-fit"),
    ("rsquared", "goodness-of-fit"), ("deviance", "goodness-of-fit"),
    ("summary2", "summary_table"), ("get_prediction", "covariance"),
])
def test_withheld_attributes_say_why_and_what_instead(fits, name, why):
    res = fits[0]
    with pytest.raises(dps.NotReleasedError, match=why) as exc:
        getattr(res, name)
    msg = str(exc.value)
    assert msg.startswith(f"res.{name} is not released")
    assert any(k in msg for k in ("predict(newdata)", "summary()", "summary_table"))
    assert isinstance(exc.value, AttributeError)
    assert not hasattr(res, name)          # hasattr semantics kept


def test_other_missing_attributes_are_plain_attribute_errors(fits):
    res = fits[0]
    with pytest.raises(AttributeError) as exc:
        res.no_such_thing
    assert not isinstance(exc.value, dps.NotReleasedError)
    assert "no_such_thing" in str(exc.value)
    # copying and pickling go through attribute probes and must keep working
    import copy
    import pickle
    assert copy.deepcopy(res).support == res.support
    assert pickle.loads(pickle.dumps(res)).support == res.support


def test_predict_without_data_says_why(fits):
    with pytest.raises(TypeError, match="needs newdata.*private data.*predict\\(newdata\\)"):
        fits[0].predict()


# ---------------------------------------------------------------- predict types (issue 16, item 5)

@pytest.fixture(scope="module")
def two_class_fits(hitters):
    df, bounds = hitters
    df = df.assign(High=pd.Categorical(np.where(df["Salary"] > 500, "high", "low"),
                                       categories=["low", "high"])).drop(columns=["Salary"])
    out = {loss: dps.dp_best_subset("High ~ .", df, eps=8.0, s=2, loss=loss,
                                    bounds=dps.Bounds(x=bounds.x), random_state=0)
           for loss in ("logistic", "hinge")}
    return df, out


def test_logistic_predict_is_a_probability_by_default(two_class_fits):
    df, fits2 = two_class_fits
    res, new = fits2["logistic"], df.drop(columns=["High"]).head(20)
    prob, eta = res.predict(new), res.predict(new, which="linear")
    assert res.response_levels == ("low", "high")
    np.testing.assert_allclose(prob.to_numpy(), 1 / (1 + np.exp(-eta.to_numpy())), rtol=1e-12)
    assert prob.between(0, 1).all() and prob.index.equals(new.index)
    np.testing.assert_allclose(res.predict(new, which="mean"), prob)
    cls = res.predict(new, which="class")
    assert list(cls.cat.categories) == ["low", "high"]
    assert (cls == "high").tolist() == (eta > 0).tolist() == (prob > 0.5).tolist()
    assert "probability of 'high'" in res.summary().as_text().replace("\n    ", " ")


def test_hinge_predict_is_a_label_by_default(two_class_fits):
    df, fits2 = two_class_fits
    res, new = fits2["hinge"], df.drop(columns=["High"]).head(20)
    cls, eta = res.predict(new), res.predict(new, which="linear")
    assert isinstance(cls.dtype, pd.CategoricalDtype) and set(cls) <= {"low", "high"}
    assert (cls == "high").tolist() == (eta > 0).tolist()
    with pytest.raises(ValueError, match="no probability model.*which='class'"):
        res.predict(new, which="mean")


def test_predict_which_for_regression(fits, hitters):
    df, _ = hitters
    res, new = fits[0], df.head(4)
    np.testing.assert_allclose(res.predict(new, which="linear"), res.predict(new))
    with pytest.raises(ValueError, match="two-class"):
        res.predict(new, which="class")
    with pytest.raises(ValueError, match="which: expected one of"):
        res.predict(new, which="response")


# ---------------------------------------------------------------- unseen levels (issue 16, item 8)

def test_predict_with_an_unseen_level_raises_naming_column_and_count(fits, hitters):
    df, _ = hitters
    res = fits[0]
    new = df.head(5).copy()
    new["League"] = new["League"].astype(str)
    new.loc[new.index[[0, 2]], "League"] = "Secret-League"
    with pytest.raises(ValueError, match=r"'League' \(2 rows\).*level the model does not know") as exc:
        res.predict(new)
    assert "Secret-League" not in str(exc.value)     # a value of the data is never printed
    # known levels only: fine, whichever of them occur
    ok = df.head(5).copy()
    ok["League"] = "N"
    assert res.predict(ok).notna().all()


def test_unseen_level_in_explicit_levels():
    df = pd.DataFrame({"y": np.linspace(0, 9, 30), "g": list("abc") * 10})
    res = dps.dp_best_subset("y ~ C(g, levels=['a', 'b', 'c'])", df, eps=2, s=1,
                             bounds=dps.Bounds(y=(0, 10)), random_state=1)
    with pytest.raises(ValueError, match=r"'g' \(1 row\)"):
        res.predict(pd.DataFrame({"g": ["a", "zz", "b"]}))


# ---------------------------------------------------------------- LaTeX / HTML tables (issue 16, item 3)

LATEX_DOC = r"""\documentclass{article}
\usepackage{booktabs}
\usepackage{threeparttable}
\usepackage{dcolumn}
\begin{document}
Text before the table, see Table~\ref{tab:fits}.
\input{table.tex}
\end{document}
"""


def _pdflatex():
    import os
    import shutil
    exe = shutil.which("pdflatex")
    if exe is None:
        if os.environ.get("DPSUBSET_REQUIRE_LATEX"):
            pytest.fail("pdflatex not found but DPSUBSET_REQUIRE_LATEX is set (make test installs "
                        "the Makefile's TEX_APT_PACKAGES)")
        pytest.skip("pdflatex not installed (set DPSUBSET_REQUIRE_LATEX to make this a failure)")
    return exe


@pytest.fixture(scope="module")
def three_fits(fits, hitters):
    df, bounds = hitters
    d = dps.dp_best_subset("Salary ~ .", df, eps=4.0, s=4, bounds=bounds, random_state=11,
                           method="mistakes")
    return [fits[0], fits[1], d]


def test_latex_table_compiles_with_pdflatex_without_overfull_boxes(three_fits, tmp_path):
    import subprocess
    exe = _pdflatex()
    tex = dps.summary_table(three_fits, model_names=["eps = 2", "eps = 16", "mistakes & PTR"],
                            title="Private fits of Salary (1987) & friends", label="tab:fits",
                            notes=["Bounds: MLB records, not the data; 100% public."],
                            labels={"CWalks": "Career walks", "Division[T.W]": "West division"},
                            file=tmp_path / "table.tex")
    assert (tmp_path / "table.tex").read_text() == tex
    (tmp_path / "doc.tex").write_text(LATEX_DOC)
    for _ in range(2):   # twice, so that the \ref resolves
        proc = subprocess.run([exe, "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120)
    log = (tmp_path / "doc.log").read_text(errors="replace")
    assert proc.returncode == 0, log[-3000:]
    assert "Overfull \\hbox" not in log and "\n! " not in log
    assert "undefined" not in log.lower()
    assert (tmp_path / "doc.pdf").stat().st_size > 1000


def test_latex_table_structure(three_fits):
    # align=False: right-aligned r columns, numbers written with $-$ (the D columns of
    # align=True are checked in test_tables.py)
    tex = dps.summary_table(three_fits, fmt="latex", title="DP fits", label="tab:dp", digits=2,
                            labels={"Intercept": "Constant"}, notes="See the text.", align=False)
    lines = tex.splitlines()
    assert r"\usepackage{booktabs,threeparttable}" in lines[0]
    assert lines[1] == r"\begin{table}[htbp]" and lines[-1] == r"\end{table}"
    # caption and label inside the threeparttable, before the tabular; notes after it
    order = [tex.index(x) for x in (r"\begin{threeparttable}", r"\caption{DP fits}", r"\label{tab:dp}",
                                    r"\begin{tabular}", r"\toprule", r"\bottomrule", r"\end{tabular}",
                                    r"\begin{tablenotes}", r"\item[] See the text.",
                                    r"\end{tablenotes}", r"\end{threeparttable}")]
    assert order == sorted(order)
    assert "%\\caption" not in tex
    # symbols in math, a true minus, an em dash for "not selected"
    assert r"$\varepsilon$ &" in tex and r"$\delta$ &" in tex and r"$10^{-6}$" in tex
    body = tex[tex.index(r"\toprule"):tex.index(r"\bottomrule")]
    cells = [c.strip(" \\") for ln in body.splitlines() for c in ln.split("&")[1:]]
    assert "---" in cells and any(c.startswith("$-$") for c in cells)
    assert not any(re.match(r"-\d", c) for c in cells)      # no hyphen as a minus sign
    # digits: two decimals everywhere; relabelled term
    row = next(ln for ln in lines if ln.startswith("Constant &"))
    cells = [c.strip(" \\").replace("$-$", "-") for c in row.split("&")[1:]]
    assert all(re.fullmatch(r"-?\d+\.\d\d", c) for c in cells), cells
    assert not any(ln.startswith("Intercept") for ln in lines)


def test_digits_and_format_spec(fits):
    frame = dps.summary_table(list(fits[:2]), fmt="frame", digits=3)
    assert frame.loc["Intercept", "(1)"] == f"{fits[0].params['Intercept']:.3f}"
    frame = dps.summary_table(list(fits[:2]), fmt="frame", digits=".2e")
    assert frame.loc["Intercept", "(2)"] == f"{fits[1].params['Intercept']:.2e}"
    renamed = dps.summary_table(list(fits[:2]), fmt="frame", labels=str.lower)
    assert "intercept" in renamed.index and "Method" in renamed.index


def test_html_escapes_and_file_suffix_picks_the_format(three_fits, tmp_path):
    out = dps.summary_table(three_fits, model_names=["a & b", "<c>", "d"], title="x < y & z",
                            notes="1 < 2 & 3 > 2", file=tmp_path / "t.html")
    assert out.startswith("<table") and (tmp_path / "t.html").read_text() == out
    assert "a &amp; b" in out and "&lt;c&gt;" in out and "x &lt; y &amp; z" in out
    assert "1 &lt; 2 &amp; 3 &gt; 2" in out
    body = re.sub(r"&(amp|lt|gt);", "", out)
    assert "&" not in body.replace("&mdash;", "")
    assert "\u03b5" in out and "\u03b4" in out        # the symbols, not the words
    md = dps.summary_table(three_fits, file=tmp_path / "t.md")
    assert md.startswith("| ") and (tmp_path / "t.md").read_text() == md
    dps.summary_table(three_fits, file=tmp_path / "t.csv")
    back = pd.read_csv(tmp_path / "t.csv", index_col=0)
    assert list(back.columns) == ["(1)", "(2)", "(3)"]
    # an explicit fmt wins over the suffix
    text = dps.summary_table(three_fits, fmt="text", file=tmp_path / "t.tex")
    assert (tmp_path / "t.tex").read_text() == text and r"\begin{table}" not in text


# ---------------------------------------------------------------- tidy / glance with inference=True

def _inference_frame(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 6))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(6)])
    df["y"] = X[:, :3] @ [0.5, -0.5, 0.25] + 0.5 * rng.standard_normal(n)
    return df


@pytest.fixture(scope="module")
def inferred():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dps.LowUtilityWarning)
        return dps.dp_best_subset("y ~ .", _inference_frame(), eps=8.0, s=3, bounds=(1.0, 3.0),
                                  inference=True, random_state=5)


def test_tidy_with_inference_has_broom_columns_from_the_release(inferred):
    """tidy() of a fit with inference=True carries broom's std.error, statistic, p.value
    (and conf.low, conf.high with conf_int=True) right after estimate, equal to the
    released bse, tvalues, pvalues and conf_int, NaN for the terms not selected."""
    res = inferred
    td = res.tidy()
    assert list(td.columns[:5]) == ["term", "estimate", "std.error", "statistic", "p.value"]
    assert "conf.low" not in td.columns
    on = td["term"].isin(["Intercept"] + res.support).to_numpy()
    np.testing.assert_array_equal(td["std.error"].to_numpy(), res.bse.to_numpy())
    np.testing.assert_array_equal(td["statistic"].to_numpy(), res.tvalues.to_numpy())
    np.testing.assert_array_equal(td["p.value"].to_numpy(), res.pvalues.to_numpy())
    assert (td.loc[on, "std.error"] > 0).all() and td.loc[~on, "std.error"].isna().all()
    ci = res.tidy(conf_int=True, conf_level=0.9)
    assert list(ci.columns[:7]) == ["term", "estimate", "std.error", "statistic", "p.value",
                                    "conf.low", "conf.high"]
    want = res.conf_int(alpha=0.1)
    np.testing.assert_allclose(ci["conf.low"].to_numpy(), want[0].to_numpy())
    np.testing.assert_allclose(ci["conf.high"].to_numpy(), want[1].to_numpy())
    wide = res.tidy(conf_int=True)   # 95 % by default: wider than 90 %
    assert ((wide["conf.high"] - wide["conf.low"])[on] > (ci["conf.high"] - ci["conf.low"])[on]).all()
    assert (ci.loc[on, "conf.low"] < ci.loc[on, "conf.high"]).all() and ci.loc[~on, "conf.low"].isna().all()


def test_glance_with_inference_has_its_eps_and_the_selection_confidence(inferred):
    res = inferred
    row = res.glance().iloc[0]
    spent = sum(st["eps"] for st in res.privacy.stages if st["stage"].startswith("inference"))
    assert spent > 0 and row["eps_inference"] == pytest.approx(spent)
    assert row["inference_mode"] == "conditional"
    conf = res.selection_confidence
    assert row["selection_conf_low"] == conf.prob_lower and row["selection_conf_high"] == conf.prob_upper
    assert row["selection_conf_level"] == conf.level and row["selection_verdict"] == conf.statement
    assert 0.0 <= row["selection_conf_low"] <= row["selection_conf_high"] <= 1.0


def test_without_inference_tidy_and_glance_show_no_inference_columns(fits):
    """No column of NaN that would look like a result; asking for intervals says how to get them."""
    res = fits[0]
    assert not set(res.tidy().columns) & {"std.error", "statistic", "p.value", "conf.low", "conf.high"}
    assert not set(res.glance().columns) & {"eps_inference", "inference_mode", "selection_conf_low",
                                            "selection_verdict"}
    with pytest.raises(dps.NotReleasedError, match=r"tidy\(conf_int=True\).*inference=True"):
        res.tidy(conf_int=True)
    with pytest.raises(ValueError, match="conf_level"):
        res.tidy(conf_int=True, conf_level=95)
    with pytest.raises(TypeError, match="conf_int"):
        res.tidy(conf_int="yes")


def test_hinge_with_inference_has_the_confidence_but_no_interval_columns():
    """The hinge has no intervals: inference=True (with refit=False; with a refit it is
    refused) adds glance()'s confidence columns but no tidy() columns."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (2000, 5))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(5)])
    df["y"] = np.where(X[:, 0] - X[:, 1] + 0.3 * rng.standard_normal(2000) > 0, "a", "b")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dps.LowUtilityWarning)
        res = dps.dp_best_subset("y ~ .", df, eps=8.0, s=2, bounds=(0.5, None), loss=dps.Hinge(levels=("a", "b")), refit=False, inference=True, random_state=1)
    row = res.glance().iloc[0]
    assert row["eps_inference"] > 0 and row["inference_mode"] is None
    assert row["selection_verdict"] == res.selection_confidence.statement
    assert "std.error" not in res.tidy().columns
    with pytest.raises(dps.NotReleasedError, match="inference=True"):
        res.tidy(conf_int=True)
    text = res.summary().as_text().replace("\n    ", " ")
    assert "Selection confidence:" in text and "none was requested" not in text
