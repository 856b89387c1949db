"""The privacy report of a release: what was spent, on what, and which guarantee holds.

:class:`PrivacyReport` is a view of the call's :class:`~dpsubset.privacy.budget.BudgetLedger`
(its stages and their totals) together with the guarantee that the bounds and the
selection allow; :func:`build_report` makes it. The report holds public numbers only:
the plan's budgets, the mechanisms' names, the sensitivity computed from public bounds.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .budget import Stage
from .guarantees import Guarantee
from .leaks import NotReleasedError

__all__ = ["PrivacyReport", "build_report", "NEIGHBOURS", "SEEDED_NOTE", "SEEDED_CAVEAT",
           "CERTIFIED", "FLOAT_CAVEAT", "EXACT_NOTE", "SAMPLERS", "stage_sampler"]

#: The neighbour relation every guarantee of the package refers to.
NEIGHBOURS = "replace one row (n fixed and public)"

#: The short form appended to the guarantee statement of a seeded call (summary notes, glance).
SEEDED_NOTE = "Seeded: private only while the seed is secret."
#: What the report says when the call was seeded (random_state given).
SEEDED_CAVEAT = ("seeded: private only while the seed is secret (anyone who knows the seed "
                 "and the other rows can undo the noise); leave random_state=None for a release")
#: What a report says about the exact search: the same words for every release, since a
#: search that does not certify its answer raises SearchTimeout and releases nothing.
CERTIFIED = "all solves certified optimal"
#: Why the per-solve list is not in a release (the error of ``res.privacy.certificates``).
_SOLVES_NOT_RELEASED = (
    "res.privacy.certificates is not released: which solves the exact search needed, how many, "
    "by which route (enumeration, class bounds, branch and bound, ...), with how many nodes and "
    "in what time are functions of the data that the guarantee does not cover (neighbouring data "
    "sets can need different solves). Every release is certified (res.privacy.exact_search, "
    "glance()['certificates_closed']); the per-solve list is NON-PRIVATE and comes only with "
    "Search(diagnostics=True) (diag.solves, diag.certificates) or on the terminal with verbose=True")

#: The samplers of dpsubset/mechanisms/noise.py, by what they draw, and whether each is exact.
SAMPLERS = {
    "laplace": ("exact discrete Laplace on a public grid", True),
    "exponential": ("exact Gumbel-max", True),
    "exact grid": ("exact Laplace cells and discrete Laplace on a public grid", True),
    "objective": ("floating-point Gaussian noise", False),
    "mcmc": ("exact Metropolis-Hastings steps", True),
    "exponential noise": ("exact race of exponential maxima", True),
    "unknown": ("sampler not named", False),
}
# Which sampler draws a stage, from the mechanism's name in the ledger (first match wins):
# the refit's "sufficient statistics perturbation" is a Laplace release; the pure objective
# perturbation is the exact-grid one (dpsubset/refit/exact_grid.py), its Gaussian variant
# (refit_delta > 0) is drawn in floating point.
_SAMPLER_OF = (("sufficient statistics perturbation", "laplace"), ("objective perturbation (exact grid", "exact grid"),
               ("Laplace", "laplace"),
               ("sample-and-aggregate", "laplace"), ("objective perturbation", "objective"),
               ("MCMC", "mcmc"), ("Metropolis", "mcmc"), ("DP-SIS", "exponential noise"),
               ("top-R", "exponential"), ("mistakes", "exponential"),
               ("exponential mechanism", "exponential"))


def stage_sampler(mechanism: str) -> str:
    """The key in :data:`SAMPLERS` of the sampler that draws a stage's ``mechanism``
    ("unknown", never counted as exact, for a mechanism the table does not name)."""
    for words, key in _SAMPLER_OF:
        if words.lower() in mechanism.lower():
            return key
    return "unknown"


#: The floating-point caveat of a report with a floating-point stage (Mironov 2012).
FLOAT_CAVEAT = ("the guarantee is proved for exact real-valued noise; the stages marked floating-point "
                "are drawn with floating-point samplers, whose low-order bits can leak (Mironov 2012); "
                "the others are drawn exactly (docs/guide/privacy-caveats.md says which settings avoid "
                "the floating-point stages)")
#: What a report says when every stage is drawn exactly.
EXACT_NOTE = ("every stage is drawn by an exact sampler, so the floating-point attacks of Mironov 2012 "
              "do not apply (docs/guide/privacy-caveats.md)")


@dataclass(frozen=True)
class PrivacyReport:
    """What was spent, on what, and which guarantee holds.

    Attributes
    ----------
    guarantee : {"pure", "approximate", "conditional", "void"}
    statement : str
        The guarantee in words.
    eps, delta : float
        Totals over all stages (basic composition).
    stages : tuple of dict
        One entry per stage: ``stage``, ``mechanism``, ``eps``, ``delta``.
    neighbours : str
        The neighbour relation the guarantee refers to.
    sensitivity : float or None
        Delta, the sensitivity of every score the mechanisms used (public: it
        depends on bounds, r, s, n and the search's certified tolerance). None
        when the bounds were taken from the data: it would then be a statistic of
        the data, and it is not kept in the result.
    bounds_public : bool
    leaks : tuple of str
        Why the guarantee is void, if it is.
    exact_search : bool
        True when the selection rests on an exact search (``top_r``, ``mistakes``,
        ``exponential``, ``lei_ic``): every solve it needed was certified optimal,
        which holds for every release, since a search that does not certify its
        answer raises SearchTimeout and releases nothing. A function of the method
        only. Which solves were needed, how many, by which route, with how many
        nodes and in what time depend on the data and are not released (see Notes).
    gap_check_passed : bool or None
        For the gap-checked mistakes mechanism: whether the private test passed
        (mistakes ran) or not (top-R ran). Covered by the guarantee.
    seeded : bool
        True when the call was given ``random_state`` (an int or a Generator): the
        release is then a function of the data and the seed, and it is private
        only while the seed is secret. The text of the report says so
        (:data:`SEEDED_CAVEAT`).
    split : tuple of int or None
        With ``split=True``: the public sizes (rows of the selection, rows of the
        refit) of the random split; the totals are then the larger part's (parallel
        composition). None without a split.
    selection_confidence : SelectionConfidence or None
        With ``inference=True`` (top-R): the private confidence bounds on the
        probability that the mechanism released the best-scoring support, and what they
        mean (:mod:`dpsubset.inference.confidence`).
    stage_settings : tuple of dict
        The radius and ridge of each stage, public (from the bounds, s, the loss and the
        stage's n and eps, or as given): ``stage`` ("selection", "refit"), ``r``, ``lam``,
        and ``r_from`` where a radius was set from released numbers instead (the selection's
        from the released fit of the best support, docs/methods/centring.md; the refit's grown
        to the released support's spreads, docs/methods/refit.md).
        The selection's set Delta; the refit's ``lam`` is the ridge it used,
        max(lam_refit, 2 lambda / eps) (docs/guide/defaults.md).

    Notes
    -----
    Every stage names its sampler (:attr:`samplers`, from dpsubset/mechanisms/noise.py).
    A printed report ends with :data:`FLOAT_CAVEAT` when a stage is still drawn in
    floating point (only the Gaussian variant of the refit, ``refit_delta > 0``, is
    today), and with :data:`EXACT_NOTE` otherwise. See
    docs/guide/privacy-caveats.md.

    The report holds no per-solve certificate list: two data sets that differ in
    one row can need different solves (one enumeration against three certified
    searches), so the list, its length and its routes are outputs the guarantee
    does not cover. It is in :attr:`NonPrivateDiagnostics.solves`
    (``diagnostics=True``) and on the terminal with ``verbose=True``, both
    labelled non-private; ``report.certificates`` raises :class:`NotReleasedError`
    saying so.
    """

    guarantee: str
    statement: str
    eps: float
    delta: float
    stages: tuple
    neighbours: str
    sensitivity: float
    bounds_public: bool
    leaks: tuple = ()
    exact_search: bool = False
    gap_check_passed: bool | None = None
    seeded: bool = False
    split: tuple | None = None
    selection_confidence: object = None
    stage_settings: tuple = ()

    def _settings_text(self):
        """Each stage's radius and ridge in words (not shown when the bounds came from the data)."""
        if not self.bounds_public:
            return "not shown (bounds from data)"
        return "; ".join(f"{st['stage']} r = {st['r']:.4g}" + (f" ({st['r_from']})" if st.get("r_from") else "")
                         + f", lam = {st['lam']:.4g}" for st in self.stage_settings)

    def _sensitivity_text(self, spec=".4g"):
        # with bounds taken from the data, Delta is a function of max |value|: not shown
        if not self.bounds_public:
            return "not shown (bounds from data)"
        return "n/a" if self.sensitivity is None else format(self.sensitivity, spec)

    @property
    def samplers(self) -> tuple:
        """The sampler of each stage, in the order of :attr:`stages` (names from :data:`SAMPLERS`)."""
        return tuple(SAMPLERS[stage_sampler(st["mechanism"])][0] for st in self.stages)

    @property
    def all_draws_exact(self) -> bool:
        """Whether every stage is drawn by an exact sampler (no floating-point noise)."""
        return all(SAMPLERS[stage_sampler(st["mechanism"])][1] for st in self.stages)

    def to_frame(self):
        """The budget accounting as a DataFrame: one row per stage (stage, mechanism, eps, delta);
        the sampler of each stage is :attr:`samplers`."""
        return pd.DataFrame([dict(st) for st in self.stages], columns=["stage", "mechanism", "eps", "delta"])

    @property
    def all_certificates_closed(self) -> bool:
        """True for every release: a search that does not certify releases nothing.

        Kept as documentation of the guarantee (``glance()["certificates_closed"]``);
        it is the same for every result, so it tells nothing about the data.
        """
        return True

    @property
    def certificates(self):
        # The per-solve list left the report (it depends on the data): say where it went.
        raise NotReleasedError(_SOLVES_NOT_RELEASED)

    def _search_text(self):
        """The exact search in words: the same for every release of a method."""
        return CERTIFIED if self.exact_search else "not used by this method"

    def __repr__(self):
        lines = [f"Privacy report: {Guarantee(self.guarantee).statement}",
                 # the seeded caveat is printed once, in full, below
                 f"  {self.statement.replace(' ' + SEEDED_NOTE, '') if self.seeded else self.statement}",
                 f"  total eps = {self.eps:.6g}, delta = {self.delta:.3g}; neighbours: {self.neighbours}"]
        for st, smp in zip(self.stages, self.samplers):
            lines.append(f"  - {st['stage']}: {st['mechanism']} (eps = {st['eps']:.6g}, delta = {st['delta']:.3g}; "
                         f"{smp})")
        lines.append(f"  score sensitivity Delta = {self._sensitivity_text('.6g')}")
        if self.stage_settings:
            lines.append(f"  radius and ridge: {self._settings_text()}")
        if self.gap_check_passed is not None:
            lines.append("  gap check: " + ("passed, mistakes ran" if self.gap_check_passed
                                            else "not passed, top-R ran"))
        # no count, route or timing of the solves: they depend on the data
        lines.append(f"  exact search: {self._search_text()}")
        if self.selection_confidence is not None:
            lines.append(f"  selection confidence: {self.selection_confidence}")
        if not self.bounds_public:
            lines.append("  bounds: NOT public (taken from the data)")
        for leak in self.leaks:
            lines.append(f"  ! {leak}")
        if self.seeded:
            lines.append(f"  ! {SEEDED_CAVEAT}")
        lines.append(f"  note: {EXACT_NOTE if self.all_draws_exact else FLOAT_CAVEAT}")
        return "\n".join(lines)


def build_report(ledger, selection, *, bounds_public, leaks, seeded=False, split=None,
                 selection_confidence=None, stage_settings=()):
    """The privacy report of one call, as a view of its ledger.

    Parameters
    ----------
    ledger : dpsubset.privacy.budget.BudgetLedger
        What every stage spent, in order (screen, selection, refit), and the guarantee
        each stage's mechanism declared: the report's guarantee is the weakest of them
        (void when a bound was taken from the data).
    selection : dpsubset.selection.base.Selection
        The selection's statement (when its guarantee needs words of its own),
        sensitivity, certificates and gap check.
    bounds_public : bool
        False when some bound was taken from the data (the guarantee is then void).
    leaks : sequence of str
        Why the guarantee is void, if it is.
    seeded : bool
        The call was given ``random_state``.
    split : tuple of int or None
        ``(rows of the selection, rows of the refit)`` with ``split=True``.
    selection_confidence : SelectionConfidence or None
    stage_settings : sequence of dict
        Each stage's ``stage``, ``r`` and ``lam`` (:attr:`PrivacyReport.stage_settings`).

    Returns
    -------
    PrivacyReport
    """
    stages = ledger.stages
    eps_total, delta_total = ledger.eps, ledger.delta
    declared = ledger.guarantee  # the weakest any stage's mechanism declared when it spent
    if not bounds_public or leaks:
        kind = Guarantee.VOID
        statement = ("No differential privacy guarantee: " + "; ".join(leaks)
                     + ". Give public bounds (and explicit levels) to fix this.")
    elif declared == Guarantee.CONDITIONAL:
        kind = Guarantee.CONDITIONAL
        # the stage's own words when it has them (the mistakes mechanism's condition)
        statement = f"Total eps = {eps_total:.4g}; the selection is " + (
            selection.statement or Guarantee.CONDITIONAL.statement + ".")
    elif declared == Guarantee.APPROXIMATE:
        kind = Guarantee.APPROXIMATE
        statement = f"({eps_total:.4g}, {delta_total:.3g})-differential privacy for the whole output."
    else:
        kind = Guarantee.PURE
        statement = f"{eps_total:.4g}-differential privacy (pure) for the whole output."
    if selection.statement and kind in (Guarantee.PURE, Guarantee.APPROXIMATE):
        statement += " " + selection.statement
    statement += " Neighbouring datasets differ by replacing one row."
    if split is not None:
        parts = ledger.part_eps()
        statement += (f" The rows were split at random, independently of the data: selection on "
                      f"{split[0]} rows (eps = {parts.get('selection rows', 0.0):.4g}), refit on "
                      f"{split[1]} rows (eps = {parts.get('refit rows', 0.0):.4g}); one row lies in "
                      f"one part, so the total is the larger (parallel composition).")
        centring = sum(st["eps"] for st in stages if st["stage"] == Stage.CENTRING)
        if centring > 0:
            statement += (f" Each part's eps includes the centring's {centring:.4g}, which read every "
                          f"row before the split.")
    if seeded:
        statement += " " + SEEDED_NOTE
    # With bounds from the data, Delta is a statistic of the data: not kept.
    sensitivity = selection.sensitivity if bounds_public else None
    # Whether an exact search ran is a function of the method (only the exact methods
    # return certificates); which solves it needed, and how, depends on the data and
    # stays out of the report (NonPrivateDiagnostics.solves, verbose=True).
    return PrivacyReport(kind.value, statement, eps_total, delta_total, stages, NEIGHBOURS,
                         sensitivity, bounds_public, tuple(leaks),
                         exact_search=bool(selection.certificates),
                         gap_check_passed=selection.gap_check_passed, seeded=seeded,
                         split=None if split is None else tuple(int(v) for v in split),
                         selection_confidence=selection_confidence,
                         stage_settings=tuple(dict(st) for st in stage_settings))
