"""The design stage: from (formula, data, public bounds) to clipped, publicly mapped matrices.

The only stage that reads the user's data frame. :func:`build_design` runs its steps in
order: the formula is parsed and its names resolved in the evaluation context captured at
the entry point (:mod:`.formula`), the codebook is resolved against it (:mod:`.codebook`,
with the interval arithmetic of :mod:`.intervals`), the used columns are read and checked
(:mod:`.frames`), materialised (:mod:`.materialise`), then clipped and mapped by public
numbers (:mod:`.clip`). The result pairs the public :class:`DesignSpec` (:mod:`.spec`)
with the private :class:`DesignData` (:mod:`.data`). Dask frames are reduced to sufficient
statistics (:mod:`.dask`, :mod:`.suffstats`).
"""
from .build import build_design
from .codebook import Bounds, as_bounds
from .data import Design, DesignData
from .formula import capture_context
from .spec import DesignSpec

__all__ = ["build_design", "Bounds", "as_bounds", "Design", "DesignSpec", "DesignData", "capture_context"]
