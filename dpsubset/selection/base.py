"""The selection stage of ``dp_best_subset``: one private release of a support.

Every selection method (``method=`` of :func:`dpsubset.dp_best_subset`) is a
:class:`SelectionMethod` in :data:`METHODS`. The API validates the method's options
before it reads any data, builds the design (formula, public bounds, clipping),
and then hands a :class:`SelectionRequest` to the method, which returns a
:class:`Selection`: the released support and what it spent. The refit and the
privacy report are common to all methods and live in ``api.py``.

A method module must not return anything computed from the data other than the
released support, its budget (spent through ``request.ledger``: public numbers
fixed before the data were read), and the certificates' open / closed flags. Non-private values for ``diagnostics=True`` go in
``Selection.diagnostics`` and are only returned to a user who asked for them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..privacy.budget import BudgetLedger
from ..search.limits import describe_gap, relative_gap
from ..runtime.limits import SearchTimeout
from ..losses import LOSSES, SquaredLoss, is_least_squares, make_loss

__all__ = ["SelectionRequest", "Selection", "SelectionMethod", "METHODS", "register_method",
           "require_closed", "DEFAULT_EPS0_SHARE", "DEFAULT_DELTA"]

#: Share of the selection budget spent on the gap test of gap_check="ptr".
DEFAULT_EPS0_SHARE = 0.25
#: Default delta of the gap-checked mechanism.
DEFAULT_DELTA = 1e-6


@dataclass(frozen=True)
class SelectionRequest:
    """Everything a selection method may use. ``design`` holds the clipped private data.

    Attributes
    ----------
    design : dpsubset.design.build.Design
        Clipped, publicly mapped matrices (private) and public metadata.
    s : int
        Support size (for methods that choose it, the largest size allowed).
    eps : float
        The selection budget (the refit's share is already taken out).
    lam, r : float
        Ridge parameter and ball radius of the scores.
    loss : str
    rng : numpy.random.Generator
    options : dict
        The method's validated options (see each method's ``validate``).
    search : str
        Exact-search backend ("auto", "enumeration", "outer_approximation", "pyomo", "scip").
    solver, solver_options : str or None, dict or None
        The Pyomo solver of search="pyomo" / "scip" (validated before the data were read).
    time_limit : float or None
        Seconds left of the call's time limit when the selection starts (None: no limit).
    memory_limit : float or None
        Bytes for the exact search's growing structures (math.inf: no limit; None: the
        default share of the machine's memory), as ``memory_limit`` of SubsetSearch.
    verbose : bool
    loss_options : dict
        Public parameters of the loss (``huber_h`` / ``hinge_h``, the names of
        :func:`dpsubset.refit.objective.objective_perturbation`); empty for the defaults.
    ledger : dpsubset.privacy.budget.BudgetLedger
        What the method spends from: ``ledger.spend(stage, mechanism, eps, delta)`` for
        each of its stages (``"selection"``, ``"selection: gap test"``), checked against
        the call's plan. Default: a ledger without a plan (a method run on its own).
    """

    design: object
    s: int
    eps: float
    lam: float
    r: float
    loss: str
    rng: np.random.Generator
    options: dict
    search: str = "auto"
    time_limit: float | None = None
    memory_limit: float | None = None
    verbose: bool = False
    loss_options: dict = field(default_factory=dict)
    solver: str | None = None
    solver_options: dict | None = None
    ledger: BudgetLedger = field(default_factory=BudgetLedger)

    def search_options(self) -> dict:
        """Keyword arguments of :class:`SubsetSearch` for this request."""
        kw = dict(search=self.search, time_limit=self.time_limit, verbose=self.verbose,
                  memory_limit=self.memory_limit)
        if self.search in ("pyomo", "scip"):
            kw.update(solver=self.solver, solver_options=self.solver_options)
        return kw

    @property
    def p(self) -> int:
        return self.design.X.shape[1]


@dataclass
class Selection:
    """What a selection method releases and what it spent.

    Attributes
    ----------
    support : tuple of int
        Released candidate columns (indices into ``design.candidate_names``), sorted.
    statement : str or None
        The guarantee in words when the generic sentence does not fit (for example
        the conditional guarantee of the mistakes mechanism).
    sensitivity : float or None
        Sensitivity of the scores the mechanism used (public), if any.
    certificates : list of dict
        ``problem``, ``method``, ``closed`` for every exact solve.
    gap_check_passed : bool or None
    diagnostics : dict
        NON-PRIVATE values (best support, candidate scores, ...) for ``diagnostics=True``.
    stages : list of dict
        Only for a method registered from outside the package that does not spend
        through ``request.ledger``: its stages as dicts (``stage``, ``mechanism``,
        ``eps``, ``delta`` and optionally ``guarantee``), which the API spends on its
        behalf. (The guarantee of a selection is what its stages declare when they
        spend: :attr:`dpsubset.privacy.budget.BudgetLedger.guarantee`.) The package's own
        methods leave it empty.
    guarantee : {"pure", "approximate", "conditional"} or None
        Only for such a method: the guarantee of those of its ``stages`` that do not
        name one (None: pure where their delta is 0, approximate otherwise). The
        package's own methods declare theirs when they spend and leave it None.
    """

    support: tuple
    statement: str | None = None
    sensitivity: float | None = None
    certificates: list = field(default_factory=list)
    gap_check_passed: bool | None = None
    diagnostics: dict = field(default_factory=dict)
    stages: list = field(default_factory=list)
    guarantee: str | None = None


@dataclass(frozen=True)
class SelectionMethod:
    """A ``method=`` of ``dp_best_subset``.

    Attributes
    ----------
    name : str
    select : callable
        ``select(request) -> Selection``.
    validate : callable
        ``validate(options, *, s, eps, loss) -> dict`` checks the method's options
        before any data are read and returns them with defaults filled in. Raises
        ValueError / TypeError naming the option and the fix.
    losses : tuple of str
        Losses the method supports.
    description : str
    """

    name: str
    select: Callable
    validate: Callable
    losses: tuple = (SquaredLoss.name,)
    description: str = ""


METHODS: dict = {}


def register_method(method: SelectionMethod) -> SelectionMethod:
    """Add a method to :data:`METHODS` (used by the method modules)."""
    METHODS[method.name] = method
    return method


def require_closed(certificates):
    """Fail closed: raise SearchTimeout if any exact solve is not certified optimal."""
    open_ = [c for c in certificates if not c.closed]
    if open_:
        c = open_[0]
        # (the scale-free gap: Certificate.relative_gap is absolute below 1, a score then)
        gap = relative_gap(c.lower, c.upper)
        raise SearchTimeout(f"exact search did not certify '{c.problem}' ({describe_gap(gap)}); "
                            "nothing was released", problem=c.problem, gap=gap)


def certificate_dicts(certificates):
    """The public part of certificates: what was solved, how, and whether it closed."""
    return [dict(problem=c.problem, method=c.method, closed=c.closed) for c in certificates]


# --------------------------------------------------------------------------- scores
def make_scorer(request: SelectionRequest):
    """The exact scorer c(S) of the request's loss, and its sensitivity Delta.

    Returns
    -------
    scorer : object with ``fit``, ``score``, ``neighbourhood`` and ``cut`` (see
        :class:`dpsubset.scores.least_squares.LeastSquaresScorer`)
    Delta : float

    Notes
    -----
    ``"squared"`` has exact closed-form scores. ``"huber"``, ``"logistic"`` and
    ``"hinge"`` are solved iteratively and certified by their duality gap to the
    public accuracy ``SCORE_TOL`` (dpsubset/scores/convex.py): every score the
    mechanisms see is within SCORE_TOL of the exact one, so their sensitivity is at
    most Delta + 2 SCORE_TOL. Every loss also gets the search's certified slack,
    :func:`search_slack`.
    """
    d = request.design
    if is_least_squares(request.loss):
        from ..scores.least_squares import LeastSquaresScorer
        from ..privacy.sensitivity import score_sensitivity
        stats = getattr(d, "gram", None)
        if stats is not None:  # tall data: the sufficient statistics only (dpsubset/design/suffstats.py)
            scorer = LeastSquaresScorer.from_gram(stats.G, stats.Zty, stats.yty, d.n, request.lam, request.r,
                                                  k_forced=stats.k_forced)
        else:
            scorer = LeastSquaresScorer(d.X, d.y, request.lam, request.r, d.forced)
        Delta = score_sensitivity(d.x_bounds, d.b_y, request.r, request.s, d.forced_bounds, d.n)
        return scorer, Delta + 2.0 * search_slack(SquaredLoss(), d.b_y)
    if request.loss in LOSSES:  # every other loss: the certified convex scores
        from ..scores.convex import ConvexLossScorer
        from ..privacy.sensitivity import convex_sensitivity
        loss = make_loss(request.loss, b_y=d.b_y, **request.loss_options)
        scorer = ConvexLossScorer(d.X, d.y, request.lam, request.r, d.forced, loss=loss)
        Delta = convex_sensitivity(loss, d.x_bounds, d.b_y, request.r, request.s,
                                   d.forced_bounds, d.n) + 2.0 * scorer.score_tol
        return scorer, Delta + 2.0 * search_slack(loss, d.b_y, scorer.score_tol)
    raise ValueError(f"loss {request.loss!r} has no selection scorer")


def search_slack(loss, b_y, score_tol=0.0):
    """Largest absolute error of a certified search, from public numbers only.

    A search counts as exact when ``upper - lower <= GAP_TOL * max(1, |upper|)``
    (dpsubset/search/candidates.py), so the supports it hands to a mechanism are
    the exact minimisers, or the exact top-R, of a score c~ with |c~(S) - c(S)| <=
    tau for every S, tau = GAP_TOL * max(1, max |c|). A mechanism run on c~ is
    eps-DP with the sensitivity of c~, at most Delta + 2 tau (tau on each side of a
    neighbouring pair). Every score lies in [0, max over |y| <= b_y of l(0; y)] (beta
    = 0 is in the ball and the losses are >= 0), a public bound, so tau is public.
    At ordinary n, 2 tau is negligible next to Delta; at n = 10^8 in the paper's
    setting (b_x = b_y = 0.5, r = 1.1, s = 5) it is about 9 % of Delta, which is
    why it is folded in rather than ignored. See docs/methods (exact search).

    Parameters
    ----------
    loss : dpsubset.losses.Loss
    b_y : float
        Public bound of the (mapped) response.
    score_tol : float
        Accuracy of the computed scores (0 for closed forms).

    Returns
    -------
    float
        tau.
    """
    from ..search.candidates import GAP_TOL

    largest = float(loss.row_max(b_y, 0.0)) + score_tol
    return GAP_TOL * max(1.0, largest)


def score_certificates(scorer):
    """Certificate entries for iteratively computed scores (none for closed forms)."""
    tol = getattr(scorer, "score_tol", None)
    if tol is None:
        return []
    return [dict(problem=f"every {scorer.loss} score within {tol:g} of its exact value",
                 method="projected Newton, duality gap",
                 closed=bool(scorer.max_score_error <= tol))]
