"""Selection mechanisms: they turn exact candidate supports into one private release.

The mechanisms never see the data or the formula: they take candidate objects
(scores of supports computed by ``dpsubset.search``), the budget eps, the
sensitivity Delta and a numpy Generator. Every random draw of the package goes
through ``noise.py`` (its docstring lists the samplers and what each guarantees).

Guarantees under row replacement (docs/methods/selection.md):

* ``sample_top_r``: pure eps-DP, if the candidates are exactly the R best and R is
  fixed in advance.
* ``sample_mistakes``: conditional. eps-DP only on data where the best support
  beats the second best by more than 2 Delta; that condition is not checked.
* ``sample_gap_checked``: (eps_0 + eps, delta)-DP; a private test of the gap
  decides between mistakes and top-R.
"""
from . import gap_check as _gap_check
from . import noise
from . import mistakes as _mistakes
from . import top_r as _top_r
from .gap_check import (ptr_distribution, ptr_pass_probability, ptr_test, ptr_threshold,
                        sample_gap_checked)
from .mistakes import mistakes_distribution, mistakes_log_weights, sample_mistakes
from .sampling import (as_generator, gumbel_max, log_multiplicity, log_softmax, log_weights,
                       uniform_member_of_class, uniform_support_outside)
from .top_r import sample_top_r, top_r_distribution, top_r_log_weights

# Kind of guarantee of each mechanism (keys of dpsubset.privacy.leaks.GUARANTEES).
MECHANISM_GUARANTEES = {
    "top_r": _top_r.GUARANTEE,
    "mistakes": _mistakes.GUARANTEE,
    "gap_check": _gap_check.GUARANTEE,
}

__all__ = [
    "MECHANISM_GUARANTEES", "noise",
    "as_generator", "log_multiplicity", "log_weights", "gumbel_max", "log_softmax",
    "uniform_support_outside", "uniform_member_of_class",
    "top_r_log_weights", "sample_top_r", "top_r_distribution",
    "mistakes_log_weights", "sample_mistakes", "mistakes_distribution",
    "ptr_threshold", "ptr_test", "ptr_pass_probability", "ptr_distribution",
    "sample_gap_checked",
]
