"""Exact privacy audit of method="lei_ic" (Lei et al. 2018): pure eps-DP under row replacement.

Every model's exact l1-constrained RSS is computed on D and on neighbours D'
(one row replaced: random rows, corner rows, an adversarial search), and the
exact output distribution of report-noisy-min with Laplace noise (numerical
integration, from the same scores and noise scale the sampler uses) must satisfy
max_M |log P_D(M) - log P_D'(M)| <= eps. Noise calibrated to Delta / 4 must be
caught.
"""
import numpy as np
import pytest

from dpsubset.selection.baselines.lei_ic import (all_models, lei_noise_scale, lei_scores, lei_sensitivity,
                                       model_rss, noisy_min_distribution)

from ._audit import Setting, adversarial_search, max_abs_log_ratio, random_neighbours, signal_data

TOL = 1e-8
EPSILONS = (0.5, 1.0, 4.0)

# (setting, l1 radius R1, penalty phi); Setting.r is not used by lei_ic.
CASES = {
    # 4 candidates, models up to size 2 (10 models), 8 rows.
    "p4s2_n8": (Setting(n=8, p=4, s=2, b_x=1.0, b_y=1.0), 1.0, 0.5),
    # A smaller l1 ball, no penalty, 6 rows.
    "p4s2_n6": (Setting(n=6, p=4, s=2, b_x=1.0, b_y=1.0), 0.5, 0.0),
    # Bounds 0.5 and a larger ball (the intercept's bound 1 sets b_max), 15 models: the
    # actual changes are far below Delta here, so only the upper bound is informative.
    "p5s2_n6": (Setting(n=6, p=5, s=2, b_x=0.5, b_y=0.5), 2.0, 0.0),
}
REACH = {"p4s2_n8": 0.4, "p4s2_n6": 0.4, "p5s2_n6": 0.01}


class LeiEvaluated:
    """A dataset with the exact information criterion of every model."""

    def __init__(self, setting, X, y, R1, phi, Delta=None):
        self.setting, self.R1, self.phi = setting, R1, phi
        self.X, self.y = setting.clip(X, y)
        self.models = all_models(setting.p, setting.s)
        # b_max = max(b_x, 1): the intercept column is in every model, with bound 1.
        self.Delta = lei_sensitivity(setting.b_y, R1, max(setting.b_x, 1.0)) if Delta is None else Delta
        Q, gap = model_rss(self.X, self.y, np.ones((setting.n, 1)), self.models, R1)
        assert np.all(gap <= 1e-10 * self.Delta), "l1-constrained RSS not certified"
        self.ic = lei_scores(Q, [len(M) for M in self.models], phi)
        self._cache = {}

    def logp(self, eps):
        if eps not in self._cache:
            self._cache[eps] = noisy_min_distribution(self.ic, lei_noise_scale(self.Delta, eps),
                                                      log=True)
        return self._cache[eps]

    def neighbour(self, i, x_row, y_val):
        X2, y2 = self.X.copy(), self.y.copy()
        X2[i], y2[i] = x_row, y_val
        return LeiEvaluated(self.setting, X2, y2, self.R1, self.phi, self.Delta)


def loss(a, b):
    return max(max_abs_log_ratio(a.logp(e), b.logp(e)) / e for e in EPSILONS)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("coefs", [(1.0,), (0.5, 0.5)])
def test_lei_random_and_corner_neighbours(name, coefs):
    st, R1, phi = CASES[name]
    base = LeiEvaluated(st, *signal_data(st, seed=1, coefs=coefs), R1, phi)
    assert abs(np.exp(base.logp(1.0)).sum() - 1) < 1e-12
    rng = np.random.default_rng(11)
    nbs = random_neighbours(base, rng, 15) + random_neighbours(base, rng, 15, corners=True)
    worst = max(loss(base, nb) for nb in nbs)
    assert worst <= 1.0 + TOL, f"lei_ic exceeded eps: {worst:.6f} eps"
    assert worst > REACH[name] / 4, f"neighbours barely moved the output ({worst:.4f} eps)"


@pytest.mark.parametrize("name", sorted(CASES))
def test_lei_adversarial_neighbours(name):
    st, R1, phi = CASES[name]
    base = LeiEvaluated(st, *signal_data(st, seed=3, coefs=(1.0,)), R1, phi)
    value, _ = adversarial_search(base, loss, np.random.default_rng(5), restarts=4, passes=1,
                                  grid=3, row_moves=4)
    assert value <= 1.0 + TOL, f"lei_ic: {value:.6f} eps on an adversarial pair"
    assert value > REACH[name], f"adversarial search found only {value:.4f} eps"


def test_lei_audit_detects_understated_sensitivity():
    """The audit can fail: noise calibrated to Delta / 4 exceeds eps on some pair."""
    st, R1, phi = CASES["p4s2_n8"]
    X, y = signal_data(st, seed=3, coefs=(1.0,))
    Delta = lei_sensitivity(st.b_y, R1, 1.0)
    broken = LeiEvaluated(st, X, y, R1, phi, Delta=Delta / 4)
    value, nb = adversarial_search(broken, lambda a, b: max_abs_log_ratio(a.logp(1.0), b.logp(1.0)),
                                   np.random.default_rng(7), restarts=4, passes=1, grid=3,
                                   row_moves=4)
    honest = max_abs_log_ratio(LeiEvaluated(st, X, y, R1, phi).logp(1.0),
                               LeiEvaluated(st, nb.X, nb.y, R1, phi).logp(1.0))
    assert value > 1.0, f"understated Delta not detected: loss {value:.3f} eps"
    assert honest <= 1.0 + TOL, f"the correct mechanism on the same pair: {honest:.3f} eps"
