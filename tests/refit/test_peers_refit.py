"""AdaSSP (Wang 2018), the refit peer: sensitivities by brute force, noise against its accounting."""
import itertools
import math

import numpy as np
import pytest

from dpsubset.refit.adassp import adassp, adassp_noise, support_row_bound

B_X, B_Y, D = 0.5, 1.0, 3


def corner_rows():
    for signs in itertools.product([-1.0, 1.0], repeat=D + 1):
        yield np.array(signs[:D]) * B_X, signs[D] * B_Y


def upper(M):
    return M[np.triu_indices(M.shape[0])]


def test_sensitivities_hold_by_brute_force_and_the_add_remove_value_is_caught():
    rng = np.random.default_rng(0)
    A = rng.uniform(-B_X, B_X, (8, D))
    y = rng.uniform(-B_Y, B_Y, 8)
    A[0], y[0] = np.full(D, B_X), B_Y      # a corner row: its opposite corner attains 2 B b_y
    B = support_row_bound(np.full(D, B_X), range(D), ())
    assert B == pytest.approx(B_X * math.sqrt(D))
    worst = dict(lam=0.0, gram=0.0, xy=0.0)
    base_G, base_b = A.T @ A, A.T @ y
    base_lam = np.linalg.eigvalsh(base_G)[0]
    for i in range(8):
        for z, yv in corner_rows():
            A2, y2 = A.copy(), y.copy()
            A2[i], y2[i] = z, yv
            G2 = A2.T @ A2
            worst["lam"] = max(worst["lam"], abs(np.linalg.eigvalsh(G2)[0] - base_lam))
            worst["gram"] = max(worst["gram"], np.linalg.norm(upper(G2 - base_G)))
            worst["xy"] = max(worst["xy"], np.linalg.norm(A2.T @ y2 - base_b))
    assert worst["lam"] <= B ** 2 and worst["gram"] <= math.sqrt(2) * B ** 2
    assert worst["xy"] <= 2 * B * B_Y * (1 + 1e-12)
    # attained, so Wang's add/remove constant B b_y is caught
    assert worst["xy"] >= 0.999 * 2 * B * B_Y


@pytest.mark.parametrize("eps,delta", [(0.5, 1e-6), (1.0, 1e-8), (20.0, 1e-6)])
def test_noise_scales_meet_the_budget_by_zcdp(eps, delta):
    B = 1.3
    sig = adassp_noise(B, 0.7, eps, delta)
    sens = dict(lambda_min=B ** 2, gram=math.sqrt(2) * B ** 2, xy=2 * B * 0.7)
    rho = sum(sens[k] ** 2 / (2 * sig[k] ** 2) for k in sens)
    assert rho + 2 * math.sqrt(rho * math.log(1 / delta)) == pytest.approx(eps)
    # known bad: the add/remove constants (B^2, B^2, B b_y) give noise too small for replacement
    bad = dict(lambda_min=B ** 2, gram=B ** 2, xy=B * 0.7)
    scale = math.sqrt(sum(bad[k] ** 2 for k in bad) / sum(sens[k] ** 2 for k in sens))
    rho_bad = rho / scale ** 2
    assert rho_bad + 2 * math.sqrt(rho_bad * math.log(1 / delta)) > eps


def test_adassp_is_close_to_ols_with_many_rows_and_a_large_budget():
    rng = np.random.default_rng(1)
    n = 200_000
    A = np.hstack([np.ones((n, 1)), rng.uniform(-1, 1, (n, 2))])
    y = np.clip(A @ [0.3, 0.5, -0.4] + 0.1 * rng.normal(size=n), -2, 2)
    ols = np.linalg.lstsq(A, y, rcond=None)[0]
    res = adassp(A, y, row_bound=math.sqrt(3), b_y=2.0, eps=5.0, delta=1e-10, rng=rng)
    assert np.max(np.abs(res.coef - ols)) < 0.01
    assert res.eps == 5.0 and res.delta == 1e-10 and res.ridge >= 0
