"""R and Python give one answer: the rpy2 data.frame converter and the R wrapper's parity.

- An R data.frame from rpy2 is accepted as ``data`` by the Python API, with R's
  types mapped as documented in dpsubset/_rbridge.py (factors keep their levels).
- The R wrapper (run by Rscript through reticulate) and the Python API, on the
  same R data with the same seed, release the same support and coefficients.
"""
import math

import numpy as np
import pandas as pd
import pytest

import dpsubset as dps
from dpsubset.interfaces.r_bridge import frame_from_columns, maybe_from_r
from rtools import need, r_has, robjects, rscript

# R code that makes the datasets of the parity cases; run both in rpy2 and in Rscript.
R_DATA = r"""
sim <- local({
  set.seed(7)
  n <- 150
  X <- matrix(runif(n * 6, -1, 1), n, 6, dimnames = list(NULL, paste0("x", 1:6)))
  g <- factor(sample(c("a", "b"), n, TRUE), levels = c("a", "b", "c"))
  y <- X[, 1] - 0.5 * X[, 2] + 0.3 * (g == "b") + rnorm(n, sd = 0.1)
  data.frame(y = y, X, g = g, flag = X[, 3] > 0)
})
mt <- mtcars
simc <- within(sim, yc <- ifelse(y > 0, 1, -1))   # a two-class response coded -1/+1
"""

MT_INTERVALS = dict(cyl=(2, 12), disp=(50, 500), hp=(40, 400), drat=(2, 5.5), wt=(1, 6), qsec=(12, 25),
                    vs=(0, 1), am=(0, 1), gear=(3, 6), carb=(1, 8))


def _r_list(d):
    return "list(" + ", ".join(f"{k} = c({lo}, {hi})" for k, (lo, hi) in d.items()) + ")"


# (name, R formula, Python formula, data, R arguments, Python arguments)
CASES = [
    ("mtcars intervals, top_r", "mpg ~ .", "mpg ~ .", "mt",
     f"eps = 6, s = 3, bounds = dpsubset_bounds(x = {_r_list(MT_INTERVALS)}, y = c(5, 50)), random_state = 11",
     dict(eps=6.0, s=3, bounds=dps.Bounds(x=MT_INTERVALS, y=(5, 50)), random_state=11)),
    ("simulated with factor and logical, scalar bounds", "y ~ .", "y ~ .", "sim",
     "eps = 3, s = 2, bounds = c(1, 2), random_state = 5",
     dict(eps=3.0, s=2, bounds=(1.0, 2.0), random_state=5)),
    ("transforms and explicit levels, mistakes", "y ~ x1 + x2 + x3 + log(x4 + 2) + factor(g, levels = c('a', 'b', 'c'))",
     "y ~ x1 + x2 + x3 + log(x4 + 2) + C(g, levels=['a', 'b', 'c'])", "sim",
     # log() needs x4's domain: a scalar default clips the column only (issue 39)
     "eps = 2, s = 2, method = 'mistakes', bounds = dpsubset_bounds(x = list(x4 = c(-1, 1)), default = 1, y = 2), "
     "random_state = 9",
     dict(eps=2.0, s=2, method="mistakes", bounds=dps.Bounds(x={"x4": (-1, 1)}, default=1.0, y=2.0),
          random_state=9)),
    ("no intercept, keep, refit split", "y ~ 0 + x1 + x2 + x3 + x4 + x5", "y ~ 0 + x1 + x2 + x3 + x4 + x5", "sim",
     "eps = 2, s = 2, keep = 'x5', budget = list(select = 1.5), bounds = c(1, 2), ball = list(r = 2, lam = 3), "
     "random_state = 3",
     dict(eps=2.0, s=2, keep="x5", budget=dps.Budget(select=1.5), bounds=(1.0, 2.0), ball=dps.Ball(r=2.0, lam=3.0),
          random_state=3)),
    ("logistic, response coded -1/+1 with response_levels", "yc ~ x1 + x2 + x3 + x4", "yc ~ x1 + x2 + x3 + x4",
     "simc", "eps = 4, s = 2, loss = list(name = 'logistic', levels = c(-1, 1)), bounds = dpsubset_bounds(x = 1), "
     "random_state = 6",
     dict(eps=4.0, s=2, loss=dps.Logistic(levels=(-1, 1)), bounds=dps.Bounds(x=1.0), random_state=6)),
    # one codebook per data set (columns this formula does not use), keys in R's spelling (issue 28)
    ("whole codebook, R's names in bounds and keep", "mpg ~ wt + I(wt^2) + poly(hp, 2, raw = TRUE)",
     "mpg ~ wt + I(wt**2) + poly(hp, 2, raw=True)", "mt",
     f"eps = 6, s = 1, keep = c('I(wt^2)', 'poly(hp, 2, raw = TRUE)2'), bounds = dpsubset_bounds(x = "
     f"c({_r_list(MT_INTERVALS)}, list(`I(wt^2)` = c(0, 40))), y = c(5, 50)), random_state = 2",
     dict(eps=6.0, s=1, keep=["I(wt ** 2)", "poly(hp, 2, raw=True)[1]"],
          bounds=dps.Bounds(x={**MT_INTERVALS, "I(wt**2)": (0, 40)}, y=(5, 50)), random_state=2)),
]


