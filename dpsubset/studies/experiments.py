"""Support-recovery studies in the paper's simulation setting.

:func:`recovery_study` runs methods x sample sizes x trials on the data of
Section 5 of Prastakos, Behdin and Mazumder (2025) (``dpsubset.studies.simulate``) and
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

The paper's model has no intercept; ``intercept=False`` (the default) scores the
supports without one, as "y ~ 0 + ." does, and ``intercept=True`` adds the column of
ones with its bound 1 (what "y ~ ." costs: a larger sensitivity). ``ball=None`` uses the
package defaults of r and lam (dpsubset/defaults.py) instead of the paper's.

``exact=True`` replaces the sampled releases of top_r and mistakes by their exact
probabilities: the probability that the release equals the true support, computed
from the exact candidates with the mechanisms' own log-weights
(:func:`top_r_recovery`, :func:`mistakes_recovery`, :func:`gap_checked_recovery`),
and the expected F1. This is the expectation the sampled fraction estimates, without
its Monte Carlo noise and at the cost of a single search. A screened method
(``Method("top_r", screen={...})``) averages these exact conditional
probabilities over ``draws`` private screens.
"""
from __future__ import annotations

import contextlib
import math
import time
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..defaults import default_lam, default_radius
from ..mechanisms import noise as samplers
from ..mechanisms import (as_generator, log_softmax, mistakes_log_weights, ptr_pass_probability,
                         sample_gap_checked, sample_mistakes, sample_top_r, top_r_log_weights)
from ..selection.base import DEFAULT_DELTA, DEFAULT_EPS0_SHARE, METHODS
from ..settings import Ball, Method, Search, as_option, moved_arguments
from .simulate import Simulation, make_regression

__all__ = ["recovery_study", "PAPER_BALL", "plot_recovery", "summarize_recovery", "threshold_n", "recovery_table",
           "top_r_recovery", "mistakes_recovery", "gap_checked_recovery"]

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
    r: float | None
    lam: float | None
    method_options: dict
    time_limit: float | None
    intercept: bool = False
    exact: bool = False
    noise: str = "gaussian"
    generator: object = None

    @property
    def forced_bounds(self):
        return [1.0] if self.intercept else []

    def radius(self, n=None, eps=None, p=None):
        """r, or the package default from the public bounds, n and eps (dpsubset/defaults.py)."""
        if self.r is not None:
            return self.r
        return default_radius(np.full(p or self.p, self.b_x), self.b_y, self.s, self.forced_bounds,
                              n=n, eps=self.eps if eps is None else eps)

    def ridge(self, n=None, eps=None):
        """lam, or the package default from n and eps (as dp_best_subset)."""
        if self.lam is not None:
            return self.lam
        return default_lam(n, self.eps if eps is None else eps)


def _f1(S, true):
    hit = len(set(S) & true)
    return 2.0 * hit / (len(S) + len(true))


def _split_spec(spec):
    """"label=method" -> (label, method); a plain name is its own label."""
    label, _, name = spec.partition("=")
    return (label, name) if name else (spec, spec)


def _options(label, method, st):
    return st.method_options.get(label, st.method_options.get(method)) or {}


def _method_labels(methods):
    """``methods`` of :func:`recovery_study` as ("label=name" specs, {label: options})."""
    items = list(methods.items()) if isinstance(methods, dict) else [
        (m.name if isinstance(m, Method) else _split_spec(m)[0], m) for m in methods]
    if not items:
        raise ValueError("methods is empty")
    specs, options = [], {}
    for label, m in items:
        if not isinstance(m, Method):
            name = _split_spec(m)[1] if isinstance(m, str) else m
            if name not in METHODS:
                raise ValueError(f"unknown methods [{m!r}]; registered: {sorted(METHODS)}")
            m = Method(name)
        if label in options:
            raise ValueError(f"methods: the label {label!r} is given twice; name each with a dict "
                             "{label: Method(...)}")
        opts = m.selection_options()
        if m.screen is not None:
            opts["screen"] = m.screen
        specs.append(f"{label}={m.name}")
        options[label] = opts
    return specs, options


