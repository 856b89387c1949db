"""Inference: private uncertainty for a release (issue 26; docs/methods/inference.md).

- budget.py: the inference stages' parts of eps, from public settings;
- moments.py: the noisy second moments of the released support and the simulation model;
- bootstrap.py: the parametric bootstrap that reruns the refit on simulated data;
- intervals.py: what is released: bse, conf_int, tvalues, pvalues, cov_params;
- confidence.py: a private lower bound on the probability the best support was released;
- split.py: ``split=True``, selection and refit on disjoint random rows;
- release.py: the stages as ``dp_best_subset`` calls them;

The stage runs after the refit and before the results; it imports the refit, never the
results.
"""
from .budget import DEFAULT_INFERENCE_SHARE, inference_parts, residual_part
from .confidence import SelectionConfidence
from .intervals import CoefficientInference
from .release import coefficient_inference, confidence_of_selection
from .split import DEFAULT_SPLIT_FRACTION, rows_of, split_rows, split_sizes

__all__ = ["DEFAULT_INFERENCE_SHARE", "DEFAULT_SPLIT_FRACTION", "inference_parts", "residual_part",
           "SelectionConfidence", "CoefficientInference", "coefficient_inference",
           "confidence_of_selection", "rows_of", "split_rows", "split_sizes"]
