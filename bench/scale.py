"""The data path at scale: time and peak memory of dp_best_subset against a reference, in one run.

Three parts (issue 15), each measurement in a fresh process so that its peak memory
is its own. Peak memory is the largest resident set size sampled every 5 ms during
the measured call, minus the resident size just before it (the data already in
memory), i.e. the memory the call itself added.

(a) wide: n = 1000, p in {10,000, 50,000, 100,000}, the paper's design (rho = 0.1,
    SNR = 5, s = 5), ``dp_best_subset("y ~ 0 + .", df, eps=1, s=5, bounds=(0.5, 0.5))``
    (top-R, refit on, r left to the package default b_y / (b_x sqrt(s)) = 0.447: the
    call a user of the defaults makes; ``--r 1.1`` passes the radius of the issue's
    first trial, which with the default lam = 1 is a hard regime for the search at
    p >= 50,000, see docs/benchmarks/scale.md), against
    - the search alone: the scorer and the exact top-R list on the design
      (``make_scorer`` + ``SubsetSearch.top_r``), the design built beforehand;
    - abess (non-private best subset of size 5; ``pip install abess``) on the same
      clipped data.
    Targets: the whole call within 1.5x of the search alone at p = 100,000, within
    4x abess at p = 50,000, peak memory under 2x the size of X.
(b) tall: n in {10^5, 10^6, 10^7}, p = 100, Gaussian X, ``"y ~ ."`` with bounds
    (3, 6), against statsmodels ``OLS(y, X).fit()`` on the same arrays (X with the
    intercept column, built beforehand). Target: n = 10^6 within 2x OLS, peak memory
    under 2x the data.
(c) Dask: n = 10^8 rows, p = 20, generated lazily partition by partition
    (``dask.dataframe.from_map``; never materialised whole) on a LocalCluster with 2
    worker processes (1 thread each); time of the whole call and the peak resident
    memory of each worker (sampled every 0.2 s). Target: completes with bounded
    memory per worker.

Run::

    python bench/scale.py                       # all parts, the issue's sizes
    python bench/scale.py --part a --p 10000    # one part, smaller sizes
    python bench/scale.py --part b --n 100000 1000000
    python bench/scale.py --part c --dask-n 10000000

Times on a shared, loaded machine are upper bounds.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np

S = 5


class PeakRSS:
    """Largest resident set size during a block, minus the size at its start (bytes)."""

    def __init__(self, interval=0.005, pids=None):
        import psutil
        self.procs = [psutil.Process(pid) for pid in (pids or [os.getpid()])]
        self.interval = interval

    def __enter__(self):
        self.start = [p.memory_info().rss for p in self.procs]
        self.peak = list(self.start)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        self.t0 = time.perf_counter()
        return self

    def _run(self):
        while not self._stop.is_set():
            for i, p in enumerate(self.procs):
                try:
                    self.peak[i] = max(self.peak[i], p.memory_info().rss)
                except Exception:  # a worker that went away
                    pass
            self._stop.wait(self.interval)

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.t0
        self._stop.set()
        self._thread.join()
        for i, p in enumerate(self.procs):
            self.peak[i] = max(self.peak[i], p.memory_info().rss)
        self.extra = [pk - st for pk, st in zip(self.peak, self.start)]


def _warm_imports():
    """Import what a call imports lazily (formulaic, the solvers), so that the measured
    peak is the call's working memory, not tens of MB of code loaded once per process."""
    import formulaic  # noqa: F401
    import highspy  # noqa: F401
    import scipy.linalg  # noqa: F401
    from formulaic import model_matrix  # noqa: F401

    import dpsubset.search.exact  # noqa: F401


