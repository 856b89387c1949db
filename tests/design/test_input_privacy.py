"""Inputs that could tell neighbours apart: the codebook, the transforms and the messages.

A pure or approximate guarantee covers every output the caller sees, errors included.
So a row outside the codebook's box must be clipped, never refused (the refusal would
tell the data set from its neighbour without that row); a transform that is undefined
or unbounded somewhere in the box is refused from the codebook and the formula alone,
before the data are read; mapped values stay in [-1, 1]; absurd codebooks and budgets
are clear errors naming the setting; and messages never quote a value of the data.
(docs/guide/privacy-caveats.md, "Rows outside the box, and errors that depend on the data")
"""
import json
import warnings

import numpy as np
import pandas as pd
import pytest

import dpsubset as dps
from dpsubset import Bounds, dp_best_subset
from dpsubset.design.codebook import read_codebook
from dpsubset.design.build import build_design
from dpsubset.privacy.leaks import PrivacyLeakWarning

BOOK = {"a": (-1, 1), "b": (1, 4), "c": (-5, -1), "y": (-2, 2)}


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.uniform(-1, 1, n), "b": rng.uniform(1, 4, n), "c": rng.uniform(-5, -1, n),
                       "d": rng.uniform(0.5, 4, n)})
    df["y"] = np.clip(df["a"] + 0.3 * df["c"] / 5, -2, 2)
    return df


