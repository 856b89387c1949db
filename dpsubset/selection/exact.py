"""Exact top-R and the mistakes mechanism: the selections that rest on an exact search.

``method="top_r"`` draws from the R best supports of size s (Prastakos, Behdin and
Mazumder 2025, Algorithm 1; pure eps-DP); ``method="mistakes"`` draws by the number of
mistakes against the best support, with a private test of the score gap
(``gap_check="ptr"``, (eps0 + eps, delta)-DP) or the paper's conditional guarantee
(``gap_check="assume"``). Both score supports with :func:`~dpsubset.selection.base.make_scorer`,
search with :class:`~dpsubset.search.exact.SubsetSearch`, refuse to release on an
uncertified solve (:func:`~dpsubset.selection.base.require_closed`) and spend their
budget through the request's ledger. They register with
:func:`~dpsubset.selection.base.register_method` when this module is imported (by
:mod:`dpsubset.selection`).
"""
from __future__ import annotations

import math

import numpy as np

from .._validation import is_integer, is_real
from ..losses import LOSSES
from ..mechanisms import MECHANISM_GUARANTEES, sample_gap_checked, sample_mistakes, sample_top_r
from ..privacy.budget import Stage
from ..search.exact import SubsetSearch, default_R
from .base import (DEFAULT_DELTA, DEFAULT_EPS0_SHARE, Selection, SelectionMethod, SelectionRequest,
                   certificate_dicts, make_scorer, register_method, require_closed, score_certificates)

__all__ = ["TOP_R", "MISTAKES"]


def _validate_exact(options, *, s, eps, loss, method):
    opts = dict(options)
    R = opts.pop("R", None)
    if R is not None and (not is_integer(R) or R < 2):
        raise ValueError(f"R must be an integer >= 2 (fixed in advance, not from the data), got {R!r}")
    gap_check = opts.pop("gap_check", "ptr")
    eps0 = opts.pop("eps0", None)
    delta = opts.pop("delta", None)
    if opts:
        raise TypeError(f"method={method!r} got unknown options {sorted(opts)}")
    if gap_check not in ("ptr", "assume"):
        raise ValueError(f"gap_check must be 'ptr' or 'assume', got {gap_check!r}")
    if delta is not None:
        if not is_real(delta) or not 0 < delta < 0.5:
            raise ValueError(f"delta must be a number in (0, 0.5) (and much smaller than 1/n), got {delta!r}")
    use_ptr = method == "mistakes" and gap_check == "ptr"
    if use_ptr:
        if eps0 is None:
            eps0 = DEFAULT_EPS0_SHARE * eps
        elif not is_real(eps0) or not 0 < eps0 < math.inf:
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
    return np.asarray(design.spec.candidate_names, dtype=object)[S].tolist()


def _select_top_r(req: SelectionRequest) -> Selection:
    scorer, Delta = make_scorer(req)
    R = default_R(req.p, req.s) if req.options["R"] is None else req.options["R"]
    cands = SubsetSearch(scorer, req.s, **req.search_options()).top_r(R)
    require_closed(cands.certificates)
    support = sample_top_r(cands, req.eps, Delta, req.rng)
    req.ledger.spend(Stage.SELECTION, "top-R", req.eps, 0.0, guarantee=MECHANISM_GUARANTEES["top_r"])
    return Selection(
        support=tuple(sorted(support)), sensitivity=Delta,
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
        # the test's (eps0, delta) makes the whole selection approximate; given its outcome,
        # the mechanism that runs is pure
        req.ledger.spend(Stage.GAP_TEST, "Laplace test of the score gap", opts["eps0"],
                         opts["delta"], guarantee=MECHANISM_GUARANTEES["gap_check"])
        req.ledger.spend(Stage.SELECTION, "mistakes if the test passed, else top-R", eps_mech, 0.0,
                         guarantee=MECHANISM_GUARANTEES["top_r"])
        statement = None
    else:
        support = sample_mistakes(mc, req.eps, Delta, req.rng)
        req.ledger.spend(Stage.SELECTION, "mistakes", req.eps, 0.0, guarantee=MECHANISM_GUARANTEES["mistakes"])
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
        support=tuple(sorted(support)), statement=statement,
        sensitivity=Delta, certificates=certs, gap_check_passed=passed,
        diagnostics=dict(best_support=_names(req.design, [last.supports[0]])[0],
                         candidate_supports=_names(req.design, last.supports),
                         candidate_scores=np.asarray(last.scores).copy(),
                         certificates=[c for u in used for c in u.certificates],
                         score_gap=mc.gap))


TOP_R = register_method(SelectionMethod(
    name="top_r", select=_select_top_r,
    validate=lambda options, *, s, eps, loss: _validate_exact(options, s=s, eps=eps, loss=loss,
                                                              method="top_r"),
    losses=LOSSES,
    description="exact top-R (Prastakos, Behdin, Mazumder 2025, Algorithm 1): pure eps-DP"))

MISTAKES = register_method(SelectionMethod(
    name="mistakes", select=_select_mistakes,
    validate=lambda options, *, s, eps, loss: _validate_exact(options, s=s, eps=eps, loss=loss,
                                                              method="mistakes"),
    losses=LOSSES,
    description="mistakes mechanism with a propose-test-release gap check (or the paper's "
                "conditional guarantee with gap_check='assume')"))
