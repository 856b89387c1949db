"""dp_best_subset end to end: inputs, guarantees, reproducibility, no leaks."""
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

import dpsubset as dps
from dpsubset.design.spec import DesignSpec
from dpsubset.studies.simulate import make_regression


@pytest.fixture(scope="module")
def sim():
    df, true = make_regression(400, 12, s=3, random_state=0, as_frame=True)
    return df, true


def fit(df, **kw):
    args = dict(eps=2.0, s=3, bounds=(0.5, 0.5), random_state=0)
    args.update(kw)
    return dps.dp_best_subset("y ~ .", df, **args)


def test_release_and_report(sim):
    df, _ = sim
    res = fit(df)
    assert len(res.support) == 3 and set(res.support) <= set(res.candidates)
    rep = res.privacy
    assert rep.guarantee == "pure" and rep.delta == 0
    assert rep.eps == pytest.approx(2.0)
    assert [st["stage"] for st in rep.stages] == ["selection", "refit"]
    assert rep.all_certificates_closed and rep.exact_search
    assert res.params.index.tolist() == ["Intercept"] + res.candidates
    assert (res.params[[c for c in res.candidates if c not in res.support]] == 0).all()
    assert "pure" in repr(rep)
    text = res.summary().as_text()
    assert "private best subset selection" in text.lower() and res.support[0] in text
    pred = res.predict(df.head(7))
    assert pred.shape == (7,) and np.all(np.isfinite(pred))


def test_same_seed_same_release(sim):
    df, _ = sim
    a, b = fit(df, random_state=11), fit(df, random_state=11)
    assert a.support == b.support
    pd.testing.assert_series_equal(a.params, b.params)
    g = np.random.default_rng(5)
    assert fit(df, random_state=g).support  # a Generator is accepted


def test_high_eps_recovers_truth(sim):
    df, true = sim
    hits = sum(set(fit(df, eps=2000.0, random_state=k, refit=False).support) == set(true)
               for k in range(5))
    assert hits == 5


def test_mistakes_guarantees(sim):
    df, _ = sim
    res = fit(df, method=dps.Method("mistakes", gap_check="assume"), refit=False)
    assert res.privacy.guarantee == "conditional" and "NOT checked" in res.privacy.statement
    res = fit(df, method="mistakes", refit=False, eps=4.0)
    assert res.privacy.guarantee == "approximate"
    assert res.privacy.delta == pytest.approx(1e-6)
    assert res.privacy.gap_check_passed in (True, False)
    assert [st["stage"] for st in res.privacy.stages] == ["selection: gap test", "selection"]
    assert res.privacy.eps == pytest.approx(4.0)


def test_budget_split(sim):
    df, _ = sim
    res = fit(df, eps=3.0, budget=dps.Budget(refit=1.0))
    assert [st["eps"] for st in res.privacy.stages] == pytest.approx([2.0, 1.0])
    with pytest.raises(ValueError, match="eps_select"):
        fit(df, eps=1.0, budget=dps.Budget(select=0.8, refit=0.5))


def test_missing_bounds_void(sim):
    df, _ = sim
    with pytest.warns(dps.PrivacyLeakWarning, match="bounds"):
        res = fit(df, bounds=None)
    assert res.privacy.guarantee == "void" and not res.privacy.bounds_public


@pytest.mark.parametrize("kw,exc,msg", [
    (dict(eps=0), ValueError, "eps must be"),
    (dict(eps=-1), ValueError, "eps must be"),
    (dict(eps=float("nan")), ValueError, "eps must be"),
    (dict(s=0), ValueError, "s must be"),
    (dict(s=50), ValueError, "s = 50 is larger"),
    (dict(method="bogus"), ValueError, "method must be"),
    (dict(ball=dict(r=0)), ValueError, "Ball.r must be"),
    (dict(ball=dict(lam=-1)), ValueError, "Ball.lam must be"),
    (dict(method=dict(name="top_r", R=1)), ValueError, "Method.R must be"),
    (dict(method=dict(name="mistakes", gap_check="x")), ValueError, "gap_check"),
    (dict(budget=dict(delta=0.7)), ValueError, "delta must be"),
    (dict(loss="absolute"), ValueError, "loss must be"),
])
def test_input_errors(sim, kw, exc, msg):
    df, _ = sim
    with pytest.raises(exc, match=msg):
        fit(df, **kw)


def test_data_errors(sim):
    df, _ = sim
    bad = df.copy()
    bad.loc[3, "x2"] = np.nan
    with pytest.raises(ValueError, match="x2"):
        fit(bad)
    with pytest.raises(ValueError, match="nope"):
        dps.dp_best_subset("y ~ nope + x1", df, eps=1, s=1, bounds=(0.5, 0.5))
    txt = df.assign(y=["a"] * len(df))
    with pytest.raises(TypeError):
        fit(txt)


def test_diagnostics_are_separate_and_labelled(sim):
    df, _ = sim
    with pytest.warns(dps.PrivacyLeakWarning, match="NON-PRIVATE"):
        res, diag = fit(df, search=dps.Search(diagnostics=True))
    assert "NON-PRIVATE" in diag.label and len(diag.candidate_scores) > 0
    assert not hasattr(res, "candidate_scores")


