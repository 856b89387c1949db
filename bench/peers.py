"""top-R and mistakes against the strongest private peers (issue 40), at equal eps.

Three comparisons, each printed as a Markdown table (docs/benchmarks/peers.md):

``recovery``  Exact support recovery on the paper's model (dpsubset.studies.simulate, no
              intercept, bounds b_x = b_y = 0.5, eps = 1 for the selection, refit=False), per
              regime (rho, SNR, s) and n: top-R and mistakes (gap check "ptr", delta = 1e-6) by
              their exact probabilities (dpsubset.studies.experiments, exact=True), the peers
              ``peeling`` (Cai, Wang and Zhang 2021) and ``frank_wolfe`` (Talwar, Thakurta and
              Zhang 2015) by the fraction of ``--draws`` releases per data set, with delta = 1/n^2.
              Then the smallest n of the grid reaching 90 %. A method that has reached 0.99 is
              not run at larger n of that regime (marked "."), to save time.
``real``      Near-best share on the real-data panel (dpsubset.studies.real_data): a release is
              near-best when its OLS residual sum of squares (intercept unpenalised) is within
              0.1 % of the best support's (as bench/real_data.py); every method through
              dp_best_subset with the package's defaults, the peers with delta = 1/n^2.
``refit``     Refit on the non-private best support of each real data set: in-sample and
              held-out (a 70/30 random split) MSE over OLS's, median of ``--draws`` noise draws,
              for the package's objective perturbation, sufficient-statistics perturbation
              (dpsubset.refit.ssp), AdaSSP (dpsubset.refit.adassp, delta = 1/n^2) and
              diffprivlib's LinearRegression; and the logistic refit on Pima (MASS's train/test
              split) against diffprivlib's LogisticRegression.

The peers' draws call the functions their ``method=`` runs (the plan and the iteration of
dpsubset/selection/baselines/peeling.py and frank_wolfe.py), without rebuilding the design
per draw; the script first checks that this gives the same support as dp_best_subset with
the same seed.

    python bench/peers.py                                  # everything, about 35 minutes here
    python bench/peers.py recovery --p 100 --trials 3 --draws 10
    python bench/peers.py recovery --p 10000 --regimes paper --exact-methods top_r --trials 1 --draws 3
    python bench/peers.py real --draws 10
    python bench/peers.py refit --draws 10
    python bench/peers.py defaults                         # how the peers' defaults were chosen
    python bench/peers.py screen --p 1000 --regimes paper correlated --trials 2 --draws 5   # the proposal
    python bench/peers.py recovery --p 100 --regimes hard --peeling-iterations 10
"""
from __future__ import annotations

import argparse
import os
import sys
import math
import time
import warnings

import numpy as np
import pandas as pd

import dpsubset as dps
from dpsubset.defaults import default_radius
from dpsubset.privacy.sensitivity import largest_row_norm
from dpsubset.refit.adassp import adassp
from dpsubset.refit.objective import objective_perturbation
from dpsubset.refit.ssp import sufficient_statistics_perturbation
from dpsubset.selection.baselines.frank_wolfe import frank_wolfe_plan, private_frank_wolfe, support_of
from dpsubset.selection.baselines.frank_wolfe import default_iterations
from dpsubset.studies.simulate import Simulation
from dpsubset.selection.baselines.peeling import (DEFAULT_ITERATIONS, DEFAULT_STEP, noisy_iht,
                                                  peeling_plan)
from dpsubset.studies.experiments import recovery_study
from dpsubset.studies.real_data import real_data_names
from dpsubset.studies.simulate import make_regression

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from real_data import _data_sets, ols_rss_table  # noqa: E402  (the same data sets and RSS rule)

#: name -> (rho, SNR, s): the paper's setting, correlated columns, and correlated with low SNR.
REGIMES = {"paper": (0.1, 5.0, 5), "correlated": (0.5, 5.0, 5), "hard": (0.8, 2.0, 5)}
N_GRID = {100: [1000, 2000, 4000, 8000, 16000, 32000, 64000],
          1000: [2000, 4000, 8000, 16000, 32000, 64000],
          10000: [2000, 3000, 4000, 8000]}
