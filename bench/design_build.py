"""Time build_design on a wide frame (issue 24: the split of dpsubset/design must not slow it).

Run: ``python bench/design_build.py [--n 2000] [--p 10000] [--repeat 5]``. Prints the best
of ``repeat`` wall-clock times of ``build_design`` for three routes on the same float
frame: the direct route (``"y ~ ."``, scalar bounds), the direct route with a codebook of
intervals, and the Gram route (``gram=True``); plus the formulaic route on the first 200
columns written out as ``I(x / 2)`` terms.
"""
import argparse
import time
import warnings

import numpy as np
import pandas as pd

from dpsubset.design.build import build_design


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--p", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    cols = [f"x{j}" for j in range(a.p)]
    frame = pd.DataFrame(rng.uniform(-1, 1, (a.n, a.p)), columns=cols)
    frame.insert(0, "y", rng.uniform(-1, 1, a.n))
    book = {c: (-1.0, 1.0) for c in cols}
    k = min(200, a.p)
    formulaic = "y ~ " + " + ".join(f"I({c} / 2)" for c in cols[:k])
    small = frame[["y"] + cols[:k]]
    gram_frame = frame[["y"] + cols[:1000]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = [
            ("direct, scalar bounds", lambda: build_design("y ~ .", frame, (1.0, 1.0))),
            ("direct, interval codebook", lambda: build_design("y ~ .", frame, dict(book, y=(-1.0, 1.0)))),
            (f"Gram route, p = {gram_frame.shape[1] - 1}",
             lambda: build_design("y ~ .", gram_frame, (1.0, 1.0), gram=True)),
            (f"formulaic, {k} I() terms", lambda: build_design(formulaic, small, (1.0, 1.0))),
        ]
        print(f"build_design, n = {a.n}, p = {a.p}, best of {a.repeat}")
        for label, fn in rows:
            print(f"  {label:28s} {best(fn, a.repeat):8.3f} s")


if __name__ == "__main__":
    main()
