"""What the exact search hands to a mechanism: candidate supports and their certificates.

These objects hold non-private values (scores of supports). They live inside one call
to ``dp_best_subset`` and are never attached to a released result.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import comb

import numpy as np

__all__ = ["Certificate", "TopRCandidates", "MistakeCandidates", "GAP_TOL"]

# A solve counts as exact when upper - lower <= GAP_TOL * max(1, |upper|).
GAP_TOL = 1e-9


@dataclass(frozen=True)
class Certificate:
    """Optimality certificate of one combinatorial solve.

    Attributes
    ----------
    problem : str
        What was solved, in words ("best support", "best with >= 2 mistakes", ...).
    method : str
        "enumeration", "neighbourhood" (exhaustive over the one-swap neighbours),
        "branch_and_bound" (perspective-relaxation bounds, see
        docs/methods/branch-and-bound.md), "branch and bound" (the ridge-bound class
        search), "outer_approximation", among others.
    lower, upper : float
        Certified lower bound and attained value of the minimum score.
    iterations : int
        Outer-approximation iterations or branch-and-bound nodes (1 for enumeration).
    seconds : float
        Wall time of the solve.
    """

    problem: str
    method: str
    lower: float
    upper: float
    iterations: int = 1
    seconds: float = 0.0

    @property
    def gap(self) -> float:
        return max(0.0, self.upper - self.lower)

    @property
    def relative_gap(self) -> float:
        return self.gap / max(1.0, abs(self.upper))

    @property
    def closed(self) -> bool:
        return self.relative_gap <= GAP_TOL


@dataclass
class TopRCandidates:
    """The R best supports, exactly, in order (ties broken lexicographically).

    Attributes
    ----------
    supports : ndarray, shape (R, s)
        Sorted candidate indices, best support first.
    scores : ndarray, shape (R,)
    p, s : int
    certificates : list of Certificate
    completion_rounds : int
        Extra no-good-cut solves the completion step needed (0 where the
        paper's check passes at once).
    """

    supports: np.ndarray
    scores: np.ndarray
    p: int
    s: int
    certificates: list = field(default_factory=list)
    completion_rounds: int = 0

    @property
    def R(self) -> int:
        return len(self.scores)

    @property
    def n_supports(self) -> int:
        """C(p, s) as an exact Python int."""
        return comb(self.p, self.s)


@dataclass
class MistakeCandidates:
    """The best support S~_k in each mistake class P_k around S~_0 = argmin c.

    Attributes
    ----------
    center : ndarray, shape (s,)
        S~_0, the best support.
    supports : ndarray, shape (K + 1, s)
        S~_k for k = 0..K, K = min(s, p - s).
    scores : ndarray, shape (K + 1,)
    p, s : int
    second_best : float
        c(S_(2)), the second-smallest score over all supports (for the gap check).
    certificates : list of Certificate
    """

    center: np.ndarray
    supports: np.ndarray
    scores: np.ndarray
    p: int
    s: int
    second_best: float
    certificates: list = field(default_factory=list)
    #: Certified lower bounds of the class minima (None: every class is exact).
    lower: np.ndarray | None = None
    #: k -> callable refine(target=None) -> (support, score, Certificate, exact): see close().
    refiners: dict = field(default_factory=dict, repr=False)

    @property
    def open_classes(self) -> list[int]:
        """Classes whose minimum is only bracketed by [lower[k], scores[k]] so far."""
        if self.lower is None:
            return []
        return [k for k in range(len(self.scores))
                if self.scores[k] - self.lower[k] > GAP_TOL * max(1.0, abs(self.scores[k]))]

    def close(self, k: int, target: float | None = None) -> None:
        """Tighten the bracket of class k against ``target``, or solve it exactly.

        With a target the refiner decides which side of the target the class
        minimum lies on: either it proves the minimum >= target (the lower end of the
        bracket rises) or it finds a member scoring below the target (the upper end
        falls to that member's score). Either outcome settles a comparison in the
        lazy sampler without solving the class to optimality. With no target the
        class is solved exactly.
        """
        S, v, cert, exact = self.refiners[k](target)
        if S is None:  # bound proved: minimum >= cert.lower >= target
            self.lower[k] = max(self.lower[k], cert.lower)
            self.certificates.append(cert)
        elif exact:
            self.supports[k], self.scores[k], self.lower[k] = S, v, v
            self.certificates.append(cert)
        elif v < self.scores[k]:  # a better member: the upper end of the bracket falls
            self.supports[k], self.scores[k] = S, v

    @property
    def class_sizes(self) -> list[int]:
        """|P_k| = C(s, k) C(p - s, k) as exact Python ints."""
        return [comb(self.s, k) * comb(self.p - self.s, k) for k in range(len(self.scores))]

    @property
    def gap(self) -> float:
        """c(S_(2)) - c(S_(1)); its sensitivity is 2 Delta."""
        return self.second_best - float(self.scores[0])
