"""Support-recovery studies in the paper's simulation setting.

:func:`recovery_study` runs methods x sample sizes x trials on the data of
Section 5 of Prastakos, Behdin and Mazumder (2025) (``dpsubset.simulate``) and
returns a tidy frame; :func:`plot_recovery` draws it like their Figure 1 (mean and
standard error of the exact-recovery fraction against n, one line per method).

Each trial draws one dataset. For every method the expensive, data-dependent part
(the exact candidate sets of top-R and mistakes, the block votes of samp_agg, the
correlation scores of dp_sis) is computed once, and ``draws`` private releases are
drawn from it; this is what the paper does (50 draws per trial), and it is exactly
the law of ``draws`` independent calls of ``dp_best_subset`` on that dataset. Any
other registered method is run through ``dp_best_subset(refit=False)`` once per
draw. The trials are independent jobs for joblib, so ``backend="dask"`` or
``"ray"`` (with their joblib backends registered) can spread them on a cluster.
"""
from __future__ import annotations

import contextlib
import math
import time
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .mechanisms import as_generator, sample_gap_checked, sample_mistakes, sample_top_r
from .selection import DEFAULT_DELTA, DEFAULT_EPS0_SHARE, METHODS
from .simulate import make_regression

__all__ = ["recovery_study", "plot_recovery", "summarize_recovery", "threshold_n", "recovery_table"]

#: Frame columns, one row per (method, n, trial).
COLUMNS = ["method", "n", "p", "trial", "draws", "exact_recovery", "f1", "time", "status"]


@dataclass(frozen=True)
class _Setting:
    p: int
    s: int
    eps: float
    draws: int
    snr: float
    rho: float
    b_x: float
    b_y: float
    r: float
    lam: float | None
    method_options: dict
    time_limit: float | None


def _f1(S, true):
    hit = len(set(S) & true)
    return 2.0 * hit / (len(S) + len(true))


def _split_spec(spec):
    """"label=method" -> (label, method); a plain name is its own label."""
    label, _, name = spec.partition("=")
    return (label, name) if name else (spec, spec)


def _options(label, method, st):
    return st.method_options.get(label, st.method_options.get(method)) or {}


def _fast_draws(label, method, X, y, st: _Setting, rng):
    """Candidates once, then st.draws releases (None if the method has no fast path)."""
    n = X.shape[0]
    opts = dict(_options(label, method, st))
    if method in ("top_r", "mistakes"):
        from .losses import SquaredLoss
        from .scores import LeastSquaresScorer, sensitivity
        from .selection import search_slack
        from .search.exact import SubsetSearch, default_R
        from .selection import require_closed
        lam = 0.1 * n if st.lam is None else st.lam
        sc = LeastSquaresScorer(X, y, lam, st.r, np.ones((n, 1)))
        Delta = sensitivity(np.full(st.p, st.b_x), st.b_y, st.r, st.s, [1.0], n) \
            + 2.0 * search_slack(SquaredLoss(), st.b_y)  # as dp_best_subset (make_scorer)
        search = SubsetSearch(sc, st.s, time_limit=st.time_limit)
        R = opts.get("R") or default_R(st.p, st.s)
        if method == "top_r":
            cands = search.top_r(R)
            require_closed(cands.certificates)
            return [sample_top_r(cands, st.eps, Delta, rng) for _ in range(st.draws)]
        mc = search.mistake_classes()
        require_closed(mc.certificates)
        if opts.get("gap_check", "ptr") == "assume":
            return [sample_mistakes(mc, st.eps, Delta, rng) for _ in range(st.draws)]
        eps0 = opts.get("eps0") or DEFAULT_EPS0_SHARE * st.eps
        delta = opts.get("delta") or DEFAULT_DELTA
        cache = {}

        def topr():
            if "c" not in cache:
                cache["c"] = search.top_r(R)
                require_closed(cache["c"].certificates)
            return cache["c"]

        return [sample_gap_checked(mc, topr, st.eps - eps0, eps0, delta, Delta, rng)[0]
                for _ in range(st.draws)]
    if method == "mcmc":
        # Each release is the final state of its own chain: st.draws independent
        # chains, run in lockstep on one scorer (dp_best_subset per draw would rebuild
        # the scorer, the Gram matrix included, fifty times per dataset).
        from .baselines.mcmc import DEFAULT_N_ITER, run_chains
        from .losses import SquaredLoss
        from .scores import LeastSquaresScorer, sensitivity
        from .selection import search_slack
        lam = 0.1 * n if st.lam is None else st.lam
        sc = LeastSquaresScorer(X, y, lam, st.r, np.ones((n, 1)))
        Delta = sensitivity(np.full(st.p, st.b_x), st.b_y, st.r, st.s, [1.0], n) \
            + 2.0 * search_slack(SquaredLoss(), st.b_y)  # as dp_best_subset (make_scorer)
        chains = run_chains(sc.score, st.p, st.s, st.eps, Delta,
                            opts.get("n_iter", DEFAULT_N_ITER), st.draws, rng)
        return list(chains.states)
    if method == "samp_agg":
        from .baselines.samp_agg import block_votes, n_blocks, sample_votes_top_s
        m = opts.get("blocks") or n_blocks(n)
        counts = block_votes(X, y, st.s, m, opts.get("penalty", "path"), rng)
        return [sample_votes_top_s(counts, m, st.s, st.eps, rng) for _ in range(st.draws)]
    if method == "dp_sis":
        from .baselines.dp_sis import sample_lipschitz_top_k, sis_scores
        x = sis_scores(X, y, np.full(st.p, st.b_x), st.b_y)
        return list(sample_lipschitz_top_k(x, st.s, st.eps, rng, opts.get("gamma", 0.5),
                                           size=st.draws))
    return None