def _release(formula, data, bounds, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # every bound public
        warnings.simplefilter("ignore", dps.LowUtilityWarning)
        return dp_best_subset(formula, data, eps=1, s=1, bounds=bounds, random_state=1, **kw)


def _replace(df, col, value, row=0):
    out = df.copy()
    out.loc[row, col] = value
    return out


# ---------------------------------------------------------------- item 1: rows outside the box are clipped

OWN = dict(BOOK, d=(0, 4), **{"np.log(d)": (-5, 2)})

OUTSIDE = [  # (formula, codebook, column, value of the one replaced row)
    ("y ~ a + np.log(b) + c", BOOK, "b", 0.0),
    ("y ~ a + np.sqrt(b) + c", BOOK, "b", -1.0),
    ("y ~ a + b + I(1/c)", BOOK, "c", 0.0),
    ("y ~ I(a**2) + b + c", BOOK, "a", 1e200),
    ("y ~ a + b + np.exp(c)", BOOK, "c", 1000.0),
    ("y ~ a + b + np.log(d)", OWN, "d", 0.0),           # a term with its own interval, undefined at 0
    ("y ~ a:b + c", BOOK, "b", 1e300),                  # an interaction of raw columns
    ("y ~ a + b + poly(c, 2, raw=True)", BOOK, "c", 1e200),
]


@pytest.mark.parametrize("formula,book,col,value", OUTSIDE)
def test_a_row_outside_the_box_releases_like_its_neighbour(formula, book, col, value):
    D = _data()
    res = _release(formula, D, book)
    res2 = _release(formula, _replace(D, col, value), book)
    assert res.privacy.guarantee == res2.privacy.guarantee == "pure"
    assert res.candidates == res2.candidates and res.privacy.sensitivity == res2.privacy.sensitivity


@pytest.mark.parametrize("formula,book,col,value", OUTSIDE)
def test_the_outside_row_is_clipped_before_the_transform(formula, book, col, value):
    """The design of the neighbour differs from the base in the replaced row only, and
    that row is the transform of the raw value clipped to its interval."""
    D = _data()
    lo, hi = book[col]
    base = build_design(formula, D, bounds=book)
    out = build_design(formula, _replace(D, col, value), bounds=book)
    clipped = build_design(formula, _replace(D, col, min(max(value, lo), hi)), bounds=book)
    np.testing.assert_array_equal(out.X[1:], base.X[1:])
    np.testing.assert_array_equal(out.X, clipped.X)
    assert np.all(np.abs(out.X) <= 1) and np.all(np.abs(out.y) <= 1)


def test_predictions_clip_raw_columns_too():
    D = _data()
    res = _release("y ~ a + np.log(b) + c", D, BOOK)
    new = D.iloc[:3].copy()
    new.loc[new.index[0], "b"] = 0.0
    pred = res.predict(new)
    assert np.all(np.isfinite(pred))
    assert pred[0] == pytest.approx(res.predict(_replace(D.iloc[:3], "b", 1.0))[0])


def test_an_own_interval_maps_infinities_to_its_ends_and_nan_to_its_midpoint():
    D = _data()
    D["x"] = np.linspace(0.5, 3.5, len(D))
    book = dict(BOOK, **{"np.sqrt(x)": (0, 2), "np.log(x)": (-1, 1.5)})
    # x has no interval of its own: np.sqrt(-1) is nan, np.log(0) is -inf
    bad = _replace(_replace(D, "x", -1.0, row=0), "x", 0.0, row=1)
    Dm = build_design("y ~ a + np.sqrt(x) + np.log(x)", bad, bounds=book)
    j_sqrt, j_log = Dm.spec.candidate_names.index("np.sqrt(x)"), Dm.spec.candidate_names.index("np.log(x)")
    assert Dm.X[0, j_sqrt] == 0.0           # nan -> the midpoint of [0, 2], mapped to 0
    assert Dm.X[1, j_log] == -1.0           # -inf -> the lower end, mapped to -1
    assert np.all(np.isfinite(Dm.X)) and Dm.spec.bounds_public


def test_a_scalar_bound_of_the_term_is_its_own_bound():
    D = _data()
    # given to the term itself: its fixed rule (-inf to the lower end) applies
    Dm = build_design("y ~ a + np.log(b)", _replace(D, "b", 0.0),
                      bounds=Bounds(x={"np.log(b)": 1.0}, default=1.0, y=2.0))
    assert Dm.X[0, Dm.spec.candidate_names.index("np.log(b)")] == -1.0 and Dm.spec.bounds_public
    # the scalar bound of every column says nothing of b's domain: refused (issue 39),
    # whatever the data, before they are read
    for value in (0.0, -1.0, 2.0):
        with pytest.raises(ValueError, match="a scalar bound clips the model's column, not 'b'"):
            build_design("y ~ a + np.log(b)", _replace(D, "b", value), bounds=(1.0, 2.0))


@pytest.mark.parametrize("formula,book,term,var", [
    ("y ~ a + np.log(b)", dict(BOOK, b=(0, 4)), "np.log(b)", "b"),
    ("y ~ a + np.sqrt(b)", dict(BOOK, b=(-1, 4)), "np.sqrt(b)", "b"),
    ("y ~ a + I(1/c)", dict(BOOK, c=(-5, 1)), "I(1 / c)", "c"),
    ("y ~ a + np.exp(c)", dict(BOOK, c=(-5, 1000)), "np.exp(c)", "c"),
    ("y ~ b + I(a**3)", dict(BOOK, a=(0, 1e150)), "I(a ** 3)", "a"),
    ("y ~ b + a:np.log(c + 5)", BOOK, "a:np.log(c + 5)", "c"),
    ("y ~ b + poly(a, 3, raw=True)", dict(BOOK, a=(-1, 1e150)), "poly(a, 3, raw=True)", "a"),
])
def test_a_transform_undefined_on_the_box_is_refused_before_the_data(monkeypatch, formula, book, term, var):
    import dpsubset.design.materialise as design

    def no_data(*args, **kwargs):
        raise AssertionError("the data were read")

    monkeypatch.setattr(design, "_materialise_formulaic", no_data)
    with pytest.raises(ValueError) as err:
        build_design(formula, _data(), bounds=book)
    msg = str(err.value)
    assert f"'{term}'" in msg and f"'{var}'" in msg and "its own interval" in msg, msg
    assert "before" in msg


def test_a_response_undefined_on_the_box_is_refused():
    D = _data()
    with pytest.raises(ValueError, match=r"response 'np.log\(d\)'.*'d'.*\[0, 4\].*bounds y"):
        build_design("np.log(d) ~ a + b", D, bounds=dict(BOOK, d=(0, 4)))
    # with a bound of its own, the undefined value is mapped: -inf to the lower end
    Dm = build_design("np.log(d) ~ a + b", _replace(D, "d", 0.0), bounds=Bounds(x=dict(BOOK, d=(0, 4)), y=(-3, 2)))
    assert Dm.y[0] == -1.0


def test_an_undefined_term_with_a_column_entry_is_not_refused():
    """The post-materialisation check: an entry for the term's only column counts."""
    D = _data()
    Dm = build_design("y ~ a + np.log(b)", _replace(D, "b", 0.0), bounds=dict(BOOK, b=(0, 4), **{"np.log(b)": (-3, 2)}))
    assert Dm.X[0, 1] == -1.0


def test_unknown_functions_still_take_their_bound_from_the_data():
    """A function without a known enclosure cannot be checked: it is not refused, its
    bound is learned and the guarantee void (as before)."""
    D = _data()
    with pytest.warns(PrivacyLeakWarning, match="taken from the data"):
        Dm = build_design("y ~ a + np.tanh(b)", D, bounds=BOOK)
    assert not Dm.spec.bounds_public


def test_a_learned_bound_with_non_finite_values_says_one_row():
    D = _data()
    with pytest.raises(ValueError, match=r"'np.log\(x\)' \(1 row\)") as err:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            build_design("y ~ a + np.log(x)", D.assign(x=np.where(D.index == 0, 0.0, 1.0)), bounds=BOOK)
    assert "1 rows" not in str(err.value)


# ---------------------------------------------------------------- item 3: mapped values in [-1, 1]


def test_a_map_near_the_end_of_float_precision_stays_in_the_unit_interval():
    rng = np.random.default_rng(0)
    lo = 2.0 ** 53
    df = pd.DataFrame({"x": lo + rng.choice([0.0, 1.0, 2.0], 30), "z": rng.uniform(-1, 1, 30),
                       "y": rng.uniform(-1, 1, 30)})
    D = build_design("y ~ x + z", df, Bounds(x={"x": (lo, lo + 2), "z": (-1, 1)}, y=(-1, 1)))
    assert np.abs(D.X).max() <= 1.0 and D.X[:, 0].max() == 1.0
    c, h = D.spec.column_maps["x"]
    assert (lo + 2 - c) / h <= 1.0 and (lo - c) / h >= -1.0
    new = pd.DataFrame({"x": [lo - 1e6, lo, lo + 2, lo + 1e6], "z": [0.0] * 4})
    assert np.abs(D.spec.transform_new(new)).max() <= 1.0


def test_ordinary_intervals_keep_their_maps():
    D = build_design("y ~ x + z", pd.DataFrame({"x": [1.0, 2.0, 3.0], "z": [0.0, 1.0, 0.5], "y": [0.0, 1.0, 2.0]}),
                     Bounds(x={"x": (0, 250), "z": (-10, 2)}, y=(0.1, 0.7)))
    assert D.spec.column_maps["x"] == (125.0, 125.0) and D.spec.column_maps["z"] == (-4.0, 6.0)
    assert D.spec.column_maps["y"] == ((0.1 + 0.7) / 2, (0.7 - 0.1) / 2)


# ---------------------------------------------------------------- item 4: absurd codebooks and budgets


@pytest.mark.parametrize("bounds,where", [
    (lambda: {"a": (-1, 1), "b": (1, 4), "c": (-5, -1), "y": (-1e308, 1e308)}, r"bounds x\['y'\]"),
    (lambda: Bounds(x={"a": (-1, 1), "b": (1, 4), "c": (-5, -1)}, y=(-1e308, 1e308)), "bounds y"),
    (lambda: dict(BOOK, a=(1e308, 1.7e308)), r"bounds x\['a'\]"),
    (lambda: dict(BOOK, a=(0, 5e-324)), r"bounds x\['a'\]"),
    (lambda: dict(BOOK, a=(0, 1e-160)), r"bounds x\['a'\]"),
    (lambda: (1e200, 1.0), "bounds x"),
    (lambda: (1.0, 1e-200), "bounds y"),
    (lambda: Bounds(x=BOOK, default=1e300), "bounds default"),
])
def test_absurd_bounds_are_refused_naming_the_setting(bounds, where):
    with pytest.raises(ValueError, match=where + r".*(1e\+150|1e-150)"):
        dp_best_subset("y ~ a + b + c", _data(), eps=1, s=1, bounds=bounds())


def test_an_interval_for_a_categorical_column_is_refused():
    D = _data().assign(g=lambda f: np.where(f.index % 2, "u", "v"))
    D["h"] = pd.Categorical(np.where(D.index % 3, "p", "q"), categories=["p", "q"])
    with pytest.raises(ValueError, match=r"bounds x\['g'\].*'g' is not numeric.*levels"):
        build_design("y ~ a + b + C(g, levels=['u', 'v'])", D, bounds=dict(BOOK, g=(0, 10)))
    with pytest.raises(ValueError, match=r"bounds x\['h'\].*'h' is not numeric"):
        build_design("y ~ a + b + h", D, bounds=dict(BOOK, h=(0, 10)))
    # a dummy column named explicitly: its coding's range is fine, another interval is not
    ok = build_design("y ~ a + b + h", D, bounds=dict(BOOK, **{"h[T.q]": (0, 1)}))
    assert set(np.unique(ok.X[:, 2])) == {-1.0, 1.0}
    with pytest.raises(ValueError, match=r"bounds x\['h\[T.q\]'\].*coding.*\[0, 1\]"):
        build_design("y ~ a + b + h", D, bounds=dict(BOOK, **{"h[T.q]": (0, 10)}))


def test_an_absurd_budget_is_refused():
    with pytest.raises(ValueError, match=r"eps = 1e\+308.*eps <= 1e\+06"):
        dp_best_subset("y ~ a + b + c", _data(), eps=1e308, s=1, bounds=BOOK)
    res = dp_best_subset("y ~ a + b + c", _data(), eps=1e6, s=1, bounds=BOOK, random_state=0)
    assert res.privacy.eps == 1e6


# ---------------------------------------------------------------- item 8: messages


def test_a_text_column_with_a_string_dtype_is_categorical_not_a_crash():
    D = _data()
    D["t"] = pd.Series(np.where(D.index % 2, "secret_u", "secret_v")).astype("string")
    with pytest.warns(PrivacyLeakWarning, match="categorical variable 't'"):
        Dm = build_design("y ~ a + t", D, bounds=BOOK)
    assert Dm.spec.candidate_names == ["a", "t[T.secret_v]"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        res = dp_best_subset("y ~ a + t", D, eps=1, s=1, bounds=BOOK, random_state=0)
    assert np.all(np.isfinite(res.predict(D.iloc[:3])))   # new data with the same dtype


def test_a_dask_frame_with_a_text_column_names_the_column_not_a_value():
    dd = pytest.importorskip("dask.dataframe")
    D = _data()
    D["t"] = np.where(D.index % 2, "secret_u", "secret_v")
    ddf = dd.from_pandas(D, npartitions=2)
    with pytest.raises(ValueError) as err:
        dp_best_subset("y ~ a + t", ddf, eps=1, s=1, bounds=BOOK)
    msg = str(err.value)
    assert "'t'" in msg and "secret" not in msg and "could not convert" not in msg
    with pytest.raises(ValueError) as err:
        dp_best_subset("y ~ a + b", dd.from_pandas(D.assign(b=D["b"].astype(str)), npartitions=2),
                       eps=1, s=1, bounds=BOOK)
    assert "'b'" in str(err.value) and "could not convert" not in str(err.value)


def test_a_dask_partition_with_a_row_outside_the_box_releases():
    dd = pytest.importorskip("dask.dataframe")
    import dask

    D = _data()
    with dask.config.set(scheduler="synchronous"):
        on_dask = dp_best_subset("y ~ a + np.log(b) + c", dd.from_pandas(_replace(D, "b", 0.0), npartitions=2),
                                 eps=1, s=1, bounds=BOOK, random_state=3)
    on_pandas = dp_best_subset("y ~ a + np.log(b) + c", _replace(D, "b", 1.0), eps=1, s=1, bounds=BOOK,
                               random_state=3, centre=False)  # the Dask route is not centred
    assert on_dask.support == on_pandas.support
    np.testing.assert_allclose(on_dask.params.to_numpy(), on_pandas.params.to_numpy(), rtol=1e-8, atol=1e-10)


def test_a_missing_codebook_file_is_a_clear_error(tmp_path):
    path = tmp_path / "nope.csv"
    with pytest.raises(FileNotFoundError, match=r"codebook .*nope.csv.*no such file"):
        read_codebook(path)
    js = tmp_path / "book.json"
    js.write_text(json.dumps({"a": {"lo": 0, "hi": 1}}))
    assert read_codebook(js).bounds == {"a": (0.0, 1.0)}
