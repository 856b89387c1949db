"""The ``dpsubset`` command line.

    dpsubset fit data.csv --formula "y ~ ." --eps 1 --s 5 --codebook book.csv
                 [--method NAME[,KEY=VALUE...]] [--loss NAME[,KEY=VALUE...]] [--keep COL ...]
                 [--budget KEY=VALUE[,...]] [--ball KEY=VALUE[,...]] [--search [ROUTE,]KEY=VALUE...]
                 [--no-refit | --refit split=true] [--inference [truth_in_ball=true]] [--seed 1]
                 [--format text|latex|html|markdown] [--out result.csv|.json|.tex|.md|.html|.txt ...]
    dpsubset fit data.csv --formula "y ~ ." --eps 1 --s 5 --bounds 0.5 0.5   # the paper's scalar bounds
    dpsubset study --p 100 --n 1000 2000 --methods top_r mistakes --trials 3 --draws 50
                   [--ball r=1.1,lam=120] [--out results.csv] [--plot fig.png]

The option objects of :func:`dpsubset.dp_best_subset` have the same names here, their
fields as ``KEY=VALUE`` pairs separated by commas (:mod:`dpsubset.settings`):
``--budget select=1,refit=0.5``, ``--ball r=0.5,lam=1``, ``--search enumeration,time_limit=60``,
``--method mistakes,gap_check=assume,R=50``, ``--loss huber,h=0.3``,
``--loss logistic,levels=control|case`` (a pair separated by ``|``), ``--refit split=true``,
``--inference truth_in_ball=true``; a dotted key sets an entry of a dict field
(``--method top_r,screen.k=20,screen.share=0.3``). A flag of an older version
(``--r``, ``--eps-select``, ``--time-limit``, ...) is an error that names its new place.

``fit`` prints the summary of :func:`dpsubset.dp_best_subset` and its privacy
report (``--format latex`` and ``html``: the table alone, ready to include), and
with ``--out`` writes the result to one or more files, all of the same release
(one call, one budget spent), the format from each file's suffix (CSV: one row
per term, as ``tidy()``; JSON: the model, ``glance()``, ``tidy()`` and the
privacy report; ``.tex``/``.md``/``.html``/``.txt``: the table of
:func:`dpsubset.summary_table`). ``python -m dpsubset`` is the same command.
The public bounds come from a codebook file (``--codebook``, read by
:func:`dpsubset.design.codebook.read_codebook`): a CSV with the columns ``column, lo, hi,
levels`` (``levels``: the categories of a categorical column, separated by
``|``), or JSON records with the same fields; entries the formula does not use
are fine. Levels are compared with a column as the CSV reader types it: a level
``6`` matches the value ``6.0`` of a column read as numbers. ``study`` runs :func:`dpsubset.studies.experiments.recovery_study` and prints
the recovery table.

Warnings are printed as one line each on stderr, in the command line's terms
(which option fixes them), never pointing at Python source. An error in the data,
the codebook or the settings is printed as at most :data:`MAX_ERROR_LINES` lines on
stderr, without the usage text (that is for a command line argparse cannot read).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import warnings

from ..losses import DEFAULT_LOSS

__all__ = ["main", "build_parser"]


def _value(text):
    """A field's value from the command line: int, float (``inf`` too), true/false, a pair
    ``a|b`` (the classes of a loss), or the text itself."""
    if "|" in text:
        return tuple(_level(v) for v in text.split("|"))
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def _fields(text, named=False):
    """``[NAME,]KEY=VALUE,...`` as a dict of an option object's fields (``name``: the leading
    word without ``=``, where ``named``); a dotted key ``screen.k=20`` sets an entry of a dict."""
    out = {}
    for i, part in enumerate(p.strip() for p in text.split(",")):
        if not part:
            continue
        if "=" not in part:
            if named and i == 0:
                out["name"] = part
                continue
            raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {part!r}")
        key, value = (x.strip() for x in part.split("=", 1))
        head, _, sub = key.partition(".")
        if sub:
            out.setdefault(head, {})[sub] = _value(value)
        else:
            out[key] = _value(value)
    return out


def _named(text):
    return _fields(text, named=True)


#: Flags of an older version -> their new place (the Python API's MOVED, in the CLI's terms).
MOVED_FLAGS = {
    "--r": "--ball r=VALUE", "--lam": "--ball lam=VALUE", "--r-select": "--ball r_select=VALUE",
    "--r-refit": "--ball r_refit=VALUE", "--lam-select": "--ball lam_select=VALUE",
    "--lam-refit": "--ball lam_refit=VALUE", "--eps-select": "--budget select=VALUE",
    "--eps-refit": "--budget refit=VALUE", "--eps-inference": "--budget inference=VALUE",
    "--option": "--method NAME,KEY=VALUE", "--response-levels": "--loss logistic,levels=NEG|POS",
    "--split": "--refit split=true", "--truth-in-ball": "--inference truth_in_ball=true",
    "--solver": "--search pyomo,solver=NAME", "--time-limit": "--search time_limit=SECONDS",
    "--memory-limit": "--search memory_limit=BYTES",
}


class _Moved(argparse.Action):
    """An old flag: an error naming its new place (the flag is hidden from --help)."""

    def __call__(self, parser, namespace, values, option_string=None):
        parser.error(f"argument {option_string} moved: use {MOVED_FLAGS[option_string]}")


def build_parser():
    from ..losses import LOSSES
    from ..selection.base import METHODS

    ap = argparse.ArgumentParser(prog="dpsubset",
                                 description="Differentially private best subset selection.")
    sub = ap.add_subparsers(dest="command", required=True)

    fit = sub.add_parser("fit", help="private selection and refit on a CSV file")
    fit.add_argument("data", help="CSV file with a header row")
    fit.add_argument("--formula", required=True, help='e.g. "y ~ ." (formulaic syntax)')
    fit.add_argument("--eps", type=float, required=True, help="total privacy budget")
    fit.add_argument("--s", type=int, required=True, help="number of columns to select")
    fit.add_argument("--codebook", metavar="FILE",
                     help="public bounds and levels per column: a CSV with the columns column,lo,hi,levels "
                          "(levels separated by |) or JSON records with those fields; the response's "
                          "row bounds the response")
    fit.add_argument("--bounds", type=float, nargs=2, metavar=("BX", "BY"),
                     help="scalar public bounds (the paper's setting): every column clipped to [-BX, BX], "
                          "the response to [-BY, BY]; without --codebook or --bounds the bounds come from "
                          "the data and the guarantee is void")
    fit.add_argument("--y-bounds", type=float, nargs=2, metavar=("LO", "HI"),
                     help="with --codebook: the response's interval, if the codebook has no row for it")
    fit.add_argument("--loss", default=DEFAULT_LOSS, type=_named, metavar="NAME[,KEY=VALUE...]",
                     help=f"loss of the scores and the refit, one of {', '.join(LOSSES)}; logistic and "
                          "hinge for two classes. Fields: huber: h=; hinge: h=, levels=; logistic: levels= "
                          "(the classes coded -1 and +1, e.g. levels=control|case; public)")
    fit.add_argument("--keep", nargs="+", action="extend", default=[], metavar="COL",
                     help="columns or terms always in the model (repeatable)")
    fit.add_argument("--method", default="top_r", type=_named, metavar="NAME[,KEY=VALUE...]",
                     help=f"the private selection, one of {', '.join(sorted(METHODS))}, with its options "
                          "(R=, gap_check=, screen=, and each method's own, e.g. samp_agg,blocks=20)")
    fit.add_argument("--budget", type=_fields, default=None, metavar="KEY=VALUE[,...]",
                     help="how eps is shared: select=, refit=, inference=, gap_test=, delta=, refit_delta= "
                          "(default: half of what the centring and the inference leave to each stage)")
    fit.add_argument("--ball", type=_fields, default=None, metavar="KEY=VALUE[,...]",
                     help="radius and ridge of each stage: r= (both stages), lam= (the selection's ridge), "
                          "r_select=, r_refit=, lam_select=, lam_refit= (default A / sqrt(B_s): A = b_y, "
                          "grown with n eps above 20,000; logistic and hinge: A = 2 to select, 6 to refit; "
                          "docs/guide/choosing-settings.md)")
    fit.add_argument("--search", type=_named, default=None, metavar="[ROUTE,]KEY=VALUE...",
                     help="the exact search: its route (auto, enumeration, branch_and_bound, "
                          "outer_approximation, pyomo, scip), time_limit= (seconds for the whole call, "
                          "default 600; inf for none; past it nothing is released, and whether it is "
                          "reached depends on the data: do not publish a timeout), memory_limit= (bytes, "
                          "default half the machine's memory), solver= (with pyomo)")
    fit.add_argument("--no-refit", action="store_true", help="release the support only")
    fit.add_argument("--refit", type=_fields, default=None, metavar="split=true",
                     help="the refit's settings: split=true selects on one random half of the rows and "
                          "refits on the other")
    fit.add_argument("--inference", nargs="?", const={}, type=_fields, default=None,
                     metavar="truth_in_ball=true",
                     help="also release private standard errors, intervals and the selection confidence "
                          "(docs/guide/inference.md); spends --budget inference= of --eps (default 0.2 eps). "
                          "truth_in_ball=true: you know from outside the data that the true coefficients "
                          "lie inside the refit's ball")
    for flag in MOVED_FLAGS:
        fit.add_argument(flag, action=_Moved, nargs="?", help=argparse.SUPPRESS)
    fit.add_argument("--seed", type=int, default=None,
                     help="seed for a reproducible run; the release is then private only while "
                          "the seed stays secret (default: fresh OS randomness)")
    fit.add_argument("--format", choices=("text", "latex", "html", "markdown"), default="text",
                     help="what is printed: the summary and the privacy report (text), a Markdown table "
                          "and the report (markdown), or the table alone (latex: a table float to "
                          "\\input; html: a <table>)")
    fit.add_argument("--out", metavar="FILE", nargs="+", action="extend", default=[],
                     help="also write the result, to one or more files (repeatable), all from the same "
                          "release: .csv (one row per term), .json (model, glance, tidy, privacy report), "
                          ".tex, .md, .html or .txt (the summary table)")

    st = sub.add_parser("study", help="support-recovery study on the paper's simulated data")
    st.add_argument("--p", type=int, default=100)
    st.add_argument("--s", type=int, default=5)
    st.add_argument("--n", type=int, nargs="+", default=[1000, 2000, 4000, 8000])
    st.add_argument("--methods", nargs="+", default=["top_r", "mistakes"], choices=sorted(METHODS))
    st.add_argument("--trials", type=int, default=10)
    st.add_argument("--draws", type=int, default=50)
    st.add_argument("--eps", type=float, default=1.0)
    st.add_argument("--snr", type=float, default=5.0)
    st.add_argument("--rho", type=float, default=0.1)
    st.add_argument("--ball", type=_fields, default=None, metavar="r=VALUE,lam=VALUE",
                    help="the scores' radius and ridge (default the paper's r=1.1,lam=120; r=default,"
                         "lam=default: the package's defaults)")
    for flag in ("--r", "--lam"):
        st.add_argument(flag, action=_Moved, nargs="?", help=argparse.SUPPRESS)
    st.add_argument("--bounds", type=float, nargs=2, default=(0.5, 0.5), metavar=("BX", "BY"))
    st.add_argument("--jobs", type=int, default=1, help="joblib workers")
    st.add_argument("--seed", type=int, default=0)
    st.add_argument("--out", help="write the tidy frame to this CSV file")
    st.add_argument("--plot", help="write the Figure-1 style plot to this image file")
    st.add_argument("--quiet", action="store_true", help="no progress bar")
    return ap


OUT_SUFFIXES = (".csv", ".json", ".tex", ".md", ".html", ".htm", ".txt")
#: Lines an error takes on stderr at most (the message first, then one line of help).
MAX_ERROR_LINES = 5


def _fail(parser, message, status=2):
    """Stop with a short error on stderr: no usage text, at most MAX_ERROR_LINES lines."""
    lines = [ln for ln in cli_message(message).strip().splitlines() if ln.strip()]
    if len(lines) > MAX_ERROR_LINES - 1:
        lines = lines[:MAX_ERROR_LINES - 2] + ["(message shortened)"]
    lines.append(f"(see {parser.prog} --help)")
    lines[0] = f"{parser.prog}: error: {lines[0]}"
    parser.exit(status, "\n".join(lines) + "\n")


def _csv_header(path):
    """The header row of a CSV file as written (pandas renames repeats to 'x.1')."""
    import csv
    with open(path, newline="", encoding="utf-8-sig") as fh:
        return next(csv.reader(fh), [])

# Python-flavoured fixes in the package's messages, and what they are on the command line.
_CLI_FIXES = [
    (re.compile(r"pass bounds=\.\.\. to fix.*$", re.S),
     "give public bounds: --codebook FILE (a CSV with the columns column,lo,hi,levels, limits known in "
     "advance) or --bounds BX BY"),
    (re.compile(r"fix: write C\((\w+), levels=\[\.\.\.\]\).*likewise for the others.*$", re.S),
     r"fix: list the levels of each of these columns in the codebook (--codebook, column 'levels', "
     r"separated by |)"),
    (re.compile(r"fix: write C\((\w+), levels=\[\.\.\.\]\).*$", re.S),
     r"fix: list the levels of \1 in the codebook (--codebook, column 'levels', separated by |)"),
    (re.compile(r"Remove or impute them first, e\.g\..*$", re.S),
     "Remove or impute those rows in the CSV first (without looking at the other rows' values)."),
    (re.compile(r"give public bounds and \(explicit levels\)"), "give a codebook"),
    # the time-out's advice names the arguments of dp_best_subset
    (re.compile(r"\btime_limit = "), "--search time_limit="),
    (re.compile(r"a larger time_limit \(now"), "a larger --search time_limit= (now"),
    (re.compile(r"; math\.inf for none"), "; --search time_limit=inf for none"),
    (re.compile(r"(?<![.\w])memory_limit\b"), "--search memory_limit="),
    (re.compile(r"a larger r \(now"), "a larger --ball r= (now"),
    (re.compile(r"a larger lam \(now"), "a larger --ball lam= (now"),
    (re.compile(r"a smaller s \(now"), "a smaller --s (now"),
    (re.compile(r"search='enumeration'"), "--search enumeration"),
    # the option objects' fields (dpsubset.settings) are the same names after their flag
    (re.compile(r"\b(Budget|Ball|Search|Refit|Inference)\.(\w+)"), lambda m: f"--{m[1].lower()} {m[2]}="),
    (re.compile(r"\b(Budget|Ball|Search|Refit|Inference)\((\w+)=\.\.\.\)"),
     lambda m: f"--{m[1].lower()} {m[2]}=..."),
    (re.compile(r"\bMethod\.(\w+)"), r"--method NAME,\1="),
    (re.compile(r"^(loss|method) must be one of"), r"--\1 must be one of"),
    (re.compile(r"\b(?:loss=)?(Logistic|Hinge)\(levels=\(([^()]*)\)\)"), lambda m: f"--loss {m[1].lower()},levels="
     + ("NEG|POS" if "coded" in m[2] else "|".join(x.strip().strip("'") for x in m[2].split(",")))),
    (re.compile(r"\b(Hinge|Logistic)\(levels=\.\.\.\)"), lambda m: f"--loss {m[1].lower()},levels=..."),
    (re.compile(r"\b(Huber|Hinge|Logistic)\.(\w+)"), lambda m: f"--loss {m[1].lower()},{m[2]}="),
]


def cli_message(text):
    """A package message in the command line's terms (no Python code, no source lines)."""
    text = str(text)
    for pattern, repl in _CLI_FIXES:
        text = pattern.sub(repl, text)
    return text