@pytest.fixture(scope="module")
def ro():
    ro = robjects()
    ro.r(R_DATA)
    return ro


def test_rpy2_data_frame_converts_with_r_types(ro):
    df = ro.r("""data.frame(d = c(1.5, NA, 3), i = c(1L, NA, 3L), l = c(TRUE, NA, FALSE),
                            s = c("u", NA, "w"), f = factor(c("b", "b", NA), levels = c("a", "b", "c")),
                            o = factor(c("lo", "hi", "lo"), levels = c("lo", "hi"), ordered = TRUE),
                            stringsAsFactors = FALSE)""")
    out = maybe_from_r(df)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == ["d", "i", "l", "s", "f", "o"]
    assert out["d"].dtype == float and math.isnan(out["d"][1]) and out["d"][2] == 3.0
    assert out["i"].dtype == float and math.isnan(out["i"][1]) and out["i"][0] == 1.0
    assert out["l"].tolist() == [True, None, False]
    assert out["s"].isna().tolist() == [False, True, False] and out["s"][2] == "w"
    assert list(out["f"].cat.categories) == ["a", "b", "c"] and not out["f"].cat.ordered
    assert out["f"].isna().tolist() == [False, False, True]
    assert list(out["o"].cat.categories) == ["lo", "hi"] and out["o"].cat.ordered
    # anything that is not from rpy2 passes through untouched
    plain = pd.DataFrame({"a": [1.0]})
    assert maybe_from_r(plain) is plain


def test_rpy2_refuses_columns_it_cannot_map(ro):
    df = ro.r('data.frame(y = 1:2, d = as.Date(c("2020-01-01", "2020-01-02")))')
    with pytest.raises(TypeError, match="'d'"):
        maybe_from_r(df)


def test_python_api_takes_an_r_data_frame(ro):
    r_mt = ro.r("mtcars")
    pd_mt = pd.DataFrame({str(k): np.asarray(v, dtype=float) for k, v in zip(r_mt.names, r_mt)})
    kw = dict(eps=6.0, s=3, bounds=dps.Bounds(x=MT_INTERVALS, y=(5, 50)), random_state=4)
    a = dps.dp_best_subset("mpg ~ .", r_mt, **kw)
    b = dps.dp_best_subset("mpg ~ .", pd_mt, **kw)
    assert a.support == b.support
    np.testing.assert_array_equal(a.params.to_numpy(), b.params.to_numpy())
    # factor levels from R are explicit levels: no leak, and the unused level is a column
    res = dps.dp_best_subset("y ~ .", ro.r("sim"), eps=3.0, s=2, bounds=(1.0, 2.0), random_state=1)
    assert res.privacy.guarantee == "pure"
    assert "g[T.c]" in res.candidates


