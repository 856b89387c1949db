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


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_single_precision_screen_keeps_the_two_swap_list_exact(monkeypatch, seed):
    # The pair blocks screened in single precision (with the rounding allowance) give
    # the same list as the stored Gram matrix, and the screen rules pairs out.
    exact_sc, wide = _pair(monkeypatch, seed=seed)
    monkeypatch.setattr(ls, "_SINGLE_PRECISION_MIN_ELEMENTS", 0)
    seen = []
    block = two_swap.TwoSwapMixin._pair_block
    monkeypatch.setattr(two_swap.TwoSwapMixin, "_pair_block",
                        lambda self, base, outside, ra, cpos, prefix:
                        (self is wide and seen.append(len(ra) * len(cpos)))
                        or block(self, base, outside, ra, cpos, prefix))
    screened = []
    screen = two_swap.TwoSwapMixin._screen_block
    monkeypatch.setattr(two_swap.TwoSwapMixin, "_screen_block",
                        lambda self, base, outside, ra, cpos, *a:
                        screened.append(len(ra) * len(cpos)) or screen(self, base, outside, ra, cpos, *a))
    S = np.array([0, 1, 2, 3])
    nb, vals = exact_sc.neighbourhood(S)
    for keep, others in [(1, None), (40, None), (len(vals) + 30, vals)]:
        a = exact_sc.two_swap(S, keep, other_values=others, block_elements=4000)
        b = wide.two_swap(S, keep, other_values=others, block_elements=4000)
        assert [tuple(x) for x in a[0]] == [tuple(x) for x in b[0]]
        np.testing.assert_allclose(a[1], b[1], rtol=1e-11, atol=1e-13)
    assert screened and sum(seen) < sum(screened)  # the screen ruled pairs out


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # row maxima below zero
def test_a_screen_without_its_rounding_allowance_is_caught(monkeypatch):
    # Known-bad: an allowance that makes |E| too small rules out pairs that belong to
    # the list; the comparison above then fails.
    exact_sc, wide = _pair(monkeypatch, seed=0)
    monkeypatch.setattr(ls, "_SINGLE_PRECISION_MIN_ELEMENTS", 0)
    monkeypatch.setattr(ls.LeastSquaresScorer, "_single_precision_allowance", lambda self: -1.0)
    S = np.array([0, 1, 2, 3])
    a = exact_sc.two_swap(S, 40, block_elements=4000)
    b = wide.two_swap(S, 40, block_elements=4000)
    assert [tuple(x) for x in a[0]] != [tuple(x) for x in b[0]]


def test_warm_start_in_single_precision_finds_the_double_precision_start(monkeypatch):
    # The warm start's products on the scorer's single-precision copy (large X) propose
    # the same support as in double precision on a clear signal, and reuse the one copy.
    from dpsubset.search.heuristics import iht_support
    rng = np.random.default_rng(7)
    n, p = 300, 600
    X = np.clip(rng.normal(size=(n, p)), -1, 1)
    y = np.clip(X[:, [3, 50, 400]] @ np.array([0.6, -0.5, 0.4]) + 0.2 * rng.normal(size=n), -2, 2)
    monkeypatch.setattr(ls, "_FULL_GRAM_MAX_COLUMNS", 0)
    double = LeastSquaresScorer(X, y, 1.0, 2.0, np.ones((n, 1)))
    assert not double.wants_single_precision
    start = iht_support(double, 3)
    monkeypatch.setattr(ls, "_SINGLE_PRECISION_MIN_ELEMENTS", 0)
    single = LeastSquaresScorer(X, y, 1.0, 2.0, np.ones((n, 1)))
    assert single.wants_single_precision
    assert getattr(single, "_x32", None) is None
    np.testing.assert_array_equal(iht_support(single, 3), start)
    assert single._x32 is not None and single._x32.dtype == np.float32
    np.testing.assert_array_equal(np.sort(start), [3, 50, 400])
