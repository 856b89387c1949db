"""The package's exact search, with privacy taken out, against leaps::regsubsets.

``best_subset_nonprivate`` runs the same design and the same certified search as
``dp_best_subset`` and returns the best support itself. With a tiny ridge
(lam = 1e-8), a radius that does not bind (r = 1e6) and bounds from the data (no
clipping), its score is RSS / 2n up to a negligible ridge term, so its best
support of each size must be the one R's ``leaps`` finds by exhaustive search,
and its coefficients the least-squares fit on that support.
"""
import warnings

import numpy as np
import pytest

from dpsubset.nonprivate import best_subset_nonprivate
from dpsubset.privacy.leaks import PrivacyLeakWarning
from rtools import need, r_has, robjects

SIMULATED = r"""
local({
  set.seed(2026)
  n <- 120; p <- 12
  Z <- matrix(rnorm(n * p), n, p)
  X <- Z + 0.5 * Z[, c(2:p, 1)]            # correlated columns
  colnames(X) <- paste0("v", 1:p)
  y <- drop(X[, c(1, 4, 7, 10)] %*% c(1.5, -1, 0.8, 0.5)) + rnorm(n)
  data.frame(y = y, X)
})
"""

# (name, R expression of the data, response)
DATASETS = [
    ("mtcars", "mtcars", "mpg"),
    ("swiss", "swiss", "Fertility"),
    ("Boston", "MASS::Boston", "medv"),
    ("simulated", SIMULATED, "y"),
]


@pytest.fixture(scope="module")
def ro():
    ro = robjects()
    need(r_has(ro, "leaps") and r_has(ro, "MASS"), "the R packages leaps and MASS are not installed")
    return ro


def leaps_best(ro, data_expr, response):
    """Best support of every size by leaps' exhaustive search, with its OLS coefficients."""
    ro.r(f"""
      dps_df <- {data_expr}
      dps_fit <- leaps::regsubsets({response} ~ ., data = dps_df, nvmax = ncol(dps_df) - 1,
                                   method = "exhaustive")
      dps_which <- summary(dps_fit)$which
    """)
    k = int(ro.r("nrow(dps_which)")[0])
    out = []
    for size in range(1, k + 1):
        names = list(ro.r(f"colnames(dps_which)[dps_which[{size}, ]][-1]"))
        coef = ro.r(f"coef(dps_fit, id = {size})")
        out.append((names, dict(zip(coef.names, np.asarray(coef, dtype=float)))))
    return ro.r("dps_df"), out


@pytest.mark.parametrize("name,data_expr,response", DATASETS, ids=[d[0] for d in DATASETS])
def test_nonprivate_best_subset_matches_leaps(ro, name, data_expr, response):
    df, best = leaps_best(ro, data_expr, response)
    p = len(best)
    for s, (support, coef) in enumerate(best, start=1):
        if s == p:
            continue  # the full model: nothing is selected
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            res = best_subset_nonprivate(f"{response} ~ .", df, s)
        assert sorted(res.support) == sorted(support), f"{name}, s = {s}"
        want = np.array([coef["(Intercept)"]] + [coef[c] for c in res.support])
        got = res.coef[["Intercept"] + res.support].to_numpy()
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8 * np.abs(want).max(),
                                   err_msg=f"{name}, s = {s}")


def test_nonprivate_helper_is_labelled_and_warns(ro):
    with pytest.warns(PrivacyLeakWarning, match="NOT differentially private"):
        res = best_subset_nonprivate("mpg ~ .", ro.r("mtcars"), 2)
    assert "NON-PRIVATE" in res.label
    assert res.certificates and all(c.closed for c in res.certificates)
