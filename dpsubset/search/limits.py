"""Time limits of the exact search, and what its messages may say.

The exact search has no useful worst case: on correlated data with a small radius a
certificate may take very long to close. So every user-facing call has a time limit
(:data:`DEFAULT_TIME_LIMIT`, for the whole call), the search checks one deadline in all
its routes, and a search that runs out fails closed with :class:`SearchTimeout`:
nothing is released.

What a message may contain. Messages, exceptions and progress bars of the search name
the problem being solved, counts (rounds, cuts, nodes), times, public settings and
*relative* gaps; never a score, a bound or an objective value, which are functions of
the private data. The relative gap shown is ``(upper - lower) / |upper|``
(:func:`relative_gap`), which is scale-free: the package's own closing rule,
``Certificate.relative_gap``, divides by ``max(1, |upper|)``, and for scores below 1
(the usual case with bounded data) that is the absolute gap, which equals the score
itself while the lower bound is still 0.

Whether a call times out depends on the data (a timing side channel), and the fact of
a timeout is not covered by the privacy guarantee: see docs/guide/time-limits.md.
"""
from __future__ import annotations

import math
import numbers
import time
from math import comb

__all__ = ["DEFAULT_TIME_LIMIT", "SearchTimeout", "Deadline", "relative_gap",
           "format_gap", "describe_gap", "resolve_time_limit", "timeout_advice", "explain_timeout"]

#: Default ``time_limit`` of :func:`dpsubset.dp_best_subset` (seconds, for the whole
#: call): long enough for every regime the benchmarks certify, short enough that a
#: hopeless search is reported instead of running for hours.
DEFAULT_TIME_LIMIT = 600.0


class SearchTimeout(RuntimeError):
    """The exact search did not close its certificate within the time limit.

    Nothing is released when this is raised: the privacy guarantee assumes exact
    optimisation, so an open gap fails closed. The message names the problem, the
    public settings that make the search easier and, from ``dp_best_subset``, which
    random draws had been made; it never shows a score or a bound.

    Attributes
    ----------
    problem : str or None
        What was being solved ("best support", "mistake class 3", ...).
    gap : float or None
        Relative gap ``(upper - lower) / abs(upper)`` when the search stopped (None when the
        route has no gap, e.g. a branch and bound deciding a target).
    seconds : float or None
        Time spent in the solve that stopped.
    """

    def __init__(self, message="", *, problem=None, gap=None, seconds=None):
        super().__init__(message)
        self.problem, self.gap, self.seconds = problem, gap, seconds


class Deadline:
    """One wall-clock deadline shared by every solve of a search.

    ``Deadline(None)`` never expires. ``left()`` is the time remaining in seconds
    (>= 0), or None without a limit: passing it as a solve's ``time_limit`` makes that
    solve stop at the shared deadline.
    """

    def __init__(self, seconds=None):
        self.limit = None if seconds is None else float(seconds)
        self.at = None if seconds is None else time.perf_counter() + float(seconds)

    def left(self):
        if self.at is None:
            return None
        return max(0.0, self.at - time.perf_counter())

    @property
    def expired(self):
        return self.at is not None and time.perf_counter() >= self.at


def relative_gap(lower, upper):
    """Scale-free relative gap ``(upper - lower) / abs(upper)`` for messages (>= 0; inf when
    nothing is bounded yet). It reveals neither bound."""
    lower, upper = float(lower), float(upper)
    if not (math.isfinite(lower) and math.isfinite(upper)):
        return math.inf
    if upper == 0.0:
        return 0.0 if lower >= 0.0 else math.inf
    return max(0.0, (upper - lower) / abs(upper))


def format_gap(gap):
    """A relative gap as a percentage ("100%", "3.2%", "4.1e-05%"), "n/a" when unknown
    and "none proved" when infinite."""
    if gap is None:
        return "n/a"
    if not math.isfinite(gap):
        return "none proved"
    pct = 100.0 * gap
    if pct == 0.0:
        return "0%"
    if pct >= 10.0:
        return f"{pct:.0f}%"
    return f"{pct:.2g}%" if pct >= 0.01 else f"{pct:.1e}%"