PEERS = ("peeling", "frank_wolfe")
B_X = B_Y = 0.5
EPS = 1.0
#: Iterations of peeling in the recovery runs (its default; --peeling-iterations changes it).
PEELING_T = {"T": DEFAULT_ITERATIONS}


class _Public:
    """The public numbers of a design without intercept (what the peers' plans read)."""

    def __init__(self, n, p):
        self.x_bounds, self.forced_bounds, self.b_y, self.n = np.full(p, B_X), np.zeros(0), B_Y, n


def peer_release(method, X, y, s, eps, rng, public, delta, noise_free=False):
    """One release of a peer on clipped (X, y) without intercept: the code its method= runs
    (``noise_free``: the same iteration without noise, what diagnostics=True reports)."""
    n = X.shape[0]
    F = np.empty((n, 0))
    r = default_radius(public.x_bounds, public.b_y, s, (), n=n, eps=eps)
    if method == "peeling":
        opts = dict(step=DEFAULT_STEP, iterations=PEELING_T["T"], delta=delta)
        eta, _, noise = peeling_plan(public, s, r, eps, opts)
        support, _ = noisy_iht(X, y, F, s=s, r=r, step=eta, iterations=opts["iterations"],
                               scale=0.0 if noise_free else noise.scale, rng=rng)
        return support, noise
    opts = dict(iterations=default_iterations(s), radius=None, delta=delta)
    C, _, noise = frank_wolfe_plan(public, s, r, eps, opts)
    theta = private_frank_wolfe(X, y, F, C=C, iterations=opts["iterations"],
                                scale=0.0 if noise_free else noise.scale, rng=rng)
    return support_of(theta, s, rng), noise


def check_fast_path():
    """The bench's peer draws give the support dp_best_subset releases with the same seed."""
    X, y, _ = make_regression(3000, 30, 5, rho=0.1, snr=5, random_state=0)
    X, y = np.clip(X, -B_X, B_X), np.clip(y, -B_Y, B_Y)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(30)])
    df.insert(0, "y", y)
    for method in PEERS:
        opts = {"iterations": PEELING_T["T"]} if method == "peeling" else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = dps.dp_best_subset("y ~ 0 + .", df, eps=EPS, s=5, method=dps.Method(method, **(opts or {})), bounds=(B_X, B_Y),
                                     refit=False, budget=dps.Budget(delta=1 / 3000 ** 2), random_state=7)
        fast, _ = peer_release(method, X, y, 5, EPS, np.random.default_rng(7), _Public(3000, 30),
                               1 / 3000 ** 2)
        api = sorted(int(c[1:]) for c in res.support)
        assert api == sorted(fast.tolist()), (method, api, fast)
    print("(check: the bench's peer draws equal dp_best_subset's releases with the same seed)\n")


def peers_cell(n, p, regime, trials, draws, seed, peers=PEERS):
    """{method: (mean recovery, its se, seconds per release, guarantee)} of the peers at one n,
    and of their iterations without noise ("<peer> (no noise)", one run per data set)."""
    rho, snr, s = REGIMES[regime]
    out = {m: ([], [], None) for m in peers}
    free = {m: [] for m in peers}
    for trial in range(trials):
        X, y, true = make_regression(n, p, s, rho=rho, snr=snr,
                                     random_state=np.random.default_rng([seed, n, trial, p]))
        X, y = np.clip(X, -B_X, B_X), np.clip(y, -B_Y, B_Y)
        true = set(true.tolist())
        for method in peers:
            rng = np.random.default_rng([seed, n, trial, p, 1 + PEERS.index(method)])
            t0 = time.perf_counter()
            hits = []
            for _ in range(draws):
                S, noise = peer_release(method, X, y, s, EPS, rng, _Public(n, p), 1.0 / n ** 2)
                hits.append(set(S.tolist()) == true)
            out[method][0].append(float(np.mean(hits)))
            out[method][1].append((time.perf_counter() - t0) / draws)
            out[method] = (out[method][0], out[method][1], noise.guarantee)
            S0, _ = peer_release(method, X, y, s, EPS, rng, _Public(n, p), 1.0 / n ** 2, noise_free=True)
            free[method].append(float(set(S0.tolist()) == true))
    res = {m: (float(np.mean(v[0])), _se(v[0]), float(np.mean(v[1])), v[2]) for m, v in out.items()}
    for m, v in free.items():
        res[f"{m} (no noise)"] = (float(np.mean(v)), _se(v), float("nan"), "not private")
    return res


