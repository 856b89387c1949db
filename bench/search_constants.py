"""Remeasure the numbers behind the exact search's constants (docs/benchmarks/search-constants.md).

Each subcommand times the trade-off one constant of dpsubset/search settles, on the
setting where it was first measured (or a smaller one, said in its output), and prints
what it measured. Nothing here changes what the package computes: the constants are
read, or patched only inside this process.

    python bench/search_constants.py node-cost          # NODE_COST (exact.py)
    python bench/search_constants.py race               # RACE_FACTOR, MIN_RACE_SECONDS
    python bench/search_constants.py eig-max            # _EIG_MAX (class_search.py)
    python bench/search_constants.py highs-heuristics   # HiGHS primal heuristics off
    python bench/search_constants.py cut-bytes --p 2000 # CUT_BYTES (outer_approximation.py)
    python bench/search_constants.py score-cost         # seconds per scored support (route model)
    python bench/search_constants.py route              # search="auto" against both routes
    python bench/search_constants.py all                # all of them, default sizes

Times on a shared machine are upper bounds; run on an idle one to compare with the page.
"""
from __future__ import annotations

import argparse
import itertools
import math
import time
from math import comb

import numpy as np

B = 0.5


def _paper_scorer(p, n, seed=0, *, s=5, lam=120.0, r=1.1, rho=0.1, snr=5.0):
    """The paper's setting (Section 5 of Prastakos et al. 2025), clipped to (0.5, 0.5)."""
    from dpsubset.scores.least_squares import LeastSquaresScorer
    from dpsubset.studies.simulate import make_regression
    X, y, _ = make_regression(n, p, s, rho=rho, snr=snr, random_state=seed)
    return LeastSquaresScorer(np.clip(X, -B, B), np.clip(y, -B, B), lam, r)


def _noise_scorer(seed=0, n=200, p=40, b=2.0):
    """Pure noise with a common factor and a small ridge (bench/bnb_hard_cells.py --noise):
    the relaxation is weak and NODE_COST hands the search over to enumeration."""
    from dpsubset.scores.least_squares import LeastSquaresScorer
    rng = np.random.default_rng(seed)
    X = np.sqrt(0.4) * rng.normal(size=(n, p)) + np.sqrt(0.6) * rng.normal(size=(n, 1))
    y = rng.normal(size=n)
    return LeastSquaresScorer(np.clip(X, -b, b), np.clip(y, -b, b), 1.0, 1.0)


def node_cost(args):
    """Seconds per branch-and-bound node over seconds per scored support."""
    from dpsubset.search import branch_bound as bb
    from dpsubset.search.enumeration import all_supports
    from dpsubset.search.exact import NODE_COST
    s = 5
    print(f"NODE_COST = {NODE_COST}: pure noise, p = 40, n = 200, s = 5, lam = 1, r = 1")
    for seed in range(args.seeds):
        sc = _noise_scorer(seed)
        S = all_supports(sc.p, s)[:200_000]
        t0 = time.perf_counter()
        sc.score(S)
        per_support = (time.perf_counter() - t0) / len(S)
        t0 = time.perf_counter()
        try:
            res = bb.branch_and_bound(sc, s, max_nodes=args.nodes)
            nodes = res.nodes
        except bb.NodeBudgetExceeded:
            nodes = args.nodes
        per_node = (time.perf_counter() - t0) / max(nodes, 1)
        print(f"  seed {seed}: {per_support * 1e6:.2f} us per support, {per_node * 1e3:.2f} ms "
              f"per node ({nodes} nodes): a node costs {per_node / per_support:.0f} supports; "
              f"C(40, 5) / NODE_COST = {comb(40, 5) // NODE_COST} nodes", flush=True)


