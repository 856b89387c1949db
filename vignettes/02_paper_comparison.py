# %% [markdown]
# # Reproducing the paper's comparison
#
# Prastakos, Behdin and Mazumder (NeurIPS 2025) compare their top-R and mistakes
# mechanisms with other private selection methods on simulated data, by the
# fraction of private releases that equal the true support (their Figure 1).
# `dpsubset.studies.experiments.recovery_study` runs that experiment for any method of the
# package. This vignette runs it at p = 100 on **the paper's model**, which has no
# intercept ("y ~ 0 + ."), with three choices of the score's radius r and ridge lam:
#
# * **paper**: the paper's values r = 1.1 and lam = 120;
# * **defaults**: the package's defaults, chosen from public quantities only: the
#   radius at which the largest prediction the ball allows equals the response
#   bound, r = b_y / (b_x sqrt(s)) = 0.447 here, and a small fixed ridge lam = 1
#   (docs/guide/choosing-settings.md);
# * **defaults + intercept**: the same defaults on "y ~ .", which adds a column of
#   ones with bound 1: the intercept's bound enters the sensitivity (and the radius
#   shrinks to 0.333), what fitting an intercept costs when the model has none.
#
# Run it with `python vignettes/02_paper_comparison.py`, or render it with
# `python vignettes/render.py vignettes/02_paper_comparison.py`.
# `DPSUBSET_VIGNETTE_QUICK=1` runs a small problem (p = 20, two sample sizes, one
# trial) instead of the full grid: the numbers are then only a smoke test.

# %%
import os
import time
import warnings

import pandas as pd

from dpsubset import Ball, Method
from dpsubset.studies.simulate import Simulation
from dpsubset.studies.experiments import (plot_recovery, recovery_study, recovery_table,
                                  summarize_recovery, threshold_n)

QUICK = os.environ.get("DPSUBSET_VIGNETTE_QUICK") == "1"
pd.set_option("display.width", 120)

# %% [markdown]
# ## The setting
#
# The paper's Section 5: rows x_i ~ N(0, Sigma) with Sigma_jk = 0.1^|j-k|, the
# true support {1, 3, 5, 7, 9} with coefficients 1/sqrt(5), Gaussian noise at a
# signal-to-noise ratio of 5; the data are clipped to the public bounds
# b_x = b_y = 0.5. Every release spends eps = 1 on selection alone (no refit).
#
# For top-R and the mistakes mechanisms the study does not sample releases: with
# `exact=True` it computes, from the exact candidate supports and the mechanism's
# own log-weights, the **exact probability** that a release equals the true support
# (and the expected F1). That is the number the paper's 50 draws per data set
# estimate, without their Monte Carlo noise. The methods:
#
# * `top_r`: the exact top-R mechanism (pure eps-DP);
# * `mistakes`: the mistakes mechanism behind this package's private gap test
#   (`gap_check="ptr"`, the default: (eps, delta)-DP with delta = 1e-6, a quarter
#   of the budget spent on the test);
# * `mistakes_assume`: the mistakes mechanism as in the paper, eps-DP only on
#   data whose best support wins by a margin that is assumed, not checked;
# * `samp_agg` and `dp_sis` (sampled releases): sample and aggregate with a Lasso
#   in each block (the paper's "Lasso Samp-Agg"), and private correlation
#   screening (Swope et al. 2024), which do not use r or lam (run once).

# %%
SETTINGS = {"paper": dict(ball=Ball(r=1.1, lam=120.0), intercept=False),
            "defaults": dict(ball=None, intercept=False),
            "defaults + intercept": dict(ball=None, intercept=True)}
exact_methods = {"top_r": "top_r", "mistakes": "mistakes",
                 "mistakes_assume": Method("mistakes", gap_check="assume")}
if QUICK:
    p, n_grid, trials, draws = 20, [800, 2000], 1, 10
else:
    p, n_grid, trials, draws = 100, [1000, 1500, 2000, 2500, 3000, 3500, 4000, 5000, 6000], 5, 50
frames = []
t0 = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore", RuntimeWarning)  # a skipped method is reported in the table
    for name, kw in SETTINGS.items():
        f = recovery_study(exact_methods, n_grid, p=p, s=5, trials=trials, eps=1.0,
                           model=Simulation(snr=5.0, rho=0.1), bounds=(0.5, 0.5), exact=True,
                           progress=False, random_state=2025, **kw)
        frames.append(f.assign(setting=name))
    base = recovery_study(["samp_agg", "dp_sis"], n_grid, p=p, s=5, trials=trials, draws=draws,
                          eps=1.0, model=Simulation(snr=5.0, rho=0.1), bounds=(0.5, 0.5), progress=False,
                          random_state=2025)
    frames.append(base.assign(setting="(no r, lam)"))
