"""Coverage of get_prediction's intervals: the mean response (mean_ci) and a new observation (obs_ci).

Each replicate draws a training set (uniform columns on [-1, 1], three true slopes, an
intercept, normal noise), releases a fit with ``inference=True`` and asks
``get_prediction(new).summary_frame(alpha)`` for fresh rows; it counts how often the true
mean ``x'beta`` lies in ``mean_ci`` and a fresh observation ``x'beta + e`` in ``obs_ci``
(docs/benchmarks/prediction-coverage.md). The intervals are conditional on the released
support: a release that misses a true column predicts another model's mean, so the counts
are also given over the releases whose support is the true one.

    PYTHONPATH=$PWD python bench/prediction_coverage.py --reps 100 --n 3000 --eps 4
    PYTHONPATH=$PWD python bench/prediction_coverage.py --reps 100 --n 3000 --eps 4 --loss huber
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--p", type=int, default=6)
    ap.add_argument("--eps", type=float, default=4.0)
    ap.add_argument("--noise", type=float, default=0.5)
    ap.add_argument("--loss", default="squared")
    ap.add_argument("--new-rows", type=int, default=50)
    ap.add_argument("--alpha", type=float, default=0.05)
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    rng = np.random.default_rng(2026)
    hits_mean, hits_obs, widths_mean, widths_obs, total, right_support = 0, 0, [], [], 0, 0
    right = dict(mean=0, obs=0, rows=0)
    t0 = time.time()
    for rep in range(args.reps):
        df = _rows(rng, args.n, args.p)
        df["y"] = INTERCEPT + df.iloc[:, :3].to_numpy() @ BETA + args.noise * rng.standard_normal(args.n)
        res = dps.dp_best_subset("y ~ .", df, eps=args.eps, s=3, bounds=(1.0, 3.0), loss=args.loss,
                                 inference=True, random_state=rep)
        right_support += sorted(res.support) == ["x0", "x1", "x2"]
        new = _rows(rng, args.new_rows, args.p)
        mean = INTERCEPT + new.iloc[:, :3].to_numpy() @ BETA
        obs = mean + args.noise * rng.standard_normal(len(mean))
        fr = res.get_prediction(new).summary_frame(alpha=args.alpha)
        in_mean = int(((fr["mean_ci_lower"] <= mean) & (mean <= fr["mean_ci_upper"])).sum())
        in_obs = int(((fr["obs_ci_lower"] <= obs) & (obs <= fr["obs_ci_upper"])).sum())
        hits_mean, hits_obs = hits_mean + in_mean, hits_obs + in_obs
        if sorted(res.support) == ["x0", "x1", "x2"]:
            right["mean"], right["obs"], right["rows"] = (right["mean"] + in_mean, right["obs"] + in_obs,
                                                          right["rows"] + len(mean))
        widths_mean.append(float(np.median(fr["mean_ci_upper"] - fr["mean_ci_lower"])))
        widths_obs.append(float(np.median(fr["obs_ci_upper"] - fr["obs_ci_lower"])))
        total += len(mean)
        if (rep + 1) % 10 == 0:
            print(f"{rep + 1}/{args.reps} releases, {time.time() - t0:.0f} s: mean_ci {hits_mean / total:.3f}, "
                  f"obs_ci {hits_obs / total:.3f}", flush=True)
    se = lambda c: np.sqrt(c * (1 - c) / total)
    cm, co = hits_mean / total, hits_obs / total
    print(f"loss {args.loss}, n = {args.n}, p = {args.p}, eps = {args.eps:g}, noise sd {args.noise:g}, "
          f"{args.reps} releases x {args.new_rows} new rows, level {1 - args.alpha:g}; "
          f"true support released {right_support}/{args.reps}")
    print(f"  (+- : binomial standard error over the rows, which within a release are correlated)")
    print(f"  mean_ci coverage {cm:.3f} (+- {se(cm):.3f}), median width {np.median(widths_mean):.3f}")
    print(f"  obs_ci  coverage {co:.3f} (+- {se(co):.3f}), median width {np.median(widths_obs):.3f} "
          f"(oracle 2 z sd = {2 * 1.959964 * args.noise:.3f})")
    if right["rows"]:
        print(f"  releases with the true support: mean_ci {right['mean'] / right['rows']:.3f}, "
              f"obs_ci {right['obs'] / right['rows']:.3f} over {right['rows']} rows")


if __name__ == "__main__":
    main()