# --------------------------------------------------------------- exact probabilities
def _f1_mean_uniform(n_true_in_pool, pool, s):
    """Mean F1 of a uniform size-s support of ``pool`` columns holding n_true_in_pool true ones."""
    return n_true_in_pool / pool  # E hits = s t / pool, F1 = hits / s


def top_r_recovery(cands, eps, Delta, true):
    """Exact P(top-R releases ``true``) and the expected F1 of its release.

    Parameters
    ----------
    cands : TopRCandidates
        The exact R best supports (indices local to the columns searched).
    eps, Delta : float
        Budget and sensitivity of the draw.
    true : set of int
        The true support in the same local indices; true columns not among the
        columns searched are simply absent (then P = 0).

    Returns
    -------
    (float, float)
        Probability of exact recovery and E[F1]; the same log-weights as
        :func:`dpsubset.mechanisms.sample_top_r`. NON-PRIVATE (a function of the scores):
        for studies on simulated data.
    """
    s, p = cands.s, cands.p
    probs = np.exp(log_softmax(top_r_log_weights(cands, eps, Delta)))
    f1 = np.array([_f1(S, true) for S in np.asarray(cands.supports).tolist()])
    t = len(true)
    hit = [k for k, S in enumerate(np.asarray(cands.supports).tolist()) if set(S) == true]
    total = math.comb(p, s)
    rest = total - cands.R
    p_true = float(probs[hit[0]]) if hit else 0.0
    ef1 = float(np.dot(probs[:cands.R], f1))
    if rest > 0:
        rest_f1 = (float(total) * _f1_mean_uniform(t, p, s) - float(f1.sum())) / float(rest)
        ef1 += float(probs[cands.R]) * rest_f1
        if not hit and t == s:
            p_true = float(probs[cands.R]) / float(rest)
    return p_true, ef1


def _class_probabilities(mc, eps, Delta):
    """P(class k) of the mistakes mechanism; open classes are solved exactly if their
    brackets leave the probabilities uncertain by more than 1e-3."""
    if mc.open_classes:
        logm = np.array([math.log(m) for m in mc.class_sizes])
        scale = eps / (2.0 * Delta)
        up, lo = np.asarray(mc.scores, float), np.asarray(mc.lower, float)
        width = 0.0
        for k in range(len(up)):
            own_hi = np.where(np.arange(len(up)) == k, lo, up)    # best case for class k
            own_lo = np.where(np.arange(len(up)) == k, up, lo)    # worst case for class k
            a = math.exp(log_softmax(logm - scale * own_hi)[k])
            b = math.exp(log_softmax(logm - scale * own_lo)[k])
            width = max(width, a - b)
        if width > 1e-3:
            for k in list(mc.open_classes):
                mc.close(k)
    return np.exp(log_softmax(mistakes_log_weights(mc, eps, Delta)))


def mistakes_recovery(mc, eps, Delta, true):
    """Exact P(mistakes releases ``true``) and E[F1] (gap_check="assume").

    A class-k release is a uniform member of P_k: the true support is released with
    probability ``P(k*) / |P_k*|``, k* its number of elements outside the centre, and a
    class-k member keeps each centre element with probability (s - k) / s and adds
    each outside column with probability k / (p - s). NON-PRIVATE; for studies.
    """
    s, p = mc.s, mc.p
    P = _class_probabilities(mc, eps, Delta)
    center = set(np.asarray(mc.center).tolist())
    c = len(center & true)
    t = len(true)
    ks = np.arange(len(P))
    hits = (s - ks) / s * c + ks * (t - c) / max(p - s, 1)
    ef1 = float(np.dot(P, hits / s))
    p_true = 0.0
    if t == s:
        k_star = s - c
        p_true = float(P[k_star]) / float(mc.class_sizes[k_star])
    return p_true, ef1


