"""What ``inference=True`` adds to a release's time, by n (issue 42, item 2).

Data: p = 20 columns uniform on [-1, 1], y = x'beta + e with five true slopes (0.5, -0.5,
0.4, -0.3, 0.25), e normal with sd 0.5, bounds (1, 3), s = 5, eps = 4, the intercept in;
least squares and Huber (``search="branch_and_bound"``, so that the search's route is not
what is timed). For each n the same data set is released with ``inference=False`` and
``inference=True`` (the package's 500 bootstrap refits), and, with ``--old``, with the
bootstrap forced to simulate every row (``bootstrap.STATISTICS_ROWS`` set above n: the
route before the statistics were drawn). The variants are run back to back in an order
reversed on every repetition, and each is timed by the process's CPU time (one thread),
which the other processes on a loaded machine disturb far less than wall time; the table
gives the median over the repetitions of the seconds that inference adds.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python bench/inference_cost.py
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python bench/inference_cost.py --old --n 5000 20000 --reps 2
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python bench/inference_cost.py --per-refit --n 5000 20000

``--per-refit`` times ``bootstrap_refits`` alone (200 refits, CPU time per refit) on both
routes, interleaved the same way.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

import dpsubset as dps
from dpsubset.inference import bootstrap

P, S, EPS = 20, 5, 4.0
BETA = (0.5, -0.5, 0.4, -0.3, 0.25)


def make_data(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (n, P))
    beta = np.zeros(P)
    beta[:len(BETA)] = BETA
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(P)])
    df["y"] = X @ beta + 0.5 * rng.standard_normal(n)
    return df


def timed(df, loss, inference, exact_rows=False):
    """CPU seconds of one release (``exact_rows``: the bootstrap simulates every row)."""
    saved = bootstrap.STATISTICS_ROWS
    if exact_rows:
        bootstrap.STATISTICS_ROWS = len(df) + 1
    try:
        t0 = time.process_time()
        dps.dp_best_subset("y ~ .", df, eps=EPS, s=S, bounds=(1.0, 3.0), loss=loss, inference=inference,
                           search="branch_and_bound", random_state=1)
        return time.process_time() - t0
    finally:
        bootstrap.STATISTICS_ROWS = saved


def per_refit(n, loss, draws, exact_rows):
    """CPU milliseconds per bootstrap refit: ``bootstrap_refits`` alone, on the model a release
    of the first five columns would simulate from (exact moments; the refit's settings at
    eps_refit = 1.6, r = 3)."""
    from dpsubset.inference.fast_refit import BootstrapRefit
    from dpsubset.inference.moments import NoisyMoments, simulation_model
    df = make_data(n, seed=n)
    Z = np.column_stack([np.ones(n), df[[f"x{j}" for j in range(S)]].to_numpy(), df["y"].to_numpy()])
    bounds = np.array([1.0] * (S + 1))
    model = simulation_model(NoisyMoments(ZtZ=Z.T @ Z, n=n, eps=1.0, sensitivity=1.0),
                             coef=np.array([0.0, *BETA]), intercept=True, x_bounds=bounds, b_y=3.0)
    refit = BootstrapRefit(loss=loss, n=n, eps=1.6, row_bound=np.sqrt(S + 1), b_y=3.0, r=3.0, delta=0.0,
                           loss_options={}, start=model.coef)
    saved = bootstrap.STATISTICS_ROWS
    bootstrap.STATISTICS_ROWS = n if exact_rows else saved
    try:
        t0 = time.process_time()
        bootstrap.bootstrap_refits(model, n, bounds, 3.0, refit, draws=draws, rng=np.random.default_rng(0))
        return 1000.0 * (time.process_time() - t0) / draws
    finally:
        bootstrap.STATISTICS_ROWS = saved


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[5000, 20000, 100000])
    ap.add_argument("--losses", nargs="+", default=["squared", "huber"])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--old", action="store_true", help="also time the bootstrap that simulates every row")
    ap.add_argument("--per-refit", action="store_true",
                    help="instead: milliseconds per bootstrap refit, statistics route against rows route")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    if args.per_refit:
        print("| loss | n | ms per refit, statistics | ms per refit, rows |")
        print("|---|---|---|---|")
        for loss in args.losses:
            for n in args.n:
                got = {True: [], False: []}
                for rep in range(args.reps):
                    for exact in ((False, True) if rep % 2 == 0 else (True, False)):
                        got[exact].append(per_refit(n, loss, 200, exact))
                print(f"| {loss} | {n} | {np.median(got[False]):.3f} | {np.median(got[True]):.2f} |", flush=True)
        return
    variants = [("release", False, False), ("inference", True, False)]
    if args.old:
        variants.append(("inference, rows", True, True))
    print("| loss | n | release (s) | inference adds (s) |" + (" rows route adds (s) | ratio |" if args.old else ""))
    print("|---|---|---|---|" + ("---|---|" if args.old else ""))
    for loss in args.losses:
        for n in args.n:
            df = make_data(n, seed=n)
            times = {v[0]: [] for v in variants}
            for rep in range(args.reps):
                for name, inference, exact in (variants if rep % 2 == 0 else variants[::-1]):
                    times[name].append(timed(df, loss, inference, exact))
            base = np.median(times["release"])
            added = np.median(np.subtract(times["inference"], times["release"]))
            line = f"| {loss} | {n} | {base:.2f} | {added:.2f} |"
            if args.old:
                old = np.median(np.subtract(times["inference, rows"], times["release"]))
                line += f" {old:.2f} | {old / max(added, 1e-9):.1f} |"
            print(line, flush=True)


if __name__ == "__main__":
    main()
