"""method="samp_agg" and method="dp_sis" through dp_best_subset; their options; the
per-block Lasso of samp_agg against statsmodels."""
import warnings

import numpy as np
import pytest
import statsmodels.api as sm

import dpsubset as dps
from dpsubset.selection.baselines.samp_agg import (block_slices, block_votes, lars_first_s,
                                         lasso_top_s, n_blocks)
from dpsubset.studies.simulate import make_regression


@pytest.fixture(scope="module")
def sim():
    return make_regression(900, 12, s=3, random_state=0, as_frame=True)


def fit(df, **kw):
    args = dict(eps=2.0, s=3, bounds=(0.5, 0.5), random_state=0)
    args.update(kw)
    return dps.dp_best_subset("y ~ .", df, **args)


@pytest.mark.parametrize("method", ["samp_agg", "dp_sis"])
def test_release_report_and_reproducibility(sim, method):
    df, _ = sim
    res = fit(df, method=method)
    assert len(res.support) == 3 and set(res.support) <= set(res.candidates)
    rep = res.privacy
    assert rep.guarantee == "pure" and rep.delta == 0 and rep.eps == pytest.approx(2.0)
    assert [st["stage"] for st in rep.stages] == ["selection", "refit"]
    assert rep.exact_search is False
    assert fit(df, method=method, random_state=4).support == fit(df, method=method,
                                                                  random_state=4).support
    assert res.summary().as_text()


@pytest.mark.parametrize("method", ["samp_agg", "dp_sis"])
def test_high_eps_recovers_truth(sim, method):
    df, true = sim
    hits = sum(set(fit(df, method=method, eps=500.0, refit=False, random_state=k).support)
               == set(true) for k in range(4))
    assert hits == 4


def test_samp_agg_fixed_penalty_and_blocks(sim):
    df, _ = sim
    res = fit(df, method=dps.Method("samp_agg", penalty=0.01, blocks=10))
    assert "10 blocks" in res.privacy.stages[0]["mechanism"]
    assert res.privacy.sensitivity == pytest.approx(2 * 3 / 10)


def test_diagnostics_hold_votes_and_scores(sim):
    df, true = sim
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, diag = fit(df, method="samp_agg", search=dps.Search(diagnostics=True))
        _, diag2 = fit(df, method="dp_sis", search=dps.Search(diagnostics=True))
    assert set(diag.best_support) == set(true) and set(diag2.best_support) == set(true)


@pytest.mark.parametrize("method,opts,exc,msg", [
    ("samp_agg", {"blokcs": 3}, TypeError, "blokcs"),
    ("samp_agg", {"blocks": 1}, ValueError, "blocks"),
    ("samp_agg", {"blocks": 2.5}, ValueError, "blocks"),
    ("samp_agg", {"penalty": "cv"}, ValueError, "penalty"),
    ("samp_agg", {"penalty": -1.0}, ValueError, "penalty"),
    ("dp_sis", {"gamma": 1.0}, ValueError, "gamma"),
    ("dp_sis", {"k": 3}, TypeError, "'k'"),
])
def test_option_errors_before_data(method, opts, exc, msg):
    # data=None: the options must be rejected before the data are looked at.
    with pytest.raises(exc, match=msg):
        dps.dp_best_subset("y ~ .", None, eps=1.0, s=3, method=dps.Method(method, **(opts or {})))


@pytest.mark.parametrize("method", ["samp_agg", "dp_sis"])
@pytest.mark.parametrize("kw,name", [({"method": {"R": 5}}, "R"), ({"budget": {"gap_test": 0.1}}, "eps0"),
                                     ({"budget": {"delta": 1e-6}}, "delta")])
def test_exact_method_options_rejected(method, kw, name):
    kw = {k: (dict(v, name=method) if k == "method" else v) for k, v in kw.items()}
    with pytest.raises(ValueError, match=name):
        dps.dp_best_subset("y ~ .", None, eps=1.0, s=3, **{"method": method, **kw})


def test_samp_agg_too_few_rows_per_block(sim):
    df, _ = sim
    with pytest.raises(ValueError, match="rows per block"):
        fit(df.head(30), method=dps.Method("samp_agg", blocks=10))


def test_blocks_partition_rows():
    sl = block_slices(103, n_blocks(103))
    sizes = [s.stop - s.start for s in sl]
    assert n_blocks(103) == 10 and sum(sizes) == 103 and max(sizes) - min(sizes) <= 1
    assert sl[0].start == 0 and all(a.stop == b.start for a, b in zip(sl[:-1], sl[1:]))


def test_lars_support_matches_statsmodels_lasso():
    """Between two knots of the path, the Lasso's support is LARS's active set."""
    rng = np.random.default_rng(1)
    for _ in range(8):
        n, p, s = 40, 30, 4
        X = rng.standard_normal((n, p))
        y = X[:, :4] @ rng.uniform(0.3, 1, 4) + rng.standard_normal(n)
        _, path = lars_first_s(X, y, s + 1, return_path=True)
        i = next(i for i, (_, A) in enumerate(path) if len(A) == s)
        alpha = (path[i][0] + path[i + 1][0]) / 2 / n
        fit = sm.OLS(y, X).fit_regularized(alpha=alpha, L1_wt=1.0, cnvrg_tol=1e-12, maxiter=5000)
        assert tuple(np.flatnonzero(np.abs(fit.params) > 1e-8)) == path[i][1]
        assert tuple(lars_first_s(X, y, s)) == path[i][1]


def test_lasso_top_s_breaks_ties_at_random():
    X = np.zeros((20, 6))
    X[:, 0] = np.linspace(-1, 1, 20)
    y = X[:, 0].copy()
    picks = {tuple(lasso_top_s(X, y, 2, 0.01, np.random.default_rng(k))) for k in range(30)}
    assert all(0 in S for S in picks) and len(picks) > 1


def test_every_block_votes_s_columns():
    X, y, _ = make_regression(400, 15, s=3, random_state=2)
    counts = block_votes(X, y, 3, 20)
    assert counts.sum() == 3 * 20 and counts.max() <= 20
