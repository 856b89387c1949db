# %% [markdown]
# # Reproducing the paper's comparison
#
# Prastakos, Behdin and Mazumder (NeurIPS 2025) compare their top-R and mistakes
# mechanisms with other private selection methods on simulated data, by the
# fraction of private releases that equal the true support (their Figure 1 and
# the appendix figures). `dpsubset.experiments.recovery_study` runs that
# experiment for any method of the package. This vignette runs it at p = 100, a
# size that takes a few minutes on a laptop, and reads the result against the
# paper.
#
# Run it with `python vignettes/02_paper_comparison.py`, or render it with
# `python vignettes/render.py vignettes/02_paper_comparison.py`.
# `DPSUBSET_VIGNETTE_QUICK=1` runs two sample sizes, two trials and ten draws
# instead of the full grid (the numbers are then only a smoke test).

# %%
import os
import time
import warnings

import pandas as pd

from dpsubset.experiments import plot_recovery, recovery_study, recovery_table, summarize_recovery

QUICK = os.environ.get("DPSUBSET_VIGNETTE_QUICK") == "1"
pd.set_option("display.width", 120)

# %% [markdown]
# ## The setting
#
# The paper's Section 5: rows x_i ~ N(0, Sigma) with Sigma_jk = 0.1^|j-k|, the
# true support {1, 3, 5, 7, 9} with coefficients 1/sqrt(5), Gaussian noise at a
# signal-to-noise ratio of 5; the data are clipped to the public bounds
# b_x = b_y = 0.5; the scores use the radius r = 1.1 and the ridge lam = 120 (the
# paper's value at p = 100). Every release spends eps = 1 on selection alone (no
# refit). Per sample size n there are 10 trials (a fresh data set each) and 50
# releases per method and trial, as in the paper; a point of the plot is the
# mean over trials of the fraction of releases that are exactly the true support,
# with its standard error.
#
# The methods:
#
# * `top_r`: the exact top-R mechanism (pure eps-DP);
# * `mistakes`: the mistakes mechanism behind this package's private gap test
#   (`gap_check="ptr"`, the default: (eps, delta)-DP with delta = 1e-6, a quarter
#   of the budget spent on the test);
# * `mistakes_assume`: the mistakes mechanism as in the paper, eps-DP only on
#   data whose best support wins by a margin that is assumed, not checked;
# * `samp_agg`: sample and aggregate with a Lasso in each block (the paper's
#   "Lasso Samp-Agg");
# * `mcmc`: Metropolis-Hastings over supports (Roy and Tewari), one chain of
#   1000 iterations per release as in the paper's p = 100 experiments; its
#   guarantee holds only as far as the chain has mixed, which is not checked;
# * `dp_sis`: private correlation screening (Swope et al. 2024), which the paper
#   does not run.

# %%
methods = ["top_r", "mistakes", "mistakes_assume=mistakes", "samp_agg", "mcmc", "dp_sis"]
if QUICK:
    n_grid, trials, draws = [1000, 6000], 2, 10
else:
    n_grid, trials, draws = [500, 1000, 2000, 3000, 4000, 5000, 6000, 8000, 10000], 10, 50
t0 = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore", RuntimeWarning)  # a skipped method is reported in the table
    frame = recovery_study(methods, n_grid, p=100, s=5, trials=trials, draws=draws, eps=1.0,
                           snr=5.0, rho=0.1, bounds=(0.5, 0.5), r=1.1, lam=120.0,
                           method_options={"mistakes_assume": {"gap_check": "assume"},
                                           "mcmc": {"n_iter": 1000}},
                           n_jobs=1, progress=False, random_state=2025)
elapsed = time.perf_counter() - t0
print(f"{len(frame)} (method, n, trial) rows, {trials} trials x {draws} draws per point, "
      f"{elapsed:.0f} s in total")
print(recovery_table(frame))

# %%
import matplotlib.pyplot as plt

fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
plot_recovery(frame, ax=axes[0])
plot_recovery(frame, ax=axes[1], metric="f1")
axes[0].set_title("exact recovery, p = 100, s = 5, SNR = 5, eps = 1")
axes[1].set_title("F1 of the released support")
for ax in axes:
    ax.set_xscale("log")
    ax.set_xticks(n_grid, [str(n) for n in n_grid], rotation=45)
    ax.minorticks_off()
