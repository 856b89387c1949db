"""Synthetic data from the simulation protocol of the source paper.

The generators reproduce the designs of Section 5 (sparse linear regression)
and Appendix D.2 (sparse classification) of Prastakos, Behdin and Mazumder,
"Differentially Private High-dimensional Variable Selection via Integer
Programming" (NeurIPS 2025):

* rows ``x_i ~ N(0, Sigma)`` i.i.d. with the Toeplitz (AR(1)) covariance
  ``Sigma_jk = rho ** |j - k|``;
* an ``s``-sparse ``beta*`` whose nonzero entries all equal ``1 / sqrt(s)``
  and sit at the 1-based positions ``1, 3, ..., 2s - 1`` (0-based
  ``0, 2, ..., 2s - 2``);
* Gaussian noise whose size is fixed by the signal-to-noise ratio, which the
  paper defines on the *realised* vectors,
  ``SNR = ||X beta*||_2^2 / ||eps||_2^2``.

SNR convention
--------------
The paper states ``eps ~ N(0, sigma^2 I_n)`` and defines the SNR as the ratio
of the realised squared norms above; it never refers to the population signal
variance ``beta*' Sigma beta*``.  We therefore calibrate on the realised
vectors: draw ``e ~ N(0, I_n)`` and set

    eps = e * ||X beta*||_2 / (sqrt(snr) * ||e||_2),

so that ``||X beta*||^2 / ||eps||^2 == snr`` holds exactly (up to floating
point rounding) in every draw.  The effective noise level is then
``sigma = ||X beta*|| / (sqrt(snr) * ||e||)``, a data-dependent number close to
``sqrt(beta*' Sigma beta* / snr)`` for large ``n``.  This is also what the
authors' published experiment code does (it rescales a Gaussian noise draw by
exactly this factor).

Covariance
----------
The design is generated without forming the ``p x p`` covariance: each row is
a stationary Gaussian AR(1) sequence along the feature index,

    x_1 = e_1,    x_j = rho * x_{j-1} + sqrt(1 - rho^2) * e_j,

with ``e_j`` i.i.d. standard normal, whose covariance is exactly
``rho ** |j - k|`` with unit variances.  The recursion is run by
:func:`scipy.signal.lfilter` on blocks of rows, so time and memory are
``O(n p)`` (the output itself, ``8 n p`` bytes in float64, plus a block of a
few tens of megabytes).
"""

from __future__ import annotations

from dataclasses import dataclass

import math

import numpy as np
import pandas as pd
from scipy.signal import lfilter
from scipy.special import expit

from .._validation import is_integer, is_real
from ..mechanisms import noise
from ..mechanisms.sampling import as_generator

__all__ = [
    "Simulation",
    "make_regression",
    "make_classification",
    "true_coefficients",
    "true_support",
]

# Number of float64 entries generated per block of rows in the AR(1) design
# (4 Mi entries = 32 MiB per temporary array).
_BLOCK_ENTRIES = 1 << 22


# ----------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Simulation:
    """The simulated data of a recovery study (:func:`dpsubset.studies.experiments.recovery_study`).

    Parameters
    ----------
    snr, rho : float
        Signal-to-noise ratio and AR(1) correlation of :func:`make_regression` (the paper's
        Section 5: 5 and 0.1).
    noise : {"gaussian", "t3"}
        The paper's Gaussian noise, or Student t with 3 degrees of freedom (heavy tails) at
        the same realised SNR.
    generator : callable, optional
        ``generator(n, p, s, rng) -> (X, y, true_support)`` instead of the paper's generator
        (``snr``, ``rho`` and ``noise`` are then unused); a module-level function, so that
        joblib can send it to workers.
    """

    snr: float = 5.0
    rho: float = 0.1
    noise: str = "gaussian"
    generator: object = None

    def __post_init__(self):
        if self.noise not in ("gaussian", "t3"):
            raise ValueError(f"Simulation.noise must be 'gaussian' or 't3', got {self.noise!r}")
        if self.generator is not None and not callable(self.generator):
            raise TypeError("Simulation.generator must be a function generator(n, p, s, rng)")


def _check_int(name, value, minimum):
    if not is_integer(value):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def _check_args(n, p, s, rho, snr):
    n = _check_int("n", n, 1)
    p = _check_int("p", p, 1)
    s = _check_int("s", s, 1)
    if 2 * s - 1 > p:
        raise ValueError(
            f"the support {{1, 3, ..., 2s-1}} needs p >= 2s - 1 = {2 * s - 1}, got p = {p}"
        )
    if not is_real(rho) or not -1.0 < float(rho) < 1.0:
        raise ValueError(f"rho must be a real number in (-1, 1), got {rho!r}")
    if not is_real(snr) or not float(snr) > 0.0:
        raise ValueError(f"snr must be a positive number (np.inf for no noise), got {snr!r}")
    return n, p, s, float(rho), float(snr)


