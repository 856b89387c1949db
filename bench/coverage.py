"""Coverage of the private 95 % intervals of ``inference=True`` (issue 26), both modes.

Data: x uniform on [-1, 1]^p (p = 10, independent columns), y = x'beta + e, beta =
(0.5, -0.5, 0.25, 0, ..., 0) ("strong"), (0.5, -0.5, 0.1, 0, ...) ("weak") or
(0.5, -0.5, 0.05, 0, ...) ("close": the third effect near the noise of its estimate), e normal
with sd 0.5 (least squares and Huber), bounds (1, 3), s = 3, the intercept always in.
With independent, centred columns the coefficients of the best linear predictor on any
released support S are beta_j for j in S (0 for a noise column), so every released
interval has a known target, whether or not the support is the true one. "third slot":
the coverage over released slopes other than x0 and x1 (the third effect or the noise
column that took its place), where selection on the same rows biases the conditional
intervals. Logistic: y = 1
with probability 1 / (1 + exp(-x'beta)), beta = (1.5, -1.5, 1.0) or (1.5, -1.5, 0.4);
a logistic sub-model's coefficients are not beta_j when a true column is left out, so its
coverage is counted over releases of the true support only, and the comparison is
statsmodels' Logit.

For each cell (loss, n, eps, mode) and data set: one release with ``inference=True``
(``split=True`` in the split mode) at the default eps_inference, and statsmodels' OLS
interval on the same support from all rows (non-private). Printed per cell:
reps, share of releases with the true support, coverage of the slopes' 95 % intervals
over every released slope (all) and over releases with the true support (right), median
width of the private interval and its ratio to the OLS width. ``--summarise RAW ...``
adds the issue's criterion (all slopes in the split mode, the true support's in the
conditional mode and for logistic), its binomial standard error and where it lies
against [0.93, 0.97] ("band").

    python bench/coverage.py                              # the issue's grid, 500 data sets per cell
    python bench/coverage.py --reps 40 --draws 200        # what a shared machine allows
    python bench/coverage.py --n 1000 --eps 4 --modes split --signal weak

``--draws`` sets dpsubset.inference.bootstrap.DEFAULT_DRAWS (the bootstrap refits per
release; the package's default is 500). Results go to stdout as a Markdown table and,
row by row, to ``--out`` (CSV) so that a long run keeps what it finished.
"""
from __future__ import annotations

import argparse
import csv
import time
import warnings

import numpy as np
import pandas as pd
import statsmodels.api as sm

import dpsubset as dps
from dpsubset.inference import bootstrap

P, S, B_X, B_Y, NOISE = 10, 3, 1.0, 3.0, 0.5
BETAS = {"strong": (0.5, -0.5, 0.25), "weak": (0.5, -0.5, 0.1), "close": (0.5, -0.5, 0.05)}
#: Logistic: log-odds coefficients (the scale of a logistic model's effects).
LOGIT_BETAS = {"strong": (1.5, -1.5, 1.0), "weak": (1.5, -1.5, 0.4), "close": (1.5, -1.5, 0.2)}


def make_data(n, beta, rng, loss="squared", noise="normal"):
    X = rng.uniform(-B_X, B_X, (n, P))
    full = np.zeros(P)
    full[:len(beta)] = beta
    if loss == "logistic":
        y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(X @ full)))).astype(int)
    elif noise == "uniform":  # the same sd, bounded: |y| stays inside B_Y, nothing is clipped
        y = X @ full + NOISE * np.sqrt(3.0) * rng.uniform(-1.0, 1.0, n)
    else:
        y = X @ full + NOISE * rng.standard_normal(n)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(P)])
    df["y"] = y
    return df, full


#: Interval variants computed from the same bootstrap errors e = theta* - theta~ (post-processing,
#: so every variant is measured on the same releases): the package's own (``conf_int()``), the
#: basic (pivotal) interval, the centred one (basic without the errors' mean), and the
#: percentile interval theta~ + [q(alpha/2), q(1 - alpha/2)].
VARIANTS = ("package", "basic", "centred", "percentile")


