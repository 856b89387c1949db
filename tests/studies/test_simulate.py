import numpy as np
import pandas as pd
import pytest

from dpsubset.studies.simulate import (
    make_classification,
    make_regression,
    true_coefficients,
    true_support,
)


def _signal(X, support, s):
    return X[:, support].sum(axis=1) / np.sqrt(s)


@pytest.mark.parametrize("make", [make_regression, make_classification])
def test_shapes_and_dtypes(make):
    X, y, S = make(37, 23, 4, random_state=0)
    assert X.shape == (37, 23) and X.dtype == np.float64 and X.flags.c_contiguous
    assert y.shape == (37,)
    assert S.tolist() == [0, 2, 4, 6]


def test_true_support_and_coefficients():
    assert true_support(100).tolist() == [0, 2, 4, 6, 8]
    assert true_support(9, 5).tolist() == [0, 2, 4, 6, 8]
    beta = true_coefficients(12, 3)
    assert np.flatnonzero(beta).tolist() == [0, 2, 4]
    np.testing.assert_allclose(beta[[0, 2, 4]], 1 / np.sqrt(3))
    assert np.isclose(np.linalg.norm(beta), 1.0)
    with pytest.raises(ValueError):
        true_support(8, 5)


@pytest.mark.parametrize("make", [make_regression, make_classification])
def test_reproducible(make):
    a = make(50, 30, random_state=123)
    b = make(50, 30, random_state=123)
    c = make(50, 30, random_state=124)
    for u, v in zip(a, b):
        assert np.array_equal(u, v)
    assert not np.array_equal(a[0], c[0])
    g1, g2 = np.random.default_rng(7), np.random.default_rng(7)
    assert np.array_equal(make(20, 10, random_state=g1)[1], make(20, 10, random_state=g2)[1])


def test_random_state_type_checked():
    with pytest.raises(TypeError):
        make_regression(10, 10, random_state="seed")


@pytest.mark.parametrize(
    "kwargs",
    [dict(n=0, p=10), dict(n=10, p=8, s=5), dict(n=10, p=10, rho=1.0),
     dict(n=10, p=10, snr=0.0), dict(n=10, p=10, s=0)],
)
def test_bad_arguments(kwargs):
    with pytest.raises((ValueError, TypeError)):
        make_regression(**kwargs)


@pytest.mark.parametrize("rho", [0.0, 0.1, 0.5, -0.4, 0.9])
def test_toeplitz_covariance(rho):
    X, _, _ = make_regression(40_000, 12, rho=rho, random_state=5)
    C = np.cov(X, rowvar=False)
    # unit variances and rho^|j-k| correlations; standard errors are ~ 0.01
    np.testing.assert_allclose(np.diag(C), 1.0, atol=0.03)
    np.testing.assert_allclose(np.diag(C, 1).mean(), rho, atol=0.01)
    np.testing.assert_allclose(np.diag(C, 2).mean(), rho**2, atol=0.01)
    np.testing.assert_allclose(np.diag(C, 3).mean(), rho**3, atol=0.01)
    # the first column is also stationary (no start-up transient)
    assert abs(X[:, 0].var() - 1.0) < 0.03
    assert abs(np.corrcoef(X[:, 0], X[:, 1])[0, 1] - rho) < 0.02
    assert abs(X.mean()) < 0.01


@pytest.mark.parametrize("snr", [0.5, 2.0, 5.0, 20.0])
def test_realised_snr(snr):
    X, y, S = make_regression(300, 40, 3, snr=snr, random_state=11)
    sig = _signal(X, S, 3)
    realised = np.sum(sig**2) / np.sum((y - sig) ** 2)
    assert realised == pytest.approx(snr, rel=1e-10)


def test_noise_is_gaussian_scale_close_to_population():
    # With the realised calibration the noise sd should be close to the
    # population value sqrt(beta' Sigma beta / snr) for large n.
    rho, s, snr = 0.3, 5, 4.0
    X, y, S = make_regression(20_000, 20, s, rho=rho, snr=snr, random_state=3)
    eps = y - _signal(X, S, s)
    beta = true_coefficients(20, s)
    idx = np.arange(20)
    Sigma = rho ** np.abs(idx[:, None] - idx[None, :])
    sigma_pop = np.sqrt(beta @ Sigma @ beta / snr)
    assert eps.std() == pytest.approx(sigma_pop, rel=0.03)
    assert abs(eps.mean()) < 0.02


def test_infinite_snr_is_noiseless():
    X, y, S = make_regression(50, 20, snr=np.inf, random_state=0)
    np.testing.assert_allclose(y, X @ true_coefficients(20))


def test_regression_frame():
    df, S = make_regression(15, 11, 3, random_state=2, as_frame=True)
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == ["y"] + [f"x{j}" for j in range(1, 12)]
    assert S == ["x1", "x3", "x5"]
    X, y, _ = make_regression(15, 11, 3, random_state=2)
    np.testing.assert_array_equal(df[[f"x{j}" for j in range(1, 12)]].to_numpy(), X)
    np.testing.assert_array_equal(df["y"].to_numpy(), y)


def test_classification_frame():
    df, S = make_classification(25, 9, random_state=4, as_frame=True)
    assert list(df.columns)[0] == "y" and df.shape == (25, 10)
    assert set(df["y"].unique()) <= {-1, 1}
    assert S == ["x1", "x3", "x5", "x7", "x9"]


def test_classification_labels_follow_the_support():
    n, p, s = 40_000, 30, 5
    X, y, S = make_classification(n, p, s, random_state=9)
    assert y.dtype == np.int64
    assert set(np.unique(y)) == {-1, 1}
    # same design as the regression generator with the same seed
    Xr, _, _ = make_regression(n, p, s, random_state=9)
    np.testing.assert_array_equal(X, Xr)
    # P(y = +1 | x) increases with the linear predictor (logistic link)
    eta = _signal(X, S, s)
    assert y[eta > 1].mean() > 0.4 and y[eta < -1].mean() < -0.4
    # marginal correlations: positive on the support, ~0 off it and at odd lags
    corr = (X * y[:, None]).mean(axis=0)
    assert np.all(corr[S] > 0.08)
    off = np.setdiff1d(np.arange(p), np.r_[S, S + 1, S - 1])
    assert np.all(np.abs(corr[off]) < 0.03)


def test_large_p_memory_is_linear_in_n_times_p():
    # p = 100,000 and n = 1000 (the paper's largest p is 10,000): no p x p
    # covariance is formed, the only large allocation is the 800 MB output.
    # numpy reports its buffers to tracemalloc, so the peak is measured per call.
    import tracemalloc

    n, p = 1000, 100_000
    tracemalloc.start()
    try:
        X, y, S = make_regression(n, p, random_state=0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert X.shape == (n, p) and X.dtype == np.float64 and X.flags.c_contiguous
    assert X.nbytes == n * p * 8
    assert peak < n * p * 8 + 100 * 2**20  # output + working blocks < 100 MiB
    assert np.isfinite(y).all() and S.tolist() == [0, 2, 4, 6, 8]
    # adjacent-column correlation along the long AR(1) chain (rho = 0.1)
    r1 = np.einsum("ij,ij->", X[:200, 1:], X[:200, :-1]) / (200 * (p - 1))
    assert r1 == pytest.approx(0.1, abs=0.01)
