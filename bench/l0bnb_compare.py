"""The certified best support (least squares) against L0BnB, on the same data (issue 27).

L0BnB (Hazimeh, Mazumder and Saab 2022, ``pip install l0bnb``) is an exact branch and
bound for l0-l2 regression,

    min_b  1/2 ||y - X b||^2 + lambda0 ||b||_0 + lambda2 ||b||^2,   |b_j| <= M,

with first-order node relaxations. This package's score of a support (sum form, times n)
is 1/2 ||y - X b||^2 + lam/2 ||b||^2 over ||b|| <= r, so with lambda2 = lam / 2, a ball
and a box that do not bind (r = M = RADIUS, checked on both answers), and lambda0 chosen
so that L0BnB's optimum has s nonzeros, both solve best subset selection of size s on
the same arrays. lambda0 is set from the package's heuristic (iterative hard
thresholding and swaps) scores of the best supports of sizes s - 1, s and s + 1: the
l0-penalised optimum has s nonzeros when lambda0 lies between n (c_s - c_{s+1}) and
n (c_{s-1} - c_s), and the midpoint n (c_{s-1} - c_{s+1}) / 2 is used (the table says how
many nonzeros L0BnB returned, and whether its support is the package's).

Data: the paper's generator (dpsubset.studies.simulate.make_regression: AR(1) columns with
correlation rho, the true support at columns 1, 3, ..., 2s - 1), clipped to the public
bounds (0.5, 0.5) as ``dp_best_subset(..., bounds=(0.5, 0.5))`` does, no intercept; the
four data sets of the issue: (n, rho, SNR) = (1000, 0.5, 5), (1000, 0.8, 2), (3000, 0.5,
5), (3000, 0.8, 2), p = 1000, s = 8, seed 0.

Each solver runs in its own process, one thread (OMP_NUM_THREADS=1 and the like), back
to back on the same arrays: this package's SubsetSearch(...).best() (its certificate)
and L0BnB's BNBTree.solve with gap_tol 1e-4 (the issue's setting), each with a time
limit; L0BnB's just-in-time compilation is done on a small problem first and not timed. Printed per data set and lam: seconds, certified or not, the peak resident size
of the process, L0BnB's nonzeros and whether the supports agree, and the ratio of the
times (this package / L0BnB).

L0BnB needs numpy < 2: install it in a separate virtual environment and pass its
interpreter:

    python3 -m venv /work/l0venv && /work/l0venv/bin/pip install 'numpy<2' l0bnb
    OMP_NUM_THREADS=1 python bench/l0bnb_compare.py --l0bnb-python /work/l0venv/bin/python

Times measured on a shared machine are upper bounds.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

B = 0.5
RADIUS = 100.0
DATASETS = [(1000, 0.5, 5.0), (1000, 0.8, 2.0), (3000, 0.5, 5.0), (3000, 0.8, 2.0)]
THREADS = {k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                            "NUMBA_NUM_THREADS")}


def make_data(n, p, s, rho, snr, seed, path):
    """The clipped arrays of one data set, saved to ``path`` (.npz)."""
    import numpy as np

    from dpsubset.studies.simulate import make_regression
    X, y, _ = make_regression(n, p, s, rho=rho, snr=snr, random_state=seed)
    np.savez(path, X=np.clip(X, -B, B), y=np.clip(y, -B, B))


def lambda0_for(path, s, lam):
    """lambda0 (sum form) for s nonzeros, from the heuristic scores of sizes s - 1, s, s + 1."""
    import numpy as np

    from dpsubset.scores.least_squares import LeastSquaresScorer
    from dpsubset.search.heuristics import iht_support, local_search
    d = np.load(path)
    sc = LeastSquaresScorer(d["X"], d["y"], lam, RADIUS)
    c = {k: float(local_search(sc, iht_support(sc, k))[1]) for k in (s - 1, s + 1)}
    return len(d["y"]) * (c[s - 1] - c[s + 1]) / 2.0


def worker_package(path, s, lam, time_limit):
    """This package's certified best support (run in a fresh process)."""
    import numpy as np

    from dpsubset.scores.least_squares import LeastSquaresScorer
    from dpsubset.search.exact import SubsetSearch
    from dpsubset.search.limits import SearchTimeout
    d = np.load(path)
    t0 = time.perf_counter()
    sc = LeastSquaresScorer(d["X"], d["y"], lam, RADIUS)
    try:
        search = SubsetSearch(sc, s, time_limit=time_limit)
        S, _ = search.best()
        _, beta = sc.fit(np.asarray(S)[None, :])
        out = dict(certified=all(c.closed for c in search.certificates),
                   support=[int(j) for j in S],
                   ball_slack=bool(np.linalg.norm(beta) < RADIUS),
                   methods=sorted({c.method for c in search.certificates}))
    except SearchTimeout as err:
        out = dict(certified=False, support=None, gap=err.gap)
    out["seconds"] = time.perf_counter() - t0
    return out