def _generic_draws(label, method, X, y, st: _Setting, rng):
    """st.draws calls of dp_best_subset (refit=False) on the same data."""
    from .api import dp_best_subset
    names = [f"x{j + 1}" for j in range(X.shape[1])]
    df = pd.DataFrame(X, columns=names)
    df.insert(0, "y", y)
    col = {nm: j for j, nm in enumerate(names)}
    out = []
    for _ in range(st.draws):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = dp_best_subset("y ~ .", df, eps=st.eps, s=st.s, method=method,
                                 bounds=(st.b_x, st.b_y), r=st.r, lam=st.lam, refit=False,
                                 time_limit=st.time_limit, random_state=rng,
                                 method_options=_options(label, method, st) or None)
        out.append(np.array(sorted(col[c] for c in res.support)))
    return out


def _run_trial(methods, n, trial, seed, st: _Setting):
    """One dataset, every method: a list of frame rows."""
    data_rng, *method_rngs = [np.random.default_rng(s) for s in
                              seed.spawn(1 + len(methods))]
    X, y, true = make_regression(n, st.p, st.s, rho=st.rho, snr=st.snr, random_state=data_rng)
    X, y = np.clip(X, -st.b_x, st.b_x), np.clip(y, -st.b_y, st.b_y)
    true = set(true.tolist())
    rows = []
    for spec, rng in zip(methods, method_rngs):
        label, method = _split_spec(spec)
        t0 = time.perf_counter()
        status = "ok"
        try:
            supports = _fast_draws(label, method, X, y, st, rng)
            if supports is None:
                supports = _generic_draws(label, method, X, y, st, rng)
        except (ValueError, NotImplementedError, MemoryError, RuntimeError) as exc:
            # e.g. the exponential mechanism beyond its enumeration limit, or an
            # exact search that ran out of time (SearchTimeout is a RuntimeError).
            supports, status = [], f"skipped: {type(exc).__name__}: {exc}"
        elapsed = time.perf_counter() - t0
        hits = [set(np.asarray(S).tolist()) == true for S in supports]
        f1s = [_f1(np.asarray(S).tolist(), true) for S in supports]
        rows.append(dict(method=label, n=n, p=st.p, trial=trial, draws=len(supports),
                         exact_recovery=float(np.mean(hits)) if hits else np.nan,
                         f1=float(np.mean(f1s)) if f1s else np.nan, time=elapsed,
                         status=status))
    return rows