def race(args):
    """Logistic, p = 30, n = 400, lam = 1: scoring every support against the outer
    approximation of the best support, which stalls on flat scores."""
    from dpsubset.scores.convex import ConvexLossScorer
    from dpsubset.search.enumeration import score_all
    from dpsubset.search.exact import MIN_RACE_SECONDS, RACE_FACTOR
    from dpsubset.runtime.limits import SearchTimeout
    from dpsubset.search.outer_approximation import OuterApproximation
    p, n, s = 30, 400, 5
    print(f"RACE_FACTOR = {RACE_FACTOR}, MIN_RACE_SECONDS = {MIN_RACE_SECONDS}: logistic, "
          f"p = {p}, n = {n}, s = {s}, lam = 1, r = 1, outer approximation capped at "
          f"{args.oa_limit:g} s")
    rng = np.random.default_rng(0)
    X = np.clip(rng.normal(size=(n, p)), -1, 1)
    y = np.where(rng.normal(size=n) > 0, 1.0, -1.0)  # no signal: flat scores
    sc = ConvexLossScorer(X, y, 1.0, 1.0, loss="logistic")
    t0 = time.perf_counter()
    S, c = score_all(sc, s)
    t_enum = time.perf_counter() - t0
    print(f"  enumeration: {len(S):,} supports in {t_enum:.1f} s", flush=True)
    oa = OuterApproximation(sc, s, time_limit=args.oa_limit)
    oa.add_cut(S[int(np.argmin(c))])  # even seeded with the best support
    t0 = time.perf_counter()
    try:
        oa.solve("best support")
        print(f"  outer approximation: certified in {time.perf_counter() - t0:.1f} s")
    except SearchTimeout:
        print(f"  outer approximation: no certificate after {time.perf_counter() - t0:.1f} s "
              f"({oa.n_cuts} cuts)")


def eig_max(args):
    """class_minimum at p = 1000 with the eigenvalue bound skipped (q > _EIG_MAX, the
    default) and computed (_EIG_MAX raised), deciding class 3 against the best one-swap
    score (the kind of target the gap check and the lazy draw give it)."""
    from dpsubset.search import class_search as cs
    from dpsubset.search.exact import SubsetSearch
    print(f"_EIG_MAX = {cs._EIG_MAX}: paper's setting, p = {args.p}, n = 1000, class 3 "
          "against the best one-swap score")
    for seed in range(args.seeds):
        sc = _paper_scorer(args.p, 1000, seed)
        search = SubsetSearch(sc, 5)
        S1, _ = search.best()
        target = float(np.min(search.neighbourhood()[1]))
        out = {}
        for label, limit in (("lam_n (default)", cs._EIG_MAX), ("eigenvalue", 10 ** 9)):
            old, cs._EIG_MAX = cs._EIG_MAX, limit
            try:
                t0 = time.perf_counter()
                _, v, nodes = cs.class_minimum(sc, S1, 3, target)
                out[label] = (time.perf_counter() - t0, nodes, v)
            finally:
                cs._EIG_MAX = old
        (ta, na, va), (tb, nb, vb) = out.values()
        print(f"  seed {seed}: lam_n bound {ta:.2f} s ({na} nodes), eigenvalue bound "
              f"{tb:.2f} s ({nb} nodes); same minimum: {va == vb}", flush=True)


def highs_heuristics(args):
    """Outer approximation of the best support at p = 100 with HiGHS' primal heuristics
    off (the package's setting) and on."""
    from dpsubset.search.heuristics import iht_support, local_search
    from dpsubset.search.outer_approximation import OuterApproximation
    opts = ("rins", "rens", "root_reduced_cost", "zi_round", "shifting", "feasibility_jump")
    from dpsubset.runtime.limits import SearchTimeout
    print(f"HiGHS heuristics off: best support by outer approximation, p = {args.p}, "
          f"n = 1000, rho = 0.5, SNR = 2, lam = 1, r = 0.447 (the ball binds), each solve "
          f"stopped after {args.rounds} rounds (the master's solves are what the heuristics "
          "slow down)")
    for seed in range(args.seeds):
        sc = _paper_scorer(args.p, 1000, seed, lam=1.0, r=0.447, rho=0.5, snr=2.0)
        S, _, _ = local_search(sc, iht_support(sc, 5))
        times = {}
        for on in (False, True):
            oa = OuterApproximation(sc, 5, time_limit=args.oa_limit)
            if on:
                for opt in opts:
                    oa.h.setOptionValue(f"mip_heuristic_run_{opt}", True)
            oa.add_cut(S)
            t0 = time.perf_counter()
            try:
                oa.solve("best support", max_iter=args.rounds)
                times[on] = f"{time.perf_counter() - t0:.2f} s"
            except SearchTimeout:
                times[on] = f"> {args.oa_limit:g} s (capped)"
        print(f"  seed {seed}: off {times[False]}, on {times[True]}", flush=True)