def test_bridge_frame_matches_rpy2_frame(ro):
    """The R wrapper's byte encoding and the rpy2 converter build the same DataFrame."""
    need(r_has(ro, "dpsubset"), "the R package dpsubset is not installed (make r-install)")
    ro.r("enc <- dpsubset:::.encode_frame(sim)")
    enc = ro.r("enc")

    def py(x):  # rpy2 -> the plain values reticulate would hand over
        cls = type(x).__name__
        if cls == "ListVector" or (cls == "ListSexpVector"):
            names = list(x.names) if x.names is not ro.NULL else None
            vals = [py(v) for v in x]
            return dict(zip(names, vals)) if names else vals
        if cls in ("ByteVector",):
            return bytes(x)
        if cls == "StrVector":
            return str(x[0])
        if cls == "BoolVector":
            return bool(x[0])
        if cls in ("IntVector", "FloatVector"):
            return int(x[0])
        return x

    cols = py(enc)
    got = frame_from_columns(cols)
    want = maybe_from_r(ro.r("sim"))
    pd.testing.assert_frame_equal(got, want)


@pytest.fixture(scope="module")
def r_wrapper_releases(ro):
    """Fit every case once through the R wrapper, in an Rscript child."""
    need(r_has(ro, "dpsubset"), "the R package dpsubset is not installed (make r-install)")
    lines = ["suppressPackageStartupMessages(library(dpsubset))", R_DATA,
             # R names the terms as lm does; fit$terms_python maps Python's names to them
             "out <- function(name, fit) {",
             "  py <- stats::setNames(names(fit$terms_python), fit$terms_python)",
             "  cat('CASE\\t', name, '\\n', sep = '')",
             "  cat('SUPPORT', py[fit$support], sep = '\\t'); cat('\\n')",
             "  cf <- coef(fit)",
             "  for (k in seq_along(cf)) cat('COEF\\t', py[[names(cf)[k]]], '\\t', sprintf('%.17g', cf[[k]]), '\\n', sep = '')",
             "  cat('GUARANTEE\\t', fit$privacy$guarantee, '\\n', sep = '')",
             "  cat('TIDY', names(tidy(fit)), sep = '\\t'); cat('\\n')",
             "  cat('GLANCE', names(glance(fit)), sep = '\\t'); cat('\\n')",
             "}"]
    for name, rf, _, data, rargs, _ in CASES:
        lines.append(f"out({name!r}, dp_best_subset({rf}, data = {data}, {rargs}))")
    text = rscript("\n".join(lines))
    res, cur = {}, None
    for line in text.splitlines():
        tag, *rest = line.split("\t")
        if tag == "CASE":
            cur = res.setdefault(rest[0], dict(support=[], coef={}))
        elif tag == "SUPPORT":
            cur["support"] = [x for x in rest if x]
        elif tag == "COEF":
            cur["coef"]["Intercept" if rest[0] == "(Intercept)" else rest[0]] = float(rest[1])
        elif tag == "GUARANTEE":
            cur["guarantee"] = rest[0]
        elif tag in ("TIDY", "GLANCE"):
            cur[tag.lower()] = [x for x in rest if x]
    return res


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_r_wrapper_and_python_api_release_the_same(ro, r_wrapper_releases, case):
    name, _, py_formula, data, _, kw = case
    got = r_wrapper_releases[name]
    res = dps.dp_best_subset(py_formula, ro.r(data), **kw)
    assert got["support"] == res.support
    assert got["guarantee"] == res.privacy.guarantee
    assert list(got["coef"]) == list(res.params.index)
    np.testing.assert_allclose(list(got["coef"].values()), res.params.to_numpy(), rtol=0, atol=1e-10)
    # tidy() and glance() in R have the Python API's columns, in its order
    assert got["tidy"] == list(res.tidy().columns)
    assert got["glance"] == list(res.glance().columns)


# ----------------------------------------------------------------------------- the bridge's entry points