def recovery_study(methods=("top_r", "mistakes"), n_grid=(1000, 2000, 4000, 8000), p=100, s=5,
                   trials=10, draws=50, eps=1.0, *, snr=5.0, rho=0.1, bounds=(0.5, 0.5), r=1.1,
                   lam=120.0, method_options=None, time_limit=None, n_jobs=1, backend=None,
                   progress=True, random_state=0):
    """Exact-support recovery of private selection methods on the paper's simulated data.

    Parameters
    ----------
    methods : sequence of str
        Registered ``method=`` names (:data:`dpsubset.selection.METHODS`), or
        ``"label=name"`` to run a method under another label with its own options,
        e.g. ``["mistakes", "mistakes_assume=mistakes"]`` with
        ``method_options={"mistakes_assume": {"gap_check": "assume"}}``.
    n_grid : sequence of int
        Sample sizes.
    p, s : int
        Number of candidate columns and true support size.
    trials : int
        Independent datasets per n.
    draws : int
        Private releases per method and dataset (the paper uses 50).
    eps : float
        Selection budget of each release (no refit).
    snr, rho : float
        Signal-to-noise ratio and AR(1) correlation of :func:`dpsubset.simulate.make_regression`.
    bounds : (float, float)
        Public clipping bounds (b_x, b_y); the paper uses (0.5, 0.5).
    r, lam : float
        Ball radius and ridge of the scores of top_r / mistakes (and of any method
        that takes them); the paper uses r = 1.1 and lam = 120. ``lam=None`` uses
        ``dp_best_subset``'s default 0.1 n.
    method_options : dict, optional
        ``{label or method: {option: value}}`` passed to the methods (e.g.
        ``{"mistakes": {"gap_check": "assume"}}``).
    time_limit : float, optional
        Seconds per exact solve; a method that runs out is recorded as skipped.
    n_jobs : int
        joblib workers; the (n, trial) pairs are the jobs.
    backend : str, optional
        joblib backend ("loky", "threading", "dask", "ray", ...).
    progress : bool
        Show a tqdm progress bar over the jobs.
    random_state : int
        Seeds every dataset and release (the same int gives the same frame, up to
        the ``time`` column).

    Returns
    -------
    pandas.DataFrame
        One row per (method, n, trial): ``exact_recovery`` (fraction of the draws
        equal to the true support), ``f1`` (mean F1 of the draws), ``time``
        (seconds for the candidates and all draws), ``draws`` and ``status``
        ("ok", or "skipped: <reason>" for a method that cannot run at this size).
    """
    import joblib
    from tqdm.auto import tqdm

    methods = list(methods)
    unknown = [m for m in methods if _split_spec(m)[1] not in METHODS]
    if unknown:
        raise ValueError(f"unknown methods {unknown}; registered: {sorted(METHODS)}")
    if not methods:
        raise ValueError("methods is empty")
    n_grid = [int(n) for n in n_grid]
    if not n_grid or min(n_grid) < 2:
        raise ValueError(f"n_grid must hold sample sizes >= 2, got {n_grid}")
    for name, val in (("trials", trials), ("draws", draws), ("p", p), ("s", s)):
        if isinstance(val, bool) or int(val) != val or val < 1:
            raise ValueError(f"{name} must be a positive integer, got {val!r}")
    b_x, b_y = bounds
    st = _Setting(p=int(p), s=int(s), eps=float(eps), draws=int(draws), snr=float(snr),
                  rho=float(rho), b_x=float(b_x), b_y=float(b_y), r=float(r),
                  lam=None if lam is None else float(lam),
                  method_options=dict(method_options or {}), time_limit=time_limit)
    seed_root = np.random.SeedSequence(as_generator(random_state).integers(2 ** 63))
    jobs = [(n, t) for n in n_grid for t in range(int(trials))]
    seeds = seed_root.spawn(len(jobs))
    tasks = (joblib.delayed(_run_trial)(methods, n, t, sd, st) for (n, t), sd in zip(jobs, seeds))
    rows = []
    ctx = joblib.parallel_config(backend=backend) if backend else contextlib.nullcontext()
    with ctx:
        par = joblib.Parallel(n_jobs=n_jobs, return_as="generator_unordered")
        for out in tqdm(par(tasks), total=len(jobs), disable=not progress, desc="recovery study"):
            rows.extend(out)
    frame = pd.DataFrame(rows, columns=COLUMNS).sort_values(["method", "n", "trial"],
                                                            kind="stable").reset_index(drop=True)
    skipped = frame[frame.status != "ok"]
    for (m, n), g in skipped.groupby(["method", "n"]):
        warnings.warn(f"method {m!r} skipped at n = {n}, p = {p}: {g.status.iloc[0][9:]}",
                      RuntimeWarning, stacklevel=2)
    return frame


