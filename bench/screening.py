"""What private screening buys at large p, and what it costs where marginal screening misleads.

Compares, on the paper's model without an intercept (s = 5, b_x = b_y = 0.5, eps = 1 for
selection, package defaults r = b_y / sqrt(B_s) and lam = 1):

    top_r           exact top-R over all p columns
    top_r+screen    dp_best_subset(screen=dict(k=K, share=SHARE)): a DP-SIS screen to K
                    columns with SHARE of eps, then top-R with the rest on those K
    dp_sis          DP-SIS releasing the s columns directly (for reference)

with exact release probabilities for top-R (``exact=True`` of recovery_study; a screened
row averages the exact conditional probability over ``--screens`` private screens per
data set). Designs:

    paper     the paper's generator (rho = --rho, SNR 5, Gaussian noise)
    masking   a true column with no marginal correlation with y: columns 0..s-2 are
              N(0, 1), column s-1 is (u - (x_0 + ... + x_{s-2}) / 2) / sqrt((s + 3) / 4)
              and y = sum_j beta_j x_j + noise with beta chosen so that
              cov(x_{s-1}, y) = 0 (SNR 5); the other columns are N(0, 1) noise.

    python bench/screening.py --p 10000 --n 1500 2000 3000 4000 --trials 3
    python bench/screening.py --p 1000 --design masking --n 1000 2000 4000 --trials 3
    python bench/screening.py --p 1000 --design paper --rho 0.5 --n 1000 2000 4000 --trials 3 --time-limit 120

(the tables are in docs/methods/screening.md)
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings

import numpy as np

from dpsubset import Method, Search
from dpsubset.studies.experiments import recovery_study, recovery_table
from dpsubset.studies.simulate import Simulation
from dpsubset.selection.screening import DEFAULT_SCREEN_SHARE


def masking_data(n, p, s, rng, snr=5.0):
    """A true column uncorrelated with y in the population (module docstring)."""
    X = rng.standard_normal((n, p))
    m = s - 1
    X[:, m] = (X[:, m] - X[:, :m].sum(axis=1) / 2) / math.sqrt((m + 4) / 4)
    # beta_j = 1 for j < m; beta_m makes cov(x_m, y) = 0:
    # cov(x_m, sum_{j<m} x_j) = -(m / 2) / c, var(x_m) = 1, c = sqrt((m + 4) / 4)
    c = math.sqrt((m + 4) / 4)
    beta = np.zeros(p)
    beta[:m] = 1.0
    beta[m] = (m / 2) / c
    beta /= np.linalg.norm(beta) * 2
    signal = X @ beta
    e = rng.standard_normal(n)
    y = signal + e * np.linalg.norm(signal) / (math.sqrt(snr) * np.linalg.norm(e))
    return X, y, np.arange(s)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--p", type=int, default=10000)
    ap.add_argument("--s", type=int, default=5)
    ap.add_argument("--n", type=int, nargs="+", default=[1500, 2000, 3000, 4000])
    ap.add_argument("--design", choices=["paper", "masking"], default="paper")
    ap.add_argument("--rho", type=float, default=0.1)
    ap.add_argument("--k", type=int, default=None, help="columns kept (default 10 s)")
    ap.add_argument("--share", type=float, default=DEFAULT_SCREEN_SHARE,
                    help="share of the selection eps for the screen (default: the package's, 1/2)")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--screens", type=int, default=20,
                    help="private screens per data set for the screened rows")
    ap.add_argument("--methods", nargs="+", default=["top_r", "top_r+screen", "dp_sis"])
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--time-limit", type=float, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "out"))
    args = ap.parse_args(argv)
    print("command: python bench/screening.py " + " ".join(sys.argv[1:] if argv is None else argv))
    k = args.k or 10 * args.s
    print(f"design={args.design} p={args.p} s={args.s} rho={args.rho} eps={args.eps} "
          f"k={k} share={args.share} trials={args.trials} screens={args.screens}; "
          "exact top-R probabilities; defaults r, lam; no intercept", flush=True)
    methods = {m: Method("top_r", screen=dict(k=k, share=args.share)) if m == "top_r+screen" else m
               for m in args.methods}
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        frame = recovery_study(methods, args.n, p=args.p, s=args.s, trials=args.trials,
                               draws=args.screens, eps=args.eps, ball=None, intercept=False, exact=True,
                               model=Simulation(rho=args.rho,
                                                generator=masking_data if args.design == "masking" else None),
                               search=Search(time_limit=args.time_limit), random_state=args.seed,
                               progress=sys.stderr.isatty())
    print(recovery_table(frame))
    print(f"\nwall time {time.perf_counter() - t0:.0f} s")
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, f"screening_{args.design}_rho{args.rho}_p{args.p}")
    frame.to_csv(stem + ".csv", index=False)
    print(f"wrote {stem}.csv")


if __name__ == "__main__":
    main()
