"""Which exact route ``search="auto"`` takes: a cost model of public settings only.

Two exact routes compete where C(p, s) is small: enumeration (score every support)
and the certified search (the local optimum with its analytic certificates, then the
branch and bound where they do not close). Both are exact, so the choice changes the
time of a call, never its release. It is made from (loss, n, p, s) alone, which are
public (neighbouring data sets replace a row, so n is fixed): a route chosen from the
data, for instance from a trial run of either search, would make the time of a call a
function of the data through one more channel (docs/guide/time-limits.md), and this
one does not.

The model, measured on a grid (docs/benchmarks/search-constants.md, "The route of
search='auto'"; ``python bench/search_constants.py score-cost`` and ``route``):

- enumeration costs C(p, s) scores. A least-squares score is Gram algebra on s
  columns (the scorer always holds the p x p Gram matrix, on the sufficient-statistics
  route and off it alike), so its cost does not depend on n: about
  ``_SQUARED_PER_COLUMN`` seconds per column of the support. A convex-loss score is a
  certified Newton solve over the n rows: ``a + b n`` seconds (``_CONVEX_SCORE``), in
  which s hardly shows at s <= 8;
- the certified search costs about a fixed multiple of the one-swap neighbourhood,
  s (p - s) supports, each "neighbour" standing for the neighbourhood's scores, the
  two-mistake class and the bounds: ``_SQUARED_PER_NEIGHBOUR`` seconds for least
  squares, ``a + b n`` for the convex losses (``_CONVEX_PER_NEIGHBOUR``, whose n part
  grows more slowly than a score's: most of its work is on the s columns of a
  support, not on the n rows).

``search="auto"`` enumerates when the first estimate is below the second (and C(p, s)
is at most :data:`ENUMERATE_BELOW`); for the convex losses, only when it is below half
the second. The margin is there because the two wrong guesses do not cost the same:
where the certified search does worse than its estimate (a weak relaxation: pure noise
with a small ridge), its node budget hands it to enumeration after about the
enumeration's cost (``NODE_COST``, ``CONVEX_NODE_COST`` in exact.py), so that guess
costs at most about twice the enumeration; an enumeration chosen wrongly has no such
cap (Huber at p = 20, s = 5, n = 100,000: 60 times the certified search). The grid's
hinge cells at n = 5000, p = 10, s = 3 were the ones that needed it (enumeration 0.30 s
against 0.16 s). Both least-squares routes take well under a second wherever the
model lets them compete, so no margin there.
"""
from __future__ import annotations

from math import comb

from ..losses import is_least_squares

__all__ = ["ENUMERATE_BELOW", "seconds_per_support", "enumeration_seconds",
           "certified_seconds", "choose_route"]

#: ``search="auto"`` never enumerates more than this many supports (memory for every
#: support and score, and the deadline checks of a long enumeration).
ENUMERATE_BELOW = 50_000

# Seconds per scored support (one thread; measured 2026-11-28, see the module docstring).
_SQUARED_PER_COLUMN = 2e-6
_CONVEX_SCORE = (50e-6, 0.2e-6)  # (a, b): a + b n seconds
# Seconds of the certified search per one-swap neighbour, s (p - s) of them.
_SQUARED_PER_NEIGHBOUR = 1e-3
_CONVEX_PER_NEIGHBOUR = (5e-3, 0.6e-6)
# A convex loss enumerates only when its estimate is at most this share of the certified
# search's (least squares: at most all of it).
_CONVEX_MARGIN = 0.5


def seconds_per_support(loss, n, s):
    """Estimated seconds to score one support of size ``s`` (one thread).

    Parameters
    ----------
    loss : str
        "squared" or a convex loss ("huber", "logistic", "hinge", ...).
    n, s : int
        Rows and support size (public).
    """
    if is_least_squares(loss):
        return _SQUARED_PER_COLUMN * max(int(s), 1)
    a, b = _CONVEX_SCORE
    return a + b * int(n)


def enumeration_seconds(loss, n, p, s):
    """Estimated seconds to score every size-``s`` support of ``p`` columns."""
    return comb(int(p), int(s)) * seconds_per_support(loss, n, s)


def certified_seconds(loss, n, p, s):
    """Estimated seconds of the certified search (best support and top-R list) on a
    problem where its bounds are effective (the usual case on the grid)."""
    neighbours = max(int(s) * (int(p) - int(s)), 1)
    if is_least_squares(loss):
        return neighbours * _SQUARED_PER_NEIGHBOUR
    a, b = _CONVEX_PER_NEIGHBOUR
    return neighbours * (a + b * int(n))


def choose_route(loss, n, p, s):
    """The route of ``search="auto"`` from public settings only.

    Returns
    -------
    {"enumeration", "certified"}
        "certified" is the local optimum's certificates, then the branch and bound
        (or outer approximation where the scorer has no branch and bound).
    """
    if comb(int(p), int(s)) > ENUMERATE_BELOW:
        return "certified"
    margin = 1.0 if is_least_squares(loss) else _CONVEX_MARGIN
    if enumeration_seconds(loss, n, p, s) <= margin * certified_seconds(loss, n, p, s):
        return "enumeration"
    return "certified"