def summarize_recovery(frame):
    """Mean and standard error over trials of exact recovery, F1 and time, per (method, n)."""
    ok = frame[frame.status == "ok"]
    g = ok.groupby(["method", "n"])

    def se(x):
        return x.std(ddof=1) / math.sqrt(len(x)) if len(x) > 1 else np.nan

    out = g.agg(trials=("trial", "size"), recovery=("exact_recovery", "mean"),
                recovery_se=("exact_recovery", se), f1=("f1", "mean"), f1_se=("f1", se),
                time=("time", "mean")).reset_index()
    return out


def threshold_n(frame, level):
    """Per method, the smallest n of the grid whose mean exact recovery is >= level (NaN if none)."""
    summ = summarize_recovery(frame)
    res = {}
    for m, g in summ.groupby("method"):
        hit = g[g.recovery >= level]
        res[m] = int(hit.n.min()) if len(hit) else np.nan
    return pd.Series(res, name=f"n_{int(round(100 * level))}%")


def recovery_table(frame) -> str:
    """Plain-text table: recovery (+- se), F1 (+- se) and seconds per trial for each
    method and n, then each method's smallest n reaching 50 % and 90 % recovery."""
    summ = summarize_recovery(frame)
    lines = [f"{'method':>12} {'n':>6} {'trials':>6} {'recovery':>9} {'(se)':>6} {'F1':>6} "
             f"{'(se)':>6} {'s/trial':>8}"]

    def num(v, fmt):
        return "" if v is None or (isinstance(v, float) and np.isnan(v)) else format(v, fmt)

    for _, r in summ.sort_values(["method", "n"]).iterrows():
        lines.append(f"{r.method:>12} {r.n:>6} {r.trials:>6} {r.recovery:>9.2f} "
                     f"{num(r.recovery_se, '.2f'):>6} {r.f1:>6.2f} {num(r.f1_se, '.2f'):>6} "
                     f"{r.time:>8.2f}")
    n50, n90 = threshold_n(frame, 0.5), threshold_n(frame, 0.9)
    lines += ["", f"{'method':>12} {'n(50%)':>8} {'n(90%)':>8}   (smallest n of the grid; "
                  "'-' = not reached)"]
    for m in n50.index:
        a = "-" if np.isnan(n50[m]) else str(int(n50[m]))
        b = "-" if np.isnan(n90[m]) else str(int(n90[m]))
        lines.append(f"{m:>12} {a:>8} {b:>8}")
    for _, r in frame[frame.status != "ok"].drop_duplicates(["method", "n"]).iterrows():
        lines.append(f"skipped {r.method} at n = {r.n}: {r.status}")
    return "\n".join(lines)


def plot_recovery(frame, ax=None, metric="exact_recovery"):
    """Mean +- standard error of ``metric`` against n, one line per method (Figure 1 of Prastakos et al. 2025).

    Returns
    -------
    matplotlib.figure.Figure
    """
    if ax is None:
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(5.5, 4))
    else:
        fig = ax.figure
    ok = frame[frame.status == "ok"]
    col = {"exact_recovery": "recovery", "f1": "f1"}[metric]
    summ = summarize_recovery(frame)
    for m, g in summ.groupby("method", sort=False):
        g = g.sort_values("n")
        se = g[f"{col}_se"].fillna(0.0).to_numpy()
        ax.errorbar(g.n, g[col], yerr=se, marker="o", capsize=3, label=m)
    p = sorted(ok.p.unique().tolist()) if "p" in ok else []
    ax.set_xlabel("n")
    ax.set_ylabel("fraction of exact recoveries" if metric == "exact_recovery" else "F1")
    ax.set_ylim(-0.03, 1.03)
    if p:
        ax.set_title(f"p = {', '.join(map(str, p))}")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig
