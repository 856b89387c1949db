"""The paper's recovery comparison (Section 5 / Figure 1 of Prastakos et al. 2025), on the paper's model.

Setting: s = 5, SNR = 5, rho = 0.1, eps = 1 for selection (no refit), public bounds
b_x = b_y = 0.5, the paper's model y = X beta + noise with NO intercept ("y ~ 0 + .").
Each ``--settings`` entry runs every method with one choice of radius, ridge and
intercept:

    paper               r = 1.1, lam = 120, no intercept (the paper's values)
    defaults            the package defaults (r = b_y / sqrt(B_s) = 0.447, lam = 1), no intercept
    defaults_intercept  the package defaults with an intercept ("y ~ .": r = 0.333, larger Delta)

Per n, ``--trials`` data sets; per method and data set either 50 private releases
(the fraction equal to the true support), or with ``--exact`` the exact probability
that top_r / mistakes release the true support, from their own log-weights
(dpsubset.studies.experiments.top_r_recovery and friends; other methods are still sampled).
``--screen K`` adds "<method>+screen" rows: a DP-SIS screen to K columns with the package's default
share of eps, then the method on those columns (dp_best_subset(screen=...)).
Prints, per setting, method and n, the mean recovery (with its standard error over
trials), the mean F1 and the mean seconds per trial (candidates + all draws), then the
smallest n of the grid reaching 50 % and 90 %. A data set whose exact search hits
``--time-limit`` is recorded as skipped (say so when reporting). Writes the tidy frame
to bench/out/.

    python bench/study.py --p 100 --exact --settings paper defaults defaults_intercept \\
        --methods top_r mistakes --assume --trials 5 --n 1000 1500 2000 2500 3000 4000 5000 6000
    python bench/study.py --p 1000 --exact --settings paper defaults defaults_intercept \\
        --methods top_r --trials 3 --n 2000 3000 4000 6000 8000 12000
    python bench/study.py --p 10000 --exact --settings defaults --methods top_r --trials 2 \\
        --n 3000 4000 6000 --time-limit 300

(the tables are in docs/benchmarks/paper-comparison.md)
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import pandas as pd

from dpsubset import Ball, Method, Search
from dpsubset.studies.experiments import plot_recovery, recovery_study, recovery_table
from dpsubset.studies.simulate import Simulation

DEFAULT_METHODS = ["top_r", "mistakes", "samp_agg", "dp_sis", "mcmc"]
#: name -> (r, lam, intercept); None = the package default.
SETTINGS = {
    "paper": (1.1, 120.0, False),
    "defaults": (None, None, False),
    "defaults_intercept": (None, None, True),
}


def labelled(methods, options):
    """{label: Method} from "label=name" specs and {label: options} (screen included)."""
    out = {}
    for m in methods:
        label, _, name = m.partition("=")
        out[label] = Method(name or label, **options.get(label, {}))
    return out


def run(args, setting, methods, options):
    r, lam, intercept = SETTINGS[setting]
    if args.r is not None:
        r = args.r
    if args.lam is not None:
        lam = args.lam
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        frame = recovery_study(labelled(methods, options), args.n, p=args.p, s=args.s, trials=args.trials,
                               draws=args.draws, eps=args.eps, ball=Ball(r=r, lam=lam),
                               intercept=intercept, exact=args.exact,
                               model=Simulation(rho=args.rho, snr=args.snr, noise=args.noise),
                               bounds=(args.b, args.b), search=Search(time_limit=args.time_limit),
                               n_jobs=args.jobs, random_state=args.seed, progress=sys.stderr.isatty())
    frame.insert(0, "setting", setting)
    return frame


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--p", type=int, default=100)
    ap.add_argument("--s", type=int, default=5)
    ap.add_argument("--n", type=int, nargs="+", default=[1000, 2000, 4000, 8000])
    ap.add_argument("--methods", nargs="+", default=DEFAULT_METHODS)
    ap.add_argument("--settings", nargs="+", default=["paper", "defaults", "defaults_intercept"],
                    choices=sorted(SETTINGS))
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--draws", type=int, default=50,
                    help="releases per data set (with --exact: private screens per data set "
                         "for the screened methods; unused otherwise)")
    ap.add_argument("--exact", action="store_true",
                    help="exact release probabilities for top_r / mistakes instead of draws")
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--rho", type=float, default=0.1)
    ap.add_argument("--snr", type=float, default=5.0)
    ap.add_argument("--noise", default="gaussian", choices=["gaussian", "t3"])
    ap.add_argument("--b", type=float, default=0.5, help="public bound b_x = b_y")
    ap.add_argument("--r", type=float, default=None, help="override the settings' radius")
    ap.add_argument("--lam", type=float, default=None, help="override the settings' ridge")
    ap.add_argument("--screen", type=int, default=None,
                    help="also run top_r / mistakes after a DP-SIS screen to this many columns")
    ap.add_argument("--time-limit", type=float, default=None,
                    help="seconds per exact solve; a data set that runs out is reported as skipped")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--assume", action="store_true",
                    help="also run mistakes with gap_check='assume' (the paper's version, "
                         "conditional guarantee) as 'mistakes_assume'")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "out"))
    ap.add_argument("--tag", default="", help="suffix of the output file name")
    args = ap.parse_args(argv)
    print("command: python bench/study.py " + " ".join(sys.argv[1:] if argv is None else argv))
    print(f"p={args.p} s={args.s} SNR={args.snr} rho={args.rho} noise={args.noise} eps={args.eps} "
          f"b_x=b_y={args.b} trials={args.trials} draws={args.draws} exact={args.exact}",
          flush=True)
    t0 = time.perf_counter()
    methods = list(args.methods)
    options = {}
    if args.assume:
        methods.append("mistakes_assume=mistakes")
        options["mistakes_assume"] = {"gap_check": "assume"}
    if args.screen:
        for m in list(methods):
            label, _, base = m.partition("=")
            base = base or label
            if base in ("top_r", "mistakes"):
                methods.append(f"{label}+screen={base}")
                options[f"{label}+screen"] = dict(options.get(label, {}),
                                                  screen=dict(k=args.screen))
    frames = []
    for setting in args.settings:
        t1 = time.perf_counter()
        frame = run(args, setting, methods, options)
        frames.append(frame)
        print(f"\n== setting {setting} ({SETTINGS[setting]}; r, lam, intercept; "
              f"{time.perf_counter() - t1:.0f} s)")
        print(recovery_table(frame))
        sys.stdout.flush()
    print(f"\nwall time {time.perf_counter() - t0:.0f} s")
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, f"study_p{args.p}{args.tag}")
    allf = pd.concat(frames, ignore_index=True)
    allf.to_csv(stem + ".csv", index=False)
    import matplotlib
    matplotlib.use("Agg")
    labelled = allf.assign(method=allf.method + " [" + allf.setting + "]")
    plot_recovery(labelled).savefig(stem + ".png", dpi=120)
    print(f"wrote {stem}.csv and {stem}.png")


if __name__ == "__main__":
    main()
