"""Peak memory of the exact search where the branch and bound works hardest (issue 23, item 6).

The call of the issue: n = 1000, p = 10,000, the paper's generator
(:func:`dpsubset.studies.simulate.make_regression`: AR(1) columns with rho = 0.1, SNR = 5,
s = 5), ``dp_best_subset("y ~ 0 + .", df, eps=1, s=5, bounds=(0.5, 0.5), r=1.1)``
with the default lam = 1 and method="top_r". With r = 1.1 and lam = 1 the ball does not
bind and the top-R list is nearly flat, so the top-R completion goes to the branch and
bound over the supports with three or more mistakes, which on some data sets runs to
the time limit. Before the open nodes were made compact, its best-first queue kept
arrays of length p per open node and grew past 20 GB in minutes (seed 1).

Each seed runs in its own process; the table gives the outcome (``release``,
``SearchTimeout`` at the time limit, ``SearchMemoryLimit``, or the error), the seconds
of the call, the perspective branch and bound's nodes expanded (summed over its runs;
for a time-out, with the count its message gives for the run that stopped: simulated
data, so the count may be shown here) and nodes per second of the call, the largest
estimate the search's memory budget held (the open nodes, the column cache and the
other growing structures together: what ``memory_limit`` is compared with; the
branch and bound dives depth first when its open nodes pass half the limit), the
process's peak resident memory (VmHWM: data generation, the frame, the design and
the call together) and its resident memory just before the call (the data already
in memory).

    python bench/bnb_memory.py                          # seeds 0-4, the default limits
    python bench/bnb_memory.py --seeds 1 --time-limit 120
    python bench/bnb_memory.py --seeds 1 --memory-limit 2e8   # a small memory limit
    python bench/bnb_memory.py --seeds 1 --cap-gb 6     # with an address-space cap (RLIMIT_AS)
    PYTHONPATH=/path/to/old/checkout python bench/bnb_memory.py --seeds 1 --cap-gb 6
                                                        # the code before, for comparison

Times on a shared machine are upper bounds; the memory figures do not depend on load.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time

S = 5


def _status_mb(field):
    """A field of /proc/self/status in MB (VmHWM: peak resident; VmRSS: current)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def one(p, n, seed, r, lam, time_limit, memory_limit, cap_gb):
    if cap_gb:
        import resource
        cap = int(cap_gb * 2 ** 30)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    import numpy as np
    import pandas as pd

    import dpsubset.search.exact as exact
    from dpsubset import Ball, Search, dp_best_subset
    try:
        from dpsubset.studies.simulate import make_regression
    except ImportError:  # a checkout from before the package's layout of issue 24
        from dpsubset.simulate import make_regression

    nodes = [0]
    bnb = exact.branch_and_bound

    def counted(*a, **kw):  # nodes of the runs that finish
        res = bnb(*a, **kw)
        nodes[0] += res.nodes
        return res

    exact.branch_and_bound = counted
    held = [0.0]
    try:
        from dpsubset.search.limits import MemoryBudget
    except ImportError:  # the code before the memory budget
        MemoryBudget = None
    if MemoryBudget is not None:
        hold = MemoryBudget.hold

        def tracked(self, key, nbytes, **kw):
            try:
                return hold(self, key, nbytes, **kw)
            finally:
                held[0] = max(held[0], self.total)

        MemoryBudget.hold = tracked

    X, y, _ = make_regression(n, p, random_state=seed)
    df = pd.DataFrame(np.column_stack([y, X]), columns=["y"] + [f"x{j + 1}" for j in range(p)])
    del X, y
    before = _status_mb("VmRSS")
    t0 = time.perf_counter()
    try:
        dp_best_subset("y ~ 0 + .", df, eps=1.0, s=S, bounds=(0.5, 0.5), ball=Ball(r=r, lam=lam),
                       method="top_r", random_state=seed,
                       search=Search(time_limit=time_limit, memory_limit=memory_limit))
        outcome = "release"
    except Exception as exc:  # noqa: BLE001 (the outcome is what is measured)
        outcome = type(exc).__name__
        stopped = re.search(r"\((\d+) nodes expanded", str(exc))
        nodes[0] += int(stopped.group(1)) if stopped else 0
    secs = time.perf_counter() - t0
    return dict(seed=seed, outcome=outcome, seconds=secs, nodes=nodes[0],
                held_mb=held[0] / 2 ** 20, peak_mb=_status_mb("VmHWM"), before_mb=before)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--p", type=int, default=10_000)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--r", type=float, default=1.1)
    ap.add_argument("--lam", type=float, default=1.0)
    ap.add_argument("--time-limit", type=float, default=None,
                    help="time_limit of the call (default: the package's, 600 s)")
    ap.add_argument("--memory-limit", type=float, default=None,
                    help="memory_limit of the call in bytes (default: the package's)")
    ap.add_argument("--cap-gb", type=float, default=None,
                    help="address-space cap of each process (protects the machine)")
    ap.add_argument("--single", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.single:
        print(json.dumps(one(**json.loads(args.single))))
        return
    print(f"n={args.n} p={args.p} s={S} r={args.r:g} lam={args.lam:g} rho=0.1 SNR=5 "
          f"bounds=(0.5, 0.5) method=top_r time_limit={args.time_limit or 'default'} "
          f"memory_limit={args.memory_limit or 'default'}; one process per seed")
    print(f"{'seed':>4} {'outcome':>18} {'seconds':>8} {'nodes':>7} {'nodes/s':>7} "
          f"{'held MB':>8} {'peak MB':>8} {'before MB':>9}")
    for seed in args.seeds:
        job = dict(p=args.p, n=args.n, seed=seed, r=args.r, lam=args.lam,
                   time_limit=args.time_limit, memory_limit=args.memory_limit,
                   cap_gb=args.cap_gb)
        out = subprocess.run([sys.executable, __file__, "--single", json.dumps(job)],
                             capture_output=True, text=True)
        lines = out.stdout.strip().splitlines()
        if out.returncode or not lines:
            print(f"{seed:>4} {'died (rc ' + str(out.returncode) + ')':>18}  "
                  f"{out.stderr.strip().splitlines()[-1:] if out.stderr else ''}", flush=True)
            continue
        row = json.loads(lines[-1])
        print(f"{row['seed']:>4} {row['outcome']:>18} {row['seconds']:>8.1f} {row['nodes']:>7} "
              f"{row['nodes'] / row['seconds']:>7.0f} {row['held_mb']:>8.1f} "
              f"{row['peak_mb']:>8.0f} "
              f"{row['before_mb']:>9.0f}", flush=True)


if __name__ == "__main__":
    main()
