"""``method="mcmc"``: Metropolis-Hastings over supports (Roy and Tewari 2023).

The competitor of Prastakos, Behdin and Mazumder (2025) in their experiments
(docs/methods/selection.md). A chain moves over size-s supports:

* start: a uniformly random support (data-independent);
* proposal: drop a uniformly random member of S and add a uniformly random column
  outside S. Every support has s (p - s) such neighbours, so the proposal is
  symmetric;
* accept with probability min(1, exp(-eps (c(S') - c(S)) / (2 Delta))), with c the
  exact least-squares score of the package (section 2) and
  Delta = (b_y + r sqrt(B_s))^2 / (2n) its row-replacement sensitivity.

The target (stationary law) is the exponential mechanism pi_D(S) proportional to
exp(-eps c(S) / (2 Delta)), which is pure eps-DP (the method "exponential"). After
``n_iter`` steps the chain's law mu_D is only close to pi_D.

Guarantee. If TV(mu_D, pi_D) <= eta for every dataset D, then for every set A of
supports P_D(A) <= pi_D(A) + eta <= e^eps pi_D'(A) + eta <= e^eps P_D'(A) + (1 + e^eps) eta,
so the release is (eps, (1 + e^eps) eta)-DP. Two ways to get eta:

1. *Certified, worst case* (:func:`mcmc_tv_bound`). Scores lie in [0, b_y^2 / 2]
   (beta = 0 is feasible), so every proposed move is accepted with probability at
   least exp(-K), K = eps b_y^2 / (4 Delta), whatever the data. In the Johnson graph
   of supports any two supports are joined by a walk of exactly
   L = max(min(s, p - s), 2) moves (p >= 3: every edge lies in a triangle), so
   P^L(S, S') >= q^L with q = exp(-K) / (s (p - s)). Doeblin's condition then gives
   eta <= (1 - C(p, s) q^L)^floor(n_iter / L). This uses public numbers only, but K
   grows linearly in n: beyond toy sizes the bound is vacuous.
2. *Mixing assumed*: Roy and Tewari bound the mixing time with high probability
   under assumptions on the data-generating model (their Theorem 4.3); those
   cannot be checked privately.

The report is "approximate" with delta = (1 + e^eps) eta when the certified bound
meets the target ``delta`` (default 1e-6), and "conditional" otherwise: then the
stated (eps, delta) holds only if the chain has mixed to within
eta = delta / (1 + e^eps), which is not checked.

Chains. ``n_chains`` independent chains run (each with its own random stream
spawned from ``random_state``, in lockstep so that their proposals are scored in
one batch; ``n_jobs`` > 1 spreads them over processes with joblib). Only one
support is released: the final state of chain 0. Every other chain is an
independent draw of the same law and is NOT released; it is there for
``diagnostics=True`` (do the chains agree? what is the acceptance rate?).
Releasing k chains' states would cost k times the budget (composition); see
:func:`run_chains` for benchmarks that do that on purpose.
"""
from __future__ import annotations

import math

import numpy as np
from tqdm.auto import tqdm

from ..._validation import is_integer, is_real
from ...mechanisms import noise
from ...mechanisms.sampling import log_weights
from ...privacy.budget import Stage
from ..base import DEFAULT_DELTA, Selection, SelectionMethod, make_scorer, register_method
from ...losses import SquaredLoss

__all__ = ["DEFAULT_N_ITER", "run_chains", "mcmc_tv_bound", "mcmc_delta", "validate_mcmc",
           "select_mcmc", "ChainResult"]

#: Default number of Metropolis-Hastings steps per chain (the paper's p = 100 setting).
DEFAULT_N_ITER = 1000
# Random numbers are drawn per chain in blocks of this many iterations.
_BLOCK = 10_000

_NOT_USED = {
    "R": "R is the list length of top-R; MCMC moves over all supports",
    "eps0": "eps0 is the gap-test budget of method='mistakes'",
}


class ChainResult:
    """Final states and acceptance rates of a set of chains.

    Attributes
    ----------
    states : ndarray, shape (n_chains, s)
        Final support of every chain (sorted indices).
    acceptance : ndarray, shape (n_chains,)
        Fraction of proposals accepted.
    n_scored : int
        Distinct supports scored (size of the score cache).
    """

    def __init__(self, states, acceptance, n_scored):
        self.states, self.acceptance, self.n_scored = states, acceptance, n_scored


def _nth_outside(S, u):
    """The u-th (0-based) column not in S, for sorted rows S (m, s) and u (m,)."""
    j = u.copy()
    for k in range(S.shape[1]):
        j += S[:, k] <= j
    return j


