"""The settings of one call of :func:`dpsubset.dp_best_subset`, checked before any data are read.

The settings people change most are flat arguments of ``dp_best_subset`` (``eps``, ``s``,
``bounds``, ``method``, ``loss``, ``keep``, ``refit``, ``inference``, ``centre``,
``random_state``, ``verbose``); the others sit in small option objects, each holding
settings that belong together:

=====================================  ===================================================
``budget=Budget(...)``                 how eps (and delta) are shared between the stages
``ball=Ball(...)``                     the coefficient ball's radius and the ridge, per stage
``search=Search(...)``                 the exact search: route, time and memory limits,
                                       solver, the non-private diagnostics
``method=Method(name, ...)``           the selection mechanism and its options
``loss=Huber(h=)``, ``Hinge(...)``,    a loss with its parameters
``Logistic(levels=)``
``refit=Refit(split=)``                the refit (``refit=True``: its defaults)
``inference=Inference(...)``           the private inference (``inference=True``: its defaults)
``formula=Formula(text, context=)``    a formula with the scope its names are looked up in
=====================================  ===================================================

A string (``method="mistakes"``, ``loss="huber"``, ``search="enumeration"``) or a bool
(``refit=True``, ``inference=True``) is the option object with its defaults, and a dict
of its fields (``ball={"r": 0.5}``: the R wrapper's named lists, the command line's
``KEY=VALUE``) is the same as the object. Every field is checked when the object is
made, by the rules of :data:`dpsubset._validation.PARAMETER_RULES` (a ValueError or
TypeError naming the field, ``Ball.r``, and what it takes); the checks that join several
settings run in :func:`build_settings`, which makes the one frozen :class:`Settings` of a
call. An argument of an older version (``r=``, ``eps_select=``, ``time_limit=``, ...)
raises a TypeError naming its new place, from the one table :data:`MOVED`.
"""
from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType

from ._validation import check_eps_ceiling, validate_params
from .design.centring import check_centre
from .design.codebook import as_bounds
from .design.dask import check_dask_request
from .losses import (DEFAULT_LOSS, HingeLoss, HuberLoss, LogisticLoss, SquaredLoss, check_response_levels,
                     loss_class)
from .search.exact import SEARCHES, check_search
from .runtime.limits import resolve_memory_limit, resolve_time_limit
from .selection import METHODS
from .selection.screening import check_screen

__all__ = ["Budget", "Ball", "Search", "Method", "Squared", "Huber", "Hinge", "Logistic", "Refit",
           "Inference", "Formula", "Settings", "StageSettings", "build_settings", "MOVED",
           "refuse_moved", "moved_arguments", "as_option"]


def _check_fields(obj):
    """Apply the rules of PARAMETER_RULES to an option object's fields (``Ball.r``, ...)."""
    name = type(obj).__name__
    given = {f"{name}.{f.name}": getattr(obj, f.name) for f in fields(obj)}
    for key, value in validate_params(given).items():
        object.__setattr__(obj, key.split(".", 1)[1], value)


# ------------------------------------------------------------------------ option objects
@dataclass(frozen=True)
class Budget:
    """How the call's ``eps`` (and delta) are shared between its stages.

    Every field is optional: None takes the stage's default share. Parts are in the
    units of ``eps`` (not shares).

    Parameters
    ----------
    select, refit : float, optional
        The selection's and the refit's budgets. Default: of what the centring and the
        inference leave, half each (``dpsubset.DEFAULT_REFIT_SHARE``). Giving both
        leaves the default centring off (the split is then the whole plan).
    inference : float, optional
        The inference stages' budget, with ``inference=True``; default ``0.2 * eps``,
        taken off the top before the selection / refit split.
    gap_test : float, optional
        The gap test's budget of ``method="mistakes"`` with the private gap check;
        default a quarter of the selection's budget.
    delta : float, optional
        The selection's delta (the gap test's, and that of the (eps, delta)-DP
        baselines); default 1e-6 for the gap test.
    refit_delta : float, optional
        Use the Gaussian (eps, refit_delta)-DP objective perturbation instead of the
        pure one, drawn in floating point (the report says so); below 0.5 and much
        smaller than 1/n. Default: pure, the exact-grid objective perturbation
        (:mod:`dpsubset.refit.exact_grid`), whose guarantee survives floating point.
    """

    select: float | None = None
    refit: float | None = None
    inference: float | None = None
    gap_test: float | None = None
    delta: float | None = None
    refit_delta: float | None = None

    def __post_init__(self):
        _check_fields(self)