def _variants(est, e, alpha=0.05):
    lo_q, hi_q = np.quantile(e, [alpha / 2, 1 - alpha / 2])
    lo_c, hi_c = lo_q - e.mean(), hi_q - e.mean()
    return {"basic": (est - hi_q, est - lo_q), "centred": (est - hi_c, est - lo_c),
            "percentile": (est + lo_q, est + hi_q)}


#: With ``--codebook``: the columns and the response bounded by codebook intervals, so the
#: default call centres them (docs/methods/centring.md), as issue 37's simulation did.
CODEBOOK = False


def one_release(df, full, *, loss, eps, split, seed, share=None):
    """(right support?, [per released slope: target, covered and widths of each variant, ...])."""
    xbox = {f"x{j}": (-B_X, B_X) for j in range(P)}
    bounds = (dps.Bounds(x=xbox) if loss == "logistic"
              else dps.Bounds(x=xbox, y=(-B_Y, B_Y)) if CODEBOOK else (B_X, B_Y))
    res = dps.dp_best_subset("y ~ .", df, eps=eps, s=S, bounds=bounds, loss=loss, inference=True,
                             refit=dps.Refit(split=split), random_state=seed,
                             budget=dps.Budget(inference=None if share is None else share * eps))
    ci = res.conf_int()
    inf = res.inference
    cols = list(res.support)
    exog = sm.add_constant(df[cols])
    ols = (sm.Logit(df["y"], exog).fit(disp=0) if loss == "logistic" else sm.OLS(df["y"], exog).fit()).conf_int()
    out = []
    # the intercept's target is 0 (centred columns, a response of mean 0); slot -1
    terms = ["Intercept"] if "Intercept" in inf.names and loss != "logistic" else []
    ols = ols.rename(index={"const": "Intercept"})
    for c in terms + cols:
        j = inf.names.index(c)
        target = 0.0 if c == "Intercept" else full[int(c[1:])]
        ends = {"package": (ci.loc[c, 0], ci.loc[c, 1]), **_variants(inf.estimate[j], inf.errors[:, j])}
        out.append(dict(slot=-1 if c == "Intercept" else int(c[1:]), target=target, pvalue=res.pvalues[c],
                        close_call=c in inf.close_calls(res.support), estimate=inf.estimate[j],
                        err_mean=inf.errors[:, j].mean(), err_sd=inf.errors[:, j].std(ddof=1),
                        ols_width=ols.loc[c, 1] - ols.loc[c, 0], contested=c != "Intercept" and int(c[1:]) >= 2,
                        sphere_share=getattr(inf, "sphere_share", float("nan")),
                        on_sphere=bool(inf.on_sphere), open_ends=bool(np.isinf(ci.loc[c, 0]) or np.isinf(ci.loc[c, 1])),
                        **{f"{v}_lo": ends[v][0] for v in VARIANTS}, **{f"{v}_hi": ends[v][1] for v in VARIANTS}))
    return sorted(int(c[1:]) for c in cols) == list(range(S)), out


def run_cell(loss, n, eps, mode, reps, signal, seed0, share=None, raw=None, noise="normal"):
    """One cell: coverage and width of every interval variant; with ``raw``, every released
    slope is appended to that CSV as it comes (a long run keeps what it finished)."""
    beta = (LOGIT_BETAS if loss == "logistic" else BETAS)[signal]
    right, slopes = 0, []
    t0 = time.time()
    for rep in range(reps):
        rng = np.random.default_rng(seed0 + rep)
        df, full = make_data(n, beta, rng, loss, noise)
        t1 = time.time()
        ok, rows = one_release(df, full, loss=loss, eps=eps, split=mode == "split", seed=seed0 + rep,
                               share=share)
        right += ok
        for row in rows:
            row.update(loss=loss, n=n, eps=eps, mode=mode, signal=signal, share=share, rep=seed0 + rep, noise=noise,
                       codebook=CODEBOOK,
                       right_support=ok, seconds=time.time() - t1)
        slopes += rows
        if raw:
            _append_csv(raw, rows)
    return summarise(pd.DataFrame(slopes), dict(loss=loss, n=n, eps=eps, mode=mode, signal=signal,
                                                reps=reps, share=share, right_support=right / reps,
                                                seconds=time.time() - t0))


