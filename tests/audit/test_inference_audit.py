"""Privacy audit of the inference stages (issue 26): docs/methods/inference.md.

1. The second moments ``[X_S, y]'[X_S, y]``: the L1 sensitivity of their upper triangle is
   found by brute force over pairs of rows at the box's corners (and random interior rows)
   and must not exceed the sensitivity the release uses (it reaches 0.65-0.9 of it: the
   claim adds each entry's largest move, which no one pair attains at once); a known-bad
   (too small) sensitivity, the diagonal alone, is caught. The Laplace release is then
   checked by Monte Carlo: the privacy loss of sampled outputs stays below eps.
2. The selection confidence: the log-odds of releasing the best support moves by at most
   eps_mech between neighbours (adversarial search over replaced rows, exact scores by
   enumeration). On these small problems the scores move far less than Delta, so the
   known-bad case is checked on the statistic itself: scores moved within Delta each
   (the order-statistics argument's worst case) reach eps_mech, so a claimed
   sensitivity of eps_mech / 2 is caught.
3. ``split=True``: the joint law of the two parts' outputs, mixed over every split of a
   small data set, changes by at most max(eps_A, eps_B) between neighbours (parallel
   composition), not eps_A + eps_B. Checked twice: with the release's own mechanisms
   (top-R, exact law, on part A; the Laplace moments on part B) and with two Laplace
   mechanisms whose worst case is reached, where a split that depends on the data
   (the rows with the smallest y select) is caught exceeding max(eps_A, eps_B).
"""
import itertools
import math

import numpy as np
import pytest

from dpsubset.inference.confidence import best_support_log_odds
from dpsubset.inference.moments import release_second_moments, second_moment_sensitivity
from dpsubset.mechanisms import top_r_distribution

from ._audit import Evaluated, Setting, adversarial_search, random_neighbours, signal_data

TOL = 1e-9


# ------------------------------------------------------------------ 1. second moments
def _triangle(z):
    z = np.asarray(z, dtype=float)
    return np.outer(z, z)[np.triu_indices(len(z))]


def brute_force_sensitivity(bounds, rng, interior=200):
    """max over pairs of rows u, v in the box of ||tri(uu') - tri(vv')||_1."""
    c = np.asarray(bounds, dtype=float)
    corners = [c * np.array(sign) for sign in itertools.product([-1.0, 1.0], repeat=len(c))]
    rows = corners + [rng.uniform(-c, c) for _ in range(interior)] + [np.zeros_like(c)]
    T = np.array([_triangle(z) for z in rows])
    return max(float(np.abs(T - t).sum(axis=1).max()) for t in T)


@pytest.mark.parametrize("bounds", [[1.0, 1.0, 3.0], [1.0, 0.5, 2.0, 1.0], [0.3, 2.0]])
def test_moment_sensitivity_by_brute_force_at_the_corners(bounds):
    found = brute_force_sensitivity(bounds, np.random.default_rng(0))
    claimed = second_moment_sensitivity(bounds)
    assert found <= claimed * (1 + TOL)
    # the claim adds each entry's largest move, which no one pair of rows attains at once
    # (a corner against the zero row moves every entry by its magnitude bound): the
    # release is conservative by at most this much
    assert found >= 0.6 * claimed


def test_a_too_small_sensitivity_is_caught():
    bounds = [1.0, 1.0, 3.0]
    diagonal_only = float(np.sum(np.square(bounds)))  # forgets the off-diagonal entries
    assert brute_force_sensitivity(bounds, np.random.default_rng(1)) > diagonal_only * 1.5


def test_laplace_moments_monte_carlo_privacy_loss():
    """Worst-case neighbours (opposite corners in one row): the log density ratio of
    500 sampled releases stays <= eps, and comes close to it."""
    rng = np.random.default_rng(2)
    bounds = np.array([1.0, 1.0, 3.0])
    Z = rng.uniform(-bounds, bounds, (20, 3))
    Z2 = Z.copy()
    Z[0], Z2[0] = bounds, -bounds * np.array([1.0, 1.0, -1.0])
    eps = 0.7
    iu = np.triu_indices(3)
    t, t2 = (Z.T @ Z)[iu], (Z2.T @ Z2)[iu]
    worst = 0.0
    for _ in range(500):
        v = release_second_moments(Z.T @ Z, 20, bounds, eps=eps, rng=rng)
        scale = v.scale
        out = v.ZtZ[iu]
        loss = (np.abs(out - t2).sum() - np.abs(out - t).sum()) / scale
        worst = max(worst, abs(loss))
    exact = np.abs(t - t2).sum() / (second_moment_sensitivity(bounds) / eps)
    assert worst <= exact * (1 + 1e-9) and exact <= eps * (1 + 1e-9)
    assert worst > 0.5 * exact