@dataclass(frozen=True)
class Ball:
    """The coefficient ball ``||beta|| <= r`` (mapped units) and the ridge, per stage.

    Every field is optional: None takes the stage's public default
    (docs/guide/defaults.md, dpsubset/defaults.py), which reads only the bounds, ``s``,
    the loss and each stage's ``n eps``.

    Parameters
    ----------
    r : float, optional
        Radius of both stages' balls. Default: the radius at which the largest
        prediction the ball allows equals the response bound, ``b_y / sqrt(B_s)``
        (``B_s``: the ``s`` largest squared column bounds plus those of the always-in
        columns), grown with each stage's ``n eps`` above 20,000; for the classification
        losses the largest linear predictor is 2 in the selection and 6 in the refit. For
        least squares on a centred design (a codebook and an intercept) the selection's
        radius follows the released spread of the best support's fitted values instead
        (docs/methods/centring.md, "The best support's fit"), and the refit's grows to the
        released support's spreads at large ``n eps`` (docs/methods/refit.md).
        A larger ``r`` raises the scores' sensitivity quadratically.
    lam : float, optional
        The selection's ridge (> 0): the penalty ``(lam / 2n) ||beta||^2``. Default 1,
        less above ``n eps = 10,000``; for logistic and hinge
        ``max(1, 0.01 n, 5 B_s ln C(p, s) / (2 eps))``.
    r_select, r_refit : float, optional
        The radius of one stage instead of ``r`` (giving ``r`` too is an error): the
        selection's sets its sensitivity, the refit's scales its noise.
    lam_select : float, optional
        The selection's ridge, the same as ``lam`` (giving both is an error).
    lam_refit : float, optional
        A floor under the refit's ridge: it uses ``max(lam_refit, 2 lambda / eps_obj)``,
        the second term being objective perturbation's own. Not with ``inference``.
    """

    r: float | None = None
    lam: float | None = None
    r_select: float | None = None
    r_refit: float | None = None
    lam_select: float | None = None
    lam_refit: float | None = None

    def __post_init__(self):
        _check_fields(self)
        for both, own in (("r", "r_select"), ("r", "r_refit"), ("lam", "lam_select")):
            if getattr(self, both) is not None and getattr(self, own) is not None:
                what = "the radius of both stages" if both == "r" else "the selection's ridge"
                raise ValueError(f"Ball: {both}= and {own}= were both given, and {both}= already sets "
                                 f"{what}; pass one of them")

    def per_stage(self):
        """The same ball with ``r`` and ``lam`` moved into the stages' own fields."""
        pick = lambda a, b: a if a is not None else b  # noqa: E731
        return Ball(r_select=pick(self.r_select, self.r), r_refit=pick(self.r_refit, self.r),
                    lam_select=pick(self.lam_select, self.lam), lam_refit=self.lam_refit)


