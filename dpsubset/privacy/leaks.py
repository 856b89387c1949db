"""Privacy vocabulary shared by all modules: the warning for what is not private and the
error for what is withheld.

:data:`GUARANTEES` is kept here for the modules that name it; the guarantees themselves
are :class:`dpsubset.privacy.guarantees.Guarantee`.
"""
from __future__ import annotations

from .guarantees import GUARANTEES

__all__ = ["PrivacyLeakWarning", "NotReleasedError", "GUARANTEES"]


class PrivacyLeakWarning(UserWarning):
    """Something in this call is not differentially private.

    Raised (as a warning) when bounds are taken from the data, when the formula
    learns from the data (categorical levels, centring, scaling), or when a user
    asks for non-private diagnostics. The result's privacy report marks the
    guarantee accordingly.
    """


class NotReleasedError(AttributeError):
    """A statsmodels-style attribute that a private fit deliberately does not release.

    Raised when a results attribute such as ``resid``, ``bse`` or ``aic`` is
    accessed. It subclasses :class:`AttributeError`, so ``hasattr(res, "resid")``
    stays False and code that probes for statsmodels attributes keeps working;
    the message says why the quantity is withheld and what to use instead.
    """