# ------------------------------------------------------------ 2. the selection confidence
AUDIT = Setting(n=12, p=5, s=2, b_x=1.0, b_y=1.0, r=1.5, lam=0.5)


EPS_MECH = 2.0


def _log_odds(ev):
    """The released statistic (before noise) of top-R at the default list length."""
    lo, hi = best_support_log_odds(ev.ranking.scores[:AUDIT.default_R], eps_mech=EPS_MECH,
                                   Delta=AUDIT.Delta, p=AUDIT.p, s=AUDIT.s)
    assert lo == hi
    return lo


@pytest.mark.parametrize("coefs", [(1.0,), (0.6, 0.3)])
def test_log_odds_moves_by_at_most_eps_mech(coefs):
    rng = np.random.default_rng(3)
    X, y = signal_data(AUDIT, 3, coefs=coefs)
    base = Evaluated(AUDIT, X, y)
    moves = [abs(_log_odds(nb) - _log_odds(base)) for nb in random_neighbours(base, rng, 40, corners=True)]
    worst, _ = adversarial_search(base, lambda b, nb: abs(_log_odds(nb) - _log_odds(b)), rng, restarts=8)
    assert max(worst, max(moves)) <= EPS_MECH * (1 + TOL)   # the sensitivity the release uses


def test_log_odds_worst_case_reaches_eps_mech():
    """Scores that each move by Delta (the best up, the others down: every gap shrinks by
    2 Delta) move the log-odds by eps_mech exactly, so a smaller claimed sensitivity (a
    known-bad eps_mech / 2) is exceeded; random moves within Delta never exceed eps_mech."""
    rng = np.random.default_rng(4)
    Delta, p, s = 0.05, 6, 2
    for R in (3, 8, math.comb(p, s)):
        # the best ahead by more than 2 Delta: the worst-case move keeps the order
        scores = np.r_[0.0, np.sort(rng.uniform(3 * Delta, 0.5, R - 1))]
        base = best_support_log_odds(scores, eps_mech=EPS_MECH, Delta=Delta, p=p, s=s)[0]
        moved = np.sort(scores + np.r_[Delta, -Delta * np.ones(R - 1)])
        shift = abs(best_support_log_odds(moved, eps_mech=EPS_MECH, Delta=Delta, p=p, s=s)[0] - base)
        assert shift == pytest.approx(EPS_MECH, rel=1e-9) and shift > EPS_MECH / 2
        for _ in range(200):
            other = np.sort(scores + rng.uniform(-Delta, Delta, R))
            assert abs(best_support_log_odds(other, eps_mech=EPS_MECH, Delta=Delta, p=p, s=s)[0]
                       - base) <= EPS_MECH * (1 + TOL)


# --------------------------------------------------------------------- 3. split=True
N, P, S = 6, 3, 1
N_A = 3
EPS_A, EPS_B = 1.0, 0.8


def _log_joint(X, y, splitter, S_out, v_out):
    """log P(support = S_out, moments = v_out) of the split mechanism on (X, y), mixed over
    the splits ``splitter`` gives: top-R (R = all supports) on part A, Laplace moments of
    [1, x_S, y] on part B."""
    terms = []
    for w, rows_a in splitter(X, y):
        rows_b = [i for i in range(N) if i not in rows_a]
        ev = Evaluated(Setting(n=N_A, p=P, s=S, b_x=1.0, b_y=1.0, r=1.0, lam=0.5),
                       X[rows_a], y[rows_a])
        logp = top_r_distribution(ev.top_r(math.comb(P, S)), EPS_A, ev.setting.Delta, log=True)
        order = [tuple(sorted(sup)) for sup in ev.ranking.supports]
        lp_a = logp[order.index(S_out)]
        Z = np.column_stack([np.ones(len(rows_b)), X[rows_b][:, list(S_out)], y[rows_b]])
        bounds = np.ones(Z.shape[1])
        scale = second_moment_sensitivity(bounds) / EPS_B
        t = (Z.T @ Z)[np.triu_indices(Z.shape[1])]
        lp_b = -np.abs(v_out - t).sum() / scale - len(t) * math.log(2 * scale)
        terms.append(math.log(w) + lp_a + lp_b)
    return float(np.logaddexp.reduce(terms))