@dataclass(frozen=True)
class Search:
    """How the exact searches are solved, and their limits.

    Parameters
    ----------
    route : {"auto", "enumeration", "branch_and_bound", "outer_approximation", "pyomo", "scip"}
        ``"auto"``: enumeration where a cost model of the public (loss, n, p, s) puts it
        below the certified search; else rank-one/rank-two updates with certified
        bounds and, where those do not close, the branch and bound with
        perspective-relaxation bounds (docs/methods/branch-and-bound.md).
        ``"outer_approximation"``: HiGHS cuts. ``"pyomo"``: the paper's formulation (9)
        through Pyomo with an external MIQCP solver (``solver``), least squares only.
        ``"scip"``: the same formulation with SCIP through pyscipopt.
    time_limit : float, optional
        Seconds for the whole call (default None: 600 s; ``math.inf``: no limit). Past
        it nothing is released (SearchTimeout). Whether a call times out depends on the
        data: fix the limit before looking at them and do not publish a time-out
        (docs/guide/time-limits.md).
    memory_limit : float, optional
        Bytes the exact search's growing structures may hold (default None: half the
        machine's memory; ``math.inf``: no limit); past it the search stops like a
        time-out (SearchMemoryLimit) and nothing is released.
    solver : str, optional
        With ``route="pyomo"``: a Pyomo solver name (``"gurobi_persistent"``,
        ``"scip_direct"``, ...); default the first one available.
    solver_options : dict, optional
        With ``route="pyomo"`` or ``"scip"``: that solver's options in its own names.
    diagnostics : bool
        Also return the search's NON-PRIVATE values (the best support, candidate
        scores, certificates) as a :class:`~dpsubset.NonPrivateDiagnostics`, with a
        warning: ``dp_best_subset`` then returns ``(result, diagnostics)``.
    """

    route: str = "auto"
    time_limit: float | None = None
    memory_limit: float | None = None
    solver: str | None = None
    solver_options: Mapping | None = None
    diagnostics: bool = False

    def __post_init__(self):
        _check_fields(self)
        if self.route not in SEARCHES:
            raise ValueError(f"Search.route must be one of {SEARCHES}, got {self.route!r}")
        resolve_time_limit(self.time_limit, name="Search.time_limit")
        resolve_memory_limit(self.memory_limit, name="Search.memory_limit")
        if self.solver_options is not None and not isinstance(self.solver_options, Mapping):
            raise TypeError("Search.solver_options must be a dict of the solver's options")


class Method:
    """The private selection mechanism and its options.

    Parameters
    ----------
    name : str
        A registered method (:data:`dpsubset.selection.base.METHODS`): ``"top_r"``
        (the default), ``"mistakes"``, or a baseline (``"samp_agg"``, ``"dp_sis"``,
        ``"exponential"``, ``"lei_ic"``, ``"mcmc"``, ``"peeling"``, ``"frank_wolfe"``).
    R : int, optional
        ``"top_r"`` and ``"mistakes"``: the length of the top-R list, fixed in advance;
        default ``2 + (p - s) s``, capped at C(p, s).
    gap_check : {"ptr", "assume"}, optional
        ``"mistakes"`` only: ``"ptr"`` (default) runs a private test of the score gap
        and falls back to top-R, (eps, delta)-DP unconditionally; ``"assume"`` is the
        paper's conditional guarantee (not checked).
    screen : None, True, int or dict, optional
        ``"top_r"`` and ``"mistakes"``: private DP-SIS screening before the search.
        True: the defaults (``k = 10 s`` columns kept, half of the selection budget);
        an int: ``k``; a dict: ``k``, ``share``, ``gamma`` (docs/methods/screening.md).
    **options
        The method's own options (each method's ``validate``; e.g. ``blocks=`` of
        ``"samp_agg"``, ``n_iter=`` of ``"mcmc"``), checked against the budget before
        any data are read.
    """

    __slots__ = ("name", "R", "gap_check", "screen", "options")

    def __init__(self, name="top_r", *, R=None, gap_check=None, screen=None, **options):
        if not isinstance(name, str):
            raise TypeError(f"Method.name must be a method's name (a str), got {name!r}")
        if name not in METHODS:
            raise ValueError(f"Method.name must be one of {tuple(METHODS)}, got {name!r}")
        for key, new in (("eps0", "budget=Budget(gap_test=...)"), ("delta", "budget=Budget(delta=...)")):
            if key in options:
                raise TypeError(f"Method: {key}= is a budget: use {new}")
        checked = validate_params({"Method.R": R, "Method.gap_check": gap_check})
        if gap_check is not None and name != "mistakes":
            raise ValueError(f"Method.gap_check is only used with Method('mistakes'), got Method({name!r})")
        for key, value in (("name", name), ("R", checked["Method.R"]), ("gap_check", gap_check),
                           ("screen", screen), ("options", MappingProxyType(dict(options)))):
            object.__setattr__(self, key, value)

    def __setattr__(self, key, value):
        raise AttributeError(f"Method is frozen: make a new Method instead of setting {key}")

    def __eq__(self, other):
        return isinstance(other, Method) and self._key() == other._key()

    def __hash__(self):
        return hash((self.name, self.R, self.gap_check))

    def _key(self):
        return (self.name, self.R, self.gap_check, self.screen, dict(self.options))

    def __repr__(self):
        given = [f"{k}={getattr(self, k)!r}" for k in ("R", "gap_check", "screen") if getattr(self, k) is not None]
        given += [f"{k}={v!r}" for k, v in self.options.items()]
        return f"Method({', '.join([repr(self.name)] + given)})"

    def __reduce__(self):
        return (_method_from_fields, (self.name, self.R, self.gap_check, self.screen, dict(self.options)))

    def selection_options(self):
        """The options the method's ``validate`` takes (R and gap_check where given)."""
        out = dict(self.options)
        out.update({k: getattr(self, k) for k in ("R", "gap_check") if getattr(self, k) is not None})
        return out


