"""dpsubset: differentially private best subset selection."""
from .api import dp_best_subset
from .settings import Ball, Budget, Formula, Hinge, Huber, Inference, Logistic, Method, Refit, Search, Squared
from .studies.datasets import hitters_bounds, hitters_levels, load_hitters, load_pima, pima_bounds
from .design.codebook import Bounds
from .nonprivate import best_subset_nonprivate
from .privacy.leaks import PrivacyLeakWarning
from .results.results import DPSubsetResults, NonPrivateDiagnostics, NotReleasedError, PrivacyReport
from .results.results import PredictionClippedWarning
from .runtime.limits import SearchMemoryLimit
from .search.outer_approximation import SearchTimeout
from .results.tables import summary_table
from .results.plots import coef_plot, plan_plot
from .results.usefulness import BallBindsWarning, LowUtilityWarning
from .studies.plan import Plan, plan

__version__ = "0.1.0"
__all__ = ["dp_best_subset", "Budget", "Ball", "Search", "Method", "Squared", "Huber", "Hinge", "Logistic",
           "Refit", "Inference", "Formula", "Bounds", "PrivacyLeakWarning", "DPSubsetResults",
           "NonPrivateDiagnostics", "NotReleasedError", "PrivacyReport", "SearchTimeout",
           "SearchMemoryLimit", "load_hitters",
           "hitters_bounds", "hitters_levels", "load_pima", "pima_bounds", "summary_table",
           "best_subset_nonprivate", "LowUtilityWarning", "BallBindsWarning", "PredictionClippedWarning",
           "plan", "Plan", "coef_plot", "plan_plot"]
