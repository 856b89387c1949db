"""The private half of a design, and the pair that the stages of a fit read.

:class:`DesignData` holds what is computed from the rows: the clipped, mapped candidate
columns X, the always-in columns, the response and n, or, on the Gram route, only the
sufficient statistics of least squares; and the bounds learned from the data, where the
user gave none. It never leaves a call of ``dp_best_subset``: a result keeps the public
:class:`dpsubset.design.spec.DesignSpec` only.

:class:`Design` pairs the two (``design.spec``, ``design.data``). A reader names the half
it reads: ``design.spec.candidate_names`` for a public number, ``design.data.gram`` for
the rows. The few reads that every stage makes have explicit properties (the rows ``X``,
``y``, ``forced``, ``gram``; the public ``n``; the bounds the fit uses ``x_bounds``,
``forced_bounds``, ``b_y``); there is no forwarding of other names.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace

import numpy as np

from .spec import DesignSpec

__all__ = ["DesignData", "Design"]

#: the names :meth:`Design.replace` splits between the spec (public) and the learned bounds
_BOUND_FIELDS = ("x_bounds", "forced_bounds", "b_y")


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
    learned_bounds : dict
        Column (or response) -> its bound b taken from the data (max |value|, or 1 for a
        column of zeros; clipped to [-b, b], not mapped), for the columns listed in
        ``DesignSpec.bounds_from_data``. A statistic of the data, NOT public: the fit
        uses it (through :attr:`Design.x_bounds`, ...), the spec and a result never hold it.
    """

    X: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    forced: np.ndarray = field(repr=False)
    n: int
    gram: object = field(default=None, repr=False)
    learned_bounds: dict = field(default_factory=dict, repr=False)

    @classmethod
    def empty(cls, n, p, k, gram=None):
        """Arrays without rows (the Gram route, a Dask frame): ``n`` rows summarised in ``gram``."""
        return cls(X=np.empty((0, p)), y=np.empty(0), forced=np.empty((0, k)), n=int(n), gram=gram)


@dataclass(frozen=True, eq=False)
class Design:
    """A design as the stages of one fit read it: the public spec and the private data.

    Internal: never released (a result keeps ``design.spec`` only). Read public numbers
    from ``design.spec`` (names, maps, clip intervals, leaks) and rows from
    ``design.data``; the reads that every stage makes have properties of their own:
    the rows (:attr:`X`, :attr:`y`, :attr:`forced`, :attr:`gram`), the number of rows
    :attr:`n` (public under the replace-one relation), and the bounds the fit uses
    (:attr:`x_bounds`, :attr:`forced_bounds`, :attr:`b_y`), which are the one place where
    the spec's public bounds and the data's learned ones meet.

    Attributes
    ----------
    spec : DesignSpec
        Public: names, bounds, maps, the formula's spec (rematerialises new data).
    data : DesignData
        Private: X, y, the always-in columns, n, the sufficient statistics and the
        bounds learned from the data.
    """

    spec: DesignSpec
    data: DesignData

    # ---- the rows (private) ------------------------------------------------------
    @property
    def X(self):
        """The candidate columns, clipped and mapped (``data.X``; private)."""
        return self.data.X

    @property
    def y(self):
        """The response, clipped and mapped (``data.y``; private)."""
        return self.data.y

    @property
    def forced(self):
        """The always-in columns, clipped and mapped (``data.forced``; private)."""
        return self.data.forced

    @property
    def gram(self):
        """The sufficient statistics on the Gram route, else None (``data.gram``; private)."""
        return self.data.gram

    @property
    def n(self):
        """The number of rows (public: neighbours replace one row)."""
        return self.data.n

    # ---- the bounds the fit uses -----------------------------------------------------
    @property
    def x_bounds(self):
        """Bounds of the mapped candidate columns that the fit uses: the spec's public bounds,
        with the bounds learned from the data (``data.learned_bounds``) in their places."""
        return self._with_learned(self.spec.x_bounds, self.spec.candidate_names)

    @property
    def forced_bounds(self):
        """Bounds of the mapped always-in columns that the fit uses (as :attr:`x_bounds`)."""
        return self._with_learned(self.spec.forced_bounds, self.spec.forced_names)

    @property
    def b_y(self):
        """Bound of the mapped response that the fit uses: the spec's, or the learned one."""
        return float(self.data.learned_bounds.get(self.spec.response_name, self.spec.b_y))

    def _with_learned(self, public, names):
        learned = self.data.learned_bounds
        if not learned:
            return public
        return np.array([learned.get(c, b) for c, b in zip(names, public)], dtype=float)

    def replace(self, **changes):
        """A new design with some attributes of the spec and of the data replaced.

        Each name goes to the half that holds it (``X`` to the data, ``candidate_names`` to
        the spec), as :func:`dataclasses.replace` would on one object. The bounds the fit uses
        (``x_bounds``, ``forced_bounds``, ``b_y``) are split as at the build: the entries of
        the columns in ``spec.bounds_from_data`` go to ``data.learned_bounds`` and the spec
        keeps NaN in their places.
        """
        data_names = {f.name for f in fields(DesignData)}
        spec_names = {f.name for f in fields(DesignSpec)}
        unknown = set(changes) - data_names - spec_names
        if unknown:
            raise TypeError(f"Design.replace: unknown attribute(s) {sorted(unknown)}")
        to_data = {k: v for k, v in changes.items() if k in data_names}
        to_spec = {k: v for k, v in changes.items() if k in spec_names}
        if any(k in to_spec for k in _BOUND_FIELDS):
            _split_learned(to_spec, to_data, self)
        return Design(spec=replace(self.spec, **to_spec) if to_spec else self.spec,
                      data=replace(self.data, **to_data) if to_data else self.data)


def _split_learned(to_spec, to_data, design):
    """Move the learned entries of the bounds in ``to_spec`` to ``to_data["learned_bounds"]``."""
    from_data = set(to_spec.get("bounds_from_data", design.spec.bounds_from_data))
    learned = dict(to_data.get("learned_bounds", design.data.learned_bounds))
    for key, names_key in (("x_bounds", "candidate_names"), ("forced_bounds", "forced_names")):
        if key in to_spec:
            names = to_spec.get(names_key, getattr(design.spec, names_key))
            values = np.asarray(to_spec[key], dtype=float)
            learned.update({c: float(b) for c, b in zip(names, values) if c in from_data})
            to_spec[key] = np.array([math.nan if c in from_data else b for c, b in zip(names, values)],
                                    dtype=float)
    if "b_y" in to_spec:
        name = to_spec.get("response_name", design.spec.response_name)
        if name in from_data:
            learned[name] = float(to_spec["b_y"])
            to_spec["b_y"] = math.nan
    to_data["learned_bounds"] = learned