def _rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def cut_bytes(args):
    """Resident bytes per coefficient of a HiGHS master with dense cuts, before and
    after a solve (the number CUT_BYTES rounds up)."""
    from dpsubset.runtime.limits import SearchTimeout
    from dpsubset.search.outer_approximation import CUT_BYTES, OuterApproximation
    print(f"CUT_BYTES = {CUT_BYTES}: p = {args.p}, n = 1000, {args.cuts} dense cuts")
    sc = _paper_scorer(args.p, 1000, 0)
    rng = np.random.default_rng(0)
    cuts = [np.sort(rng.choice(args.p, 5, replace=False)) for _ in range(args.cuts)]
    grads = [sc.cut(S) for S in cuts]  # computed first: only the master's rows are counted
    before = _rss()
    oa = OuterApproximation(sc, 5, time_limit=args.oa_limit)
    for S, (v, g) in zip(cuts, grads):
        oa.add_cut(S, v, g)
    coefs = args.cuts * (args.p + 1)
    built = _rss()
    try:
        oa.solve("best support", max_iter=1)
    except SearchTimeout:
        pass
    solved = _rss()
    print(f"  {(built - before) / coefs:.0f} bytes per coefficient before a solve, "
          f"{(solved - before) / coefs:.0f} after one ({coefs:,} coefficients)")


# ------------------------------------------------------------------ the route of search="auto"
ROUTE_LOSSES = ("squared", "huber", "logistic", "hinge")


def _grid_data(loss, n, p, s, seed, snr=5.0, rho=0.5):
    """A data frame of the regime grid's generator (bench/regimes.py) and the call's
    extra arguments."""
    from dpsubset.studies.simulate import make_classification, make_regression
    classify = loss in ("logistic", "hinge")
    gen = make_classification if classify else make_regression
    frame, _ = gen(n, p, s, rho=rho, snr=snr, random_state=seed, as_frame=True)
    extra = dict(loss=dict(name=loss, levels=(-1, 1)) if classify else loss)
    return ("y ~ ." if classify else "y ~ 0 + ."), frame, extra


def score_cost(args):
    """Seconds per scored support of each loss at several n and s (the scorer alone,
    400 supports in one batch): the per-support cost of the route model in
    dpsubset/search/route.py."""
    from dpsubset.search.enumeration import all_supports
    from dpsubset.search.route import seconds_per_support
    print("seconds per scored support (measured | the route model's), p = 20, rho = 0.5, SNR 5")
    for loss in args.losses:
        for s in (3, 5, 8):
            for n in args.n_grid:
                sc = _route_scorer(loss, n, 20, s)
                S = all_supports(20, s)[:400]
                t0 = time.perf_counter()
                sc.score(S)
                per = (time.perf_counter() - t0) / len(S)
                print(f"  {loss:8s} s = {s} n = {n:6d}: {per * 1e6:8.0f} us | "
                      f"{seconds_per_support(loss, n, s) * 1e6:8.0f} us", flush=True)


def _route_scorer(loss, n, p, s, seed=0):
    from dpsubset.scores.convex import ConvexLossScorer
    from dpsubset.scores.least_squares import LeastSquaresScorer
    from dpsubset.studies.simulate import make_classification, make_regression
    gen = make_classification if loss in ("logistic", "hinge") else make_regression
    X, y, _ = gen(n, p, s, rho=0.5, snr=5.0, random_state=seed)
    X, y = np.clip(X, -B, B), (y if loss in ("logistic", "hinge") else np.clip(y, -B, B))
    if loss == "squared":
        return LeastSquaresScorer(X, y, 1.0, 1.0 / np.sqrt(s))
    return ConvexLossScorer(X, y, 1.0, 1.0 / np.sqrt(s), loss=loss)


def _time_call(loss, n, p, s, seed, search, snr, rl):
    import warnings

    import dpsubset as dps
    formula, frame, extra = _grid_data(loss, n, p, s, seed, snr=snr)
    if rl == "ball":
        extra.update(ball=dps.Ball(r=1.0 / np.sqrt(s), lam=1.0))
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dps.dp_best_subset(formula, frame, eps=1.0, s=s, bounds=(B, B), search=dps.Search(route=search, time_limit=600),
                           refit=False, random_state=seed, **extra)
    return time.perf_counter() - t0