def _method_from_fields(name, R, gap_check, screen, options):
    return Method(name, R=R, gap_check=gap_check, screen=screen, **options)


@dataclass(frozen=True)
class Squared:
    """Least squares, ``(y - eta)^2 / 2`` (``loss="squared"``, the default)."""

    loss_class = SquaredLoss


@dataclass(frozen=True)
class Huber:
    """The pseudo-Huber loss, for regression with outliers (``loss="huber"``).

    Parameters
    ----------
    h : float, optional
        Threshold in the mapped units of the response (public); default ``0.5 * b_y``,
        about 1.5 standard deviations when y is clipped at three.
    """

    h: float | None = None
    loss_class = HuberLoss

    def __post_init__(self):
        _check_fields(self)


def _check_levels(obj):
    if obj.levels is not None:
        try:
            levels = check_response_levels(obj.levels)
        except ValueError as err:
            name = type(obj).__name__
            raise ValueError(str(err).replace("response_levels=", "levels=")
                             .replace("response_levels", f"{name}.levels")) from None
        object.__setattr__(obj, "levels", levels)


@dataclass(frozen=True)
class Logistic:
    """The logistic loss, for two classes coded -1/+1 (``loss="logistic"``).

    Parameters
    ----------
    levels : pair, optional
        ``(class coded -1, class coded +1)``, fixed in advance, e.g. ``(-1, 1)`` or
        ``("control", "case")``. Without it the coding comes from the column's type,
        never from the values that occur: a two-level Categorical (an R factor) by its
        declared categories, bools as (False, True), numbers as (0, 1); so a response
        coded -1/+1 needs ``levels=(-1, 1)``. The result reports the coding
        (``result.response_levels``).
    """

    levels: tuple | None = None
    loss_class = LogisticLoss

    def __post_init__(self):
        _check_levels(self)


@dataclass(frozen=True)
class Hinge:
    """The softplus-smoothed hinge loss, for two classes coded -1/+1 (``loss="hinge"``).

    Parameters
    ----------
    h : float, optional
        Smoothing width (public); default 0.5. The scores and their sensitivity are
        for this smoothed loss.
    levels : pair, optional
        The classes' coding, as for :class:`Logistic`.
    """

    h: float | None = None
    levels: tuple | None = None
    loss_class = HingeLoss

    def __post_init__(self):
        _check_fields(self)
        _check_levels(self)


LOSS_OPTIONS = {cls.loss_class.name: cls for cls in (Squared, Huber, Logistic, Hinge)}


@dataclass(frozen=True)
class NamedLoss:
    """A registered loss without options of its own (a :class:`dpsubset.losses.Loss`
    subclass added after the package's four), given by its name."""

    name: str

    @property
    def loss_class(self):
        return loss_class(self.name)


