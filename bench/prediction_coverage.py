"""Coverage of get_prediction's intervals: the mean response (mean_ci) and a new observation (obs_ci).

Each replicate draws a training set (uniform columns on [-1, 1], three true slopes, an
intercept, normal noise), releases a fit with ``inference=True`` and asks
``get_prediction(new).summary_frame(alpha)`` for fresh rows; it counts how often the true
mean ``x'beta`` lies in ``mean_ci`` and a fresh observation ``x'beta + e`` in ``obs_ci``
(docs/benchmarks/prediction-coverage.md). The intervals are conditional on the released
support: a release that misses a true column predicts another model's mean, so the counts
are also given over the releases whose support is the true one.

``--n`` and ``--eps`` take several values: every (n, eps) pair is run (the observation
interval's width depends on n eps through the noise of the moments). The release uses the
package's defaults (the codebook's private centring included).

    PYTHONPATH=$PWD python bench/prediction_coverage.py --reps 100 --n 3000 --eps 4
    PYTHONPATH=$PWD python bench/prediction_coverage.py --reps 100 --n 3000 --eps 4 --loss huber
    PYTHONPATH=$PWD python bench/prediction_coverage.py --reps 40 --n 500 3000 20000 --eps 1 4
"""
import argparse
import time
import warnings

import numpy as np
import pandas as pd

import dpsubset as dps

BETA = np.array([0.5, -0.5, 0.4])
INTERCEPT = 0.3


def _rows(rng, n, p):
    return pd.DataFrame(rng.uniform(-1, 1, (n, p)), columns=[f"x{j}" for j in range(p)])


def run(args, n, eps):
    """One (n, eps) cell: coverage of mean_ci and obs_ci over ``args.reps`` releases."""
    rng = np.random.default_rng(2026)
    hits_mean, hits_obs, widths_mean, widths_obs, total, right_support = 0, 0, [], [], 0, 0
    right = dict(mean=0, obs=0, rows=0)
    per_release = []
    t0 = time.time()
    for rep in range(args.reps):
        df = _rows(rng, n, args.p)
        df["y"] = INTERCEPT + df.iloc[:, :3].to_numpy() @ BETA + args.noise * rng.standard_normal(n)
        res = dps.dp_best_subset("y ~ .", df, eps=eps, s=3, bounds=(1.0, 3.0), loss=args.loss,
                                 inference=True, random_state=rep)
        right_support += sorted(res.support) == ["x0", "x1", "x2"]
        new = _rows(rng, args.new_rows, args.p)
        mean = INTERCEPT + new.iloc[:, :3].to_numpy() @ BETA
        obs = mean + args.noise * rng.standard_normal(len(mean))
        fr = res.get_prediction(new).summary_frame(alpha=args.alpha)
        in_mean = int(((fr["mean_ci_lower"] <= mean) & (mean <= fr["mean_ci_upper"])).sum())
        in_obs = int(((fr["obs_ci_lower"] <= obs) & (obs <= fr["obs_ci_upper"])).sum())
        per_release.append(in_obs / len(mean))
        hits_mean, hits_obs = hits_mean + in_mean, hits_obs + in_obs
        if sorted(res.support) == ["x0", "x1", "x2"]:
            right["mean"], right["obs"], right["rows"] = (right["mean"] + in_mean, right["obs"] + in_obs,
                                                          right["rows"] + len(mean))
        widths_mean.append(float(np.median(fr["mean_ci_upper"] - fr["mean_ci_lower"])))
        widths_obs.append(float(np.median(fr["obs_ci_upper"] - fr["obs_ci_lower"])))
        total += len(mean)
        if (rep + 1) % 10 == 0:
            print(f"  n = {n}, eps = {eps:g}: {rep + 1}/{args.reps} releases, {time.time() - t0:.0f} s: "
                  f"mean_ci {hits_mean / total:.3f}, obs_ci {hits_obs / total:.3f}", flush=True)
    se = lambda c: np.sqrt(c * (1 - c) / total)
    cm, co = hits_mean / total, hits_obs / total
    print(f"loss {args.loss}, n = {n}, p = {args.p}, eps = {eps:g} (n eps = {n * eps:g}), noise sd "
          f"{args.noise:g}, {args.reps} releases x {args.new_rows} new rows, level {1 - args.alpha:g}; "
          f"true support released {right_support}/{args.reps}")
    print(f"  (+- : binomial standard error over the rows, which within a release are correlated)")
    print(f"  mean_ci coverage {cm:.3f} (+- {se(cm):.3f}), median width {np.median(widths_mean):.3f}")
    print(f"  obs_ci  coverage {co:.3f} (+- {se(co):.3f}), median width {np.median(widths_obs):.3f} "
          f"(oracle 2 z sd = {2 * 1.959964 * args.noise:.3f}); releases whose obs_ci covers below 0.85 "
          f"of their rows: {int(np.sum(np.array(per_release) < 0.85))}/{args.reps}")
    if right["rows"]:
        print(f"  releases with the true support: mean_ci {right['mean'] / right['rows']:.3f}, "
              f"obs_ci {right['obs'] / right['rows']:.3f} over {right['rows']} rows")
    return dict(n=n, eps=eps, right=right_support, mean=cm, obs=co, w_mean=float(np.median(widths_mean)),
                w_obs=float(np.median(widths_obs)), low=int(np.sum(np.array(per_release) < 0.85)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--n", type=int, nargs="+", default=[3000])
    ap.add_argument("--p", type=int, default=6)
    ap.add_argument("--eps", type=float, nargs="+", default=[4.0])
    ap.add_argument("--noise", type=float, default=0.5)
    ap.add_argument("--loss", default="squared")
    ap.add_argument("--new-rows", type=int, default=50)
    ap.add_argument("--alpha", type=float, default=0.05)
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    rows = [run(args, n, eps) for n in args.n for eps in args.eps]
    print("| n | eps | n eps | true support | mean_ci | obs_ci | obs_ci < 0.85 in | median widths (mean, obs) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['n']} | {r['eps']:g} | {r['n'] * r['eps']:g} | {r['right']}/{args.reps} | {r['mean']:.3f} | "
              f"{r['obs']:.3f} | {r['low']}/{args.reps} | {r['w_mean']:.3f}, {r['w_obs']:.3f} |")


if __name__ == "__main__":
    main()
