"""Demo: private best subset selection on the bundled Hitters data (``make demo``)."""
from __future__ import annotations

import time

import dpsubset as dps


def main():
    hitters = dps.load_hitters().dropna(subset=["Salary"]).drop(columns=["Player"])
    bounds = dps.hitters_bounds()          # public bounds from baseball records, not the data
    salary = bounds.pop("Salary")
    print(f"Hitters: {len(hitters)} players with a salary, {hitters.shape[1] - 1} predictors")
    t0 = time.perf_counter()
    res = dps.dp_best_subset("Salary ~ .", hitters, eps=2.0, s=5,
                             bounds=dps.Bounds(x=bounds, y=salary), random_state=2026)
    print(f"released support: {res.support}   ({time.perf_counter() - t0:.2f} s)")
    print(res.privacy)
    print(res.summary())


if __name__ == "__main__":
    main()
