"""The dpsubset command line: main([...]) on a temporary CSV."""
import matplotlib

matplotlib.use("Agg")

import json  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from dpsubset.interfaces.cli import main  # noqa: E402
from dpsubset.studies.simulate import make_regression  # noqa: E402


@pytest.fixture(scope="module")
def csv(tmp_path_factory):
    df, _ = make_regression(300, 8, s=2, random_state=0, as_frame=True)
    path = tmp_path_factory.mktemp("cli") / "data.csv"
    df.to_csv(path, index=False)
    return str(path)


def test_fit_prints_summary_and_report(csv, capsys):
    assert main(["fit", csv, "--formula", "y ~ .", "--eps", "2", "--s", "2",
                 "--bounds", "0.5", "0.5", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "Privacy report" in out and "pure" in out and "x1" in out


@pytest.mark.parametrize("fmt,marker", [("latex", "\\begin{"), ("html", "<table")])
def test_fit_formats(csv, capsys, fmt, marker):
    main(["fit", csv, "--formula", "y ~ .", "--eps", "2", "--s", "2", "--bounds", "0.5", "0.5",
          "--format", fmt, "--method", "dp_sis", "--seed", "1"])
    assert marker in capsys.readouterr().out


def test_fit_method_option_and_same_seed(csv, capsys):
    args = ["fit", csv, "--formula", "y ~ .", "--eps", "2", "--s", "2", "--bounds", "0.5", "0.5",
            "--method", "samp_agg,blocks=5", "--seed", "3", "--no-refit"]
    main(args)
    first = capsys.readouterr().out
    main(args)
    assert "5 blocks" in first and capsys.readouterr().out == first


def test_fit_search_choice_gives_the_same_release(csv, capsys):
    base = ["fit", csv, "--formula", "y ~ .", "--eps", "2", "--s", "2", "--bounds", "0.5", "0.5",
            "--seed", "4", "--no-refit"]
    main(base)
    auto = capsys.readouterr().out
    main(base + ["--search", "outer_approximation,time_limit=60"])
    oa = capsys.readouterr().out

    def selected(out):
        return [line.split()[0] for line in out.splitlines() if "selected" in line.split()]

    assert len(selected(auto)) == 2 and selected(oa) == selected(auto)
    # The routes differ (enumeration: one solve; outer approximation: two), and the
    # output does not show it: the same release prints the same, certified, report.
    assert oa == auto
    assert "Certificates:            all certified" in auto
    assert "exact search: all solves certified optimal" in auto
    assert "closed (" not in auto and "exact solves" not in auto


def test_fit_without_bounds_warns_in_command_line_terms(csv, capsys):
    main(["fit", csv, "--formula", "y ~ .", "--eps", "2", "--s", "2", "--seed", "1"])
    out, err = capsys.readouterr()
    assert "void" in out.lower()
    line = next(ln for ln in err.splitlines() if "PrivacyLeakWarning" in ln)
    assert "taken from the data" in line and "--codebook FILE" in line and "--bounds BX BY" in line
    # no Python: no source file or line, no Bounds(...) or bounds=... code
    for python in ("Bounds(", "bounds=", ".py:", "warnings.warn", "pd.", "Categorical"):
        assert python not in err


@pytest.mark.parametrize("argv,msg", [
    (["fit", "{csv}", "--formula", "y ~ .", "--s", "2"], "--eps"),
    (["fit", "{csv}", "--formula", "y ~ .", "--eps", "-1", "--s", "2"], "eps"),
    (["fit", "{csv}", "--formula", "y ~ .", "--eps", "1", "--s", "2", "--method", "nope"], "method must be one of"),
    (["fit", "{csv}", "--formula", "y ~ .", "--eps", "1", "--s", "2", "--method", "samp_agg,blocks"],
     "--method"),
    (["fit", "missing.csv", "--formula", "y ~ .", "--eps", "1", "--s", "2"], "data"),
    (["study", "--trials", "0"], "trials"),
    (["fit", "{csv}", "--formula", "y ~ .", "--eps", "1", "--s", "2", "--search", "solver=gurobi_direct"],
     "only used with search='pyomo'"),
])
def test_errors_name_the_argument(csv, capsys, argv, msg):
    with pytest.raises(SystemExit) as exc:
        main([a.replace("{csv}", csv) for a in argv])
    assert exc.value.code == 2
    assert msg in capsys.readouterr().err


def test_study_table_csv_and_plot(tmp_path, capsys):
    out, fig = tmp_path / "r.csv", tmp_path / "f.png"
    assert main(["study", "--p", "12", "--s", "3", "--n", "300", "600", "--methods", "dp_sis",
                 "samp_agg", "--trials", "2", "--draws", "4", "--ball", "lam=30", "--out", str(out),
                 "--plot", str(fig), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "n(50%)" in text and "dp_sis" in text and "samp_agg" in text
    frame = pd.read_csv(out)
    assert len(frame) == 2 * 2 * 2 and fig.stat().st_size > 1000


# ---------------------------------------------------------------- CSV to model (issue 16, item 7)

@pytest.fixture(scope="module")
def clinic(tmp_path_factory):
    """A small 'own CSV': numeric columns, a categorical one and a yes/no outcome, with a codebook."""
    rng = np.random.default_rng(5)
    n = 400
    df = pd.DataFrame({"age": rng.uniform(20, 80, n).round(), "bmi": rng.uniform(18, 40, n).round(1),
                       "dose": rng.uniform(0, 10, n).round(2), "noise": rng.uniform(-1, 1, n),
                       "site": rng.choice(["north", "south", "east"], n),
                       "height": rng.uniform(150, 200, n).round()})
    df["chol"] = 150 + 1.2 * df["age"] + 8 * df["dose"] + rng.normal(0, 10, n)
    df["event"] = np.where(df["dose"] + rng.normal(0, 1, n) > 5, "yes", "no")
    root = tmp_path_factory.mktemp("clinic")
    df.to_csv(root / "clinic.csv", index=False)
    (root / "book.csv").write_text(
        "column,lo,hi,levels\nage,18,100,\nbmi,10,70,\ndose,0,10,\nnoise,-1,1,\nchol,100,400,\n"
        "height,100,220,\nsite,,,north|south|east|west\nevent,,,no|yes\n")
    (root / "book.json").write_text(json.dumps(
        [{"column": c, "lo": lo, "hi": hi} for c, lo, hi in
         [("age", 18, 100), ("bmi", 10, 70), ("dose", 0, 10), ("noise", -1, 1), ("chol", 100, 400)]]
        + [{"column": "site", "levels": ["north", "south", "east", "west"]},
           {"column": "event", "levels": ["no", "yes"]}]))
    return root


def _fit_args(root, *extra, formula="chol ~ age + bmi + dose + noise + site"):
    return ["fit", str(root / "clinic.csv"), "--formula", formula, "--eps", "8", "--s", "2",
            "--seed", "1", *extra]


@pytest.mark.parametrize("book", ["book.csv", "book.json"])
def test_codebook_gives_a_private_fit_without_warnings(clinic, capsys, book):
    assert main(_fit_args(clinic, "--codebook", str(clinic / book))) == 0
    out, err = capsys.readouterr()
    assert "Privacy report: pure" in out and "PrivacyLeakWarning" not in err
    assert "site[T.south]" in out or "site[T.south]" in _tidy(clinic, book)


def _tidy(root, book):
    path = root / f"tidy-{book}.csv"
    main(_fit_args(root, "--codebook", str(root / book), "--out", str(path)))
    return path.read_text()


def test_out_formats_by_suffix(clinic, capsys):
    for suffix, check in [(".csv", lambda t: t.startswith("term,estimate,selected")),
                          (".json", lambda t: json.loads(t)["privacy"]["guarantee"] == "pure"),
                          (".tex", lambda t: "\\begin{threeparttable}" in t),
                          (".md", lambda t: t.startswith("| ")),
                          (".html", lambda t: t.startswith("<table"))]:
        path = clinic / f"result{suffix}"
        assert main(_fit_args(clinic, "--codebook", str(clinic / "book.csv"), "--out", str(path))) == 0
        assert f"wrote {path}" in capsys.readouterr().out
        assert check(path.read_text()), suffix
    doc = json.loads((clinic / "result.json").read_text())
    assert doc["model"]["formula"].startswith("chol ~") and doc["glance"]["nobs"] == 400
    assert doc["bounds_unused"] == ["height"]          # a codebook row this formula does not use
    assert {r["term"] for r in doc["tidy"]} >= {"Intercept", "age", "dose"}


def test_markdown_output(clinic, capsys):
    main(_fit_args(clinic, "--codebook", str(clinic / "book.csv"), "--format", "markdown"))
    out = capsys.readouterr().out
    assert out.startswith("| ") and "|:---|" in out and "Privacy report" in out


def test_loss_keep_and_budget_split(clinic, capsys):
    main(_fit_args(clinic, "--codebook", str(clinic / "book.csv"), "--loss", "logistic",
                   "--keep", "age", "--budget", "select=6,refit=2",
                   "--out", str(clinic / "logit.json"),
                   formula="event ~ age + bmi + dose + noise"))
    out, err = capsys.readouterr()
    doc = json.loads((clinic / "logit.json").read_text())
    assert doc["glance"]["loss"] == "logistic" and doc["glance"]["eps_select"] == 6
    assert doc["glance"]["eps_refit"] == 2
    forced = {r["term"] for r in doc["tidy"] if r["forced"]}
    assert forced == {"Intercept", "age"}
    assert "PrivacyLeakWarning" not in err and "Two classes: event = 'no' coded -1" in out.replace("\n    ", " ")


def test_undeclared_levels_warn_in_command_line_terms(clinic, capsys):
    (clinic / "nolevels.csv").write_text("column,lo,hi\nage,18,100\nbmi,10,70\ndose,0,10\n"
                                         "noise,-1,1\nchol,100,400\n")
    main(_fit_args(clinic, "--codebook", str(clinic / "nolevels.csv")))
    err = capsys.readouterr().err
    line = next(ln for ln in err.splitlines() if "site" in ln)
    assert "list the levels of site in the codebook" in line and "C(site" not in line


@pytest.mark.parametrize("extra,msg", [
    (["--codebook", "{root}/missing.csv"], "--codebook: cannot read"),
    (["--codebook", "{root}/book.csv", "--bounds", "1", "1"], "either --codebook or --bounds"),
    (["--y-bounds", "0", "1"], "--y-bounds: only with --codebook"),
    (["--codebook", "{root}/book.csv", "--out", "{root}/x.pdf"], "--out"),
    (["--codebook", "{root}/bad.csv"], "lo < hi"),
    (["--codebook", "{root}/small.csv"], "row(s) with a value not among the 2 levels"),
    (["--codebook", "{root}/book.csv", "--loss", "nope"], "--loss"),
])
def test_cli_input_errors(clinic, capsys, extra, msg):
    (clinic / "bad.csv").write_text("column,lo,hi\nage,100,18\n")
    (clinic / "small.csv").write_text("column,lo,hi,levels\nsite,,,north|south\n")
    with pytest.raises(SystemExit) as exc:
        main(_fit_args(clinic, *[a.replace("{root}", str(clinic)) for a in extra]))
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert msg in err
    assert "east" not in err   # a value of the data is never printed


def test_response_levels_for_a_plus_minus_one_response(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (400, 4))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=400) > 0, 1, -1)
    path = tmp_path / "pm.csv"
    pd.DataFrame(np.column_stack([y, X]), columns=["y", "a", "b", "c", "d"]).astype(
        {"y": int}).to_csv(path, index=False)
    args = ["fit", str(path), "--formula", "y ~ a + b + c + d", "--eps", "4", "--s", "1",
            "--bounds", "1", "1", "--loss", "logistic", "--seed", "2", "--no-refit"]
    with pytest.raises(SystemExit) as exc:  # the coding is not guessed from the values
        main(args)
    assert exc.value.code == 2 and "--loss logistic,levels=-1|1" in capsys.readouterr().err
    assert main(args[:-5] + ["--loss", "logistic,levels=-1|1", "--seed", "2", "--no-refit"]) == 0
    out = capsys.readouterr().out.replace("\n    ", " ")
    assert "Two classes: y = -1 coded -1, 1 coded +1" in out


# ---------------------------------------------------------------- issue 28, item 7

def test_python_dash_m_dpsubset_runs_the_command_line(csv):
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, "-m", "dpsubset", "fit", csv, "--formula", "y ~ .", "--eps", "2",
                           "--s", "2", "--bounds", "0.5", "0.5", "--seed", "1"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Privacy report" in proc.stdout
    usage = subprocess.run([sys.executable, "-m", "dpsubset", "--help"], capture_output=True, text=True,
                           timeout=120)
    assert usage.returncode == 0 and usage.stdout.startswith("usage: dpsubset")


def test_several_out_files_come_from_one_release(clinic, capsys):
    """No --seed: two releases would differ, so equal numbers in the files show one release."""
    outs = [clinic / "one.csv", clinic / "one.json", clinic / "one.tex", clinic / "one.txt"]
    args = ["fit", str(clinic / "clinic.csv"), "--formula", "chol ~ age + bmi + dose + noise + site",
            "--eps", "8", "--s", "2", "--codebook", str(clinic / "book.csv")]
    assert main(args + ["--out", str(outs[0]), str(outs[1]), "--out", str(outs[2]), str(outs[3])]) == 0
    out = capsys.readouterr().out
    assert all(f"wrote {p}" in out for p in outs)
    tidy = pd.read_csv(outs[0])
    doc = json.loads(outs[1].read_text())
    assert [r["estimate"] for r in doc["tidy"]] == pytest.approx(tidy["estimate"].tolist(), nan_ok=True)
    text = outs[3].read_text()
    for term, est in zip(tidy["term"], tidy["estimate"]):
        if tidy.set_index("term").loc[term, "selected"] or term == "Intercept":
            assert dps_num(est) in text and dps_num(est).lstrip("-") in outs[2].read_text()
    with pytest.raises(SystemExit) as exc:    # checked before the fit: nothing is released
        main(args + ["--out", str(outs[0]), str(clinic / "x.pdf")])
    assert exc.value.code == 2 and "x.pdf" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(args + ["--out", str(outs[0]), str(outs[0])])
    assert "given twice" in capsys.readouterr().err


def dps_num(x):
    from dpsubset.results.summary import _num
    return _num(x)


def test_codebook_levels_match_the_csv_readers_numbers(tmp_path, capsys):
    """A level 6 in the codebook matches a value 6.0 of a column the CSV reader reads as numbers."""
    rng = np.random.default_rng(3)
    n = 300
    cyl = rng.choice([4.0, 6.0, 8.0], n)
    df = pd.DataFrame({"cyl": cyl, "wt": rng.uniform(1.5, 5.5, n)})
    df["mpg"] = 40 - 3 * df["wt"] - 0.5 * df["cyl"] + rng.normal(0, 1, n)
    df.to_csv(tmp_path / "cars.csv", index=False)     # written as 4.0, 6.0, 8.0: read as floats
    assert "6.0" in (tmp_path / "cars.csv").read_text()
    assert pd.read_csv(tmp_path / "cars.csv")["cyl"].dtype == float
    (tmp_path / "book.csv").write_text("column,lo,hi,levels\nwt,1,6,\nmpg,5,50,\ncyl,,,4|6|8\n")
    args = ["fit", str(tmp_path / "cars.csv"), "--formula", "mpg ~ wt + cyl", "--eps", "8", "--s", "1",
            "--codebook", str(tmp_path / "book.csv"), "--seed", "1", "--out", str(tmp_path / "t.csv")]
    capsys.readouterr()
    main(args)
    out, err = capsys.readouterr()
    assert "not among the 3 levels" not in err
    terms = pd.read_csv(tmp_path / "t.csv")["term"].tolist()
    assert "cyl[T.6]" in terms and "cyl[T.8]" in terms     # the codebook's spelling of the levels
    # a value matching no level is still refused, by count, never by value
    (tmp_path / "book2.csv").write_text("column,lo,hi,levels\nwt,1,6,\nmpg,5,50,\ncyl,,,4|6\n")
    with pytest.raises(SystemExit):
        main(args[:-4] + ["--codebook", str(tmp_path / "book2.csv")])
    err = capsys.readouterr().err
    assert "row(s) with a value not among the 2 levels" in err and "8.0" not in err


def test_format_latex_prints_a_table_that_compiles_with_a_seed(csv, capsys, tmp_path):
    """--format latex: the table alone (no plain-text report after it), compilable with --seed."""
    import shutil
    import subprocess
    from dpsubset.results.latex import LATEX_PACKAGES
    assert main(["fit", csv, "--formula", "y ~ .", "--eps", "2", "--s", "2", "--bounds", "0.5", "0.5",
                 "--seed", "1", "--format", "latex", "--out", str(tmp_path / "r.json")]) == 0
    out, err = capsys.readouterr()
    assert out.lstrip().startswith("% needs in the preamble") and out.rstrip().endswith(r"\end{table}")
    assert "Privacy report" not in out and "wrote" not in out and "wrote" in err
    assert "random\\_state" in out     # the seeded note, escaped
    exe = shutil.which("pdflatex")
    if exe is None:
        pytest.skip("pdflatex not installed")
    (tmp_path / "doc.tex").write_text("\\documentclass{article}\n\\usepackage{%s}\n\\begin{document}\n%s\n"
                                      "\\end{document}\n" % (",".join(LATEX_PACKAGES), out))
    proc = subprocess.run([exe, "-interaction=nonstopmode", "-halt-on-error", "doc.tex"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    log = (tmp_path / "doc.log").read_text(errors="replace")
    assert proc.returncode == 0, log[-2000:]
    assert "Missing $" not in log and "Overfull" not in log


def test_a_time_out_prints_a_clean_message_in_command_line_terms(tmp_path, capsys):
    from dpsubset.studies.simulate import make_regression
    df, _ = make_regression(300, 40, s=5, random_state=0, as_frame=True)
    df.to_csv(tmp_path / "d.csv", index=False)
    with pytest.raises(SystemExit) as exc:
        main(["fit", str(tmp_path / "d.csv"), "--formula", "y ~ .", "--eps", "2", "--s", "5",
              "--bounds", "0.5", "0.5", "--search", "enumeration,time_limit=0.001"])
    assert exc.value.code == 3
    out, err = capsys.readouterr()
    assert err.startswith("dpsubset fit: ") and "nothing was released" in err
    assert "--search time_limit=0.001 s" in err and "a larger --search time_limit=" in err
    assert "--search time_limit=inf" in err
    for python in ("Traceback", "time_limit =", "math.inf", "SearchTimeout(", ".py", "Search("):
        assert python not in err, python
    assert out == ""


def test_cli_module_has_no_unused_import():
    pyflakes = pytest.importorskip("pyflakes.api")
    import io
    import pathlib

    from pyflakes.reporter import Reporter
    import dpsubset.interfaces.cli as cli
    buf = io.StringIO()
    pyflakes.check(pathlib.Path(cli.__file__).read_text(), cli.__file__, Reporter(buf, buf))
    assert buf.getvalue() == ""


def test_fit_with_inference_prints_intervals_and_the_stage(csv, capsys):
    """--inference (issue 26 in the CLI): the summary has the private std err and interval
    columns, and the report lists the inference stage with its eps."""
    assert main(["fit", csv, "--formula", "y ~ .", "--eps", "20", "--s", "2", "--bounds", "0.5", "0.5",
                 "--inference", "--budget", "inference=4", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "std err" in out and "0.975" in out
    assert "inference" in out.lower()
    # without the flag the summary says how to get them
    main(["fit", csv, "--formula", "y ~ .", "--eps", "20", "--s", "2", "--bounds", "0.5", "0.5", "--seed", "1"])
    assert "std err" not in capsys.readouterr().out


def test_fit_split_and_an_eps_inference_without_inference_is_refused(csv, capsys):
    assert main(["fit", csv, "--formula", "y ~ .", "--eps", "20", "--s", "2", "--bounds", "0.5", "0.5",
                 "--refit", "split=true", "--seed", "1"]) == 0
    assert "Privacy report" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["fit", csv, "--formula", "y ~ .", "--eps", "20", "--s", "2", "--bounds", "0.5", "0.5",
              "--budget", "inference=4", "--seed", "1"])
    assert "inference" in capsys.readouterr().err


def test_timeout_advice_in_the_command_line_spelling():
    from dpsubset.interfaces.cli import cli_message
    from dpsubset.search.limits import timeout_advice

    text = cli_message(timeout_advice(12, 3, search="auto", r=1.0, lam=2.0, time_limit=5.0))
    assert "--search enumeration" in text and "search='" not in text
    assert "--search time_limit=" in text and "--ball r= (now 1)" in text and "--ball lam= (now 2)" in text


# ---------------------------------------------------------------- issue 39: short errors, intervals

def _err_lines(capsys):
    return [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]


@pytest.mark.parametrize("extra,msg", [
    (["--formula", "y ~ nosuchcolumn", "--bounds", "0.5", "0.5"], "nosuchcolumn"),
    (["--formula", "y ~ .", "--bounds", "0.5", "0.5", "--s", "50"], "s"),
    (["--formula", "y ~ .", "--bounds", "0.5", "0.5", "--keep", "zz"], "zz"),
])
def test_a_data_error_is_short_and_has_no_usage_text(csv, capsys, extra, msg):
    argv = ["fit", csv, "--eps", "2", "--s", "2", "--seed", "1"] + extra
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    lines = _err_lines(capsys)
    assert 1 <= len(lines) <= 5, lines
    assert not any(ln.startswith("usage:") or ln.lstrip().startswith("[--") for ln in lines), lines
    assert lines[0].startswith("dpsubset fit: error: ") and msg in lines[0]


def test_the_csv_output_carries_the_private_intervals(csv, tmp_path, capsys):
    out = tmp_path / "t.csv"
    assert main(["fit", csv, "--formula", "y ~ .", "--eps", "8", "--s", "2", "--bounds", "0.5", "0.5",
                 "--inference", "--seed", "1", "--out", str(out)]) == 0
    tidy = pd.read_csv(out)
    assert {"std.error", "conf.low", "conf.high"} <= set(tidy.columns)
    sel = tidy[tidy["selected"] | tidy["forced"]]
    assert (sel["conf.low"] <= sel["estimate"]).all() and (sel["estimate"] <= sel["conf.high"]).all()
    plain = tmp_path / "p.csv"
    main(["fit", csv, "--formula", "y ~ .", "--eps", "8", "--s", "2", "--bounds", "0.5", "0.5", "--seed", "1",
          "--out", str(plain)])
    assert "conf.low" not in pd.read_csv(plain).columns      # none released: none written


def test_repeated_header_names_are_refused_as_the_api_refuses_them(tmp_path, capsys):
    path = tmp_path / "dup.csv"
    path.write_text("y,a,b,a\n" + "\n".join(f"{i % 3 - 1},{(i % 5) / 5},{(i % 7) / 7},{(i % 2) / 2}"
                                            for i in range(60)) + "\n")
    with pytest.raises(SystemExit) as exc:
        main(["fit", str(path), "--formula", "y ~ .", "--eps", "2", "--s", "1", "--bounds", "1", "1"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "['a'] more than once" in err and "a.1" not in err and "usage:" not in err


def test_a_bad_response_interval_in_the_codebook_is_the_codebooks(csv, tmp_path, capsys):
    book = tmp_path / "book.csv"
    cols = [c for c in pd.read_csv(csv, nrows=1).columns if c != "y"]
    book.write_text("column,lo,hi\n" + "".join(f"{c},-1,1\n" for c in cols) + "y,0,1e300\n")
    with pytest.raises(SystemExit):
        main(["fit", csv, "--formula", "y ~ .", "--eps", "2", "--s", "1", "--codebook", str(book)])
    err = capsys.readouterr().err
    assert "--y-bounds" not in err
    assert "argument --codebook" in err and "column 'y'" in err
    book.write_text("column,lo,hi\n" + "".join(f"{c},-1,1\n" for c in cols))
    with pytest.raises(SystemExit):
        main(["fit", csv, "--formula", "y ~ .", "--eps", "2", "--s", "1", "--codebook", str(book),
              "--y-bounds", "2", "1"])
    assert "argument --y-bounds" in capsys.readouterr().err
