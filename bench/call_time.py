"""Wall time of one dp_best_subset call (top-R, refit on) in the paper's setting.

    python bench/call_time.py --p 100 1000 --n 1000
"""
import argparse
import time
import warnings

import numpy as np

import dpsubset as dps
from dpsubset.studies.simulate import make_regression

ap = argparse.ArgumentParser()
ap.add_argument("--p", type=int, nargs="+", default=[100, 1000])
ap.add_argument("--n", type=int, default=1000)
ap.add_argument("--method", default="top_r")
args = ap.parse_args()
for p in args.p:
    df, true = make_regression(args.n, p, 5, random_state=0, as_frame=True)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dps.PrivacyLeakWarning)  # diagnostics: simulated data
        res, diag = dps.dp_best_subset("y ~ .", df, eps=1.0, s=5, bounds=(0.5, 0.5), ball=dps.Ball(r=1.1, lam=120.0), method=args.method, refit=False,
                                       random_state=0, search=dps.Search(diagnostics=True))
    dt = time.perf_counter() - t0
    # the solves are non-private diagnostics (they depend on the data): fine for a benchmark
    print(f"p={p} n={args.n} method={args.method}: {dt:.2f} s, certificates closed: "
          f"{all(c['closed'] for c in diag.solves)} ({len(diag.solves)} solves), "
          f"support {res.support}, true {true}")
