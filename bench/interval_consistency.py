"""Does every coefficient's row hold together? Seeded releases on a real data set.

For each release with ``inference=True`` and each released coefficient, at alpha = 0.05
and 0.10: is the estimate inside its ``1 - alpha`` interval, and is ``p < alpha`` exactly
when that interval leaves out 0? Prints each violation and the counts
(docs/methods/inference.md, "One construction for every number").

    PYTHONPATH=$PWD python bench/interval_consistency.py --data wage --releases 40 --eps 4 --s 3
"""
import argparse
import time
import warnings

import dpsubset as dps
from dpsubset.studies.real_data import load_real_data


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="wage")
    ap.add_argument("--releases", type=int, default=40)
    ap.add_argument("--eps", type=float, default=4.0)
    ap.add_argument("--s", type=int, default=3)
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    ds = load_real_data(args.data)
    outside = disagree = pairs = on_sphere = 0
    per_alpha = {0.05: [0, 0], 0.10: [0, 0]}
    t0 = time.time()
    for seed in range(args.releases):
        res = dps.dp_best_subset(ds.formula, ds.data, eps=args.eps, s=args.s, bounds=ds.bounds,
                                 inference=True, random_state=seed)
        inf = res.inference
        on_sphere += inf.on_sphere
        p = inf.pvalues
        for alpha in per_alpha:
            ci = inf.conf_int(alpha)
            for j, name in enumerate(inf.names):
                lo, hi, est = ci.loc[name, 0], ci.loc[name, 1], inf.estimate[j]
                pairs += 1
                if not lo <= est <= hi:
                    outside += 1
                    per_alpha[alpha][0] += 1
                    print(f"seed {seed} alpha {alpha}: {name} estimate {est:.4g} outside [{lo:.4g}, {hi:.4g}]")
                if (not lo <= 0.0 <= hi) != (p[name] < alpha):
                    disagree += 1
                    per_alpha[alpha][1] += 1
                    print(f"seed {seed} alpha {alpha}: {name} [{lo:.4g}, {hi:.4g}] with p = {p[name]:.4g}")
        print(f"release {seed + 1}/{args.releases} done, {time.time() - t0:.0f} s", flush=True)
    print(f"{args.data} (n = {len(ds.data)}), eps = {args.eps:g}, s = {args.s}: {args.releases} releases, "
          f"{on_sphere} on the refit's sphere; {pairs} (coefficient, alpha) pairs")
    for alpha, (o, d) in per_alpha.items():
        print(f"  alpha = {alpha:.2f}: estimate outside its interval {o}, p < alpha disagreeing with the interval {d}")
    print(f"  total: {outside + disagree} violations")


if __name__ == "__main__":
    main()
