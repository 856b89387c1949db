"""Privacy vocabulary shared by all modules: the warning class and the guarantee names."""
from __future__ import annotations

__all__ = ["PrivacyLeakWarning", "GUARANTEES"]


class PrivacyLeakWarning(UserWarning):
    """Something in this call is not differentially private.

    Raised (as a warning) when bounds are taken from the data, when the formula
    learns from the data (categorical levels, centring, scaling), or when a user
    asks for non-private diagnostics. The result's privacy report marks the
    guarantee accordingly.
    """


# The four kinds of guarantee a result can carry.
GUARANTEES = {
    "pure": "pure eps-differential privacy",
    "approximate": "(eps, delta)-differential privacy",
    "conditional": "eps-differential privacy only on data satisfying a condition that is not checked privately",
    "void": "no differential privacy guarantee",
}