def _show_warning(message, category, filename, lineno, file=None, line=None):
    # one line per warning, no file name or source line: the user did not write Python
    print(f"dpsubset: {category.__name__}: {cli_message(message)}", file=file or sys.stderr)


def _read_inputs(args, parser):
    import pandas as pd

    from ..design.codebook import Bounds, apply_levels, read_codebook

    try:
        header = _csv_header(args.data)
        data = pd.read_csv(args.data)
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        _fail(parser, f"argument data: cannot read {args.data!r}: {exc}")
    # the Python API refuses repeated column names; pandas would rename them silently
    dup = sorted({c for c in header if header.count(c) > 1})
    if dup:
        _fail(parser, f"argument data: the header of {args.data!r} names the column(s) {dup} more than once; "
                      "give every column a distinct name")
    if args.codebook and args.bounds:
        parser.error("argument --bounds: give either --codebook or --bounds, not both")
    if args.y_bounds and not args.codebook:
        parser.error("argument --y-bounds: only with --codebook (with --bounds, BY bounds the response)")
    bounds = None if args.bounds is None else tuple(args.bounds)
    if args.codebook:
        try:
            book = read_codebook(args.codebook)
        except OSError as exc:
            _fail(parser, f"argument --codebook: cannot read {args.codebook!r}: {exc}")
        except ValueError as exc:
            _fail(parser, f"argument --codebook: {exc}")
        try:
            data = apply_levels(_as_read(data, book.levels), book.levels)
        except ValueError as exc:
            _fail(parser, f"argument --codebook: {exc}")
        if args.y_bounds is not None:   # checked alone, so that its error names it and only it
            try:
                Bounds(y=tuple(args.y_bounds))
            except (TypeError, ValueError) as exc:
                _fail(parser, f"argument --y-bounds: {exc}")
        try:
            bounds = Bounds(x=dict(book.bounds), y=None if args.y_bounds is None else tuple(args.y_bounds))
        except (TypeError, ValueError) as exc:   # a row of the codebook (the response's too)
            _fail(parser, "argument --codebook: " + re.sub(r"bounds x\['([^']+)'\]",
                                                           rf"codebook {args.codebook!r}, column '\1'", str(exc)))
    for path in args.out:   # all checked before the fit: a release is not made twice
        if os.path.splitext(path)[1].lower() not in OUT_SUFFIXES:
            _fail(parser, f"argument --out: {path!r} must end in one of {', '.join(OUT_SUFFIXES)}")
    dup = sorted({p for p in args.out if args.out.count(p) > 1})
    if dup:
        _fail(parser, f"argument --out: {dup} given twice; name each file once")
    return data, bounds