@dataclass(frozen=True)
class Refit:
    """The refit: objective perturbation on the released support (``refit=True``).

    Its budget is ``Budget(refit=, refit_delta=)``, its ball and ridge
    ``Ball(r_refit=, lam_refit=)``.

    Parameters
    ----------
    split : bool
        Select on a random half of the rows and refit (with its inference) on the other
        half. The split is drawn independently of the data, so by parallel composition
        under replace-one the release is max(eps of the two parts)-DP, and each part may
        spend the whole ``eps``; the intervals of ``inference`` then hold whatever the
        selection did (docs/guide/inference.md).
    """

    split: bool = False

    def __post_init__(self):
        _check_fields(self)


@dataclass(frozen=True)
class Inference:
    """Private uncertainty of a release (``inference=True``; docs/guide/inference.md).

    Standard errors, intervals and tests of the coefficients by a parametric bootstrap of
    the refit on privately released second moments, and the selection confidence. Its
    budget is ``Budget(inference=)``; to refit on rows the selection did not see, use
    ``refit=Refit(split=True)``.

    Parameters
    ----------
    truth_in_ball : bool
        State that you know, from outside the data, that the true coefficients lie inside
        the refit's ball (norm at most ``r_refit``, mapped units). By default a release
        on the ball's sphere gets intervals that also hold truths beyond it; with True
        they assume the truth inside the ball, as the summary then says.
    """

    truth_in_ball: bool = False

    def __post_init__(self):
        _check_fields(self)


@dataclass(frozen=True)
class Formula:
    """A formula with the scope in which its names are looked up.

    Parameters
    ----------
    text : str
        The formula, e.g. ``"y ~ log(x1) + x2"``.
    context : mapping, optional
        Where the formula finds the functions, modules and constants it names that are
        not columns of the data (formulaic's ``context``). None: the scope of the caller
        of ``dp_best_subset``. Objects that could hold data (arrays, lists, Series, ...)
        are refused when the formula uses them.
    """

    text: str
    context: Mapping | None = None

    def __post_init__(self):
        if not isinstance(self.text, str):
            raise TypeError(f"Formula.text must be a formula string such as 'y ~ .', got {self.text!r}")
        if self.context is not None and not isinstance(self.context, Mapping):
            raise TypeError("Formula.context must be a mapping of names to objects (or None)")


# --------------------------------------------------------------------- coercion
#: argument -> (option class, the value a plain string gives: the field it sets)
_OPTION_OF = {"budget": Budget, "ball": Ball, "search": Search, "refit": Refit, "inference": Inference}


def as_option(argument, value):
    """The option object of ``argument`` from what the user gave.

    None -> the defaults; an object of the class -> itself; a dict -> the class with these
    fields (an unknown key is a TypeError listing the fields); ``search`` also takes the
    route as a string, ``method`` and ``loss`` a name (or a dict with ``"name"``),
    ``refit`` and ``inference`` a bool (False: None, the stage is off).
    """
    if argument == "method":
        return _as_method(value)
    if argument == "loss":
        return _as_loss(value)
    cls = _OPTION_OF[argument]
    if isinstance(value, cls):
        return value
    if argument in ("refit", "inference") and isinstance(value, bool):
        return cls() if value else None
    if value is None:
        return None if argument in ("refit", "inference") else cls()
    if argument == "search" and isinstance(value, str):
        return Search(route=value)
    if isinstance(value, Mapping):
        return _from_dict(cls, argument, value)
    what = {"refit": "True or False", "inference": "True or False", "search": "a route name"}.get(argument, "None")
    raise TypeError(f"{argument} must be {what}, a dpsubset.{cls.__name__} or a dict of its fields, "
                    f"got {type(value).__name__}")


