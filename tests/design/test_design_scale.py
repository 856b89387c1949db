"""The direct route of build_design (plain numeric columns, no formulaic materialisation)
gives exactly what the formulaic route gives: matrices, names, bounds, clip intervals,
leaks and warnings."""
import warnings

import numpy as np
import pandas as pd
import pytest

import dpsubset.design.formula as formula_mod
import dpsubset.design.frames as frames_mod
import dpsubset.design.materialise as materialise_mod
from dpsubset import Bounds
from dpsubset.design.build import build_design


def _mixed_frame(n=60, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "y": rng.normal(size=n) * 3,
        "a": rng.normal(size=n) * 2,
        "k": rng.integers(-5, 6, size=n),          # int64
        "b": rng.uniform(-1, 4, size=n),
        "u": rng.integers(0, 9, size=n).astype(np.uint8),
        "f32": rng.normal(size=n).astype(np.float32),
    })


def _float_frame(n=50, p=7, seed=1):
    rng = np.random.default_rng(seed)
    cols = ["y"] + [f"x{j}" for j in range(p)]
    return pd.DataFrame(rng.normal(size=(n, p + 1)) * 2, columns=cols)


def _formulaic_only(monkeypatch):
    monkeypatch.setattr(materialise_mod, "_plain_columns", lambda *a, **k: None)
    monkeypatch.setattr(formula_mod, "_parse_plain_dot", lambda *a, **k: None)


def _build(formula, data, bounds, keep):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d = build_design(formula, data, bounds, keep)
    return d, [(w.category, str(w.message)) for w in caught]


def _assert_same(d1, w1, d2, w2):
    for name in ("X", "y", "forced", "x_bounds", "forced_bounds"):
        a, b = getattr(d1, name), getattr(d2, name)
        assert a.shape == b.shape, name
        assert np.array_equal(a, b), name
        assert a.flags["C_CONTIGUOUS"] and b.flags["C_CONTIGUOUS"]
    for name in ("candidate_names", "forced_names", "response_name", "column_maps", "clip_limits",
                 "has_intercept", "bounds_public", "leaks", "rhs_variables"):
        assert getattr(d1.spec, name) == getattr(d2.spec, name), name
    assert d1.b_y == d2.b_y and d1.n == d2.n and d1.data.learned_bounds == d2.data.learned_bounds
    assert w1 == w2


CASES = [
    ("y ~ .", (0.5, 2.0), None),
    ("y ~ 0 + .", (1.5, 2.0), None),
    ("y ~ . - 1", Bounds(x={"a": (-1, 3), "k": 4}, default=(0, 2), y=(-5, 5)), None),
    ("y ~ a + k + b", Bounds(x={"a": (-1, 3), "k": (-2, 2)}, default=1.0, y=3.0), ["k"]),
    ("y ~ b + a - 1", Bounds(x={"a": (-1, 3)}, default=(-2, 5), y=(-5, 5)), "a"),
    ("y ~ a + u + f32", None, None),            # bounds from the data: warnings and leaks
    ("y ~ .", Bounds(x={"a": 2.0}, y=4.0), None),  # some bounds from the data
]


@pytest.mark.parametrize("formula,bounds,keep", CASES)
@pytest.mark.parametrize("frame", ["mixed", "float", "float in two blocks"])
def test_direct_route_equals_formulaic_route(monkeypatch, formula, bounds, keep, frame):
    data = _mixed_frame() if frame == "mixed" else _float_frame()
    if frame == "float in two blocks":  # not a view of one block: read through pandas
        y = data.pop("y")
        data.insert(0, "y", y)
        assert not frames_mod._single_float_block(data)
    elif frame == "float":
        assert frames_mod._single_float_block(data)
    if frame != "mixed":
        formula = formula.replace("a + k + b", "x0 + x1 + x2").replace("b + a", "x2 + x0") \
            .replace("a + u + f32", "x3 + x1 + x4")
        keep = {"k": ["x1"], "a": "x0"}.get(keep if isinstance(keep, str) else (keep or [None])[0], None) \
            if keep else None
        if isinstance(bounds, Bounds) and isinstance(bounds.x, dict):
            bounds = Bounds(x={{"a": "x0", "k": "x1"}[k]: v for k, v in bounds.x.items()},
                            y=bounds.y, default=bounds.default)
    d_direct, w_direct = _build(formula, data, bounds, keep)
    assert d_direct.spec.model_spec is None  # the direct route was taken
    with monkeypatch.context() as m:
        _formulaic_only(m)
        d_form, w_form = _build(formula, data, bounds, keep)
    assert d_form.spec.model_spec is not None
    _assert_same(d_direct, w_direct, d_form, w_form)
    # predictions go through the same public maps
    new = data.iloc[:9].copy()
    new[new.columns[1]] *= 10  # beyond the bounds: clipped the same way
    assert np.array_equal(d_direct.spec.transform_new(new), d_form.spec.transform_new(new))


