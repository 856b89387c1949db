"""The selection stage of ``dp_best_subset``: one private release of a support.

Every selection method (``method=`` of :func:`dpsubset.dp_best_subset`) is a
:class:`SelectionMethod` in :data:`METHODS`. The API validates the method's options
before it reads any data, builds the design (formula, public bounds, clipping),
and then hands a :class:`SelectionRequest` to the method, which returns a
:class:`Selection`: the released support and what it spent. The refit and the
privacy report are common to all methods and live in ``api.py``.

A method module must not return anything computed from the data other than the
released support, its own budget accounting (public), and the certificates' open /
closed flags. Non-private values for ``diagnostics=True`` go in
``Selection.diagnostics`` and are only returned to a user who asked for them.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..mechanisms import sample_gap_checked, sample_mistakes, sample_top_r
from ..search.exact import SubsetSearch, default_R
from ..search.limits import SearchTimeout, describe_gap, relative_gap

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
    stages : list of dict
        Budget accounting, one dict per stage: ``stage``, ``mechanism``, ``eps``,
        ``delta`` (public numbers fixed before the data were read).
    guarantee : {"pure", "approximate", "conditional"}
        The guarantee of this stage when the bounds are public.
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
    """

    support: tuple
    stages: list
    guarantee: str
    statement: str | None = None
    sensitivity: float | None = None
    certificates: list = field(default_factory=list)
    gap_check_passed: bool | None = None
    diagnostics: dict = field(default_factory=dict)


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
    losses: tuple = ("squared",)
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
    public accuracy ``SCORE_TOL`` (dpsubset/scores_convex.py): every score the
    mechanisms see is within SCORE_TOL of the exact one, so their sensitivity is at
    most Delta + 2 SCORE_TOL. Every loss also gets the search's certified slack,
    :func:`search_slack`.
    """
    d = request.design
    if request.loss == "squared":
        from ..losses import SquaredLoss
        from ..scores.least_squares import LeastSquaresScorer, sensitivity
        stats = getattr(d, "gram", None)
        if stats is not None:  # tall data: the sufficient statistics only (dpsubset/suffstats.py)
            scorer = LeastSquaresScorer.from_gram(stats.G, stats.Zty, stats.yty, d.n, request.lam, request.r,
                                                  k_forced=stats.k_forced)
        else:
            scorer = LeastSquaresScorer(d.X, d.y, request.lam, request.r, d.forced)
        Delta = sensitivity(d.x_bounds, d.b_y, request.r, request.s, d.forced_bounds, d.n)
        return scorer, Delta + 2.0 * search_slack(SquaredLoss(), d.b_y)
    if request.loss in ("huber", "logistic", "hinge"):
        from ..losses import make_loss
        from ..scores.convex import ConvexLossScorer, convex_sensitivity
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


# ------------------------------------------------------------- top-R and mistakes
def _validate_exact(options, *, s, eps, loss, method):
    opts = dict(options)
    R = opts.pop("R", None)
    if R is not None and (isinstance(R, bool) or not isinstance(R, numbers.Integral) or R < 2):
        raise ValueError(f"R must be an integer >= 2 (fixed in advance, not from the data), got {R!r}")
    gap_check = opts.pop("gap_check", "ptr")
    eps0 = opts.pop("eps0", None)
    delta = opts.pop("delta", None)
    if opts:
        raise TypeError(f"method={method!r} got unknown options {sorted(opts)}")
    if gap_check not in ("ptr", "assume"):
        raise ValueError(f"gap_check must be 'ptr' or 'assume', got {gap_check!r}")
    if delta is not None:
        if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not 0 < delta < 0.5:
            raise ValueError(f"delta must be a number in (0, 0.5) (and much smaller than 1/n), got {delta!r}")
    use_ptr = method == "mistakes" and gap_check == "ptr"
    if use_ptr:
        if eps0 is None:
            eps0 = DEFAULT_EPS0_SHARE * eps
        elif isinstance(eps0, bool) or not isinstance(eps0, numbers.Real) or not 0 < eps0 < math.inf:
            raise ValueError(f"eps0 must be a finite number > 0, got {eps0!r}")
        if eps0 >= eps:
            raise ValueError(f"eps0 ({eps0}) must be smaller than the selection budget ({eps})")
        delta = DEFAULT_DELTA if delta is None else float(delta)
    elif eps0 is not None:
        raise ValueError("eps0 is only used with method='mistakes', gap_check='ptr'")
    elif delta is not None and method == "top_r":
        raise ValueError("delta is not used by method='top_r' (it is pure eps-DP)")
    return dict(R=None if R is None else int(R), gap_check=gap_check,
                eps0=None if eps0 is None else float(eps0), delta=delta, use_ptr=use_ptr)


def _names(design, supports):
    # One fancy index into an object array: top-R lists have ~p s supports (500,000 at
    # p = 100,000), and a Python loop over them took half a minute.
    S = np.asarray(supports, dtype=np.intp)
    if S.size == 0:
        return [list() for _ in range(len(S))]
    return np.asarray(design.candidate_names, dtype=object)[S].tolist()


def _select_top_r(req: SelectionRequest) -> Selection:
    scorer, Delta = make_scorer(req)
    R = default_R(req.p, req.s) if req.options["R"] is None else req.options["R"]
    cands = SubsetSearch(scorer, req.s, **req.search_options()).top_r(R)
    require_closed(cands.certificates)
    support = sample_top_r(cands, req.eps, Delta, req.rng)
    return Selection(
        support=tuple(sorted(support)),
        stages=[dict(stage="selection", mechanism="top-R", eps=req.eps, delta=0.0)],
        guarantee="pure", sensitivity=Delta,
        certificates=certificate_dicts(cands.certificates) + score_certificates(scorer),
        diagnostics=dict(best_support=_names(req.design, [cands.supports[0]])[0],
                         candidate_supports=_names(req.design, cands.supports),
                         candidate_scores=np.asarray(cands.scores).copy(),
                         certificates=list(cands.certificates)))


def _select_mistakes(req: SelectionRequest) -> Selection:
    opts = req.options
    scorer, Delta = make_scorer(req)
    searcher = SubsetSearch(scorer, req.s, **req.search_options())
    mc = searcher.mistake_classes()
    require_closed(mc.certificates)
    used = [mc]
    passed = None
    if opts["use_ptr"]:
        R = default_R(req.p, req.s) if opts["R"] is None else opts["R"]
        eps_mech = req.eps - opts["eps0"]

        def top_r_cands():
            c = searcher.top_r(R)
            require_closed(c.certificates)
            used.append(c)
            return c

        support, passed = sample_gap_checked(mc, top_r_cands, eps_mech, opts["eps0"],
                                             opts["delta"], Delta, req.rng)
        stages = [dict(stage="selection: gap test", mechanism="Laplace test of the score gap",
                       eps=opts["eps0"], delta=opts["delta"]),
                  dict(stage="selection", mechanism="mistakes if the test passed, else top-R",
                       eps=eps_mech, delta=0.0)]
        guarantee, statement = "approximate", None
    else:
        support = sample_mistakes(mc, req.eps, Delta, req.rng)
        stages = [dict(stage="selection", mechanism="mistakes", eps=req.eps, delta=0.0)]
        guarantee = "conditional"
        statement = ("eps-DP only if the best support's score beats the second best by more "
                     "than 2 Delta on these data (Theorem 2 of Prastakos et al. 2025); this "
                     "condition was NOT checked privately.")
    certs = [c for u in used for c in certificate_dicts(u.certificates)]
    certs += score_certificates(scorer)
    # Classes bracketed but never solved exactly: their certified brackets (a valid
    # lower bound from the class bounds or a partial search, and a member's exact
    # score above it) decided the draw, whichever route produced them.
    certs += [dict(problem=f"mistake class {k}: certified bracket decided the draw",
                   method="certified bracket", closed=True) for k in mc.open_classes]
    last = used[-1]
    return Selection(
        support=tuple(sorted(support)), stages=stages, guarantee=guarantee, statement=statement,
        sensitivity=Delta, certificates=certs, gap_check_passed=passed,
        diagnostics=dict(best_support=_names(req.design, [last.supports[0]])[0],
                         candidate_supports=_names(req.design, last.supports),
                         candidate_scores=np.asarray(last.scores).copy(),
                         certificates=[c for u in used for c in u.certificates],
                         score_gap=mc.gap))


register_method(SelectionMethod(
    name="top_r", select=_select_top_r,
    validate=lambda options, *, s, eps, loss: _validate_exact(options, s=s, eps=eps, loss=loss,
                                                              method="top_r"),
    losses=("squared", "huber", "logistic", "hinge"),
    description="exact top-R (Prastakos, Behdin, Mazumder 2025, Algorithm 1): pure eps-DP"))

register_method(SelectionMethod(
    name="mistakes", select=_select_mistakes,
    validate=lambda options, *, s, eps, loss: _validate_exact(options, s=s, eps=eps, loss=loss,
                                                              method="mistakes"),
    losses=("squared", "huber", "logistic", "hinge"),
    description="mistakes mechanism with a propose-test-release gap check (or the paper's "
                "conditional guarantee with gap_check='assume')"))


# The comparison methods register themselves on import (kept last: they import this module).
from . import baselines  # noqa: E402,F401