def test_result_holds_no_data(sim):
    df, _ = sim
    planted = df.copy()
    planted.loc[17, "x4"] = 0.123456789012345
    planted.loc[5, "y"] = -0.3141592653589793
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = fit(planted)
    blob = pickle.dumps(res)
    for v in (0.123456789012345, -0.3141592653589793):
        assert np.float64(v).tobytes() not in blob
    # the result keeps the public spec only: no X, y, always-in columns or Gram matrix
    assert isinstance(res._predictor, DesignSpec)
    assert not any(hasattr(res._predictor, a) for a in ("X", "y", "forced", "gram", "data"))


def _arrays_in(obj, seen=None, depth=0):
    """Every ndarray / pandas object reachable from obj (attributes, dicts, sequences)."""
    seen = set() if seen is None else seen
    if id(obj) in seen or depth > 12 or isinstance(obj, (str, bytes, int, float, type)):
        return []
    seen.add(id(obj))
    if isinstance(obj, (np.ndarray, pd.Series, pd.DataFrame)):
        return [obj]
    out = []
    if isinstance(obj, dict):
        items = list(obj.values()) + list(obj.keys())
    elif isinstance(obj, (list, tuple, set, frozenset)):
        items = list(obj)
    else:
        items = list(getattr(obj, "__dict__", {}).values())
        items += [getattr(obj, a) for a in getattr(type(obj), "__slots__", ()) if hasattr(obj, a)]
    for item in items:
        out += _arrays_in(item, seen, depth + 1)
    return out


def test_result_and_its_renderings_hold_no_data(sim):
    """Planted values (one inside the bounds, one clipped) appear nowhere: not in the
    pickle, not in summary / tidy / glance / privacy / summary_table; nothing row-sized
    is stored; the stored fields are exactly the released ones."""
    df, _ = sim
    planted = df.copy()
    planted.loc[17, "x4"] = 0.123456789012345     # inside the bound 0.5
    planted.loc[23, "x2"] = 7.777777777777777     # clipped to 0.5: neither value may leak
    planted.loc[5, "y"] = -0.3141592653589793
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = fit(planted, s=3)
        res2 = fit(planted, s=2, refit=False)
    blob = pickle.dumps(res) + pickle.dumps(res2)
    for v in (0.123456789012345, 7.777777777777777, -0.3141592653589793):
        assert np.float64(v).tobytes() not in blob
        assert np.float32(v).tobytes() not in blob
    texts = [res.summary().as_text(), res.summary().as_latex(), res.summary().as_html(),
             res.tidy().to_string(), res.glance().to_string(), repr(res.privacy), repr(res),
             res2.summary().as_text(), res2.tidy().to_string(), res2.glance().to_string()]
    texts += [dps.summary_table([res, res2], fmt=f) for f in ("text", "latex", "html", "markdown")]
    for t in texts:
        for digits in ("123456", "777777", "314159"):
            assert digits not in t
    n = len(planted)
    for r in (res, res2):
        # every stored attribute is reviewed as public; a new one must be added here
        reviewed = {
            "support", "params", "forced", "candidates", "method", "nobs", "formula", "response",
            "privacy", "loss", "s", "eps_select", "eps_refit", "bounds", "r", "lam", "_predictor",
            "_coef_mapped", "_used_columns",
            "response_levels", "loss_params",   # public facts of the loss (classification levels, h)
            "screened",   # the private screen's release (screen=), None without one
            "r_refit",    # the refit's radius: public, from the bounds, s, n and eps_refit
            # inference=True's private releases (noisy moments -> intervals; the noisy
            # selection confidence), each spent from the ledger; None without it
            "inference", "_selection_confidence"}
        assert set(vars(r)) <= reviewed, set(vars(r)) - reviewed
        sizes = [a.shape for a in _arrays_in(r)]
        assert all(len(sh) == 0 or max(sh) < n for sh in sizes), sizes
        assert not hasattr(r, "fittedvalues") and not hasattr(r, "resid")
    # the public description of the bounds holds the user's numbers only
    assert res.bounds["x2"] == (-0.5, 0.5) and res.bounds["y"] == (-0.5, 0.5)


def test_hitters_demo_runs(capsys):
    from dpsubset.studies.demo import main
    main()
    out = capsys.readouterr().out
    assert "released support" in out and "pure" in out


def test_gaussian_refit_option_spends_delta_and_reports_it():
    rng = np.random.default_rng(3)
    df = pd.DataFrame(rng.uniform(-1, 1, size=(200, 6)), columns=list("abcdef"))
    df["y"] = np.clip(df.a - df.b + 0.3 * rng.normal(size=200), -2, 2)
    res = dps.dp_best_subset("y ~ .", df, eps=2.0, s=2, bounds=(1.0, 2.0), budget=dps.Budget(refit_delta=1e-6),
                             random_state=1)
    assert res.privacy.guarantee == "approximate"
    refit = [st for st in res.privacy.stages if st["stage"] == "refit"][0]
    assert refit["delta"] == pytest.approx(1e-6)
    assert res.privacy.delta == pytest.approx(1e-6)
    with pytest.raises(ValueError, match="refit_delta"):
        dps.dp_best_subset("y ~ .", df, eps=2.0, s=2, bounds=(1.0, 2.0), refit=False,
                           budget=dps.Budget(refit_delta=1e-6))
    with pytest.raises(ValueError, match="refit_delta"):
        dps.dp_best_subset("y ~ .", df, eps=2.0, s=2, bounds=(1.0, 2.0), budget=dps.Budget(refit_delta=0.7))
