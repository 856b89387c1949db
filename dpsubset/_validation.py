"""Checks of ``dp_best_subset``'s arguments against public sizes and the floating-point range.

The size checks run after the design is built and before any search, so that a
call that cannot give a meaningful release fails at once with a message naming the
argument and the fix: too few rows, an ``R`` beyond the number of supports, or a
budget so small that the noise of the mechanisms is not representable in floating
point. The limits of the range, a budget above :data:`EPS_CEILING` and bounds outside
[:data:`BOUND_MIN`, :data:`BOUND_MAX`] (checked by :class:`dpsubset.design.codebook.Bounds`),
are refused before the data are read.
Every quantity used here is public (n, p, s, the bounds, r, eps): nothing in
these messages depends on the values of the data.

The settings that need no data are rules in one table, :data:`PARAMETER_RULES` (as
scikit-learn's ``_parameter_constraints``): ``Interval(Real, 0, None)`` for a budget,
``Options(...)`` for a choice, ``Flag()`` for a bool; the option objects of
:mod:`dpsubset.settings` apply them to their fields (``Ball.r``) when they are made. :func:`validate_params` applies
them; :func:`is_real`, :func:`is_integer` and :func:`check_positive` are the checks the
method modules share.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass


from .losses import LOSSES

__all__ = ["check_sizes", "check_R", "check_budget_representable", "check_eps_ceiling",
           "FLOAT_LIMIT", "EPS_FLOOR", "EPS_CEILING", "BOUND_MAX", "BOUND_MIN",
           "is_real", "is_integer", "check_positive", "Interval", "Options", "Flag",
           "PARAMETER_RULES", "validate_params"]

#: Largest public constant (noise radius, ridge) the refit may work with: its square,
#: summed over rows and coordinates, must stay below the float maximum (~1.8e308,
#: square root ~1.3e154); 1e150 leaves a margin of 1e4 for those sums.
FLOAT_LIMIT = 1e150
#: Smallest budget of a selection stage: 1/eps (the scale of the gap test's Laplace
#: noise) must be a finite float with room to spare.
EPS_FLOOR = 1e-300
#: Largest total budget: no privacy is left long before (the factor e^eps by which an
#: output's probability may change overflows floating point from eps ~ 709), and
#: eps / Delta times a score, the mechanisms' log-weights, must stay finite for any
#: n a data set can have (Delta is of order 1/n in mapped units).
EPS_CEILING = 1e6
#: Largest |end| of an interval bound and largest scalar bound: the squares of mapped or
#: clipped values and of the bounds themselves (in Delta, the refit's calibration and
#: the map back to the user's units) must stay finite.
BOUND_MAX = FLOAT_LIMIT
#: Smallest scalar bound and smallest half-width of an interval: a narrower interval
#: cannot be mapped to [-1, 1] by representable numbers (its half-width rounds to 0
#: or is subnormal), and the map back to the user's units divides by it.
BOUND_MIN = 1.0 / FLOAT_LIMIT


# ----------------------------------------------------------------- one-value checks
def is_real(value) -> bool:
    """True for a real number that is not a bool (``True`` is an int to Python, not a budget)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def is_integer(value) -> bool:
    """True for an integer that is not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_positive(name, value, *, allow_none=False):
    """A finite number > 0 as a float (None passes through when ``allow_none``).

    Raises
    ------
    ValueError
        Naming ``name``: "<name> must be a finite number > 0, got <value>".
    """
    if value is None and allow_none:
        return None
    if not is_real(value) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


# ------------------------------------------------------------------ parameter rules
@dataclass(frozen=True)
class Interval:
    """A number in an interval (scikit-learn's ``Interval``), or None when ``allow_none``.

    Parameters
    ----------
    kind : {numbers.Real, numbers.Integral}
    left, right : float or None
        Ends (None: unbounded); a Real is always finite.
    closed : {"neither", "left", "right", "both"}
    allow_none : bool
    hint : str
        Appended to the message (for example what the value should be much smaller than).
    """

    kind: type
    left: float | None
    right: float | None
    closed: str = "neither"
    allow_none: bool = False
    hint: str = ""

    def _inside(self, value):
        lo_ok = (self.left is None or value > self.left
                 or (self.closed in ("left", "both") and value == self.left))
        hi_ok = (self.right is None or value < self.right
                 or (self.closed in ("right", "both") and value == self.right))
        return lo_ok and hi_ok

    def describe(self):
        """The rule in words, as the error message gives it."""
        if self.kind is numbers.Integral:
            return f"an integer >= {self.left}" if self.right is None else \
                f"an integer in [{self.left}, {self.right}]"
        if self.right is None and self.left == 0 and self.closed in ("neither", "right"):
            return "a finite number > 0"
        lb = "[" if self.closed in ("left", "both") else "("
        rb = "]" if self.closed in ("right", "both") else ")"
        return f"a number in {lb}{self.left}, {self.right}{rb}"

    def check(self, name, value):
        """``value`` converted (float or int), or a ValueError naming ``name`` and the rule."""
        if value is None and self.allow_none:
            return None
        ok = is_integer(value) if self.kind is numbers.Integral else (
            is_real(value) and math.isfinite(value))
        if not ok or not self._inside(value):
            hint = f" {self.hint}" if self.hint else ""
            raise ValueError(f"{name} must be {self.describe()}{hint}, got {value!r}")
        return int(value) if self.kind is numbers.Integral else float(value)


@dataclass(frozen=True)
class Options:
    """One of a fixed set of values (scikit-learn's ``StrOptions``)."""

    values: tuple
    allow_none: bool = False

    def check(self, name, value):
        """``value``, or a ValueError listing the options."""
        if value is None and self.allow_none:
            return None
        if value not in self.values:
            raise ValueError(f"{name} must be one of {tuple(self.values)}, got {value!r}")
        return value


@dataclass(frozen=True)
class Flag:
    """True or False, nothing else (a TypeError otherwise)."""

    def check(self, name, value):
        """``value``, or a TypeError naming ``name``."""
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be True or False")
        return value


#: The losses of ``loss=`` (scores and refit), defined once in dpsubset/losses.py.
LOSS_NAMES = LOSSES

#: Rules of the settings that need no data and no registry, one table (as scikit-learn's
#: ``_parameter_constraints``): the flat arguments of ``dp_best_subset`` by name, the fields
#: of its option objects (:mod:`dpsubset.settings`) as ``Class.field``, which is also how an
#: error names them. ``method`` is checked against the registered methods, the search's
#: route and the screen by their own modules. Applied in this order by :func:`validate_params`.
_POSITIVE = Interval(numbers.Real, 0, None, allow_none=True)
PARAMETER_RULES = {
    "eps": Interval(numbers.Real, 0, None),
    "s": Interval(numbers.Integral, 1, None, closed="left"),
    "loss": Options(LOSS_NAMES),
    "refit": Flag(),
    "inference": Flag(),
    "Budget.select": _POSITIVE,
    "Budget.refit": _POSITIVE,
    "Budget.inference": _POSITIVE,
    "Budget.gap_test": _POSITIVE,
    "Budget.delta": Interval(numbers.Real, 0, 1, allow_none=True, hint="(and much smaller than 1/n)"),
    "Budget.refit_delta": Interval(numbers.Real, 0, 0.5, allow_none=True, hint="(and much smaller than 1/n)"),
    "Ball.r": _POSITIVE,
    "Ball.lam": _POSITIVE,
    "Ball.r_select": _POSITIVE,
    "Ball.r_refit": _POSITIVE,
    "Ball.lam_select": _POSITIVE,
    "Ball.lam_refit": _POSITIVE,
    "Search.diagnostics": Flag(),
    "Method.R": Interval(numbers.Integral, 2, None, closed="left", allow_none=True,
                         hint="(fixed in advance, not from the data)"),
    "Method.gap_check": Options(("ptr", "assume"), allow_none=True),
    "Huber.h": _POSITIVE,
    "Hinge.h": _POSITIVE,
    "Refit.split": Flag(),
    "Inference.truth_in_ball": Flag(),
}


def validate_params(params, rules=None):
    """Check every setting that has a rule; return the settings with numbers converted.

    Parameters
    ----------
    params : dict
        Name -> value; names without a rule pass through unchanged.
    rules : dict, optional
        Name -> rule (default :data:`PARAMETER_RULES`).

    Returns
    -------
    dict
    """
    rules = PARAMETER_RULES if rules is None else rules
    out = dict(params)
    for name, rule in rules.items():
        if name in out:
            out[name] = rule.check(name, out[name])
    return out


# --------------------------------------------------------------- public ranges
def check_eps_ceiling(eps, name="eps"):
    """Refuse a budget above :data:`EPS_CEILING` (the mechanisms' arithmetic would
    overflow, and such a budget protects nothing)."""
    if eps > EPS_CEILING:
        raise ValueError(f"{name} = {eps:.3g} is beyond any meaningful privacy budget (the factor e^eps that "
                         f"bounds how much one row may change the output overflows floating point above "
                         f"eps ~ 709); use {name} <= {EPS_CEILING:g}")


def check_sizes(n, p, s):
    """n >= 2 rows and n >= s: fewer rows than selected columns cannot say anything."""
    if n < 2:
        raise ValueError(f"data has {n} row; differentially private selection needs at least 2 rows "
                         "(and in practice many more)")
    if n < s:
        raise ValueError(f"data has n = {n} rows, fewer than s = {s} columns to select; choose s <= {n} "
                         "(and in practice n much larger than s)")


def check_R(R, p, s):
    """A user-given R must not exceed C(p, s), the number of supports of size s.

    R = C(p, s) is the exponential mechanism over all supports (exact, pure eps-DP).
    The default R = 2 + (p - s) s is capped at C(p, s) by the search, which is the
    same mechanism; a larger R given by the user is refused rather than silently cut.
    """
    if R is None:
        return
    total = math.comb(p, s)
    if R > total:
        raise ValueError(f"R = {R} exceeds the number of supports C(p, s) = C({p}, {s}) = {total}; "
                         f"choose R <= {total} (R = {total} is the exponential mechanism over all "
                         "supports)")


def check_budget_representable(*, eps_select, selection_parts=()):
    """Refuse selection budgets too small for floating point to represent their noise
    (the scale of the gap test's Laplace noise is 1/eps0). The refit's budget is checked
    by :func:`dpsubset.refit.limits.check_refit_representable`.

    Parameters
    ----------
    eps_select : float
    selection_parts : iterable of float
        Further budgets of the selection (e.g. the gap test's eps0).
    """
    for name, e in [("eps_select", eps_select)] + [("eps0", v) for v in selection_parts if v]:
        if e < EPS_FLOOR:
            raise ValueError(f"{name} = {e:.3g} is below the smallest budget whose noise floating point "
                             f"can represent; use {name} >= {EPS_FLOOR:g}")