def _as_read(data, levels):
    """Numeric and true/false columns with codebook levels, recoded to the levels' spelling.

    The CSV reader types a column: ``6`` in a column that also holds ``6.5`` (or an
    empty cell) is read as the number 6.0, whose text ``"6.0"`` is not the level
    ``6``. Each level is typed as the reader types a value (:func:`_level`) and
    matched by value, so ``6`` matches 6.0 and ``true`` matches True; a value that
    matches no level is left as it is, for :func:`apply_levels` to count.
    """
    import pandas as pd

    data = data.copy(deep=False)
    for col, lev in levels.items():
        if col not in data.columns or not (pd.api.types.is_numeric_dtype(data[col])
                                           or pd.api.types.is_bool_dtype(data[col])):
            continue
        spelling = {}
        for text in lev:
            spelling.setdefault(_level(text), text)   # 6 and 6.0 hash alike: one key
        data[col] = data[col].astype(object).map(lambda v: spelling.get(v, v) if pd.notna(v) else v)
    return data


def _write_out(res, path):
    from ..results.tables import summary_table

    ext = os.path.splitext(path)[1].lower()
    if ext == ".csv":
        # with --inference, broom's conf.low and conf.high (private 95 % intervals) too
        res.tidy(conf_int=res.inference is not None).to_csv(path, index=False)
    elif ext == ".json":
        rep = res.privacy
        doc = dict(model={k: (list(v) if isinstance(v, tuple) else v)
                          for k, v in ((k, getattr(res.model, k)) for k in res.model.keys())},
                   glance=json.loads(res.glance().to_json(orient="records"))[0],
                   tidy=json.loads(res.tidy().to_json(orient="records")),
                   # public fields only: no per-solve list (it depends on the data)
                   privacy=dict(guarantee=rep.guarantee, statement=rep.statement, eps=rep.eps,
                                delta=rep.delta, stages=[dict(st) for st in rep.stages],
                                neighbours=rep.neighbours, exact_search=rep.exact_search,
                                certified=rep.all_certificates_closed),
                   bounds_derived={k: list(v) for k, v in res.bounds_derived.items()},
                   bounds_unused=res.bounds_unused)
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=2, default=str)
            fh.write("\n")
    else:
        summary_table(res, file=path)


