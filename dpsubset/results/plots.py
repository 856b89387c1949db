"""Pictures of a release: :func:`coef_plot` (``res.plot()``) and :func:`plan_plot` (``plan(...).plot()``).

:func:`coef_plot` draws the released coefficients of one or several fits as points with
their private intervals (``inference=True``), terms in rows, fits side by side within a
row. It reads only what :func:`dpsubset.summary_table` reads (:mod:`.columns`): the
DP coefficients and the intervals a fit releases. A candidate a private fit did not
select is not drawn: its coefficient is 0 by selection, not an estimate near 0, and a
point at 0 would read as one. Non-private fits (statsmodels results,
:func:`dpsubset.best_subset_nonprivate`) stand beside the private ones with open
symbols, dashed intervals and "(NOT private)" in the legend, as in a table.

:func:`plan_plot` draws a :class:`dpsubset.studies.plan.Plan`: the probability that
top-R releases the true support, and the median interval width when it was asked for,
across the plan's grid of n (or of eps), with the targets as lines. Everything it shows
is a property of the mechanism under the user's assumed model, from public inputs.

matplotlib is an optional dependency (the ``plot`` extra); without it the functions
raise an ImportError that names the extra.
"""
from __future__ import annotations

import math
import re

import numpy as np

from .columns import INTERCEPTS, _released, as_column

__all__ = ["coef_plot", "plan_plot"]

