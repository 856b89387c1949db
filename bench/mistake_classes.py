"""Exact mistake classes in the paper's flat regime: branch and bound against outer approximation.

Setting: the paper's generator (rho = 0.1, SNR = 5, s = 5, b_x = b_y = 0.5, r = 1.1,
lam = 120). For each (p, n) the mistake classes are bracketed as the mistakes
mechanism brackets them, then classes 3, 4 and 5 are solved exactly by the branch and
bound of dpsubset.search.class_search (the route the lazy draw takes for least
squares), and, with --oa, by the per-base outer-approximation subproblems that were
the route before it (each capped at --oa-limit seconds; a capped solve is reported
as such). Prints the time, the nodes expanded and whether both routes agree.

    python bench/mistake_classes.py                      # p = 100 and 1000, n = 1000 and 2000
    python bench/mistake_classes.py --p 100 --n 1000 --oa --oa-limit 120
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from dpsubset.scores.least_squares import LeastSquaresScorer
from dpsubset.search.class_search import class_minimum
from dpsubset.search.exact import SubsetSearch
from dpsubset.search.outer_approximation import SearchTimeout
from dpsubset.studies.simulate import make_regression


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--p", type=int, nargs="+", default=[100, 1000])
    ap.add_argument("--n", type=int, nargs="+", default=[1000, 2000])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--oa", action="store_true", help="also time the outer-approximation route")
    ap.add_argument("--oa-limit", type=float, default=120.0, help="seconds per OA subproblem")
    args = ap.parse_args()
    s, b, r, lam = 5, 0.5, 1.1, 120.0
    print(f"s={s} b_x=b_y={b} r={r} lam={lam} seed={args.seed}")
    print(f"{'p':>6} {'n':>6} {'k':>2} {'B&B s':>8} {'nodes':>8} {'bracket width':>14}"
          + (f" {'OA s':>8} {'agree':>6}" if args.oa else ""))
    for p in args.p:
        for n in args.n:
            X, y, _ = make_regression(n, p, s, random_state=args.seed)
            X, y = np.clip(X, -b, b), np.clip(y, -b, b)
            sc = LeastSquaresScorer(X, y, lam, r, np.ones((n, 1)))
            search = SubsetSearch(sc, s)
            mc = search.mistake_classes()
            for k in range(3, min(s, p - s) + 1):
                t0 = time.perf_counter()
                _, v, nodes = class_minimum(sc, mc.center, k,
                                            incumbent=(mc.supports[k], mc.scores[k]))
                t_bb = time.perf_counter() - t0
                line = (f"{p:>6} {n:>6} {k:>2} {t_bb:>8.2f} {nodes:>8} "
                        f"{mc.scores[k] - mc.lower[k]:>14.2e}")
                if args.oa:
                    oa_search = SubsetSearch(sc, s, time_limit=args.oa_limit)
                    t0 = time.perf_counter()
                    try:
                        _, v_oa, _ = oa_search._class_by_subproblems(mc.center, k, f"class {k}")
                        agree = str(bool(np.isclose(v_oa, v, rtol=1e-9, atol=0)))
                    except SearchTimeout:
                        agree = "capped"
                    line += f" {time.perf_counter() - t0:>8.1f} {agree:>6}"
                print(line, flush=True)


if __name__ == "__main__":
    main()
