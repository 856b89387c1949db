"""The selection methods the source papers compare top-R and mistakes with, and the DP peers.

Each module registers its ``method=`` with :func:`dpsubset.selection.base.register_method`
when imported; importing this package registers them all.
"""
from . import samp_agg  # noqa: E402,F401
from . import dp_sis  # noqa: E402,F401
from . import exponential  # noqa: E402,F401
from . import lei_ic  # noqa: E402,F401
from . import mcmc  # noqa: E402,F401
from . import peeling  # noqa: E402,F401
from . import frank_wolfe  # noqa: E402,F401
