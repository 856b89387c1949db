"""The wide path of the least-squares scorer (no stored Gram matrix; issue 42): the cached
single-precision copy of X for the Gram row maxima and the cache of whole Gram rows of
the two-swap search give the same answers as the stored Gram matrix."""
import numpy as np
import pytest

import dpsubset.scores.least_squares as ls
import dpsubset.scores.two_swap as two_swap
from dpsubset.scores.least_squares import LeastSquaresScorer


def _pair(monkeypatch, n=120, p=400, seed=0):
    rng = np.random.default_rng(seed)
    X = np.clip(rng.normal(size=(n, p)) + 0.5 * rng.normal(size=(n, 1)), -1, 1)
    y = np.clip(X[:, :4].sum(axis=1) * 0.3 + 0.5 * rng.normal(size=n), -1, 1)
    with_gram = LeastSquaresScorer(X, y, 1.0, 0.6)
    monkeypatch.setattr(ls, "_FULL_GRAM_MAX_COLUMNS", 0)
    wide = LeastSquaresScorer(X, y, 1.0, 0.6)
    assert wide._gram is None and with_gram._gram is not None
    return with_gram, wide


def test_row_maxima_bound_the_exact_ones_and_reuse_one_copy(monkeypatch):
    exact_sc, wide = _pair(monkeypatch)
    cols = np.arange(3, wide.p)
    idx = np.arange(0, 60)
    got = wide._gram_row_max(cols, idx)
    copy = wide._x32
    assert copy is not None and copy.dtype == np.float32
    exact = exact_sc._gram_row_max(cols, idx)
    assert np.all(got >= exact) and np.all(got <= exact + 1e-5)
    wide._gram_row_max(cols, idx + 60)
    assert wide._x32 is copy  # made once per scorer


@pytest.mark.parametrize("seed", [0, 1])
def test_two_swap_with_a_tiny_row_cache_matches_the_gram_route(monkeypatch, seed):
    exact_sc, wide = _pair(monkeypatch, seed=seed)
    # every cross block takes the product against all of X, through a cache of 3 rows
    monkeypatch.setattr(two_swap, "_ROW_CACHE_MAX_BYTES", 3 * 8 * wide.p)
    monkeypatch.setattr(two_swap, "_ROW_CACHE_X_SHARE", 1)
    monkeypatch.setattr(two_swap, "_FULL_PRODUCT_MAX_ELEMENTS", 10 ** 9)
    calls = []
    whole = two_swap.TwoSwapMixin._whole_gram_rows
    monkeypatch.setattr(two_swap.TwoSwapMixin, "_whole_gram_rows",
                        lambda self, rows: calls.append(len(rows)) or whole(self, rows))
    S = np.array([0, 1, 2, 3])
    a = exact_sc.two_swap(S, 25, block_elements=2000)
    b = wide.two_swap(S, 25, block_elements=2000)
    assert calls, "the wide scorer did not use the whole-row products"
    assert len(wide._gram_rows) <= 3
    assert [tuple(x) for x in a[0]] == [tuple(x) for x in b[0]]
    np.testing.assert_allclose(a[1], b[1], rtol=1e-11, atol=1e-13)
