"""Speed of the exact samplers (dpsubset/mechanisms/noise.py) against numpy's floating-point ones.

For each draw the package makes, the time per call of numpy's sampler (what the package
used before issue 41) and of the exact one, median of repeated calls in one process:

- Laplace releases of 1, 78 (the second moments of 12 columns) and 33,000 values (a
  bootstrap of 500 replicates of those moments): ``x + rng.laplace(0, b)`` against
  ``noise.laplace_release(x, b, rng)`` (discrete Laplace on a public grid);
- exponential-mechanism draws over K = 10, 500 (top-R at p = 100), 5,000 (top-R at
  p = 1000) and 100,000 classes (the exponential baseline): Gumbel-max with
  ``rng.gumbel`` against the exact race ``noise.gumbel_max``;
- the share of exact Gumbel-max calls that needed the decimal refinement.

    python bench/sampler_speed.py
"""
import statistics
import time

import numpy as np

from dpsubset.mechanisms import noise


def per_call(f, reps):
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    rng = np.random.default_rng(0)
    print(f"{'draw':<34} {'numpy (float) us':>17} {'exact us':>10} {'ratio':>6}")
    for size in (1, 78, 33_000):
        x = rng.normal(size=size) * 10
        reps = 2000 if size < 1000 else 50
        old = per_call(lambda: x + rng.laplace(0.0, 2.5, size=size), reps)
        new = per_call(lambda: noise.laplace_release(x, 2.5, rng), reps)
        print(f"{'Laplace release, ' + str(size) + ' values':<34} {old * 1e6:>17.1f} {new * 1e6:>10.1f} "
              f"{new / old:>6.1f}")
    for K in (10, 500, 5000, 100_000):
        lw = rng.normal(size=K) * 3
        reps = 2000 if K <= 5000 else 50
        old = per_call(lambda: int(np.argmax(lw + rng.gumbel(size=K))), reps)
        new = per_call(lambda: noise.gumbel_max(lw, rng), reps)
        print(f"{'Gumbel-max, K = ' + str(K) + ' classes':<34} {old * 1e6:>17.1f} {new * 1e6:>10.1f} "
              f"{new / old:>6.1f}")
    # how often the race needs more than its first 53 bits (near-ties only)
    K, calls, refined = 500, 20_000, 0
    lw = rng.normal(size=K) * 3
    for _ in range(calls):
        race = noise.GumbelRace(K, rng)
        race.argmax(lw)
        refined += bool(race.more)
    print(f"exact Gumbel-max calls that needed more bits (K = {K}): {refined} of {calls}")


if __name__ == "__main__":
    main()