def _run_block(score_batch, p, s, eps, Delta, n_iter, seeds, verbose=False):
    """Run len(seeds) chains in lockstep; chain c uses only np.random.default_rng(seeds[c])."""
    gens = [noise.child_generator(sd) for sd in seeds]
    C = len(gens)
    cache = {}

    def scores_of(S):
        keys = [tuple(row) for row in S.tolist()]
        new = [k for k in dict.fromkeys(keys) if k not in cache]
        if new:
            vals = score_batch(np.array(new, dtype=np.intp))
            cache.update(zip(new, map(float, vals)))
        return np.array([cache[k] for k in keys])

    S = np.array([noise.uniform_subset(p, s, g) for g in gens], dtype=np.intp).reshape(C, s)
    lw = log_weights(scores_of(S), eps, Delta)
    accepted = np.zeros(C, dtype=np.int64)
    rows = np.arange(C)
    bar = tqdm(total=n_iter, disable=not verbose, desc="mcmc", leave=False)
    done = 0
    while done < n_iter:
        m = min(_BLOCK, n_iter - done)
        drop = np.stack([noise.uniform_integers(s, g, m) for g in gens], axis=1)
        add = np.stack([noise.uniform_integers(p - s, g, m) for g in gens], axis=1)
        bits = np.stack([noise.uniform_bits(g, m) for g in gens], axis=1)  # exact acceptance
        for t in range(m):
            prop = S.copy()
            prop[rows, drop[t]] = _nth_outside(S, add[t])
            prop.sort(axis=1)
            lw_new = log_weights(scores_of(prop), eps, Delta)
            acc = noise.accept_exp(bits[t], lw_new - lw, gens)
            S[acc], lw[acc] = prop[acc], lw_new[acc]
            accepted += acc
        done += m
        bar.update(m)
    bar.close()
    return S, accepted / max(n_iter, 1), len(cache)


def run_chains(score_batch, p: int, s: int, eps: float, Delta: float, n_iter: int,
               n_chains: int, rng: np.random.Generator, n_jobs: int = 1,
               verbose: bool = False) -> ChainResult:
    """Run independent Metropolis-Hastings chains targeting exp(-eps c(S) / (2 Delta)).

    Parameters
    ----------
    score_batch : callable
        ``score_batch(supports (m, s)) -> scores (m,)``, exact scores c(S).
    p, s : int
    eps, Delta : float
        Budget and score sensitivity of the target exponential mechanism.
    n_iter, n_chains : int
    rng : numpy.random.Generator
        One seed per chain is drawn from it; chain c's draws come only from its own
        stream, so results do not depend on ``n_jobs``.
    n_jobs : int
        Processes (joblib) over which the chains are spread; 1 runs them here.
    verbose : bool
        tqdm progress over the iterations (sequential run only).

    Returns
    -------
    ChainResult

    Notes
    -----
    Each final state is one draw of the mechanism; releasing k of them spends k
    times the budget.
    """
    if p < 2 or not 1 <= s < p:
        raise ValueError(f"need 1 <= s < p, got p = {p}, s = {s}")
    seeds = noise.uniform_integers(2**63, rng, n_chains).tolist()
    if n_jobs == 1 or n_chains == 1:
        S, acc, ns = _run_block(score_batch, p, s, eps, Delta, n_iter, seeds, verbose)
        return ChainResult(S, acc, ns)
    from joblib import Parallel, delayed
    n_parts = n_chains if n_jobs == -1 else min(n_jobs, n_chains)
    parts = [list(a) for a in np.array_split(np.array(seeds, dtype=object), n_parts)]
    out = Parallel(n_jobs=n_jobs)(delayed(_run_block)(score_batch, p, s, eps, Delta, n_iter, part)
                                  for part in parts)
    return ChainResult(np.vstack([o[0] for o in out]), np.concatenate([o[1] for o in out]),
                       sum(o[2] for o in out))


