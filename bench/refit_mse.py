"""Test-set MSE of the DP refit against non-private fits on the same support (Hitters).

    python bench/refit_mse.py                 # eps in {1, 4, 16}, 50 repetitions each
    python bench/refit_mse.py --reps 10 --eps 4

Setting: Hitters (players with a salary, Player column dropped, n = 263), public
bounds from ``dps.hitters_bounds()``, one fixed 70/30 train/test split (seed
``--split-seed``). Every repetition runs ``dp_best_subset("Salary ~ .", train,
eps=eps, s=5)`` with the defaults (top-R, eps split half/half between selection and
refit, r = 1, lam = 0.1 n) and a new seed, and scores on the test set, on the
support *that repetition released*:

* ``DP refit``: ``res.predict(test)``, the released fit (objective perturbation at
  eps / 2);
* ``ridge (same reg.)``: the refit's own objective without the noise: the same
  clipped and mapped training data, the same ball ``||theta|| <= r`` and the same
  ridge ``Delta = 2 lambda / eps_refit`` (``objective_perturbation`` with its
  ``_force_zero_noise`` test hook), mapped back the same way. NON-PRIVATE; it
  isolates what the noise costs;
* ``OLS``: plain least squares on the same support (clipped data; the Hitters data
  lie inside the public bounds, so this is OLS on the raw data). NON-PRIVATE;
* ``intercept only``: the training mean of Salary. NON-PRIVATE.

Ratios are of the mean and of the median test MSE (DP refit / ridge, same reg.).
MSE is in (thousands of dollars)^2.

A second table fixes the support to the NON-PRIVATE best subset of size s on the
training data (exhaustive OLS search) and runs only the refit, exactly as
``dp_best_subset`` calls it (``objective_perturbation`` at eps_refit = eps / 2,
same r, bounds and row bound), with a new seed per repetition: it isolates the
refit's noise from the selection's.
"""
from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np

import dpsubset as dps
from dpsubset import api
from dpsubset.design.build import build_design
from dpsubset.privacy.leaks import PrivacyLeakWarning
from dpsubset.refit.objective import objective_perturbation


def split(frame, frac, seed):
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(frame))
    k = int(round(frac * len(frame)))
    return frame.iloc[np.sort(idx[:k])], frame.iloc[np.sort(idx[k:])]