def _level(text):
    """A class label from the command line, typed as pandas' CSV reader types a column:
    true/false as bools, then integers, then floats, else the text itself."""
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def _fit(args, parser):
    from ..api import dp_best_subset
    from ..runtime.limits import SearchTimeout
    from ..results.tables import summary_table

    data, bounds = _read_inputs(args, parser)
    if args.no_refit and args.refit is not None:
        parser.error("argument --refit: not with --no-refit")
    search = args.search
    if search is not None and "name" in search:  # a leading word is the route
        search = dict(search, route=search.pop("name"))
    try:
        res = dp_best_subset(args.formula, data, eps=args.eps, s=args.s, method=args.method,
                             bounds=bounds, loss=args.loss, keep=args.keep or None, budget=args.budget,
                             ball=args.ball, search=search,
                             refit=False if args.no_refit else (args.refit if args.refit is not None else True),
                             inference=False if args.inference is None else (args.inference or True),
                             random_state=args.seed)
    except (ValueError, TypeError) as exc:
        _fail(parser, str(exc))
    except SearchTimeout as exc:  # nothing was released: say why, without a traceback
        lines = cli_message(exc).strip().splitlines()[:MAX_ERROR_LINES]
        parser.exit(3, "\n".join([f"dpsubset fit: {lines[0]}"] + lines[1:]) + "\n")
    if args.format == "markdown":
        print(summary_table(res, fmt="markdown"))
    else:
        summ = res.summary()
        print({"text": summ.as_text, "latex": summ.as_latex, "html": summ.as_html}[args.format]())
    if args.format in ("text", "markdown"):
        # LaTeX and HTML are printed to be included in a document: no plain text after
        # them (their notes state the guarantee)
        print()
        print(repr(res.privacy))
    for path in args.out:   # every file from this one release
        try:
            _write_out(res, path)
        except OSError as exc:
            _fail(parser, f"argument --out: cannot write {path!r}: {exc}")
        print(f"wrote {path}", file=sys.stderr if args.format in ("latex", "html") else sys.stdout)
    return 0