def gap_checked_recovery(mc, topr, eps, eps0, delta, Delta, true):
    """Exact P(release = ``true``) and E[F1] of the gap-checked mechanism (gap_check="ptr").

    P(pass) mistakes + (1 - P(pass)) top-R, each with budget eps (eps0 is the test's),
    P(pass) from the Laplace law (:func:`dpsubset.mechanisms.ptr_pass_probability`).
    ``topr`` is the candidates or a callable returning them (only called if needed).
    NON-PRIVATE; for studies.
    """
    q = ptr_pass_probability(mc.gap, Delta, eps0, delta)
    out = np.zeros(2)
    if q > 1e-9:
        out += q * np.array(mistakes_recovery(mc, eps, Delta, true))
    if q < 1.0:
        cands = topr() if callable(topr) else topr
        out += (1.0 - q) * np.array(top_r_recovery(cands, eps, Delta, true))
    return float(out[0]), float(out[1])


# ------------------------------------------------------------------------- methods
def _exact_candidates(method, opts, X, y, st: _Setting, eps, true, rng):
    """top_r / mistakes on the columns of X: st.draws releases, or the exact probability.

    Returns ("draws", list of supports) or ("exact", (p_true, E F1)); indices local to X.
    """
    from ..losses import SquaredLoss
    from ..scores.least_squares import LeastSquaresScorer
    from ..privacy.sensitivity import score_sensitivity
    from ..search.exact import SubsetSearch, default_R
    from ..selection.base import require_closed, search_slack
    n, p = X.shape
    forced = np.ones((n, 1)) if st.intercept else np.zeros((n, 0))
    # from the bounds of all st.p columns, n and eps: public, fixed before any screen
    r = st.radius(n, eps)
    sc = LeastSquaresScorer(X, y, st.ridge(n, eps), r, forced)
    # as dp_best_subset (selection.make_scorer): the search's tolerance is in Delta
    Delta = score_sensitivity(np.full(p, st.b_x), st.b_y, r, st.s, st.forced_bounds, n) \
        + 2.0 * search_slack(SquaredLoss(), st.b_y)
    search = SubsetSearch(sc, st.s, time_limit=st.time_limit)
    R = opts.get("R") or default_R(p, st.s)
    cache = {}

    def topr():
        if "c" not in cache:
            cache["c"] = search.top_r(R)
            require_closed(cache["c"].certificates)
        return cache["c"]

    if method == "top_r":
        if st.exact:
            return "exact", top_r_recovery(topr(), eps, Delta, true)
        return "draws", [sample_top_r(topr(), eps, Delta, rng) for _ in range(st.draws)]
    mc = search.mistake_classes()
    require_closed(mc.certificates)
    if opts.get("gap_check", "ptr") == "assume":
        if st.exact:
            return "exact", mistakes_recovery(mc, eps, Delta, true)
        return "draws", [sample_mistakes(mc, eps, Delta, rng) for _ in range(st.draws)]
    eps0 = opts.get("eps0") or DEFAULT_EPS0_SHARE * eps
    delta = opts.get("delta") or DEFAULT_DELTA
    if st.exact:
        return "exact", gap_checked_recovery(mc, topr, eps - eps0, eps0, delta, Delta, true)
    return "draws", [sample_gap_checked(mc, topr, eps - eps0, eps0, delta, Delta, rng)[0]
                     for _ in range(st.draws)]