def _se(values):
    return float(np.std(values, ddof=1) / math.sqrt(len(values))) if len(values) > 1 else float("nan")


def exact_cell(n, p, regime, trials, seed, time_limit, exact_methods=("top_r", "mistakes")):
    """{method: (mean exact recovery, se, seconds per data set)} of top-R and mistakes at one n."""
    rho, snr, s = REGIMES[regime]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fr = recovery_study(list(exact_methods), n_grid=[n], p=p, s=s, trials=trials, draws=1, eps=EPS,
                            model=Simulation(snr=snr, rho=rho), bounds=(B_X, B_Y), ball=None, intercept=False,
                            exact=True, search=dps.Search(time_limit=time_limit), progress=False,
                            random_state=seed + 1000 * n + p)
    out = {}
    for m, g in fr.groupby("method"):
        ok = g[g.status == "ok"]
        out[m] = ((float(ok.exact_recovery.mean()) if len(ok) else float("nan")), _se(ok.exact_recovery.tolist()),
                  float(g.time.mean()), len(g) - len(ok))
    return out


def recovery(p, regimes, n_grid, trials, draws, seed=0, time_limit=600, exact_methods=("top_r", "mistakes")):
    """Print one table per regime: recovery per method and n, then n for 90 %."""
    free_rows = [f"{m} (no noise)" for m in PEERS]
    methods = [*exact_methods, *PEERS, *free_rows]
    for regime in regimes:
        rho, snr, s = REGIMES[regime]
        print(f"\n### p = {p}, {regime}: rho = {rho}, SNR = {snr:g}, s = {s}; eps = {EPS:g}; "
              f"peeling with T = {PEELING_T['T']} iterations; "
              f"top_r and mistakes: exact probabilities on {trials} data sets per n (mistakes: "
              f"delta = 1e-6); peeling and frank_wolfe: {draws} releases on each of the same number "
              f"of data sets, delta = 1/n^2 (their guarantee in the last column)\n", flush=True)
        print("| method | " + " | ".join(f"n = {n}" for n in n_grid) + " | n(90%) | s/call | guarantee |")
        print("|---" * (len(n_grid) + 4) + "|", flush=True)
        rows = {m: [] for m in methods}
        secs = {m: [] for m in methods}
        guar = {"top_r": {"pure"}, "mistakes": {"(eps, 1e-6)"}, **{m: set() for m in PEERS},
                **{m: {"not private"} for m in free_rows}}
        done = set()
        for n in n_grid:
            todo_exact = [m for m in exact_methods if m not in done]
            todo_peers = [m for m in PEERS + tuple(free_rows) if m not in done]
            cells = {}
            if todo_exact:
                cells.update(exact_cell(n, p, regime, trials, seed, time_limit, todo_exact))
            if todo_peers:
                run = tuple(m for m in PEERS if m in todo_peers or f"{m} (no noise)" in todo_peers)
                for m, v in peers_cell(n, p, regime, trials, draws, seed, run).items():
                    if m in done:
                        continue
                    cells[m] = v
                    if m in PEERS:
                        guar[m].add("pure" if v[3] == "pure" else "(eps, 1/n^2)")
            for m in methods:
                if m in done or m not in cells:
                    rows[m].append(".")
                    continue
                mean, se = cells[m][0], cells[m][1]
                extra = f" ({cells[m][3]} skipped)" if m in ("top_r", "mistakes") and cells[m][3] else ""
                rows[m].append(f"{mean:.2f}" + ("" if math.isnan(se) else f" ({se:.2f})") + extra)
                if not math.isnan(cells[m][2]):
                    secs[m].append(cells[m][2])
                if mean >= 0.99:
                    done.add(m)
            print(f"(n = {n} done)", flush=True)
        for m in methods:
            n90 = next((n for n, v in zip(n_grid, rows[m]) if v != "." and float(v.split()[0]) >= 0.9), None)
            per = "per data set" if m in ("top_r", "mistakes") else "per release"
            sec = f"{np.median(secs[m]):.3f} {per}" if secs[m] else ""
            print(f"| {m} | " + " | ".join(rows[m]) + f" | {n90 if n90 else '> ' + str(n_grid[-1])} | "
                  f"{sec} | {' or '.join(sorted(guar[m]))} |", flush=True)


