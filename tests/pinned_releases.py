"""Seeded releases pinned across refactorings: what the package computes must not move.

Each case is one seeded ``dp_best_subset`` call on bundled or simulated data, over the
mechanisms, losses and routes (matrix and Gram, intercept or none, a categorical
term, the screen, a comparison method). ``tests/package/test_pinned_releases.py`` checks the
released support exactly and the coefficients and the report's budget to rounding
against ``tests/data/pinned_releases.json``.

Regenerate the file only when a change is meant to alter releases (say so in the
commit): ``python tests/pinned_releases.py --write``.
"""
from __future__ import annotations

import json
import pathlib
import sys
import warnings

import numpy as np
import pandas as pd

PIN_FILE = pathlib.Path(__file__).parent / "data" / "pinned_releases.json"


def _hitters():
    import dpsubset as dps
    df = dps.load_hitters().dropna(subset=["Salary"]).drop(columns=["Player"])
    bounds = dps.hitters_bounds()
    y = bounds.pop("Salary")
    return df, dps.Bounds(x=bounds, y=y)


def _pima():
    import dpsubset as dps
    df = dps.load_pima().drop(columns=["split"])
    return df, dps.pima_bounds()


def _regression(n=600, p=20, seed=3):
    from dpsubset.studies.simulate import make_regression
    df, _ = make_regression(n, p, random_state=seed, as_frame=True)
    return df


def _categorical(n=500, seed=5):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.uniform(-1, 1, (n, 6)), columns=[f"x{j}" for j in range(6)])
    df["g"] = pd.Categorical(rng.choice(["a", "b", "c"], n), categories=["a", "b", "c"])
    df["y"] = np.clip(df.x0 - df.x2 + (df.g == "b") + 0.5 * rng.normal(size=n), -3, 3)
    return df


def _tall(n=6000, p=12, seed=7):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, p)), columns=[f"x{j}" for j in range(p)])
    df["y"] = df.x1 - 0.7 * df.x4 + 0.5 * df.x9 + rng.normal(size=n) + 1.0
    return df


def cases():
    """name -> (formula, data, keyword arguments) of every pinned call."""
    import dpsubset
    hit, hit_b = _hitters()
    pima, pima_b = _pima()
    reg = _regression()
    cat = _categorical()
    tall = _tall()
    box = {**{f"x{j}": (-1, 1) for j in range(6)}, "g": None, "y": (-3, 3)}
    box.pop("g")
    return {
        "hitters_top_r": ("Salary ~ .", hit, dict(eps=2.0, s=5, bounds=hit_b, random_state=2026)),
        "hitters_mistakes": ("Salary ~ .", hit, dict(eps=4.0, s=3, bounds=hit_b, method="mistakes",
                                                      random_state=11)),
        "regression_no_intercept": ("y ~ 0 + .", reg, dict(eps=1.0, s=5, bounds=(0.5, 0.5), random_state=1)),
        "regression_huber": ("y ~ .", reg, dict(eps=2.0, s=3, bounds=(0.5, 1.0), loss="huber",
                                                random_state=2)),
        "pima_logistic": ("type ~ .", pima, dict(eps=8.0, s=3, bounds=pima_b, loss="logistic",
                                                 ball=dpsubset.Ball(r=1.1, lam=180.0), random_state=3)),
        "pima_hinge": ("type ~ .", pima, dict(eps=8.0, s=2, bounds=pima_b, loss="hinge",
                                              ball=dpsubset.Ball(r=1.1, lam=180.0), random_state=4)),
        "categorical_top_r": ("y ~ x0 + x1 + x2 + x3 + x4 + x5 + g", cat,
                              dict(eps=3.0, s=3, bounds=box, random_state=5)),
        "tall_gram_route": ("y ~ .", tall, dict(eps=2.0, s=3, bounds=(3.0, 5.0), random_state=6)),
        "regression_screen": ("y ~ 0 + .", reg, dict(eps=2.0, s=3, bounds=(0.5, 0.5), method=dpsubset.Method("top_r", screen=10),
                                                      random_state=8)),
        "regression_exponential": ("y ~ 0 + .", _regression(n=300, p=10), dict(
            eps=2.0, s=2, bounds=(0.5, 0.5), method="exponential", random_state=9)),
    }


def release(formula, data, kw):
    """The pinned parts of one release: support, coefficients, budget and guarantee."""
    from dpsubset import dp_best_subset
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = dp_best_subset(formula, data, **kw)
    return dict(support=list(res.support),
                params={str(k): float(v) for k, v in res.params.items()},
                guarantee=res.privacy.guarantee, eps=float(res.privacy.eps),
                delta=float(res.privacy.delta),
                stages=[[str(st["stage"]), float(st["eps"]), float(st["delta"])]
                        for st in res.privacy.stages],
                sensitivity=None if res.privacy.sensitivity is None else float(res.privacy.sensitivity))


def main(argv):
    if argv[1:] != ["--write"]:
        print(__doc__)
        return 2
    out = {name: release(*case) for name, case in cases().items()}
    PIN_FILE.parent.mkdir(exist_ok=True)
    PIN_FILE.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(out)} releases to {PIN_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
