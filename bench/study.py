"""The paper's recovery comparison (Section 5 / Figure 1 of Prastakos et al. 2025).

Setting: s = 5, SNR = 5, rho = 0.1, eps = 1 for selection (no refit), public
bounds b_x = b_y = 0.5, r = 1.1, lam = 120; per n, ``--trials`` datasets and 50
private releases per method and dataset. Prints, per method and n, the mean
fraction of exact recoveries (with its standard error over trials), the mean F1
and the mean seconds per trial (candidates + all draws), then for each method the
smallest n of the grid where the mean recovery reaches 50 % and 90 %. Writes the
tidy frame and a Figure-1 style plot to bench/out/.

    python bench/study.py --p 100 --assume --trials 10 --n 1000 2000 3000 4000 5000 6000 7000 8000
    python bench/study.py --p 1000 --assume --trials 10 --n 2000 4000 6000 8000 12000 16000
    python bench/study.py --p 10000 --trials 3 --n 4000 8000 12000 16000 --methods top_r samp_agg dp_sis mcmc
    python bench/study.py --p 10000 --assume --trials 3 --n 8000 12000 16000 --methods mistakes --time-limit 600

(the tables these printed are in the README, section Benchmarks)
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

from dpsubset.experiments import plot_recovery, recovery_study, recovery_table

DEFAULT_METHODS = ["top_r", "mistakes", "samp_agg", "dp_sis", "mcmc"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--p", type=int, default=100)
    ap.add_argument("--s", type=int, default=5)
    ap.add_argument("--n", type=int, nargs="+", default=[1000, 2000, 4000, 8000])
    ap.add_argument("--methods", nargs="+", default=DEFAULT_METHODS)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--draws", type=int, default=50)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--lam", type=float, default=120.0)
    ap.add_argument("--time-limit", type=float, default=None,
                    help="seconds per exact solve; a method that runs out is reported as skipped")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--assume", action="store_true",
                    help="also run mistakes with gap_check='assume' (the paper's version, "
                         "conditional guarantee) as 'mistakes_assume'")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "out"))
    args = ap.parse_args(argv)
    print("command: python bench/study.py " + " ".join(sys.argv[1:] if argv is None else argv))
    print(f"p={args.p} s={args.s} SNR=5 rho=0.1 eps={args.eps} b_x=b_y=0.5 r=1.1 lam={args.lam} "
          f"trials={args.trials} draws={args.draws}", flush=True)
    t0 = time.perf_counter()
    methods = list(args.methods)
    options = {}
    if args.assume:
        methods.append("mistakes_assume=mistakes")
        options["mistakes_assume"] = {"gap_check": "assume"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        frame = recovery_study(methods, args.n, p=args.p, s=args.s, trials=args.trials,
                               draws=args.draws, eps=args.eps, lam=args.lam,
                               time_limit=args.time_limit, n_jobs=args.jobs,
                               method_options=options,
                               random_state=args.seed, progress=sys.stderr.isatty())
    print(recovery_table(frame))
    print(f"\nwall time {time.perf_counter() - t0:.0f} s")
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, f"study_p{args.p}")
    frame.to_csv(stem + ".csv", index=False)
    import matplotlib
    matplotlib.use("Agg")
    plot_recovery(frame).savefig(stem + ".png", dpi=120)
    print(f"wrote {stem}.csv and {stem}.png")


if __name__ == "__main__":
    main()
