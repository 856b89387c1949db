"""Results: what a release shows, and nothing else.

``results`` is the :class:`DPSubsetResults` object (declared fields only: the support,
the DP coefficients, the privacy report, the public design spec for predictions);
``summary`` builds its statsmodels-style summary; ``tables`` puts several fits side by
side; ``usefulness`` warns, from public quantities only, when no data could make a
release useful.
"""
from .results import DPSubsetResults, NonPrivateDiagnostics, PredictionClippedWarning
from .tables import summary_table
from .usefulness import LowUtilityWarning

__all__ = ["DPSubsetResults", "NonPrivateDiagnostics", "summary_table", "LowUtilityWarning",
           "PredictionClippedWarning"]
