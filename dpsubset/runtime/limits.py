"""The limits of one call, shared by every stage: its deadline and its memory limit (and
the pause of the cyclic garbage collector while it runs).

Every user-facing call has a time limit (:data:`DEFAULT_TIME_LIMIT`, for the whole call)
and a memory limit (:data:`DEFAULT_MEMORY_SHARE` of the machine's memory). One
:class:`Deadline` is checked by the search's routes and by the inference stage's
bootstrap; a stage that runs out fails closed with :class:`SearchTimeout` (nothing is
released). The search's own limits (the enumeration's size, its memory budget, what
its messages may say about gaps) are in :mod:`dpsubset.search.limits`; what the
terminal shows while a call runs is :mod:`dpsubset.runtime.progress`.

Whether a call times out depends on the data (a timing side channel), and the fact of
a timeout is not covered by the privacy guarantee: see docs/guide/time-limits.md.
"""
from __future__ import annotations

import contextlib
import gc
import math
import os
import time

from .._validation import is_real

__all__ = ["DEFAULT_TIME_LIMIT", "DEFAULT_MEMORY_SHARE", "SearchTimeout", "SearchMemoryLimit", "Deadline",
           "physical_memory", "format_bytes", "resolve_memory_limit", "resolve_time_limit",
           "paused_garbage_collection"]

#: Default ``time_limit`` of :func:`dpsubset.dp_best_subset` (seconds, for the whole
#: call): long enough for every regime the benchmarks certify, short enough that a
#: hopeless search is reported instead of running for hours.
DEFAULT_TIME_LIMIT = 600.0

#: Default ``memory_limit`` of :func:`dpsubset.dp_best_subset`, as a share of the
#: machine's physical memory: the growing structures of the exact search may hold at
#: most this much (the data and the fixed working memory of the scores, about twice
#: the size of X, come on top).
DEFAULT_MEMORY_SHARE = 0.5


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


class SearchMemoryLimit(SearchTimeout):
    """The exact search's growing structures reached ``memory_limit`` before its
    certificate closed.

    A subclass of :class:`SearchTimeout`, so that code which catches time-outs catches
    it too: it is the same kind of event (the search stopped on a limit the user set,
    after an amount of work that depends on the data) and it is handled the same way:
    nothing is released, and the message names the problem and the public settings
    that help, never a score, a bound, a count of nodes or a gap. ``gap`` is None.
    """


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


# Where a container's memory limit is (cgroup v2, then v1): it is the machine's memory as
# far as the process is concerned, and may be far below the host's physical memory.
_CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


def physical_memory():
    """The machine's physical memory in bytes, or the container's memory limit where
    that is lower (cgroups); None where the system says neither."""
    try:
        total = int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):  # e.g. Windows
        total = None
    for path in _CGROUP_LIMITS:
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit() and (total is None or int(text) < total):
            total = int(text)  # ("max", or a huge number, means no limit)
        break
    return total


def format_bytes(nbytes):
    """A number of bytes for a message: "2 GB", "512 MB", "40 kB" (powers of 1024)."""
    for unit, size in (("GB", 2 ** 30), ("MB", 2 ** 20), ("kB", 2 ** 10)):
        if nbytes >= size:
            return f"{nbytes / size:.3g} {unit}"
    return f"{nbytes:.0f} bytes"


def resolve_memory_limit(memory_limit, name="memory_limit"):
    """The memory limit of a user-facing call in bytes, or None for no limit.

    ``None`` -> :data:`DEFAULT_MEMORY_SHARE` of the machine's physical memory (no limit
    where the system does not report it), ``math.inf`` -> None, a positive number ->
    itself (bytes; ``2e9`` or ``2 * 2**30``). (A search shares a
    :class:`dpsubset.search.limits.MemoryBudget` with its sub-searches instead.)
    """
    if memory_limit is None:
        total = physical_memory()
        return None if total is None else DEFAULT_MEMORY_SHARE * total
    if (not is_real(memory_limit)
            or math.isnan(memory_limit) or memory_limit <= 0):
        raise ValueError(f"{name} must be a number of bytes > 0 (e.g. 2e9; math.inf for no limit; "
                         f"default None: {DEFAULT_MEMORY_SHARE:g} of the machine's memory), "
                         f"got {memory_limit!r}")
    return None if math.isinf(memory_limit) else float(memory_limit)


def resolve_time_limit(time_limit, name="time_limit"):
    """The time limit of a user-facing call: None -> :data:`DEFAULT_TIME_LIMIT`,
    ``math.inf`` -> None (no limit), a positive number -> itself (seconds)."""
    if time_limit is None:
        return DEFAULT_TIME_LIMIT
    if (not is_real(time_limit)
            or math.isnan(time_limit) or time_limit <= 0):
        raise ValueError(f"{name} must be a number of seconds > 0 (or math.inf for no limit; "
                         f"default {DEFAULT_TIME_LIMIT:g}), got {time_limit!r}")
    return None if math.isinf(time_limit) else float(time_limit)


@contextlib.contextmanager
def paused_garbage_collection():
    """Run a block with Python's cyclic garbage collector paused (as it was afterwards).

    A call on a wide frame creates hundreds of thousands of small objects (a term, a
    codebook entry and a name per column; a name per listed support), and every few
    hundred allocations the collector walks the objects alive, the frame's included:
    at p = 50,000 that was 1 to 2 s of a 8 to 10 s call (issue 42). Reference counting
    still frees everything a call drops; only objects in reference cycles wait for the
    collector's next run after the call. Usable as a decorator.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
