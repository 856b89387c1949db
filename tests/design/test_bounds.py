"""Codebook bounds (dpsubset/bounds.py): one codebook per data set, any formula."""
import ast
import json
import warnings

import numpy as np
import pandas as pd
import pytest

import dpsubset as dps
from dpsubset.design.codebook import apply_levels, read_codebook
from dpsubset.design.formula import normalise_name
from dpsubset.design.intervals import interval_of
from dpsubset.design.build import build_design
from dpsubset.privacy.leaks import PrivacyLeakWarning

ENV = {"np": np}

# README's public mtcars bounds (what a 1970s car can be, not read off the data)
MTCARS_BOUNDS = dict(cyl=(2, 12), disp=(50, 500), hp=(40, 400), drat=(2, 5.5), wt=(1, 6),
                     qsec=(12, 25), vs=(0, 1), am=(0, 1), gear=(3, 6), carb=(1, 8))


@pytest.fixture(scope="module")
def mtcars_like():
    """32 cars with mtcars' columns, drawn inside the public bounds."""
    rng = np.random.default_rng(32)
    df = pd.DataFrame({c: rng.uniform(lo, hi, 32) for c, (lo, hi) in MTCARS_BOUNDS.items()})
    for c in ("cyl", "vs", "am", "gear", "carb"):
        df[c] = df[c].round()
    df.insert(0, "mpg", 37 - 4 * df["wt"] - 0.02 * df["hp"] + rng.normal(0, 2, 32))
    return df


@pytest.fixture(scope="module")
def hitters():
    return dps.load_hitters().dropna(subset=["Salary"])


# ---------------------------------------------------------------- the examples


def test_hitters_codebook_with_a_small_formula(hitters):
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        res = dps.dp_best_subset("Salary ~ Hits + Years + CRuns", hitters, eps=2, s=1,
                                 bounds=dps.hitters_bounds(), random_state=1)
    assert res.privacy.guarantee == "pure" and res.bounds["Salary"] == (0.0, 3000.0)
    assert res.bounds["Hits"] == (0.0, 300.0) and res.bounds_derived == {}
    assert set(res.bounds_unused) == set(dps.hitters_bounds()) - {"Hits", "Years", "CRuns", "Salary"}
    assert "13 codebook entries not used by this formula: AtBat" in res.summary().as_text()
    # the same codebook as Bounds(x=...), and with y given separately: the same release
    xb = dps.hitters_bounds()
    yb = xb.pop("Salary")
    again = dps.dp_best_subset("Salary ~ Hits + Years + CRuns", hitters, eps=2, s=1,
                               bounds=dps.Bounds(x=xb, y=yb), random_state=1)
    pd.testing.assert_series_equal(again.params, res.params)


@pytest.mark.parametrize("formula", ["mpg ~ . - disp - cyl", "mpg ~ wt + hp"])
def test_readme_mtcars_bounds_with_other_formulas(mtcars_like, formula):
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        res = dps.dp_best_subset(formula, mtcars_like, eps=1, s=1, random_state=1,
                                 bounds=dps.Bounds(x=MTCARS_BOUNDS, y=(5, 50)))
    assert res.privacy.guarantee == "pure"
    used = set(res.candidates)
    assert set(res.bounds_unused) == set(MTCARS_BOUNDS) - used
    assert "disp" in res.bounds_unused and "cyl" in res.bounds_unused


def test_a_typo_is_still_an_error(mtcars_like):
    with pytest.raises(ValueError, match=r"bounds: x names 'wtt', not a column of the data.*Valid names"):
        dps.dp_best_subset("mpg ~ wt", mtcars_like, eps=1, s=1,
                           bounds=dps.Bounds(x={"wt": (1, 6), "wtt": (1, 6)}, y=(5, 50)))


def test_formula_spelling_is_accepted(hitters):
    res = dps.dp_best_subset("Salary ~ Hits + I(Hits**2) + Years", hitters, eps=2, s=1,
                             bounds=dps.Bounds(x={"Hits": (0, 300), "I(Hits**2)": (0, 50000),
                                                  "Years": (0, 30)}, y=(0, 3000)), random_state=0)
    assert res.bounds["I(Hits ** 2)"] == (0.0, 50000.0)    # given, in the formula's spelling
    assert res.bounds_derived == {} and res.bounds_unused == []
    assert normalise_name("I(age**2)") == "I(age ** 2)" == normalise_name(" I( age ** 2 ) ")
    assert normalise_name("x:np.log(z)") == "x:np.log(z)"


