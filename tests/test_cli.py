"""The dpsubset command line: main([...]) on a temporary CSV."""
import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from dpsubset.cli import main  # noqa: E402
from dpsubset.simulate import make_regression  # noqa: E402


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
            "--method", "samp_agg", "--option", "blocks=5", "--seed", "3", "--no-refit"]
    main(args)
    first = capsys.readouterr().out
    main(args)
    assert "5 blocks" in first and capsys.readouterr().out == first


def test_fit_search_choice_gives_the_same_release(csv, capsys):
    base = ["fit", csv, "--formula", "y ~ .", "--eps", "2", "--s", "2", "--bounds", "0.5", "0.5",
            "--seed", "4", "--no-refit"]
    main(base)
    auto = capsys.readouterr().out
    main(base + ["--search", "outer_approximation", "--time-limit", "60"])
    oa = capsys.readouterr().out

    def selected(out):
        return [line.split()[0] for line in out.splitlines() if "selected" in line.split()]

    assert len(selected(auto)) == 2 and selected(oa) == selected(auto)
    assert "Certificates:           all closed (1)" in auto  # enumeration
    assert "all closed (2)" in oa  # the two solves of the outer-approximation route


def test_fit_without_bounds_warns(csv, capsys):
    with pytest.warns(Warning, match="bound"):
        main(["fit", csv, "--formula", "y ~ .", "--eps", "2", "--s", "2", "--seed", "1"])
    assert "void" in capsys.readouterr().out.lower()


@pytest.mark.parametrize("argv,msg", [
    (["fit", "{csv}", "--formula", "y ~ .", "--s", "2"], "--eps"),
    (["fit", "{csv}", "--formula", "y ~ .", "--eps", "-1", "--s", "2"], "eps"),
    (["fit", "{csv}", "--formula", "y ~ .", "--eps", "1", "--s", "2", "--method", "nope"], "--method"),
    (["fit", "{csv}", "--formula", "y ~ .", "--eps", "1", "--s", "2", "--option", "blocks"], "--option"),
    (["fit", "missing.csv", "--formula", "y ~ .", "--eps", "1", "--s", "2"], "data"),
    (["study", "--trials", "0"], "trials"),
    (["fit", "{csv}", "--formula", "y ~ .", "--eps", "1", "--s", "2", "--solver", "gurobi_direct"],
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
                 "samp_agg", "--trials", "2", "--draws", "4", "--lam", "30", "--out", str(out),
                 "--plot", str(fig), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "n(50%)" in text and "dp_sis" in text and "samp_agg" in text
    frame = pd.read_csv(out)
    assert len(frame) == 2 * 2 * 2 and fig.stat().st_size > 1000
