"""Privacy audit of method="frank_wolfe" (Talwar, Thakurta and Zhang 2015) under row replacement.

1. Sensitivity, by brute force: the 2m vertex scores +-C g_j at iterates in the l1 ball
   (its vertices, where a row's fitted value reaches C b_max, and random points), on a
   small data set and on every neighbour that replaces a row by a corner of the box.
   The largest change must be at most Delta = frank_wolfe_sensitivity(...) and reach it
   (so the add/remove value Delta / 2 is caught).
2. One step, exactly: report-noisy-max (Laplace) over the vertex scores, its exact law on
   D and on corner neighbours, must have a log-ratio of at most 2 Delta / b; the scale of
   a monotone report-noisy-max (Delta / eps) is caught.
3. The accounting: the scale the method uses, recomputed through the theorem it names,
   spends at most eps over the T steps; forgetting the factor 2 is caught.
"""
import itertools

import numpy as np
import pytest

from dpsubset.selection.baselines.composition import calibrate_steps, composed_privacy
from dpsubset.selection.baselines.frank_wolfe import frank_wolfe_plan, frank_wolfe_sensitivity
from dpsubset.selection.baselines.lei_ic import noisy_min_distribution

N, P = 6, 3
B_X, B_Y, C = 0.5, 1.0, 1.4


def vertex_scores(X, y, theta, k):
    Z = np.hstack([np.ones((len(y), 1)), X]) if k else X
    g = Z.T @ (Z @ theta - y) / len(y)
    return np.concatenate([C * g, -C * g])


def corners():
    for signs in itertools.product([-1.0, 1.0], repeat=P + 1):
        yield np.array(signs[:P]) * B_X, signs[P] * B_Y


def thetas(k, rng, count=20):
    m = P + k
    out = [C * s * np.eye(m)[j] for j in range(m) for s in (-1.0, 1.0)]
    for _ in range(count):
        w = rng.normal(size=m)
        out.append(C * w / np.abs(w).sum() * rng.uniform(0.3, 1.0))
    return out


def base_data(seed):
    rng = np.random.default_rng(seed)
    X, y = rng.uniform(-B_X, B_X, (N, P)), rng.uniform(-B_Y, B_Y, N)
    X[0], y[0] = np.full(P, B_X), -B_Y
    return X, y


def neighbours(X, y, rows=range(N)):
    for i in rows:
        for x, yv in corners():
            X2, y2 = X.copy(), y.copy()
            X2[i], y2[i] = x, yv
            yield X2, y2


def Delta(k):
    return frank_wolfe_sensitivity(np.full(P, B_X), np.ones(k), B_Y, C, N)


@pytest.mark.parametrize("seed", [0, 1])
def test_vertex_score_sensitivity_by_brute_force_over_corner_rows(seed):
    X, y = base_data(seed)
    got = max(float(np.max(np.abs(vertex_scores(X2, y2, th, 0) - vertex_scores(X, y, th, 0))))
              for th in thetas(0, np.random.default_rng(seed)) for X2, y2 in neighbours(X, y))
    assert got <= Delta(0) * (1 + 1e-12)
    assert got >= 0.999 * Delta(0)       # attained: a vertex, a corner row and its opposite
    assert Delta(0) == pytest.approx(2 * C * B_X * (B_Y + C * B_X) / N)


def test_with_an_intercept_the_bound_holds():
    # the intercept's bound 1 sets b_max; the bound holds but is not attained here (the
    # intercept column is 1 in every row, so its part of the fitted value never flips sign)
    X, y = base_data(2)
    got = max(float(np.max(np.abs(vertex_scores(X2, y2, th, 1) - vertex_scores(X, y, th, 1))))
              for th in thetas(1, np.random.default_rng(2)) for X2, y2 in neighbours(X, y))
    assert Delta(1) / 2 < got <= Delta(1) * (1 + 1e-12)


def worst_step_loss(X, y, scale):
    """The largest exact log-ratio of one Frank-Wolfe choice over corner neighbours of rows 0, 1."""
    worst = 0.0
    for th in thetas(0, np.random.default_rng(0), count=4):
        law = noisy_min_distribution(vertex_scores(X, y, th, 0), scale, log=True)
        for X2, y2 in neighbours(X, y, rows=(0, 1)):
            law2 = noisy_min_distribution(vertex_scores(X2, y2, th, 0), scale, log=True)
            worst = max(worst, float(np.max(np.abs(law - law2))))
    return worst


@pytest.mark.parametrize("eps_step", [0.5, 2.0])
def test_one_step_is_2_delta_over_b_dp_exactly(eps_step):
    X, y = base_data(4)
    assert worst_step_loss(X, y, 2 * Delta(0) / eps_step) <= eps_step + 1e-9
    assert worst_step_loss(X, y, Delta(0) / eps_step) > eps_step * 1.02


class Public:
    def __init__(self, n, p, k):
        self.x_bounds, self.forced_bounds, self.b_y, self.n = np.full(p, 1.0), np.ones(k), 1.0, n


@pytest.mark.parametrize("eps", [0.3, 1.0, 10.0])
@pytest.mark.parametrize("n,k,T", [(1000, 1, 20), (50_000, 0, 200), (200, 1, 5)])
def test_noise_scale_meets_the_stated_accounting(eps, n, k, T):
    C_, Delta_, noise = frank_wolfe_plan(Public(n, 30, k), 3, 0.4, eps,
                                         dict(iterations=T, radius=None, delta=None))
    delta = min(1e-6, 1 / n ** 2)
    weights = np.full(T, 2 * Delta_)
    spent = composed_privacy(weights, noise.scale, delta)
    if noise.guarantee == "pure":
        assert spent["basic"] <= eps * (1 + 1e-12) and noise.delta == 0
    else:
        assert spent["zcdp"] <= eps * (1 + 1e-12) and noise.delta == delta
    forgot = calibrate_steps(np.full(T, Delta_), eps, delta).scale
    true_spent = composed_privacy(weights, forgot, delta)
    assert min(true_spent["basic"], true_spent["zcdp"]) > eps
