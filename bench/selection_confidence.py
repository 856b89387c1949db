"""The exact log-odds that top-R releases the best-scoring support, on real data.

For docs/methods/inference.md, section 3: what the selection confidence estimates, and
why its verdict is seldom decisive on real data. Each row runs one release
(``inference=True``, seeded) and reads, inside the call, the selection's exact scores
(NOT private: this is a measurement of the mechanism, printed for the docs only), then
prints the log-odds L of releasing the best support, P(S_1) = 1 / (1 + exp(-L)), the
second support's gap relative to the best's score, and the released confidence bounds.

    python bench/selection_confidence.py
    python bench/selection_confidence.py --data wage pima --eps 20 200 --seed 1
"""
from __future__ import annotations

import argparse
import warnings

import numpy as np

import dpsubset as dps
import dpsubset.inference.release as release
from dpsubset.inference.confidence import best_support_log_odds
from dpsubset.studies.real_data import load_real_data

#: (data set, eps, s) of the docs' table.
CELLS = [("wage", 20, 3), ("wage", 200, 3), ("pima", 500, 3), ("diamonds", 50, 3), ("boston", 500, 3),
         ("anes96", 500, 3), ("star98", 50, 3)]


def run(name, eps, s, seed):
    seen = {}
    released = release.selection_confidence

    def spy(scores, **kw):
        scores = np.sort(np.asarray(scores, dtype=float))
        seen["L"] = best_support_log_odds(scores, eps_mech=kw["eps_mech"], Delta=kw["Delta"], p=kw["p"],
                                          s=kw["s"], outside_as_last=kw["outside_as_last"])[0]
        seen["eps_mech"], seen["rel_gap"] = kw["eps_mech"], (scores[1] - scores[0]) / abs(scores[0])
        return released(scores, **kw)

    release.selection_confidence = spy
    try:
        d = load_real_data(name)
        res = dps.dp_best_subset(d.formula, d.data, eps=eps, s=s, bounds=d.bounds, inference=True,
                                 random_state=seed)
    finally:
        release.selection_confidence = released
    conf = res.selection_confidence
    return (f"| {name} | {eps:g} | {seen['eps_mech']:g} | {seen['L']:.1f} | {1 / (1 + np.exp(-seen['L'])):.3g} "
            f"| {100 * seen['rel_gap']:.2g} % | [{conf.prob_lower:.2g}, {conf.prob_upper:.2g}] |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="+", default=None)
    ap.add_argument("--eps", type=float, nargs="+", default=None)
    ap.add_argument("--s", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    cells = CELLS if args.data is None else [(d, e, args.s) for d in args.data for e in (args.eps or [20.0])]
    warnings.simplefilter("ignore")
    print("| data | eps | eps_sel | true L | true P(S_1) | second's gap, relative | released bounds |")
    print("|---|---|---|---|---|---|---|")
    for name, eps, s in cells:
        print(run(name, eps, s, args.seed), flush=True)


if __name__ == "__main__":
    main()
