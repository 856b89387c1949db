"""Tests of dpsubset.design (build_design and its steps): formula -> clipped, publicly mapped matrices."""
import warnings

import numpy as np
import pandas as pd
import pytest

from dpsubset.design.build import Bounds, Design, as_bounds, build_design
from dpsubset.privacy.leaks import PrivacyLeakWarning

LEVELS = '["u", "v", "w"]'


@pytest.fixture
def mixed():
    rng = np.random.default_rng(0)
    n = 40
    return pd.DataFrame({
        "y": rng.normal(size=n),
        "x1": rng.uniform(-0.4, 0.4, n),
        "x2": rng.uniform(-0.4, 0.4, n),
        "b": rng.choice(["u", "v", "w"], n),
        "c": rng.random(n) > 0.5,
        "d": pd.Categorical(rng.choice(["p", "q"], n), categories=["p", "q", "r"]),
    })


@pytest.fixture
def linear():
    """A known linear model whose values lie well inside the public intervals."""
    rng = np.random.default_rng(1)
    n = 200
    df = pd.DataFrame({"x1": rng.uniform(10, 20, n), "x2": rng.uniform(-5, 1, n),
                       "g": rng.choice(["a", "b"], n)})
    df["y"] = 3 + 2 * df.x1 - 4 * df.x2 + 1.5 * (df.g == "b") + rng.normal(size=n)
    return df


LINEAR_BOUNDS = Bounds(x={"x1": (0, 30), "x2": (-10, 2)}, y=(-100, 100))