def non_private_fits(design, support, r, eps_refit, test):
    """Zero-noise refit (same Delta and ball) and OLS on the support; test predictions."""
    idx = [design.spec.candidate_names.index(c) for c in support]
    cols = design.spec.forced_names + list(support)
    A = np.hstack([design.forced, design.X[:, idx]])
    row_bound = math.sqrt(float(np.sum(design.forced_bounds ** 2))
                          + float(np.sum(design.x_bounds[idx] ** 2)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        fit = objective_perturbation(A, design.y, loss="squared", eps=eps_refit, row_bound=row_bound,
                                     b_y=design.b_y, r=r, rng=np.random.default_rng(0),
                                     _force_zero_noise=True)
    ols = np.linalg.lstsq(A, design.y, rcond=None)[0]
    M = design.spec.transform_new(test)
    names = design.spec.forced_names + design.spec.candidate_names
    Mt = M[:, [names.index(c) for c in cols]]
    c_y, h_y = design.spec.column_maps[design.spec.response_name]
    return c_y + h_y * (Mt @ fit.coef), c_y + h_y * (Mt @ ols)


def best_subset_ols(design, s):
    """Non-private best subset of size s by training RSS (exhaustive)."""
    from itertools import combinations

    best, best_rss = None, np.inf
    for S in combinations(range(design.X.shape[1]), s):
        A = np.hstack([design.forced, design.X[:, S]])
        coef = np.linalg.lstsq(A, design.y, rcond=None)[0]
        rss = float(np.sum((design.y - A @ coef) ** 2))
        if rss < best_rss:
            best, best_rss = S, rss
    return [design.spec.candidate_names[j] for j in best]


def dp_refit_predict(design, support, r, eps_refit, test, rng):
    """The API's refit (objective_perturbation, same arguments) on a given support."""
    idx = [design.spec.candidate_names.index(c) for c in support]
    cols = design.spec.forced_names + list(support)
    A = np.hstack([design.forced, design.X[:, idx]])
    row_bound = math.sqrt(float(np.sum(design.forced_bounds ** 2))
                          + float(np.sum(design.x_bounds[idx] ** 2)))
    fit = objective_perturbation(A, design.y, loss="squared", eps=eps_refit, row_bound=row_bound,
                                 b_y=design.b_y, r=r, rng=rng)
    M = design.spec.transform_new(test)
    names = design.spec.forced_names + design.spec.candidate_names
    Mt = M[:, [names.index(c) for c in cols]]
    c_y, h_y = design.spec.column_maps[design.spec.response_name]
    return c_y + h_y * (Mt @ fit.coef)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eps", type=float, nargs="+", default=[1.0, 4.0, 16.0])
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--s", type=int, default=5)
    ap.add_argument("--train-frac", type=float, default=0.7)
    ap.add_argument("--split-seed", type=int, default=0)
    args = ap.parse_args()

    hitters = dps.load_hitters().dropna(subset=["Salary"]).drop(columns=["Player"])
    xb = dps.hitters_bounds()
    yb = xb.pop("Salary")
    bounds = dps.Bounds(x=xb, y=yb)
    train, test = split(hitters, args.train_frac, args.split_seed)
    y_test = test["Salary"].to_numpy(dtype=float)
    mse_null = float(np.mean((y_test - train["Salary"].mean()) ** 2))
    design = build_design("Salary ~ .", train, bounds, None, stacklevel=2)  # for the non-private fits
    print(f"Hitters: n = {len(hitters)}, train {len(train)} / test {len(test)} (split seed "
          f"{args.split_seed}), p = {design.X.shape[1]} candidates, s = {args.s}, "
          f"{args.reps} repetitions per eps; test-set MSE in (thousands of $)^2")
    print("DP refit: dp_best_subset defaults (top-R, half of eps to the refit, r = 1, lam = 0.1 n); "
          "non-private fits on the support each repetition released")
    header = (f"{'eps':>5} {'eps_refit':>9} | {'DP refit mean':>13} {'median':>9} | "
              f"{'ridge(same reg) mean':>20} {'median':>9} | {'OLS mean':>9} {'median':>9} | "
              f"{'intercept':>9} | {'ratio mean':>10} {'ratio median':>12} | {'time':>6}")
    print(header)
    print("-" * len(header))
    supports = {}
    for eps in args.eps:
        t0 = time.perf_counter()
        dp, ridge, ols = [], [], []
        for rep in range(args.reps):
            res = dps.dp_best_subset("Salary ~ .", train, eps=eps, s=args.s, bounds=bounds,
                                     random_state=10_000 * rep + int(eps * 100))
            dp.append(float(np.mean((res.predict(test).to_numpy() - y_test) ** 2)))
            pr, po = non_private_fits(design, res.support, res.r, res.eps_refit, test)
            ridge.append(float(np.mean((pr - y_test) ** 2)))
            ols.append(float(np.mean((po - y_test) ** 2)))
            key = tuple(res.support)
            supports.setdefault(eps, {}).setdefault(key, 0)
            supports[eps][key] += 1
        dp, ridge, ols = map(np.array, (dp, ridge, ols))
        dt = time.perf_counter() - t0
        print(f"{eps:>5g} {res.eps_refit:>9g} | {dp.mean():>13.4g} {np.median(dp):>9.4g} | "
              f"{ridge.mean():>20.4g} {np.median(ridge):>9.4g} | {ols.mean():>9.4g} "
              f"{np.median(ols):>9.4g} | {mse_null:>9.4g} | {dp.mean() / ridge.mean():>10.3g} "
              f"{np.median(dp) / np.median(ridge):>12.3g} | {dt:>5.0f}s")

    fixed = best_subset_ols(design, args.s)
    r = 1.0
    print(f"\nFixed support (non-private best subset of size {args.s} on the training data, by OLS): "
          f"{fixed}; refit only, at eps_refit = eps / 2")
    header = (f"{'eps':>5} {'eps_refit':>9} | {'DP refit mean':>13} {'median':>9} | "
              f"{'ridge(same reg)':>15} | {'OLS':>9} | {'intercept':>9} | {'ratio mean':>10} "
              f"{'ratio median':>12}")
    print(header)
    print("-" * len(header))
    for eps in args.eps:
        eps_refit = eps * api.DEFAULT_REFIT_SHARE
        dp = np.array([float(np.mean((dp_refit_predict(design, fixed, r, eps_refit, test,
                                                         np.random.default_rng(rep)) - y_test) ** 2))
                       for rep in range(args.reps)])
        pr, po = non_private_fits(design, fixed, r, eps_refit, test)
        mr, mo = float(np.mean((pr - y_test) ** 2)), float(np.mean((po - y_test) ** 2))
        print(f"{eps:>5g} {eps_refit:>9g} | {dp.mean():>13.4g} {np.median(dp):>9.4g} | {mr:>15.4g} | "
              f"{mo:>9.4g} | {mse_null:>9.4g} | {dp.mean() / mr:>10.3g} {np.median(dp) / mr:>12.3g}")
    print()
    for eps, counts in supports.items():
        top = sorted(counts.items(), key=lambda kv: -kv[1])[:3]
        shown = "; ".join(f"{list(k)} x{v}" for k, v in top)
        print(f"eps = {eps:g}: {len(counts)} distinct supports released; most frequent: {shown}")


if __name__ == "__main__":
    main()