def _screened(method, opts, X, y, st: _Setting, true, rng):
    """A DP-SIS screen (share of eps, k columns), then top_r / mistakes on the kept columns.

    Sampling mode: one screen per release. Exact mode: the exact conditional
    probability given each of st.draws screens, averaged (an unbiased estimate of the
    exact recovery probability with the selection's noise integrated out).
    """
    from ..mechanisms.lipschitz_top_k import sample_lipschitz_top_k
    from ..selection.baselines.dp_sis import sis_scores
    from ..selection.screening import DEFAULT_SCREEN_SHARE, check_screen
    spec = check_screen(opts["screen"], s=st.s, method=method)
    k = spec.k_for(st.p, st.s)
    eps_screen = spec.share * st.eps if spec.share else DEFAULT_SCREEN_SHARE * st.eps
    scores = sis_scores(X, y, np.full(st.p, st.b_x), st.b_y)
    kept_all = np.sort(sample_lipschitz_top_k(scores, k, eps_screen, rng, spec.gamma,
                                              size=st.draws), axis=1)
    inner = {key: v for key, v in opts.items() if key != "screen"}
    one = _Setting(**{**st.__dict__, "draws": 1})
    out, results = [], []
    for kept in kept_all:
        local_true = {i for i, j in enumerate(kept.tolist()) if j in true}
        kind, val = _exact_candidates(method, inner, X[:, kept], y, one, st.eps - eps_screen,
                                      local_true, rng)
        if kind == "exact":
            results.append(val)
        else:
            out.append(kept[np.asarray(val[0])])
    if st.exact:
        return "exact", tuple(np.mean(np.array(results), axis=0).tolist())
    return "draws", out


def _fast_draws(label, method, X, y, st: _Setting, rng, true):
    """Candidates once, then st.draws releases (None if the method has no fast path).

    Returns None, ("draws", list of supports) or ("exact", (p_true, E F1)).
    """
    n = X.shape[0]
    opts = dict(_options(label, method, st))
    if method in ("top_r", "mistakes"):
        if opts.get("screen"):
            return _screened(method, opts, X, y, st, true, rng)
        return _exact_candidates(method, opts, X, y, st, st.eps, true, rng)
    if method == "mcmc":
        # Each release is the final state of its own chain: st.draws independent
        # chains, run in lockstep on one scorer (dp_best_subset per draw would rebuild
        # the scorer, the Gram matrix included, fifty times per dataset).
        from ..selection.baselines.mcmc import DEFAULT_N_ITER, run_chains
        from ..losses import SquaredLoss
        from ..scores.least_squares import LeastSquaresScorer
        from ..privacy.sensitivity import score_sensitivity
        from ..selection.base import search_slack
        forced = np.ones((n, 1)) if st.intercept else np.zeros((n, 0))
        r = st.radius(n)
        sc = LeastSquaresScorer(X, y, st.ridge(n), r, forced)
        Delta = score_sensitivity(np.full(st.p, st.b_x), st.b_y, r, st.s, st.forced_bounds, n) \
            + 2.0 * search_slack(SquaredLoss(), st.b_y)  # as dp_best_subset (make_scorer)
        chains = run_chains(sc.score, st.p, st.s, st.eps, Delta,
                            opts.get("n_iter", DEFAULT_N_ITER), st.draws, rng)
        return "draws", list(chains.states)
    if method == "samp_agg":
        from ..selection.baselines.samp_agg import block_votes, n_blocks, sample_votes_top_s
        m = opts.get("blocks") or n_blocks(n)
        counts = block_votes(X, y, st.s, m, opts.get("penalty", "path"), rng)
        return "draws", [sample_votes_top_s(counts, m, st.s, st.eps, rng) for _ in range(st.draws)]
    if method == "dp_sis":
        from ..mechanisms.lipschitz_top_k import sample_lipschitz_top_k
        from ..selection.baselines.dp_sis import sis_scores
        x = sis_scores(X, y, np.full(st.p, st.b_x), st.b_y)
        return "draws", list(sample_lipschitz_top_k(x, st.s, st.eps, rng, opts.get("gamma", 0.5),
                                                    size=st.draws))
    return None