def quiet_build(*args, **kwargs):
    """build_design, failing the test on any PrivacyLeakWarning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        return build_design(*args, **kwargs)


def leak_messages(record):
    return [str(w.message) for w in record if issubclass(w.category, PrivacyLeakWarning)]


# ----------------------------------------------------------------------------- formula structure


def test_dot_expands_to_all_other_columns_with_intercept_forced(mixed):
    with pytest.warns(PrivacyLeakWarning):
        D = build_design("y ~ .", mixed, bounds=(0.5, 3.0))
    assert D.spec.candidate_names == ["x1", "x2", "b[T.v]", "b[T.w]", "c", "d[T.q]", "d[T.r]"]
    assert D.spec.forced_names == ["Intercept"]
    assert D.spec.has_intercept
    assert D.spec.response_name == "y"
    assert D.X.shape == (40, 7) and D.forced.shape == (40, 1) and D.y.shape == (40,)
    np.testing.assert_array_equal(D.forced[:, 0], 1.0)
    np.testing.assert_array_equal(D.forced_bounds, [1.0])
    assert D.n == 40
    assert isinstance(D, Design)


@pytest.mark.parametrize("formula", ["y ~ 0 + .", "y ~ x1 + x2 - 1"])
def test_formulas_without_intercept(mixed, formula):
    D = quiet_build(formula, mixed[["y", "x1", "x2"]], bounds=(0.5, 3.0))
    assert not D.spec.has_intercept
    assert D.spec.forced_names == [] and D.forced.shape == (40, 0)
    assert D.spec.candidate_names == ["x1", "x2"]


def test_no_intercept_interval_is_scaled_not_shifted(linear):
    D = quiet_build("y ~ 0 + x1 + x2", linear, bounds=LINEAR_BOUNDS)
    assert D.spec.column_maps["x1"] == (0.0, 30.0)
    assert D.spec.column_maps["x2"] == (0.0, 10.0)
    assert D.spec.column_maps["y"] == (0.0, 100.0)
    np.testing.assert_allclose(D.X[:, 0], linear.x1 / 30.0)
    np.testing.assert_array_equal(D.x_bounds, [1.0, 1.0])


# ----------------------------------------------------------------------------- categorical variables


def test_string_variable_expands_to_dummies_and_warns_naming_it(mixed):
    with pytest.warns(PrivacyLeakWarning, match=r"categorical variable 'b'.*levels.*C\(b, levels=") as rec:
        D = build_design("y ~ x1 + b", mixed, bounds=(0.5, 3.0))
    assert len(leak_messages(rec)) == 1
    assert D.spec.candidate_names == ["x1", "b[T.v]", "b[T.w]"]
    np.testing.assert_array_equal(D.X[:, 1], (mixed.b == "v").astype(float))
    np.testing.assert_array_equal(D.X[:, 2], (mixed.b == "w").astype(float))
    assert any("'b'" in leak for leak in D.spec.leaks)
    assert D.spec.bounds_public  # a formula leak, not a bound taken from the data


def test_levels_in_formula_or_categorical_dtype_do_not_warn(mixed):
    D = quiet_build(f"y ~ x1 + C(b, levels={LEVELS}) + d + C(d)", mixed,
                    bounds=Bounds(x={"x1": 0.5}, y=3.0))
    assert D.spec.leaks == [] and D.spec.bounds_public
    assert "d[T.r]" in D.spec.candidate_names  # an unused category is still a column: it is public
    # dummies get their public bound 1 without the user naming them
    bounds = dict(zip(D.spec.candidate_names, D.x_bounds))
    assert bounds["d[T.q]"] == 1.0 and bounds["C(d)[T.r]"] == 1.0
    assert bounds["x1"] == 0.5


def test_bool_column_is_a_public_dummy(mixed):
    D = quiet_build("y ~ x1 + c", mixed, bounds=Bounds(x={"x1": 0.5}, y=3.0))
    np.testing.assert_array_equal(D.X[:, 1], mixed.c.astype(float))
    assert D.x_bounds[1] == 1.0 and D.spec.bounds_public


def test_C_of_a_bool_learns_its_levels(mixed):
    with pytest.warns(PrivacyLeakWarning, match="categorical variable 'c'"):
        build_design("y ~ C(c)", mixed, bounds=(0.5, 3.0))


def test_value_outside_declared_levels_is_an_error(mixed):
    with pytest.raises(ValueError, match="levels"):
        build_design('y ~ x1 + C(b, levels=["u", "v"])', mixed, bounds=(0.5, 3.0))


# ----------------------------------------------------------------------------- transforms that learn from the data


@pytest.mark.parametrize("term", ["center(x1)", "scale(x1)", "standardize(x1)", "poly(x1, 2)",
                                  "bs(x1, df=4)", "cr(x1, df=4)"])
def test_stateful_transforms_warn_naming_the_term(mixed, term):
    with pytest.warns(PrivacyLeakWarning, match=r"term '" + term.replace("(", r"\(").replace(")", r"\)")):
        D = build_design(f"y ~ x2 + {term}", mixed, bounds=(0.5, 3.0))
    assert any(term in leak for leak in D.spec.leaks)


@pytest.mark.parametrize("term", ["poly(x1, 2, raw=True)", "bs(x1, knots=[0.0], lower_bound=-1, upper_bound=1)",
                                  "np.log(np.abs(x1) + 1)", "I(x1 ** 2)"])
def test_row_wise_transforms_with_public_constants_do_not_warn(mixed, term):
    D = quiet_build(f"y ~ x2 + {term}", mixed, bounds=(0.5, 3.0))
    assert D.spec.leaks == []


@pytest.mark.parametrize("term", ["np.cumsum(x1)", "x1.rank()"])
def test_row_mixing_transforms_warn(mixed, term):
    with pytest.warns(PrivacyLeakWarning, match="several rows"):
        build_design(f"y ~ x2 + {term}", mixed, bounds=(0.5, 3.0))


# ----------------------------------------------------------------------------- bounds


def test_scalar_bounds_clip_without_rescaling(mixed):
    df = mixed[["y", "x1", "x2"]].copy()
    df.loc[0, "x1"] = 7.0
    df.loc[1, "x1"] = -7.0
    df.loc[2, "y"] = 10.0
    D = quiet_build("y ~ x1 + x2", df, bounds=(0.5, 3.0))
    expected = df.x1.clip(-0.5, 0.5).to_numpy()
    np.testing.assert_array_equal(D.X[:, 0], expected)
    assert D.X[0, 0] == 0.5 and D.X[1, 0] == -0.5
    np.testing.assert_array_equal(D.X[3:, 0], df.x1.to_numpy()[3:])  # untouched inside the bound
    np.testing.assert_array_equal(D.y, df.y.clip(-3, 3).to_numpy())
    np.testing.assert_array_equal(D.x_bounds, [0.5, 0.5])
    assert D.b_y == 3.0
    assert D.spec.column_maps["x1"] == (0.0, 1.0) and D.spec.column_maps["y"] == (0.0, 1.0)


def test_scalar_bound_leaves_dummies_at_their_coding_bound(mixed):
    D = quiet_build("y ~ x1 + d + c", mixed, bounds=(0.5, 3.0))
    assert D.spec.candidate_names == ["x1", "d[T.q]", "d[T.r]", "c"]
    np.testing.assert_array_equal(D.x_bounds, [0.5, 1.0, 1.0, 1.0])
    np.testing.assert_array_equal(D.X[:, 1], (mixed.d == "q").astype(float))  # not clipped to 0.5
    # naming a dummy overrides its coding bound
    D = quiet_build("y ~ x1 + d", mixed, bounds=Bounds(x={"x1": 0.5, "d[T.q]": (0, 1)}, y=3.0))
    np.testing.assert_array_equal(D.x_bounds, [0.5, 1.0, 1.0])
    assert D.spec.column_maps["d[T.q]"] == (0.5, 0.5)
    assert set(np.unique(D.X[:, 1])) == {-1.0, 1.0}


def test_interval_bounds_map_to_unit_interval(linear):
    D = quiet_build('y ~ x1 + x2 + C(g, levels=["a", "b"])', linear, bounds=LINEAR_BOUNDS)
    assert D.spec.column_maps["x1"] == (15.0, 15.0)
    assert D.spec.column_maps["x2"] == (-4.0, 6.0)
    assert D.spec.column_maps["y"] == (0.0, 100.0)
    np.testing.assert_allclose(D.X[:, 0], (linear.x1 - 15) / 15)
    np.testing.assert_allclose(D.y, linear.y / 100)
    assert np.abs(D.X).max() <= 1 and np.abs(D.y).max() <= 1
    np.testing.assert_array_equal(D.x_bounds, [1.0, 1.0, 1.0])
    assert D.b_y == 1.0
    # the endpoints of an interval map to -1 and +1
    new = pd.DataFrame({"x1": [0.0, 30.0], "x2": [-10.0, 2.0], "g": ["a", "b"]})
    np.testing.assert_allclose(D.spec.transform_new(new)[:, 1:3], [[-1, -1], [1, 1]])


@pytest.mark.parametrize("formula", ['y ~ x1 + x2 + C(g, levels=["a", "b"])', "y ~ 0 + x1 + x2"])
def test_to_original_scale_recovers_least_squares_on_raw_data(linear, formula):
    import formulaic

    D = quiet_build(formula, linear, bounds=LINEAR_BOUNDS)
    A = np.column_stack([D.forced, D.X])
    names = D.spec.forced_names + D.spec.candidate_names
    coef_mapped = np.linalg.lstsq(A, D.y, rcond=None)[0]
    coef = D.spec.to_original_scale(coef_mapped, names)
    raw = formulaic.model_matrix(formula, linear)
    coef_raw = np.linalg.lstsq(raw.rhs.to_numpy(dtype=float), linear.y.to_numpy(), rcond=None)[0]
    assert list(coef.index) == names == list(raw.rhs.columns)
    np.testing.assert_allclose(coef.to_numpy(), coef_raw, rtol=1e-10, atol=1e-10)
    # the mapped coefficients themselves differ: the map did something
    assert not np.allclose(coef_mapped, coef_raw)


def test_to_original_scale_needs_the_intercept(linear):
    D = quiet_build("y ~ x1 + x2", linear, bounds=LINEAR_BOUNDS)
    with pytest.raises(ValueError, match="Intercept"):
        D.spec.to_original_scale([1.0], ["x1"])


def test_missing_bounds_warn_and_are_not_public(mixed):
    with pytest.warns(PrivacyLeakWarning, match=r"bounds for .*'x1'.*taken from the data.*bounds=") as rec:
        D = build_design("y ~ x1 + x2", mixed)
    assert not D.spec.bounds_public
    assert any("taken from the data" in leak for leak in D.spec.leaks)
    assert "'y'" in leak_messages(rec)[0]
    np.testing.assert_allclose(D.x_bounds, [np.abs(mixed.x1).max(), np.abs(mixed.x2).max()])
    assert D.b_y == pytest.approx(np.abs(mixed.y).max())


def test_a_column_left_without_bound_warns_naming_only_it(mixed):
    with pytest.warns(PrivacyLeakWarning, match="taken from the data") as rec:
        D = build_design("y ~ x1 + x2", mixed, bounds=Bounds(x={"x1": 0.5}, y=3.0))
    msgs = leak_messages(rec)
    assert len(msgs) == 1 and "'x2'" in msgs[0] and "'x1'" not in msgs[0] and "response" not in msgs[0]
    assert not D.spec.bounds_public


def test_default_bound_covers_unnamed_columns(mixed):
    D = quiet_build("y ~ x1 + x2 + d", mixed,
                    bounds=Bounds(x={"x1": (-1, 1)}, y=3.0, default=0.25))
    b = dict(zip(D.spec.candidate_names, D.x_bounds))
    # the dummies keep their public bound 1; the default is for the other columns
    assert b == {"x1": 1.0, "x2": 0.25, "d[T.q]": 1.0, "d[T.r]": 1.0}
    assert D.spec.bounds_public


def test_bool_response_is_zero_one_with_public_bound(mixed):
    D = quiet_build("c ~ x1", mixed, bounds=Bounds(x=0.5))
    np.testing.assert_array_equal(D.y, mixed.c.astype(float))
    assert D.b_y == 1.0 and D.spec.bounds_public


# ----------------------------------------------------------------------------- keep=


def test_keep_forces_columns_after_the_intercept(mixed):
    D = quiet_build(f"y ~ x1 + x2 + C(b, levels={LEVELS})", mixed, bounds=(0.5, 3.0), keep=["x2"])
    assert D.spec.forced_names == ["Intercept", "x2"]
    assert "x2" not in D.spec.candidate_names
    np.testing.assert_array_equal(D.forced[:, 1], mixed.x2.to_numpy())
    np.testing.assert_array_equal(D.forced_bounds, [1.0, 0.5])


def test_keep_a_variable_forces_all_its_columns(mixed):
    with pytest.warns(PrivacyLeakWarning):
        D = build_design("y ~ x1 + b", mixed, bounds=(0.5, 3.0), keep="b")
    assert D.spec.forced_names == ["Intercept", "b[T.v]", "b[T.w]"]
    assert D.spec.candidate_names == ["x1"]


def test_keep_unknown_name_lists_valid_names(mixed):
    with pytest.raises(ValueError, match=r"keep: 'zz' not in the model; valid names: .*'x1'"):
        build_design("y ~ x1 + x2", mixed, bounds=(0.5, 3.0), keep=["zz"])


# ----------------------------------------------------------------------------- input errors


@pytest.mark.parametrize("formula, data_kind, bounds, keep, exc, pattern", [
    (3, "df", (0.5, 3.0), None, TypeError, r"^formula"),
    ("y ~ x1 +", "df", (0.5, 3.0), None, ValueError, r"^formula: could not parse"),
    ("y x1", "df", (0.5, 3.0), None, ValueError, r"^formula.*~"),
    ("~ x1", "df", (0.5, 3.0), None, ValueError, r"^formula.*no response"),
    ("y ~ x1 + foo + bar", "df", (0.5, 3.0), None, ValueError, r"^formula: unknown .*'foo' and 'bar'"),
    ("y ~ x1", "array", (0.5, 3.0), None, TypeError, r"^data: expected a pandas DataFrame"),
    ("y ~ x1", "nan", (0.5, 3.0), None, ValueError, r"^data: missing or infinite .*'x1' \(2 rows\).*dropna"),
    ("y ~ x1", "inf", (0.5, 3.0), None, ValueError, r"^data: missing or infinite .*'y' \(1 row\)"),
    ("b ~ x1", "df", (0.5, 3.0), None, TypeError, r"^data: the response 'b'.*numeric"),
    ("y ~ x1", "df", {"x": {"x1": (1, 0)}}, None, ValueError, r"bounds x\['x1'\].*lo < hi"),
    ("y ~ x1", "df", {"x": 1.0, "y": (0, float("inf"))}, None, ValueError, r"bounds y.*finite"),
    ("y ~ x1", "df", (0.0, 3.0), None, ValueError, r"bounds x.*> 0"),
    ("y ~ x1", "df", (0.5, -1.0), None, ValueError, r"bounds y.*> 0"),
    ("y ~ x1", "df", Bounds(x={"x9": 1.0}), None, ValueError, r"^bounds: x names 'x9'.*Valid names: \['x1'\]"),
    ("y ~ x1", "df", "tight", None, TypeError, r"^bounds"),
    ("y ~ x1", "df", (0.5, 3.0), ["x1"], ValueError, r"no candidate columns"),
    ("y ~ 1", "df", (0.5, 3.0), None, ValueError, r"no candidate columns"),
    ("y ~ x1", "df", (0.5, 3.0), 5, TypeError, r"^keep"),
])
def test_input_errors_name_the_argument(mixed, formula, data_kind, bounds, keep, exc, pattern):
    df = mixed
    if data_kind == "array":
        df = mixed[["y", "x1"]].to_numpy()
    elif data_kind == "nan":
        df = mixed.copy()
        df.loc[[3, 5], "x1"] = np.nan
    elif data_kind == "inf":
        df = mixed.copy()
        df.loc[4, "y"] = np.inf
    with pytest.raises(exc, match=pattern):
        build_design(formula, df, bounds=bounds, keep=keep)


def test_nan_in_unused_columns_is_fine(mixed):
    df = mixed.copy()
    df.loc[0, "x2"] = np.nan
    df.loc[1, "b"] = None
    D = quiet_build("y ~ x1", df, bounds=(0.5, 3.0))
    assert D.spec.candidate_names == ["x1"]


def test_errors_come_before_any_warning(mixed):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="bounds"):
            build_design("y ~ x1 + b", mixed, bounds=Bounds(x={"nope": 1.0}))


def test_data_as_dict_of_columns(mixed):
    cols = {k: mixed[k].to_numpy() for k in ["y", "x1", "x2"]}
    D = quiet_build("y ~ .", cols, bounds=(0.5, 3.0))
    assert D.spec.candidate_names == ["x1", "x2"]


def test_warnings_point_at_the_caller(mixed):
    with pytest.warns(PrivacyLeakWarning) as rec:
        build_design("y ~ x1", mixed)
    assert rec[0].filename == __file__


# ----------------------------------------------------------------------------- as_bounds


def test_as_bounds_forms():
    assert as_bounds(None) is None
    b = Bounds(x=0.5, y=0.5)
    assert as_bounds(b) is b
    assert as_bounds((0.5, 0.5)) == b
    assert as_bounds({"x": 0.5, "y": 0.5}) == b
    assert as_bounds({"y": [0, 10]}).y == (0.0, 10.0)
    # any other dict is a codebook {column: bound}
    assert as_bounds({"Hits": (0, 250), "y": 3}) == Bounds(x={"Hits": (0, 250), "y": 3})
    with pytest.raises(TypeError, match="bounds x"):
        Bounds(x=(0, 1))


# ----------------------------------------------------------------------------- new data


def test_transform_new_matches_training_rows_and_clips(linear):
    D = quiet_build('y ~ x1 + x2 + C(g, levels=["a", "b"])', linear, bounds=LINEAR_BOUNDS)
    again = D.spec.transform_new(linear.drop(columns="y").iloc[:25])
    np.testing.assert_array_equal(again, np.column_stack([D.forced, D.X])[:25])
    far = pd.DataFrame({"x1": [1e6, -1e6, 15.0], "x2": [50.0, -50.0, -4.0], "g": ["b", "a", "a"]})
    M = D.spec.transform_new(far)
    np.testing.assert_array_equal(M, [[1, 1, 1, 1], [1, -1, -1, 0], [1, 0, 0, 0]])


def test_transform_new_scalar_bounds_and_errors(mixed):
    # np.log(x2 + 1) is undefined for x2 <= -1: under a scalar bound it needs a bound of its own
    D = quiet_build("y ~ x1 + np.log(x2 + 1)", mixed,
                    bounds=Bounds(x={"np.log(x2 + 1)": 0.5}, default=0.5, y=3.0))
    M = D.spec.transform_new(pd.DataFrame({"x1": [9.0, -0.1], "x2": [100.0, 0.0]}))
    np.testing.assert_allclose(M, [[1.0, 0.5, 0.5], [1.0, -0.1, 0.0]])
    with pytest.raises(ValueError, match="newdata: missing columns"):
        D.spec.transform_new(pd.DataFrame({"x1": [1.0]}))
    with pytest.raises(ValueError, match="newdata: missing or infinite"):
        D.spec.transform_new(pd.DataFrame({"x1": [np.nan], "x2": [0.0]}))


def test_design_keeps_no_data_frame(mixed):
    D = quiet_build("y ~ x1 + x2", mixed, bounds=(0.5, 3.0))
    for value in vars(D).values():
        assert not isinstance(value, (pd.DataFrame, pd.Series))


def _halve(v):
    return v / 2


def test_functions_from_the_callers_scope_work_and_survive_pickling(mixed):
    import pickle

    D = quiet_build("y ~ x1 + _halve(x2)", mixed, bounds=(0.5, 3.0))
    np.testing.assert_allclose(D.X[:, 1], mixed.x2 / 2)
    D2 = pickle.loads(pickle.dumps(D))
    np.testing.assert_array_equal(D2.spec.transform_new(mixed), np.column_stack([D.forced, D.X]))


def test_arrays_from_the_session_are_refused(mixed):
    z = np.arange(len(mixed), dtype=float)  # noqa: F841  (looked up by the formula)
    with pytest.raises(ValueError, match=r"^formula: 'z': not column\(s\) of data"):
        build_design("y ~ x1 + z", mixed, bounds=(0.5, 3.0))


# ----------------------------------------------------------------------------- spec and data (issue 24)


def test_design_is_a_public_spec_and_private_data(linear):
    from dpsubset.design import DesignData, DesignSpec

    D = quiet_build("y ~ x1 + x2 + C(g, levels=['a', 'b'])", linear, LINEAR_BOUNDS)
    assert isinstance(D.spec, DesignSpec) and isinstance(D.data, DesignData)
    # reads are forwarded to the half that holds them
    assert D.X is D.data.X and D.n == D.data.n == len(linear)
    assert D.spec.candidate_names is D.spec.candidate_names and D.spec.column_maps is D.spec.column_maps
    # the spec holds nothing computed from the rows
    for name in ("X", "y", "forced", "gram", "n"):
        assert not hasattr(D.spec, name), name
    with pytest.raises(AttributeError, match="no_such_attribute"):
        D.no_such_attribute


def test_spec_alone_rebuilds_new_data_and_pickles_without_rows(linear):
    import dataclasses
    import pickle

    D = quiet_build("y ~ x1 + np.log(x1) + x2 + C(g, levels=['a', 'b'])", linear,
                    Bounds(x={"x1": (1, 30), "x2": (-10, 2)}, y=(-100, 100)))
    blob = pickle.dumps(D.spec)
    # no value of the data, raw or mapped, is in the spec's pickle
    for v in list(linear["x1"].iloc[:5]) + list(D.X[:5, 0]) + list(D.y[:5]):
        assert np.float64(v).tobytes() not in blob
    spec = pickle.loads(blob)
    Z = spec.transform_new(linear)
    np.testing.assert_array_equal(Z, np.hstack([D.forced, D.X]))
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.clip_limits = {}


def test_design_replace_routes_each_attribute_to_its_half(linear):
    D = quiet_build("y ~ x1 + x2", linear, LINEAR_BOUNDS)
    D2 = D.replace(X=D.X[:, :1], x_bounds=D.x_bounds[:1], candidate_names=D.spec.candidate_names[:1])
    assert D2.X.shape == (len(linear), 1) and D2.spec.candidate_names == ["x1"]
    assert D2.y is D.y and D2.spec.column_maps is D.spec.column_maps  # the rest is shared
    assert D.X.shape[1] == 2  # the original is unchanged
    with pytest.raises(TypeError, match="nope"):
        D.replace(nope=1)


# ----------------------------------------------------------------------------- the evaluation context


def _twice(v):
    return 2 * v


def test_context_is_a_mapping_passed_down_not_the_call_stack(mixed, monkeypatch):
    import dpsubset.design.build as build_mod

    def no_stack(*a, **k):
        raise AssertionError("the call stack was read although a context was given")

    monkeypatch.setattr(build_mod, "capture_context", no_stack)
    # `double` is in no scope of this test: only in the mapping
    D = build_design("y ~ double(x1) + x2", mixed, bounds=(1.0, 3.0), context={"double": _twice})
    assert D.spec.candidate_names == ["double(x1)", "x2"]
    assert D.spec.eval_context == {"double": _twice}
    with pytest.raises(ValueError, match="unknown variable"):
        build_design("y ~ _twice(x1) + x2", mixed, bounds=(1.0, 3.0), context={})


def test_context_objects_that_could_carry_data_are_refused(mixed):
    with pytest.raises(ValueError, match="'v'.*not column"):
        build_design("y ~ x1 + I(x2 * v)", mixed, bounds=(1.0, 3.0), context={"v": np.arange(3.0)})
    with pytest.raises(TypeError, match="context: expected a mapping"):
        build_design("y ~ x1", mixed, bounds=(1.0, 3.0), context=[("v", 1.0)])


def test_without_a_context_the_direct_caller_scope_is_used(mixed):
    shift = 0.25  # a public constant of this scope (the scope of build_design's caller)
    D = build_design("y ~ I(x1 + shift) + x2", mixed, bounds=(1.0, 3.0))
    assert D.spec.eval_context == {"shift": shift}
    with pytest.raises(ValueError, match="unknown variable.*'shift'"):
        quiet_build("y ~ I(x1 + shift) + x2", mixed, Bounds(x=1.0, y=3.0))  # quiet_build's scope


def test_dp_best_subset_takes_the_context_as_a_mapping(mixed):
    import dpsubset as dps

    res = dps.dp_best_subset(dps.Formula("y ~ double(x1) + x2", context={"double": _twice}), mixed, eps=1.0, s=1, bounds=(1.0, 3.0),
                             random_state=0)
    assert set(res.candidates) == {"double(x1)", "x2"}


def test_r_bridge_passes_its_functions_in_the_context_not_its_globals(mixed):
    import dpsubset.interfaces.r_bridge as rb

    assert "sqrt" not in vars(rb)  # no globals().update(R_FORMULA_FUNCTIONS)
    df = mixed.assign(x1=mixed.x1.abs())
    # sqrt needs its variable's domain (a scalar bound clips the column, not x1)
    res = rb._call_dp_best_subset("y ~ sqrt(x1) + x2", df, dict(eps=1.0, s=1, random_state=0,
                                                              bounds=Bounds(x={"x1": (0, 3)}, default=1.0, y=3.0)))
    assert "sqrt(x1)" in res.candidates


def test_codebook_and_intervals_do_not_import_the_builder():
    """The import cycle codebook <-> build is gone: name resolution lives in formula.py."""
    import ast
    import pathlib

    import dpsubset.design as pkg

    root = pathlib.Path(pkg.__file__).parent
    for mod in ("codebook", "intervals", "formula", "frames", "clip", "materialise", "spec", "data"):
        tree = ast.parse((root / f"{mod}.py").read_text())
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 1}
        assert "build" not in imported and "dask" not in imported, mod
