"""What a call to ``dp_best_subset`` releases: the support, DP coefficients, the privacy report.

Only private (or public) quantities live here: no data, no clipped data, no scores
of candidate supports, no noise. Non-private diagnostics, when a user asks for them,
come in a separate, labelled object (:class:`NonPrivateDiagnostics`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .privacy import GUARANTEES

__all__ = ["PrivacyReport", "DPSubsetResults", "NonPrivateDiagnostics"]


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
    sensitivity : float
        Delta, the sensitivity of every score (public: it depends on bounds, r, s, n).
    bounds_public : bool
    leaks : tuple of str
        Why the guarantee is void, if it is.
    certificates : tuple of dict
        For every exact solve: ``problem``, ``method``, ``closed`` (whether the
        optimality gap met the tolerance). The bounds themselves are scores of the
        data and are not reported here.
    gap_check_passed : bool or None
        For the gap-checked mistakes mechanism: whether the private test passed
        (mistakes ran) or not (top-R ran). Covered by the guarantee.
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
    certificates: tuple = ()
    gap_check_passed: bool | None = None

    @property
    def all_certificates_closed(self) -> bool:
        return all(c["closed"] for c in self.certificates)

    def __repr__(self):
        lines = [f"Privacy report: {GUARANTEES[self.guarantee]}",
                 f"  {self.statement}",
                 f"  total eps = {self.eps:.6g}, delta = {self.delta:.3g}; neighbours: {self.neighbours}"]
        for st in self.stages:
            lines.append(f"  - {st['stage']}: {st['mechanism']} (eps = {st['eps']:.6g}, delta = {st['delta']:.3g})")
        lines.append(f"  score sensitivity Delta = {self.sensitivity:.6g}")
        if self.gap_check_passed is not None:
            lines.append("  gap check: " + ("passed, mistakes ran" if self.gap_check_passed
                                            else "not passed, top-R ran"))
        n_closed = sum(c["closed"] for c in self.certificates)
        lines.append(f"  exact solves: {n_closed} of {len(self.certificates)} certified optimal")
        if not self.bounds_public:
            lines.append("  bounds: NOT public (taken from the data)")
        for leak in self.leaks:
            lines.append(f"  ! {leak}")
        return "\n".join(lines)


@dataclass
class DPSubsetResults:
    """Result of :func:`dpsubset.dp_best_subset`.

    Attributes
    ----------
    support : list of str
        The released model-matrix columns (the always-in columns are not listed).
    params : pandas.Series or None
        DP coefficients in the user's units over the always-in columns and all
        candidates (zeros off the support); None when ``refit=False``.
    forced : list of str
        Columns always in the model (the intercept, ``keep=``).
    candidates : list of str
        All candidate columns.
    method : str
    nobs : int
    privacy : PrivacyReport

    Notes
    -----
    There is deliberately no ``fittedvalues`` or ``resid``: they would be computed
    from the private data and are not covered by the guarantee. Use
    :meth:`predict` on data you are allowed to use.
    """

    support: list
    params: pd.Series | None
    forced: list
    candidates: list
    method: str
    nobs: int
    formula: str
    response: str
    privacy: PrivacyReport
    _predictor: object = field(default=None, repr=False)
    _coef_mapped: np.ndarray | None = field(default=None, repr=False)
    _used_columns: list = field(default_factory=list, repr=False)

    def predict(self, newdata):
        """Predictions for new data from the DP coefficients.

        New data are transformed by the same formula, clipped to the same public
        bounds and mapped by the same public maps as the training data.
        """
        if self._coef_mapped is None:
            raise ValueError("predict needs coefficients: fit with refit=True")
        M = self._predictor.transform_new(newdata)
        names = self._predictor.forced_names + self._predictor.candidate_names
        idx = [names.index(c) for c in self._used_columns]
        eta = M[:, idx] @ self._coef_mapped
        centre, half = self._predictor.column_maps.get(self.response, (0.0, 1.0))
        return pd.Series(centre + half * eta, name=self.response)

    def __repr__(self):
        return (f"DPSubsetResults(method={self.method!r}, support={self.support}, "
                f"guarantee={self.privacy.guarantee!r}, eps={self.privacy.eps:.4g})")

    def summary(self):
        """A statsmodels ``Summary`` of the fit (text, LaTeX and HTML renderings)."""
        from statsmodels.iolib.summary import Summary
        from statsmodels.iolib.table import SimpleTable

        rep = self.privacy
        left = [("Dep. Variable:", self.response), ("Method:", self.method),
                ("No. Observations:", str(self.nobs)),
                ("No. candidates:", str(len(self.candidates))),
                ("Support size:", str(len(self.support)))]
        right = [("Guarantee:", rep.guarantee), ("Total eps:", f"{rep.eps:.4g}"),
                 ("delta:", f"{rep.delta:.3g}"),
                 ("Score sensitivity:", f"{rep.sensitivity:.4g}"),
                 ("Certificates:", "all closed" if rep.all_certificates_closed else "OPEN")]
        smry = Summary()
        data = [[a[0], a[1], b[0], b[1]] for a, b in zip(left, right)]
        smry.tables.append(SimpleTable(data, title="Private best subset selection"))
        rows = []
        for name in self.forced + self.candidates:
            role = "forced" if name in self.forced else ("selected" if name in self.support else "")
            if role == "" :
                continue
            coef = "" if self.params is None else f"{self.params[name]:.4g}"
            rows.append([name, coef, role])
        smry.tables.append(SimpleTable(rows, headers=["term", "DP coef", "status"]))
        smry.add_extra_txt([rep.statement])
        return smry


@dataclass
class NonPrivateDiagnostics:
    """NON-PRIVATE intermediate values of one call. Not covered by any guarantee.

    Returned only with ``diagnostics=True``, with a PrivacyLeakWarning. Publishing
    anything in here can reveal information about individual rows.
    """

    best_support: list
    candidate_supports: list
    candidate_scores: np.ndarray
    certificates: list
    score_gap: float | None = None
    label: str = "NON-PRIVATE: scores of the data; not covered by the privacy guarantee"
