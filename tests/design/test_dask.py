"""dp_best_subset on a Dask DataFrame (2 workers of a LocalCluster): the same release as
the pandas route, and refusals where the model would have to learn from the data."""
import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("dask.distributed")

from dpsubset import Bounds, dp_best_subset  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def _frame(n=2400, p=8, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
    df["g"] = pd.Categorical(rng.choice(["a", "b", "c"], n), categories=["a", "b", "c", "d"])
    df["k"] = rng.integers(0, 5, n)
    df.insert(0, "y", X[:, 1] - 0.8 * X[:, 4] + 0.6 * (df["g"] == "b") + rng.normal(size=n) + 1.0)
    return df


@pytest.mark.parametrize("formula,method,bounds,keep", [
    ("y ~ .", "top_r", (2.5, 5.0), None),
    ("y ~ 0 + x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7", "mistakes", (2.5, 5.0), None),
    ("y ~ x0 + x1 + x2 + x3 + x4 + np.clip(x5, -1, 1) + g + k", "top_r",
     Bounds(x={"k": (0, 4), "np.clip(x5, -1, 1)": 1.0}, default=(-3, 3), y=(-6, 6)), ["x0"]),
])
def test_dask_release_equals_pandas_release(client, formula, method, bounds, keep):
    df = _frame()
    ddf = dd.from_pandas(df, npartitions=5)
    kw = dict(eps=4.0, s=3, method=method, bounds=bounds, ball=dict(r=4.0), keep=keep, random_state=2024)
    on_pandas = dp_best_subset(formula, df, centre=False, **kw)  # the Dask route is not centred
    on_dask = dp_best_subset(formula, ddf, **kw)
    assert on_dask.support == on_pandas.support
    assert on_dask.nobs == on_pandas.nobs == len(df)
    np.testing.assert_allclose(on_dask.params.to_numpy(), on_pandas.params.to_numpy(), rtol=1e-8, atol=1e-10)
    assert list(on_dask.params.index) == list(on_pandas.params.index)
    assert on_dask.privacy.bounds_public
    np.testing.assert_allclose(on_dask.predict(df.iloc[:7]), on_pandas.predict(df.iloc[:7]), rtol=1e-8)


def test_dask_refuses_what_would_be_learned_from_the_data(client):
    df = _frame(n=400)
    ddf = dd.from_pandas(df, npartitions=2)
    with pytest.raises(ValueError, match=r"model must be fixed in advance.*bounds for"):
        dp_best_subset("y ~ x0 + x1 + x2 + x3", ddf, eps=1.0, s=2, bounds=Bounds(x=1.0), random_state=0)
    with pytest.raises(ValueError, match=r"model must be fixed in advance.*categorical levels of 's'"):
        dp_best_subset("y ~ x0 + x1 + x2 + s", ddf.assign(s=ddf["x0"].gt(0).astype(str)),
                       eps=1.0, s=2, bounds=(2.0, 5.0), random_state=0)
    unknown = ddf.assign(g=ddf["g"].cat.as_unknown())
    with pytest.raises(ValueError, match=r"categorical column\(s\) \['g'\].*unknown categories"):
        dp_best_subset("y ~ x0 + x1 + g", unknown, eps=1.0, s=2, bounds=(2.0, 5.0), random_state=0)
    with pytest.raises(ValueError, match=r"fixed in advance.*center\(x3\). learns from or mixes rows"):
        dp_best_subset("y ~ x0 + x1 + x2 + center(x3)", ddf, eps=1.0, s=2, bounds=(2.0, 5.0), random_state=0)


def test_dask_other_losses_name_what_is_supported():
    df = _frame(n=100)
    ddf = dd.from_pandas(df, npartitions=2)
    with pytest.raises(ValueError, match=r"Dask DataFrame is supported with loss in \('squared',\)"):
        dp_best_subset("y ~ .", ddf, eps=1.0, s=2, bounds=(2.0, 5.0), loss="huber")


def test_dask_missing_values_are_an_error(client):
    df = _frame(n=400)
    df.loc[df.index[300], "x2"] = np.nan
    ddf = dd.from_pandas(df, npartitions=2)
    with pytest.raises(ValueError, match=r"Dask partition.*'x2' \(1 row\)"):
        dp_best_subset("y ~ x0 + x1 + x2 + x3", ddf, eps=1.0, s=2, bounds=(2.0, 5.0), random_state=0)
