"""Pictures of a release (issue 39): res.plot() / coef_plot and plan(...).plot() return
matplotlib Figures that draw what is released and nothing else."""
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import dpsubset as dps
from dpsubset.results.plots import coef_plot, plan_plot

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (1500, 5))
    y = np.clip(1.0 * X[:, 0] - 0.8 * X[:, 1] + rng.normal(0, 0.3, 1500), -3, 3)
    d = pd.DataFrame(X, columns=[f"x{i}" for i in range(1, 6)])
    d["y"] = y
    return d


@pytest.fixture(scope="module")
def fits(data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = dps.dp_best_subset("y ~ .", data, eps=8, s=2, bounds=(1, 3), inference=True, random_state=1)
        plain = dps.dp_best_subset("y ~ .", data, eps=8, s=2, bounds=(1, 3), random_state=2)
    return res, plain


def _segments(ax):
    """The horizontal segments drawn (the intervals): [(x0, x1, y)]."""
    out = []
    for line in ax.get_lines():
        x, y = line.get_xdata(), line.get_ydata()
        if len(x) == 2 and y[0] == y[1] and x[0] != x[1]:
            out.append((float(x[0]), float(x[1]), float(y[0])))
    return out


def test_res_plot_draws_the_released_intervals_and_not_the_unselected(fits, tmp_path):
    res, _ = fits
    fig = res.plot()
    assert isinstance(fig, Figure)
    fig.savefig(tmp_path / "coef.png")
    assert (tmp_path / "coef.png").stat().st_size > 5000
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert sorted(labels) == sorted(res.support)           # unselected terms are not drawn as 0
    ci = res.conf_int(0.05)
    segs = _segments(ax)
    assert len(segs) == len(res.support)
    lo_hi = sorted((a, b) for a, b, _ in segs)
    want = sorted((ci.loc[t, 0], ci.loc[t, 1]) for t in res.support)
    np.testing.assert_allclose(lo_hi, want)
    # level changes the intervals
    narrow = _segments(res.plot(level=0.5).axes[0])
    assert sum(b - a for a, b, _ in narrow) < sum(b - a for a, b, _ in segs)


def test_baselines_are_marked_not_private(fits, data):
    import statsmodels.formula.api as smf
    res, plain = fits
    ols = smf.ols("y ~ x1 + x2 + x3 + x4 + x5", data).fit()
    fig = coef_plot({"eps 8": res, "no intervals": plain, "OLS": ols})
    ax = fig.axes[0]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["eps 8", "no intervals", "OLS (NOT private)"]
    assert "x5" in [t.get_text() for t in ax.get_yticklabels()]    # the baseline estimates every term
    # a private fit without inference draws points only; the OLS its (dashed) intervals
    dashed = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--" and len(ln.get_xdata()) == 2]
    assert len(dashed) == 5


def test_open_or_far_ends_are_arrows_at_the_edge():
    from dpsubset.results.plots import _xlim
    lo, hi = _xlim([0.5, 1.0], [-1e4, 0.0, np.inf])
    assert -5 < lo < 0 and 1 < hi < 5                     # not stretched to -10000


def test_coef_plot_refuses_what_it_cannot_draw(fits):
    res, _ = fits
    with pytest.raises(ValueError, match="level"):
        coef_plot(res, level=95)
    with pytest.raises(ValueError, match="not terms of any"):
        coef_plot(res, terms=["zz"])
    with pytest.raises(TypeError, match="expected a result of dp_best_subset"):
        coef_plot([res, "text"])


def test_plan_plot_shows_recovery_and_width_with_targets(tmp_path):
    pl = dps.plan(p=6, s=2, effect=0.8, noise=0.5, eps=4, n_grid=[300, 1000], trials=1, target_width=5.0,
                  time_limit=30)
    fig = pl.plot()
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    fig.savefig(tmp_path / "plan.png")
    left = fig.axes[0]
    curve = left.get_lines()[0]
    np.testing.assert_allclose(curve.get_xdata(), pl.table["n"])
    np.testing.assert_allclose(curve.get_ydata(), pl.table["p_true_support"])
    assert any(np.allclose(ln.get_ydata(), 0.9) for ln in left.get_lines()[1:])   # the target line
    assert plan_plot(pl).axes[0].get_xlabel().startswith("n")
    with pytest.raises(TypeError, match="dpsubset.plan"):
        plan_plot(object())


def test_a_missing_matplotlib_names_the_extra(fits, monkeypatch):
    res, _ = fits
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"dpsubset\[plot\]"):
        res.plot()
