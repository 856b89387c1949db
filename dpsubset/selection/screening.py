"""Private screening before best subset selection (``screen=`` of ``dp_best_subset``).

For very many candidate columns the exact mechanisms pay for the size of the support
space: top-R needs the true support's score to beat C(p, s) rivals by about
(2 Delta / eps) log C(p, s). A private screen first keeps k columns, and top-R or
mistakes then runs on those k only (log C(k, s) instead of log C(p, s)), at the price
of a share of the budget and of the screen's own mistakes (docs/methods/screening.md).

The screen is DP-SIS (Swope et al. 2024), as :mod:`dpsubset.selection.baselines.dp_sis`: the
scores |x_j' y| on the publicly clipped data divided by their row-replacement
sensitivity 2 b_j b_y, released as a set of k columns by the canonical Lipschitz
top-k mechanism (Shekelyan and Loukides), pure eps_screen-DP. This module reuses
that module's scores and sampler; it only restricts the design to the released
columns.

Privacy (basic composition, adaptive). The screen is eps_screen-DP. For every fixed
screened set Y, the selection on the columns Y is eps_select-DP in the data (the
restricted data of neighbours are neighbours, and its sensitivity is computed from
the bounds of the columns in Y), and the refit on the released support is
eps_refit-DP. The released (Y, support, coefficients) is therefore
(eps_screen + eps_select + eps_refit, delta_select + delta_refit)-DP (Dwork and Roth
2014, Theorem 3.16 and its adaptive form). The report lists the screen as its own
stage. ``tests/audit/test_screening_audit.py`` checks the joint law of
(screened set, support) exactly on small problems.

Defaults (public: they read s and p only)
-----------------------------------------
k = ``DEFAULT_SCREEN_K_PER_S`` * s = 10 s columns (capped below p), and the screen
gets ``DEFAULT_SCREEN_SHARE`` = 1/2 of the selection budget (the rest goes to top-R
or mistakes; the refit's share is unchanged). docs/methods/screening.md has the
reasoning and the study behind them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import is_integer, is_real
from ..privacy.budget import Stage
from ..mechanisms.lipschitz_top_k import GUARANTEE as SCREEN_GUARANTEE, sample_lipschitz_top_k
from .baselines.dp_sis import sis_scores

__all__ = ["ScreenSpec", "check_screen", "screen_design", "restrict_design",
           "DEFAULT_SCREEN_SHARE", "DEFAULT_SCREEN_K_PER_S", "SCREEN_METHODS"]

#: Share of the selection budget spent on the screen.
DEFAULT_SCREEN_SHARE = 0.5
#: Default number of screened columns per selected column (k = 10 s).
DEFAULT_SCREEN_K_PER_S = 10
#: Selection methods that can run after a screen.
SCREEN_METHODS = ("top_r", "mistakes")


@dataclass(frozen=True)
class ScreenSpec:
    """A validated screen request: k columns (None: the default 10 s) and the budget share."""

    k: int | None
    share: float
    gamma: float = 0.5

    def k_for(self, p: int, s: int) -> int:
        """The number of columns kept for p candidates and support size s."""
        if self.k is not None:
            k = self.k
            if k >= p:
                raise ValueError(f"screen: k = {k} keeps all {p} candidate columns; choose "
                                 f"k < {p} or drop screen=")
            return k
        return min(DEFAULT_SCREEN_K_PER_S * s, p - 1)


def check_screen(screen, *, s, method) -> ScreenSpec | None:
    """Validate ``screen=`` before any data are read.

    Parameters
    ----------
    screen : None, False, True, int or dict
        None / False: no screen. True: the defaults. An int: k. A dict with keys
        ``k`` (int or None), ``share`` (in (0, 1)) and ``gamma`` (the Lipschitz
        mechanism's parameter, in [0, 1); default 0.5).
    s : int
    method : str

    Returns
    -------
    ScreenSpec or None
    """
    if screen is None or screen is False:
        return None
    if method not in SCREEN_METHODS:
        raise ValueError(f"screen= works with method in {SCREEN_METHODS}, got method={method!r}")
    if screen is True:
        opts = {}
    elif is_integer(screen):
        opts = {"k": int(screen)}
    elif isinstance(screen, dict):
        opts = dict(screen)
    else:
        raise TypeError(f"screen must be None, True, an int k, or a dict(k=..., share=...); "
                        f"got {type(screen).__name__}")
    k = opts.pop("k", None)
    share = opts.pop("share", DEFAULT_SCREEN_SHARE)
    gamma = opts.pop("gamma", 0.5)
    if opts:
        raise TypeError(f"screen got unknown keys {sorted(opts)}; it takes 'k', 'share', 'gamma'")
    if k is not None:
        if not is_integer(k) or k <= s:
            raise ValueError(f"screen: k must be an integer larger than s = {s} (the columns "
                             f"kept for the search), got {k!r}")
        k = int(k)
    if (not is_real(share)
            or not 0.0 < float(share) < 1.0):
        raise ValueError(f"screen: share must be a number in (0, 1), the part of the selection "
                         f"budget spent on the screen (default {DEFAULT_SCREEN_SHARE}); got {share!r}")
    if not is_real(gamma) or not 0.0 <= gamma < 1.0:
        raise ValueError(f"screen: gamma must be a number in [0, 1) (default 0.5), got {gamma!r}")
    return ScreenSpec(k=k, share=float(share), gamma=float(gamma))


def restrict_design(design, kept):
    """The design with only the candidate columns ``kept`` (indices, sorted)."""
    kept = np.asarray(kept, dtype=np.intp)
    return design.replace(X=design.X[:, kept], x_bounds=np.asarray(design.x_bounds)[kept],
                          candidate_names=[design.spec.candidate_names[j] for j in kept])


def screen_design(design, spec: ScreenSpec, s: int, eps_screen: float, rng, ledger):
    """Run the private screen and restrict the design to the kept columns.

    Parameters
    ----------
    design : dpsubset.design.build.Design
        Clipped, mapped (private) data.
    spec : ScreenSpec
    s : int
    eps_screen : float
        Budget of the screen.
    rng : numpy.random.Generator
    ledger : dpsubset.privacy.budget.BudgetLedger
        The call's ledger: the screen spends ``eps_screen`` from it (stage ``"screening"``).

    Returns
    -------
    sub_design : Design
        Only the kept candidate columns (the always-in columns stay).
    kept : ndarray of int
        Indices of the kept columns in ``design.candidate_names``, sorted (public:
        the screen's release).
    """
    p = design.X.shape[1]
    k = spec.k_for(p, s)
    scores = sis_scores(design.X, design.y, design.x_bounds, design.b_y)
    kept = np.sort(sample_lipschitz_top_k(scores, k, eps_screen, rng, spec.gamma))
    ledger.spend(Stage.SCREENING, f"DP-SIS top-{k} of {p} columns (canonical Lipschitz top-k on "
                 "|x_j'y|, sensitivity 2 b_j b_y)", eps_screen, 0.0,
                 guarantee=SCREEN_GUARANTEE)
    return restrict_design(design, kept), kept