def test_transforms_get_derived_bounds_and_say_so(hitters):
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)     # every bound public
        res = dps.dp_best_subset(
            "Salary ~ I(Hits**2) + np.log(Years + 1) + np.sqrt(CRuns) + Hits:Walks + League:Hits "
            "+ I((AtBat - 400) / 100)", hitters, eps=2, s=2, bounds=dps.hitters_bounds(), random_state=0)
    d = res.bounds_derived
    assert d["I(Hits ** 2)"] == (0.0, 90000.0)
    assert d["np.log(Years + 1)"] == pytest.approx((0.0, np.log(31)))
    assert d["np.sqrt(CRuns)"] == pytest.approx((0.0, 50.0))
    assert d["Hits:Walks"] == (0.0, 300.0 * 250.0)
    assert d["League[A]:Hits"] == d["League[N]:Hits"] == (0.0, 300.0)   # a 0/1 dummy times [0, 300]
    assert d["I((AtBat - 400) / 100)"] == pytest.approx((-4.0, 4.0))
    assert all(res.bounds[c] == pytest.approx(iv) for c, iv in d.items())
    text = res.summary().as_text().replace("\n    ", " ")
    assert "Bounds derived from the codebook by interval arithmetic: I(Hits ** 2) in [0, 90000]" in text


def test_derived_response_bound():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.uniform(0, 1, 50), "z": rng.uniform(0, 1, 50), "w": rng.uniform(1, 10, 50)})
    D = build_design("np.log(w) ~ x + z", df, bounds={"x": (0, 1), "z": (0, 1), "w": (1, 10)})
    assert D.spec.bounds_public and D.spec.clip_limits["np.log(w)"] == pytest.approx((0.0, np.log(10)))
    assert D.spec.bounds_derived["np.log(w)"] == pytest.approx((0.0, np.log(10)))


def test_no_derivation_without_a_public_enclosure():
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"y": rng.normal(size=40), "x": rng.uniform(-1, 1, 40)})
    # log of an interval that reaches 0 is refused (tests/design/test_input_privacy.py); a function
    # with no known enclosure: bounds from the data
    for rhs in ("np.log(x + 1)", "np.tanh(x)", "np.log(1 / (x + 1.5))"):
        formula = f"y ~ {rhs}"
        if rhs == "np.log(1 / (x + 1.5))":   # this one does follow: 1/(x + 1.5) in [0.4, 2]
            D = build_design(formula, df, bounds=dps.Bounds(x={"x": (-1, 1)}, y=(-3, 3)))
            assert D.spec.bounds_derived[rhs] == pytest.approx((np.log(0.4), np.log(2)))
            continue
        if rhs == "np.log(x + 1)":
            with pytest.raises(ValueError, match="has no public bound"):
                build_design(formula, df, bounds=dps.Bounds(x={"x": (-1, 1)}, y=(-3, 3)))
            continue
        with pytest.warns(PrivacyLeakWarning, match="taken from the data"):
            D = build_design(formula, df.assign(x=df["x"].clip(-0.9, 0.9)),
                             bounds=dps.Bounds(x={"x": (-1, 1)}, y=(-3, 3)))
        assert D.spec.bounds_derived == {} and D.spec.bounds_unused == ["x"]


# ---------------------------------------------------------------- property: enclosures contain the values

EXPRESSIONS = [
    "x ** 2", "x ** 3", "x ** -1", "x ** 0.5", "x * z", "x / z", "x - z", "-x + 2 * z",
    "(x - 1) / 2", "np.log(x)", "np.log1p(x)", "np.log2(x)", "np.log10(x)", "np.sqrt(x)",
    "np.exp(x)", "np.abs(x)", "np.square(x - z)", "np.power(x, 3)", "I(x * z ** 2)",
    "x * x", "1 / (x * z)", "np.exp(-x ** 2)",
]


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_enclosure_contains_every_value_on_random_data(expr):
    from formulaic.transforms import TRANSFORMS

    env = dict(TRANSFORMS, np=np)
    tree = ast.parse(expr, mode="eval")
    rng = np.random.default_rng(abs(hash(expr)) % 2**32)
    derived = 0
    for _ in range(200):
        ends = np.sort(rng.choice([-5, -1, -0.5, 0, 0.3, 1, 2, 7], 2, replace=False)
                       + rng.uniform(-0.2, 0.2, 2))
        ends2 = np.sort(rng.uniform(-4, 4, 2))
        ivs = {"x": tuple(ends), "z": tuple(ends2)}
        iv = interval_of(tree, ivs, env)
        if iv is None:
            continue
        derived += 1
        # values inside the bounds, the ends included
        x = np.concatenate([rng.uniform(*ivs["x"], 60), ivs["x"]])
        z = np.concatenate([rng.uniform(*ivs["z"], 60), ivs["z"]])
        x, z = np.meshgrid(x, z)
        with np.errstate(all="ignore"):
            vals = eval(compile(tree, "<expr>", "eval"), dict(env, x=x, z=z))
        vals = np.asarray(vals, dtype=float)
        vals = vals[np.isfinite(vals)]
        tol = 1e-9 * max(1.0, abs(iv[0]), abs(iv[1]))
        assert vals.min() >= iv[0] - tol and vals.max() <= iv[1] + tol, (expr, ivs, iv)
    assert derived > 0, f"{expr}: no bound was ever derived"


