"""Where the certified exact search holds up: a grid of regimes, as a new user would meet them.

Every call is ``dp_best_subset("y ~ 0 + .", data, eps=1, s=s, method=..., bounds=(0.5, 0.5),
r=r, lam=lam, time_limit=...)`` on data from the paper's generator
(:func:`dpsubset.studies.simulate.make_regression`: AR(1) columns with correlation rho, the
true support at columns 1, 3, ..., 2s - 1, the realised signal-to-noise ratio SNR),
with ``method="top_r"`` and ``method="mistakes"`` (its default gap check, "ptr").

The grid (issue 13): p in {100, 1000}; n in {1000, 3000}; s in {5, 8};
rho in {0.1, 0.5, 0.8}; SNR in {2, 5}; and two choices of (r, lam):

- ``ball``: r = b_y / (b_x sqrt(s)) (= 1 / sqrt(s) here), lam = 1: a small radius, the
  strongest utility lever, where the ball binds for every support;
- ``paper``: r = 1.1, lam = 120, the paper's Section 5.

Issue 27 adds the loss as a fourth axis (``--loss squared huber logistic hinge``): the
classification losses use :func:`dpsubset.studies.simulate.make_classification` (the
same design, the labels of the regression's sign) with an intercept (``y ~ .``,
``response_levels=(-1, 1)``), and two more (r, lam) labels: ``default`` (the package's
defaults: ``r`` and ``lam`` not given, so each stage takes its own; for logistic and
hinge the selection's a = 2, r = 2 / sqrt(B_s), lam = max(1, 0.01 n, 5 B_s ln C(p, s) /
(2 eps)) since issue 27 item 2, dpsubset/defaults.py) and ``paper180`` (r = 1.1,
lam = 180, the values of the paper's classification experiments).

Three data sets per cell (seeds 0, 1, 2). For each cell and method the table gives the
median and largest wall time per call, how many calls were certified (every
certificate closed) or timed out (``SearchTimeout``: nothing released), and which
routes of the search certified them, read off ``Certificate.method`` of the search's
certificates (``diagnostics=True``; simulated data, so nothing private is shown):

- ``analytic``: the one-swap neighbourhood, the exact rank-two class search and the
  analytic class bounds settled it with no mixed-integer solve;
- ``branch_and_bound``: a branch and bound (the mistake-class search, or the
  perspective-relaxation branch and bound);
- ``subproblems``: a mistake class solved as one best-subset problem per base;
- ``outer_approximation``: the HiGHS outer approximation;
- ``enumeration``, ``scip``, ``pyomo``: as named.

A route's count is the number of calls that used it (a call may use several).

Each data set runs in a fresh process, with a hard guard of four times the time
limit per call plus a minute: a call that outlives the guard is a hang ("killed") and is
reported as such. Rows are appended to ``--csv`` as they finish, so a long run can be
stopped and its table printed from the file (``--table-only``).

    python bench/regimes.py --quick                       # a few cells, 1 data set, 30 s limit
    python bench/regimes.py --p 100 --time-limit 60       # the p = 100 half of the grid
    python bench/regimes.py --p 100 --rho 0.5 --s 8 --rl paper --methods top_r
    python bench/regimes.py --csv runs.csv --table-only   # the table of a (partial) run
    python bench/regimes.py --p 100 --loss huber logistic hinge --rl default paper180

Times measured on a shared machine are upper bounds.
"""
from __future__ import annotations

import argparse
import csv
import itertools
import json
import math
import os
import statistics
import subprocess
import sys
import time

GRID = dict(p=(100, 1000), n=(1000, 3000), s=(5, 8), rho=(0.1, 0.5, 0.8), snr=(2.0, 5.0),
            rl=("ball", "paper"), loss=("squared",))
RL_CHOICES = ("ball", "paper", "default", "paper180")
LOSSES = ("squared", "huber", "logistic", "hinge")
METHODS = ("top_r", "mistakes")
B_X = B_Y = 0.5
EPS = 1.0
FIELDS = ["p", "n", "s", "rho", "snr", "rl", "r", "lam", "seed", "method", "status", "seconds",
          "routes", "loss"]


def r_lam(rl, s):
    """The (r, lam) pair of a grid label."""
    if rl == "ball":
        return B_Y / (B_X * math.sqrt(s)), 1.0
    if rl == "paper":
        return 1.1, 120.0
    if rl == "default":
        return None, None
    if rl == "paper180":
        return 1.1, 180.0
    raise ValueError(f"unknown (r, lam) label {rl!r}")