def _mt_like(n=40, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(dict(wt=rng.uniform(1, 6, n), hp=rng.uniform(40, 400, n),
                           cyl=pd.Categorical(rng.choice(["4", "6", "8"], n), categories=["4", "6", "8"])))
    df["mpg"] = 30 - 3 * df.wt + rng.normal(size=n)
    return df


def _columns_spec(df):
    """``df`` as the R wrapper sends it (see r_frames.frame_from_columns)."""
    def strings(xs):
        raw = [x.encode() for x in xs]
        return dict(data=b"".join(raw), lengths=np.array([len(r) for r in raw], dtype="<i4").tobytes())
    cols = []
    for name in df.columns:
        col = df[name]
        if isinstance(col.dtype, pd.CategoricalDtype):
            cols.append(dict(kind="factor", codes=(col.cat.codes.to_numpy() + 1).astype("<i4").tobytes(),
                             levels=strings([str(c) for c in col.cat.categories]), ordered=False))
        else:
            cols.append(dict(kind="double", data=col.to_numpy(dtype="<f8").tobytes()))
    return dict(names=strings(list(df.columns)), columns=cols, nrow=len(df))


def test_model_names_gives_formulaics_columns_and_terms():
    from dpsubset.interfaces import r_bridge
    out = r_bridge.model_names("mpg ~ wt + I(wt ** 2) + poly(hp, 2, raw=True) + cyl + wt:hp",
                               _columns_spec(_mt_like()))
    assert out["columns"] == ["wt", "I(wt ** 2)", "poly(hp, 2, raw=True)[0]", "poly(hp, 2, raw=True)[1]",
                              "cyl[T.6]", "cyl[T.8]", "wt:hp"]
    assert out["terms"] == ["poly(hp, 2, raw=True)", "cyl"]
    # a design that cannot be built: an error to pass over, never an exception
    bad = r_bridge.model_names("mpg ~ nope", _columns_spec(_mt_like()))
    assert set(bad) == {"error"}


def test_released_flows_through_what_the_result_releases_and_names_what_it_withholds():
    from dpsubset.interfaces import r_bridge
    res = dps.dp_best_subset("mpg ~ wt + hp", _mt_like(), eps=6.0, s=1,
                             bounds=dps.Bounds(x=dict(wt=(1, 6), hp=(40, 400)), y=(5, 50)), random_state=1)
    # withheld: Python's NotReleasedError and its reason
    out = r_bridge.released(res, "resid")
    assert out["error"]["type"] == "NotReleasedError" and "private" in out["error"]["message"]
    # nothing of that name at all
    assert r_bridge.released(res, "anova")["error"]["type"] == "NotAvailable"
    # released: a Series (params), a number (nobs), a method called with its arguments
    out = r_bridge.released(res, "params")
    assert out["names"] == list(res.params.index)
    np.testing.assert_allclose(out["values"], res.params.to_numpy())
    assert r_bridge.released(res, "nobs") == dict(value=40)
    assert r_bridge.released(r_bridge.result_to_pickle(res), "nobs") == dict(value=40)

    class WithIntervals:   # a result whose intervals are released (as with private inference)
        params = res.params

        def conf_int(self, alpha=0.05):
            half = 0.5 if alpha == 0.1 else 1.0
            return pd.DataFrame({0: self.params - half, 1: self.params + half})

    out = r_bridge.released(WithIntervals(), "conf_int", {"alpha": 0.1})
    assert out["index"] == list(res.params.index) and out["frame"]["names"] == ["0", "1"]
    np.testing.assert_allclose(out["frame"]["columns"][1]["values"], res.params.to_numpy() + 0.5)


def test_prediction_frame_refuses_without_released_intervals_and_flows_through_with_them():
    from dpsubset.interfaces import r_bridge
    df = _mt_like()
    res = dps.dp_best_subset("mpg ~ wt + hp", df, eps=6.0, s=1,
                             bounds=dps.Bounds(x=dict(wt=(1, 6), hp=(40, 400)), y=(5, 50)), random_state=1)
    cols = _columns_spec(df.head(3))
    out = r_bridge.prediction_frame(res, cols, 0.05)
    assert out["error"]["type"] == "NotReleasedError"

    class Prediction:
        def __init__(self, mean):
            self.mean = mean

        def summary_frame(self, alpha):
            return pd.DataFrame(dict(mean=self.mean, mean_se=0.1, mean_ci_lower=self.mean - alpha,
                                     mean_ci_upper=self.mean + alpha))

    class WithPredictions:
        def get_prediction(self, frame):
            return Prediction(res.predict(frame).to_numpy())

    out = r_bridge.prediction_frame(WithPredictions(), cols, 0.1)
    assert out["frame"]["names"] == ["mean", "mean_se", "mean_ci_lower", "mean_ci_upper"]
    np.testing.assert_allclose(out["frame"]["columns"][3]["values"], res.predict(df.head(3)).to_numpy() + 0.1)
