"""Coverage of the private intervals on real designs: the real columns, a known response model.

bench/coverage.py draws its columns independently and uniformly; real columns are
correlated, skewed and bounded by a codebook. Here the columns are a real data set's
(``dpsubset.studies.real_data``, clipped and mapped as a release maps them) and only the
response is simulated, from the model a statistician would fit without privacy: the
non-private best subset of size s, its least-squares coefficients and residual standard
deviation (mapped units), normal errors, the response clipped to its public bound. With
the design fixed, the target of a released slope is known for every released support:
the coefficient of the least-squares projection of E[clipped response] on the released
columns and the intercept (the clipped normal's mean in closed form), mapped back to the
user's units with the release's own affine map.

Each cell releases its simulated data sets with ``inference=True`` (the default
``eps_inference``, or ``--share`` times eps) and prints: the share of releases of the true
support, the issue's criterion (all slopes with ``split=True``, the true support's slopes
without), the coverage over all slopes, the median width of the slopes' 95 % intervals,
the slopes' root-mean-square error (mapped units), the norm of the true coefficients
(mapped, the intercept included) over the refit's radius, the share of releases whose
coefficients lie on the refit's sphere, the coverage of those releases and of the
others, and the share of the slopes' intervals with one end open and with both ends open
(a release on the sphere opens them on the side the truth may lie, docs/methods/inference.md).

    python bench/coverage_real.py --reps 100
    python bench/coverage_real.py --cells pima:4:conditional --reps 50 --share 0.2 0.6
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
import dpsubset as dps
from dpsubset.design.build import build_design
from dpsubset.inference.moments import _clipped_moments  # the clipped normal's mean, closed form
from dpsubset.nonprivate import best_subset_nonprivate
from dpsubset.studies.real_data import load_real_data

#: (data set, eps, mode): real designs from a few hundred to a few thousand rows, at a
#: budget where the release is useful to noise-filled
DEFAULT_CELLS = [f"{name}:{eps}:{mode}" for name in ("pima", "anes96", "boston", "credit", "star98", "wage")
                 for eps in (4, 16) for mode in ("conditional", "split")]


class RealDesignModel:
    """The fixed real design, the true model on it, and the target of any released support."""

    def __init__(self, name, s):
        self.ds = load_real_data(name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.design = build_design(self.ds.formula, self.ds.data, self.ds.bounds)
            best = best_subset_nonprivate(self.ds.formula, self.ds.data, s, bounds=self.ds.bounds)
        d = self.design
        self.names = list(d.spec.candidate_names)
        self.true = sorted(best.support, key=self.names.index)
        A = self._columns(self.true)
        beta, *_ = np.linalg.lstsq(A, d.y, rcond=None)
        resid = d.y - A @ beta
        self.sigma = float(np.sqrt(resid @ resid / (len(resid) - A.shape[1])))
        self.mu = A @ beta
        self.mean_y = _clipped_moments(self.mu, self.sigma, d.b_y)[0]  # E[clipped response], mapped
        spec = d.spec
        self.centre_y, self.half_y = spec.column_maps[spec.response_name]

    def _columns(self, support):
        d = self.design
        idx = [self.names.index(c) for c in support]
        return np.hstack([d.forced, d.X[:, idx]])

    def draw(self, rng):
        """A data frame with the real columns and a simulated response (user units)."""
        y = np.clip(self.mu + self.sigma * rng.standard_normal(len(self.mu)), -self.design.b_y,
                    self.design.b_y)
        df = self.ds.data.copy()
        df[self.design.spec.response_name] = self.centre_y + self.half_y * y
        return df

    def target(self, support):
        """User-unit coefficients of the projection of E[clipped response] on the support, and
        the norm of the mapped ones (the intercept included)."""
        coef, *_ = np.linalg.lstsq(self._columns(support), self.mean_y, rcond=None)
        names = list(self.design.spec.forced_names) + list(support)
        return self.design.spec.to_original_scale(coef, names)[list(support)], float(np.linalg.norm(coef))


def run_cell(model, *, eps, split, s, reps, seed0, share=None, r_refit=None):
    rows = []
    for rep in range(reps):
        df = model.draw(np.random.default_rng(seed0 + rep))
        res = dps.dp_best_subset(model.ds.formula, df, eps=eps, s=s, bounds=model.ds.bounds, inference=True,
                                 budget=dps.Budget(inference=None if share is None else share * eps), refit=dps.Refit(split=split),
                                 ball=dps.Ball(r_refit=r_refit), random_state=seed0 + rep, verbose=False)
        support = list(res.support)
        target, norm = model.target(support)
        ci = res.conf_int().loc[support]
        on_sphere = bool(np.linalg.norm(res.inference.estimate_mapped) >= res.r_refit * (1 - 1e-6))
        for c in support:
            scale = model.half_y / model.design.spec.column_maps[c][1]
            lo, hi = ci.loc[c, 0], ci.loc[c, 1]
            rows.append(dict(rep=rep, slot=c, right=sorted(support) == sorted(model.true),
                             covered=bool(lo <= target[c] <= hi),
                             one_open=bool(np.isinf(lo) != np.isinf(hi)), both_open=bool(np.isinf(lo) and np.isinf(hi)),
                             width=float(ci.loc[c, 1] - ci.loc[c, 0]),
                             err_mapped=float((res.params[c] - target[c]) / scale),
                             truth_over_r=norm / res.r_refit, on_sphere=on_sphere))
    return pd.DataFrame(rows)


def summarise(g, split):
    crit = g if split else g[g["right"]]
    cov = lambda d: float(d["covered"].mean()) if len(d) else float("nan")
    return dict(true_support=g.groupby("rep")["right"].first().mean(), criterion=cov(crit),
                se=np.sqrt(0.95 * 0.05 / max(len(crit), 1)), coverage_all=cov(g),
                median_width=g["width"].median(), rmse_mapped=float(np.sqrt((g["err_mapped"] ** 2).mean())),
                truth_over_r=float(g["truth_over_r"].median()),
                on_sphere=g.groupby("rep")["on_sphere"].first().mean(),
                coverage_sphere=cov(g[g["on_sphere"]]), coverage_inside=cov(g[~g["on_sphere"]]),
                one_open=float(g["one_open"].mean()), both_open=float(g["both_open"].mean()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", nargs="+", default=DEFAULT_CELLS, help="data:eps:mode")
    ap.add_argument("--s", type=int, default=3)
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--seed", type=int, default=30000)
    ap.add_argument("--share", type=float, nargs="+", default=[None],
                    help="eps_inference / eps (default: the package's default)")
    ap.add_argument("--r-refit", type=float, nargs="+", default=[None],
                    help="the refit's radius in mapped units (default: the package's default)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")  # seeded releases and LowUtilityWarning, every call
    print("| data | n | eps | mode | share | r_refit | true support | criterion | s.e. | coverage (all) | median width "
          "| RMSE (mapped) | truth / r | on the sphere | coverage there | elsewhere | one end open | both open |")
    print("|---" * 18 + "|")
    t0 = time.time()
    models = {}
    for cell in args.cells:
        name, eps, mode = cell.split(":")
        model = models.setdefault(name, RealDesignModel(name, args.s))
        for share, r_refit in [(sh, rr) for sh in args.share for rr in args.r_refit]:
            split = mode == "split"
            r = summarise(run_cell(model, eps=float(eps), split=split, s=args.s, reps=args.reps,
                                   seed0=args.seed, share=share, r_refit=r_refit), split)
            print(f"| {name} | {model.ds.n} | {float(eps):g} | {mode} | {'default' if share is None else share} "
                  f"| {'default' if r_refit is None else r_refit} "
                  f"| {r['true_support']:.2f} | {r['criterion']:.3f} | {r['se']:.3f} | {r['coverage_all']:.3f} "
                  f"| {r['median_width']:.3g} | {r['rmse_mapped']:.3g} | {r['truth_over_r']:.2f} "
                  f"| {r['on_sphere']:.2f} | {r['coverage_sphere']:.3f} | {r['coverage_inside']:.3f} "
                  f"| {r['one_open']:.2f} | {r['both_open']:.2f} |",
                  flush=True)
    print(f"\n{args.reps} simulated responses per cell, s = {args.s}, seeds {args.seed} on; "
          f"{time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