def _generic_draws(label, method, X, y, st: _Setting, rng):
    """st.draws calls of dp_best_subset (refit=False) on the same data."""
    from ..api import dp_best_subset
    names = [f"x{j + 1}" for j in range(X.shape[1])]
    df = pd.DataFrame(X, columns=names)
    df.insert(0, "y", y)
    col = {nm: j for j, nm in enumerate(names)}
    out = []
    for _ in range(st.draws):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = dp_best_subset("y ~ ." if st.intercept else "y ~ 0 + .", df, eps=st.eps,
                                 s=st.s, method=Method(method, **_options(label, method, st)),
                                 bounds=(st.b_x, st.b_y), ball=Ball(r=st.r, lam=st.lam), refit=False,
                                 search=Search(time_limit=st.time_limit), random_state=rng)
        out.append(np.array(sorted(col[c] for c in res.support)))
    return out


def _simulate(n, st: _Setting, rng):
    """The paper's data (Gaussian noise), t_3 noise at the same realised SNR, or st.generator's."""
    if st.generator is not None:
        X, y, true = st.generator(n, st.p, st.s, rng)
        return np.asarray(X, float), np.asarray(y, float), np.asarray(true)
    if st.noise == "gaussian":
        return make_regression(n, st.p, st.s, rho=st.rho, snr=st.snr, random_state=rng)
    X, signal, true = make_regression(n, st.p, st.s, rho=st.rho, snr=np.inf, random_state=rng)
    e = samplers.student_t(rng, 3, n)
    return X, signal + e * np.linalg.norm(signal) / (math.sqrt(st.snr) * np.linalg.norm(e)), true


def _run_trial(methods, n, trial, seed, st: _Setting):
    """One dataset, every method: a list of frame rows."""
    data_rng, *method_rngs = [samplers.child_generator(s) for s in
                              seed.spawn(1 + len(methods))]
    X, y, true = _simulate(n, st, data_rng)
    X, y = np.clip(X, -st.b_x, st.b_x), np.clip(y, -st.b_y, st.b_y)
    true = set(true.tolist())
    rows = []
    for spec, rng in zip(methods, method_rngs):
        label, method = _split_spec(spec)
        t0 = time.perf_counter()
        status = "ok"
        exact = None
        try:
            out = _fast_draws(label, method, X, y, st, rng, true)
            if out is None:
                supports = _generic_draws(label, method, X, y, st, rng)
            elif out[0] == "exact":
                exact, supports = out[1], []
            else:
                supports = out[1]
        except (ValueError, NotImplementedError, MemoryError, RuntimeError) as exc:
            # e.g. the exponential mechanism beyond its enumeration limit, or an
            # exact search that ran out of time (SearchTimeout is a RuntimeError).
            supports, status = [], f"skipped: {type(exc).__name__}: {exc}"
        elapsed = time.perf_counter() - t0
        if exact is not None:
            # draws = 0 marks an exact probability (no releases were sampled)
            rows.append(dict(method=label, n=n, p=st.p, trial=trial, draws=0,
                             exact_recovery=exact[0], f1=exact[1], time=elapsed, status=status))
            continue
        hits = [set(np.asarray(S).tolist()) == true for S in supports]
        f1s = [_f1(np.asarray(S).tolist(), true) for S in supports]
        rows.append(dict(method=label, n=n, p=st.p, trial=trial, draws=len(supports),
                         exact_recovery=float(np.mean(hits)) if hits else np.nan,
                         f1=float(np.mean(f1s)) if f1s else np.nan, time=elapsed,
                         status=status))
    return rows


#: The paper's ball and ridge (Section 5), the default of :func:`recovery_study`.
PAPER_BALL = Ball(r=1.1, lam=120.0)

#: recovery_study's keywords of an older version and their new places.
MOVED_STUDY = {
    "r": "ball=dpsubset.Ball(r=...)", "lam": "ball=dpsubset.Ball(lam=...)",
    "snr": "model=Simulation(snr=...)", "rho": "model=Simulation(rho=...)",
    "noise": "model=Simulation(noise=...)", "generator": "model=Simulation(generator=...)",
    "method_options": "methods={label: dpsubset.Method(name, **options)}",
    "time_limit": "search=dpsubset.Search(time_limit=...)",
}


