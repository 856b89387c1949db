"""The private second moments of the released support: Laplace noise on [X_S, y]'[X_S, y].

The parametric bootstrap of :mod:`dpsubset.inference.bootstrap` needs a model to simulate
from: the coefficients, the noise level and the spread of the columns. All three are
functions of the second moments ``Z'Z`` of ``Z = [forced, X_S, y]`` (clipped and mapped),
so the inference stage releases that one matrix by sufficient statistics perturbation
(the mechanism of :mod:`dpsubset.refit.ssp`, on the augmented matrix) and everything
after it is post-processing (Ferrando, Wang and Sheldon 2022, section 4; docs/methods/inference.md).

Sensitivity (replace one row, public per-column bounds ``c_j`` of Z, the response's
bound last): a diagonal entry ``z_j^2`` lies in ``[0, c_j^2]`` and moves by at most
``c_j^2``; an off-diagonal ``z_j z_k`` lies in ``[-c_j c_k, c_j c_k]`` and moves by at
most ``2 c_j c_k``; over the upper triangle the L1 sum is ``(sum_j c_j)^2``. The audit
(tests/audit/test_inference_audit.py) checks it by brute force at the box's corners.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from ..mechanisms import noise
from ..refit.ssp import ssp_sensitivity

__all__ = ["NoisyMoments", "second_moment_sensitivity", "release_second_moments",
           "SimulationModel", "simulation_model", "symmetric_laplace", "gram_from_moments",
           "least_squares_from_moments"]


def second_moment_sensitivity(bounds, neighbour="replace-one"):
    """L1 sensitivity of the upper triangle of ``Z'Z`` under per-column bounds.

    Parameters
    ----------
    bounds : array_like, shape (m,)
        Public bounds ``|z_j| <= c_j`` of every column of Z (the response last).
    neighbour : {"replace-one", "add/remove"}

    Returns
    -------
    float
        ``(sum_j c_j)^2`` for replace-one.
    """
    c = np.asarray(bounds, dtype=float).ravel()
    if c.size == 0 or not np.all(np.isfinite(c) & (c > 0)):
        raise ValueError("bounds: every column of Z needs a finite public bound > 0")
    # refit/ssp.py's count for (X'X, X'y) with b_y = 0 is exactly the upper triangle of Z'Z
    return float(ssp_sensitivity(c, 0.0, neighbour))


@dataclass(frozen=True)
class NoisyMoments:
    """The released (noisy) second moments; public from here on.

    Attributes
    ----------
    ZtZ : ndarray, shape (m, m)
        Symmetric: the noisy upper triangle mirrored. The last row and column belong
        to the response.
    n : int
        Number of rows (public).
    eps : float
        Budget of the release (pure eps-DP).
    sensitivity : float
        L1 sensitivity of the upper triangle (public).
    """

    ZtZ: np.ndarray
    n: int
    eps: float
    sensitivity: float

    @property
    def scale(self):
        """Scale of the Laplace noise on each entry of the upper triangle."""
        return self.sensitivity / self.eps


def release_second_moments(ZtZ, n, bounds, *, eps, rng):
    """Pure eps-DP release of the upper triangle of ``Z'Z`` by Laplace noise.

    Parameters
    ----------
    ZtZ : ndarray, shape (m, m)
        Exact ``Z'Z`` of the clipped, mapped rows (``|z_ij| <= bounds[j]``).
    n : int
        Number of rows (public under replace-one).
    bounds : array_like, shape (m,)
        Public per-column bounds (1 for the intercept; the response's bound last).
    eps : float
        Budget (> 0).
    rng : numpy.random.Generator

    Returns
    -------
    NoisyMoments
    """
    ZtZ = np.asarray(ZtZ, dtype=float)
    sens = second_moment_sensitivity(bounds)
    noisy = noise.laplace_release_symmetric(ZtZ, sens / eps, rng)  # exact, on a public grid
    return NoisyMoments(ZtZ=noisy, n=int(n), eps=float(eps), sensitivity=sens)


def symmetric_laplace(rng, scale, m, size=()):
    """Laplace noise of ``scale`` on the upper triangle of m x m matrices, mirrored below:
    the noise law of :func:`release_second_moments` (``size`` stacks of it)."""
    iu = np.triu_indices(m)
    nu = np.zeros(tuple(size) + (m, m))
    nu[..., iu[0], iu[1]] = noise.laplace_noise(scale, rng, tuple(size) + (len(iu[0]),))
    return nu + np.swapaxes(np.triu(nu, 1), -1, -2)


@dataclass(frozen=True)
class SimulationModel:
    """The model the bootstrap simulates from (post-processing of released quantities).

    Attributes
    ----------
    coef : ndarray, shape (d,)
        The released coefficients (mapped units; the intercept first when there is one).
    sigma2 : float
        Error variance estimated from the noisy moments (may be below 0 at small eps).
    sigma2_floor : float
        Public floor of the variance the simulation uses, ``(b_y / 100)^2``.
    rss_weights : ndarray
        Weights of the noisy upper triangle in the residual sum of squares at ``coef``:
        the noise of the variance estimate is ``rss_weights @ nu / (n - d)`` for the
        Laplace noise vector ``nu`` (public law).
    noise_scale : float
        Scale of that Laplace noise.
    dof : int
        ``n - d``.
    mean : ndarray, shape (d - k0,)
        Means of the non-constant columns before clipping (0 without an intercept).
    cov : ndarray
        Their covariance before clipping (positive semi-definite): clipped to the public
        box, the simulated columns have the released means and variances.
    intercept : bool
        Whether column 0 is the constant 1.
    response : {"gaussian", "binary"}
        ``"gaussian"``: y = x'coef + normal errors (least squares, Huber);
        ``"binary"``: y = +1 with probability 1 / (1 + exp(-x'coef)), else -1 (logistic).
    """

    coef: np.ndarray
    sigma2: float
    sigma2_floor: float
    rss_weights: np.ndarray
    noise_scale: float
    dof: int
    mean: np.ndarray
    cov: np.ndarray
    intercept: bool
    response: str = "gaussian"

    def draw_response(self, A, rng):
        """The response of simulated rows A under the model (before the response's clipping)."""
        eta = A @ self.coef
        if self.response == "binary":
            return np.where(noise.uniform(rng, len(eta)) < 0.5 * (1.0 + np.tanh(0.5 * eta)), 1.0, -1.0)
        return eta + self.draw_sigma(rng) * noise.normal(rng, len(eta))

    def draw_sigma(self, rng):
        """One error standard deviation for a bootstrap replicate.

        The variance estimate carries Laplace noise of a public law; each replicate
        subtracts a fresh draw of that noise from the estimate, so that the bootstrap
        spreads over the variances the noisy moments leave plausible instead of
        trusting one noisy value (docs/methods/inference.md, "The noise level").
        """
        return float(self.draw_sigmas(rng, 1)[0])

    def draw_sigmas(self, rng, m):
        """m replicates' error standard deviations at once (:meth:`draw_sigma`'s law)."""
        nu = noise.laplace_noise(self.noise_scale, rng, (int(m), len(self.rss_weights)))
        return np.sqrt(np.maximum(self.sigma2 - nu @ self.rss_weights / self.dof, self.sigma2_floor))


def _psd(A, floor=0.0):
    """The nearest positive semi-definite matrix (eigenvalues clipped at ``floor``), for one
    matrix or a stack of them."""
    At = np.swapaxes(A, -1, -2)
    w, V = np.linalg.eigh(0.5 * (A + At))
    return (V * np.maximum(w, floor)[..., None, :]) @ np.swapaxes(V, -1, -2)


def _clipped_moments(mu, sd, c):
    """Mean and variance of clip(N(mu, sd^2), -c, c), elementwise (closed form)."""
    a, b = (-c - mu) / sd, (c - mu) / sd
    Pa, Pb, fa, fb = norm.cdf(a), norm.cdf(b), norm.pdf(a), norm.pdf(b)
    inside = Pb - Pa
    m1 = mu * inside + sd * (fa - fb) - c * Pa + c * (1.0 - Pb)
    m2 = (mu * mu * inside + 2.0 * mu * sd * (fa - fb) + sd * sd * (inside - (b * fb - a * fa))
          + c * c * (Pa + 1.0 - Pb))
    return m1, np.maximum(m2 - m1 * m1, 0.0)


def before_clipping(mean, cov, bounds, rounds=4):
    """Mean and covariance of the Gaussian whose clipped columns have ``mean`` and ``cov``.

    The simulation clips its Gaussian columns to the public box, as the design clips real
    rows; clipping shrinks a column's spread (a Gaussian with the variance 1/3 of a uniform
    column on [-1, 1] has variance 0.286 after clipping at 1), and a design simulated with
    too little spread gives intervals too wide. So each column's mean and standard
    deviation are chosen so that *after* clipping they match the released moments
    (bisection on the closed-form moments of a clipped normal, a few rounds alternating
    mean and spread); the correlations are kept.
    """
    sd_target = np.sqrt(np.diag(cov))
    c = np.asarray(bounds, dtype=float)
    var_target = sd_target ** 2
    mu = mean.copy()
    sd = sd_target.copy()
    for _ in range(rounds):
        lo, hi = np.full_like(sd, 1e-12), 1e3 * c
        for _ in range(60):  # the clipped variance grows with sd: bisection
            mid = 0.5 * (lo + hi)
            too_small = _clipped_moments(mu, mid, c)[1] < var_target
            lo, hi = np.where(too_small, mid, lo), np.where(too_small, hi, mid)
        sd = 0.5 * (lo + hi)
        mu = np.clip(mu + mean - _clipped_moments(mu, sd, c)[0], -c, c)
    scale = sd / np.maximum(sd_target, 1e-300)
    return mu, cov * np.outer(scale, scale)


def _rss_weights(coef, intercept):
    """Weights of the upper triangle of Z'Z in ``y'y - 2 coef'X'y + coef'X'X coef``."""
    v = np.append(-np.asarray(coef, dtype=float), 1.0)  # Z v = y - X coef
    m = len(v)
    iu = np.triu_indices(m)
    w = np.where(iu[0] == iu[1], 1.0, 2.0) * v[iu[0]] * v[iu[1]]
    if intercept:
        w[0] = 0.0  # the constant column's square is the public n, not a noisy entry
    return w


def simulation_model(moments, *, coef, intercept, x_bounds, b_y, response="gaussian"):
    """Noise level and column spread from the noisy moments, around the released coefficients.

    Parameters
    ----------
    moments : NoisyMoments
    coef : ndarray, shape (d,)
        The released coefficients (mapped units): the truth of the simulation. They are
        private already and far less noisy than a least-squares fit to the moments.
    intercept : bool
        Column 0 of Z is the constant 1 (its noisy diagonal is replaced by the public n).
    x_bounds : array_like, shape (d,)
        Public bounds of the d model columns (mapped units); they floor the
        variances so that a noisy matrix cannot give a degenerate design.
    b_y : float
        Public response bound.
    response : {"gaussian", "binary"}
        The response model (``"binary"`` for the logistic loss: the noise level is then
        not used).

    Returns
    -------
    SimulationModel
    """
    n = moments.n
    M = moments.ZtZ / n
    d = M.shape[0] - 1
    x_bounds = np.asarray(x_bounds, dtype=float)
    coef = np.asarray(coef, dtype=float)
    if intercept:
        M = M.copy()
        M[0, 0] = 1.0  # the constant column's square sums to n exactly: public
    dof = max(n - d, 1)
    v = np.append(-coef, 1.0)
    sigma2 = float(v @ M @ v) * n / dof
    # the variance floor of a column, (bound / 100)^2, keeps a noisy matrix from giving a
    # degenerate design; it is far below the spread of any column worth selecting
    floor = (x_bounds / 100.0) ** 2
    if intercept:
        mean = np.clip(M[0, 1:d], -x_bounds[1:], x_bounds[1:])
        cov = _psd(M[1:d, 1:d] - np.outer(mean, mean)) + np.diag(floor[1:])
        mean, cov = before_clipping(mean, cov, x_bounds[1:])
    else:
        mean = np.zeros(d)
        cov = _psd(M[:d, :d]) + np.diag(floor)
        _, cov = before_clipping(mean, cov, x_bounds)
    return SimulationModel(coef=coef, sigma2=sigma2, sigma2_floor=(b_y / 100.0) ** 2,
                           rss_weights=_rss_weights(coef, intercept), noise_scale=moments.scale,
                           dof=dof, mean=mean, cov=cov, intercept=intercept, response=response)


def gram_from_moments(ZtZ, n, *, intercept, x_bounds):
    """``X'X`` read from (noisy) ``Z'Z`` (the response last; one matrix or a stack): the
    constant column's square replaced by the public n, made positive semi-definite, with
    the variance floor of :func:`simulation_model`, ``n (bound / 100)^2`` per column, so that
    a noisy matrix cannot make a solve degenerate."""
    ZtZ = np.asarray(ZtZ, dtype=float)
    d = ZtZ.shape[-1] - 1
    G = ZtZ[..., :d, :d].copy()
    if intercept:
        G[..., 0, 0] = n
    return _psd(G) + np.diag(n * (np.asarray(x_bounds, dtype=float) / 100.0) ** 2)


def least_squares_from_moments(ZtZ, n, *, intercept, x_bounds):
    """Least-squares coefficients from (noisy) second moments, mapped units.

    ``(X'X)^{-1} X'y`` with ``X'X`` from :func:`gram_from_moments` and ``X'y`` read from
    ``Z'Z``: sufficient statistics perturbation's estimate (no ball), post-processing of
    the released moments.

    Parameters
    ----------
    ZtZ : ndarray, shape (..., d + 1, d + 1)
        One matrix or a stack of them.
    n : int
    intercept : bool
    x_bounds : array_like, shape (d,)

    Returns
    -------
    ndarray, shape (..., d)
    """
    ZtZ = np.asarray(ZtZ, dtype=float)
    d = ZtZ.shape[-1] - 1
    G = gram_from_moments(ZtZ, n, intercept=intercept, x_bounds=x_bounds)
    return np.linalg.solve(G, ZtZ[..., :d, d:])[..., 0]
