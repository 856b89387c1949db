"""The exact search: the candidate supports the selection mechanisms need, certified.

Given a scorer (exact scores c(S) of size-s supports on one dataset; what the search
needs of it is the :class:`Scorer` protocol and its extensions in
:mod:`dpsubset.search.protocols`), :class:`SubsetSearch` finds the certified best
support, its one-swap neighbourhood, the exact top-R list and the best support of
every mistake class. The search never imports the scores: the scorer is passed in.

Modules, by job:

- ``exact``: :class:`SubsetSearch` (routes, deadline, the best support and its
  certificate); ``top_r_list`` and ``mistake_classes``: its top-R list and its
  mistake classes;
- ``enumeration``, ``heuristics`` (warm starts), ``neighbourhood`` (mistakes and
  one-swap pairs around a centre);
- ``branch_bound`` with ``perspective`` (its node bounds), ``class_search`` (one
  mistake class by Schur complements), ``outer_approximation`` (HiGHS) and
  ``pyomo_search`` (formulation (9) for Pyomo and SCIP): the exact routes;
- ``candidates`` (what the search returns, with certificates) and ``limits`` (time
  and memory limits, :class:`SearchTimeout`, what messages may say).

Every score and bound here is a function of the private data and stays inside the call;
a search that does not certify its answer in time fails closed with SearchTimeout.
"""
from .candidates import Certificate, MistakeCandidates, TopRCandidates
from .exact import SubsetSearch, check_search, default_R
from .limits import SearchMemoryLimit, SearchTimeout
from .protocols import ClassBoundScorer, RestrictableScorer, Scorer, SquaredLossScorer

__all__ = ["SubsetSearch", "check_search", "default_R", "SearchTimeout", "SearchMemoryLimit",
           "Certificate", "TopRCandidates", "MistakeCandidates", "Scorer", "ClassBoundScorer",
           "RestrictableScorer", "SquaredLossScorer"]
