"""Privacy: what a release guarantees and what it spent.

``guarantees`` names the four kinds of guarantee (an Enum); ``budget`` holds the plan
made from the settings before any data are read and the ledger each stage spends from;
``report`` builds the :class:`PrivacyReport` of a release as a view of that ledger;
``leaks`` holds the warning for what is not private and the error for what is withheld.
"""
from .budget import BudgetLedger, BudgetPlan
from .guarantees import GUARANTEES, Guarantee
from .leaks import NotReleasedError, PrivacyLeakWarning
from .report import PrivacyReport, build_report

__all__ = ["Guarantee", "GUARANTEES", "BudgetPlan", "BudgetLedger", "PrivacyReport", "build_report",
           "PrivacyLeakWarning", "NotReleasedError"]