def summarise(sl, head):
    """Coverage (all, true support, third slot) and median widths of each variant of one cell."""
    row = dict(head)
    # the intercept (slot -1, recorded since issue 37) has its own column; the rest are slopes
    icpt = sl[sl["slot"] < 0]
    row["coverage_intercept"] = float(((icpt["package_lo"] <= icpt["target"])
                                       & (icpt["target"] <= icpt["package_hi"])).mean()) if len(icpt) else float("nan")
    row["width_vs_ols_intercept"] = float(((icpt["package_hi"] - icpt["package_lo"]) / icpt["ols_width"]).median()) \
        if len(icpt) else float("nan")
    sl = sl[sl["slot"] >= 0]
    # a logistic sub-model's coefficients are not beta_j: its coverage counts the true support only
    counted = sl[sl["right_support"]] if head["loss"] == "logistic" else sl
    for v in VARIANTS:
        cov = lambda d: float(((d[f"{v}_lo"] <= d["target"]) & (d["target"] <= d[f"{v}_hi"])).mean()) \
            if len(d) else float("nan")
        tag = "" if v == "package" else f"_{v}"
        row[f"coverage_all{tag}"] = cov(counted)
        row[f"coverage_right{tag}"] = cov(sl[sl["right_support"]])
        row[f"coverage_contested{tag}"] = cov(counted[counted["contested"]])
        width = sl[f"{v}_hi"] - sl[f"{v}_lo"]
        row[f"median_width{tag}"] = float(width.median())
        row[f"width_vs_ols{tag}"] = float((width / sl["ols_width"]).median())
    row.update(criterion_band(sl, head))
    return row


def criterion_band(sl, head, lo=0.93, hi=0.97, min_right=20):
    """The issue's criterion for one cell: the coverage it reads (all slopes in the split
    mode, the true support's in the conditional mode; the true support's for logistic in
    both), its binomial standard error sqrt(0.95 x 0.05 / slopes), and where it lies
    against [lo, hi]: "in", "above"/"below", "(< 2 s.e.)" when within two standard errors,
    or "(k right)" when fewer than ``min_right`` releases count."""
    right_only = head["mode"] == "conditional" or head["loss"] == "logistic"
    sl = sl[sl["slot"] >= 0]
    d = sl[sl["right_support"]] if right_only else sl
    releases = d["rep"].nunique()
    if len(d) == 0 or (right_only and releases < min_right):
        return dict(criterion=float("nan"), se=float("nan"), band=f"({releases} right)")
    cov = float(((d["package_lo"] <= d["target"]) & (d["target"] <= d["package_hi"])).mean())
    se = float(np.sqrt(0.95 * 0.05 / len(d)))
    band = "in" if lo <= cov <= hi else ("above" if cov > hi else "below")
    if band != "in" and min(abs(cov - lo), abs(cov - hi)) < 2 * se:
        band += " (< 2 s.e.)"
    return dict(criterion=cov, se=se, band=band)


def summarise_raw(paths, variant="package"):
    """The table of every cell in ``--raw`` files, with its number of data sets (a cell a run
    did not finish shows how many it has), the chosen variant in the main columns and the
    coverage of every variant at the end."""
    sl = pd.concat([pd.read_csv(p) for p in paths], ignore_index=True)
    keys = ["loss", "n", "eps", "mode"]
    tag = "" if variant == "package" else f"_{variant}"
    print("| loss | n | eps | mode | data sets | true support | coverage (all) | coverage (true support) "
          "| coverage (third slot) | s.e. | band | median width | width / OLS | intercept | intercept width / OLS | "
          + " | ".join(VARIANTS) + " |")
    print("|---" * (15 + len(VARIANTS)) + "|")
    rows = []
    # files from before issue 37 have neither column: normal errors, scalar bounds
    sl = sl.assign(noise=sl["noise"].fillna("normal") if "noise" in sl else "normal",
                   codebook=sl["codebook"].fillna(False).astype(bool) if "codebook" in sl else False)
    keys += ["noise", "codebook"]
    for key, d in sl.groupby(keys, sort=False):
        loss, n, eps, mode = key[:4]
        mode += "".join([f", {key[4]} errors" if key[4] != "normal" else "", ", codebook" if key[5] else ""])
        reps = d["rep"].nunique()
        right = d.groupby("rep")["right_support"].first().mean()
        row = summarise(d, dict(loss=loss, n=n, eps=eps, mode=mode, reps=reps, right_support=right))
        rows.append(row)
        other = " | ".join(f"{row['coverage_all' + ('' if v == 'package' else '_' + v)]:.3f}" for v in VARIANTS)
        print(f"| {loss} | {n} | {eps:g} | {mode} | {reps} | {right:.2f} | {row['coverage_all' + tag]:.3f} "
              f"| {row['coverage_right' + tag]:.3f} | {row['coverage_contested' + tag]:.3f} "
              f"| {row['se']:.3f} | {row['band']} | {row['median_width' + tag]:.3g} | {row['width_vs_ols' + tag]:.2f} "
              f"| {row['coverage_intercept']:.3f} | {row['width_vs_ols_intercept']:.2f} | {other} |")
    return rows