def true_support(p, s=5):
    """0-based indices of the nonzero coefficients of ``beta*``.

    Parameters
    ----------
    p : int
        Number of features.
    s : int, default 5
        Sparsity; requires ``p >= 2 s - 1``.

    Returns
    -------
    numpy.ndarray of int64
        ``[0, 2, ..., 2s - 2]``, i.e. the paper's 1-based positions
        ``1, 3, ..., 2s - 1``.
    """
    p = _check_int("p", p, 1)
    s = _check_int("s", s, 1)
    if 2 * s - 1 > p:
        raise ValueError(f"need p >= 2s - 1 = {2 * s - 1}, got p = {p}")
    return np.arange(0, 2 * s - 1, 2, dtype=np.int64)


def true_coefficients(p, s=5):
    """The coefficient vector ``beta*`` used by both generators.

    Parameters
    ----------
    p : int
        Number of features.
    s : int, default 5
        Sparsity; requires ``p >= 2 s - 1``.

    Returns
    -------
    numpy.ndarray of float64, shape (p,)
        ``1 / sqrt(s)`` at :func:`true_support` and zero elsewhere, so that
        ``||beta*||_2 = 1``.
    """
    support = true_support(p, s)
    beta = np.zeros(p, dtype=np.float64)
    beta[support] = 1.0 / math.sqrt(s)
    return beta