def describe_gap(gap):
    """The gap in words for a message: "relative gap 3.2%", or "no lower bound proved
    yet" before the first bound."""
    if gap is not None and not math.isfinite(gap):
        return "no lower bound proved yet"
    return f"relative gap {format_gap(gap)}"


def resolve_time_limit(time_limit, name="time_limit"):
    """The time limit of a user-facing call: None -> :data:`DEFAULT_TIME_LIMIT`,
    ``math.inf`` -> None (no limit), a positive number -> itself (seconds)."""
    if time_limit is None:
        return DEFAULT_TIME_LIMIT
    if (isinstance(time_limit, bool) or not isinstance(time_limit, numbers.Real)
            or math.isnan(time_limit) or time_limit <= 0):
        raise ValueError(f"{name} must be a number of seconds > 0 (or math.inf for no limit; "
                         f"default {DEFAULT_TIME_LIMIT:g}), got {time_limit!r}")
    return None if math.isinf(time_limit) else float(time_limit)


def timeout_advice(p, s, *, search="auto", r=None, lam=None, time_limit=None):
    """The public settings that make the exact search easier, in words (no data values).

    Parameters
    ----------
    p, s : int
        Number of candidate columns and support size (public).
    search, r, lam, time_limit
        The settings of the call, named in the advice.
    """
    from .enumeration import ENUMERATION_LIMIT
    total = comb(p, s)
    tips = ["fewer candidate columns (a smaller p: leave columns out of the formula, or "
            "screen them first, privately or on public knowledge)",
            "a larger r" + (f" (now {r:g})" if r is not None else "")
            + " or a larger lam" + (f" (now {lam:g})" if lam is not None else ""),
            f"a smaller s (now {s})",
            "a larger time_limit" + (f" (now {time_limit:g} s)" if time_limit else "")
            + "; math.inf for none"]
    if search != "enumeration" and total <= ENUMERATION_LIMIT:
        tips.append(f"search='enumeration' (C({p}, {s}) = {total} supports: scored one by one)")
    return ("Public settings that make the search easier (choose them before looking at the "
            "data): " + "; ".join(tips) + ".")


def explain_timeout(err, *, time_limit, random_draws, p, s, method, search="auto", r=None,
                    lam=None):
    """The SearchTimeout that a user-facing call raises: what stopped, that nothing was
    released, which random draws had been made, and which settings make it easier.

    Parameters
    ----------
    err : SearchTimeout
        The timeout raised inside the search (its text has no data values).
    time_limit : float or None
        The call's limit in seconds.
    random_draws : bool
        Whether any random number had been drawn for the private release when the
        search stopped (a mechanism that interleaves its draw with the search, such
        as ``method="mistakes"``, may have begun it).
    p, s, method, search, r, lam
        Public settings of the call.
    """
    limit = "no time_limit" if time_limit is None else f"time_limit = {time_limit:g} s"
    problem, gap, seconds = err.problem, err.gap, err.seconds
    if random_draws:
        draws = (f"The private draw of method={method!r} had begun (it alternates with the "
                 "search) and random numbers had been drawn; they were discarded unused, and "
                 "no noisy value, test outcome or support was released.")
        # Which problem was open once the draw had begun (a top-R completion or a mistake
        # class) would tell the outcome of the private test: neither it nor its gap or
        # time is said.
        err = ("a search that the private draw asked for did not certify its answer in time "
               "(which one is not shown: it would tell the outcome of the private test)")
        problem = gap = seconds = None
    else:
        draws = ("No random number had been drawn: the search stopped before the private "
                 "draw began.")
    text = (f"The exact search stopped without certifying its answer ({limit} for the whole "
            f"call): {err}\nNothing was released (no support, no coefficients), so no privacy "
            f"budget was spent on a release. {draws}\nWhether a call times out depends on the "
            "data (a timing side channel not covered by the privacy guarantee): do not publish "
            "that it timed out, and treat new attempts on these data with other settings as "
            "a choice made by looking at the data; see docs/guide/time-limits.md.\n"
            + timeout_advice(p, s, search=search, r=r, lam=lam, time_limit=time_limit))
    return SearchTimeout(text, problem=problem, gap=gap, seconds=seconds)
