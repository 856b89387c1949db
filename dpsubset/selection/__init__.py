"""Selection: one private release of a support.

Every ``method=`` of :func:`dpsubset.dp_best_subset` is a
:class:`~dpsubset.selection.base.SelectionMethod` in the registry
:data:`~dpsubset.selection.base.METHODS`. The API hands a
:class:`~dpsubset.selection.base.SelectionRequest` (the design, the settings, the
budget ledger) to the method and gets back a :class:`~dpsubset.selection.base.Selection`.

Modules: ``base`` (request, result, registry, the scorer of a request), ``exact``
(top-R and mistakes, on the exact search), ``screening`` (the optional private screen
before the search), ``baselines/`` (the methods the papers compare with). The methods
register here, once ``base`` is complete, so that no method module is imported by the
module it imports from.
"""
from .base import (DEFAULT_DELTA, DEFAULT_EPS0_SHARE, METHODS, Selection, SelectionMethod,
                   SelectionRequest, register_method)
from . import exact  # noqa: F401  (registers top_r and mistakes)
from . import baselines  # noqa: F401  (registers the comparison methods)

__all__ = ["METHODS", "Selection", "SelectionMethod", "SelectionRequest", "register_method",
           "DEFAULT_DELTA", "DEFAULT_EPS0_SHARE"]