def test_direct_route_gram_matches_matrices():
    data = _mixed_frame(n=200)
    d = build_design("y ~ .", data, (1.0, 2.0))
    g = build_design("y ~ .", data, (1.0, 2.0), gram=True)
    assert g.X.shape == (0, d.X.shape[1]) and g.forced.shape == (0, d.forced.shape[1])
    Z = np.hstack([d.forced, d.X, d.y[:, None]])
    assert g.gram.n == d.n
    np.testing.assert_allclose(g.gram.ZtZ, Z.T @ Z, rtol=1e-13, atol=1e-12)


def test_formulas_outside_the_direct_route_still_use_formulaic():
    data = _mixed_frame()
    data["c"] = pd.Categorical(np.where(data["a"] > 0, "p", "q"), categories=["p", "q"])
    data["flag"] = data["b"] > 1
    for formula in ["y ~ a + np.log(u + 1)", "y ~ a:b", "y ~ a + c", "y ~ .", "y ~ a + flag"]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # np.log needs a bound of its own under a scalar bound (its variable's domain is not known)
            d = build_design(formula, data, Bounds(x={"np.log(u + 1)": 5.0}, default=5.0, y=5.0)
                             if "log" in formula else (5.0, 5.0))
        assert d.spec.model_spec is not None, formula


def test_plain_dot_parse_matches_formulaic():
    cols = ["a", "y", "b", "c"]
    dtypes = {c: np.dtype(float) for c in cols}
    for f in ["y ~ .", "y ~ 0 + .", "y ~ . - 1", "y ~ . + 0", "y ~ 1 + .", "y~.-1"]:
        light = formula_mod._parse_plain_dot(f, cols, dtypes)
        full = formula_mod._parse_formula(f, cols)
        assert [str(t) for t in light.rhs] == [str(t) for t in full.rhs], f
        assert str(light.lhs) == str(full.lhs)
    for f in ["y ~ . - b", "y ~ -1 + .", "y ~ . + a:b", "log(y) ~ ."]:
        assert formula_mod._parse_plain_dot(f, cols, dtypes) is None, f


@pytest.mark.parametrize("library", ["pyarrow", "polars"])
def test_arrow_and_polars_tables_give_the_pandas_design(library):
    """Tables with a ``to_pandas()`` method are converted once (pyarrow: Table; polars:
    DataFrame, which needs pyarrow) and then take the same route as pandas."""
    lib = pytest.importorskip(library)
    df = _mixed_frame()
    table = lib.Table.from_pandas(df, preserve_index=False) if library == "pyarrow" else lib.from_pandas(df)
    for formula, bounds in [("y ~ .", (1.0, 2.0)), ("y ~ 0 + a + k", Bounds(x={"a": (-1, 3)}, default=2.0, y=3.0))]:
        d_tab, w_tab = _build(formula, table, bounds, None)
        d_pd, w_pd = _build(formula, df, bounds, None)
        _assert_same(d_tab, w_tab, d_pd, w_pd)
        assert d_tab.spec.model_spec is None  # numeric columns stay numpy dtypes: the direct route


def test_plain_dot_never_imports_formulaic():
    # "y ~ ." on numeric columns takes the light parse and the direct route; a first call
    # there no longer pays formulaic's import (half a second, pyarrow's included). Run
    # in a fresh interpreter where any import of formulaic fails.
    import subprocess
    import sys
    code = (
        "import sys\n"
        "import numpy as np, pandas as pd\n"
        "import dpsubset\n"
        "sys.modules['formulaic'] = None\n"
        "rng = np.random.default_rng(0)\n"
        "df = pd.DataFrame(rng.uniform(-0.5, 0.5, (200, 8)), columns=['y'] + [f'x{j}' for j in range(7)])\n"
        "for f in ['y ~ .', 'y ~ 0 + .']:\n"
        "    r = dpsubset.dp_best_subset(f, df, eps=2.0, s=2, bounds=(0.5, 0.5), random_state=0)\n"
        "    assert len(r.predict(df)) == 200\n"
        "    assert ('Intercept' in r.summary().as_text()) == (f == 'y ~ .')\n"
        "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
