"""The budget as objects (issue 24): a plan from the settings, a ledger the stages spend from,
the report as a view of the ledger, the guarantees as an Enum, the parameter rules as a table,
and no import cycle among the modules of privacy/, selection/ and results/."""
import dataclasses
import importlib
import numbers
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import dpsubset as dps
from dpsubset._validation import (PARAMETER_RULES, Interval, Options, check_positive, is_integer, is_real,
                                  validate_params)
from dpsubset.privacy.budget import BudgetExceededError, BudgetLedger, BudgetPlan, Stage
from dpsubset.privacy.guarantees import GUARANTEES, Guarantee
from dpsubset.privacy.report import build_report
from dpsubset.selection.base import Selection


# ------------------------------------------------------------------------- the plan
def test_plan_splits_as_the_documented_defaults():
    plan = BudgetPlan.from_settings(2.0, refit=True)
    assert (plan.eps_select, plan.eps_refit, plan.eps_screen) == (1.0, 1.0, 0.0)
    plan = BudgetPlan.from_settings(2.0, refit=True, eps_refit=0.5, screen_share=0.5)
    assert (plan.eps_select, plan.eps_refit, plan.eps_screen) == (0.75, 0.5, 0.75)
    assert BudgetPlan.from_settings(2.0, refit=False).eps_select == 2.0


@pytest.mark.parametrize("kw, match", [
    (dict(eps=0.0, refit=True), "eps must be a finite number > 0"),
    (dict(eps=True, refit=True), "eps must be a finite number > 0"),
    (dict(eps=2e6, refit=True), "beyond any meaningful privacy budget"),
    (dict(eps=1.0, refit=False, eps_refit=0.5), "eps_refit was given but refit=False"),
    (dict(eps=1.0, refit=True, eps_select=0.8, eps_refit=0.8), "must be positive parts of eps"),
])
def test_plan_refuses_bad_settings(kw, match):
    eps = kw.pop("eps")
    with pytest.raises(ValueError, match=match):
        BudgetPlan.from_settings(eps, **kw)


# ----------------------------------------------------------------------- the ledger
def test_ledger_records_in_order_and_sums():
    ledger = BudgetLedger(BudgetPlan.from_settings(3.0, refit=True, eps_refit=1.0).with_gap_test(0.5))
    ledger.spend("selection: gap test", "Laplace test", 0.5, 1e-6)
    ledger.spend("selection", "mistakes", 1.5).spend("refit", "objective perturbation (pure)", 1.0)
    assert [st["stage"] for st in ledger.stages] == ["selection: gap test", "selection", "refit"]
    assert ledger.eps == pytest.approx(3.0) and ledger.delta == 1e-6


def test_ledger_refuses_more_than_the_plan():
    ledger = BudgetLedger(BudgetPlan.from_settings(2.0, refit=True))
    ledger.spend("selection", "top-R", 1.0)
    with pytest.raises(BudgetExceededError, match="selection"):
        ledger.spend("selection", "top-R again", 0.1)
    with pytest.raises(BudgetExceededError, match="no part"):
        ledger.spend("postprocessing", "x", 0.1)
    with pytest.raises(BudgetExceededError, match="planned"):
        BudgetLedger(BudgetPlan.from_settings(2.0, refit=False)).spend("refit", "x", 0.5)


def test_a_release_spends_its_plan_through_the_ledger():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 6))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(6)]).assign(y=X[:, 0] + rng.normal(size=200))
    res = dps.dp_best_subset("y ~ .", df, eps=3.0, s=2, bounds=(3, 5), method=dps.Method("mistakes", screen=dict(k=4)),
                             random_state=1)
    rep = res.privacy
    assert [st["stage"] for st in rep.stages] == ["screening", "selection: gap test", "selection", "refit"]
    assert rep.eps == pytest.approx(3.0)
    assert sum(st["eps"] for st in rep.stages if st["stage"] != "refit") == pytest.approx(res.eps_select + 0.75)


# ----------------------------------------------------------------------- the report
def test_report_is_a_view_of_the_ledger():
    ledger = BudgetLedger().spend("selection", "top-R", 1.0).spend("refit", "objective perturbation (pure)", 1.0)
    sel = Selection(support=(0,), sensitivity=0.1)
    rep = build_report(ledger, sel, bounds_public=True, leaks=())
    assert rep.guarantee == "pure" and type(rep.guarantee) is str
    assert rep.stages == ledger.stages and rep.eps == 2.0
    assert rep.statement.startswith("2-differential privacy (pure)")
    void = build_report(ledger, sel, bounds_public=False, leaks=("bounds taken from the data",))
    assert void.guarantee == "void" and void.sensitivity is None


