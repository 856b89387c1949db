"""The data path at scale: time and peak memory of dp_best_subset against a reference, in one run.

Three parts (issue 15), each measurement in a fresh process so that its peak memory
is its own. Parts (b) and (c): peak memory is the largest resident set size sampled
every 5 ms during the measured call, minus the resident size just before it (the data
already in memory), i.e. the memory the call itself added. Part (a): each process's own
maximum resident size (VmHWM), which sampling cannot miss.

(a) wide: n = 1000, p = 50,000 by default, the paper's design (rho = 0.1, SNR = 5,
    s = 5), ``dp_best_subset("y ~ 0 + .", df, eps=1, s=5, bounds=(0.5, 0.5))`` (top-R,
    refit on, the package's default radius; ``--r 1.1`` passes another), against abess
    (non-private best subset of size 5) on the same clipped arrays, run by
    ``--abess-python`` (an interpreter with abess installed). Seeds 0, 1, 2; on each,
    the call and abess twice in reversed order (call, abess, abess, call), each in a
    fresh process with one thread; the faster run of each counts, and the median ratio
    over the seeds is printed. Memory: each process's own maximum resident size
    (VmHWM), with its size just before the measured call. Target (issue 42): at most
    3x abess at p = 50,000.
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
    python bench/scale.py --part a --abess-python /work/abessvenv/bin/python
    python bench/scale.py --part a --p 10000 --seeds 0   # smaller
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
def _rss_now():
    """The process's resident size now, in bytes (Linux)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def _own_peak():
    """The process's own maximum resident size so far, in bytes: VmHWM, the high-water
    mark of its address space, which starts afresh at exec. (``ru_maxrss`` does not:
    Linux carries the parent's maximum over fork and exec, so a measurement started by a
    parent that held the data would report at least the parent's size.)"""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def make_wide(p, n, seed, folder):
    """One wide data set on disk: the raw frame's array [y, X] for the call and the
    clipped X, y (what the call's design holds) for abess. Returns the paths."""
    from dpsubset.studies.simulate import make_regression
    X, y, _ = make_regression(n, p, random_state=seed)
    raw = os.path.join(folder, f"wide_{p}_{seed}_raw.npy")
    np.save(raw, np.column_stack([y, X]))
    xc = os.path.join(folder, f"wide_{p}_{seed}_X.npy")
    yc = os.path.join(folder, f"wide_{p}_{seed}_y.npy")
    np.save(xc, np.clip(X, -0.5, 0.5))
    np.save(yc, np.clip(y, -0.5, 0.5))
    return raw, xc, yc


