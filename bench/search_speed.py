"""Speed of the exact candidate search, stage by stage, against abess and the pass-over-X floor.

Setting (Section 5 of Prastakos et al. 2025): rho = 0.1, SNR = 5, s = 5,
b_x = b_y = 0.5, r = 1.1, lam = 120, n = 1000. For each p and seed, in a fresh
process (so that the peak resident memory is that setting's own):

- the complete candidate computation that top-R (R = 2 + (p - s) s) and the mistakes
  mechanism need: the certified best support, its one-swap neighbourhood, the exact
  top-R list (two-mistake class and completion), and the mistake classes;
- whether every certificate closed, and how often the completion step (supports with
  two or more mistakes beyond the paper's pool) was needed;
- one pass over X (X' times the n x s block of the best support) and the time to
  score the whole one-swap neighbourhood, and their ratio;
- abess (non-private best subset, bench-only dependency: pip install abess) on the
  same data, and our time over its time;
- where the time goes: the scorer's class bounds (with the Gram row maxima they
  compute), the two-swap search, and the one-swap neighbourhoods (local search
  rounds included), each summed over its calls; the largest of them, and the peak
  resident memory next to the size of X.

The table reports the median over seeds.

    python bench/search_speed.py                       # p = 1000 and 10000, 5 seeds
    python bench/search_speed.py --p 100000 --seeds 1  # runs; prints time and memory
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

S, B, R_BALL, LAM = 5, 0.5, 1.1, 120.0


# Scorer routines timed separately (wall time inside each, summed over calls). The
# Gram row maxima are computed inside the class bounds and the two-swap search, so
# their time is also part of those two.
STAGES = [("class_lower_bounds", "class bounds"), ("_gram_row_max", "row maxima"),
          ("two_swap", "two-swap"), ("neighbourhood", "neighbourhoods")]


def _time_stages(sc):
    """Wrap the scorer's main routines with timers; returns the dict they fill."""
    spent = {}

    def wrap(name, label):
        f = getattr(sc, name)

        def timed(*args, **kwargs):
            t = time.perf_counter()
            try:
                return f(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.perf_counter() - t
                spent[label + " calls"] = spent.get(label + " calls", 0) + 1
        setattr(sc, name, timed)

    for name, label in STAGES:
        wrap(name, label)
    return spent


def one(p, n, seed):
    from dpsubset.scores.least_squares import LeastSquaresScorer
    from dpsubset.search.exact import SubsetSearch, default_R
    from dpsubset.studies.simulate import make_regression

    X, y, true = make_regression(n, p, S, random_state=seed)
    np.clip(X, -B, B, out=X)  # in place: at p = 100,000 a copy of X is 800 MB
    y = np.clip(y, -B, B)
    t0 = time.perf_counter()
    sc = LeastSquaresScorer(X, y, LAM, R_BALL, np.ones((n, 1)))
    stages = _time_stages(sc)
    search = SubsetSearch(sc, S)
    S1, _ = search.best()
    t_best = time.perf_counter() - t0
    t1 = time.perf_counter()
    top = search.top_r(default_R(p, S))
    t_top = time.perf_counter() - t1
    t1 = time.perf_counter()
    mc = search.mistake_classes()
    t_mc = time.perf_counter() - t1
    total = time.perf_counter() - t0
    certs = list(top.certificates) + list(mc.certificates)
    stages = dict(stages)  # the floors below call the scorer again
    rowmax = getattr(sc, "_rowmax", None)
    n_rows = int(np.count_nonzero(~np.isnan(rowmax))) if rowmax is not None else 0
    # Floors: one pass over X, and the whole one-swap neighbourhood.
    reps = 3
    t1 = time.perf_counter()
    for _ in range(reps):
        X.T @ X[:, S1]
    t_pass = (time.perf_counter() - t1) / reps
    t1 = time.perf_counter()
    for _ in range(reps):
        sc.neighbourhood(S1)
    t_nbhd = (time.perf_counter() - t1) / reps
    # Our peak, before abess runs in this process (it copies the data).
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t_abess = None
    try:
        from abess.linear import LinearRegression
        t1 = time.perf_counter()
        LinearRegression(support_size=S).fit(X, y)
        t_abess = time.perf_counter() - t1
    except ImportError:
        pass
    return dict(p=p, n=n, seed=seed, total=total, best=t_best, top_r=t_top, mistakes=t_mc,
                closed=all(c.closed for c in certs), n_solves=len(certs),
                methods=sorted({c.method for c in certs}),
                completion=int(top.completion_rounds), recovered=bool(np.array_equal(S1, true)),
                pass_x=t_pass, nbhd=t_nbhd, abess=t_abess, stages=stages, rowmax_rows=n_rows,
                peak_mb=peak_mb)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--p", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--single", nargs=3, type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.single:
        print(json.dumps(one(*args.single)))
        return
    print(f"n={args.n} s={S} lam={LAM} r={R_BALL} b={B}; median over {args.seeds} seeds "
          "(each run in a fresh process)")
    head = (f"{'p':>7} {'total s':>8} {'best s':>7} {'top-R s':>8} {'mistk s':>8} {'closed':>7} "
            f"{'compl.':>6} {'peak MB':>8} {'nbhd/pass':>9} {'abess s':>8} {'ours/abess':>10}")
    print(head)
    for p in args.p:
        rows = []
        for seed in range(args.seeds):
            out = subprocess.run([sys.executable, __file__, "--single", str(p), str(args.n), str(seed)],
                                 capture_output=True, text=True)
            if out.returncode:
                print(out.stderr[-2000:])
                raise SystemExit(f"p={p} seed={seed} failed")
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        med = lambda key: statistics.median(r[key] for r in rows)  # noqa: E731
        ab = [r["abess"] for r in rows if r["abess"] is not None]
        ab_med = statistics.median(ab) if ab else float("nan")
        print(f"{p:>7} {med('total'):>8.2f} {med('best'):>7.2f} {med('top_r'):>8.2f} "
              f"{med('mistakes'):>8.2f} {str(all(r['closed'] for r in rows)):>7} "
              f"{sum(r['completion'] > 0 for r in rows):>6} {max(r['peak_mb'] for r in rows):>8.0f} "
              f"{statistics.median(r['nbhd'] / r['pass_x'] for r in rows):>9.1f} {ab_med:>8.3f} "
              f"{med('total') / ab_med:>10.1f}", flush=True)
        for r in rows:
            print(f"        seed {r['seed']}: total {r['total']:.2f} s, solves {r['n_solves']} "
                  f"({', '.join(r['methods'])}), best = truth: {r['recovered']}", flush=True)
        # Where the time goes (medians over seeds), and the largest stage.
        st = {lab: statistics.median(r["stages"].get(lab, 0.0) for r in rows) for _, lab in STAGES}
        other = statistics.median(
            r["total"] - sum(r["stages"].get(lab, 0.0)
                             for lab in ("class bounds", "two-swap", "neighbourhoods"))
            for r in rows)
        calls = statistics.median(r["stages"].get("neighbourhoods calls", 0) for r in rows)
        rows_done = statistics.median(r["rowmax_rows"] for r in rows)
        print(f"        stages (median s): class bounds {st['class bounds']:.2f} (of which Gram row "
              f"maxima {st['row maxima']:.2f}, {rows_done:.0f} of {p - S} rows), two-swap "
              f"{st['two-swap']:.2f} (row maxima included), neighbourhoods {st['neighbourhoods']:.2f} "
              f"({calls:.0f} calls), other {other:.2f}", flush=True)
        parts = {"class bounds": st["class bounds"], "two-swap": st["two-swap"],
                 "neighbourhoods": st["neighbourhoods"], "other": other}
        top = max(parts, key=parts.get)
        print(f"        largest stage: {top} ({parts[top] / med('total'):.0%} of the total); "
              f"peak resident memory {max(r['peak_mb'] for r in rows):.0f} MB "
              f"(X alone is {8 * args.n * p / 2**20:.0f} MB)", flush=True)


if __name__ == "__main__":
    main()