def test_stages_are_an_enum_and_the_plan_knows_each():
    assert Stage("selection: gap test") is Stage.GAP_TEST and Stage.GAP_TEST.group == "selection"
    assert Stage.CENTRING.rows == "all rows" and Stage.CONFIDENCE.rows == "selection rows"
    assert Stage.RESIDUAL.rows == "refit rows" and f"{Stage.REFIT}" == "refit"
    plan = BudgetPlan.from_settings(5.0, refit=True, eps_moments=0.8, eps_confidence=0.2, eps_residual=0.2)
    assert plan.allowance(Stage.MOMENTS) == pytest.approx(0.6) and plan.allowance(Stage.RESIDUAL) == 0.2
    assert plan.allowance("inference") == pytest.approx(1.0)
    # the residual variance has its own part: spending the moments' whole part on the moments fails
    with pytest.raises(BudgetExceededError, match="planned 0.6"):
        BudgetLedger(plan).spend(Stage.MOMENTS, "x", 0.8)
    with pytest.raises(BudgetExceededError, match="not a part"):
        BudgetPlan.from_settings(5.0, refit=True, eps_moments=0.8, eps_residual=0.9)


def test_the_guarantee_is_the_weakest_a_stage_declared():
    """The report's guarantee comes from the ledger: what each mechanism declared when it spent."""
    sel = Selection(support=(0,), sensitivity=0.1)
    pure = BudgetLedger().spend(Stage.SELECTION, "top-R", 1.0, guarantee="pure")
    assert pure.guarantee is Guarantee.PURE
    assert build_report(pure, sel, bounds_public=True, leaks=()).guarantee == "pure"
    # a delta makes it approximate even when no guarantee is named
    approx = BudgetLedger().spend(Stage.GAP_TEST, "test", 0.25, 1e-6).spend(Stage.SELECTION, "top-R", 0.75)
    assert approx.guarantee is Guarantee.APPROXIMATE
    assert build_report(approx, sel, bounds_public=True, leaks=()).guarantee == "approximate"
    # known-bad: a pure selection (delta 0) whose mechanism declares a conditional guarantee must
    # not be reported as pure; a report that read only eps and delta would say "pure"
    cond = BudgetLedger().spend(Stage.SELECTION, "mistakes", 1.0, guarantee="conditional") \
        .spend(Stage.REFIT, "objective perturbation", 1.0)
    assert cond.guarantee is Guarantee.CONDITIONAL and cond.delta == 0
    assert build_report(cond, sel, bounds_public=True, leaks=()).guarantee == "conditional"
    with pytest.raises(ValueError):
        BudgetLedger().spend(Stage.SELECTION, "x", 1.0, guarantee="almost")