# --------------------------------------------------------------------------- real data
def real(names, s_values, draws, budgets):
    """Near-best share per data set, s and eps, for every method (dp_best_subset, defaults)."""
    methods = ["top_r", "mistakes", *PEERS]
    print(f"\n### Near-best share on the real-data panel: {draws} releases per cell, selection only, "
          "package defaults; mistakes with delta = 1e-6, the peers with delta = 1/n^2 "
          "(both peers are pure at their default steps for s <= 3: basic composition needs less noise "
          "than zCDP, and delta goes unused). After a peer's share, (+) or (-): "
          "whether its own iteration without noise (diagnostics=True) is near-best\n")
    print("| data | n | p | s | eps | " + " | ".join(methods) + " | s/call (" + ", ".join(methods) + ") |")
    print("|---" * (5 + len(methods) + 1) + "|", flush=True)
    totals = {m: [0, 0] for m in methods}
    for ds, design in _data_sets(names):
        names_c = design.spec.candidate_names
        for s in s_values:
            rss = ols_rss_table(design.data.X, design.data.y, s)
            best = min(rss.values())
            eps_list = budgets(design.n)
            for eps in eps_list:
                shares, secs = [], []
                for m in methods:
                    kw = dict(budget=dps.Budget(delta=1.0 / design.n ** 2)) if m in PEERS else {}
                    near, t0 = 0, time.perf_counter()
                    for _ in range(draws):
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            res = dps.dp_best_subset(ds.formula, ds.data, eps=eps, s=s, bounds=ds.bounds,
                                                     method=m, refit=False, **kw)
                        S = tuple(sorted(names_c.index(c) for c in res.support))
                        near += rss[S] <= best * (1 + 1e-3)
                    totals[m][0] += near
                    totals[m][1] += draws
                    mark = ""
                    if m in PEERS:  # is the peer's own iteration, without noise, near-best?
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            _, diag = dps.dp_best_subset(ds.formula, ds.data, eps=eps, s=s, bounds=ds.bounds,
                                                         method=m, refit=False, search=dps.Search(diagnostics=True), **kw)
                        S0 = tuple(sorted(names_c.index(c) for c in diag.best_support))
                        mark = " (+)" if rss[S0] <= best * (1 + 1e-3) else " (-)"
                    shares.append(f"{near}/{draws}{mark}")
                    secs.append(f"{(time.perf_counter() - t0) / draws:.2f}")
                print(f"| {ds.name} | {design.n} | {design.X.shape[1]} | {s} | {eps:g} | " + " | ".join(shares)
                      + " | " + ", ".join(secs) + " |", flush=True)
    print("| **all** | | | | | " + " | ".join(f"{a}/{b} ({100 * a / b:.0f} %)" for a, b in totals.values())
          + " | |")


# --------------------------------------------------------------------------- refit
def _diffprivlib():
    """diffprivlib's models, with the names scikit-learn >= 1.8 removed put back (bench only)."""
    import sklearn.tree._tree as tree
    for name, value in (("DOUBLE", np.float64), ("DTYPE", np.float32)):
        if not hasattr(tree, name):
            setattr(tree, name, value)
    from diffprivlib.models import LinearRegression, LogisticRegression
    return LinearRegression, LogisticRegression


def _dp_logistic(**kw):
    """diffprivlib's LogisticRegression, built while scikit-learn's accepts ``multi_class`` again
    (removed in scikit-learn 1.8; diffprivlib 0.6.6 still passes it); restored right after."""
    import sklearn.linear_model as lm
    _, LogisticRegression = _diffprivlib()
    orig = lm.LogisticRegression.__init__

    def init(self, *args, multi_class="ovr", **rest):
        orig(self, *args, **rest)
        self.multi_class = multi_class
    lm.LogisticRegression.__init__ = init
    try:
        return LogisticRegression(**kw)
    finally:
        lm.LogisticRegression.__init__ = orig


