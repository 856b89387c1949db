"""What the exact search needs of a scorer, as :class:`typing.Protocol` classes.

The search never imports the scores (:mod:`dpsubset.scores`): a scorer is passed in,
and what the search may call on it is written down here. Each route asks for the
protocol it needs with ``isinstance`` (the protocols are runtime-checkable), so a
scorer that lacks a route's hooks is sent to another route instead of failing inside
it:

- :class:`Scorer`: every route (scores of batches of supports, fits, the one-swap
  neighbourhood, outer-approximation cuts, the warm starts);
- :class:`ClassBoundScorer`: the analytic certificates (class lower bounds and the
  exact rank-two search of the two-mistake class);
- :class:`RestrictableScorer`: a mistake class solved as one best-subset problem per
  base (the scorer of the same data with some candidates moved to the always-in block);
- :class:`SquaredLossScorer`: the routes built on the second moments of the
  least-squares score (the perspective branch and bound, the class search by Schur
  complements, formulation (9) for Pyomo and SCIP, iterative hard thresholding from
  the Gram matrix alone);
- :class:`SinglePrecisionScorer`: a scorer that keeps a single-precision copy of X,
  which the warm start's products use at large p.

``isinstance`` against a runtime-checkable protocol checks only that the attributes
exist, not their types or signatures; the routes that need the squared loss itself
also check ``scorer.loss == "squared"``.

Every value a scorer returns is a function of the private data and stays inside the
call (see :mod:`dpsubset.search.limits` for what messages may say).
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["Scorer", "ClassBoundScorer", "RestrictableScorer", "SquaredLossScorer",
           "ConvexDualScorer", "SinglePrecisionScorer"]


@runtime_checkable
class Scorer(Protocol):
    """Exact scores c(S) of size-s supports on one dataset: what every search route uses.

    Supports are integer arrays of candidate indices, one support per row, each row
    sorted increasingly; coefficient vectors are ordered [always-in..., support...].

    Attributes
    ----------
    p : int
        Number of candidate columns.
    n : int
        Number of rows.
    k_forced : int
        Number of always-in columns (the intercept, forced terms).
    lam : float
        Ridge parameter, in the sum-form normalisation of the paper.
    r : float
        Radius of the coefficient ball.
    loss : str
        Name of the loss ("squared", "logistic", ...).
    X, y, forced : ndarray or None
        The candidate columns, the response and the always-in columns; None for a
        scorer that holds only the sufficient statistics (the Gram route).
    n_scored : int
        Supports scored so far (the search reads it to time one score).
    """

    p: int
    n: int
    k_forced: int
    lam: float
    r: float
    loss: str
    X: object
    y: object
    forced: object
    n_scored: int

    def score(self, supports):
        """Exact scores of a batch of supports, shape (m,)."""

    def fit(self, supports):
        """(scores, coefficients) of a batch of supports."""

    def neighbourhood(self, support):
        """The one-swap neighbours of ``support`` and their exact scores."""

    def cut(self, support):
        """(c(S), gradient of c at the binary point of S): an outer-approximation cut."""


@runtime_checkable
class ClassBoundScorer(Scorer, Protocol):
    """A scorer that bounds mistake classes: the analytic certificates of the search."""

    def class_lower_bounds(self, support, ks, target=None):
        """Certified lower bounds {k: bound} on the best score of mistake classes ``ks``
        around ``support`` (refined only until they clear ``target`` when given)."""

    def two_swap(self, support, keep, threshold=float("inf"), other_values=None):
        """The ``keep`` best supports with exactly two elements outside ``support``:
        (supports, scores, bound), every member not returned scoring >= bound."""


@runtime_checkable
class RestrictableScorer(Scorer, Protocol):
    """A scorer that can restrict itself to some candidates, moving others to the
    always-in block with the scores unchanged (mistake classes by subproblems)."""

    def restricted(self, columns, always_in=()):
        """The scorer of the same data over candidates ``columns`` with the candidates
        ``always_in`` always in."""


@runtime_checkable
class SquaredLossScorer(Scorer, Protocol):
    """A least-squares scorer exposing its second moments (all divided by n).

    The perspective branch and bound, the class search by Schur complements, the
    Pyomo/SCIP formulation and the Gram-route warm start are written in these.

    Attributes
    ----------
    lam_n : float
        lam / n.
    yy : float
        y'y / n.
    Xy, Fy : ndarray
        X'y / n and F'y / n (F: the always-in columns).
    FF, XF : ndarray
        F'F / n and X'F / n.
    Xdiag : ndarray
        The diagonal of X'X / n.
    _gram : ndarray or None
        X'X / n where the scorer stores it (None: columns are computed from X).
    """

    lam_n: float
    yy: float
    Xy: object
    Fy: object
    FF: object
    XF: object
    Xdiag: object
    _gram: object

    def _dual_shift(self, support):
        """The ball multiplier of the fit on ``support`` (0 where the ball is slack)."""


@runtime_checkable
class ConvexDualScorer(Scorer, Protocol):
    """A convex-loss scorer with its data in memory and its loss object: what the
    Fenchel branch and bound (:mod:`dpsubset.search.fenchel`) needs.

    Attributes
    ----------
    loss_fn : dpsubset.losses.Loss
        The per-row loss (value, derivative, conjugate).
    lam_n : float
        lam / n.
    XT : ndarray, shape (p, n)
        The candidate columns as contiguous rows (X.T): a few rows of it are read where
        a column of X would be gathered.
    """

    loss_fn: object
    lam_n: float
    XT: object

    def bracket(self, supports, newton_steps=1):
        """Certified (lower, upper) ends of the scores of a batch of supports."""


@runtime_checkable
class SinglePrecisionScorer(Scorer, Protocol):
    """A scorer with a single-precision copy of its candidate columns (made once, kept
    for its own bounds): the warm start's products use it where X is large."""

    wants_single_precision: bool  # whether X is large enough for the copy to pay

    def single_precision_X(self):
        """X in single precision (the same array on every call)."""
