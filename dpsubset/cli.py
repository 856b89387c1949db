"""The ``dpsubset`` command line.

    dpsubset fit data.csv --formula "y ~ ." --eps 1 --s 5 --bounds 0.5 0.5 [--method top_r]
                 [--seed 1] [--option KEY=VALUE ...] [--no-refit] [--format text|latex|html]
                 [--search auto|enumeration|outer_approximation|pyomo] [--solver NAME]
                 [--time-limit SECONDS]
    dpsubset study --p 100 --n 1000 2000 --methods top_r mistakes --trials 3 --draws 50
                   [--out results.csv] [--plot fig.png]

``fit`` prints the summary of :func:`dpsubset.dp_best_subset` and its privacy
report; ``study`` runs :func:`dpsubset.experiments.recovery_study` and prints the
recovery table.
"""
from __future__ import annotations

import argparse
import sys
import warnings

__all__ = ["main", "build_parser"]


def _option(text):
    """KEY=VALUE for method_options; the value is read as int, float, bool or string."""
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    key, value = text.split("=", 1)
    for conv in (int, float):
        try:
            return key, conv(value)
        except ValueError:
            pass
    if value.lower() in ("true", "false"):
        return key, value.lower() == "true"
    return key, value


def build_parser():
    from .selection import METHODS

    ap = argparse.ArgumentParser(prog="dpsubset",
                                 description="Differentially private best subset selection.")
    sub = ap.add_subparsers(dest="command", required=True)

    fit = sub.add_parser("fit", help="private selection and refit on a CSV file")
    fit.add_argument("data", help="CSV file with a header row")
    fit.add_argument("--formula", required=True, help='e.g. "y ~ ." (formulaic syntax)')
    fit.add_argument("--eps", type=float, required=True, help="total privacy budget")
    fit.add_argument("--s", type=int, required=True, help="number of columns to select")
    fit.add_argument("--bounds", type=float, nargs=2, metavar=("BX", "BY"),
                     help="public bounds: every column clipped to [-BX, BX], the response to "
                          "[-BY, BY]; without them the bounds come from the data and the "
                          "guarantee is void")
    fit.add_argument("--method", default="top_r", choices=sorted(METHODS))
    fit.add_argument("--option", type=_option, action="append", default=[], metavar="KEY=VALUE",
                     help="a method option (repeatable), e.g. --option blocks=20")
    fit.add_argument("--r", type=float, default=None,
                     help="radius of the coefficient ball (default b_y / sqrt(B_s), from the bounds)")
    fit.add_argument("--lam", type=float, default=None, help="ridge of the scores (default 1)")
    fit.add_argument("--no-refit", action="store_true", help="release the support only")
    fit.add_argument("--search", default="auto",
                     choices=("auto", "enumeration", "outer_approximation", "pyomo"),
                     help="exact search; 'pyomo' solves the paper's formulation (9) with --solver")
    fit.add_argument("--solver", default=None,
                     help="with --search pyomo: the Pyomo solver name, e.g. gurobi_persistent")
    fit.add_argument("--time-limit", type=float, default=None,
                     help="seconds per exact solve; past it nothing is released")
    fit.add_argument("--seed", type=int, default=None)
    fit.add_argument("--format", choices=("text", "latex", "html"), default="text")

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
    st.add_argument("--lam", type=float, default=120.0)
    st.add_argument("--r", type=float, default=1.1)
    st.add_argument("--bounds", type=float, nargs=2, default=(0.5, 0.5), metavar=("BX", "BY"))
    st.add_argument("--jobs", type=int, default=1, help="joblib workers")
    st.add_argument("--seed", type=int, default=0)
    st.add_argument("--out", help="write the tidy frame to this CSV file")
    st.add_argument("--plot", help="write the Figure-1 style plot to this image file")
    st.add_argument("--quiet", action="store_true", help="no progress bar")
    return ap


def _fit(args, parser):
    import pandas as pd

    from .api import dp_best_subset

    try:
        data = pd.read_csv(args.data)
    except (OSError, ValueError) as exc:
        parser.error(f"argument data: cannot read {args.data!r}: {exc}")
    try:
        res = dp_best_subset(args.formula, data, eps=args.eps, s=args.s, method=args.method,
                             bounds=None if args.bounds is None else tuple(args.bounds),
                             r=args.r, lam=args.lam, refit=not args.no_refit,
                             search=args.search, solver=args.solver, time_limit=args.time_limit,
                             random_state=args.seed, method_options=dict(args.option) or None)
    except (ValueError, TypeError) as exc:
        parser.error(str(exc))
    summ = res.summary()
    out = {"text": summ.as_text, "latex": summ.as_latex, "html": summ.as_html}[args.format]()
    print(out)
    print()
    print(repr(res.privacy))
    return 0


def _study(args, parser):
    from .experiments import plot_recovery, recovery_study, recovery_table

    try:
        frame = recovery_study(args.methods, args.n, p=args.p, s=args.s, trials=args.trials,
                               draws=args.draws, eps=args.eps, snr=args.snr, rho=args.rho,
                               bounds=tuple(args.bounds), r=args.r, lam=args.lam,
                               n_jobs=args.jobs, random_state=args.seed,
                               progress=not args.quiet and sys.stderr.isatty())
    except (ValueError, TypeError) as exc:
        parser.error(str(exc))
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
        if args.command == "fit":
            return _fit(args, sub)
        return _study(args, sub)


if __name__ == "__main__":
    sys.exit(main())