# --------------------------------------------------------------------------- guarantee
def mcmc_tv_bound(n_iter: int, p: int, s: int, eps: float, Delta: float, b_y: float) -> float:
    """Certified worst-case total-variation distance to the target after ``n_iter`` steps.

    Doeblin bound (1 - C(p, s) q^L)^floor(n_iter / L) with q = exp(-K) / (s (p - s)),
    K = eps b_y^2 / (4 Delta) and L = max(min(s, p - s), 2); see the module notes.
    Public numbers only. Returns 1.0 (no bound) for p < 3.
    """
    if p < 3:
        return 1.0
    L = max(min(s, p - s), 2)
    K = eps * b_y ** 2 / (4.0 * Delta)
    log_alpha = math.log(math.comb(p, s)) - L * (K + math.log(s * (p - s)))
    alpha = math.exp(log_alpha) if log_alpha > -700 else 0.0
    if alpha <= 0.0:
        return 1.0
    if alpha >= 1.0:
        return 0.0
    return min(1.0, math.exp((n_iter // L) * math.log1p(-alpha)))


def mcmc_delta(eta: float, eps: float) -> float:
    """delta = (1 + e^eps) eta of a chain within TV eta of the eps-DP target (capped at 1)."""
    return min(1.0, (1.0 + math.exp(eps)) * eta)


def _iterations_needed(delta, p, s, eps, Delta, b_y):
    """Steps after which the certified bound reaches delta, or None if astronomically many."""
    if p < 3:
        return None
    L = max(min(s, p - s), 2)
    K = eps * b_y ** 2 / (4.0 * Delta)
    log_alpha = math.log(math.comb(p, s)) - L * (K + math.log(s * (p - s)))
    if log_alpha < -700:
        return None
    eta = delta / (1.0 + math.exp(eps))
    rounds = math.ceil(math.log(eta) / math.log1p(-min(math.exp(log_alpha), 1 - 1e-16)))
    return None if rounds > 1e15 else L * rounds


# --------------------------------------------------------------------------- method
def _int_option(name, value, lo):
    if not is_integer(value) or value < lo:
        raise ValueError(f"{name} must be an integer >= {lo}, got {value!r}")
    return int(value)


def validate_mcmc(options, *, s, eps, loss):
    """Check ``n_iter``, ``n_chains``, ``n_jobs`` and ``delta`` before any data are read."""
    opts = dict(options)
    for key in list(opts):
        if key in _NOT_USED:
            raise ValueError(f"method='mcmc' does not use {key}: {_NOT_USED[key]}")
    n_iter = _int_option("n_iter", opts.pop("n_iter", DEFAULT_N_ITER), 1)
    n_chains = _int_option("n_chains", opts.pop("n_chains", 1), 1)
    n_jobs = opts.pop("n_jobs", 1)
    if not (n_jobs == -1 or (is_integer(n_jobs) and n_jobs >= 1)):
        raise ValueError(f"n_jobs must be -1 (all cores) or an integer >= 1, got {n_jobs!r}")
    delta = opts.pop("delta", DEFAULT_DELTA)
    if not is_real(delta) or not 0 < delta < 0.5:
        raise ValueError(f"delta (the target of the (eps, delta) guarantee) must be a number in "
                         f"(0, 0.5), much smaller than 1/n; got {delta!r}")
    if opts:
        raise TypeError(f"method='mcmc' got unknown options {sorted(opts)}; "
                        "it takes 'n_iter', 'n_chains', 'n_jobs' and 'delta'")
    return dict(n_iter=n_iter, n_chains=n_chains, n_jobs=int(n_jobs), delta=float(delta))


def select_mcmc(req) -> Selection:
    """Run the chains and release the final state of chain 0."""
    opts = req.options
    d = req.design
    scorer, Delta = make_scorer(req)
    chains = run_chains(scorer.score, req.p, req.s, req.eps, Delta, opts["n_iter"],
                        opts["n_chains"], req.rng, n_jobs=opts["n_jobs"], verbose=req.verbose)
    eta = mcmc_tv_bound(opts["n_iter"], req.p, req.s, req.eps, Delta, d.b_y)
    delta_cert = mcmc_delta(eta, req.eps)
    target = opts["delta"]
    mech = f"Metropolis-Hastings exponential mechanism ({opts['n_iter']} steps, one chain released)"
    if delta_cert <= target:
        guarantee, delta = "approximate", delta_cert
        statement = (f"The selection's delta = (1 + e^eps) eta with eta = {eta:.3g}, a worst-case "
                     f"bound on the chain's distance to the exponential mechanism after "
                     f"{opts['n_iter']} steps.")
    else:
        guarantee, delta = "conditional", target
        need = _iterations_needed(target, req.p, req.s, req.eps, Delta, d.b_y)
        need = (f"about {need:.3g} steps" if need is not None
                else "an astronomically large number of steps")
        statement = (f"({req.eps:.4g}, {target:.3g})-DP only if the Markov chain has mixed to within total "
                     f"variation {target / (1 + math.exp(req.eps)):.3g} of the exponential "
                     f"mechanism after {opts['n_iter']} steps (Roy and Tewari 2023 show this "
                     f"with high probability under model assumptions); this was NOT checked. "
                     f"The worst-case bound would need {need}.")
    names = d.spec.candidate_names
    # Non-private: the chains' final states and their scores, best first.
    final = scorer.score(chains.states)
    order = np.argsort(final, kind="stable")
    req.ledger.spend(Stage.SELECTION, mech, req.eps, delta, guarantee=guarantee)
    return Selection(
        support=tuple(sorted(int(j) for j in chains.states[0])),
        statement=statement, sensitivity=Delta,
        certificates=[],
        diagnostics=dict(best_support=[names[j] for j in chains.states[order[0]]],
                         candidate_supports=[[names[j] for j in chains.states[i]] for i in order],
                         candidate_scores=final[order].copy(),
                         chain_supports=[[names[j] for j in S] for S in chains.states],
                         acceptance_rates=chains.acceptance.copy(),
                         certified_tv_bound=eta))


register_method(SelectionMethod(
    name="mcmc", select=select_mcmc, validate=validate_mcmc, losses=(SquaredLoss.name,),
    description="Metropolis-Hastings over supports targeting the exponential mechanism "
                "(Roy and Tewari 2023): (eps, delta)-DP only as far as the chain has mixed"))