# ----------------------------------------------------------------------------- (a) wide
def run_a(p, n, seed, what, r="1.1"):
    from dpsubset import dp_best_subset
    from dpsubset.defaults import DEFAULT_LAM
    from dpsubset.design.build import build_design
    from dpsubset.studies.simulate import make_regression

    X, y, _ = make_regression(n, p, random_state=seed)
    import pandas as pd
    df = pd.DataFrame(np.column_stack([y, X]), columns=["y"] + [f"x{j + 1}" for j in range(p)])
    del X, y
    x_mb = n * p * 8 / 2**20
    radius = {} if r == "default" else {"r": float(r)}
    if what == "call":
        with PeakRSS() as m:
            res = dp_best_subset("y ~ 0 + .", df, eps=1.0, s=S, bounds=(0.5, 0.5), random_state=seed,
                                 **radius)
        return dict(seconds=m.seconds, extra_mb=m.extra[0] / 2**20, x_mb=x_mb, support=res.support)
    design = build_design("y ~ 0 + .", df, (0.5, 0.5))
    del df
    if what == "search":
        from dpsubset.defaults import default_radius
        from dpsubset.search.exact import SubsetSearch, default_R
        from dpsubset.selection.base import SelectionRequest, make_scorer
        req = SelectionRequest(design=design, s=S, eps=0.5, lam=DEFAULT_LAM,
                               r=radius.get("r", default_radius(design.x_bounds, design.b_y, S,
                                                                 design.forced_bounds)),
                               loss="squared", rng=np.random.default_rng(seed), options={})
        with PeakRSS() as m:
            scorer, _ = make_scorer(req)
            cands = SubsetSearch(scorer, S).top_r(default_R(p, S))
        return dict(seconds=m.seconds, extra_mb=m.extra[0] / 2**20, x_mb=x_mb,
                    closed=all(c.closed for c in cands.certificates))
    if what == "abess":
        from abess.linear import LinearRegression
        with PeakRSS() as m:
            LinearRegression(support_size=S).fit(design.X, design.y)
        return dict(seconds=m.seconds, extra_mb=m.extra[0] / 2**20, x_mb=x_mb)
    raise ValueError(what)


# ----------------------------------------------------------------------------- (b) tall
def _fill(Z, rng, chunk=100_000):
    """y = sum of the first S columns / sqrt(S) + N(0, 1) noise, X standard normal, in row
    chunks (no temporary the size of the data)."""
    for a in range(0, Z.shape[0], chunk):
        b = min(Z.shape[0], a + chunk)
        Z[a:b, 1:] = rng.standard_normal(size=(b - a, Z.shape[1] - 1))
        Z[a:b, 0] = Z[a:b, 1:1 + S].sum(axis=1) / np.sqrt(S) + rng.standard_normal(b - a)
    return Z


def _tall(n, p, seed):
    import pandas as pd
    Z = _fill(np.empty((n, p + 1)), np.random.default_rng(seed))
    return pd.DataFrame(Z, columns=["y"] + [f"x{j + 1}" for j in range(p)], copy=False)


# Part (b)'s two calls: the documented one (a wide box for y, r = 5) and the one an
# audit found crashing on the Gram route (bounds (3, 3), eps = 2, the default radius).
B_CALLS = {"call": dict(eps=1.0, bounds=(3.0, 6.0), r=5.0),
           "call_defaults": dict(eps=2.0, bounds=(3.0, 3.0))}


def run_b(n, p, seed, what):
    df = _tall(n, p, seed)
    data_mb = df.to_numpy().nbytes / 2**20
    if what in B_CALLS:
        from dpsubset import dp_best_subset
        with PeakRSS() as m:
            res = dp_best_subset("y ~ .", df, s=S, random_state=seed, **B_CALLS[what])
        return dict(seconds=m.seconds, extra_mb=m.extra[0] / 2**20, data_mb=data_mb, support=res.support)
    if what == "ols":
        import statsmodels.api as sm
        Z = df.to_numpy()
        y = np.ascontiguousarray(Z[:, 0])
        X = Z.copy()
        X[:, 0] = 1.0  # the intercept column in place of y: the same arrays
        del df, Z
        with PeakRSS() as m:
            sm.OLS(y, X).fit()
        return dict(seconds=m.seconds, extra_mb=m.extra[0] / 2**20, data_mb=data_mb)
    raise ValueError(what)


