"""The four kinds of guarantee a release can carry, as one enumeration.

Every mechanism declares one of them (``GUARANTEE = "pure"`` in
:mod:`dpsubset.mechanisms`), a selection method reports the one of its stage, and the
privacy report (:mod:`dpsubset.privacy.report`) combines them with the bounds into the
guarantee of the whole release. An unknown name is a ``ValueError`` from the enum
itself, not an ``assert`` that ``python -O`` would skip.
"""
from __future__ import annotations

from enum import Enum

__all__ = ["Guarantee", "GUARANTEES"]


class Guarantee(str, Enum):
    """A kind of differential privacy guarantee, with its statement in words.

    The members compare equal to their names (``Guarantee.PURE == "pure"``), so the
    plain strings that the mechanisms declare and that the reports store are accepted
    wherever a member is.
    """

    PURE = "pure"
    APPROXIMATE = "approximate"
    CONDITIONAL = "conditional"
    VOID = "void"

    @property
    def statement(self) -> str:
        """The guarantee in words, as the first line of a printed report shows it."""
        return _STATEMENTS[self.value]

    def __str__(self) -> str:  # the plain name in f-strings on every Python version
        return self.value


_STATEMENTS = {
    "pure": "pure eps-differential privacy",
    "approximate": "(eps, delta)-differential privacy",
    "conditional": "eps-differential privacy only on data satisfying a condition that is not checked privately",
    "void": "no differential privacy guarantee",
}

#: Name -> statement of every guarantee (the mapping form of :class:`Guarantee`).
GUARANTEES = {g.value: g.statement for g in Guarantee}
