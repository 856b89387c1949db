"""The private half of a design, and the pair that the stages of a fit read.

:class:`DesignData` holds what is computed from the rows: the clipped, mapped candidate
columns X, the always-in columns, the response and n, or, on the Gram route, only the
sufficient statistics of least squares. It never leaves a call of ``dp_best_subset``: a
result keeps the public :class:`dpsubset.design.spec.DesignSpec` only.

:class:`Design` pairs the two (``design.spec``, ``design.data``) and forwards attribute
reads to them, so that ``design.X`` and ``design.candidate_names`` both read as before.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

import numpy as np

from .spec import DesignSpec

__all__ = ["DesignData", "Design"]


@dataclass(frozen=True, eq=False)
class DesignData:
    """Clipped, publicly mapped arrays of one data set (private).

    Attributes
    ----------
    X : ndarray, shape (n, p)
        Candidate columns, clipped and mapped (no rows on the Gram route).
    y : ndarray, shape (n,)
        Response, clipped and mapped (no rows on the Gram route).
    forced : ndarray, shape (n, k)
        Always-in columns: the intercept first (if present), then the ``keep=``
        columns; clipped and mapped (no rows on the Gram route).
    n : int
        Number of rows.
    gram : dpsubset.design.suffstats.SufficientStats or None
        With ``build_design(..., gram=True)``: the Gram matrix of [forced, X, y]
        and n, in place of the matrices.
    """

    X: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    forced: np.ndarray = field(repr=False)
    n: int
    gram: object = field(default=None, repr=False)

    @classmethod
    def empty(cls, n, p, k, gram=None):
        """Arrays without rows (the Gram route, a Dask frame): ``n`` rows summarised in ``gram``."""
        return cls(X=np.empty((0, p)), y=np.empty(0), forced=np.empty((0, k)), n=int(n), gram=gram)


@dataclass(frozen=True, eq=False)
class Design:
    """A design as the stages of one fit read it: the public spec and the private data.

    Attribute reads that are not ``spec`` or ``data`` are forwarded, first to the spec,
    then to the data (``design.candidate_names``, ``design.X``), so that the scoring,
    search and refit stages read one object. Internal: never released (a result keeps
    ``design.spec`` only).

    Attributes
    ----------
    spec : DesignSpec
        Public: names, bounds, maps, the formula's spec (rematerialises new data).
    data : DesignData
        Private: X, y, the always-in columns, n and the sufficient statistics.
    """

    spec: DesignSpec
    data: DesignData

    def __getattr__(self, name):
        # Only called when ordinary lookup fails; dunder names (pickle's probes) and a
        # half-built object (while unpickling) end in AttributeError, not in recursion.
        if name.startswith("__") or name in ("spec", "data"):
            raise AttributeError(name)
        for part in (self.spec, self.data):
            try:
                return getattr(part, name)
            except AttributeError:
                continue
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def replace(self, **changes):
        """A new design with some attributes of the spec and of the data replaced.

        Each name goes to the half that holds it (``X`` to the data, ``x_bounds`` to the
        spec), as :func:`dataclasses.replace` would on one object.
        """
        data_names = {f.name for f in fields(DesignData)}
        spec_names = {f.name for f in fields(DesignSpec)}
        unknown = set(changes) - data_names - spec_names
        if unknown:
            raise TypeError(f"Design.replace: unknown attribute(s) {sorted(unknown)}")
        to_data = {k: v for k, v in changes.items() if k in data_names}
        to_spec = {k: v for k, v in changes.items() if k in spec_names}
        return Design(spec=replace(self.spec, **to_spec) if to_spec else self.spec,
                      data=replace(self.data, **to_data) if to_data else self.data)
