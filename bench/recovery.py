"""Recovery of the true support in the paper's setting, and the time per call.

Setting (Section 5 of Prastakos et al. 2025): rho = 0.1, SNR = 5, s = 5,
b_x = b_y = 0.5, r = 1.1, eps = 1 for selection (no refit), lam = 120 (the paper's
value at p = 100). For each n one dataset is drawn, its exact candidate sets are
computed once (timed), and 50 releases are drawn from them; the table gives the
fraction of releases equal to the true support.

    python bench/recovery.py                 # p = 100, n in 1000 2000 4000 8000
    python bench/recovery.py --p 1000 --n 1000 --methods top_r
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from dpsubset.mechanisms import sample_gap_checked, sample_mistakes, sample_top_r
from dpsubset.scores.least_squares import LeastSquaresScorer
from dpsubset.privacy.sensitivity import score_sensitivity
from dpsubset.search.exact import SubsetSearch, default_R
from dpsubset.studies.simulate import make_regression


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--p", type=int, default=100)
    ap.add_argument("--n", type=int, nargs="+", default=[1000, 2000, 4000, 8000])
    ap.add_argument("--draws", type=int, default=50)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--lam", type=float, default=120.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--methods", nargs="+", default=["top_r", "mistakes"])
    args = ap.parse_args()
    s, b, r = 5, 0.5, 1.1
    print(f"p={args.p} s={s} eps={args.eps} lam={args.lam} r={r} b_x=b_y={b} draws={args.draws}")
    print(f"{'n':>6} {'method':>18} {'recovery':>9} {'search s':>9} {'closed':>7} {'completion':>10}")
    for n in args.n:
        X, y, true = make_regression(n, args.p, s, random_state=args.seed)
        X, y = np.clip(X, -b, b), np.clip(y, -b, b)
        sc = LeastSquaresScorer(X, y, args.lam, r, np.ones((n, 1)))
        Delta = score_sensitivity(np.full(args.p, b), b, r, s, [1.0], n)
        search = SubsetSearch(sc, s)
        rng = np.random.default_rng(args.seed)
        t0 = time.perf_counter()
        topr = search.top_r(default_R(args.p, s))
        t_topr = time.perf_counter() - t0
        hit = lambda S: np.array_equal(np.sort(S), true)  # noqa: E731
        if "top_r" in args.methods:
            rec = np.mean([hit(sample_top_r(topr, args.eps, Delta, rng)) for _ in range(args.draws)])
            print(f"{n:>6} {'top_r':>18} {rec:>9.2f} {t_topr:>9.2f} "
                  f"{str(all(c.closed for c in topr.certificates)):>7} {topr.completion_rounds:>10}",
                  flush=True)
        if "mistakes" in args.methods:
            t0 = time.perf_counter()
            mc = search.mistake_classes()
            t_m = time.perf_counter() - t0 + t_topr
            closed = all(c.closed for c in mc.certificates)
            rec = np.mean([hit(sample_mistakes(mc, args.eps, Delta, rng)) for _ in range(args.draws)])
            print(f"{n:>6} {'mistakes (assume)':>18} {rec:>9.2f} {t_m:>9.2f} {str(closed):>7}", flush=True)
            eps0 = 0.25 * args.eps
            outs = [sample_gap_checked(mc, topr, args.eps - eps0, eps0, 1e-6, Delta, rng)
                    for _ in range(args.draws)]
            rec = np.mean([hit(S) for S, _ in outs])
            passed = np.mean([ok for _, ok in outs])
            print(f"{n:>6} {'mistakes (ptr)':>18} {rec:>9.2f} {t_m:>9.2f} {str(closed):>7}"
                  f"   gap test passed in {passed:.2f} of draws (gap/2Delta = {mc.gap / (2 * Delta):.1f})",
                  flush=True)


if __name__ == "__main__":
    main()