# Okabe and Ito's palette (colour-blind safe), without black, which marks the targets.
_COLOURS = ("#E69F00", "#0072B2", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442")


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("plotting needs matplotlib, the optional extra 'plot' of dpsubset: "
                          "pip install 'dpsubset[plot]' (or pip install matplotlib)") from None
    return plt


def _fits(results, names):
    """[(name, Column)] from one result, a list, or a dict {name: result}."""
    if hasattr(results, "items") and not hasattr(results, "privacy"):
        if names is not None:
            raise TypeError("names: the results are a dict {name: result}, whose keys name the fits; "
                            "give the names once")
        names, results = [str(k) for k in results.keys()], list(results.values())
    elif hasattr(results, "privacy") or not hasattr(results, "__iter__") or isinstance(results, str):
        results = [results]
    results = list(results)
    if not results:
        raise ValueError("results: the list is empty; pass at least one result of dp_best_subset")
    cols = [as_column(r, f"results[{i}]") for i, r in enumerate(results)]
    if names is None:
        names = ["DP" if c.private else "non-private" for c in cols] if len(cols) <= 2 and \
            len({c.private for c in cols}) == len(cols) else [f"({i})" for i in range(1, len(cols) + 1)]
    names = [str(n) for n in names]
    if len(names) != len(cols):
        raise ValueError(f"names: {len(names)} name(s) for {len(cols)} fit(s); give one name per fit")
    if any(c.coef is None for c in cols):
        raise ValueError("coef_plot: a fit made with refit=False has no coefficients to draw")
    return list(zip(names, cols))


def _drawn_terms(fits, intercept, terms):
    """Terms with an estimate in at least one fit (always-in or selected), in the model's order."""
    out = []
    for _, col in fits:
        for t in col.forced + col.candidates:
            if (t in col.forced or t in col.selected) and t not in out:
                out.append(t)
    if not intercept:
        out = [t for t in out if t not in INTERCEPTS]
    if terms is not None:
        if isinstance(terms, str) or not hasattr(terms, "__iter__"):
            raise TypeError(f"terms: expected a list of terms; got {terms!r}")
        terms = [str(t) for t in terms]
        unknown = [t for t in terms if not any(c.has(t) for _, c in fits)]
        if unknown:
            raise ValueError(f"terms: {unknown} are not terms of any of the fits")
        out = [t for t in terms if t in out]
    if not out:
        raise ValueError("coef_plot: no coefficient to draw (only the intercept: try intercept=True)")
    return out


def _xlim(estimates, ends):
    """The x range: every estimate and 0, and interval ends up to three times the
    estimates' spread beyond them (an end further out is drawn as an arrow at the edge)."""
    lo, hi = min(estimates + [0.0]), max(estimates + [0.0])
    w = (hi - lo) or 1.0
    lo, hi = max(min(ends + [lo]), lo - 3 * w), min(max(ends + [hi]), hi + 3 * w)
    pad = 0.05 * (hi - lo)
    return lo - pad, hi + pad


def _intervals(col, level):
    names = list(col.coef.index)
    return _released(col.result, "conf_int", 1 - level, names)


def coef_plot(results, names=None, *, level=0.95, intercept=False, terms=None, ax=None, title=None):
    """The coefficients of one or several fits, with their intervals: a matplotlib Figure.

    Parameters
    ----------
    results : result, list or dict of results
        Fits of :func:`dpsubset.dp_best_subset`, and optionally NON-PRIVATE baselines
        (statsmodels results, :func:`dpsubset.best_subset_nonprivate`), drawn with
        open symbols and dashed intervals and labelled "(NOT private)". A dict
        ``{name: result}`` names the fits.
    names : list of str, optional
        One name per fit (legend).
    level : float, default 0.95
        Level of the intervals, where a fit releases them (``inference=True``; a
        baseline's own intervals). A private fit without intervals is drawn as points.
    intercept : bool, default False
        Draw the intercept too (its scale is often another).
    terms : list of str, optional
        The terms to draw, in this order (default: every term some fit estimates).
    ax : matplotlib.axes.Axes, optional
        Draw into these axes; default a new figure.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure

    Notes
    -----
    A candidate a private fit did not select is not drawn for that fit. An interval
    end the release leaves open (``inf``: the refit's ball binds, docs/guide/
    inference.md) is drawn as an arrow to the edge of the axes.
    """
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1:
        raise ValueError(f"level: expected a number between 0 and 1, e.g. 0.95; got {level!r}")
    plt = _pyplot()
    fits = _fits(results, names)
    rows = _drawn_terms(fits, intercept, terms)
    k = len(fits)
    if ax is None:
        # wide enough for the term names on the left and the legend on the right
        labels = [n if c.private else f"{n} (NOT private)" for n, c in fits]
        width = 4.2 + 0.075 * max(len(t) for t in rows) + 0.075 * max(len(x) for x in labels)
        fig, ax = plt.subplots(figsize=(width, 1.5 + 0.45 * len(rows) * max(1, (k + 1) // 2)))
    else:
        fig = ax.figure
    offsets = np.linspace(0.22, -0.22, k) if k > 1 else np.zeros(1)
    drawn, finite = [], []
    for j, (name, col) in enumerate(fits):
        ci = _intervals(col, level)
        for i, t in enumerate(rows):
            if not (t in col.forced or t in col.selected):
                continue        # not in this model, or not selected: no estimate to draw
            y = len(rows) - 1 - i + offsets[j]
            lo = hi = math.nan
            if ci is not None and t in ci.index:
                lo, hi = (float(v) for v in ci.loc[t, ["lo", "hi"]])
            est = float(col.coef[t])
            drawn.append((j, y, est, lo, hi))
            finite += [v for v in (lo, hi) if math.isfinite(v)]
    xlim = _xlim([d[2] for d in drawn], finite)
    for j, (name, col) in enumerate(fits):
        colour = _COLOURS[j % len(_COLOURS)]
        pts = [d for d in drawn if d[0] == j]
        for _, y, est, lo, hi in pts:
            if math.isnan(lo) or math.isnan(hi):
                continue
            a, b = max(lo, xlim[0]), min(hi, xlim[1])
            ax.plot([a, b], [y, y], color=colour, lw=2, ls="-" if col.private else "--")
            # an end beyond the axis, or open (inf: the ball binds): an arrow at the edge
            if lo < xlim[0]:
                ax.plot([xlim[0]], [y], marker="<", color=colour, ms=7)
            if hi > xlim[1]:
                ax.plot([xlim[1]], [y], marker=">", color=colour, ms=7)
        label = name if col.private else f"{name} (NOT private)"
        ax.plot([p[2] for p in pts], [p[1] for p in pts], ls="none", marker="o", ms=7, color=colour,
                mfc=colour if col.private else "white", mew=1.5, label=label)
    ax.axvline(0.0, color="grey", lw=0.8, ls=":")
    ax.set_xlim(*xlim)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(list(reversed(rows)))
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.set_xlabel("coefficient (units of the data)")
    private = [c for _, c in fits if c.private]
    with_ci = any(_intervals(c, level) is not None for c in private)
    note = (f"{100 * level:g}% private intervals (arrow: beyond the axis)" if with_ci else
            "no private intervals (fit with inference=True)") if private else f"{100 * level:g}% intervals"
    if any(t not in c.selected for c in private for t in c.candidates):
        note += "; a term not selected is not drawn (0 by selection)"
    import textwrap
    ax.text(0.0, 1.01, textwrap.fill(note, 60), transform=ax.transAxes, fontsize=7.5, va="bottom", ha="left",
            color="0.3")
    ax.set_title(title or "Coefficients", pad=14 + 9 * textwrap.fill(note, 60).count("\n"), loc="left",
                 fontsize=11)
    # the legend right of the axes: never on the points
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8.5)
    fig.tight_layout()
    return fig


def _targets(plan):
    """The targets written in a plan's assumptions (public: the user's own)."""
    prob = re.search(r"P\(true support\) >= ([0-9.eE+-]+)", plan.assumptions)
    width = re.search(r"median width <= ([0-9.eE+-]+)", plan.assumptions)
    return (float(prob.group(1)) if prob else None), (float(width.group(1)) if width else None)


def plan_plot(plan, *, ax=None, title=None):
    """A :class:`~dpsubset.studies.plan.Plan` as a figure: support recovery (and the
    interval width, when planned) across n or eps.

    Parameters
    ----------
    plan : Plan
        The result of :func:`dpsubset.plan`.
    ax : matplotlib.axes.Axes or array of two, optional
        Draw into these axes (two when the plan has widths); default a new figure.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
        Left: the probability that top-R releases the true support (mean over the
        simulated data sets), with the target as a dashed line; right, when the plan
        has ``median_width``: the median width of the slopes' 95 % intervals, a
        triangle at the top where most releases' ball binds (width ``inf``), and the
        target width. The x axis is n (log scale) when the plan searched rows, eps
        when it searched the budget; the point that meets every target is circled.
    """
    table = getattr(plan, "table", None)
    if table is None or "p_true_support" not in getattr(table, "columns", ()):
        raise TypeError(f"plan_plot: expected the result of dpsubset.plan; got {type(plan).__name__}")
    plt = _pyplot()
    over = "n" if table["n"].nunique() > 1 or table["eps"].nunique() == 1 else "eps"
    fixed = "eps" if over == "n" else "n"
    widths = "median_width" in table.columns
    if ax is None:
        fig, axes = plt.subplots(1, 2 if widths else 1, figsize=(9.5 if widths else 5.2, 3.6), squeeze=False)
        axes = list(axes[0])
    else:
        axes = list(np.atleast_1d(ax))
        fig = axes[0].figure
        if len(axes) < (2 if widths else 1):
            raise ValueError("ax: the plan has interval widths; give two axes")
    target_prob, target_width = _targets(plan)
    x = table[over].to_numpy(dtype=float)
    needed = plan.n_needed if over == "n" else plan.eps_needed
    a = axes[0]
    a.plot(x, table["p_true_support"], marker="o", color=_COLOURS[1])
    if target_prob is not None:
        a.axhline(target_prob, color="black", ls="--", lw=1, label=f"target {target_prob:g}")
    a.set_ylim(-0.03, 1.03)
    a.set_ylabel("P(true support released)")
    if widths:
        b = axes[1]
        w = table["median_width"].to_numpy(dtype=float)
        ok = np.isfinite(w)
        b.plot(x[ok], w[ok], marker="o", color=_COLOURS[3])
        if (~ok).any():
            top = (np.nanmax(w[ok]) * 1.15) if ok.any() else 1.0
            b.plot(x[~ok], np.full((~ok).sum(), top), ls="none", marker="^", color=_COLOURS[3],
                   label="ball binds (width not bounded)")
        if target_width is not None:
            b.axhline(target_width, color="black", ls="--", lw=1, label=f"target {target_width:g}")
        b.set_ylabel("median width of 95% intervals")
    for a in axes[:2 if widths else 1]:
        a.set_xscale("log")
        a.set_xticks(x, [f"{v:g}" for v in x])     # the grid's own values, not powers of ten
        a.minorticks_off()
        a.set_xlabel("n (rows)" if over == "n" else "eps (total budget)")
        if needed is not None:
            col = "p_true_support" if a is axes[0] else "median_width"
            hit = table[table[over] == needed]
            if len(hit) and math.isfinite(float(hit[col].iloc[0])):
                a.plot([needed], [float(hit[col].iloc[0])], ls="none", marker="o", ms=14, mfc="none", color="black",
                       label=f"needed: {over} = {needed:g}")
        a.grid(alpha=0.3)
        if a.get_legend_handles_labels()[0]:
            a.legend(fontsize=8, frameon=False, loc="best")
    fig.suptitle(title or f"Plan at {fixed} = {table[fixed].iloc[0]:g}: {plan.assumptions.split(', top-R')[0]}",
                 fontsize=9)
    fig.tight_layout()
    return fig