def worker_l0bnb(path, lambda0, lambda2, time_limit):
    """L0BnB's BNBTree.solve (run in a fresh process of the L0BnB environment)."""
    import numpy as np
    from l0bnb import BNBTree
    d = np.load(path)
    X, y = np.asarray(d["X"], dtype=float), np.asarray(d["y"], dtype=float)
    # Warm-up: L0BnB's numba kernels compile on first use (about 10 s), which the
    # comparison leaves out (a long-running user pays it once).
    rng = np.random.default_rng(0)
    Xw = rng.normal(size=(50, 20))
    BNBTree(Xw, Xw[:, :3].sum(axis=1) + rng.normal(size=50)).solve(
        1.0, 0.5, RADIUS, gap_tol=1e-4, time_limit=60)
    t0 = time.perf_counter()
    tree = BNBTree(X, y)
    sol = tree.solve(lambda0, lambda2, RADIUS, gap_tol=1e-4, time_limit=time_limit)
    secs = time.perf_counter() - t0
    beta = np.asarray(sol[1]).ravel()
    nz = np.flatnonzero(np.abs(beta) > 1e-8)
    return dict(seconds=secs, gap=float(sol[4]), certified=bool(sol[4] <= 1e-4),
                support=[int(j) for j in nz], box_slack=bool(np.max(np.abs(beta)) < RADIUS),
                nodes=int(tree.number_of_nodes))


def _run(python, fn, args, timeout):
    """A worker in a fresh process: (its result, its peak resident size in MB)."""
    code = (f"import json, resource, sys; sys.path.insert(0, {os.path.dirname(__file__)!r}); "
            f"import l0bnb_compare as m; out = m.{fn}(*json.loads(sys.argv[1])); "
            "out['peak_mb'] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024; "
            "print(json.dumps(out))")
    env = dict(os.environ, **THREADS)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        res = subprocess.run([python, "-c", code, json.dumps(args)], capture_output=True,
                             text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return dict(certified=False, seconds=timeout, killed=True)
    if res.returncode != 0:
        return dict(certified=False, error=res.stderr.strip().splitlines()[-1:])
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--l0bnb-python", required=True, help="interpreter with l0bnb installed")
    ap.add_argument("--lam", type=float, nargs="+", default=[120.0, 1.0])
    ap.add_argument("--p", type=int, default=1000)
    ap.add_argument("--s", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--datasets", type=int, nargs="+", default=[0, 1, 2, 3],
                    help="which of the four data sets (0-3)")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="l0bnb_compare_")
    print("| n | rho | SNR | lam | this package s | certified | peak MB | L0BnB s | certified "
          "| peak MB | L0BnB nonzeros | same support | ratio (package / L0BnB) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    guard = 2 * args.time_limit + 120
    for i in args.datasets:
        n, rho, snr = DATASETS[i]
        path = os.path.join(tmp, f"d{i}.npz")
        make_data(n, args.p, args.s, rho, snr, args.seed, path)
        for lam in args.lam:
            l0 = lambda0_for(path, args.s, lam)
            pk = _run(sys.executable, "worker_package", [path, args.s, lam, args.time_limit],
                      guard)
            lb = _run(args.l0bnb_python, "worker_l0bnb", [path, l0, lam / 2, args.time_limit],
                      guard)
            same = (pk.get("support") is not None and lb.get("support") is not None
                    and sorted(pk["support"]) == sorted(lb["support"]))
            ratio = pk.get("seconds", float("nan")) / max(lb.get("seconds", float("nan")), 1e-9)
            print(f"| {n} | {rho:g} | {snr:g} | {lam:g} | {pk.get('seconds', float('nan')):.2f} "
                  f"| {pk.get('certified')} | {pk.get('peak_mb', float('nan')):.0f} "
                  f"| {lb.get('seconds', float('nan')):.2f} | {lb.get('certified')} "
                  f"| {lb.get('peak_mb', float('nan')):.0f} | {len(lb.get('support') or [])} "
                  f"| {same} | {ratio:.2f} |", flush=True)
            extra = {k: v for k, v in {**pk, **{'l0_' + a: b for a, b in lb.items()}}.items()
                     if k in ("error", "l0_error", "gap", "l0_gap", "methods", "ball_slack",
                              "l0_box_slack", "l0_nodes", "killed", "l0_killed")}
            print(f"<!-- {json.dumps(extra)} -->", flush=True)


if __name__ == "__main__":
    main()
