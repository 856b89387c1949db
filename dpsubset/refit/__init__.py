"""Refit: private coefficients on the released support.

- objective.py: objective perturbation (Kifer, Smith and Thakurta 2012) for every loss,
  Mode A (closed form, squared loss; also from the sufficient statistics) and Mode B
  (certified iterative solve plus output noise), with its public calibration;
- certificate.py: the KKT certificate that proves how close a solve is to the exact
  minimiser, and the exact-arithmetic numerics it stands on;
- exact_grid.py: the same mechanism with exact noise and a public output grid, exactly
  eps-DP as run: the pure refit dp_best_subset runs (matrix and Gram routes);
- limits.py: whether a refit's public constants fit in floating point;
- support.py: the refit of one release (:func:`refit_support`: the route, rows or
  sufficient statistics, and the pure or Gaussian variant), the door the API calls;
- ssp.py: sufficient-statistics perturbation, an independent cross-check of Mode A;
- adassp.py: AdaSSP (Wang 2018), a refit peer for the benchmarks (not a dp_best_subset option).
"""
from .exact_grid import objective_perturbation_exact, objective_perturbation_gram_exact
from .limits import check_refit_representable
from .objective import RefitResult, objective_perturbation, objective_perturbation_gram
from .ssp import sufficient_statistics_perturbation
from .support import RefitSpec, refit_support

__all__ = ["RefitResult", "objective_perturbation", "objective_perturbation_gram",
           "objective_perturbation_exact", "objective_perturbation_gram_exact", "check_refit_representable",
           "sufficient_statistics_perturbation", "RefitSpec", "refit_support"]
