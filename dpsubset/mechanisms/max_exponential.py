"""Exact report-noisy-max with the maximum of m exponentials (the DP-SIS screen's race).

The canonical Lipschitz top-k mechanism (DP-SIS; :mod:`dpsubset.selection.baselines.dp_sis`)
releases argmax_c (u_c + M_c) over utility classes c, where u_c is the class's scaled utility
and M_c the largest of the m_c i.i.d. standard exponential noises of its members: the
report-noisy-max with exponential noise over all k-subsets, one class at a time. M_c has
the distribution function (1 - e^-x)^m, so M_c = -log(1 - U^(1/m)) = -log(-expm1(log(U) / m))
for U uniform on (0, 1), an increasing function of U.

:class:`MaxExponentialRace` decides that argmax for *real* uniforms U_c known bit by bit,
exactly as :class:`~dpsubset.mechanisms.noise.GumbelRace` does for Gumbel noise (the race's
bits, and every random draw, come from :mod:`dpsubset.mechanisms.noise`): float intervals
for u_c + M_c from the first 53 bits, padded by a bound on their rounding; where two
intervals overlap (probability about K 2^-40), more bits of the contenders' uniforms and
decimal arithmetic at a precision that grows with the bits. The winner is the argmax of a
race of real numbers, so the draw has exactly the mechanism's law for the float utilities
given: nothing of the floating-point samplers' low-order bits is released (Mironov 2012).
"""
from __future__ import annotations

from decimal import Decimal, localcontext

import numpy as np

from .noise import GumbelRace

__all__ = ["MaxExponentialRace", "max_exponential_argmax"]

# relative pad on the float bounds: the few roundings of log, exp, expm1 and log (each a
# few ulp, times the size of the terms), far above the true error and far below a gap
# that the race could not see
_PAD = 2.0 ** -40


def _max_exp_float(log_u, log_m):
    """M = -log(-expm1(log U / m)) in floating point (elementwise; log U <= 0).

    Where log U / m underflows (astronomically large m), M = log m - log(-log U) to double
    precision.
    """
    a = -log_u * np.exp(-log_m)  # -log(U) / m >= 0
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        val = -np.log(-np.expm1(-a))
        tiny = a < 1e-300
        alt = log_m - np.log(-log_u)
    return np.where(tiny, alt, val)


class MaxExponentialRace(GumbelRace):
    """Exact argmax_c (u_c + M_c), M_c the maximum of exp(log_m[c]) standard exponentials.

    Parameters
    ----------
    log_m : array_like, shape (K,)
        log of each class's size (floats, >= 0).
    rng : numpy.random.Generator
    first_bits : int
        Bits of the first uniform of each class (53; tests use fewer to exercise the
        decimal refinement).
    """

    def __init__(self, log_m, rng, first_bits: int = 53):
        self.log_m = np.asarray(log_m, dtype=float)
        if self.log_m.ndim != 1 or not np.all(np.isfinite(self.log_m)) or np.any(self.log_m < 0):
            raise ValueError("log_m must be a finite vector of logs of class sizes (>= 0)")
        super().__init__(self.log_m.size, rng, first_bits=first_bits)
        scale = 2.0 ** -self.first_bits
        u = self.u.astype(float)  # exact: fewer than 54 bits
        with np.errstate(divide="ignore"):
            self._g_lo = _max_exp_float(np.log(u * scale), self.log_m)            # U = 0: M = 0
            self._g_hi = _max_exp_float(np.log((u + 1.0) * scale), self.log_m)    # U = 1: +inf
        self._g_lo = np.where(u == 0, 0.0, self._g_lo)

    def approx(self) -> np.ndarray:
        """A float value inside each M_c's interval."""
        return np.where(np.isfinite(self._g_hi), self._g_hi, self._g_lo + 1.0)

    def interval(self, lw_lo, lw_hi):
        """Rigorous bounds on u_c + M_c when u_c is in [lw_lo, lw_hi] (floats)."""
        lo, hi = super().interval(lw_lo, lw_hi)
        extra = _PAD * (self.log_m + np.abs(self.approx()))  # the terms GumbelRace's pad omits
        with np.errstate(invalid="ignore"):
            return lo - extra, hi + extra

    def _decimal_bounds(self, k: int, lw: float):
        """Decimal bounds on lw + M_k at a precision that grows with the bits of U_k.

        -expm1(y) for y = log(U) / m near 0 is summed as a series (no cancellation); the pad
        covers a thousand units of the precision carried.
        """
        u, b = self._bits(k)
        digits = (b * 31) // 100 + int(self.log_m[k] / 2.3) + 1  # about b log10(2) + log10(m)
        prec = 40 + 2 * digits
        with localcontext() as ctx:
            ctx.prec = prec
            scale = Decimal(2) ** b
            lw = Decimal(lw)
            inv_m = (-Decimal(float(self.log_m[k]))).exp()
            tol = Decimal(10) ** (-prec)
            out = []
            for x, sign in ((Decimal(u) / scale, -1), (Decimal(u + 1) / scale, 1)):
                if x == 0:
                    out.append(lw - 1)  # M >= 0 > -1
                    continue
                if x == 1:
                    out.append(Decimal("Infinity"))
                    continue
                y = x.ln() * inv_m  # < 0
                if y > Decimal("-1e-3"):
                    term, total, j = -y, -y, 1  # -expm1(y) = -(y + y^2/2! + ...)
                    while abs(term) > tol * abs(total):
                        j += 1
                        term = term * y / j
                        total -= term
                else:
                    total = 1 - y.exp()
                g = -total.ln()
                pad = Decimal(10) ** (3 - prec + digits + 1) * (1 + abs(g) + abs(lw))
                out.append(lw + g + sign * pad)
        return out


def max_exponential_argmax(utility, log_m, rng, *, first_bits: int = 53) -> int:
    """Draw argmax_c (utility[c] + M_c) exactly, M_c the maximum of exp(log_m[c]) standard
    exponentials (one draw; :class:`MaxExponentialRace`)."""
    return MaxExponentialRace(log_m, rng, first_bits=first_bits).argmax(np.asarray(utility, dtype=float))
