"""AdaSSP: adaptive sufficient-statistics perturbation for least squares (Wang 2018).

Wang (2018), "Revisiting differentially private linear regression", Algorithm 2: release
noisy X'X and X'y with the Gaussian mechanism, and a noisy smallest eigenvalue of X'X
that sets a ridge just large enough to keep the noisy X'X well conditioned; the
estimate is (X'X~ + lambda I)^{-1} X'y~. Everything after the three releases is
post-processing.

A refit peer of the package's objective perturbation, for the benchmarks
(bench/peers.py) and for users who want it on a released support. It is not a
``dp_best_subset`` refit option: the package's refits solve over the public ball of
radius r_refit, carry an optimality certificate and are replayed by the inference
bootstrap; AdaSSP has no ball and is (eps, delta)-DP only.

Sensitivities under row replacement (public bounds)
---------------------------------------------------
Every row z of the design (the support's columns, always-in columns included) has
||z|| <= B = sqrt(B_s) (:func:`dpsubset.privacy.sensitivity.largest_row_norm`) and |y| <= b_y.
Replacing z by w:

* lambda_min(Z'Z) moves by at most B^2 (Weyl: zz' - ww' has eigenvalues in [-B^2, B^2]);
* ||zz' - ww'||_F^2 = ||z||^4 + ||w||^4 - 2 (z'w)^2 <= 2 B^4, so the upper triangle of
  Z'Z (each entry once) moves by at most sqrt(2) B^2 in l2;
* ||z y - w y'|| <= 2 B b_y.

Wang states the add/remove constants (B^2, B^2, B b_y) with eps / 3 and the Gaussian
mechanism's classic calibration for each release. Here each release gets a third of
rho, the zCDP budget of (eps, delta) (Bun and Steinke 2016: a Gaussian release of
l2 sensitivity D with standard deviation sigma is D^2 / (2 sigma^2)-zCDP; the three add
up, and rho-zCDP gives (rho + 2 sqrt(rho log(1/delta)), delta)-DP), which holds for
every eps (the classic calibration needs eps < 1).

Sampling. Each release is ``noise.gaussian_release``: the statistic rounded to a public
power-of-two grid 2^-44 of its standard deviation plus exact discrete Gaussian noise
(Canonne, Kamath and Steinke 2020), with the standard deviation padded by a relative
2^-20 to pay for the rounding; the discrete Gaussian has the continuous one's zCDP, so
the accounting above holds for the program as run, not only for its idealisation.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..privacy.sensitivity import largest_row_norm
from ..mechanisms.noise import gaussian_release

__all__ = ["adassp", "AdaSSPResult", "adassp_noise"]


@dataclass(frozen=True)
class AdaSSPResult:
    """The private coefficients and what they spent.

    Attributes
    ----------
    coef : ndarray, shape (d,)
    eps, delta : float
    ridge : float
        The ridge lambda the noisy smallest eigenvalue chose (post-processing).
    sigmas : dict
        Public standard deviations of the three releases (``lambda_min``, ``gram``, ``xy``).
    """

    coef: np.ndarray
    eps: float
    delta: float
    ridge: float
    sigmas: dict


def adassp_noise(row_bound, b_y, eps, delta):
    """Public standard deviations of the three Gaussian releases (a third of rho each).

    Returns
    -------
    dict with ``lambda_min``, ``gram``, ``xy``.
    """
    L = math.log(1.0 / delta)
    rho = (math.sqrt(L + eps) - math.sqrt(L)) ** 2          # Bun and Steinke 2016, Prop. 1.3
    per = rho / 3.0
    B2 = row_bound ** 2
    sens = dict(lambda_min=B2, gram=math.sqrt(2.0) * B2, xy=2.0 * row_bound * b_y)
    return {k: v / math.sqrt(2.0 * per) for k, v in sens.items()}


def adassp(A, y, *, row_bound, b_y, eps, delta, rng, failure=0.05):
    """AdaSSP least squares on a clipped design (Wang 2018, Algorithm 2).

    Parameters
    ----------
    A : array_like, shape (n, d)
        Clipped design of the support (always-in columns included), rows of norm <= row_bound.
    y : array_like, shape (n,)
        Clipped response, |y| <= b_y.
    row_bound : float
        Public bound of every row's norm, e.g. ``largest_row_norm(x_bounds[S], s, forced_bounds)``.
    b_y : float
    eps, delta : float
        The budget; the release is (eps, delta)-DP under row replacement.
    rng : numpy.random.Generator
    failure : float
        Wang's rho: the probability allowed for the ridge to be too small for the noise.

    Returns
    -------
    AdaSSPResult
    """
    A = np.asarray(A, dtype=float)
    y = np.asarray(y, dtype=float)
    d = A.shape[1]
    sig = adassp_noise(row_bound, b_y, eps, delta)
    _check_grid_resolution(sig, row_bound, b_y, d)
    G = A.T @ A
    lam_min = float(np.linalg.eigvalsh(G)[0])
    # the noisy smallest eigenvalue, shifted down so that it is below the true one w.h.p.
    lam_min_dp = max(gaussian_release(lam_min, sig["lambda_min"], rng)
                     - sig["lambda_min"] * math.sqrt(2.0 * math.log(3.0 / failure)), 0.0)
    # Wang's ridge: a high-probability bound on the noise matrix's size, less what X'X has
    ridge = max(0.0, math.sqrt(d * math.log(2.0 * d * d / failure)) * sig["gram"] - lam_min_dp)
    iu = np.triu_indices(d)                           # one draw per upper-triangle entry
    upper = np.zeros((d, d))
    upper[iu] = gaussian_release(G[iu], sig["gram"], rng)
    G_dp = upper + np.triu(upper, 1).T
    b_dp = gaussian_release(A.T @ y, sig["xy"], rng)
    M = G_dp + ridge * np.eye(d)
    try:
        coef = np.linalg.solve(M, b_dp)
    except np.linalg.LinAlgError:
        coef = np.linalg.lstsq(M, b_dp, rcond=None)[0]
    return AdaSSPResult(coef=coef, eps=float(eps), delta=float(delta), ridge=ridge, sigmas=sig)


def _check_grid_resolution(sig, row_bound, b_y, d):
    """The exact Gaussian releases keep their zCDP only if the sensitivity is at least
    sqrt(m) 2^-24 standard deviations (m coordinates; noise.gaussian_release): true for
    any workable budget, checked so that it is never silently false."""
    sens = dict(lambda_min=row_bound ** 2, gram=math.sqrt(2.0) * row_bound ** 2, xy=2.0 * row_bound * b_y)
    count = dict(lambda_min=1, gram=d * (d + 1) // 2, xy=d)
    for key, sd in sig.items():
        if sens[key] / sd < math.sqrt(count[key]) * 2.0 ** -24:
            raise ValueError(f"AdaSSP: eps is too small for the exact Gaussian release of {key} "
                             "(the sensitivity is below 2^-24 standard deviations); raise eps")


def support_row_bound(x_bounds, support, forced_bounds):
    """sqrt(B_s) of a support: the row-norm bound AdaSSP needs (public)."""
    idx = list(support)
    return largest_row_norm(np.asarray(x_bounds, float)[idx], len(idx), forced_bounds)
