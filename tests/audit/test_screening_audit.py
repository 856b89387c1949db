"""Exact privacy audit of screen= (DP-SIS screen, then top-R on the kept columns).

The released pair (screened set Y, support S) must be (eps_screen + eps_select)-DP
under row replacement (basic composition). On tiny problems every Y and every S can
be listed, so the joint law

    P(Y, S) = P_screen(Y) * P_top-R(S | data restricted to Y)

is computed exactly: the screen's law independently of the package's class-based
sampler (the canonical loss from its definition, and report-noisy-max with
exponential noise in its permute-and-flip form, P(Y) = q_Y int_0^1 prod_{Y' != Y}
(1 - q_Y' t) dt with q_Y = exp(u_Y - max u), Ding et al. 2021), and the top-R law by
enumeration on the design that ``dpsubset.selection.screening.restrict_design`` builds, with the
scorer and Delta of the package's selection stage (``make_scorer``). The design is
built by ``build_design`` from a data frame, as ``dp_best_subset`` builds it.
"""
import itertools
import math

import numpy as np
import pandas as pd
import pytest

import dpsubset as dps
from dpsubset.selection.baselines.dp_sis import canonical_loss, sis_scores
from dpsubset.design.build import build_design
from dpsubset.mechanisms import as_generator, top_r_distribution
from dpsubset.selection.screening import restrict_design
from dpsubset.search.enumeration import all_supports, top_r_by_enumeration
from dpsubset.selection.base import SelectionRequest, make_scorer

N, P, K, S = 6, 4, 2, 1
EPS_SCREEN, EPS_SELECT = 2.0, 1.0
TOL = 1e-9


def _frame(X, y):
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(P)])
    df["y"] = y
    return df


def screen_law(x, k, eps):
    """Exact law of the canonical Lipschitz top-k mechanism over all size-k sets."""
    sets = list(itertools.combinations(range(len(x)), k))
    u = np.array([-(eps / 2) * canonical_loss(x, Y) for Y in sets])
    q = np.exp(u - u.max())
    probs = []
    for a in range(len(sets)):
        poly = np.polynomial.Polynomial([1.0])
        for b in range(len(sets)):
            if b != a:
                poly = poly * np.polynomial.Polynomial([1.0, -q[b]])
        integral = poly.integ()
        probs.append(q[a] * (integral(1.0) - integral(0.0)))
    probs = np.array(probs)
    assert abs(probs.sum() - 1) < 1e-9
    return sets, probs


def _design(X, y, formula, _cache={}):
    """The design dp_best_subset builds (bounds (1, 1)); formulaic runs once per formula and
    shape, and neighbours swap in their (already bounded) rows."""
    key = (formula, X.shape)
    if key not in _cache:
        _cache[key] = build_design(formula, _frame(X, y), (1.0, 1.0), None)
    return _cache[key].replace(X=np.asarray(X, float), y=np.asarray(y, float))


def joint_log_law(X, y, r, lam, formula="y ~ 0 + .", understate=1.0):
    """log P(Y), log P(S | Y) and log P(Y, S) over (screened set, support in original indices).

    ``understate`` > 1 multiplies the screen's normalised scores, as a screen with an
    understated sensitivity would (for the test that the audit detects it).
    """
    design = _design(X, y, formula)
    x = understate * sis_scores(design.X, design.y, design.x_bounds, design.b_y)
    sets, p_screen = screen_law(x, K, EPS_SCREEN)
    out = {}
    for Y, pY in zip(sets, p_screen):
        sub = restrict_design(design, list(Y))
        req = SelectionRequest(design=sub, s=S, eps=EPS_SELECT, lam=lam, r=r, loss="squared",
                               rng=as_generator(0), options={})
        scorer, Delta = make_scorer(req)
        R = 2 + (K - S) * S
        cands = top_r_by_enumeration(scorer, S, min(R, math.comb(K, S)))
        lp = top_r_distribution(cands, EPS_SELECT, Delta, log=True)
        for row, v in zip(all_supports(K, S).tolist(), lp):
            out[Y, tuple(Y[j] for j in row)] = (math.log(pY), v)
    keys = sorted(out)
    a = np.array([out[k] for k in keys])
    return keys, a[:, 0], a[:, 1], a.sum(axis=1)