def route(method):
    """The route of the search that a certificate's ``method`` names (None: not a bound)."""
    m = method.lower()
    if "scip" in m:
        return "scip"
    if "pyomo" in m:
        return "pyomo"
    if "outer_approximation" in m:
        return "outer_approximation"
    if "branch" in m:
        return "branch_and_bound"
    if "subproblem" in m:
        return "subproblems"
    if m == "enumeration":
        return "enumeration"
    if m == "incumbent":  # a member below a target: an upper end, no bound proved
        return None
    return "analytic"  # neighbourhood, rank-two enumeration, analytic bounds, local optimum


def run_dataset(p, n, s, rho, snr, rl, seed, methods, time_limit, search, loss="squared"):
    """All methods on one data set; returns one row (dict) per method."""
    import warnings

    import dpsubset as dps
    from dpsubset.studies.simulate import make_classification, make_regression

    r, lam = r_lam(rl, s)
    classify = loss in ("logistic", "hinge")
    gen = make_classification if classify else make_regression
    frame, _ = gen(n, p, s, rho=rho, snr=snr, random_state=seed, as_frame=True)
    extra = dict(loss=dict(name=loss, levels=(-1, 1)) if classify else loss)
    if r is not None:
        extra.update(ball=dps.Ball(r=r, lam=lam))
    formula = "y ~ ." if classify else "y ~ 0 + ."
    rows = []
    for method in methods:
        t0 = time.perf_counter()
        routes, status = set(), "certified"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # diagnostics=True warns: simulated data
                res, diag = dps.dp_best_subset(
                    formula, frame, eps=EPS, s=s, method=method, bounds=(B_X, B_Y), random_state=seed,
                    search=dps.Search(route=search, time_limit=time_limit, diagnostics=True), **extra)
            routes = {route(c.method) for c in diag.certificates} - {None}
            if not all(c["closed"] for c in diag.solves):  # (a release never has one open)
                status = "open"
        except dps.SearchTimeout:
            status = "timeout"
        except Exception as err:  # reported, not hidden: the table shows "error"
            status = f"error: {type(err).__name__}"
        rows.append(dict(p=p, n=n, s=s, rho=rho, snr=snr, rl=rl,
                         r="default" if r is None else round(r, 4),
                         lam="default" if lam is None else lam,
                         seed=seed, method=method, status=status,
                         seconds=round(time.perf_counter() - t0, 3),
                         routes="+".join(sorted(routes)), loss=loss))
    return rows


def _run_in_subprocess(args, cell, seed):
    p, n, s, rho, snr, rl, loss = cell
    job = dict(p=p, n=n, s=s, rho=rho, snr=snr, rl=rl, seed=seed, methods=args.methods,
               time_limit=args.time_limit, search=args.search, loss=loss)
    limit = args.time_limit if args.time_limit is not None else 600.0
    guard = len(args.methods) * (4 * limit + 60)
    t0 = time.perf_counter()
    try:
        out = subprocess.run([sys.executable, __file__, "--single", json.dumps(job)],
                             capture_output=True, text=True, timeout=guard, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])
    except subprocess.TimeoutExpired:
        r, lam = r_lam(rl, s)
        return [dict(p=p, n=n, s=s, rho=rho, snr=snr, rl=rl,
                     r="default" if r is None else round(r, 4),
                     lam="default" if lam is None else lam, seed=seed,
                     method="+".join(args.methods), status="killed",
                     seconds=round(time.perf_counter() - t0, 3), routes="", loss=loss)]


def cells(args):
    return list(itertools.product(args.p, args.n, args.s, args.rho, args.snr, args.rl, args.loss))


