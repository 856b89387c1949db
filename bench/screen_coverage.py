"""How often the private screen keeps every true column (an upper bound on recovery after it).

No search is needed: the DP-SIS screen of dp_best_subset(screen=...) is drawn ``--screens``
times per data set (k columns, ``--share`` of eps = 1), and the fraction of screens that
contain the whole true support is printed, with the rank of the weakest true column among
the marginal scores |x_j'y| (NON-PRIVATE, for the study). Designs as in bench/screening.py.

    python bench/screen_coverage.py --design masking --p 1000 --n 2000 4000 8000
    python bench/screen_coverage.py --design paper --p 10000 --n 1000 2000 4000
    python bench/screen_coverage.py --design paper --rho 0.5 --p 1000 --n 2000 4000 8000
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

from dpsubset.selection.baselines.dp_sis import sample_lipschitz_top_k, sis_scores
from dpsubset.studies.simulate import make_regression

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from screening import masking_data  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--design", choices=["paper", "masking"], default="paper")
    ap.add_argument("--p", type=int, default=1000)
    ap.add_argument("--s", type=int, default=5)
    ap.add_argument("--rho", type=float, default=0.1)
    ap.add_argument("--n", type=int, nargs="+", default=[1000, 2000, 4000])
    ap.add_argument("--k", type=int, default=None)
    ap.add_argument("--share", type=float, default=0.25)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--screens", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    print("command: python bench/screen_coverage.py " + " ".join(sys.argv[1:] if argv is None else argv))
    k = args.k or 10 * args.s
    b = 0.5
    print(f"| design | p | n | P(all true columns kept), k = {k}, eps_screen = {args.share * args.eps:g} "
          "| worst rank of a true column (median) |")
    print("|---|---:|---:|---:|---:|")
    for n in args.n:
        cover, ranks = [], []
        for t in range(args.trials):
            rng = np.random.default_rng(args.seed + 1000 * t + n)
            if args.design == "masking":
                X, y, true = masking_data(n, args.p, args.s, rng)
            else:
                X, y, true = make_regression(n, args.p, args.s, rho=args.rho, random_state=rng)
            X, y = np.clip(X, -b, b), np.clip(y, -b, b)
            x = sis_scores(X, y, np.full(args.p, b), b)
            order = np.argsort(-x)
            ranks.append(max(int(np.where(order == j)[0][0]) + 1 for j in true))
            Y = sample_lipschitz_top_k(x, k, args.share * args.eps, rng, size=args.screens)
            cover.append(np.mean([set(true.tolist()) <= set(row.tolist()) for row in Y]))
        label = args.design if args.design == "masking" else f"paper, rho = {args.rho:g}"
        print(f"| {label} | {args.p} | {n} | {np.mean(cover):.2f} | {int(np.median(ranks))} |",
              flush=True)


if __name__ == "__main__":
    main()