frame = pd.concat(frames, ignore_index=True)
print(f"{len(frame)} (setting, method, n, trial) rows, p = {p}, {trials} trials per point, "
      f"{time.perf_counter() - t0:.0f} s in total")
for name, g in frame.groupby("setting", sort=False):
    print(f"\n== {name}")
    print(recovery_table(g))

# %% [markdown]
# ## Rows needed: paper values, defaults, and the intercept

# %%
rows = []
for name, g in frame.groupby("setting", sort=False):
    n50, n90 = threshold_n(g, 0.5), threshold_n(g, 0.9)
    for m in n50.index:
        rows.append(dict(setting=name, method=m, **{"n(50%)": n50[m], "n(90%)": n90[m]}))
need = pd.DataFrame(rows)
print(need.pivot(index="method", columns="setting", values="n(90%)"))

# %%
import matplotlib.pyplot as plt

fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
tr = frame[frame.method.isin(["top_r", "mistakes_assume"])]
plot_recovery(tr.assign(method=tr.method + " [" + tr.setting + "]"), ax=axes[0])
plot_recovery(base, ax=axes[1])
axes[0].set_title(f"exact recovery probability, p = {p}, eps = 1")
axes[1].set_title("samp_agg and dp_sis (sampled releases)")
for ax in axes:
    ax.set_xticks(n_grid, [str(n) for n in n_grid], rotation=45)
    ax.minorticks_off()
axes[0].legend(fontsize=7)
fig.tight_layout()

# %% [markdown]
# ## Reading it
#
# (The numbers in this section are those of the full run,
# `python bench/study.py --p 100 --exact ...`, in docs/benchmarks/paper-comparison.md.)
#
# On the paper's model and with the paper's values, top-R passes 50 % of releases at
# n = 3500 and 90 % at n = 4000, and the paper's unchecked mistakes mechanism at
# 3000 and 3500. The package's defaults need about half the rows: top-R reaches 90 %
# at n = 2000 and the paper's mistakes at 2000 (50 % at 1500), and the package's
# private-gap-check mistakes at 2500 instead of 5000. The reason is in the
# sensitivity Delta = (b_y + r sqrt(B_s))^2 / (2n): at r = 1.1 the largest prediction
# the ball allows is 1.23, two and a half times the response bound, so Delta is
# 3.0 times that of the default radius, while on data clipped to |y| <= 0.5 the
# extra room buys almost no fit; and lam = 120 shrinks every support's fit alike,
# eating the score gap between the true support and its rivals at small n.
#
# Fitting an intercept that the model does not have ("y ~ ." on these data) costs
# rows: the column of ones has bound 1, twice the columns' 0.5, so the largest row
# norm over a support grows from sqrt(1.25) to 1.5, the default radius falls to
# 0.333 (the largest prediction stays b_y, so Delta is unchanged) and the intercept
# takes part of the ball, so that the true support's fit is a little worse. The
# defaults with an intercept sit between the two.
#
# The shape is the paper's: recovery jumps from none to nearly all releases over a
# narrow range of n, the paper's mistakes mechanism gets there before top-R, and
# the package's mistakes with a private gap test comes after top-R (the test takes
# a quarter of the budget). Below that range top-R releases supports no better than
# chance: the weight of all the supports outside the candidate list dominates until
# the score gaps are large compared with Delta. Private correlation screening
# (`dp_sis`), which the paper does not run, recovers the support from n = 1000:
# with nearly independent columns (rho = 0.1) and equal true coefficients the true
# columns have the largest marginal correlations with y, so screening each column
# separately needs far less noise than a choice among supports. Where marginal
# correlations mislead (a true column that is uncorrelated with y on its own, or
# strongly correlated columns) it fails where best subset selection does not
# (docs/methods/screening.md).
#
# The paper's Figure 1 reports good recovery at a few hundred rows at p = 10,000,
# far fewer than measured here at p = 100 with the paper's values; this package
# does not reproduce those sample sizes, and we do not know which setting of the
# published experiment differs from its description.
#
# At larger p the picture is the same (docs/benchmarks/paper-comparison.md, two data
# sets per n): top-R needs 6000 rows for 90 % at p = 1000 with the paper's values and
# 3000 with the defaults (4000 with an intercept), and at p = 10,000 it needs 8000
# and 4000 (5000 with an intercept): the defaults halve the rows at every p.