def table(rows):
    """Markdown table: one line per cell and method."""
    groups = {}
    for row in rows:
        key = (row.get("loss") or "squared", int(row["p"]), int(row["n"]), int(row["s"]),
               float(row["rho"]), float(row["snr"]), row["rl"], row["method"])
        groups.setdefault(key, []).append(row)
    lines = ["| loss | p | n | s | rho | SNR | r | lam | method | calls | median s | max s "
             "| certified | timeout | routes (calls) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for key in sorted(groups, key=lambda k: (LOSSES.index(k[0]),) + k[1:]):
        g = groups[key]
        loss, p, n, s, rho, snr, rl, method = key
        r, lam = r_lam(rl, s)
        r_txt = "default" if r is None else f"{r:.3g}"
        lam_txt = "default" if lam is None else f"{lam:g}"
        secs = [float(x["seconds"]) for x in g]
        cert = sum(x["status"] == "certified" for x in g)
        tout = sum(x["status"] in ("timeout", "killed") for x in g)
        other = [x["status"] for x in g if x["status"] not in ("certified", "timeout")]
        count = {}
        for x in g:
            for rt in filter(None, str(x["routes"]).split("+")):
                count[rt] = count.get(rt, 0) + 1
        routes = ", ".join(f"{k} {v}" for k, v in sorted(count.items()))
        if other:
            routes += ("; " if routes else "") + ", ".join(sorted(set(other)))
        lines.append(f"| {loss} | {p} | {n} | {s} | {rho:g} | {snr:g} | {r_txt} | {lam_txt} "
                     f"| {method} | "
                     f"{len(g)} | {statistics.median(secs):.1f} | {max(secs):.1f} | {cert} | "
                     f"{tout} | {routes} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--p", type=int, nargs="+", default=list(GRID["p"]))
    ap.add_argument("--n", type=int, nargs="+", default=list(GRID["n"]))
    ap.add_argument("--s", type=int, nargs="+", default=list(GRID["s"]))
    ap.add_argument("--rho", type=float, nargs="+", default=list(GRID["rho"]))
    ap.add_argument("--snr", type=float, nargs="+", default=list(GRID["snr"]))
    ap.add_argument("--rl", nargs="+", choices=RL_CHOICES, default=list(GRID["rl"]),
                    help="(r, lam): 'ball' = (b_y / (b_x sqrt(s)), 1), 'paper' = (1.1, 120), "
                         "'default' = the package's defaults, 'paper180' = (1.1, 180)")
    ap.add_argument("--loss", nargs="+", choices=LOSSES, default=list(GRID["loss"]))
    ap.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    ap.add_argument("--datasets", type=int, default=3, help="data sets (seeds 0, 1, ...) per cell")
    ap.add_argument("--time-limit", type=float, default=60.0,
                    help="time_limit of each dp_best_subset call, seconds (default 60)")
    ap.add_argument("--search", default="auto", help="search= of dp_best_subset (default auto)")
    ap.add_argument("--quick", action="store_true",
                    help="p = 100, n = 1000, s = 5, SNR = 5, rho 0.1 and 0.5, one data set, 30 s")
    ap.add_argument("--csv", default=None, help="append one row per call to this file")
    ap.add_argument("--table-only", action="store_true", help="print the table of --csv and stop")
    ap.add_argument("--single", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.single:
        job = json.loads(args.single)
        print(json.dumps(run_dataset(job["p"], job["n"], job["s"], job["rho"], job["snr"],
                                     job["rl"], job["seed"], job["methods"], job["time_limit"],
                                     job["search"], job.get("loss", "squared"))))
        return
    if args.table_only:
        with open(args.csv, newline="") as f:
            print(table(list(csv.DictReader(f))))
        return
    if args.quick:
        args.p, args.n, args.s, args.snr, args.rho = [100], [1000], [5], [5.0], [0.1, 0.5]
        args.datasets, args.time_limit = 1, 30.0
    grid = cells(args)
    print(f"{len(grid)} cells x {args.datasets} data sets x {len(args.methods)} methods; "
          f"time_limit={args.time_limit:g} s per call; search={args.search!r}; eps={EPS:g}, "
          f"bounds=({B_X}, {B_Y}), formula 'y ~ 0 + .' ('y ~ .' for logistic and hinge)",
          file=sys.stderr)
    rows = []
    new_file = args.csv is not None and not os.path.exists(args.csv)
    for i, cell in enumerate(grid, 1):
        for seed in range(args.datasets):
            got = _run_in_subprocess(args, cell, seed)
            rows += got
            if args.csv:
                with open(args.csv, "a", newline="") as f:
                    w = csv.DictWriter(f, FIELDS)
                    if new_file:
                        w.writeheader()
                        new_file = False
                    w.writerows(got)
        print(f"[{i}/{len(grid)}] p={cell[0]} n={cell[1]} s={cell[2]} rho={cell[3]:g} "
              f"SNR={cell[4]:g} {cell[5]} {cell[6]}: " + ", ".join(
                  f"{x['method']} {x['status']} {x['seconds']:.1f}s"
                  for x in rows[-args.datasets * len(args.methods):]),
              file=sys.stderr, flush=True)
    print(table(rows))


if __name__ == "__main__":
    main()