def _study(args, parser):
    from ..settings import Ball
    from ..studies.experiments import PAPER_BALL, plot_recovery, recovery_study, recovery_table
    from ..studies.simulate import Simulation

    ball = dict(PAPER_BALL.__dict__, **(args.ball or {}))
    ball = {k: (None if v == "default" else v) for k, v in ball.items() if v is not None}
    try:
        frame = recovery_study(args.methods, args.n, p=args.p, s=args.s, trials=args.trials,
                               draws=args.draws, eps=args.eps, model=Simulation(snr=args.snr, rho=args.rho),
                               bounds=tuple(args.bounds), ball=Ball(**ball),
                               n_jobs=args.jobs, random_state=args.seed,
                               progress=not args.quiet and sys.stderr.isatty())
    except (ValueError, TypeError) as exc:
        _fail(parser, str(exc))
    print(recovery_table(frame))
    if args.out:
        frame.to_csv(args.out, index=False)
        print(f"wrote {args.out}")
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        plot_recovery(frame).savefig(args.plot, dpi=120)
        print(f"wrote {args.plot}")
    return 0


def main(argv=None):
    """Entry point of the ``dpsubset`` script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    sub = parser._subparsers._group_actions[0].choices[args.command]
    with warnings.catch_warnings():
        warnings.simplefilter("default")   # show PrivacyLeakWarning once, on stderr
        warnings.showwarning = _show_warning
        if args.command == "fit":
            return _fit(args, sub)
        return _study(args, sub)


if __name__ == "__main__":
    sys.exit(main())