def _append_csv(path, rows):
    with open(path, "a", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        if fh.tell() == 0:
            w.writeheader()
        w.writerows(rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=500, help="data sets per cell (the issue asks 500)")
    ap.add_argument("--draws", type=int, default=bootstrap.DEFAULT_DRAWS, help="bootstrap refits per release")
    ap.add_argument("--n", type=int, nargs="+", default=[1000, 5000, 20000])
    ap.add_argument("--eps", type=float, nargs="+", default=[1.0, 4.0, 16.0])
    ap.add_argument("--losses", nargs="+", default=["squared", "huber"])
    ap.add_argument("--modes", nargs="+", default=["conditional", "split"])
    ap.add_argument("--signal", choices=sorted(BETAS), default="strong")
    ap.add_argument("--noise", choices=["normal", "uniform"], default="normal",
                    help="the errors' law (uniform: sd 0.5 and bounded, so the response is never clipped)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--share", type=float, nargs="+", default=[None],
                    help="eps_inference / eps (default: the package's default share)")
    ap.add_argument("--out", default=None, help="CSV file the rows are appended to")
    ap.add_argument("--raw", default=None, help="CSV file every released slope is appended to")
    ap.add_argument("--summarise", nargs="+", default=None, metavar="RAW",
                    help="print the table of finished (or partly finished) cells from --raw files and stop")
    ap.add_argument("--variant", default="package", choices=VARIANTS,
                    help="with --summarise: the interval variant the main columns show")
    ap.add_argument("--codebook", action="store_true",
                    help="bounds as codebook intervals (x in [-1, 1], y in [-3, 3]): the default call centres them")
    args = ap.parse_args(argv)
    global CODEBOOK
    CODEBOOK = args.codebook
    if args.summarise:
        return summarise_raw(args.summarise, args.variant)
    bootstrap.DEFAULT_DRAWS = args.draws
    warnings.simplefilter("ignore")
    rows = []
    print(f"reps = {args.reps} per cell, {args.draws} bootstrap refits per release, signal {args.signal}")
    print("| loss | n | eps | mode | reps | true support | coverage (all) | coverage (true support) "
          "| coverage (third slot) | median width | width / OLS | intercept |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for loss in args.losses:
        for n in args.n:
            for eps in args.eps:
                for mode, share in [(m, sh) for m in args.modes for sh in args.share]:
                    row = run_cell(loss, n, eps, mode, args.reps, args.signal, args.seed, share, args.raw,
                                   args.noise)
                    rows.append(row)
                    tag = mode if share is None else f"{mode}, share {share:g}"
                    print(f"| {loss} | {n} | {eps:g} | {tag} | {row['reps']} | {row['right_support']:.2f} "
                          f"| {row['coverage_all']:.3f} | {row['coverage_right']:.3f} "
                          f"| {row['coverage_contested']:.3f} "
                          f"| {row['median_width']:.3g} | {row['width_vs_ols']:.2f} "
                          f"| {row['coverage_intercept']:.3f} |", flush=True)
                    if args.out:
                        _append_csv(args.out, [row])
    return rows


if __name__ == "__main__":
    main()
