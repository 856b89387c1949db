"""What the terminal shows while a call runs: the call's bar and the search's bars.

``verbose`` has three states (``dp_best_subset(verbose=...)``, docs/guide/time-limits.md):

- ``None`` (the default, "auto"): one bar for the whole call, on stderr, only when
  stderr is a terminal and only once the call has run for :data:`PROGRESS_DELAY`
  seconds (a quick call prints nothing). It names the stage (design, selection,
  refit), how far the stage's search has come (its relative gap, or the share of the
  bases of a mistake class searched: the news a loop of the search relays through
  :func:`progress`), the seconds spent and the seconds left before ``time_limit``.
- ``True``: the same bar at once and wherever stderr goes, plus the bars of the
  search's loops (:func:`progress`) and, after the selection, its solves.
- ``False``: nothing.

A bar names stages, settings and counts of the search's own steps, and times: never
a value of the data nor a score computed from it. It is on the data owner's
terminal only and is no part of the release (how long a search takes depends on the
data: see docs/guide/reading-the-report.md, on the exact search's line).
"""
from __future__ import annotations

import os
import sys
import threading
import time

import numpy as np

#: Seconds a call runs before the automatic bar (``verbose=None``) appears: below it a
#: call finishes before a reader would look up (issue 28: a 23 s call said nothing).
PROGRESS_DELAY = 2.0
#: Seconds between two redraws of the call's bar while a stage runs without news.
PROGRESS_REFRESH = 1.0


class _NoBar:
    """Stands in for a tqdm bar when nothing is shown: every call is a no-op."""

    def due(self):
        """Whether the loop should compute its news now (never: nobody reads it)."""
        return False

    def update(self, n=1):
        pass

    def set_postfix(self, *args, **kwargs):
        pass

    def set_description(self, *args, **kwargs):
        pass

    def close(self):
        pass


_NO_BAR = _NoBar()
#: The call's bar of each thread that runs a call with a bar (thread id -> CallProgress).
_ACTIVE = {}
#: Seconds between two pieces of news a loop relays to the call's bar.
NEWS_INTERVAL = 0.5
# What a loop's news may name on the call's bar: counts and the scale-free gap only.
_NEWS_KEYS = {"gap": "gap {}", "open": "{} nodes open", "nodes": "{} nodes", "cuts": "{} cuts",
              "added": "{} added"}


class _Relay:
    """A loop's bar in the automatic mode: its news (how far it has come) goes into the
    call's bar instead of a bar of its own. ``due()`` tells the loop when to compute it
    (every :data:`NEWS_INTERVAL` seconds), so a hot loop pays one clock read per step."""

    def __init__(self, call, desc, total, unit):
        self._call, self._desc, self._total, self._unit = call, desc, total, unit
        self._n, self._next = 0, 0.0

    def due(self):
        now = time.perf_counter()
        if now < self._next:
            return False
        self._next = now + NEWS_INTERVAL
        return True

    def update(self, n=1):
        self._n += int(n)
        if self._total and self.due():   # the share of the loop's steps done (public counts)
            self._call.news(f"{self._desc}: {self._n}/{self._total} {self._unit}s")

    def set_postfix(self, *args, **kwargs):
        parts = [fmt.format(kwargs[k]) for k, fmt in _NEWS_KEYS.items() if k in kwargs]
        if self._total:
            parts.insert(0, f"{self._n}/{self._total} {self._unit}s")
        if parts:
            self._call.news(f"{self._desc}: " + ", ".join(parts) if self._desc else ", ".join(parts))

    def set_description(self, *args, **kwargs):
        pass

    def close(self):
        pass


def progress(verbose, **kwargs):
    """A transient tqdm bar (stderr) of one loop of the search when ``verbose`` is
    True; when the call shows its own bar (the automatic mode on a terminal), a relay of
    the loop's news to it; else a shared no-op object, so the loops pay nothing for
    progress reporting when it is off.

    What a bar shows is public or scale-free: counts, times and relative gaps
    (:func:`dpsubset.search.limits.relative_gap`), never scores or bounds. A loop computes
    its news when ``verbose`` is True or ``bar.due()``."""
    if not verbose:  # False, and None (the automatic mode): the call's bar, if any
        call = _ACTIVE.get(threading.get_ident())
        if call is None:
            return _NO_BAR
        return _Relay(call, kwargs.get("desc") or "", kwargs.get("total"), kwargs.get("unit") or "step")
    from tqdm.auto import tqdm
    kwargs.setdefault("leave", False)
    return tqdm(**kwargs)


def check_verbose(verbose):
    """``verbose`` as None, True or False, or an error naming the argument and the fix."""
    if verbose is None or isinstance(verbose, bool):
        return verbose
    if isinstance(verbose, np.bool_):
        return bool(verbose)
    raise TypeError(f"verbose must be None (a progress bar when the call runs past "
                    f"{PROGRESS_DELAY:g} s and stderr is a terminal), True (progress and the "
                    f"search's details) or False (nothing); got {type(verbose).__name__}")


