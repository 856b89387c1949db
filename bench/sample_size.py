"""Rows needed for top-R to release the true support, as a function of eps (one search per data set).

The candidates of top-R do not depend on eps, so one exact search per data set gives
the exact probability of releasing the true support at every eps
(dpsubset.studies.experiments.top_r_recovery). The paper's model without an intercept (s = 5,
rho = 0.1, SNR = 5, b_x = b_y = 0.5), package defaults for r and lam.

    python bench/sample_size.py --p 100 --n 250 500 1000 1500 2000 3000 4000 6000 8000 --trials 3

(the table is in docs/guide/sample-size.md)
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import pandas as pd

from dpsubset.defaults import DEFAULT_LAM, default_radius
from dpsubset.studies.experiments import top_r_recovery
from dpsubset.scores.least_squares import LeastSquaresScorer
from dpsubset.privacy.sensitivity import score_sensitivity
from dpsubset.search.exact import SubsetSearch, default_R
from dpsubset.studies.simulate import make_regression


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--p", type=int, default=100)
    ap.add_argument("--s", type=int, default=5)
    ap.add_argument("--n", type=int, nargs="+", default=[250, 500, 1000, 1500, 2000, 3000, 4000])
    ap.add_argument("--eps", type=float, nargs="+", default=[0.25, 0.5, 1.0, 2.0, 4.0, 8.0])
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--time-limit", type=float, default=None)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    print("command: python bench/sample_size.py " + " ".join(sys.argv[1:] if argv is None else argv),
          flush=True)
    b = 0.5
    r = default_radius(np.full(args.p, b), b, args.s)
    rows = []
    for n in args.n:
        for t in range(args.trials):
            t0 = time.perf_counter()
            X, y, true = make_regression(n, args.p, args.s, random_state=args.seed + 1000 * t + n)
            X, y = np.clip(X, -b, b), np.clip(y, -b, b)
            sc = LeastSquaresScorer(X, y, DEFAULT_LAM, r, np.zeros((n, 0)))
            Delta = score_sensitivity(np.full(args.p, b), b, r, args.s, [], n)
            try:
                cands = SubsetSearch(sc, args.s, time_limit=args.time_limit).top_r(
                    default_R(args.p, args.s))
            except RuntimeError as exc:
                print(f"n={n} trial={t}: skipped ({type(exc).__name__})", flush=True)
                continue
            for eps in args.eps:
                rows.append(dict(n=n, trial=t, eps=eps,
                                 p=top_r_recovery(cands, eps, Delta, set(true.tolist()))[0]))
            print(f"n={n} trial={t}: {time.perf_counter() - t0:.1f} s", flush=True)
    frame = pd.DataFrame(rows)
    table = frame.groupby(["eps", "n"]).p.mean().unstack("n")
    print(f"\np={args.p} s={args.s}: exact P(top-R releases the true support), mean of "
          f"{args.trials} data sets; rows eps (selection budget), columns n")
    print("| eps | " + " | ".join(f"n = {n}" for n in table.columns) + " | n(50%) | n(90%) |")
    print("|---|" + "---:|" * (len(table.columns) + 2))
    for eps, row in table.iterrows():
        n50 = next((str(n) for n, v in row.items() if v >= 0.5), "-")
        n90 = next((str(n) for n, v in row.items() if v >= 0.9), "-")
        print(f"| {eps:g} | " + " | ".join(f"{v:.2f}" for v in row) + f" | {n50} | {n90} |")


if __name__ == "__main__":
    main()