def _from_dict(cls, argument, value):
    names = [f.name for f in fields(cls)] if cls is not Method else ["name", "R", "gap_check", "screen"]
    unknown = sorted(set(value) - set(names)) if cls is not Method else []
    if unknown:
        raise TypeError(f"{argument}: unknown field(s) {unknown}; dpsubset.{cls.__name__} takes "
                        f"{', '.join(names) if names else 'no fields'}")
    return cls(**{str(k): v for k, v in value.items()})


def _as_method(value):
    if isinstance(value, Method):
        return value
    if isinstance(value, Mapping) and "name" not in value:
        raise TypeError("method: a dict needs the method's 'name', e.g. {'name': 'mistakes', 'R': 50}")
    name = value.get("name") if isinstance(value, Mapping) else value
    if not isinstance(name, str):
        raise TypeError(f"method must be a method's name or a dpsubset.Method, got {type(value).__name__}")
    if name not in METHODS:
        raise ValueError(f"method must be one of {tuple(METHODS)}, got {name!r}")
    return Method(value) if isinstance(value, str) else _from_dict(Method, "method", value)


def _as_loss(value):
    if isinstance(value, (*LOSS_OPTIONS.values(), NamedLoss)):
        return value
    name = value.get("name") if isinstance(value, Mapping) else value
    if isinstance(name, str):
        validate_params(dict(loss=name))  # the rule's message: "loss must be one of ..."
        if name not in LOSS_OPTIONS:  # a loss registered later: no options to take
            if not isinstance(value, str) and set(value) != {"name"}:
                raise TypeError(f"loss={name!r} takes no options, got {sorted(set(value) - {'name'})}")
            return NamedLoss(name)
        if isinstance(value, str):
            return LOSS_OPTIONS[value]()
        rest = {k: v for k, v in value.items() if k != "name"}
        return _from_dict(LOSS_OPTIONS[name], "loss", rest)
    raise TypeError(f"loss must be one of {tuple(LOSS_OPTIONS)}, a dpsubset loss option "
                    f"(Huber(h=), Hinge(h=, levels=), Logistic(levels=)) or a dict with its 'name', "
                    f"got {value!r}")


# ---------------------------------------------------------------- old keywords
#: Each keyword of an older version and its new place (one table for every entry point).
MOVED = {
    "r": "ball=dpsubset.Ball(r=...)",
    "lam": "ball=dpsubset.Ball(lam=...)",
    "r_select": "ball=dpsubset.Ball(r_select=...)",
    "r_refit": "ball=dpsubset.Ball(r_refit=...)",
    "lam_select": "ball=dpsubset.Ball(lam_select=...)",
    "lam_refit": "ball=dpsubset.Ball(lam_refit=...)",
    "eps_select": "budget=dpsubset.Budget(select=...)",
    "eps_refit": "budget=dpsubset.Budget(refit=...)",
    "eps_inference": "budget=dpsubset.Budget(inference=...)",
    "eps0": "budget=dpsubset.Budget(gap_test=...)",
    "delta": "budget=dpsubset.Budget(delta=...)",
    "refit_delta": "budget=dpsubset.Budget(refit_delta=...)",
    "R": "method=dpsubset.Method('top_r', R=...)",
    "gap_check": "method=dpsubset.Method('mistakes', gap_check=...)",
    "screen": "method=dpsubset.Method('top_r', screen=...)",
    "method_options": "method=dpsubset.Method(name, **options)",
    "huber_h": "loss=dpsubset.Huber(h=...)",
    "hinge_h": "loss=dpsubset.Hinge(h=...)",
    "response_levels": "loss=dpsubset.Logistic(levels=...) or dpsubset.Hinge(levels=...)",
    "split": "refit=dpsubset.Refit(split=True)",
    "truth_in_ball": "inference=dpsubset.Inference(truth_in_ball=True)",
    "time_limit": "search=dpsubset.Search(time_limit=...)",
    "memory_limit": "search=dpsubset.Search(memory_limit=...)",
    "solver": "search=dpsubset.Search(route='pyomo', solver=...)",
    "solver_options": "search=dpsubset.Search(route=..., solver_options=...)",
    "diagnostics": "search=dpsubset.Search(diagnostics=True)",
    "context": "formula=dpsubset.Formula('y ~ ...', context=...)",
}


