"""The results object (summary, tidy, glance, model, predict) and summary_table, on Hitters."""
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import dpsubset as dps
from dpsubset import api
from dpsubset.simulate import make_regression

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
                  "Certificates:", "all closed", "Notes:"):
        assert field in text, field
    assert re.search(r"No\. Observations:\s+263", text)
    assert re.search(r"No\. candidates \(p\):\s+19", text)
    assert re.search(r"Support size \(s\):\s+5", text)
    assert re.search(r"eps \(total\):\s+2\b", text) and re.search(r"eps refit:\s+1\b", text)
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
    assert r"\begin{tabular}" in latex and r"\end{tabular}" in latex
    assert r"top\_r" in latex and "top_r" not in latex  # escaped, notes included
    assert "Notes:" in latex
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
    assert row["eps_select"] == pytest.approx(1.0) and row["eps_refit"] == pytest.approx(1.0)
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
    assert frame["stage"].tolist() == ["selection", "refit"]
    assert frame["eps"].sum() == pytest.approx(2.0)
    assert not hasattr(res, "fittedvalues") and not hasattr(res, "resid")


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
    assert res.predict(a).iloc[0] == pytest.approx(res.predict(b).iloc[0])
    # a dict of columns works too, and a missing column is an error naming it
    assert np.allclose(res.predict({k: new[k].tolist() for k in new.columns}).to_numpy(), pred.to_numpy())
    with pytest.raises((ValueError, KeyError), match=term):
        res.predict(new.drop(columns=[term]))


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
    for row in PRIVACY_ROWS:
        assert row in out
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
            assert (cell == "-") == (t not in res.support)
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
    (dict(model_names=["x", "x"]), ValueError, "model_names"),
    (dict(model_names="ab"), TypeError, "model_names"),
    (dict(fmt="pdf"), ValueError, "fmt"),
    (dict(all_terms="yes"), TypeError, "all_terms"),
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


# ---------------------------------------------------------------- refit plumbing (spec s. 7, T7)

def test_refit_gets_clipped_data_its_budget_and_the_selection_neighbours(monkeypatch, hitters):
    """The API's refit: clipped data within the public bounds it is given, eps = eps_refit,
    the selection's neighbour relation (replace one row), public constants only."""
    df, bounds = hitters
    calls = []
    real = api.objective_perturbation

    def spy(X, y, **kw):
        calls.append((np.array(X), np.array(y), dict(kw)))
        return real(X, y, **kw)

    monkeypatch.setattr(api, "objective_perturbation", spy)
    res = dps.dp_best_subset("Salary ~ .", df, eps=3.0, eps_refit=1.0, s=4, bounds=bounds,
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
    res2 = dps.dp_best_subset("Salary ~ .", other, eps=3.0, eps_refit=1.0, s=4, bounds=bounds,
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