def _ar1_design(n, p, rho, rng):
    """Draw an ``(n, p)`` float64 matrix with i.i.d. N(0, [rho^|j-k|]) rows."""
    X = np.empty((n, p), dtype=np.float64)
    rows = max(1, min(n, _BLOCK_ENTRIES // p))
    c = math.sqrt(1.0 - rho * rho)
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        block = X[start:stop]  # C-contiguous view, filled in place
        noise.normal(rng, out=block)
        if rho == 0.0:
            continue
        # y_j = c e_j + rho y_{j-1}; the initial state (1 - c) e_1 makes
        # y_1 = e_1, i.e. the chain starts in its stationary N(0, 1) law.
        zi = (1.0 - c) * block[:, :1]
        block[...], _ = lfilter([c], [1.0, -rho], block, axis=1, zi=zi)
    return X


def _signal_and_noise(X, s, snr, rng):
    """Return ``X beta*`` and noise scaled to the realised SNR."""
    support = true_support(X.shape[1], s)
    signal = X[:, support].sum(axis=1) * (1.0 / math.sqrt(s))
    e = noise.normal(rng, X.shape[0])
    if math.isinf(snr):
        return signal, np.zeros_like(e)
    e_norm = np.linalg.norm(e)
    scale = np.linalg.norm(signal) / (math.sqrt(snr) * e_norm) if e_norm > 0 else 0.0
    return signal, e * scale


def _frame(X, y):
    names = [f"x{j + 1}" for j in range(X.shape[1])]
    df = pd.DataFrame(X, columns=names, copy=False)
    df.insert(0, "y", y)
    return df


# ----------------------------------------------------------------------------
# public generators
# ----------------------------------------------------------------------------
def make_regression(n, p, s=5, *, rho=0.1, snr=5.0, random_state=None, as_frame=False):
    """Sparse linear-regression data of the paper's Section 5.

    Draws ``y = X beta* + eps`` with rows of ``X`` i.i.d.
    ``N(0, Sigma)``, ``Sigma_jk = rho ** |j - k|``, ``beta*`` equal to
    ``1 / sqrt(s)`` at the 1-based positions ``1, 3, ..., 2s - 1`` and zero
    elsewhere, and Gaussian noise scaled so that the realised ratio
    ``||X beta*||^2 / ||eps||^2`` equals `snr` exactly (see the module
    docstring for why the realised rather than the population signal is
    used).

    Parameters
    ----------
    n : int
        Number of observations, ``n >= 1``.
    p : int
        Number of features, ``p >= 2 s - 1``.
    s : int, default 5
        Number of nonzero coefficients.
    rho : float, default 0.1
        Correlation of adjacent features, ``-1 < rho < 1``.
    snr : float, default 5.0
        Signal-to-noise ratio ``||X beta*||^2 / ||eps||^2``; ``np.inf`` gives
        noiseless responses.
    random_state : None, int or numpy.random.Generator, optional
        Source of randomness.  The same int always gives bit-identical data;
        a Generator is used (and advanced) in place.
    as_frame : bool, default False
        Return a :class:`pandas.DataFrame` instead of arrays.

    Returns
    -------
    X : numpy.ndarray of float64, shape (n, p)
        Design matrix (C-contiguous).  Only with ``as_frame=False``.
    y : numpy.ndarray of float64, shape (n,)
        Responses.  Only with ``as_frame=False``.
    true_support : numpy.ndarray of int64, shape (s,)
        0-based indices ``[0, 2, ..., 2s - 2]`` of the nonzero coefficients.
        With ``as_frame=True`` a list of column names ``["x1", "x3", ...]``.
    frame : pandas.DataFrame, shape (n, p + 1)
        With ``as_frame=True``, returned as ``(frame, true_support)``: column
        ``y`` followed by ``x1, ..., xp`` (1-based names, as in the paper).

    Notes
    -----
    The design costs ``8 n p`` bytes; ``n = 1000, p = 100_000`` is 800 MB and
    takes a few seconds, most of it spent drawing the ``n p`` standard
    normal numbers.  Random numbers are consumed in a fixed order
    (design first, then noise), so regression and classification data drawn
    with the same seed share the same ``X``.

    Examples
    --------
    >>> X, y, S = make_regression(200, 50, random_state=0)
    >>> X.shape, y.shape, S.tolist()
    ((200, 50), (200,), [0, 2, 4, 6, 8])
    >>> signal = X[:, S].sum(axis=1) / np.sqrt(5)
    >>> round(float(np.sum(signal**2) / np.sum((y - signal) ** 2)), 10)
    5.0
    """
    n, p, s, rho, snr = _check_args(n, p, s, rho, snr)
    rng = as_generator(random_state)
    X = _ar1_design(n, p, rho, rng)
    signal, eps = _signal_and_noise(X, s, snr, rng)
    y = signal + eps
    support = true_support(p, s)
    if as_frame:
        return _frame(X, y), [f"x{j + 1}" for j in support]
    return X, y, support


def make_classification(n, p, s=5, *, rho=0.1, snr=5.0, random_state=None, as_frame=False):
    """Sparse binary-classification data of the paper's Appendix D.2.

    A latent ``z = X beta* + eps`` is drawn exactly as in
    :func:`make_regression` (same design, same ``beta*``, noise scaled so
    that ``||X beta*||^2 / ||eps||^2 = snr``).  Then ``u_i ~ Uniform[0, 1]``
    independently and

        y_i = +1 if u_i < sigmoid(z_i) else -1,   sigmoid(z) = 1 / (1 + exp(-z)),

    so that ``P(y_i = +1 | z_i) = sigmoid(z_i)``: a logistic link applied to
    a noisy linear predictor.

    Parameters
    ----------
    n : int
        Number of observations, ``n >= 1``.
    p : int
        Number of features, ``p >= 2 s - 1``.
    s : int, default 5
        Number of nonzero coefficients.
    rho : float, default 0.1
        Correlation of adjacent features, ``-1 < rho < 1``.
    snr : float, default 5.0
        Signal-to-noise ratio of the latent ``z``; ``np.inf`` drops the latent
        noise (plain logistic model).
    random_state : None, int or numpy.random.Generator, optional
        Source of randomness; the same int gives bit-identical data.
    as_frame : bool, default False
        Return a :class:`pandas.DataFrame` instead of arrays.

    Returns
    -------
    X : numpy.ndarray of float64, shape (n, p)
        Design matrix.  Only with ``as_frame=False``.
    y : numpy.ndarray of int64, shape (n,)
        Labels in ``{-1, +1}``.  Only with ``as_frame=False``.
    true_support : numpy.ndarray of int64, shape (s,)
        0-based indices ``[0, 2, ..., 2s - 2]``; with ``as_frame=True`` the
        list of names ``["x1", "x3", ...]``.
    frame : pandas.DataFrame, shape (n, p + 1)
        With ``as_frame=True``, returned as ``(frame, true_support)``: an
        integer column ``y`` holding the same two values ``-1`` and ``+1``,
        followed by ``x1, ..., xp``.

    Notes
    -----
    The paper's text writes the rule with the opposite inequality
    (``y_i = 1`` if ``u_i > sigmoid(z_i)``), which would make
    ``P(y = +1) = sigmoid(-z)``, i.e. the same model with ``beta*``
    replaced by ``-beta*``.  The authors' published experiment code uses
    ``u_i < sigmoid(z_i)``; we follow the code and the usual logistic
    convention, so that positive coefficients favour the label ``+1``.  The
    true support, which is what the selection methods recover, is the same
    under both readings.

    The population variance of the latent signal is
    ``beta*' Sigma beta* = 1 + (2/s) sum_{d=1}^{s-1} (s - d) rho^(2d)``
    (about 1.016 for ``s = 5, rho = 0.1``), so ``|z|`` is typically of order
    one and the labels are noisy; this is the paper's design.

    Examples
    --------
    >>> X, y, S = make_classification(100, 20, random_state=1)
    >>> sorted(set(y.tolist()))
    [-1, 1]
    """
    n, p, s, rho, snr = _check_args(n, p, s, rho, snr)
    rng = as_generator(random_state)
    X = _ar1_design(n, p, rho, rng)
    signal, eps = _signal_and_noise(X, s, snr, rng)
    u = noise.uniform(rng, n)
    y = np.where(u < expit(signal + eps), 1, -1).astype(np.int64)
    support = true_support(p, s)
    if as_frame:
        return _frame(X, y), [f"x{j + 1}" for j in support]
    return X, y, support
