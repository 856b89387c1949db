"""What one call shares across its stages: its limits and what the terminal shows.

- limits.py: the call's deadline (:class:`~dpsubset.runtime.limits.Deadline`), its time
  and memory limits, and the time-out that fails closed
  (:class:`~dpsubset.runtime.limits.SearchTimeout`);
- progress.py: the call's progress bar and the search's bars (``verbose``).

Neither belongs to one stage: the search, the inference's bootstrap and the API read
them, so they live here rather than in search/.
"""
from .limits import (DEFAULT_MEMORY_SHARE, DEFAULT_TIME_LIMIT, Deadline, SearchMemoryLimit, SearchTimeout,
                     resolve_memory_limit, resolve_time_limit)
from .progress import PROGRESS_DELAY, call_progress, check_verbose

__all__ = ["DEFAULT_MEMORY_SHARE", "DEFAULT_TIME_LIMIT", "Deadline", "SearchMemoryLimit", "SearchTimeout",
           "resolve_memory_limit", "resolve_time_limit", "PROGRESS_DELAY", "call_progress", "check_verbose"]