def audit(X, y, r, lam, understate=1.0, interior=10, seed=0):
    """Worst |log ratio| over the neighbours: (screen, selection given Y, joint)."""
    keys, s0, c0, j0 = joint_log_law(X, y, r, lam, understate=understate)
    worst = np.zeros(3)
    for X2, y2 in _neighbours(X, y, np.random.default_rng(seed), interior):
        keys2, s1, c1, j1 = joint_log_law(X2, y2, r, lam, understate=understate)
        assert keys2 == keys
        worst = np.maximum(worst, [np.max(np.abs(s0 - s1)), np.max(np.abs(c0 - c1)),
                                   np.max(np.abs(j0 - j1))])
    return worst


def _data(seed):
    rng = np.random.default_rng(seed)
    return rng.choice([-1.0, 1.0], (N, P)), rng.choice([-1.0, 1.0], N)


def _neighbours(X, y, rng, m):
    """Every row replaced by every corner of the box, and m random interior rows."""
    rows = [(i, np.array([1.0 if (sg >> j) & 1 else -1.0 for j in range(P)]), yv)
            for i in range(N) for sg in range(2 ** P) for yv in (-1.0, 1.0)]
    rows += [(int(rng.integers(N)), rng.uniform(-1, 1, P), float(rng.uniform(-1, 1)))
             for _ in range(m)]
    for i, xr, yv in rows:
        X2, y2 = X.copy(), y.copy()
        X2[i], y2[i] = xr, yv
        yield X2, y2


@pytest.mark.parametrize("seed,r,lam", [(8, 1.0 / math.sqrt(S), 1.0), (1, 1.0, 0.5)])
def test_screen_then_top_r_is_eps_screen_plus_eps_select_dp(seed, r, lam):
    X, y = _data(seed)
    screen, select, joint = audit(X, y, r, lam, seed=seed + 10)
    assert screen <= EPS_SCREEN + TOL, f"screen privacy loss {screen:.4f} > {EPS_SCREEN}"
    assert select <= EPS_SELECT + TOL, f"top-R (given Y) privacy loss {select:.4f} > {EPS_SELECT}"
    assert joint <= EPS_SCREEN + EPS_SELECT + TOL, f"joint privacy loss {joint:.4f}"
    # The neighbours must move the screen's law near its budget, or the check is empty.
    assert screen > 0.3 * EPS_SCREEN, f"neighbours barely moved the screen ({screen:.4f})"
    assert select > 0.0 and joint >= screen


def test_audit_detects_an_understated_screen_sensitivity():
    """Scores normalised by half their sensitivity (the add/remove value) break the screen's eps."""
    X, y = _data(8)
    screen, _, _ = audit(X, y, 1.0 / math.sqrt(S), 1.0, understate=2.0, interior=0)
    assert screen > EPS_SCREEN, f"understated sensitivity not detected ({screen:.4f})"


def test_api_spends_the_audited_budgets():
    """dp_best_subset(screen=dict(k=K, share=...)) spends what the audit assumed."""
    X, y = _data(0)
    eps_sel_total = EPS_SCREEN + EPS_SELECT
    res = dps.dp_best_subset("y ~ 0 + .", _frame(X, y), eps=eps_sel_total, s=S, bounds=(1.0, 1.0),
                             refit=False, random_state=1,
                             method=dps.Method("top_r", screen=dict(k=K, share=EPS_SCREEN / eps_sel_total)))
    st = res.privacy.to_frame().set_index("stage")
    assert st.loc["screening", "eps"] == pytest.approx(EPS_SCREEN)
    assert st.loc["selection", "eps"] == pytest.approx(EPS_SELECT)
    assert res.privacy.eps == pytest.approx(eps_sel_total)
    assert len(res.screened) == K and set(res.support) <= set(res.screened)
