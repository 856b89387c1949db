"""The exact search's limits, and what its messages may say.

The exact search has no useful worst case: on correlated data with a small radius a
certificate may take very long to close. So every user-facing call has a time limit
(the call's :class:`~dpsubset.runtime.limits.Deadline`, shared with the other stages in
:mod:`dpsubset.runtime.limits` and imported here for the search's modules), the search
checks that one deadline in all its routes, and a search that runs out fails closed
with :class:`SearchTimeout`: nothing is released.

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

Memory. The work of the exact search, like its time, has no useful worst case, and some
of its structures grow with the work (the branch and bound's open nodes, the columns of
X'X it has computed, the outer approximation's cuts). Every call therefore also has a
``memory_limit`` (:data:`DEFAULT_MEMORY_SHARE` of the machine's physical memory by
default): the structures that grow report their size, estimated from their arrays
(deterministic, not the process's resident size), to one :class:`MemoryBudget` per
search, and a search that would pass it fails closed with :class:`SearchMemoryLimit`
(a SearchTimeout: nothing is released). Like a time-out, the stop depends on the data
and is not covered by the guarantee; its message names no count and no gap.
"""
from __future__ import annotations

import math
from math import comb

from ..runtime.limits import (DEFAULT_MEMORY_SHARE, DEFAULT_TIME_LIMIT, Deadline, SearchMemoryLimit,
                              SearchTimeout, format_bytes, physical_memory, resolve_memory_limit,
                              resolve_time_limit)

__all__ = ["DEFAULT_TIME_LIMIT", "DEFAULT_MEMORY_SHARE", "ENUMERATION_LIMIT", "YIELDED",
           "SearchTimeout", "SearchMemoryLimit", "Deadline", "MemoryBudget", "relative_gap",
           "format_gap", "describe_gap", "resolve_time_limit", "resolve_memory_limit",
           "physical_memory", "format_bytes", "timeout_advice", "explain_timeout"]

#: Above this many supports enumeration is refused (memory for the index array and
#: scores, and minutes of time); the other routes of the search take over. (Here, not in
#: enumeration.py, because the time-out advice names enumeration below it.)
ENUMERATION_LIMIT = 2_000_000

#: In a certificate's problem: the outer approximation ran out of the time it is given
#: against enumeration (the race of :mod:`dpsubset.search.exact`), which then scored
#: every support.
YIELDED = "outer approximation yielded to enumeration"


class MemoryBudget:
    """One memory limit shared by every growing structure of a search.

    Each structure reports the bytes it holds under its own key (:meth:`hold`, an
    estimate from the sizes of its arrays: deterministic and cheap); when the total
    passes the limit the search stops with :class:`SearchMemoryLimit`.

    Parameters
    ----------
    limit : float or None
        Bytes, or None for no limit (as returned by :func:`resolve_memory_limit`).
    """

    def __init__(self, limit=None):
        self.limit = None if limit is None else float(limit)
        self.total = 0
        self._held = {}

    def share(self, fraction):
        """``fraction`` of the limit in bytes (None without a limit)."""
        return None if self.limit is None else fraction * self.limit

    def hold(self, key, nbytes, *, problem=None, route="the exact search"):
        """Record that the structure ``key`` now holds ``nbytes``; raise
        SearchMemoryLimit (naming ``problem`` and ``route``, no sizes) when the total
        passes the limit. The structure that passed it is released first: it is
        abandoned with the search."""
        self.total += nbytes - self._held.get(key, 0)
        self._held[key] = nbytes
        if self.limit is not None and self.total > self.limit:
            self.release(key)
            what = f"'{problem}' by {route}" if problem else route
            raise SearchMemoryLimit(
                f"memory_limit ({format_bytes(self.limit)}) reached while solving {what}; "
                "nothing is released", problem=problem)

    def release(self, key):
        """The structure ``key`` no longer holds memory."""
        self.total -= self._held.pop(key, 0)


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


def timeout_advice(p, s, *, search="auto", r=None, lam=None, time_limit=None,
                   memory_limit=None):
    """The public settings that make the exact search easier, in words (no data values).

    Parameters
    ----------
    p, s : int
        Number of candidate columns and support size (public).
    search, r, lam, time_limit
        The settings of the call, named in the advice.
    memory_limit : float, optional
        For a stop on the memory limit: the limit in bytes (the advice then names a
        larger memory_limit instead of a larger time_limit).
    """
    total = comb(p, s)
    tips = ["fewer candidate columns (a smaller p: leave columns out of the formula, or "
            "screen them first, privately or on public knowledge)",
            "a larger r" + (f" (now {r:g})" if r is not None else "")
            + " or a larger lam" + (f" (now {lam:g})" if lam is not None else ""),
            f"a smaller s (now {s})",
            ("a larger memory_limit (now " + format_bytes(memory_limit) + "); math.inf for none"
             if memory_limit is not None else
             "a larger time_limit" + (f" (now {time_limit:g} s)" if time_limit else "")
             + "; math.inf for none")]
    if search != "enumeration" and total <= ENUMERATION_LIMIT:
        tips.append(f"search='enumeration' (C({p}, {s}) = {total} supports: scored one by one)")
    return ("Public settings that make the search easier (choose them before looking at the "
            "data): " + "; ".join(tips) + ".")


def explain_timeout(err, *, time_limit, random_draws, p, s, method, search="auto", r=None,
                    lam=None, memory_limit=None):
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
    memory_limit : float or None
        The call's memory limit in bytes (named when ``err`` is a SearchMemoryLimit).

    Returns
    -------
    SearchTimeout, or SearchMemoryLimit when ``err`` is one.
    """
    on_memory = isinstance(err, SearchMemoryLimit)
    if on_memory:
        limit = ("memory_limit" if memory_limit is None
                 else f"memory_limit = {format_bytes(memory_limit)}") + \
            " for the structures that grow with the search's work"
    else:
        limit = ("no time_limit" if time_limit is None
                 else f"time_limit = {time_limit:g} s for the whole call")
    problem, gap, seconds = err.problem, err.gap, err.seconds
    if random_draws:
        draws = (f"The private draw of method={method!r} had begun (it alternates with the "
                 "search) and random numbers had been drawn; they were discarded unused, and "
                 "no noisy value, test outcome or support was released.")
        # Which problem was open once the draw had begun (a top-R completion or a mistake
        # class) would tell the outcome of the private test: neither it nor its gap or
        # time is said.
        err = ("a search that the private draw asked for did not certify its answer "
               + ("within the memory limit " if on_memory else "in time ")
               + "(which one is not shown: it would tell the outcome of the private test)")
        problem = gap = seconds = None
    else:
        draws = ("No random number had been drawn: the search stopped before the private "
                 "draw began.")
    event = "stops on its memory limit" if on_memory else "times out"
    text = (f"The exact search stopped without certifying its answer ({limit}): {err}\n"
            "Nothing was released (no support, no coefficients), so no privacy "
            f"budget was spent on a release. {draws}\nWhether a call {event} depends on the "
            "data (a timing side channel not covered by the privacy guarantee): do not publish "
            f"that it {'stopped' if on_memory else 'timed out'}, and treat new attempts on these "
            "data with other settings as a choice made by looking at the data; see "
            "docs/guide/time-limits.md.\n"
            + timeout_advice(p, s, search=search, r=r, lam=lam, time_limit=time_limit,
                             memory_limit=memory_limit if on_memory else None))
    cls = SearchMemoryLimit if on_memory else SearchTimeout
    return cls(text, problem=problem, gap=gap, seconds=seconds)