def _refit_draw(method, A, y, x_b, design, eps, n, rng):
    """Coefficients over [intercept, support] of one private refit on (A, y) (mapped units)."""
    row_bound = largest_row_norm(x_b, len(x_b), design.forced_bounds)
    if method == "objective perturbation":
        r = default_radius(x_b, design.b_y, len(x_b), design.forced_bounds, n=n, eps=eps, stage="refit")
        return np.asarray(objective_perturbation(A, y, loss="squared", eps=eps, row_bound=row_bound,
                                                 b_y=design.b_y, r=r, rng=rng).coef)
    if method == "SSP":
        r = default_radius(x_b, design.b_y, len(x_b), design.forced_bounds, n=n, eps=eps, stage="refit")
        bounds = np.concatenate([design.forced_bounds, x_b])
        return np.asarray(sufficient_statistics_perturbation(A, y, eps=eps, bound_x_entries=bounds,
                                                             b_y=design.b_y, r=r, rng=rng).coef)
    if method == "AdaSSP":
        return adassp(A, y, row_bound=row_bound, b_y=design.b_y, eps=eps, delta=1.0 / n ** 2, rng=rng).coef
    LinearRegression, _ = _diffprivlib()
    m = LinearRegression(epsilon=eps, bounds_X=(-x_b, x_b), bounds_y=(-design.b_y, design.b_y),
                         random_state=int(rng.integers(2 ** 31)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m.fit(A[:, 1:], y)
    return np.concatenate([[m.intercept_], m.coef_])


def refit(names, s, eps_list, draws, seed=0):
    """MSE ratios over OLS on the non-private best support, in sample and held out."""
    from dpsubset.nonprivate import best_subset_nonprivate
    methods = ["objective perturbation", "SSP", "AdaSSP", "diffprivlib"]
    print(f"\n### Refit on the OLS best support (s = {s}): median over {draws} draws of MSE / OLS MSE, "
          "in sample (all rows) | held out (fit on a random 70 %, MSE on the other 30 %); "
          "objective perturbation, SSP and diffprivlib pure eps-DP, AdaSSP (eps, 1/n^2)\n")
    print("| data | n | eps | " + " | ".join(methods) + " | s/call (" + ", ".join(methods) + ") |")
    print("|---" * (3 + len(methods) + 1) + "|", flush=True)
    rng = np.random.default_rng(seed)
    for ds, design in _data_sets(names):
        if design.forced_bounds.size != 1:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sup = best_subset_nonprivate(ds.formula, ds.data, s=s, bounds=ds.bounds).support
        idx = [design.spec.candidate_names.index(c) for c in sup]
        A = np.hstack([design.data.forced, design.data.X[:, idx]])
        y, x_b, n = design.data.y, design.x_bounds[idx], design.n
        train = np.zeros(n, bool)
        train[rng.permutation(n)[: int(0.7 * n)]] = True
        ols_all = np.linalg.lstsq(A, y, rcond=None)[0]
        ols_tr = np.linalg.lstsq(A[train], y[train], rcond=None)[0]
        mse_in, mse_out = np.mean((y - A @ ols_all) ** 2), np.mean((y[~train] - A[~train] @ ols_tr) ** 2)
        for eps in eps_list:
            cells, secs = [], []
            for m in methods:
                t0 = time.perf_counter()
                ins = [np.mean((y - A @ _refit_draw(m, A, y, x_b, design, eps, n, rng)) ** 2) / mse_in
                       for _ in range(draws)]
                outs = [np.mean((y[~train] - A[~train] @ _refit_draw(m, A[train], y[train], x_b, design, eps,
                                                                     int(train.sum()), rng)) ** 2) / mse_out
                        for _ in range(draws)]
                cells.append(f"{np.median(ins):.3g} \\| {np.median(outs):.3g}")
                secs.append(f"{(time.perf_counter() - t0) / (2 * draws):.3f}")
            print(f"| {ds.name} | {n} | {eps:g} | " + " | ".join(cells) + " | " + ", ".join(secs) + " |",
                  flush=True)


def refit_released(names, s, eps_list, draws, seed=1):
    """In-sample MSE over OLS of each refit on the support top-R released (one release per draw)."""
    methods = ["objective perturbation", "SSP", "AdaSSP", "diffprivlib"]
    print(f"\n### Refit on the support top-R released (s = {s}; selection and refit each get eps, so the "
          f"whole release spends 2 eps): median over {draws} releases of the in-sample MSE over OLS's on "
          "the same support\n")
    print("| data | n | eps | " + " | ".join(methods) + " |")
    print("|---" * (3 + len(methods)) + "|", flush=True)
    rng = np.random.default_rng(seed)
    for ds, design in _data_sets(names):
        if design.forced_bounds.size != 1:
            continue
        y, n, names_c = design.data.y, design.n, design.spec.candidate_names
        for eps in eps_list:
            ratios = {m: [] for m in methods}
            for _ in range(draws):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    sup = dps.dp_best_subset(ds.formula, ds.data, eps=eps, s=s, bounds=ds.bounds,
                                             refit=False).support
                idx = [names_c.index(c) for c in sup]
                A = np.hstack([design.data.forced, design.data.X[:, idx]])
                mse = np.mean((y - A @ np.linalg.lstsq(A, y, rcond=None)[0]) ** 2)
                for m in methods:
                    coef = _refit_draw(m, A, y, design.x_bounds[idx], design, eps, n, rng)
                    ratios[m].append(np.mean((y - A @ coef) ** 2) / mse)
            print(f"| {ds.name} | {n} | {eps:g} | " + " | ".join(f"{np.median(ratios[m]):.3g}" for m in methods)
                  + " |", flush=True)


def logistic_refit(eps_list, draws, seed=0):
    """Pima (MASS's split): held-out accuracy of the logistic refits on glu, bmi, ped."""
    from dpsubset.studies.datasets import load_pima, pima_bounds
    from sklearn.linear_model import LogisticRegression as Plain
    df = load_pima()
    cols = ["glu", "bmi", "ped"]
    lo = np.array([pima_bounds()[c][0] for c in cols])
    hi = np.array([pima_bounds()[c][1] for c in cols])
    X = (2 * (np.clip(df[cols].to_numpy(float), lo, hi) - lo) / (hi - lo)) - 1  # mapped to [-1, 1]
    y = np.where(df["type"] == "Yes", 1.0, -1.0)
    tr = (df["split"] == "train").to_numpy()
    A = np.hstack([np.ones((len(y), 1)), X])
    plain = Plain(C=1e6, max_iter=1000).fit(X[tr], y[tr])
    base = plain.score(X[~tr], y[~tr])
    print(f"\n### Logistic refit on Pima (glu, bmi, ped mapped to [-1, 1]; train: MASS's 200 rows, test: "
          f"its 332): held-out accuracy, median of {draws} draws (non-private logistic: {base:.3f}; "
          "always 'No': 0.672)\n")
    print("| eps | objective perturbation (pure) | diffprivlib LogisticRegression (pure) |")
    print("|---|---|---|")
    rng = np.random.default_rng(seed)
    r = default_radius(np.ones(3), 1.0, 3, np.ones(1), "logistic", n=int(tr.sum()), eps=1.0, stage="refit")
    for eps in eps_list:
        ours, theirs = [], []
        for _ in range(draws):
            coef = objective_perturbation(A[tr], y[tr], loss="logistic", eps=eps, row_bound=2.0, b_y=1.0,
                                          r=r, rng=rng).coef
            ours.append(np.mean(np.sign(A[~tr] @ coef) == y[~tr]))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m = _dp_logistic(epsilon=eps, data_norm=2.0, random_state=int(rng.integers(2 ** 31)))
                m.fit(X[tr], y[tr])
            theirs.append(m.score(X[~tr], y[~tr]))
        print(f"| {eps:g} | {np.median(ours):.3f} | {np.median(theirs):.3f} |", flush=True)


def fw_screen_top_r(X, y, true, s, eps, rng, k, share=0.5):
    """Exact P(top-R releases the truth) after a private Frank-Wolfe screen to k columns.

    The screen: ``frank_wolfe`` with T = k steps and eps * share, keeping the k largest
    |theta_j| (padded at random); then top-R on the kept columns with the rest of eps, as
    dp_best_subset(screen=...) runs it (the selection's r and lam from its own eps). Pure
    eps-DP in all (basic composition of the two stages). A proposal, measured here only.
    """
    from dpsubset.defaults import default_lam
    from dpsubset.losses import SquaredLoss
    from dpsubset.scores.least_squares import LeastSquaresScorer
    from dpsubset.privacy.sensitivity import score_sensitivity
    from dpsubset.search.exact import SubsetSearch, default_R
    from dpsubset.selection.base import require_closed, search_slack
    from dpsubset.studies.experiments import top_r_recovery
    n, p = X.shape
    pub = _Public(n, p)
    eps_screen, eps_sel = share * eps, (1 - share) * eps
    r = default_radius(pub.x_bounds, B_Y, s, (), n=n, eps=eps_sel)
    C, _, noise = frank_wolfe_plan(pub, s, r, eps_screen, dict(iterations=k, radius=None, delta=1.0 / n ** 2))
    theta = private_frank_wolfe(X, y, np.empty((n, 0)), C=C, iterations=k, scale=noise.scale, rng=rng)
    kept = support_of(theta, k, rng)
    local_true = {i for i, j in enumerate(kept.tolist()) if j in true}
    if len(local_true) < s:
        return 0.0
    lam = default_lam(n, eps_sel, "squared", stage="select", x_bounds=pub.x_bounds, s=s, forced_bounds=())
    sc = LeastSquaresScorer(X[:, kept], y, lam, r, np.zeros((n, 0)))
    Delta = score_sensitivity(np.full(k, B_X), B_Y, r, s, (), n) + 2.0 * search_slack(SquaredLoss(), B_Y)
    cands = SubsetSearch(sc, s).top_r(default_R(k, s))
    require_closed(cands.certificates)
    return float(top_r_recovery(cands, eps_sel, Delta, local_true)[0])


def screen_table(p, regimes, n_grid, trials, draws, k_values=(10, 15), seed=0):
    """Recovery of top-R after a Frank-Wolfe screen (the proposal), beside the peers' tables."""
    for regime in regimes:
        rho, snr, s = REGIMES[regime]
        print(f"\n### Proposal: a Frank-Wolfe screen to k columns (half of eps, T = k steps) before top-R, "
              f"p = {p}, {regime} (rho = {rho}, SNR = {snr:g}, s = {s}), eps = {EPS:g} in all (pure); exact "
              f"P(truth) of top-R averaged over {draws} screens on each of {trials} data sets\n")
        print("| method | " + " | ".join(f"n = {n}" for n in n_grid) + " | s/call |")
        print("|---" * (len(n_grid) + 2) + "|", flush=True)
        for k in k_values:
            row, secs = [], []
            for n in n_grid:
                vals = []
                for trial in range(trials):
                    X, y, true = make_regression(n, p, s, rho=rho, snr=snr,
                                                 random_state=np.random.default_rng([seed, n, trial, p]))
                    X, y = np.clip(X, -B_X, B_X), np.clip(y, -B_Y, B_Y)
                    rng = np.random.default_rng([seed, n, trial, p, 99])
                    t0 = time.perf_counter()
                    vals += [fw_screen_top_r(X, y, set(true.tolist()), s, EPS, rng, k) for _ in range(draws)]
                    secs.append((time.perf_counter() - t0) / draws)
                row.append(f"{np.mean(vals):.2f}")
            print(f"| frank_wolfe screen (k = {k}) + top_r | " + " | ".join(row) + f" | {np.median(secs):.2f} |",
                  flush=True)


def defaults_grid(trials=3, draws=10, seed=5):
    """How the peers' defaults were chosen: recovery on the paper's model (p = 100, s = 5, eps = 1)
    for a grid of iterations T and (peeling) step sizes, at rho = 0.1 and 0.5, n = 3000 and 6000."""
    grid = [("peeling", T, st) for T in (2, 3, 5, 10) for st in (0.25, 0.5, 1.0)]
    grid += [("frank_wolfe", T, None) for T in (5, 7, 10, 20)]
    cells = [(rho, n) for rho in (0.1, 0.5) for n in (3000, 6000)]
    print(f"\n### Defaults of the peers: exact recovery, p = 100, s = 5, SNR = 5, eps = 1, delta = 1/n^2; "
          f"{trials} data sets x {draws} releases per cell\n")
    print("| method | T | step (1/b_max^2) | " + " | ".join(f"rho = {r}, n = {n}" for r, n in cells) + " |")
    print("|---" * (3 + len(cells)) + "|", flush=True)
    data = {}
    for rho, n in cells:
        for trial in range(trials):
            X, y, true = make_regression(n, 100, 5, rho=rho, snr=5.0,
                                         random_state=np.random.default_rng([seed, n, trial]))
            data[rho, n, trial] = (np.clip(X, -B_X, B_X), np.clip(y, -B_Y, B_Y), set(true.tolist()))
    for method, T, step in grid:
        row = []
        for rho, n in cells:
            pub, hits = _Public(n, 100), []
            r = default_radius(pub.x_bounds, B_Y, 5, (), n=n, eps=EPS)
            rng = np.random.default_rng([seed, n, T])
            for trial in range(trials):
                X, y, true = data[rho, n, trial]
                F = np.empty((n, 0))
                for _ in range(draws):
                    if method == "peeling":
                        eta, _, noise = peeling_plan(pub, 5, r, EPS, dict(step=step, iterations=T, delta=1 / n ** 2))
                        S, _ = noisy_iht(X, y, F, s=5, r=r, step=eta, iterations=T, scale=noise.scale, rng=rng)
                    else:
                        C, _, noise = frank_wolfe_plan(pub, 5, r, EPS, dict(iterations=T, radius=None,
                                                                          delta=1 / n ** 2))
                        S = support_of(private_frank_wolfe(X, y, F, C=C, iterations=T, scale=noise.scale,
                                                           rng=rng), 5, rng)
                    hits.append(set(S.tolist()) == true)
            row.append(f"{np.mean(hits):.2f}")
        print(f"| {method} | {T} | {'' if step is None else step} | " + " | ".join(row) + " |", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("part", nargs="?", default="all",
                    choices=["all", "recovery", "real", "refit", "defaults", "screen"])
    ap.add_argument("--p", nargs="*", type=int, default=None)
    ap.add_argument("--regimes", nargs="*", default=list(REGIMES), choices=list(REGIMES))
    ap.add_argument("--n", nargs="*", type=int, default=None, help="default: N_GRID[p]")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--draws", type=int, default=10)
    ap.add_argument("--data", nargs="*", default=None)
    ap.add_argument("--exact-methods", nargs="*", default=None,
                    help="the package's methods in the recovery runs (default: top_r and mistakes at p = 100, "
                         "top_r alone above: mistakes' exact law takes minutes per data set at p = 1000)")
    ap.add_argument("--peeling-iterations", type=int, default=DEFAULT_ITERATIONS,
                    help="peeling's T in the recovery runs (default: the method's default)")
    args = ap.parse_args(argv)
    PEELING_T["T"] = args.peeling_iterations
    t0 = time.perf_counter()
    if args.part in ("all", "recovery"):
        check_fast_path()
        for p in args.p or [100, 1000, 10000]:
            big = p >= 10_000
            recovery(p, ["paper"] if big and args.p is None else args.regimes, args.n or N_GRID[p],
                     1 if big and args.p is None else args.trials, 3 if big and args.p is None else args.draws,
                     exact_methods=tuple(args.exact_methods or (["top_r", "mistakes"] if p < 1000 else ["top_r"])))
    if args.part == "defaults":
        defaults_grid()
    if args.part == "screen":
        for p in args.p or [1000]:
            screen_table(p, args.regimes, args.n or [2000, 2500, 3000, 3500], args.trials, args.draws)
    names = args.data or real_data_names()
    if args.part in ("all", "real"):
        real(names, [2, 3], args.draws, lambda n: [10.0, 500.0 if n < 2000 else 50.0])
    if args.part in ("all", "refit"):
        refit(names, 3, [1.0, 10.0], args.draws)
        refit_released(names, 3, [1.0, 10.0], args.draws)
        logistic_refit([1.0, 10.0, 100.0], args.draws)
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
