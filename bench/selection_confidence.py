"""How often the selection confidence's verdict says "can be trusted", against the exact probability.

For docs/benchmarks/selection-confidence.md. Each cell (a real data set or a simulated one,
an eps) runs one release (``inference=True``, seeded) and reads, inside the call, top-R's
exact list of scores (NOT private: a measurement of the mechanism for the docs only). From
it, with top-R's exact law, it computes

* P(S_1): the probability that top-R releases the best-scoring support;
* the exact probability that the verdict says "can be trusted": now (the free gap at least
  the threshold the noisy log-odds sets, :func:`gap_rule`: ``sum_k P(step k) sum_S
  sigma(L_S - t_k)`` over every support), with the free gap alone (at least ln 40, the
  first version of issue 37) and before issue 37 (the noisy log-odds' 95 % lower bound at
  least 0.9: ``P(L + Laplace(b) - b ln 20 >= logit 0.9)``);
* with ``--releases k``, the verdicts of k seeded releases as a check of the exact rate.

It then pools the cells where P(S_1) >= 0.9 and where P(S_1) < 0.5 (the issue's criteria:
at least 70 % "trusted" in the first, at most 5 % in the second).

    PYTHONPATH=$PWD python bench/selection_confidence.py
    PYTHONPATH=$PWD python bench/selection_confidence.py --data wage pima --eps 4 50 500 --releases 20
"""
from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np
from scipy.special import expit, logit

import dpsubset as dps
import dpsubset.inference.bootstrap as bootstrap
import dpsubset.inference.release as release
from dpsubset.inference.confidence import GapRule, best_support_log_odds, trusted_probability
from dpsubset.studies.real_data import load_real_data
from dpsubset.studies.simulate import make_regression

DATA = ("wage", "pima", "boston", "star98", "anes96", "credit", "saratoga")
EPS = (4.0, 20.0, 50.0, 200.0, 500.0, 2000.0)
#: The simulated grid: (n, p) with s = 5 true columns (the paper's generator, SNR 5, rho 0.1).
GRID = ((500, 20), (2000, 20), (2000, 50), (10000, 20))
GRID_EPS = (1.0, 4.0, 8.0, 16.0, 32.0, 64.0)


def _problem(name):
    if name.startswith("sim"):
        _, n, p = name.split("-")
        df, _ = make_regression(int(n), int(p), s=5, random_state=7, as_frame=True)
        # the generator's columns are standard normal, y about N(0, 1.2): public boxes of 3 and 4 sd
        return "y ~ .", df, (3.0, 4.0), 5
    d = load_real_data(name)
    return d.formula, d.data, d.bounds, 3


def run(name, eps, seed, releases):
    formula, data, bounds, s = _problem(name)
    seen = {}
    released = release.selection_confidence

    def spy(scores, **kw):
        scores = np.sort(np.asarray(scores, dtype=float))
        seen.update(scores=scores, **{k: kw[k] for k in ("eps_mech", "Delta", "p", "s", "eps")})
        out = released(scores, **kw)
        seen.setdefault("verdicts", []).append(out.statement.startswith("can be trusted"))
        return out

    release.selection_confidence = spy
    try:
        for k in range(max(1, releases)):
            dps.dp_best_subset(formula, data, eps=eps, s=s, bounds=bounds, inference=True,
                               random_state=seed + k)
    finally:
        release.selection_confidence = released
    kw = dict(eps_mech=seen["eps_mech"], Delta=seen["Delta"], p=seen["p"], s=seen["s"])
    L = best_support_log_odds(seen["scores"], **kw)[0]
    now = trusted_probability(seen["scores"], eps=seen["eps"], **kw)
    b = seen["eps_mech"] / seen["eps"]
    gap_alone = trusted_probability(seen["scores"], rule=GapRule(np.array([]), np.array([math.log(40.0)]), 0.0, b),
                                    **kw)
    # before: the lower bound of L + Laplace(b), b = eps_mech / eps_c, at least logit(0.9)
    t = logit(0.9) + b * math.log(20.0) - L
    before = 0.5 * math.exp(-t / b) if t >= 0 else 1.0 - 0.5 * math.exp(t / b)
    seen_rate = float(np.mean(seen["verdicts"])) if releases else float("nan")
    return dict(name=name, eps=eps, eps_sel=seen["eps_mech"], L=L, P=float(expit(L)), now=now,
                gap=gap_alone, before=before, seen=seen_rate, releases=releases)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="+", default=None)
    ap.add_argument("--eps", type=float, nargs="+", default=None)
    ap.add_argument("--grid", action="store_true", help="the simulated grid only")
    ap.add_argument("--releases", type=int, default=0, help="seeded releases per cell to check the rate")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    bootstrap.DEFAULT_DRAWS = 20  # the intervals are not measured here: a cheap bootstrap
    cells = [] if args.grid else [(d, e) for d in (args.data or DATA) for e in (args.eps or EPS)]
    if args.data is None:
        cells += [(f"sim-{n}-{p}", e) for n, p in GRID for e in GRID_EPS]
    print("| data | eps | eps_sel | L | P(S_1) | P(trusted), now | free gap alone | before | seen now |")
    print("|---|---|---|---|---|---|---|---|---|")
    rows, t0 = [], time.time()
    for name, eps in cells:
        r = run(name, eps, args.seed, args.releases)
        rows.append(r)
        seen = "" if not args.releases else f"{r['seen']:.2f} of {r['releases']}"
        print(f"| {name} | {eps:g} | {r['eps_sel']:g} | {r['L']:.2f} | {r['P']:.3g} | {r['now']:.3f} | "
              f"{r['gap']:.3f} | {r['before']:.3g} | {seen} |", flush=True)
    groups = (("real data", lambda r: not r["name"].startswith("sim")), ("grid", lambda r: r["name"].startswith("sim")),
              ("all", lambda r: True))
    for label, keep in (("P(S_1) >= 0.9", lambda r: r["P"] >= 0.9), ("P(S_1) < 0.5", lambda r: r["P"] < 0.5),
                        ("0.5 <= P(S_1) < 0.9", lambda r: 0.5 <= r["P"] < 0.9)):
        for group, member in groups:
            sel = [r for r in rows if keep(r) and member(r)]
            if sel:
                seen = (f"; seen {np.mean([r['seen'] for r in sel]):.3f}" if args.releases else "")
                print(f"{label}, {group}: {len(sel)} cells; mean P(trusted) now {np.mean([r['now'] for r in sel]):.3f} "
                      f"(range {min(r['now'] for r in sel):.3f}-{max(r['now'] for r in sel):.3f}, largest "
                      f"{max(r['now'] for r in sel):.3f}), free gap alone {np.mean([r['gap'] for r in sel]):.3f}, "
                      f"before {np.mean([r['before'] for r in sel]):.3g}{seen}")
    print(f"({time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