def random_split(X, y):
    """Every split of the row positions, equally likely: independent of the data."""
    subsets = list(itertools.combinations(range(N), N_A))
    return [(1.0 / len(subsets), list(a)) for a in subsets]


def data_split(X, y):
    """A known-bad split: the rows with the smallest y go to the selection."""
    return [(1.0, sorted(np.argsort(y, kind="stable")[:N_A].tolist()))]


def _worst_split_loss(splitter, seed, neighbours=6, outputs=6):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (N, P))
    y = np.clip(X[:, 0] + 0.3 * rng.standard_normal(N), -1, 1)
    worst = 0.0
    for _ in range(neighbours):
        i = int(rng.integers(N))
        X2, y2 = X.copy(), y.copy()
        X2[i], y2[i] = rng.choice([-1.0, 1.0], P), -np.sign(y[i]) or 1.0
        for _ in range(outputs):
            S_out = (int(rng.integers(P)),)
            m = 3 + 2 * 1 + 1  # upper triangle of a 3 x 3 matrix
            v = rng.normal(0, 3, m) + (np.column_stack([np.ones(N), X[:, S_out[0]], y]).T
                                       @ np.column_stack([np.ones(N), X[:, S_out[0]], y])
                                       )[np.triu_indices(3)] * N_A / N
            worst = max(worst, abs(_log_joint(X, y, splitter, S_out, v)
                                   - _log_joint(X2, y2, splitter, S_out, v)))
    return worst


def test_split_is_max_eps_by_parallel_composition():
    worst = max(_worst_split_loss(random_split, seed) for seed in range(2))
    assert worst <= max(EPS_A, EPS_B) + 1e-9


def _laplace_log_joint(X, y, splitter, a_out, v_out):
    """log density of (a, v): a = sum of y over part A + Laplace(2 / EPS_A) (sensitivity 2
    with |y| <= 1), v = the moments of [1, x_0, y] over part B + Laplace, mixed over splits."""
    scale_b = second_moment_sensitivity(np.ones(3)) / EPS_B
    terms = []
    for w, rows_a in splitter(X, y):
        rows_b = [i for i in range(N) if i not in rows_a]
        lp_a = -abs(a_out - y[rows_a].sum()) * EPS_A / 2
        Z = np.column_stack([np.ones(len(rows_b)), X[rows_b][:, 0], y[rows_b]])
        lp_b = -np.abs(v_out - (Z.T @ Z)[np.triu_indices(3)]).sum() / scale_b
        terms.append(math.log(w) + lp_a + lp_b)
    return float(np.logaddexp.reduce(terms))


def _worst_laplace_split_loss(splitter):
    """y = (-1, -0.9, -0.8, 0.8, 0.9, 1); row 0 replaced by a corner row with y = +1 (so the
    data-dependent split moves it to part B and row 3 to part A); the outputs far out on
    every side, where the Laplace losses reach their bounds."""
    X = np.array([[1, 0, 0], [0.5, 0, 0], [-0.5, 0, 0], [1, 0, 0], [0.2, 0, 0], [-0.2, 0, 0.]])
    y = np.array([-1, -0.9, -0.8, 0.8, 0.9, 1.0])
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = [-1, 0, 0], 1.0
    worst = 0.0
    for signs in itertools.product([-1.0, 1.0], repeat=7):
        a, v = 50 * signs[0], 50 * np.array(signs[1:])
        worst = max(worst, abs(_laplace_log_joint(X, y, splitter, a, v)
                               - _laplace_log_joint(X2, y2, splitter, a, v)))
    return worst


def test_split_with_laplace_parts_is_max_eps():
    assert _worst_laplace_split_loss(random_split) <= max(EPS_A, EPS_B) + 1e-9


def test_a_split_that_depends_on_the_data_is_caught():
    worst = _worst_laplace_split_loss(data_split)
    assert worst > max(EPS_A, EPS_B) + 0.1