def run_a(what, paths, seed, r="default"):
    """One measurement of part (a) in this (fresh) process: the call on the raw frame, or
    abess on the clipped arrays. Memory: the process's own maximum resident size
    (VmHWM, which no sampling can miss) and its resident size just before the
    measured call (the data and the imports)."""
    raw, xc, yc = paths
    if what == "call":
        import pandas as pd

        from dpsubset import dp_best_subset
        Z = np.load(raw)
        df = pd.DataFrame(Z, columns=["y"] + [f"x{j + 1}" for j in range(Z.shape[1] - 1)],
                          copy=False)
        del Z
        radius = {} if r == "default" else {"ball": dict(r=float(r))}
        before = _rss_now()
        t0 = time.perf_counter()
        res = dp_best_subset("y ~ 0 + .", df, eps=1.0, s=S, bounds=(0.5, 0.5),
                             random_state=seed, **radius)
        secs = time.perf_counter() - t0
        out = dict(support=res.support)
    elif what == "abess":
        from abess.linear import LinearRegression
        X, y = np.load(xc), np.load(yc)
        before = _rss_now()
        t0 = time.perf_counter()
        LinearRegression(support_size=S).fit(X, y)
        secs = time.perf_counter() - t0
        out = {}
    else:
        raise ValueError(what)
    return dict(out, seconds=secs, peak_mb=_own_peak() / 2**20, before_mb=before / 2**20)


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
B_CALLS = {"call": dict(eps=1.0, bounds=(3.0, 6.0), ball=dict(r=5.0)),
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

    from dpsubset import Ball, dp_best_subset

    nparts = -(-n // rows)
    sizes = [min(rows, n - i * rows) for i in range(nparts)]
    meta = _partition(0, 1, p, seed).iloc[:0]
    ddf = dd.from_map(lambda a: _partition(a[0], a[1], p, seed), list(enumerate(sizes)), meta=meta)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit=memory_limit,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        pids = list(client.run(os.getpid).values())
        with PeakRSS(interval=0.2, pids=pids) as m:
            res = dp_best_subset("y ~ .", ddf, eps=1.0, s=S, bounds=(3.0, 6.0), ball=Ball(r=5.0), random_state=seed)
        return dict(seconds=m.seconds, worker_peak_mb=[pk / 2**20 for pk in m.peak],
                    worker_start_mb=[st / 2**20 for st in m.start], partitions=nparts,
                    partition_mb=rows * (p + 1) * 8 / 2**20, data_mb=n * (p + 1) * 8 / 2**20,
                    support=res.support, nobs=res.nobs)


# ----------------------------------------------------------------------------- driver
def _isolated(*args, timeout, python=None):
    """Run one measurement in a fresh process (``python``: another interpreter, e.g. one
    with abess); a dict with "error" if it failed (memory, time)."""
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        out = subprocess.run([python or sys.executable, __file__, "--single", *map(str, args)],
                             capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return dict(error=f"timeout after {timeout} s")
    if out.returncode != 0:
        tail = (out.stderr.strip().splitlines() or ["?"])[-1]
        return dict(error=f"exit {out.returncode}: {tail[:120]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _part_a(args):
    """Part (a): per data set the call and abess twice, in reversed order, each run in a
    fresh process; the smaller time of each side, the ratio, and the median ratio."""
    import statistics
    import tempfile
    folder = tempfile.mkdtemp(prefix="scale_a_")
    print(f"\n## (a) n = 1000, 'y ~ 0 + .', top-R with refit, r = {args.r}\n")
    print("| p | seed | X MB | call s (two runs) | abess s (two runs) | call / abess | "
          "call max RSS MB (before the call) | abess max RSS MB (before the fit) |")
    print("|---|---|---|---|---|---|---|---|")
    ok = lambda r: r is not None and "error" not in r  # noqa: E731
    for p in args.p:
        ratios = []
        for seed in args.seeds:
            paths = make_wide(p, 1000, seed, folder)
            runs = {"call": [], "abess": []}
            for order in (("call", "abess"), ("abess", "call")):
                for what in order:
                    if what == "abess" and args.no_reference:
                        continue
                    python = args.abess_python if what == "abess" else sys.executable
                    runs[what].append(_isolated("a", what, *paths, seed, args.r,
                                                timeout=args.timeout, python=python))
            for path in paths:
                os.remove(path)
            good = {k: [r for r in v if ok(r)] for k, v in runs.items()}
            best = {k: min((r["seconds"] for r in v), default=None) for k, v in good.items()}
            ratio = (best["call"] / best["abess"] if best["call"] and best["abess"] else None)
            if ratio is not None:
                ratios.append(ratio)
            times = {k: " / ".join(f"{r['seconds']:.2f}" if ok(r) else "failed" for r in v)
                     for k, v in runs.items()}
            mem = {k: max(v, key=lambda r: r["peak_mb"]) if v else None
                   for k, v in good.items()}
            memtxt = {k: (f"{m['peak_mb']:.0f} ({m['before_mb']:.0f})" if m else "n/a")
                      for k, m in mem.items()}
            print(f"| {p:,} | {seed} | {1000 * p * 8 / 2**20:.0f} | {times['call']} | "
                  f"{times['abess'] or 'n/a'} | {'n/a' if ratio is None else f'{ratio:.2f}'} | "
                  f"{memtxt['call']} | {memtxt['abess']} |", flush=True)
            for k, v in runs.items():
                for r in v:
                    if not ok(r):
                        print(f"  ({k} at p = {p:,}, seed {seed}: {r['error']})", flush=True)
        if ratios:
            print(f"\np = {p:,}: median call / abess over {len(ratios)} seeds "
                  f"{statistics.median(ratios):.2f}\n", flush=True)


def _fmt(r, key, fmt="{:.2f}"):
    return "n/a" if r is None or "error" in r or r.get(key) is None else fmt.format(r[key])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", nargs="+", choices=["a", "b", "c"], default=["a", "b", "c"])
    ap.add_argument("--p", type=int, nargs="+", default=[50_000], help="part a")
    ap.add_argument("--n", type=int, nargs="+", default=[10**5, 10**6, 10**7], help="part b")
    ap.add_argument("--dask-n", type=int, default=10**8, help="part c: rows")
    ap.add_argument("--rows-per-partition", type=int, default=10**6, help="part c")
    ap.add_argument("--memory-limit", default="4GB", help="part c: Dask memory limit per worker")
    ap.add_argument("--no-reference", action="store_true", help="skip abess / statsmodels")
    ap.add_argument("--seed", type=int, default=0, help="parts b and c")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="part a")
    ap.add_argument("--abess-python", default=sys.executable,
                    help="part a: an interpreter with abess installed")
    ap.add_argument("--r", default="default",
                    help="part a: 'default' (the package's radius) or a number (e.g. 1.1)")
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds per measurement")
    ap.add_argument("--single", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.single:
        if args.single[0] != "a" or args.single[1] != "abess":
            _warm_imports()
        kind, *rest = args.single
        if kind == "a":
            res = run_a(rest[0], rest[1:4], int(rest[4]), rest[5])
        elif kind == "b":
            res = run_b(int(rest[0]), 100, int(rest[1]), rest[2])
        else:
            res = run_c(int(rest[0]), 20, int(rest[1]), int(rest[2]), rest[3])
        print(json.dumps(res, default=lambda o: o if not isinstance(o, np.generic) else o.item()))
        return

    print(f"# bench/scale.py, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start")
    if "a" in args.part:
        _part_a(args)
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
