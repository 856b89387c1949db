"""Scores: the exact (least squares) and certified (Huber, logistic, hinge) scores c(S) of supports.

The selection's exponential-type mechanisms rank supports by

    c(S) = min_{||beta||_2 <= r} (1/n) sum_i l(x_{i,K+S}' beta; y_i) + (lam/2n) ||beta||^2

on the clipped, mapped design, with a sensitivity computed from public bounds only.
A scorer holds the private data and answers the search's questions (scores of
batches, one-swap neighbourhoods, two-swap classes, class bounds, cuts); the search
(dpsubset/search/) receives it as an argument and checks it against its protocols.

- base.py: the ridge solve over the ball, the one-swap neighbourhood (the sensitivity is
  :mod:`dpsubset.privacy.sensitivity`'s);
- least_squares.py: :class:`LeastSquaresScorer` (closed form, rank-one and rank-two
  updates; also from the sufficient statistics), with two_swap.py and class_bounds.py;
- convex.py: :class:`ConvexLossScorer` (batched projected Newton, duality-gap certificates).
"""
from .base import solve_ball_ridge
from ..privacy.sensitivity import convex_sensitivity, score_sensitivity
from .convex import SCORE_TOL, ConvexLossScorer, ScoreAccuracyError
from .least_squares import LeastSquaresScorer

__all__ = ["LeastSquaresScorer", "ConvexLossScorer", "score_sensitivity", "convex_sensitivity",
           "solve_ball_ridge", "ScoreAccuracyError", "SCORE_TOL"]