def refuse_moved(kwargs, where="dp_best_subset", table=None):
    """A TypeError for the first keyword of ``kwargs`` that moved (``table``, default :data:`MOVED`)."""
    table = MOVED if table is None else table
    old = [k for k in kwargs if k in table]
    if old:
        more = "" if len(old) == 1 else f" (and {', '.join(f'{k}=' for k in old[1:])})"
        raise TypeError(f"{where}(): {old[0]}= moved: use {table[old[0]]}{more}; "
                        "docs/guide/settings.md lists every setting's place")


def moved_arguments(func=None, *, table=None):
    """Wrap an entry point so that an old keyword is refused, naming its new place, before
    the function runs (its signature stays that of ``func``). ``table``: old keyword ->
    its new place (default :data:`MOVED`).

    Note: the wrapper adds one frame between the caller and ``func``; an entry point that
    captures its caller's scope looks one level further up.
    """
    if func is None:
        return functools.partial(moved_arguments, table=table)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        refuse_moved(kwargs, func.__name__, table)
        return func(*args, **kwargs)
    return wrapper


# ------------------------------------------------------------------- the settings
@dataclass(frozen=True)
class StageSettings:
    """What the design's public numbers add to the settings (the stages' defaults)."""

    n: int
    p: int
    r: float
    lam: float
    loss_options: dict
    r_refit: float = None  # the refit's radius (None: the selection's r)
    lam_refit: float = 0.0  # the refit's ridge floor (0: the objective perturbation's own minimum)
    r_refit_from: str | None = None  # where a refit radius other than the default came from (the report says)
    r_from: str | None = None  # the same for the selection's radius


@dataclass(frozen=True)
class Settings:
    """The settings of one call, checked, in one frozen object (built by :func:`build_settings`).

    The option objects are kept as given, except that ``ball`` holds each stage's own
    radius and ridge (:meth:`Ball.per_stage`); ``refit`` and ``inference`` are None when
    the stage is off. The values that need the design (the defaults of r and lam) come
    later, in ``stages``.
    """

    eps: float
    s: int
    method: Method
    loss_spec: object  # Squared, Huber, Logistic or Hinge
    budget: Budget
    ball: Ball
    search: Search
    refit: Refit | None
    inference: Inference | None
    centre: object  # CentreSettings or None
    bounds: object
    keep: object
    random_state: object
    verbose: object
    on_dask: bool
    screen: object  # ScreenSpec or None
    time_limit: float | None  # seconds, resolved (None: no limit)
    memory_limit: float | None  # bytes, resolved (None: no limit)
    solver: str | None  # resolved for the MIQCP routes
    solver_options: dict | None
    options: dict | None = None  # the method's options, checked against its budget (Step 2)
    stages: StageSettings | None = field(default=None)  # the design's defaults (Step 3)

    @property
    def loss(self) -> str:
        """The loss's name."""
        return self.loss_spec.loss_class.name

    @property
    def huber_h(self):
        return getattr(self.loss_spec, "h", None) if isinstance(self.loss_spec, Huber) else None

    @property
    def hinge_h(self):
        return getattr(self.loss_spec, "h", None) if isinstance(self.loss_spec, Hinge) else None

    @property
    def response_levels(self):
        return getattr(self.loss_spec, "levels", None)

    @property
    def split(self) -> bool:
        return self.refit is not None and self.refit.split

    @property
    def truth_in_ball(self) -> bool:
        return self.inference is not None and self.inference.truth_in_ball

    def with_stages(self, stages):
        """These settings with the design's defaults (:class:`StageSettings`)."""
        return replace(self, stages=stages)