def _on_terminal(stream):
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def _sized(stream):
    """Whether the terminal says its size: a pseudo-terminal without one (under
    ``script``, some CI runners) says 0 x 0, and tqdm then hides its bar (position 0
    is outside 0 rows) unless it is given a size."""
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, ValueError, OSError):
        return False
    return size.columns > 0 and size.lines > 0


def call_progress(verbose, clock, *, stages=3, file=None):
    """The bar of one call of :func:`dpsubset.dp_best_subset`, by ``verbose``'s three states.

    Parameters
    ----------
    verbose : None, bool
        As in ``dp_best_subset`` (checked by :func:`check_verbose`).
    clock : dpsubset.runtime.limits.Deadline
        The call's deadline: the bar shows the seconds left before it.
    stages : int
        Number of stages the call reports with ``update()``.
    file : file-like, optional
        Where the bar goes; ``sys.stderr`` (looked up at the call) by default.

    Returns
    -------
    CallProgress or a no-op object with the same methods (``set_description``,
    ``update``, ``close``).
    """
    verbose = check_verbose(verbose)
    file = sys.stderr if file is None else file
    if verbose is False or (verbose is None and not _on_terminal(file)):
        return _NO_BAR
    return CallProgress(clock, stages=stages, file=file,
                        delay=PROGRESS_DELAY if verbose is None else 0.0, caller=sys._getframe(1))


def bar_text(stage, *, spent, left, limit, news=""):
    """The text of the call's bar: the stage, how far its search has come (``news``), the
    seconds spent and, with a time limit, the seconds left before it
    (docs/guide/time-limits.md shows it)."""
    stage = f"{stage} ({news})" if news else stage
    if left is None:
        return f"dp_best_subset: {stage} | {spent:.0f} s spent, no time limit"
    return (f"dp_best_subset: {stage} | {spent:.0f} s spent, {left:.0f} s left of "
            f"time_limit={limit:g} s")


class CallProgress:
    """A bar for a whole call that appears after ``delay`` seconds and then redraws
    itself every :data:`PROGRESS_REFRESH` seconds from a daemon thread, since a long
    stage (the exact search) gives no news for minutes; the time left runs down
    meanwhile. The stage and the count of stages done come from the calling thread.

    ``caller`` is the frame of the call the bar belongs to: the thread also stops, and
    removes the bar, once that frame has left its thread's stack, so an error or a
    Ctrl-C that skips ``close()`` does not leave a bar redrawing on the terminal."""

    def __init__(self, clock, *, stages, file, delay, caller=None):
        self._clock, self._stages, self._file, self._delay = clock, int(stages), file, float(delay)
        self._owner, self._caller = threading.get_ident(), caller
        self._t0 = time.perf_counter()
        self._stage, self._done, self._news = "design", 0, ""
        self._bar = None
        _ACTIVE[self._owner] = self   # the search's loops relay their news here (progress())
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dpsubset-progress", daemon=True)
        self._thread.start()

    def _run(self):
        if self._stop.wait(self._delay):
            return  # the call ended before the bar was due
        while self._call_running():
            self._draw()
            if self._stop.wait(PROGRESS_REFRESH):
                return
        self._remove()  # the call ended without close()

    def _call_running(self):
        frame = sys._current_frames().get(self._owner) if self._caller is not None else None
        while frame is not None:
            if frame is self._caller:
                return True
            frame = frame.f_back
        return self._caller is None and not self._stop.is_set()

    def _due(self):
        return time.perf_counter() - self._t0 >= self._delay


    def _draw(self):
        with self._lock:
            if self._stop.is_set() and self._bar is None:
                return
            text = bar_text(self._stage, spent=time.perf_counter() - self._t0,
                            left=self._clock.left(), limit=self._clock.limit, news=self._news)
            if self._bar is None:
                from tqdm.auto import tqdm
                # the text in the constructor: its first draw shows it too
                sized = _sized(self._file)  # else a fixed size: 0 x 0 would hide the bar
                self._bar = tqdm(total=self._stages, initial=self._done, file=self._file,
                                 leave=False, dynamic_ncols=sized, ncols=None if sized else 100,
                                 nrows=None if sized else 24, desc=text,
                                 bar_format="{desc} |{bar}| {n_fmt}/{total_fmt} stages")
            self._bar.set_description_str(text, refresh=False)
            self._bar.n = self._done
            self._bar.refresh()

    def news(self, text):
        """How far the stage's search has come (a loop's counts or relative gap, from
        :func:`progress`); shown at the next redraw, cleared when the stage changes."""
        self._news = str(text)

    def set_description(self, stage):
        """Name the stage that starts (public: "design", "selection", "refit")."""
        self._stage, self._news = str(stage), ""
        if self._bar is not None or self._due():
            self._draw()

    def update(self, n=1):
        """Count ``n`` more stages done."""
        self._done += int(n)
        if self._bar is not None or self._due():
            self._draw()

    def close(self):
        """Stop the redraws and remove the bar (idempotent)."""
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join()
        self._remove()

    def _remove(self):
        with self._lock:
            self._stop.set()
            self._caller = None  # the call's frame holds its data: do not keep it alive
            if _ACTIVE.get(self._owner) is self:
                del _ACTIVE[self._owner]
            if self._bar is not None:
                self._bar.close()
                self._bar = None