# ----------------------------------------------------------------------------- (c) Dask
def _partition(i, rows, p, seed):
    import pandas as pd
    Z = _fill(np.empty((rows, p + 1)), np.random.default_rng([seed, i]))
    return pd.DataFrame(Z, columns=["y"] + [f"x{j + 1}" for j in range(p)], copy=False)


def run_c(n, p, rows, seed, memory_limit):
    import dask.dataframe as dd
    from dask.distributed import Client, LocalCluster

    from dpsubset import dp_best_subset

    nparts = -(-n // rows)
    sizes = [min(rows, n - i * rows) for i in range(nparts)]
    meta = _partition(0, 1, p, seed).iloc[:0]
    ddf = dd.from_map(lambda a: _partition(a[0], a[1], p, seed), list(enumerate(sizes)), meta=meta)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit=memory_limit,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        pids = list(client.run(os.getpid).values())
        with PeakRSS(interval=0.2, pids=pids) as m:
            res = dp_best_subset("y ~ .", ddf, eps=1.0, s=S, bounds=(3.0, 6.0), r=5.0, random_state=seed)
        return dict(seconds=m.seconds, worker_peak_mb=[pk / 2**20 for pk in m.peak],
                    worker_start_mb=[st / 2**20 for st in m.start], partitions=nparts,
                    partition_mb=rows * (p + 1) * 8 / 2**20, data_mb=n * (p + 1) * 8 / 2**20,
                    support=res.support, nobs=res.nobs)


# ----------------------------------------------------------------------------- driver
def _isolated(*args, timeout):
    """Run one measurement in a fresh process; None if it failed (memory, time)."""
    try:
        out = subprocess.run([sys.executable, __file__, "--single", *map(str, args)], capture_output=True,
                             text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return dict(error=f"timeout after {timeout} s")
    if out.returncode != 0:
        tail = (out.stderr.strip().splitlines() or ["?"])[-1]
        return dict(error=f"exit {out.returncode}: {tail[:120]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _fmt(r, key, fmt="{:.2f}"):
    return "n/a" if r is None or "error" in r or r.get(key) is None else fmt.format(r[key])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", nargs="+", choices=["a", "b", "c"], default=["a", "b", "c"])
    ap.add_argument("--p", type=int, nargs="+", default=[10_000, 50_000, 100_000], help="part a")
    ap.add_argument("--n", type=int, nargs="+", default=[10**5, 10**6, 10**7], help="part b")
    ap.add_argument("--dask-n", type=int, default=10**8, help="part c: rows")
    ap.add_argument("--rows-per-partition", type=int, default=10**6, help="part c")
    ap.add_argument("--memory-limit", default="4GB", help="part c: Dask memory limit per worker")
    ap.add_argument("--no-reference", action="store_true", help="skip abess / statsmodels")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--r", default="default",
                    help="part a: 'default' (the package's radius) or a number (e.g. 1.1)")
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds per measurement")
    ap.add_argument("--single", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.single:
        _warm_imports()
        kind, *rest = args.single
        if kind == "a":
            res = run_a(int(rest[0]), 1000, int(rest[1]), rest[2], rest[3])
        elif kind == "b":
            res = run_b(int(rest[0]), 100, int(rest[1]), rest[2])
        else:
            res = run_c(int(rest[0]), 20, int(rest[1]), int(rest[2]), rest[3])
        print(json.dumps(res, default=lambda o: o if not isinstance(o, np.generic) else o.item()))
        return

    print(f"# bench/scale.py, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start")
    if "a" in args.part:
        print(f"\n## (a) n = 1000, 'y ~ 0 + .', top-R with refit, r = {args.r}\n")
        print("| p | X MB | call s | search s | abess s | call/search | call/abess | call peak MB | "
              "peak/X | search peak MB | abess peak MB |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for p in args.p:
            call = _isolated("a", p, args.seed, "call", args.r, timeout=args.timeout)
            search = _isolated("a", p, args.seed, "search", args.r, timeout=args.timeout)
            ab = None if args.no_reference else _isolated("a", p, args.seed, "abess", args.r, timeout=args.timeout)
            ok = lambda r: r is not None and "error" not in r  # noqa: E731
            ratio_s = call["seconds"] / search["seconds"] if ok(call) and ok(search) else None
            ratio_a = call["seconds"] / ab["seconds"] if ok(call) and ok(ab) else None
            peak_x = call["extra_mb"] / call["x_mb"] if ok(call) else None
            print(f"| {p:,} | {_fmt(call, 'x_mb', '{:.0f}')} | {_fmt(call, 'seconds')} | "
                  f"{_fmt(search, 'seconds')} | {_fmt(ab, 'seconds')} | "
                  f"{'n/a' if ratio_s is None else f'{ratio_s:.2f}'} | "
                  f"{'n/a' if ratio_a is None else f'{ratio_a:.2f}'} | {_fmt(call, 'extra_mb', '{:.0f}')} | "
                  f"{'n/a' if peak_x is None else f'{peak_x:.2f}'} | {_fmt(search, 'extra_mb', '{:.0f}')} | "
                  f"{_fmt(ab, 'extra_mb', '{:.0f}')} |", flush=True)
            for name, r in (("call", call), ("search", search), ("abess", ab)):
                if r is not None and "error" in r:
                    print(f"  ({name} at p = {p:,}: {r['error']})", flush=True)
    if "b" in args.part:
        print("\n## (b) p = 100, 'y ~ .', s = 5; call A: eps = 1, bounds (3, 6), r = 5; "
              "call B: eps = 2, bounds (3, 3), default r\n")
        print("| n | call | data MB | call s | OLS s | call/OLS | call peak MB | peak/data | OLS peak MB |")
        print("|---|---|---|---|---|---|---|---|---|")
        for n in args.n:
            ols = None if args.no_reference else _isolated("b", n, args.seed, "ols", timeout=args.timeout)
            for label, what in (("A", "call"), ("B", "call_defaults")):
                call = _isolated("b", n, args.seed, what, timeout=args.timeout)
                ok = lambda r: r is not None and "error" not in r  # noqa: E731
                ratio = call["seconds"] / ols["seconds"] if ok(call) and ok(ols) else None
                peak_d = call["extra_mb"] / call["data_mb"] if ok(call) else None
                print(f"| {n:,} | {label} | {_fmt(call, 'data_mb', '{:.0f}')} | {_fmt(call, 'seconds')} | "
                      f"{_fmt(ols, 'seconds')} | {'n/a' if ratio is None else f'{ratio:.2f}'} | "
                      f"{_fmt(call, 'extra_mb', '{:.0f}')} | {'n/a' if peak_d is None else f'{peak_d:.2f}'} | "
                      f"{_fmt(ols, 'extra_mb', '{:.0f}')} |", flush=True)
                if call is not None and "error" in call:
                    print(f"  (call {label} at n = {n:,}: {call['error']})", flush=True)
            if ols is not None and "error" in ols:
                print(f"  (OLS at n = {n:,}: {ols['error']})", flush=True)
    if "c" in args.part:
        print("\n## (c) Dask, p = 20, 'y ~ .', LocalCluster: 2 worker processes x 1 thread\n")
        r = _isolated("c", args.dask_n, args.rows_per_partition, args.seed, args.memory_limit,
                      timeout=args.timeout)
        print("| n | data MB (never whole) | partitions | partition MB | call s | worker peak RSS MB | "
              "worker RSS before MB |")
        print("|---|---|---|---|---|---|---|")
        if "error" in r:
            print(f"| {args.dask_n:,} | | | | {r['error']} | | |")
        else:
            print(f"| {args.dask_n:,} | {r['data_mb']:.0f} | {r['partitions']} | {r['partition_mb']:.0f} | "
                  f"{r['seconds']:.1f} | {', '.join(f'{v:.0f}' for v in r['worker_peak_mb'])} | "
                  f"{', '.join(f'{v:.0f}' for v in r['worker_start_mb'])} |")
            print(f"\n(released support {r['support']}, nobs {r['nobs']:,})")


if __name__ == "__main__":
    main()
