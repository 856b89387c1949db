"""Every random draw in dpsubset/ goes through dpsubset/mechanisms/noise.py (issue 41).

The scan reads the source: no module other than the samplers module calls a numpy
random distribution (a Generator method such as ``laplace``, ``gumbel``, ``random``) or
anything under ``np.random`` (constructors included), so a new draw cannot bypass the
exact samplers unnoticed."""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2] / "dpsubset"
SAMPLERS_MODULE = ROOT / "mechanisms" / "noise.py"

# The numpy Generator methods that draw (numpy 2.x), and the legacy module functions.
DRAWS = {
    "beta", "binomial", "bytes", "chisquare", "choice", "dirichlet", "exponential", "f",
    "gamma", "geometric", "gumbel", "hypergeometric", "integers", "laplace", "logistic",
    "lognormal", "logseries", "multinomial", "multivariate_hypergeometric",
    "multivariate_normal", "negative_binomial", "noncentral_chisquare", "noncentral_f",
    "normal", "pareto", "permutation", "permuted", "poisson", "power", "rand", "randint",
    "randn", "random", "random_sample", "rayleigh", "shuffle", "standard_cauchy",
    "standard_exponential", "standard_gamma", "standard_normal", "standard_t", "triangular",
    "uniform", "vonmises", "wald", "weibull", "zipf",
}


def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def direct_draws(source: str):
    """(line, call) of every direct numpy draw in ``source``.

    A call counts when it is ``<anything>.<draw>(...)`` with a draw name above on an
    object other than a module of ours (``noise.normal(...)`` is the samplers module),
    or any call of something under ``np.random`` / ``numpy.random``.
    """
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        name = _dotted(node.func)
        owner = name.rsplit(".", 1)[0]
        if ".random." in f".{name}" and name.split(".")[0] in {"np", "numpy"}:
            found.append((node.lineno, name))
        elif node.func.attr in DRAWS and owner.split(".")[-1] not in {"noise", "samplers", "noise_mod"}:
            found.append((node.lineno, name))
    return found


def test_no_module_but_the_samplers_draws_directly():
    offenders = {}
    for path in sorted(ROOT.rglob("*.py")):
        if path == SAMPLERS_MODULE:
            continue
        hits = direct_draws(path.read_text())
        if hits:
            offenders[str(path.relative_to(ROOT))] = hits
    assert offenders == {}


def test_the_scan_finds_a_direct_draw():
    bad = "import numpy as np\nx = rng.laplace(0.0, 1.0)\ng = np.random.default_rng(1)\n"
    assert direct_draws(bad) == [(2, "rng.laplace"), (3, "np.random.default_rng")]
    assert direct_draws("y = noise.laplace_release(x, 1.0, rng)\n") == []


def test_the_samplers_module_itself_is_seen_drawing():
    # the scan would notice the draws if the samplers module were not exempt
    assert len(direct_draws(SAMPLERS_MODULE.read_text())) > 5


# --------------------------------------------------------------------------- the report names the samplers

import warnings  # noqa: E402

import pytest  # noqa: E402

import dpsubset as dps  # noqa: E402
from dpsubset.privacy.report import SAMPLERS, stage_sampler  # noqa: E402
from dpsubset.selection.base import METHODS  # noqa: E402
from dpsubset.studies.simulate import make_regression  # noqa: E402


@pytest.fixture(scope="module")
def small():
    df, _ = make_regression(200, 6, s=2, random_state=0, as_frame=True)
    return df


@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_stage_of_every_method_names_a_known_sampler(small, method):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = dps.dp_best_subset("y ~ 0 + .", small, eps=4.0, s=2, bounds=(0.5, 0.5), method=method,
                                 random_state=0)
    keys = [stage_sampler(st["mechanism"]) for st in res.privacy.stages]
    assert "unknown" not in keys, res.privacy.stages
    assert res.privacy.samplers == tuple(SAMPLERS[k][0] for k in keys)
    # the refit's objective perturbation is the one floating-point stage of an exact method
    assert res.privacy.all_draws_exact == all(SAMPLERS[k][1] for k in keys)
    assert any(smp in repr(res.privacy) for smp in res.privacy.samplers)


def test_the_report_says_when_every_draw_is_exact(small):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exact = dps.dp_best_subset("y ~ 0 + .", small, eps=4.0, s=2, bounds=(0.5, 0.5), refit=False,
                                   random_state=0)
        # the default (pure) refit is the exact-grid objective perturbation
        refit = dps.dp_best_subset("y ~ 0 + .", small, eps=4.0, s=2, bounds=(0.5, 0.5), random_state=0)
        # its Gaussian variant (refit_delta > 0) is drawn in floating point
        fl = dps.dp_best_subset("y ~ 0 + .", small, eps=4.0, s=2, bounds=(0.5, 0.5), random_state=0,
                                budget=dps.Budget(refit_delta=1e-8))
    assert exact.privacy.all_draws_exact and "exact sampler" in repr(exact.privacy)
    assert refit.privacy.all_draws_exact and "exact grid" in repr(refit.privacy)
    assert not fl.privacy.all_draws_exact and "floating-point" in repr(fl.privacy)
    assert fl.privacy.samplers[0] == "exact Gumbel-max"