def route(args):
    """search="auto" against enumeration and the branch and bound on a grid of (loss, n,
    p, s) where C(p, s) <= 50,000 (where the two exact routes compete), each data set
    timed twice per repeat with the order of the routes reversed (the fastest run
    counts: the others carry the load of a shared machine); a route whose estimated time
    passes --cap seconds is skipped (shown as "> cap")."""
    from dpsubset.search.route import choose_route, enumeration_seconds
    routes = tuple(args.routes)
    print("| loss | n | p | s | C(p, s) | r, lam | SNR | enumeration s | branch and bound s | "
          "auto s (route) | auto / best |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for loss, n, (p, s), rl, snr in itertools.product(args.losses, args.n_grid, args.ps,
                                                      args.rl, args.snr):
        best = {}
        for order in [routes, routes[::-1]] * args.repeats:
            for search in order:
                if search == "enumeration" and enumeration_seconds(loss, n, p, s) > args.cap:
                    continue
                t = _time_call(loss, n, p, s, 0, search, snr, rl)
                best[search] = min(best.get(search, math.inf), t)
        fast = min((v for k, v in best.items() if k != "auto"), default=math.nan)

        def cell(key):
            if key in best:
                return f"{best[key]:.2f}"
            return f"> {args.cap:g}" if key == "enumeration" else "-"
        auto = best.get("auto", math.nan)
        print(f"| {loss} | {n} | {p} | {s} | {comb(p, s):,} | {rl} | {snr:g} | "
              f"{cell('enumeration')} | {cell('branch_and_bound')} | {cell('auto')} "
              f"({choose_route(loss, n, p, s)}) | {auto / fast:.2f} |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["node-cost", "race", "eig-max", "highs-heuristics",
                                     "cut-bytes", "score-cost", "route", "all"])
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--p", type=int, default=None, help="p (eig-max: 1000, "
                    "highs-heuristics: 100, cut-bytes: 10000)")
    ap.add_argument("--nodes", type=int, default=2000, help="node-cost: nodes timed")
    ap.add_argument("--cuts", type=int, default=300, help="cut-bytes: dense cuts")
    ap.add_argument("--rounds", type=int, default=20, help="highs-heuristics: master rounds")
    ap.add_argument("--oa-limit", type=float, default=60.0,
                    help="seconds for an outer-approximation solve (race, cut-bytes)")
    ap.add_argument("--losses", nargs="+", default=list(ROUTE_LOSSES), help="route, score-cost")
    ap.add_argument("--n-grid", nargs="+", type=int, default=[500, 5000],
                    help="route, score-cost: the n of the grid")
    ap.add_argument("--ps", nargs="+", default=["10,3", "12,4", "15,5", "20,5"],
                    help="route: (p, s) pairs as p,s")
    ap.add_argument("--rl", nargs="+", default=["default", "ball"],
                    help="route: (r, lam): the package's defaults, or r = 1/sqrt(s), lam = 1")
    ap.add_argument("--snr", nargs="+", type=float, default=[5.0, 0.5], help="route: SNR")
    ap.add_argument("--routes", nargs="+", default=["enumeration", "branch_and_bound", "auto"],
                    help="route: the searches timed")
    ap.add_argument("--repeats", type=int, default=1,
                    help="route: pairs of runs (each pair in both orders); the fastest counts")
    ap.add_argument("--cap", type=float, default=120.0,
                    help="route: skip enumeration where the model puts it above this")
    args = ap.parse_args()
    args.ps = [tuple(int(v) for v in x.split(",")) for x in args.ps]
    runs = dict(node_cost=(node_cost, None), race=(race, None), eig_max=(eig_max, 1000),
                highs_heuristics=(highs_heuristics, 100), cut_bytes=(cut_bytes, 10_000),
                score_cost=(score_cost, None), route=(route, None))
    chosen = runs if args.what == "all" else {args.what.replace("-", "_"): runs[
        args.what.replace("-", "_")]}
    given_p = args.p
    for fn, p in chosen.values():
        args.p = given_p or p
        fn(args)


if __name__ == "__main__":
    main()