@moved_arguments(table=MOVED_STUDY)
def recovery_study(methods=("top_r", "mistakes"), n_grid=(1000, 2000, 4000, 8000), p=100, s=5,
                   trials=10, draws=50, eps=1.0, *, model=None, bounds=(0.5, 0.5), ball=PAPER_BALL,
                   intercept=False, exact=False, search=None, n_jobs=1, backend=None, progress=True,
                   random_state=0):
    """Exact-support recovery of private selection methods on the paper's simulated data.

    Parameters
    ----------
    methods : sequence or dict
        Registered ``method=`` names (:data:`dpsubset.selection.base.METHODS`) or
        :class:`dpsubset.Method` objects with their options, each labelled by its name; or a
        dict ``{label: name or Method}`` to run a method under several labels, e.g.
        ``{"mistakes": "mistakes", "mistakes_assume": Method("mistakes", gap_check="assume")}``.
        For top_r and mistakes, ``Method(name, screen=True or k or dict(k=..., share=...))``
        adds the private screen of ``dp_best_subset``, its share taken out of ``eps``.
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
    model : dpsubset.studies.simulate.Simulation, optional
        The data: SNR, correlation and noise of the paper's generator, or a generator of one's
        own; default ``Simulation()``, the paper's (SNR 5, rho 0.1, Gaussian noise).
    bounds : (float, float)
        Public clipping bounds (b_x, b_y); the paper uses (0.5, 0.5).
    ball : dpsubset.Ball or None
        Ball radius ``r`` and ridge ``lam`` of the scores of top_r / mistakes (and of any
        method that takes them); default the paper's ``Ball(r=1.1, lam=120)``. None, or a
        field left None, uses the package defaults (``r = b_y / sqrt(B_s)``, ``lam = 1``;
        dpsubset/defaults.py).
    intercept : bool
        Fit an intercept (a forced column of ones with bound 1, as "y ~ ." does). The
        paper's model has none (False, "y ~ 0 + .").
    exact : bool
        For top_r and mistakes: record the exact probability of releasing the true
        support (and the expected F1) instead of the fraction of ``draws`` sampled
        releases (the module docstring); such rows have ``draws = 0``, except for a
        screened method, which averages over ``draws`` private screens.
    search : dpsubset.Search, optional
        Its ``time_limit``: seconds per exact solve; a method that runs out is recorded as
        skipped.
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

    methods, method_options = _method_labels(methods)
    n_grid = [int(n) for n in n_grid]
    if not n_grid or min(n_grid) < 2:
        raise ValueError(f"n_grid must hold sample sizes >= 2, got {n_grid}")
    for name, val in (("trials", trials), ("draws", draws), ("p", p), ("s", s)):
        if isinstance(val, bool) or int(val) != val or val < 1:
            raise ValueError(f"{name} must be a positive integer, got {val!r}")
    b_x, b_y = bounds
    model = Simulation() if model is None else model
    ball = (Ball() if ball is None else as_option("ball", ball)).per_stage()
    if ball.r_refit not in (None, ball.r_select) or ball.lam_refit is not None:
        raise ValueError("recovery_study: ball sets the selection's r and lam only (there is no refit)")
    st = _Setting(p=int(p), s=int(s), eps=float(eps), draws=int(draws), snr=float(model.snr),
                  rho=float(model.rho), b_x=float(b_x), b_y=float(b_y), r=ball.r_select, lam=ball.lam_select,
                  method_options=method_options, time_limit=as_option("search", search).time_limit,
                  intercept=bool(intercept), exact=bool(exact), noise=model.noise,
                  generator=model.generator)
    seed_root = samplers.seed_sequence(samplers.uniform_integers(2 ** 63, as_generator(random_state)))
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