def build_settings(*, eps, s, bounds=None, method="top_r", loss=DEFAULT_LOSS, keep=None, refit=True,
                   inference=False, centre=None, random_state=None, verbose=None, budget=None, ball=None,
                   search=None, on_dask=False):
    """Step 1 of a release: the call's :class:`Settings` from the user's arguments, no data read.

    Each option object checks its own fields when it is made; this checks the settings
    that join several of them (a loss the method supports, a refit setting with
    ``refit=False``, ...).

    Returns
    -------
    Settings

    Raises
    ------
    ValueError, TypeError
        Naming the setting and the fix.
    """
    v = validate_params(dict(eps=eps, s=s))
    check_eps_ceiling(v["eps"])
    method = as_option("method", method)
    loss_spec = as_option("loss", loss)
    loss_name = loss_spec.loss_class.name
    if loss_name not in METHODS[method.name].losses:
        raise ValueError(f"method={method.name!r} supports loss in {METHODS[method.name].losses}, "
                         f"got loss={loss_name!r}")
    budget, ball, search = (as_option(a, x) for a, x in (("budget", budget), ("ball", ball), ("search", search)))
    refit, inference = as_option("refit", refit), as_option("inference", inference)
    if on_dask:
        check_dask_request(loss=loss_name, method=method.name)
    solver, solver_options = check_search(search.route, search.solver,
                                          None if search.solver_options is None else dict(search.solver_options),
                                          loss_name)
    _check_stage_switches(budget, ball, refit, inference, on_dask)
    screen = check_screen(method.screen, s=v["s"], method=method.name)
    if on_dask and screen is not None:
        raise ValueError("Method(screen=...) is not available for Dask data frames (the Dask route keeps only "
                         "the sufficient statistics); no screen, or pass a pandas DataFrame")
    centre = _centre_settings(centre, bounds, on_dask, budget)
    return Settings(eps=v["eps"], s=v["s"], method=method, loss_spec=loss_spec, budget=budget,
                    ball=ball.per_stage(), search=search, refit=refit, inference=inference, centre=centre,
                    bounds=bounds, keep=keep, random_state=random_state, verbose=verbose, on_dask=on_dask,
                    screen=screen, time_limit=resolve_time_limit(search.time_limit),
                    memory_limit=resolve_memory_limit(search.memory_limit), solver=solver,
                    solver_options=solver_options)


def _check_stage_switches(budget, ball, refit, inference, on_dask):
    """A setting of a stage that is off, and what a stage cannot do on this route."""
    if refit is None:
        for name, value, place in (("refit", budget.refit, "Budget"), ("refit_delta", budget.refit_delta, "Budget"),
                                   ("r_refit", ball.r_refit, "Ball"), ("lam_refit", ball.lam_refit, "Ball")):
            if value is not None:
                raise ValueError(f"{place}.{name} was given but refit=False: it sets the refit; drop it "
                                 "or set refit=True")
    if inference is None and budget.inference is not None:
        raise ValueError("Budget.inference was given but inference=False; add inference=True")
    if inference is not None and ball.lam_refit is not None:
        raise ValueError("Ball.lam_refit with inference=True: the bootstrap replays the refit with the "
                         "objective perturbation's own ridge; drop lam_refit or set inference=False")
    if on_dask:
        if ball.lam_refit is not None:
            raise ValueError("Ball.lam_refit is not available for Dask data frames (their refit runs on the "
                             "sufficient statistics with the mechanism's own ridge); drop lam_refit")
        if refit is not None and refit.split:
            raise ValueError("Refit(split=True) needs the rows (it splits them); it is not available for Dask "
                             "data frames: no split, or pass a pandas DataFrame")


def _centre_settings(centre, bounds, on_dask, budget):
    """``centre=``'s settings, or None (no centring); no data read."""
    if centre is None and budget.select is not None and budget.refit is not None:
        return None  # an explicit split of the selection and the refit leaves the default off
    settings = check_centre(centre, as_bounds(bounds))
    if on_dask and settings is not None:
        if centre is None:  # the default: the Dask route reduces partitions without a centring pass
            return None
        raise ValueError("centre= is not available for Dask data frames (their partitions are reduced to the "
                         "sufficient statistics in one pass); centre=False, or pass a pandas DataFrame")
    return settings