def test_design_clips_nothing_when_data_lie_within_the_codebook():
    """End to end: a derived bound contains the transform of every row within the bounds."""
    rng = np.random.default_rng(7)
    book = {"a": (-2.0, 3.0), "b": (0.5, 4.0), "y": (-10.0, 10.0)}
    df = pd.DataFrame({"a": rng.uniform(-2, 3, 500), "b": rng.uniform(0.5, 4, 500),
                       "y": rng.uniform(-10, 10, 500)})
    formula = "y ~ I(a ** 2) + a:b + np.log(b) + I(a / b) + poly(a, 3, raw=True)"
    D = build_design(formula, df, bounds=book)
    assert D.spec.bounds_public and len(D.spec.bounds_derived) == 7
    raw = D.spec.model_spec.rhs.get_model_matrix(df)
    for c, (lo, hi) in D.spec.bounds_derived.items():
        col = raw[c].to_numpy()
        assert col.min() >= lo and col.max() <= hi, c


# ---------------------------------------------------------------- item 10: a dummy's interval


def test_a_dummy_shows_its_own_interval(hitters):
    res = dps.dp_best_subset("Salary ~ Hits + League + Division", hitters, eps=2, s=1,
                             bounds=dps.hitters_bounds(), random_state=0, centre=False)
    assert res.bounds["League[T.N]"] == (0.0, 1.0) and res.bounds["Division[T.W]"] == (0.0, 1.0)
    td = res.tidy().set_index("term")
    assert td.loc["League[T.N]", ["clip_lo", "clip_hi"]].tolist() == [0.0, 1.0]
    # the numbers are those of the coding's bound 1 (no map): the same release as before the fix
    assert res._predictor.column_maps["League[T.N]"] == (0.0, 1.0)
    assert res.privacy.guarantee == "pure"
    # centred (the default with a codebook): the dummy keeps its box and is mapped around its
    # released mean, onto a half-width no larger than its coding's
    cen = dps.dp_best_subset("Salary ~ Hits + League + Division", hitters, eps=2, s=1,
                             bounds=dps.hitters_bounds(), random_state=0)
    assert cen.bounds["League[T.N]"] == (0.0, 1.0)
    c, h = cen._predictor.column_maps["League[T.N]"]
    assert 0 <= c <= 1 and h == pytest.approx(max(c, 1 - c))


# ---------------------------------------------------------------- codebook files


def test_read_codebook_csv_and_json(tmp_path):
    csv = tmp_path / "book.csv"
    csv.write_text("column,lo,hi,levels\nage,18,100,\nbmi,10,70,\nsex,,,female|male\n")
    book = read_codebook(csv)
    assert book.bounds == {"age": (18.0, 100.0), "bmi": (10.0, 70.0)}
    assert book.levels == {"sex": ["female", "male"]}
    js = tmp_path / "book.json"
    js.write_text(json.dumps([{"column": "age", "lo": 18, "hi": 100},
                              {"column": "sex", "levels": ["female", "male"]}]))
    assert read_codebook(js).bounds == {"age": (18.0, 100.0)}
    js.write_text(json.dumps({"age": {"lo": 18, "hi": 100}, "sex": {"levels": ["f", "m"]}}))
    assert read_codebook(js).levels == {"sex": ["f", "m"]}


@pytest.mark.parametrize("text,msg", [
    ("column,lo,hi\nage,18,\n", "give both lo and hi"),
    ("column,lo,hi\nage,100,18\n", "lo < hi"),
    ("column,lo,hi\nage,1,2\nage,1,2\n", "listed twice"),
    ("column,lo,hi,levels\nage,,,\n", "give lo and hi, or levels"),
])
def test_read_codebook_errors(tmp_path, text, msg):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=msg):
        read_codebook(path)


def test_apply_levels_names_column_and_count_not_value():
    df = pd.DataFrame({"sex": ["female", "male", "Secret", "male"], "x": [1, 2, 3, 4]})
    with pytest.raises(ValueError, match=r"'sex' has 1 row\(s\) with a value not among the 2 levels") as e:
        apply_levels(df, {"sex": ["female", "male"]})
    assert "Secret" not in str(e.value)
    out = apply_levels(df.iloc[[0, 1, 3]], {"sex": ["female", "male"], "absent": ["a"]})
    assert list(out["sex"].cat.categories) == ["female", "male"]
