"""The call's settings (issue 38): at most 16 parameters, option objects that check their
fields before any data are read, one frozen Settings per call, and every old keyword
refused with its new place."""
import inspect
import math
import pickle
import re
import warnings
from dataclasses import FrozenInstanceError, fields

import numpy as np
import pandas as pd
import pytest

import dpsubset as dps
from dpsubset import settings as st
from dpsubset.interfaces.cli import MOVED_FLAGS
from dpsubset.interfaces.cli import main as cli_main
from dpsubset.nonprivate import best_subset_nonprivate
from dpsubset.studies.experiments import MOVED_STUDY, recovery_study

OPTION_CLASSES = [dps.Budget, dps.Ball, dps.Search, dps.Huber, dps.Hinge, dps.Logistic, dps.Refit,
                  dps.Inference, dps.Formula]


class _Unreadable:
    """Data that fail loudly if anything reads them."""

    def __getattr__(self, name):
        raise AssertionError("the data were read before the settings were checked")


def _frame(n=300, p=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, p))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
    df["y"] = np.clip(X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=n), -3, 3)
    return df


def _release(**kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dps.dp_best_subset("y ~ .", _frame(), eps=4.0, s=2, bounds=(1.0, 3.0), random_state=7, **kw)


# ------------------------------------------------------------------------ the signature
def test_signature_has_at_most_16_parameters_and_keeps_the_common_call():
    params = inspect.signature(dps.dp_best_subset).parameters
    assert len(params) <= 16, list(params)
    assert list(params)[:4] == ["formula", "data", "eps", "s"]
    assert {"bounds", "method", "loss", "keep", "refit", "inference", "centre", "random_state", "verbose",
            "budget", "ball", "search"} <= set(params)
    res = dps.dp_best_subset("y ~ .", _frame(), eps=4.0, s=2, bounds=(1.0, 3.0), random_state=1)
    assert len(res.support) == 2


@pytest.mark.parametrize("old", sorted(st.MOVED))
def test_every_old_keyword_names_its_new_place_before_the_data(old):
    with pytest.raises(TypeError) as err:
        dps.dp_best_subset("y ~ .", _Unreadable(), eps=1.0, s=2, **{old: 1})
    text = str(err.value)
    assert f"{old}= moved: use {st.MOVED[old]}" in text
    # the new place is a real argument and (for an option object) one of its fields
    new = st.MOVED[old]
    arg = new.split("=", 1)[0]
    assert arg in inspect.signature(dps.dp_best_subset).parameters
    cls = re.search(r"dpsubset\.(\w+)\(", new)
    field = re.search(r"\((?:'\w+', )?(\w+)=", new)
    if cls and field and cls.group(1) != "Method":
        assert field.group(1) in {f.name for f in fields(getattr(dps, cls.group(1)))}, new


def test_the_old_keywords_table_has_one_entry_per_moved_argument():
    """The table covers the 40-parameter signature of before: everything that is not flat now."""
    before = {"formula", "data", "eps", "s", "method", "bounds", "centre", "r", "lam", "r_select", "r_refit",
              "lam_select", "lam_refit", "R", "gap_check", "eps0", "delta", "keep", "loss", "huber_h", "hinge_h",
              "response_levels", "refit", "eps_select", "eps_refit", "refit_delta", "inference", "eps_inference",
              "split", "truth_in_ball", "search", "time_limit", "memory_limit", "random_state", "diagnostics",
              "verbose", "method_options", "solver", "solver_options", "screen", "context"}
    flat = set(inspect.signature(dps.dp_best_subset).parameters)
    assert before - flat == set(st.MOVED)


def test_nonprivate_and_the_study_refuse_their_old_keywords():
    assert len(inspect.signature(best_subset_nonprivate).parameters) == 7
    for old in ("lam", "r", "time_limit", "solver", "solver_options"):
        with pytest.raises(TypeError, match=f"{old}= moved: use {re.escape(st.MOVED[old])}"):
            best_subset_nonprivate("y ~ .", _Unreadable(), 2, **{old: 1})
    assert len(inspect.signature(recovery_study).parameters) < 22
    for old, new in MOVED_STUDY.items():
        with pytest.raises(TypeError, match=f"{old}= moved: use {re.escape(new)}"):
            recovery_study(["top_r"], [100], **{old: 1})


# --------------------------------------------------------------------- the option objects
@pytest.mark.parametrize("cls", OPTION_CLASSES)
def test_each_option_object_is_frozen_and_documents_every_field(cls):
    doc = inspect.getdoc(cls)
    assert "Parameters\n----------" in doc, cls
    for f in fields(cls):
        assert re.search(rf"^(?:\w+, )*{f.name}(?:, \w+)* :", doc, re.M), (cls, f.name)
    obj = cls("y ~ x") if cls is dps.Formula else cls()
    name = fields(cls)[0].name
    with pytest.raises(FrozenInstanceError):
        setattr(obj, name, None)
    assert pickle.loads(pickle.dumps(obj)) == obj


@pytest.mark.parametrize("make,exc,match", [
    (lambda: dps.Ball(r=-1.0), ValueError, r"Ball\.r must be a finite number > 0, got -1"),
    (lambda: dps.Ball(lam=math.nan), ValueError, r"Ball\.lam must be a finite number > 0"),
    (lambda: dps.Ball(r_refit=0), ValueError, r"Ball\.r_refit must be"),
    (lambda: dps.Ball(r=1.0, r_select=1.0), ValueError, r"Ball: r= and r_select= were both given"),
    (lambda: dps.Ball(lam=1.0, lam_select=2.0), ValueError, r"lam= and lam_select="),
    (lambda: dps.Budget(select=0), ValueError, r"Budget\.select must be a finite number > 0"),
    (lambda: dps.Budget(refit="1"), ValueError, r"Budget\.refit must be"),
    (lambda: dps.Budget(inference=-2.0), ValueError, r"Budget\.inference must be"),
    (lambda: dps.Budget(gap_test=math.inf), ValueError, r"Budget\.gap_test must be"),
    (lambda: dps.Budget(delta=1.5), ValueError, r"Budget\.delta must be a number in \(0, 1\)"),
    (lambda: dps.Budget(refit_delta=0.7), ValueError, r"Budget\.refit_delta must be a number in \(0, 0\.5\) "
                                                      r"\(and much smaller than 1/n\)"),
    (lambda: dps.Search(route="fast"), ValueError, r"Search\.route must be one of \('auto'"),
    (lambda: dps.Search(time_limit=0), ValueError, r"Search\.time_limit must be a number of seconds > 0"),
    (lambda: dps.Search(memory_limit=-1), ValueError, r"Search\.memory_limit must be a number of bytes > 0"),
    (lambda: dps.Search(diagnostics=1), TypeError, r"Search\.diagnostics must be True or False"),
    (lambda: dps.Search(solver_options=[1]), TypeError, r"Search\.solver_options must be a dict"),
    (lambda: dps.Method("fastest"), ValueError, r"Method\.name must be one of \('top_r'"),
    (lambda: dps.Method("top_r", R=1), ValueError, r"Method\.R must be an integer >= 2"),
    (lambda: dps.Method("top_r", gap_check="assume"), ValueError, r"Method\.gap_check is only used with "
                                                                  r"Method\('mistakes'\)"),
    (lambda: dps.Method("mistakes", gap_check="maybe"), ValueError, r"Method\.gap_check must be one of"),
    (lambda: dps.Method("mistakes", eps0=0.1), TypeError, r"eps0= is a budget: use budget=Budget\(gap_test"),
    (lambda: dps.Huber(h=0), ValueError, r"Huber\.h must be a finite number > 0"),
    (lambda: dps.Hinge(h=-1), ValueError, r"Hinge\.h must be"),
    (lambda: dps.Hinge(levels=(1, 1)), ValueError, r"Hinge\.levels must name two different classes"),
    (lambda: dps.Logistic(levels=("a",)), ValueError, r"Logistic\.levels must be a pair .*e\.g\. levels=\(0, 1\)"),
    (lambda: dps.Refit(split="yes"), TypeError, r"Refit\.split must be True or False"),
    (lambda: dps.Inference(truth_in_ball=1), TypeError, r"Inference\.truth_in_ball must be True or False"),
    (lambda: dps.Formula(3), TypeError, r"Formula\.text must be a formula string"),
])
def test_option_objects_check_their_fields_when_made(make, exc, match):
    with pytest.raises(exc, match=match):
        make()


@pytest.mark.parametrize("kw,exc,match", [
    (dict(ball={"r": -1}), ValueError, r"Ball\.r must be"),
    (dict(ball={"radius": 1}), TypeError, r"ball: unknown field\(s\) \['radius'\]; dpsubset\.Ball takes r, lam"),
    (dict(budget={"select": 0.5, "eps": 1}), TypeError, r"budget: unknown field\(s\) \['eps'\]"),
    (dict(search={"route": "x"}), ValueError, r"Search\.route must be one of"),
    (dict(search=3), TypeError, r"search must be a route name, a dpsubset\.Search or a dict"),
    (dict(method={"R": 5}), TypeError, r"method: a dict needs the method's 'name'"),
    (dict(method="fastest"), ValueError, r"method must be one of"),
    (dict(loss="absolute"), ValueError, r"loss must be one of \('squared', 'huber', 'logistic', 'hinge'\)"),
    (dict(loss={"name": "hinge", "width": 1}), TypeError, r"dpsubset\.Hinge takes h, levels"),
    (dict(refit="yes"), TypeError, r"refit must be True or False, a dpsubset\.Refit"),
    (dict(inference=1), TypeError, r"inference must be True or False, a dpsubset\.Inference"),
    # settings that join two objects: checked before the data too
    (dict(refit=False, ball={"r_refit": 1.0}), ValueError, r"Ball\.r_refit was given but refit=False"),
    (dict(refit=False, budget={"refit_delta": 1e-6}), ValueError, r"Budget\.refit_delta was given but refit"),
    (dict(refit=False, budget={"refit": 1.0}), ValueError, r"Budget\.refit was given but refit=False"),
    (dict(budget={"inference": 0.5}), ValueError, r"Budget\.inference was given but inference=False"),
    (dict(inference=True, ball={"lam_refit": 2.0}), ValueError, r"Ball\.lam_refit with inference=True"),
    (dict(method="samp_agg", loss="huber"), ValueError, r"method='samp_agg' supports loss in"),
    (dict(method=dps.Method("exponential", screen=True)), ValueError, r"screen= works with method in"),
    (dict(search=dps.Search(solver="gurobi_direct")), ValueError, r"only used with search='pyomo'"),
])
def test_the_call_refuses_bad_settings_before_the_data(kw, exc, match):
    with pytest.raises(exc, match=match):
        dps.dp_best_subset("y ~ .", _Unreadable(), eps=1.0, s=2, **kw)


def test_strings_dicts_and_objects_are_the_same_settings():
    a = st.build_settings(eps=2.0, s=3, method={"name": "mistakes", "R": 20}, loss={"name": "huber", "h": 0.4},
                          budget={"select": 1.0, "refit": 1.0}, ball={"r": 0.5}, search="enumeration",
                          refit={"split": True}, inference={"truth_in_ball": True})
    b = st.build_settings(eps=2.0, s=3, method=dps.Method("mistakes", R=20), loss=dps.Huber(h=0.4),
                          budget=dps.Budget(select=1.0, refit=1.0), ball=dps.Ball(r=0.5),
                          search=dps.Search(route="enumeration"), refit=dps.Refit(split=True),
                          inference=dps.Inference(truth_in_ball=True))
    assert a == b
    assert (a.loss, a.huber_h, a.method.name, a.search.route, a.split, a.truth_in_ball) == \
        ("huber", 0.4, "mistakes", "enumeration", True, True)
    # r of both stages becomes each stage's own radius
    assert (a.ball.r_select, a.ball.r_refit, a.ball.r) == (0.5, 0.5, None)
    off = st.build_settings(eps=2.0, s=3, refit=False, inference=False)
    assert off.refit is None and off.inference is None and not off.split


def test_one_frozen_settings_object_per_call(monkeypatch):
    import dpsubset.api as api
    seen = []
    real = api._release

    def spy(formula, data, settings, context):
        seen.append(settings)
        return real(formula, data, settings, context)

    monkeypatch.setattr(api, "_release", spy)
    _release(ball=dps.Ball(r=0.8))
    assert len(seen) == 1 and isinstance(seen[0], st.Settings)
    with pytest.raises(FrozenInstanceError):
        seen[0].eps = 100.0
    assert seen[0].ball.r_select == 0.8 and seen[0].stages is None


def test_the_release_is_the_same_whichever_spelling():
    obj = _release(method=dps.Method("top_r", R=8), ball=dps.Ball(r=0.9, lam=2.0),
                   budget=dps.Budget(select=2.5, refit=1.5), search=dps.Search(route="enumeration"))
    plain = _release(method={"name": "top_r", "R": 8}, ball={"r": 0.9, "lam": 2.0},
                     budget={"select": 2.5, "refit": 1.5}, search="enumeration")
    assert obj.support == plain.support and np.allclose(obj.params, plain.params)
    assert (obj.r, obj.lam, obj.eps_select, obj.eps_refit) == (0.9, 2.0, 2.5, 1.5)
    assert [s["eps"] for s in obj.privacy.stages] == [2.5, 1.5]


def test_formula_object_carries_its_context():
    def double(x):
        return 2 * x

    df = _frame()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = dps.dp_best_subset(dps.Formula("y ~ twice(x0) + x1 + x2", context={"twice": double}), df,
                                 eps=4.0, s=1, bounds=dps.Bounds(x=1.0, y=3.0), random_state=0)
        # without it, the caller's scope: here `double` itself
        res2 = dps.dp_best_subset("y ~ double(x0) + x1 + x2", df, eps=4.0, s=1,
                                  bounds=dps.Bounds(x=1.0, y=3.0), random_state=0)
    assert "twice(x0)" in res.candidates and "double(x0)" in res2.candidates


def test_diagnostics_moved_into_search_and_still_warn():
    with pytest.warns(dps.PrivacyLeakWarning, match=r"Search\(diagnostics=True\) returns NON-PRIVATE") as rec:
        res, diag = dps.dp_best_subset("y ~ .", _frame(), eps=4.0, s=2, bounds=(1.0, 3.0), random_state=3,
                                       search=dps.Search(diagnostics=True))
    assert diag.label.startswith("NON-PRIVATE") and len(res.support) == 2
    # the warning points at the caller's line, not into the package
    assert any(w.filename == __file__ for w in rec)


def test_low_utility_warning_points_at_the_call():
    with pytest.warns(dps.LowUtilityWarning) as rec:
        dps.dp_best_subset("y ~ .", _frame(40), eps=0.05, s=2, bounds=(1.0, 3.0), random_state=3)
    assert all(w.filename == __file__ for w in rec if issubclass(w.category, dps.LowUtilityWarning))


# ---------------------------------------------------------------------------- the CLI
@pytest.fixture()
def csv(tmp_path):
    path = tmp_path / "d.csv"
    _frame().to_csv(path, index=False)
    return str(path)


def _fit(csv, *extra):
    return ["fit", csv, "--formula", "y ~ .", "--eps", "4", "--s", "2", "--bounds", "1", "3", "--seed", "7",
            *extra]


def test_cli_takes_the_option_objects_with_the_same_names(csv, capsys):
    assert cli_main(_fit(csv, "--method", "top_r,R=8", "--ball", "r=0.9,lam=2", "--budget",
                         "select=2.5,refit=1.5", "--search", "enumeration,time_limit=60")) == 0
    out = capsys.readouterr().out
    res = _release(method=dps.Method("top_r", R=8), ball=dps.Ball(r=0.9, lam=2.0),
                   budget=dps.Budget(select=2.5, refit=1.5), search=dps.Search(route="enumeration", time_limit=60))
    assert "selection r = 0.9, lam = 2;" in out and "eps = 2.5" in out and "eps = 1.5" in out
    for name in res.support:
        assert re.search(rf"^{name}\s", out, re.M)
    # a dotted key sets an entry of a dict field; the refit's split and the inference's flag
    assert cli_main(_fit(csv, "--method", "top_r,screen.k=4,screen.share=0.4", "--refit", "split=true",
                         "--inference", "truth_in_ball=true")) == 0
    out = capsys.readouterr().out
    assert "screen" in out and "split" in out.lower() and "std err" in out


def test_cli_parses_fields_as_the_api_types_them():
    from dpsubset.interfaces.cli import _fields, _named
    assert _fields("r=0.5,lam=1") == {"r": 0.5, "lam": 1}
    assert _named("logistic,levels=control|case") == {"name": "logistic", "levels": ("control", "case")}
    assert _named("mistakes,gap_check=assume,R=50") == {"name": "mistakes", "gap_check": "assume", "R": 50}
    assert _fields("time_limit=inf,diagnostics=false") == {"time_limit": math.inf, "diagnostics": False}
    assert _named("top_r,screen.k=20,screen.share=0.3") == {"name": "top_r", "screen": {"k": 20, "share": 0.3}}


@pytest.mark.parametrize("flag", sorted(MOVED_FLAGS))
def test_cli_old_flags_name_their_new_place(csv, capsys, flag):
    with pytest.raises(SystemExit) as exc:
        cli_main(_fit(csv, flag, "1"))
    assert exc.value.code == 2
    assert f"argument {flag} moved: use {MOVED_FLAGS[flag]}" in capsys.readouterr().err


def test_cli_errors_name_the_flag_and_field(csv, capsys):
    with pytest.raises(SystemExit):
        cli_main(_fit(csv, "--ball", "r=-1"))
    err = capsys.readouterr().err
    assert "--ball r= must be a finite number > 0" in err and "Ball." not in err
    with pytest.raises(SystemExit):
        cli_main(_fit(csv, "--budget", "select=0.5,eps=1"))
    assert "budget: unknown field(s) ['eps']" in capsys.readouterr().err
