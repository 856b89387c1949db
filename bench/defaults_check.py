"""Check the default radius and ridge beyond the paper's cell, against the paper's values.

Part ``sim``: exact probability that top-R releases the true support (recovery_study
with exact=True; no intercept, eps = 1, s = 5 unless the cell says otherwise) for the
package defaults (r = b_y / sqrt(B_s), lam = 1) and the paper's values (r = 1.1,
lam = 120) in cells that move one thing at a time away from the paper's
(p = 100, rho = 0.1, SNR = 5, Gaussian noise, b_x = b_y = 0.5):

    snr2      SNR = 2
    rho0.5    rho = 0.5 (the exact search is slow here at small r: --time-limit applies)
    s10       s = 10
    loose     b_x = b_y = 2: bounds loose against the data's spread (sd 1 and about 0.55)
    tight     b_x = b_y = 0.25: tight bounds (most values clipped)
    t3        Student t_3 noise at SNR 5 (heavy tails)

Part ``real``: held-out error on the bundled data (70/30 splits, ``--reps`` per eps):
Hitters ("Salary ~ .", s = 5, public interval bounds, test MSE of res.predict in
(thousands of $)^2) and Pima ("type ~ .", s = 3, logistic loss, test accuracy), for
the defaults, the former defaults (r = 1, lam = 0.1 n) and, for Pima, r = 3 (the
radius vignette 3 chose by hand).

    python bench/defaults_check.py sim --cells snr2 s10 loose tight t3 --n 1000 2000 3000 4000 6000
    python bench/defaults_check.py sim --cells rho0.5 --n 1000 2000 4000 --time-limit 120
    python bench/defaults_check.py real --reps 20

(the tables are in docs/guide/choosing-settings.md)
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np
import pandas as pd

from dpsubset import Ball, Search
from dpsubset.studies.simulate import Simulation

CELLS = {
    "paper": {},
    "snr2": dict(model=Simulation(snr=2.0)),
    "rho0.5": dict(model=Simulation(rho=0.5)),
    "s10": dict(s=10),
    "loose": dict(bounds=(2.0, 2.0)),
    "tight": dict(bounds=(0.25, 0.25)),
    "t3": dict(model=Simulation(noise="t3")),
}
SETTINGS = {"defaults": dict(ball=None), "paper values": dict(ball=Ball(r=1.1, lam=120.0))}


def markdown(frame, fmt="{:.3g}"):
    """A Markdown table (no tabulate dependency)."""
    cells = [[fmt.format(v) if isinstance(v, float) else str(v) for v in row]
             for row in frame.itertuples(index=False)]
    head = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    return "\n".join([head, rule] + ["| " + " | ".join(r) + " |" for r in cells])


def sim(args):
    from dpsubset.studies.experiments import summarize_recovery, recovery_study, threshold_n
    rows = []
    for cell in args.cells:
        for name, rl in SETTINGS.items():
            kw = dict(p=args.p, s=5, trials=args.trials, eps=1.0, model=Simulation(snr=5.0, rho=0.1),
                      bounds=(0.5, 0.5), exact=True, intercept=False, progress=False,
                      search=Search(time_limit=args.time_limit), random_state=args.seed)
            kw.update(CELLS[cell])
            kw.update(rl)
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                f = recovery_study(["top_r"], args.n, **kw)
            summ = summarize_recovery(f).set_index("n")
            skipped = f[f.status != "ok"].groupby("n").size()
            row = dict(cell=cell, setting=name)
            for n in args.n:
                val = f"{summ.recovery[n]:.2f}" if n in summ.index else "-"
                if n in skipped.index:
                    val += f" ({skipped[n]} timed out)"
                row[f"n={n}"] = val
            row["n(90%)"] = threshold_n(f, 0.9).get("top_r", np.nan)
            row["s"] = round(time.perf_counter() - t0)
            rows.append(row)
            print(pd.DataFrame([row]).to_string(index=False, header=len(rows) == 1), flush=True)
    print()
    print(markdown(pd.DataFrame(rows)))


def real(args):
    import dpsubset as dps
    from dpsubset.privacy.leaks import PrivacyLeakWarning
    rng = np.random.default_rng(args.seed)

    def splits(frame):
        for _ in range(args.reps):
            idx = rng.permutation(len(frame))
            k = int(round(0.7 * len(frame)))
            yield frame.iloc[np.sort(idx[:k])], frame.iloc[np.sort(idx[k:])]

    hit = dps.load_hitters().dropna(subset=["Salary"]).drop(columns=["Player"])
    hb = dps.hitters_bounds()
    sal = hb.pop("Salary")
    HB = dps.Bounds(x=hb, y=sal)
    from dpsubset.studies.datasets import load_pima
    pima = load_pima().drop(columns="split")
    PB = dps.Bounds(x={"npreg": (0, 20), "glu": (40, 300), "bp": (30, 130), "skin": (0, 80),
                       "bmi": (15, 70), "ped": (0, 2.5), "age": (21, 90)}, y=1.0)
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        for eps in args.eps:
            res = {}
            for tr, te in splits(hit):
                for name, kw in (("defaults", {}), ("former defaults (r = 1, lam = 0.1 n)",
                                                    dict(ball=Ball(r=1.0, lam=0.1 * len(tr))))):
                    f = dps.dp_best_subset("Salary ~ .", tr, eps=eps, s=5, bounds=HB,
                                           random_state=int(rng.integers(2 ** 31)), **kw)
                    mse = float(np.mean((te.Salary.to_numpy() - f.predict(te).to_numpy()) ** 2))
                    res.setdefault(name, []).append(mse / 1e3)
            for name, v in res.items():
                out.append(dict(data="Hitters test MSE (1000s $^2)", eps=eps, setting=name,
                                mean=np.mean(v), se=np.std(v, ddof=1) / np.sqrt(len(v))))
            res = {}
            for tr, te in splits(pima):
                for name, kw in (("defaults", {}), ("former defaults (r = 1, lam = 0.1 n)",
                                                    dict(ball=Ball(r=1.0, lam=0.1 * len(tr)))),
                                 ("r = 3, lam = 1", dict(ball=Ball(r=3.0)))):
                    f = dps.dp_best_subset("type ~ .", tr, eps=eps, s=3, loss="logistic",
                                           bounds=PB, random_state=int(rng.integers(2 ** 31)),
                                           **kw)
                    # the linear predictor, not predict()'s probabilities (> 0 on those is always true)
                    pred = np.asarray(f.predict(te, which="linear")) > 0
                    truth = (te.type == f.response_levels[1]).to_numpy()
                    res.setdefault(name, []).append(float(np.mean(pred == truth)))
            for name, v in res.items():
                out.append(dict(data="Pima test accuracy (logistic)", eps=eps, setting=name,
                                mean=np.mean(v), se=np.std(v, ddof=1) / np.sqrt(len(v))))
            print(pd.DataFrame(out[-5:]).to_string(index=False), flush=True)
    print()
    print(markdown(pd.DataFrame(out)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("part", choices=["sim", "real"])
    ap.add_argument("--cells", nargs="+", default=["snr2", "s10", "loose", "tight", "t3"],
                    choices=sorted(CELLS))
    ap.add_argument("--p", type=int, default=100)
    ap.add_argument("--n", type=int, nargs="+", default=[1000, 2000, 3000, 4000, 6000])
    ap.add_argument("--trials", type=int, default=2)
    ap.add_argument("--time-limit", type=float, default=None)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--eps", type=float, nargs="+", default=[2.0, 8.0, 32.0])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    print("command: python bench/defaults_check.py " + " ".join(sys.argv[1:] if argv is None else argv),
          flush=True)
    (sim if args.part == "sim" else real)(args)


if __name__ == "__main__":
    main()
