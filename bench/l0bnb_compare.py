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
bounds (0.5, 0.5) as ``dp_best_subset(..., bounds=(0.5, 0.5))`` does, no intercept; five
cells (issue 42): the four of issue 27, (n, rho, SNR) = (1000, 0.5, 5), (1000, 0.8, 2),
(3000, 0.5, 5), (3000, 0.8, 2) with p = 1000, and p = n = 2000 with rho = 0.5, SNR 3;
s = 8; seeds 0, 1, 2 by default (``--seeds``).

Each solver runs in its own process, one thread (OMP_NUM_THREADS=1 and the like), back
to back on the same arrays, and each data set twice with the order reversed (the
package first, then L0BnB first): this package's SubsetSearch(...).best() (its
certificate) and L0BnB's BNBTree.solve with gap_tol 1e-4 (the issue's setting), each
with a time limit; both are run once on a small problem first, not timed (L0BnB's
just-in-time compilation, the package's lazy imports). A solver's time is the smaller of its two runs.

L0BnB's certificate is read from its tree and its returned vector, not from its returned
gap alone: that gap is only updated when a level of the tree closes, so a search that
exhausts its tree may return a stale gap above the tolerance although it proved
optimality. A run counts as certified when its gap is within the tolerance or its tree
was exhausted (both queues empty) before the time limit; and its answer counts only if
the returned vector has s nonzeros and its objective, recomputed from X and y, equals the
cost L0BnB reports (on a block-equicorrelated design it returned a 9-nonzero vector whose
objective was not its reported cost).

Printed per data set and lam: seconds, certified or not, the peak resident size of the
process (its own high-water mark VmHWM, see :func:`own_peak_mb`), L0BnB's nonzeros, whether its vector matches its cost and
whether the supports agree, and the ratio of the times (this package / L0BnB); then a
summary line per cell (the largest ratio over its seeds).

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
# (n, p, rho, SNR) of the cells
DATASETS = [(1000, 1000, 0.5, 5.0), (1000, 1000, 0.8, 2.0), (3000, 1000, 0.5, 5.0),
            (3000, 1000, 0.8, 2.0), (2000, 2000, 0.5, 3.0)]
GAP_TOL = 1e-4
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
    from dpsubset.runtime.limits import SearchTimeout
    d = np.load(path)
    X, y = np.asarray(d["X"], dtype=float), np.asarray(d["y"], dtype=float)  # (read now:
    # an .npz is read lazily, which would put the file's reading in the timed call)
    # Warm-up, as for L0BnB: the first search in a process imports and initialises what
    # it uses lazily (scipy.linalg, the branch and bound's modules), which a user pays
    # once per session, not per call.
    rng = np.random.default_rng(0)
    Xw = rng.uniform(-B, B, size=(60, 20))
    SubsetSearch(LeastSquaresScorer(Xw, np.clip(Xw[:, :3].sum(axis=1), -B, B), 1.0, 1.0),
                 3, search="branch_and_bound").best()
    t0 = time.perf_counter()
    sc = LeastSquaresScorer(X, y, lam, RADIUS)
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
    sol = tree.solve(lambda0, lambda2, RADIUS, gap_tol=GAP_TOL, time_limit=time_limit)
    secs = time.perf_counter() - t0
    beta = np.asarray(sol.beta).ravel()
    nz = np.flatnonzero(np.abs(beta) > 1e-8)
    # The tree is exhausted when both queues are empty: every node was pruned or
    # integral, whatever the (possibly stale) returned gap says.
    exhausted = tree.bfs_queue.qsize() == 0 and tree.dfs_queue.qsize() == 0
    objective = (0.5 * float(np.sum((y - X @ beta) ** 2)) + lambda0 * len(nz)
                 + lambda2 * float(beta @ beta))
    consistent = abs(objective - float(sol.cost)) <= 1e-6 * max(1.0, abs(float(sol.cost)))
    return dict(seconds=secs, gap=float(sol.gap), exhausted=bool(exhausted),
                certified=bool(sol.gap <= GAP_TOL or (exhausted and secs < time_limit)),
                consistent=bool(consistent), support=[int(j) for j in nz],
                box_slack=bool(np.max(np.abs(beta)) < RADIUS),
                nodes=int(tree.number_of_nodes))


def own_peak_mb():
    """This process's own maximum resident size in MB: VmHWM, the high-water mark of its
    address space, which starts afresh at exec. (``ru_maxrss`` does not: Linux carries
    the parent's maximum over fork and exec, so a child started by a parent holding the
    data would report at least the parent's size.)"""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _run(python, fn, args, timeout):
    """A worker in a fresh process: (its result, its peak resident size in MB)."""
    code = (f"import json, sys; sys.path.insert(0, {os.path.dirname(__file__)!r}); "
            f"import l0bnb_compare as m; out = m.{fn}(*json.loads(sys.argv[1])); "
            "out['peak_mb'] = m.own_peak_mb(); "
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


def _pair(args, path, lam, l0, order):
    """Both solvers on one data set, in the given order: (package, L0BnB)."""
    guard = 2 * args.time_limit + 120
    out = {}
    for who in order:
        if who == "package":
            out[who] = _run(sys.executable, "worker_package",
                            [path, args.s, lam, args.time_limit], guard)
        else:
            out[who] = _run(args.l0bnb_python, "worker_l0bnb",
                            [path, l0, lam / 2, args.time_limit], guard)
    return out["package"], out["l0bnb"]


def _secs(runs):
    """The times of a solver's runs on one data set, "0.41 / 0.39"."""
    return " / ".join(f"{r.get('seconds', float('nan')):.2f}" for r in runs)


def _yes(flag):
    return "yes" if flag else "no"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--l0bnb-python", required=True, help="interpreter with l0bnb installed")
    ap.add_argument("--lam", type=float, nargs="+", default=[120.0])
    ap.add_argument("--s", type=int, default=8)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--datasets", type=int, nargs="+", default=list(range(len(DATASETS))),
                    help=f"which cells (0-{len(DATASETS) - 1})")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="l0bnb_compare_")
    print(f"# bench/l0bnb_compare.py, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"load average {os.getloadavg()[0]:.1f} at start")
    print("| n | p | rho | SNR | lam | seed | this package s (two runs) | certified | peak MB "
          "| L0BnB s (two runs) | certified (gap, tree) | peak MB | L0BnB nonzeros, vector = cost "
          "| same support | ratio (package / L0BnB) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    summary = {}
    for i in args.datasets:
        n, p, rho, snr = DATASETS[i]
        for seed in args.seeds:
            path = os.path.join(tmp, f"d{i}_{seed}.npz")
            make_data(n, p, args.s, rho, snr, seed, path)
            for lam in args.lam:
                l0 = lambda0_for(path, args.s, lam)
                pk1, lb1 = _pair(args, path, lam, l0, ("package", "l0bnb"))
                lb2, pk2 = _pair(args, path, lam, l0, ("l0bnb", "package"))[::-1]
                pks, lbs = [pk1, pk2], [lb1, lb2]
                t_pk = min(r.get("seconds", float("nan")) for r in pks)
                t_lb = min(r.get("seconds", float("nan")) for r in lbs)
                pk, lb = pk1, lb1
                same = (pk.get("support") is not None and lb.get("support") is not None
                        and sorted(pk["support"]) == sorted(lb["support"]))
                ratio = t_pk / max(t_lb, 1e-9)
                summary.setdefault((n, p, rho, snr, lam), []).append(ratio)
                lb_cert = all(r.get("certified") for r in lbs)
                how = ("gap" if lb.get("gap", 1.0) <= GAP_TOL else
                       "tree" if lb.get("exhausted") else "-")
                print(f"| {n} | {p} | {rho:g} | {snr:g} | {lam:g} | {seed} "
                      f"| {_secs(pks)} "
                      f"| {_yes(all(r.get('certified') for r in pks))} "
                      f"| {max(r.get('peak_mb', 0) for r in pks):.0f} "
                      f"| {_secs(lbs)} "
                      f"| {_yes(lb_cert)} ({how}) | {max(r.get('peak_mb', 0) for r in lbs):.0f} "
                      f"| {len(lb.get('support') or [])}, {_yes(lb.get('consistent'))} "
                      f"| {_yes(same)} | {ratio:.2f} |", flush=True)
                extra = {k: v for k, v in {**pk, **{'l0_' + a: b for a, b in lb.items()}}.items()
                         if k in ("error", "l0_error", "gap", "l0_gap", "methods", "ball_slack",
                                  "l0_box_slack", "l0_nodes", "killed", "l0_killed")}
                print(f"<!-- {json.dumps(extra)} -->", flush=True)
    print("\n| n | p | rho | SNR | lam | seeds | largest ratio | median ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for (n, p, rho, snr, lam), ratios in summary.items():
        ratios = sorted(ratios)
        print(f"| {n} | {p} | {rho:g} | {snr:g} | {lam:g} | {len(ratios)} | {ratios[-1]:.2f} "
              f"| {ratios[len(ratios) // 2]:.2f} |")


if __name__ == "__main__":
    main()
