"""The exact search on the hard cells of issue 13: correlated columns, low signal, small r.

Data: the paper's generator (dpsubset.studies.simulate.make_regression, AR(1) correlation rho),
clipped to the public bounds (0.5, 0.5) as dp_best_subset does with bounds=(0.5, 0.5)
and "y ~ 0 + ." (no intercept). Cells (n = 3000, rho = 0.5):

- s = 5, SNR in {2, 5}, r = b_y / (b_x sqrt(s)) = 0.5 / (0.5 sqrt(5)) ~ 0.45, lam = 1
  (the ball binds for every support);
- s = 8, SNR = 2, r = 1.1, lam = 120 (the paper's setting).

For each cell and seed, in a fresh SubsetSearch each time: the candidate computation of
top-R (R = 2 + (p - s) s: best support, neighbourhood, two-mistake class, completion)
and that of the mistakes mechanism (best support, the class brackets and the gap
check's second best, with every open class then closed exactly, the worst case of the
lazy draw). Printed per call: seconds, whether every certificate closed, and the
routes that certified (certificate methods), and the branch-and-bound nodes.

    python bench/bnb_hard_cells.py                 # p = 100, 3 seeds per cell
    python bench/bnb_hard_cells.py --p 1000 --seeds 1
    python bench/bnb_hard_cells.py --noise --seeds 2  # p = 40, n = 200, pure noise
    python bench/bnb_hard_cells.py --extra            # n = 1000, rho = 0.1, r = 0.2

The --noise cell: one common factor (correlation 0.6) in the columns, y pure noise,
bounds (2, 2), r = 1, lam = 1, s = 5 (a tiny ridge and an inactive ball: the
relaxation is weak there and the search falls back to enumeration).

Times are wall-clock on whatever else the machine is running.
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np

from dpsubset.scores.least_squares import LeastSquaresScorer
from dpsubset.search.exact import SubsetSearch, default_R
from dpsubset.search.outer_approximation import SearchTimeout
from dpsubset.studies.simulate import make_regression

B = 0.5


def cells(p, extra=False):
    r_small = B / (B * math.sqrt(5))
    if extra:  # the cell with n = 1000, rho = 0.1 and r = 0.2
        return [dict(p=p, s=5, snr=5.0, r=0.2, lam=1.0, n=1000, rho=0.1)]
    return [dict(p=p, s=5, snr=2.0, r=r_small, lam=1.0),
            dict(p=p, s=5, snr=5.0, r=r_small, lam=1.0),
            dict(p=p, s=8, snr=2.0, r=1.1, lam=120.0)]


def scorer_for(cell, seed):
    X, y, _ = make_regression(cell.get("n", 3000), cell["p"], cell["s"],
                              rho=cell.get("rho", 0.5), snr=cell["snr"], random_state=seed)
    X, y = np.clip(X, -B, B), np.clip(y, -B, B)
    return LeastSquaresScorer(X, y, cell["lam"], cell["r"])


def noise_scorer(seed, n=200, p=40, b=2.0):
    rng = np.random.default_rng(seed)
    X = np.sqrt(0.4) * rng.normal(size=(n, p)) + np.sqrt(0.6) * rng.normal(size=(n, 1))
    y = rng.normal(size=n)
    return LeastSquaresScorer(np.clip(X, -b, b), np.clip(y, -b, b), 1.0, 1.0)


def routes(certs):
    return ",".join(sorted({c.method for c in certs}))


def run(mode, sc, s, search, time_limit):
    t0 = time.perf_counter()
    ss = SubsetSearch(sc, s, search=search, time_limit=time_limit)
    try:
        if mode == "top_r":
            out = ss.top_r(default_R(sc.p, s))
            certs = out.certificates
        else:
            out = ss.mistake_classes()
            for k in list(out.open_classes):
                out.close(k)
            certs = out.certificates
    except SearchTimeout:
        return time.perf_counter() - t0, "TIMEOUT", "", 0
    nodes = sum(c.iterations for c in certs if c.method == "branch_and_bound")
    closed = all(c.closed for c in certs)
    return time.perf_counter() - t0, "closed" if closed else "OPEN", routes(certs), nodes


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--p", type=int, default=100)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--search", default="auto")
    ap.add_argument("--time-limit", type=float, default=300.0)
    ap.add_argument("--noise", action="store_true", help="the pure-noise cell instead")
    ap.add_argument("--extra", action="store_true",
                    help="the cell n = 1000, rho = 0.1, SNR = 5, r = 0.2, lam = 1 instead")
    args = ap.parse_args()
    if args.noise:
        print("p = 40, n = 200, s = 5, common factor 0.6, pure noise, bounds (2, 2), "
              "r = 1, lam = 1")
        for seed in range(args.seeds):
            sc = noise_scorer(seed)
            for mode in ("top_r", "mistakes"):
                secs, status, how, nodes = run(mode, sc, 5, args.search, args.time_limit)
                print(f"seed {seed} {mode:>8} {secs:8.2f} s {status:>7} {nodes:>6}  {how}",
                      flush=True)
        return
    print(f"p = {args.p}, n = 3000, rho = 0.5 (--extra: n = 1000, rho = 0.1), "
          f"bounds (0.5, 0.5), search = {args.search}, "
          f"time_limit = {args.time_limit:g} s per solve")
    print(f"{'s':>2} {'SNR':>4} {'r':>5} {'lam':>5} {'seed':>4} {'call':>12} {'seconds':>8} "
          f"{'status':>7} {'nodes':>6}  routes")
    for cell in cells(args.p, args.extra):
        times = {"top_r": [], "mistakes": []}
        for seed in range(args.seeds):
            sc = scorer_for(cell, seed)
            for mode in ("top_r", "mistakes"):
                secs, status, how, nodes = run(mode, sc, cell["s"], args.search,
                                               args.time_limit)
                times[mode].append(secs)
                print(f"{cell['s']:>2} {cell['snr']:>4g} {cell['r']:>5.2f} {cell['lam']:>5g} "
                      f"{seed:>4} {mode:>12} {secs:>8.2f} {status:>7} {nodes:>6}  {how}",
                      flush=True)
        for mode, t in times.items():
            print(f"   cell median / max {mode}: {np.median(t):.2f} / {np.max(t):.2f} s")


if __name__ == "__main__":
    main()
