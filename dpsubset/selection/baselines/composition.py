"""Noise scales for iterative mechanisms built of many pure-DP steps.

The two iterative peers (``peeling`` and ``frank_wolfe``) release a long sequence of
small pure-DP steps, all with noise of one public scale ``b``: step i is
``(a_i / b)``-DP, where ``a_i`` is public (a Laplace release of a quantity of
sensitivity lambda is (lambda / b)-DP; report-noisy-max with Laplace noise on scores
of sensitivity lambda each, which need not move in the same direction, is
(2 lambda / b)-DP: Dwork and Roth 2014, Section 3.3, prove lambda / b for monotone
counting queries, and the factor 2 covers scores that move in opposite directions;
tests/audit/test_peeling_audit.py shows that lambda / b is broken for the peers'
scores).
This module chooses ``b`` so that the whole sequence meets the call's budget, by the
better of two composition theorems, and says which one it used:

* basic composition (Dwork, McSherry, Nissim and Smith 2006): the steps add up,
  eps = sum a_i / b, and the release is **pure** eps-DP;
* zero-concentrated DP (Bun and Steinke 2016): an eps_i-DP step is
  (eps_i^2 / 2)-zCDP (their Proposition 1.4), zCDP adds up under adaptive
  composition (Lemma 1.7), and rho-zCDP implies
  (rho + 2 sqrt(rho log(1 / delta)), delta)-DP for every delta > 0 (Proposition 1.3).
  Solving rho + 2 sqrt(rho L) = eps (L = log(1 / delta)) gives
  rho* = (sqrt(L + eps) - sqrt(L))^2, and b = sqrt(sum a_i^2 / (2 rho*)).

The papers calibrate differently (Cai, Wang and Zhang 2021 split (eps, delta) evenly
over the iterations and use advanced composition inside one peeling; Talwar,
Thakurta and Zhang 2015 use advanced composition over the steps). Advanced
composition adds sum eps_i (e^eps_i - 1) where zCDP adds sum eps_i^2 / 2, so zCDP
is never noisier to first order and, unlike the papers' closed forms, holds for
every eps. Whichever of the two theorems gives the smaller ``b`` is used; when it is
basic composition the method's guarantee is pure and it spends no delta.

:func:`composed_privacy` is the independent check the audits use: from ``b`` and the
``a_i`` it recomputes what each theorem guarantees.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["StepNoise", "calibrate_steps", "composed_privacy", "zcdp_rho_for", "resolve_delta"]


@dataclass(frozen=True)
class StepNoise:
    """The noise scale of every step and the guarantee it gives.

    Attributes
    ----------
    scale : float
        The Laplace scale b of every step.
    guarantee : {"pure", "approximate"}
    eps, delta : float
        What the whole sequence spends (delta = 0 for "pure").
    theorem : str
        The composition theorem that gave ``scale``, in words (for the report).
    """

    scale: float
    guarantee: str
    eps: float
    delta: float
    theorem: str


def zcdp_rho_for(eps: float, delta: float) -> float:
    """The largest rho with rho + 2 sqrt(rho log(1/delta)) <= eps (Bun and Steinke 2016, Prop. 1.3)."""
    L = math.log(1.0 / delta)
    return (math.sqrt(L + eps) - math.sqrt(L)) ** 2


def calibrate_steps(weights, eps: float, delta: float) -> StepNoise:
    """The smallest Laplace scale b for which steps of privacy loss ``a_i / b`` meet (eps, delta).

    Parameters
    ----------
    weights : array_like
        The public ``a_i`` of every step (one entry per step, > 0).
    eps : float
        The budget of the whole sequence (> 0).
    delta : float
        The delta allowed (in (0, 1)); used only when zCDP gives less noise than basic
        composition.

    Returns
    -------
    StepNoise
    """
    a = np.asarray(weights, dtype=float).ravel()
    if a.size == 0 or not np.all(a > 0):
        raise ValueError("every step needs a positive privacy weight")
    if not (eps > 0 and math.isfinite(eps)) or not 0 < delta < 1:
        raise ValueError(f"eps must be > 0 and delta in (0, 1); got eps={eps}, delta={delta}")
    b_basic = float(a.sum()) / eps
    b_zcdp = math.sqrt(float(np.sum(a ** 2)) / (2.0 * zcdp_rho_for(eps, delta)))
    if b_basic <= b_zcdp:
        return StepNoise(b_basic, "pure", eps, 0.0,
                         f"basic composition of {a.size} pure-DP steps")
    return StepNoise(b_zcdp, "approximate", eps, delta,
                     f"zCDP composition of {a.size} pure-DP steps (Bun and Steinke 2016)")


def composed_privacy(weights, scale: float, delta: float) -> dict:
    """What steps of loss ``a_i / scale`` guarantee: {"basic": eps, "zcdp": eps at delta}.

    The audits' independent recomputation of :func:`calibrate_steps` (no solving).
    """
    e = np.asarray(weights, dtype=float).ravel() / float(scale)
    rho = float(np.sum(e ** 2)) / 2.0
    return dict(basic=float(e.sum()), zcdp=rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta)))


def resolve_delta(delta, n: int, default: float) -> float:
    """The delta of a call: as given, or min(default, 1 / n^2) (n is public under row replacement)."""
    if delta is not None:
        return float(delta)
    return min(float(default), 1.0 / float(n) ** 2)