def test_every_method_declares_its_guarantee_when_it_spends():
    """mistakes without the gap test is conditional, with it approximate, top-R pure: read
    from the mechanisms' GUARANTEE constants through the ledger."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 5))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(5)]).assign(y=X[:, 0] + rng.normal(size=150))
    kinds = {}
    for name, method in (("top_r", "top_r"), ("assume", dps.Method("mistakes", gap_check="assume")),
                         ("ptr", "mistakes")):
        res = dps.dp_best_subset("y ~ .", df, eps=3.0, s=2, bounds=(3, 5), method=method, random_state=0)
        kinds[name] = res.privacy.guarantee
    assert kinds == {"top_r": "pure", "assume": "conditional", "ptr": "approximate"}


def test_guarantees_are_an_enum():
    assert Guarantee("approximate") is Guarantee.APPROXIMATE and Guarantee.PURE == "pure"
    assert f"{Guarantee.VOID}" == "void"
    assert GUARANTEES["void"] == Guarantee.VOID.statement == "no differential privacy guarantee"
    with pytest.raises(ValueError):
        Guarantee("almost")


# --------------------------------------------------------------------- the rules
def test_one_real_check():
    assert is_real(1.5) and is_real(np.float32(2)) and is_real(3)
    assert not is_real(True) and not is_real("1") and not is_real(None)
    assert is_integer(np.int64(3)) and not is_integer(False) and not is_integer(2.0)
    assert check_positive("lam", None, allow_none=True) is None
    with pytest.raises(ValueError, match="lam must be a finite number > 0, got inf"):
        check_positive("lam", float("inf"))


def test_parameter_rules_table():
    assert isinstance(PARAMETER_RULES["eps"], Interval) and PARAMETER_RULES["eps"].kind is numbers.Real
    assert isinstance(PARAMETER_RULES["loss"], Options)
    out = validate_params(dict(eps=2, s=np.int64(3), refit=True, other="kept"))
    assert out == dict(eps=2.0, s=3, refit=True, other="kept") and type(out["s"]) is int
    with pytest.raises(ValueError, match=r"s must be an integer >= 1, got 0"):
        validate_params(dict(s=0))
    with pytest.raises(TypeError, match="refit must be True or False"):
        validate_params(dict(refit=1))
    with pytest.raises(ValueError, match=r"delta must be a number in \(0, 0.5\) \(much"):
        validate_params(dict(delta=0.5), {"delta": Interval(numbers.Real, 0, 0.5, hint="(much)")})


# ----------------------------------------------------------------------- results
def test_results_declare_every_attribute_the_api_sets():
    names = {f.name for f in dataclasses.fields(dps.DPSubsetResults)}
    assert {"response_levels", "screened", "loss_params"} <= names


# ------------------------------------------------------------------------ layout
MODULES = ["dpsubset.privacy.guarantees", "dpsubset.privacy.budget", "dpsubset.privacy.report",
           "dpsubset.privacy.leaks", "dpsubset.selection.base", "dpsubset.selection.exact",
           "dpsubset.selection.screening", "dpsubset.selection.baselines.dp_sis",
           "dpsubset.results.summary", "dpsubset.results.results", "dpsubset.results.tables",
           "dpsubset._validation", "dpsubset.api"]


@pytest.mark.parametrize("module", MODULES)
def test_each_module_imports_first_in_a_fresh_interpreter(module):
    # A cycle shows as an ImportError (partially initialised module) when the module is
    # the first one imported.
    code = f"import importlib; importlib.import_module({module!r}); import dpsubset.selection as s; " \
           "assert {'top_r', 'mistakes', 'mcmc'} <= set(s.METHODS)"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_selection_base_does_not_import_the_methods():
    src = importlib.util.find_spec("dpsubset.selection.base").origin
    text = open(src).read()
    assert "baselines" not in text.split('"""', 2)[2] and "from .exact" not in text


def test_the_gap_test_has_its_own_part_of_the_selection():
    plan = BudgetPlan.from_settings(4.0, refit=True).with_gap_test(0.5)
    assert plan.eps_gap_test == 0.5 and plan.with_gap_test(None) is plan
    ledger = BudgetLedger(plan)
    with pytest.raises(BudgetExceededError, match="gap test"):
        ledger.spend("selection: gap test", "Laplace test", 0.6, 1e-6)
    ledger.spend("selection: gap test", "Laplace test", 0.5, 1e-6).spend("selection", "mistakes", 1.5)
    with pytest.raises(BudgetExceededError):
        BudgetPlan.from_settings(4.0, refit=True).with_gap_test(2.0)  # not a part of eps_select = 2


def test_a_method_registered_from_outside_declares_its_guarantee():
    """A method that does its own accounting (``Selection.stages``) and declares a conditional
    guarantee for them is reported conditional, not pure (its stages carry delta = 0)."""
    from dpsubset.selection.base import METHODS, SelectionMethod, register_method

    def select(req):
        return Selection(support=tuple(range(req.s)), guarantee="conditional",
                         statement="eps-DP only if the toy's condition holds (not checked).",
                         stages=[dict(stage="selection", mechanism="toy", eps=req.eps, delta=0.0)])

    register_method(SelectionMethod(name="toy_conditional", select=select,
                                    validate=lambda o, *, s, eps, loss: dict(o)))
    try:
        rng = np.random.default_rng(0)
        X = rng.normal(size=(100, 4))
        df = pd.DataFrame(X, columns=[f"x{j}" for j in range(4)]).assign(y=X[:, 0])
        res = dps.dp_best_subset("y ~ .", df, eps=2.0, s=1, bounds=(3, 3), method="toy_conditional",
                                 random_state=0)
    finally:
        METHODS.pop("toy_conditional")
    assert res.privacy.guarantee == "conditional" and "toy's condition" in res.privacy.statement
