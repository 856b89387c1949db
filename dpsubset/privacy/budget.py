"""The privacy budget: a plan made from the public settings, and a ledger each stage spends from.

:class:`Stage` names the stages that spend (an enumeration: a stage the plan does not
know is an error, not a silent new entry). :class:`BudgetPlan` splits ``eps`` between
them (centring, screen, selection and its gap test, refit, the inference stages) before
any data are read, from the settings only. :class:`BudgetLedger` is what the stages
spend from while the call runs (diffprivlib's ``BudgetAccountant`` is the model): each
:meth:`BudgetLedger.spend` checks the stage's part of the plan and records the stage's
mechanism, eps, delta and the guarantee its mechanism declares. The privacy report
(:mod:`dpsubset.privacy.report`) is a view of the ledger: its stages are the ledger's
entries, its totals their sums (basic composition), its guarantee the weakest of the
entries' (:attr:`BudgetLedger.guarantee`) unless the bounds void it.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

from .._validation import check_eps_ceiling, check_positive
from .guarantees import Guarantee

__all__ = ["Stage", "BudgetPlan", "BudgetLedger", "BudgetExceededError", "DEFAULT_REFIT_SHARE"]

#: Share of the total eps given to the refit when refit=True and no split is given.
DEFAULT_REFIT_SHARE = 0.5
#: Relative slack of the checks: eps0 + (eps - eps0) may exceed eps by a rounding error.
_ROUNDING = 1e-12


class BudgetExceededError(RuntimeError):
    """A stage tried to spend more than the plan gave it (a bug in the package, not in the call)."""


class Stage(str, Enum):
    """A stage of a release that spends privacy budget.

    The members compare equal to their names as the report prints them
    (``Stage.GAP_TEST == "selection: gap test"``). The part before a colon is the
    stage's group: the gap test is part of the selection's budget, the three inference
    stages share the inference's.
    """

    CENTRING = "centring"
    SCREENING = "screening"
    SELECTION = "selection"
    GAP_TEST = "selection: gap test"
    REFIT = "refit"
    MOMENTS = "inference: second moments"
    RESIDUAL = "inference: residual variance"
    CONFIDENCE = "inference: selection confidence"

    @property
    def group(self) -> str:
        """The part of the plan the stage belongs to ("selection" for the gap test)."""
        return self.value.split(":")[0]

    @property
    def rows(self) -> str:
        """The part of the rows the stage reads with ``split=True``: "all rows" (before the
        split), "selection rows" or "refit rows"."""
        if self is Stage.CENTRING:
            return "all rows"
        if self in (Stage.SCREENING, Stage.SELECTION, Stage.GAP_TEST, Stage.CONFIDENCE):
            return "selection rows"
        return "refit rows"

    def __str__(self) -> str:  # the plain name in f-strings on every Python version
        return self.value


#: The order of strength of the guarantees, weakest last: the ledger's guarantee is the
#: weakest of its entries' (a conditional stage makes the whole release conditional).
_STRENGTH = (Guarantee.PURE, Guarantee.APPROXIMATE, Guarantee.CONDITIONAL, Guarantee.VOID)


@dataclass(frozen=True)
class BudgetPlan:
    """How the call's eps is split between its stages, fixed before the data are read.

    Attributes
    ----------
    eps : float
        The total budget of the call.
    eps_select : float
        The selection's part (a gap test's eps0 included), after the screen's share.
    eps_refit : float
        The refit's part (0 when ``refit=False``).
    eps_screen : float
        The private screen's part (0 without a screen).
    eps_gap_test : float
        The part of ``eps_select`` spent on the private gap test of the mistakes
        mechanism (``gap_check="ptr"``; 0 otherwise): see :meth:`with_gap_test`.
    eps_moments, eps_confidence : float
        The inference stages' parts (``inference=True``; 0 otherwise): the noisy
        second moments of the intervals and the selection confidence
        (:mod:`dpsubset.inference.budget`).
    eps_centre : float
        The centring stage's part (the private centre and spread of the codebook columns,
        :mod:`dpsubset.design.centring`; 0 without it), taken off the top. It reads every
        row, so with ``split=True`` it counts in both parts of the rows.
    eps_residual : float
        The part of ``eps_moments`` for the residual variance of the prediction intervals
        (:data:`dpsubset.inference.budget.RESIDUAL_SHARE` of it for least squares and
        Huber; 0 otherwise).
    split : bool
        ``split=True``: the selection's stages (screen, selection, confidence) and the
        refit's (refit, second moments) run on disjoint random rows, and the total is
        the larger part's by parallel composition (:meth:`BudgetLedger.part_eps`).
    """

    eps: float
    eps_select: float
    eps_refit: float
    eps_screen: float = 0.0
    eps_gap_test: float = 0.0
    eps_moments: float = 0.0
    eps_confidence: float = 0.0
    eps_centre: float = 0.0
    split: bool = False
    eps_residual: float = 0.0

    @classmethod
    def from_settings(cls, eps, *, refit, eps_select=None, eps_refit=None, screen_share=None,
                      eps_moments=0.0, eps_confidence=0.0, eps_residual=0.0, eps_centre=0.0, split=False):
        """The plan of one call from its settings (public numbers only).

        Parameters
        ----------
        eps : float
            Total budget (> 0).
        refit : bool
            Whether a refit takes a part.
        eps_select, eps_refit : float, optional
            A manual split; by default :data:`DEFAULT_REFIT_SHARE` of ``eps`` goes to
            the refit and the rest to the selection.
        screen_share : float, optional
            Share of the selection's part spent on a private screen (None: no screen).
        eps_moments, eps_confidence : float
            The inference stages' parts (:func:`dpsubset.inference.inference_parts`).
            Without a split they come off the top and the rest is split between
            selection and refit; with ``split=True`` the selection's rows get
            ``eps - eps_confidence`` and the refit's rows ``eps - eps_moments``.
        eps_residual : float
            The residual variance's part of ``eps_moments``.
        eps_centre : float
            The centring stage's part, off the top (before every other split).
        split : bool
            Selection and refit on disjoint random rows (parallel composition).

        Returns
        -------
        BudgetPlan

        Raises
        ------
        ValueError
            A budget that is not a finite number > 0, beyond the ceiling, a part given
            with ``refit=False``, or parts that do not fit in ``eps``.
        """
        eps = check_positive("eps", eps)
        check_eps_ceiling(eps)
        eps_centre = float(eps_centre)
        rest = eps - eps_centre  # the centring reads every row: off the top in both modes
        if split:
            eps_select, eps_refit = _split_parts(rest, refit, eps_select, eps_refit, eps_moments,
                                                 eps_confidence)
        else:
            eps_select, eps_refit = _split(rest - eps_moments - eps_confidence, refit, eps_select,
                                           eps_refit)
        eps_screen = 0.0
        if screen_share is not None:
            # The screen takes its share out of the selection budget (the refit's is unchanged).
            eps_screen = screen_share * eps_select
            eps_select = eps_select - eps_screen
        if not 0.0 <= eps_residual <= eps_moments:
            raise BudgetExceededError(f"the residual variance's eps = {eps_residual:.6g} is not a part of "
                                      f"the second moments' {eps_moments:.6g}")
        return cls(eps=eps, eps_select=eps_select, eps_refit=eps_refit, eps_screen=eps_screen,
                   eps_moments=float(eps_moments), eps_confidence=float(eps_confidence),
                   eps_centre=eps_centre, split=bool(split), eps_residual=float(eps_residual))

    def with_gap_test(self, eps0):
        """The plan with ``eps0`` of the selection's part set aside for a gap test.

        Parameters
        ----------
        eps0 : float or None
            The gap test's budget, as the method's options fixed it before the data
            were read (None: no gap test, the plan is returned unchanged).
        """
        if eps0 is None:
            return self
        if not 0 < eps0 < self.eps_select:
            raise BudgetExceededError(f"the gap test's eps0 = {eps0:.6g} is not a part of the "
                                      f"selection's {self.eps_select:.6g}")
        return replace(self, eps_gap_test=float(eps0))

    def allowance(self, stage):
        """The eps a stage may spend: a :class:`Stage` (its own part), or a group's name
        (``"selection"``: the selection with its gap test; ``"inference"``: all three
        inference stages)."""
        own = {Stage.GAP_TEST: self.eps_gap_test, Stage.MOMENTS: self.eps_moments - self.eps_residual,
               Stage.RESIDUAL: self.eps_residual, Stage.CONFIDENCE: self.eps_confidence}
        if stage in own:
            return own[stage]
        group = stage.group if isinstance(stage, Stage) else str(stage)
        parts = {"screening": self.eps_screen, "selection": self.eps_select, "refit": self.eps_refit,
                 "inference": self.eps_moments + self.eps_confidence, "centring": self.eps_centre}
        if group not in parts:
            raise BudgetExceededError(f"stage {stage!r} has no part in the budget plan")
        return parts[group]


def _split(eps, refit, eps_select, eps_refit):
    """The selection / refit split of ``eps`` (both parts > 0 and within eps)."""
    eps_select = check_positive("eps_select", eps_select, allow_none=True)
    eps_refit = check_positive("eps_refit", eps_refit, allow_none=True)
    if not refit:
        if eps_refit is not None:
            raise ValueError("eps_refit was given but refit=False")
        if eps_select is not None and eps_select > eps * (1 + _ROUNDING):
            raise ValueError(f"eps_select ({eps_select}) exceeds eps ({eps})")
        return (eps if eps_select is None else eps_select), 0.0
    if eps_select is None and eps_refit is None:
        eps_refit = DEFAULT_REFIT_SHARE * eps
        eps_select = eps - eps_refit
    elif eps_select is None:
        eps_select = eps - eps_refit
    elif eps_refit is None:
        eps_refit = eps - eps_select
    if eps_select <= 0 or eps_refit <= 0 or eps_select + eps_refit > eps * (1 + _ROUNDING):
        raise ValueError(f"eps_select + eps_refit must be positive parts of eps = {eps}; "
                         f"got {eps_select} + {eps_refit}")
    return eps_select, eps_refit


def _split_parts(eps, refit, eps_select, eps_refit, eps_moments, eps_confidence):
    """The split=True parts: each part of the rows may spend up to eps (parallel composition)."""
    eps_select = check_positive("eps_select", eps_select, allow_none=True)
    eps_refit = check_positive("eps_refit", eps_refit, allow_none=True)
    if not refit:
        raise ValueError("split=True refits on rows the selection did not see: it needs refit=True")
    room_select, room_refit = eps - eps_confidence, eps - eps_moments
    eps_select = room_select if eps_select is None else eps_select
    eps_refit = room_refit if eps_refit is None else eps_refit
    if eps_select > room_select * (1 + _ROUNDING) or eps_refit > room_refit * (1 + _ROUNDING):
        raise ValueError(f"with split=True each part of the rows may spend up to eps = {eps}: "
                         f"eps_select <= {room_select:.6g} and eps_refit <= {room_refit:.6g} "
                         f"(after the inference stages); got {eps_select} and {eps_refit}")
    return eps_select, eps_refit


class BudgetLedger:
    """What the stages of one call spent, checked against its plan as they spend it.

    Parameters
    ----------
    plan : BudgetPlan or None
        None: no plan to check against (a stage run on its own, e.g. in a test or a
        benchmark); the ledger still records.

    Examples
    --------
    >>> plan = BudgetPlan.from_settings(2.0, refit=True)
    >>> ledger = BudgetLedger(plan)
    >>> ledger.spend("selection", "top-R", 1.0).spend("refit", "objective perturbation (pure)", 1.0).eps
    2.0
    """

    def __init__(self, plan=None):
        self.plan = plan
        self._entries = []      # the report's view: plain dicts (stage, mechanism, eps, delta)
        self._guarantees = []   # the guarantee each entry's mechanism declared

    def spend(self, stage, mechanism, eps, delta=0.0, guarantee=None):
        """Record that ``stage`` ran ``mechanism`` at (eps, delta); returns the ledger.

        Parameters
        ----------
        stage : Stage or str
            The stage (a name that is not a :class:`Stage` is an error).
        mechanism : str
            What ran, in words (the report's stage list shows it).
        eps, delta : float
            What it spent.
        guarantee : Guarantee or str, optional
            The guarantee the mechanism declares (its module's ``GUARANTEE``); default
            pure when ``delta == 0`` and approximate otherwise.

        Raises
        ------
        BudgetExceededError
            When the stage's entries would exceed its part of the plan, or the stage is
            not one the plan knows.
        """
        try:
            stage = Stage(stage)
        except ValueError:
            raise BudgetExceededError(f"stage {stage!r} has no part in the budget plan") from None
        eps, delta = float(eps), float(delta)
        if not (eps >= 0 and delta >= 0):
            raise BudgetExceededError(f"stage {stage.value!r}: eps and delta must be >= 0")
        guarantee = Guarantee(guarantee if guarantee is not None
                              else (Guarantee.PURE if delta == 0 else Guarantee.APPROXIMATE))
        if self.plan is not None:
            # the stage's own part (the gap test has one), then its group's (all of "selection")
            for key, same in ((stage, lambda s: s == stage), (stage.group, lambda s: s.group == stage.group)):
                spent = sum(e["eps"] for e in self._entries if same(Stage(e["stage"])))
                allowed = self.plan.allowance(key)
                if spent + eps > allowed * (1 + _ROUNDING):
                    raise BudgetExceededError(f"stage {stage.value!r} would spend eps = {spent + eps:.6g}, "
                                              f"more than the planned {allowed:.6g} of {str(key)!r}")
        self._entries.append(dict(stage=stage.value, mechanism=mechanism, eps=eps, delta=delta))
        self._guarantees.append(guarantee)
        return self

    @property
    def guarantee(self) -> Guarantee:
        """The weakest guarantee any stage's mechanism declared (pure for an empty ledger;
        approximate as soon as any delta was spent). The bounds may still void it: that is
        the report's to say (:func:`dpsubset.privacy.report.build_report`)."""
        worst = max((_STRENGTH.index(g) for g in self._guarantees), default=0)
        if self.delta > 0:
            worst = max(worst, _STRENGTH.index(Guarantee.APPROXIMATE))
        return _STRENGTH[worst]

    @property
    def stages(self):
        """The entries in the order they were spent: dicts ``stage``, ``mechanism``, ``eps``, ``delta``."""
        return tuple(dict(e) for e in self._entries)

    def part_eps(self, key="eps"):
        """``{part of the rows: total}`` (basic composition within a part): with
        ``split=True`` the selection's and the refit's rows; otherwise one part, all rows."""
        split = self.plan is not None and self.plan.split
        out = {}
        for e in self._entries:
            part = Stage(e["stage"]).rows if split else "all rows"
            out[part] = out.get(part, 0.0) + e[key]
        if split and "all rows" in out:  # a stage before the split counts in both parts
            every = out.pop("all rows")
            for part in ("selection rows", "refit rows"):
                out[part] = out.get(part, 0.0) + every
        return out

    @property
    def eps(self):
        """Total eps spent: basic composition, or with ``split=True`` the larger part's
        (parallel composition: one row lies in one part)."""
        return max(self.part_eps("eps").values(), default=0.0)

    @property
    def delta(self):
        """Total delta spent (basic composition; the larger part's with ``split=True``)."""
        return max(self.part_eps("delta").values(), default=0.0)

    def __len__(self):
        return len(self._entries)

    def __repr__(self):
        return f"BudgetLedger({len(self)} stages, eps = {self.eps:.6g}, delta = {self.delta:.3g})"