fig.tight_layout()

# %% [markdown]
# ## Reading it against the paper
#
# The paper's Figure 1(a) is drawn at p = 10,000 (this vignette uses p = 100),
# with n from a couple of hundred to about a thousand. Seed 001 of this project,
# a third-party summary of the paper, gives a table of approximate values **read
# off that figure** (they are not numbers printed in the paper), reproduced below
# next to what this page measures at the smallest sample sizes of its grid.

# %%
seed001 = pd.DataFrame(
    {"n=200": ["~15%", "~25%", "~5%", "<5%"], "n=400": ["~55%", "~70%", "~20%", "~10%"],
     "n=600": ["~85%", "~92%", "~45%", "~15%"], "n=800": ["~95%", "~98%", "~60%", "~20%"]},
    index=["top_r", "mistakes", "mcmc", "samp_agg"])
print("Seed 001 (p = 10,000, read off the paper's Figure 1(a)):")
print(seed001)
summary = summarize_recovery(frame)
here = summary.pivot(index="method", columns="n", values="recovery")
print("\nThis page (p = 100), mean exact recovery:")
print(here.round(2))

# %% [markdown]
# The two do not agree, and the difference goes the wrong way: p = 100 should
# be *easier* than p = 10,000 (far fewer wrong supports to hide among), yet here
# top-R and mistakes recover the support in none of the releases at n = 1000 or
# below, and need a few thousand rows. At full size (the table above on the
# rendered page, `vignettes/rendered/02_paper_comparison.md`) top-R recovers the support in
# about half of the releases at n = 5000 and in nearly all from n = 6000, which
# agrees with earlier measurements in this project (about 50 % near n = 5000,
# 100 % from n = 6000). The paper's own code did no better: run on its stated
# settings at p = 100, it recovered the support in 0 % of the releases for every
# n up to 1000 (a check made during the development of this package, not
# repeated on this page). So neither this implementation nor the authors' code
# reproduces the sample sizes of Figure 1 and of seed 001's table, and we do not
# know which setting of the published experiment differs from its description
# (the scaling of the data before clipping, the SNR convention and lam are
# candidates). Seed 001's numbers are themselves approximate readings of a
# figure, not values the paper reports.
#
# What does agree with the paper is the shape: recovery jumps from none to
# nearly all releases over a narrow range of n, and the paper's mistakes
# mechanism (`mistakes_assume` here) gets there before top-R (in the full run it
# passes 50 % at n = 4000 and 90 % at n = 5000, top-R at 6000), as the paper's
# theory and figures say. Below that range the F1 panel shows top-R and
# mistakes releasing supports no better than chance (F1 = 0.05, that of a
# support drawn uniformly from the 100 columns): as on Hitters in the first
# vignette, the weight of all the supports outside the candidate list dominates
# until the score gaps are large compared with the sensitivity. Sample and
# aggregate and MCMC degrade more gracefully, with partly correct supports.
# Two results go beyond the paper:
#
# * this package's default `mistakes`, whose guarantee does not rest on an
#   unchecked assumption, comes *after* top-R (full recovery only from n = 8000):
#   its private gap test takes a quarter of the budget, and the release (by
#   mistakes, or by top-R when the test fails) gets only the other three quarters;
# * private correlation screening (`dp_sis`), which the paper does not run,
#   recovers the support from n = 1000 on. With nearly independent columns
#   (rho = 0.1) and equal true coefficients, the five true columns have the
#   largest correlations with y, and screening scores each column separately,
#   so it needs far less noise than a choice among supports. With strongly
#   correlated columns, or true coefficients that cancel in the marginal
#   correlations, screening fails where best subset selection does not, so this
#   setting flatters it.
#
# Of the paper's baselines, sample and aggregate (`samp_agg`) is the slowest to
# reach full recovery (94 % at n = 10,000), as in the paper, although at
# n = 3000 and 4000 it is ahead of top-R, which has then not yet started. The
# MCMC chain also rises before top-R (about 70 % at n = 4000) but levels off
# near 80 %: 1000 single-swap steps from a random start do not always reach the
# best support, the same mixing that its privacy guarantee depends on. From
# n = 6000 on, top-R and the paper's mistakes are ahead of both baselines (the
# package's `mistakes` from n = 8000), which is the paper's conclusion, reached
# here at sample sizes several times larger than in its figure.
