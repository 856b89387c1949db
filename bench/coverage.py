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
width of the private interval and its ratio to the OLS width.

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


def make_data(n, beta, rng, loss="squared"):
    X = rng.uniform(-B_X, B_X, (n, P))
    full = np.zeros(P)
    full[:len(beta)] = beta
    if loss == "logistic":
        y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(X @ full)))).astype(int)
    else:
        y = X @ full + NOISE * rng.standard_normal(n)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(P)])
    df["y"] = y
    return df, full


def one_release(df, full, *, loss, eps, split, seed, share=None):
    """(right support?, [(covered, width, ols_width) per released slope])."""
    bounds = (dps.Bounds(x={f"x{j}": (-B_X, B_X) for j in range(P)}) if loss == "logistic"
              else (B_X, B_Y))
    res = dps.dp_best_subset("y ~ .", df, eps=eps, s=S, bounds=bounds, loss=loss, inference=True,
                             split=split, random_state=seed,
                             eps_inference=None if share is None else share * eps)
    ci = res.conf_int()
    cols = list(res.support)
    model = sm.Logit if loss == "logistic" else sm.OLS
    ols = model(df["y"], sm.add_constant(df[cols])).fit(disp=0).conf_int() if loss == "logistic" \
        else model(df["y"], sm.add_constant(df[cols])).fit().conf_int()
    out = []
    for c in cols:
        target = full[int(c[1:])]
        lo, hi = ci.loc[c, 0], ci.loc[c, 1]
        out.append((lo <= target <= hi, hi - lo, ols.loc[c, 1] - ols.loc[c, 0], int(c[1:]) >= 2))
    return sorted(int(c[1:]) for c in cols) == list(range(S)), out


def run_cell(loss, n, eps, mode, reps, signal, seed0, share=None):
    beta = (LOGIT_BETAS if loss == "logistic" else BETAS)[signal]
    right, cov_all, cov_right, cov_contested, widths, ratios = 0, [], [], [], [], []
    t0 = time.time()
    for rep in range(reps):
        rng = np.random.default_rng(seed0 + rep)
        df, full = make_data(n, beta, rng, loss)
        ok, rows = one_release(df, full, loss=loss, eps=eps, split=mode == "split", seed=seed0 + rep,
                               share=share)
        right += ok
        for covered, w, w_ols, contested in rows:
            if ok or loss != "logistic":  # a logistic sub-model's coefficients are not beta_j
                cov_all.append(covered)
                if contested:  # the slot the third effect competes for with the noise columns
                    cov_contested.append(covered)
            if ok:
                cov_right.append(covered)
            widths.append(w)
            ratios.append(w / w_ols)
    return dict(loss=loss, n=n, eps=eps, mode=mode, signal=signal, reps=reps, share=share,
                right_support=right / reps,
                coverage_all=float(np.mean(cov_all)) if cov_all else float("nan"),
                coverage_right=float(np.mean(cov_right)) if cov_right else float("nan"),
                coverage_contested=float(np.mean(cov_contested)) if cov_contested else float("nan"),
                median_width=float(np.median(widths)), width_vs_ols=float(np.median(ratios)),
                seconds=time.time() - t0)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=500, help="data sets per cell (the issue asks 500)")
    ap.add_argument("--draws", type=int, default=bootstrap.DEFAULT_DRAWS, help="bootstrap refits per release")
    ap.add_argument("--n", type=int, nargs="+", default=[1000, 5000, 20000])
    ap.add_argument("--eps", type=float, nargs="+", default=[1.0, 4.0, 16.0])
    ap.add_argument("--losses", nargs="+", default=["squared", "huber"])
    ap.add_argument("--modes", nargs="+", default=["conditional", "split"])
    ap.add_argument("--signal", choices=sorted(BETAS), default="strong")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--share", type=float, nargs="+", default=[None],
                    help="eps_inference / eps (default: the package's default share)")
    ap.add_argument("--out", default=None, help="CSV file the rows are appended to")
    args = ap.parse_args(argv)
    bootstrap.DEFAULT_DRAWS = args.draws
    warnings.simplefilter("ignore")
    rows = []
    print(f"reps = {args.reps} per cell, {args.draws} bootstrap refits per release, signal {args.signal}")
    print("| loss | n | eps | mode | reps | true support | coverage (all) | coverage (true support) "
          "| coverage (third slot) | median width | width / OLS |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for loss in args.losses:
        for n in args.n:
            for eps in args.eps:
                for mode, share in [(m, sh) for m in args.modes for sh in args.share]:
                    row = run_cell(loss, n, eps, mode, args.reps, args.signal, args.seed, share)
                    rows.append(row)
                    tag = mode if share is None else f"{mode}, share {share:g}"
                    print(f"| {loss} | {n} | {eps:g} | {tag} | {row['reps']} | {row['right_support']:.2f} "
                          f"| {row['coverage_all']:.3f} | {row['coverage_right']:.3f} "
                          f"| {row['coverage_contested']:.3f} "
                          f"| {row['median_width']:.3g} | {row['width_vs_ols']:.2f} |", flush=True)
                    if args.out:
                        with open(args.out, "a", newline="") as fh:
                            w = csv.DictWriter(fh, fieldnames=list(row))
                            if fh.tell() == 0:
                                w.writeheader()
                            w.writerow(row)
    return rows


if __name__ == "__main__":
    main()
