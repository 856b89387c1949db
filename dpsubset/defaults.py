"""Default radius ``r`` and ridge ``lam`` of the scores, from public quantities only.

The selection scores of ``dp_best_subset`` are

    c(S) = min over ||beta|| <= r of (1/n) sum_i l(x_i' beta; y_i) + (lam / 2n) ||beta||^2,

and their sensitivity under row replacement is (1/n) times the range of one row's
loss over the ball, which depends on the data only through the public bounds:
|x_i' beta| <= a = r sqrt(B_s), with B_s the sum of the s largest squared candidate
bounds plus the squared bounds of the always-in columns (1 for the intercept). For
least squares, Delta = (b_y + a)^2 / (2n).

The radius (see docs/guide/choosing-settings.md)
-------------------------------------------------
A release is accurate when the score gap between the true support and its rivals
is large against Delta. Raising r raises Delta quadratically (least squares) but
buys fit only where the best coefficients on clipped data need predictions larger
than the ball allows. On data clipped to |y| <= b_y no useful prediction needs to
exceed b_y, so the default radius makes the largest possible prediction equal the
response bound:

    r = b_y / sqrt(B_s),       a = r sqrt(B_s) = b_y,

giving Delta = 2 b_y^2 / n for least squares, (b_y = 1 when every column and the
response are mapped to [-1, 1]: r = 1 / sqrt(s) without an intercept, 1 / sqrt(s + 1)
with one). The Huber loss follows its response bound in the same way.

The classification losses (logistic, hinge) have no response scale for the linear
predictor: it is a log-odds (or a margin), and their sensitivity grows only linearly
in a (a / n for the logistic loss, at most (1 + a) / n for the smoothed hinge), not
quadratically. The two stages want different balls (issue 27), so each has its own
default (``stage=``):

- the refit lets the largest linear predictor reach a log-odds of
  ``CLASSIFICATION_MAX_PREDICTION`` = 6 (probabilities 0.0025 to 0.9975), where the
  logistic loss is linear or zero to within 0.25 %: a = 6, r_refit = 6 / sqrt(B_s).
  With a small ball (a = 1) the refit cannot even express the intercept of an
  unbalanced outcome, and on the bundled Pima data it predicts the majority class at
  every eps (docs/guide/choosing-settings.md); its ridge is the objective
  perturbation's own minimum (``REFIT_RIDGE`` = 0 adds none);
- the selection uses a = ``CLASSIFICATION_SELECT_PREDICTION`` = 2, r = 2 / sqrt(B_s),
  with the ridge lam = max(1, 0.01 n, 2 k B_s ln C(p, s) / (a eps)), k = 2.5
  (:func:`classification_select_lam`), chosen by measured recovery (next section).

Both read only bounds, p, s, the loss, n and eps; never the data.

The classification selection
----------------------------
At a = 6 the selection's Delta is 3.6 (logistic) and 2.7 (hinge) times that of the
paper's r = 1.1 with an intercept and b_x = 0.5 (a = 1.65), and the larger ball adds
less to the score gaps than that: at p = 30, n = 3200, eps = 1 the exact probability
that top-R releases the true support was 0.10 (hinge) and 0.00 (logistic) against
0.85 and 0.02 for the paper's values; with lam = 1 the scores are also flat and the
search slow. Candidates measured with ``bench/losses_recovery.py`` (the paper's
classification data, s = 5, an intercept, b_x = 0.5, eps = 1; exact P(true support);
docs/guide/choosing-settings.md has the commands and every candidate):

- the ball, a in {1, 1.5, 1.65, 2, 3}: the hinge score keeps falling with the margin,
  so its ball binds on every support and wants room (n = 3200: a = 1: 0.66, a = 2:
  0.93, a = 3: 0.28); the logistic score pays Delta ~ a / n (a = 3: 0.13 at n = 4800
  where a = 1.65 had 0.98). a = 2 was the best for hinge and as good as any for logistic.
- the ridge: the hinge's recovery does not depend on it (its ball binds, so the ridge
  adds the same lam r^2 / 2n to every score); the logistic's falls as lam / n grows
  (a = 2, n = 3200: 0.78 at lam = 1, 0.33 at 80, 0.18 at 107; a = 1.65: 0.14 at 180),
  while the search slows as lam / n falls (p = 100, n = 6400: 22.5 s at lam = 30,
  1.2 s at 180; n = 3000, s = 8, rho = 0.8 timed out at lam = 100). The ridge moves a
  score by at most lam r^2 / (2n); the exponential mechanism singles out one of
  C(p, s) supports once the gap is a few Delta ln C(p, s) / eps; so the default is the
  ridge whose shift is k = 2.5 such units (67 pseudo-rows at p = 30, 102 at p = 100,
  195 at p = 100 with s = 8; eps = 1), and at least 1 % of the rows.

Exact P(true support), eps = 1 (p = 30: 10 data sets per n; p = 100: 3):

======== ===== ========================= ====== ====== ====== ====== ====== ===========
loss     p     setting                   n1     n2     n3     n4     n5     n for 90 %
======== ===== ========================= ====== ====== ====== ====== ====== ===========
                                         1600   2400   3200   4000   4800
hinge    30    defaults (a = 2, lam 67)  0.01   0.47   0.95   1.00   1.00   3200
hinge    30    r = 1.1, lam = 180        0.00   0.39   0.93   1.00   1.00   3200
logistic 30    defaults (a = 2, lam 67)  0.00   0.02   0.45   0.96   1.00   4000
logistic 30    r = 1.1, lam = 180        0.00   0.00   0.11   0.73   0.98   4800
                                         3200   4000   4800   6400
hinge    100   defaults (a = 2, lam 102) 0.24   0.89   1.00   1.00          4800
hinge    100   r = 1.1, lam = 180        0.13   0.76   1.00   1.00          4800
logistic 100   defaults (a = 2, lam 102) 0.00   0.02   0.63   1.00          6400
logistic 100   r = 1.1, lam = 180        0.00   0.01   0.48   1.00          6400
======== ===== ========================= ====== ====== ====== ====== ====== ===========

The Huber loss keeps the response rule in both stages: at p = 30 (10 data sets) it
recovers 0.98 at n = 1600 where the paper's r = 1.1, lam = 180 give 0.02 (90 % at 1600
rows against 2400).

Growing with the budget: the release converges to the user's own best subset
-----------------------------------------------------------------------------
The ball and the ridge are there for privacy: they bound one row's influence. On
real data they also change which support scores best. A response whose values sit
far from the centre of its public interval (a count recorded in [0, 30] with mean 3)
needs an intercept near -1 in mapped units; inside a ball of radius 1 / sqrt(s + 1)
the intercept cannot get there, and the score rewards columns that act as a second
intercept (a rare dummy) instead of the columns ordinary least squares would pick.
A column whose data fill a small part of its codebook range needs a large slope,
which the ball also cuts. And a ridge of one pseudo-row shrinks a low-variance
column (a rare dummy, a skewed percentage) by a visible fraction when n is a few
hundred.

How much the ball and the ridge may be relaxed depends on how much privacy noise the
release can absorb, which grows with the public product n eps (n rows, eps the
stage's budget). The ridge relaxes above ``RIDGE_DECAY_START`` = 10,000 and the ball
above ``RADIUS_GROWTH_START`` = 20,000:

    lam = max(0.01, min(1, 10,000 / (n eps)))
    A   = b_y * max(1, (n eps / 20,000)^(1/3))     (largest prediction, r = A / sqrt(B_s))

Why these rates. Delta = (b_y + A)^2 / (2n) for least squares, so the exponential
mechanism's exponent for a score gap g is eps g / (2 Delta) ~ g n eps / A^2: with
A ~ (n eps)^(1/3) it still grows like g (n eps)^(1/3), so the release concentrates
on the best-scoring support, while the ball grows without bound, so the best-scoring
support becomes the best subset of ordinary least squares with an unpenalised
intercept (the ridge falls to 0.01 pseudo-rows, a floor that keeps the exact
search's rank-one updates well conditioned). The ridge costs nothing in Delta, so it
relaxes first; the ball costs Delta, so it waits until the budget can pay for it
(on ISLR's Wage, which the fixed ball already fits, growing it from n eps = 10,000
at the rate 1/4 halved the share of near-best releases at eps = 7; the rule above
keeps it, and it still reaches the ball that diamonds and Boston need at eps = 50 and
500: docs/guide/choosing-settings.md). Below n eps = 10,000 nothing changes: there
the noise, not the ball, limits the release, and the paper-comparison cells (eps = 1,
n <= 10,000; docs/benchmarks/paper-comparison.md) keep their numbers. The rule reads
n, eps, the bounds and s: public numbers only, so Delta's proof
(docs/methods/selection.md) applies unchanged. The classification losses do not grow
with the budget (a = 2 and 6 at every n eps). The measured effect on real data sets is in
docs/benchmarks/real-data.md and docs/guide/choosing-settings.md.

The ridge
---------
The ridge lam enters the score as (lam / 2n) ||beta||^2, a penalty worth lam rows of
a unit-scale column. A ridge that grows with n (the former default 0.1 n) shrinks
every support towards zero alike and eats the score gap between them; the paper's
lam = 120 does the same at small n. A small ridge keeps the scores strictly
convex (the exact search's rank-one and rank-two updates need it) without acting
on the fit: ``DEFAULT_LAM = 1``, i.e. one pseudo-row, up to n eps = 10,000, and
less above (see the previous section). It never depends on the data.
"""
from __future__ import annotations

import math

import numpy as np

from .losses import CLASSIFICATION_LOSSES, DEFAULT_LOSS
from .privacy.sensitivity import largest_row_norm

__all__ = ["DEFAULT_LAM", "CLASSIFICATION_MAX_PREDICTION", "CLASSIFICATION_SELECT_PREDICTION",
           "CLASSIFICATION_SELECT_LAM_SHARE", "CLASSIFICATION_RIDGE_RESOLUTION",
           "REFIT_RIDGE", "STAGES", "RIDGE_DECAY_START", "RADIUS_GROWTH_START",
           "LAM_FLOOR", "REFIT_SPREAD_FACTOR", "default_radius", "default_lam", "classification_select_lam",
           "budget_growth", "support_refit_radius", "refit_radius_weight", "SUPPORT_RADIUS_START",
           "SUPPORT_RADIUS_FULL", "SUPPORT_RADIUS_CAP", "FIT_SPREAD_FACTOR", "FIT_CONFIDENCE_SDS",
           "reference_radius", "fitted_sd", "fitted_select_radius", "FIT_GROWTH_START"]

#: Default ridge of the scores: (lam / 2n) ||beta||^2 with lam = 1, one pseudo-row.
DEFAULT_LAM = 1.0
#: Largest linear predictor (log-odds or margin) the refit's default ball allows for the
#: classification losses: a = r_refit sqrt(B_s) = 6 (chosen on Pima's held-out accuracy).
CLASSIFICATION_MAX_PREDICTION = 6.0
#: The same for the selection's default ball: a = r sqrt(B_s) = 2 (chosen by measured
#: recovery; module docstring, "The classification selection").
CLASSIFICATION_SELECT_PREDICTION = 2.0
#: The selection's default ridge for the classification losses: this share of the rows
#: (at least 1 pseudo-row), :func:`classification_select_lam`.
CLASSIFICATION_SELECT_LAM_SHARE = 0.01
#: k in the classification selection's ridge: the ridge may move a score by k Delta
#: ln C(p, s) / eps (:func:`classification_select_lam`).
CLASSIFICATION_RIDGE_RESOLUTION = 2.5
#: The refit's default ridge floor: 0, i.e. the objective perturbation's own minimum
#: ridge 2 lambda / eps (Kifer, Smith and Thakurta 2012; docs/methods/refit.md).
REFIT_RIDGE = 0.0
#: The two stages that take a radius and a ridge.
STAGES = ("select", "refit")
#: n eps above which the default ridge of least squares and Huber falls (module docstring).
RIDGE_DECAY_START = 1e4
#: n eps above which their default ball grows, like (n eps)^(1/3) (module docstring).
RADIUS_GROWTH_START = 2e4
#: The smallest default ridge, in pseudo-rows.
LAM_FLOOR = 0.01
#: How many times sd(y) / sd(x) the refit's ball allows a slope of the released support
#: (:func:`support_refit_radius`; 1 is a simple regression's largest slope; 2 was measured
#: too: wider intervals, no fewer binding releases on the panel's tuning half).
REFIT_SPREAD_FACTOR = 1.0
#: The refit's n eps from which the support's radius starts to count, and from which it
#: counts in full (:func:`refit_radius_weight`): below, the refit's noise, which grows with
#: the radius, costs more than the ball's bias (docs/benchmarks/real-data.md, "third pass").
SUPPORT_RADIUS_START = 5e4
SUPPORT_RADIUS_FULL = 1e5
#: The support's radius is taken up to this many times the default one: a released column of
#: very small spread (a rare indicator) would otherwise ask for a ball whose noise swamps
#: every other coefficient of the refit.
SUPPORT_RADIUS_CAP = 4.0
#: The selection's ball on a centred design holds this many times the released spread of the
#: best support's fitted values (:func:`fitted_select_radius`). A column tightened to its mean
#: +- 3 sds has a spread of about 1/3 in mapped units, so a slope that gives the fitted values a
#: spread sd_fit is about 3 sd_fit; 4 leaves room for correlated columns. 3, 4 and 5 were
#: measured (docs/benchmarks/real-data.md, "Issue 36, fourth pass").
FIT_SPREAD_FACTOR = 4.0
#: Noise standard deviations added to the released explained variance (the score difference): the
#: selection's radius reads an upper confidence bound of the fitted values' spread, so the
#: noise makes the ball larger, rarely smaller.
FIT_CONFIDENCE_SDS = 2.0
#: The selection's n eps above which the fitted radius grows like (n eps)^(1/3), as the default
#: does above RADIUS_GROWTH_START: a best support of collinear columns needs many fitted
#: spreads (Hitters' career totals: 15), and without growth no budget would let the release
#: reach the least-squares best subset. Below it the growth would cost the weak signals.
FIT_GROWTH_START = 2e5


def budget_growth(n, eps, start=RIDGE_DECAY_START) -> float:
    """max(1, n eps / start): how far a stage's public budget is above the paper's regime.

    Parameters
    ----------
    n : int or None
        Number of rows (public under replace-one neighbours).
    eps : float or None
        The stage's privacy budget. None (or n None): 1, the fixed defaults.
    start : float
        The n eps at which the growth starts.
    """
    if n is None or eps is None or not (eps > 0 and math.isfinite(eps)):
        return 1.0
    return max(1.0, float(n) * float(eps) / start)


def _check_stage(stage):
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {STAGES}, got {stage!r}")


def default_lam(n=None, eps=None, loss=DEFAULT_LOSS, stage="select", x_bounds=None, s=None,
                forced_bounds=()) -> float:
    """The public default ridge of a stage.

    The selection's: 1 pseudo-row, relaxed to max(0.01, 10,000 / (n eps)) above
    n eps = 10,000 (least squares, Huber); for logistic and hinge
    max(1, 0.01 n, 5 B_s ln C(p, s) / (2 eps)) (:func:`classification_select_lam`, module
    docstring). The refit's: ``REFIT_RIDGE`` = 0, a floor under the objective
    perturbation's own ridge 2 lambda / eps, which it always uses.

    Parameters
    ----------
    n : int, optional
        Number of rows.
    eps : float, optional
        The budget of the stage that uses the ridge.
    loss : str
        ``"squared"``, ``"huber"``, ``"logistic"`` or ``"hinge"``.
    stage : {"select", "refit"}
    x_bounds, s, forced_bounds : optional
        The public bounds and support size (the classification selection's rule reads them).

    Examples
    --------
    >>> default_lam(2000, 1.0), default_lam(20000, 5.0)
    (1.0, 0.1)
    >>> default_lam(2000, 1.0, "logistic"), default_lam(2000, 1.0, "logistic", stage="refit")
    (20.0, 0.0)
    """
    _check_stage(stage)
    if stage == "refit":
        return REFIT_RIDGE
    if loss in CLASSIFICATION_LOSSES:
        return classification_select_lam(n, eps, x_bounds, s, forced_bounds)
    return max(LAM_FLOOR, DEFAULT_LAM / budget_growth(n, eps))


def default_radius(x_bounds, b_y, s, forced_bounds=(), loss=DEFAULT_LOSS, n=None, eps=None,
                   stage="select") -> float:
    """The public default radius: r = A / sqrt(B_s), with A = b_y (the largest prediction equals
    b_y) grown by (n eps / 20,000)^(1/3) above n eps = 20,000, for either stage; for the
    classification losses A = 2 in the selection (a log-odds of at most 2, chosen by measured
    recovery) and A = 6 in the refit (chosen by held-out accuracy).

    Parameters
    ----------
    x_bounds : array_like, shape (p,)
        Public bounds of the mapped candidate columns.
    b_y : float
        Public bound of the mapped response (ignored for the classification losses).
    s : int
        Support size.
    forced_bounds : array_like
        Bounds of the always-in columns (the intercept's is 1).
    loss : str
        ``"squared"``, ``"huber"``, ``"logistic"`` or ``"hinge"``.
    n, eps : int and float, optional
        Rows and the budget of the stage that uses the radius (the selection or the
        refit). Omitted: the fixed rule A = b_y.
    stage : {"select", "refit"}
        The stage that uses the radius (the rules differ for logistic and hinge only).

    Returns
    -------
    float
        r > 0 with r sqrt(B_s) = A (module docstring).

    Examples
    --------
    The paper's setting, b_x = b_y = 0.5, s = 5, no intercept: B_s = 5 / 4 and
    r = 0.5 / sqrt(1.25) = 0.447.

    >>> round(default_radius([0.5] * 100, 0.5, 5), 3)
    0.447
    >>> round(default_radius([0.5] * 100, 0.5, 5, forced_bounds=[1.0]), 3)
    0.333

    Real data at a large budget: 6,000 rows at eps = 50 give A = b_y 15^(1/3).

    >>> round(default_radius([1.0] * 8, 1.0, 2, forced_bounds=[1.0], n=6000, eps=50.0), 3)
    1.424

    Logistic, b_x = 0.5, s = 5, an intercept (sqrt(B_s) = 1.5): a = 2 and a = 6.

    >>> [round(default_radius([0.5] * 30, 1.0, 5, [1.0], "logistic", stage=st), 3) for st in STAGES]
    [1.333, 4.0]
    """
    _check_stage(stage)
    if loss in CLASSIFICATION_LOSSES:
        target = CLASSIFICATION_SELECT_PREDICTION if stage == "select" else CLASSIFICATION_MAX_PREDICTION
    else:
        target = float(b_y) * budget_growth(n, eps, RADIUS_GROWTH_START) ** (1.0 / 3.0)
    norm = largest_row_norm(x_bounds, s, forced_bounds)
    if not (norm > 0 and math.isfinite(norm) and target > 0 and math.isfinite(target)):
        raise ValueError("the default radius needs positive, finite public bounds; pass r= explicitly")
    return target / norm


def classification_select_lam(n=None, eps=None, x_bounds=None, s=None, forced_bounds=()) -> float:
    """The selection's default ridge for logistic and hinge (module docstring).

    lam = max(1, 0.01 n, 2 k B_s ln C(p, s) / (a eps)) with k = 2.5 and a = 2: the
    ridge moves a score by at most lam r^2 / (2n) = k (a / n) ln C(p, s) / eps, k times
    the logistic Delta = a / n times ln C(p, s) / eps (the score gap at which the
    exponential mechanism starts to single out one of C(p, s) supports), so it is as
    large as recovery allows, which keeps the exact search fast; and at least 1 % of
    the rows, for the same reason at large n.

    Parameters
    ----------
    n : int, optional
        Rows the selection sees (public).
    eps : float, optional
        The selection's budget.
    x_bounds : array_like, optional
        Public bounds of the candidate columns (p of them).
    s : int, optional
        Support size.
    forced_bounds : array_like
        Bounds of the always-in columns.

    Examples
    --------
    p = 100, s = 5, b_x = 0.5, an intercept (B_s = 2.25, ln C(100, 5) = 18.1), eps = 1:

    >>> round(classification_select_lam(3000, 1.0, [0.5] * 100, 5, [1.0]), 1)
    102.0
    """
    lam = DEFAULT_LAM
    if n is not None:
        lam = max(lam, CLASSIFICATION_SELECT_LAM_SHARE * float(n))
    if x_bounds is not None and s is not None and eps is not None and eps > 0 and math.isfinite(eps):
        p = len(np.atleast_1d(x_bounds))
        log_supports = math.lgamma(p + 1) - math.lgamma(s + 1) - math.lgamma(p - s + 1)
        B_s = largest_row_norm(x_bounds, s, forced_bounds) ** 2
        lam = max(lam, 2 * CLASSIFICATION_RIDGE_RESOLUTION * B_s * log_supports
                  / (CLASSIFICATION_SELECT_PREDICTION * eps))
    return lam


def support_refit_radius(y_sd, y_level, col_sds, col_levels, spread_factor=REFIT_SPREAD_FACTOR) -> float:
    """The refit's radius that least squares on a released support needs, from released numbers.

    In mapped units a least-squares slope is at most sd(y) / sd(x_j) where one column explains
    all of the response (a simple regression's slope is corr sd(y) / sd(x)); ``spread_factor``
    times that allows for correlated columns. The intercept is then at most
    |level(y)| + (slope bound) ||level(x_S)|| (the levels: the released means in mapped units,
    0 for a column centred at its mean). The radius is the norm of the two,

        r = hypot(|level(y)| + B ||level(x_S)||, B),   B = spread_factor sd(y) / min_j sd(x_j).

    Every input is released (the centring's means and spreads, the support), so the radius
    is public and may set the refit's noise (docs/methods/refit.md).

    Parameters
    ----------
    y_sd, y_level : float
        The response's released standard deviation and mean, in mapped units.
    col_sds, col_levels : array_like
        The same for the support's columns (the always-in columns other than the intercept
        included).
    spread_factor : float

    Returns
    -------
    float
        The radius, or NaN when a spread is not positive and finite (no rule then).

    Examples
    --------
    >>> round(support_refit_radius(0.3, 0.0, [0.3, 0.15], [0.0, 0.0]), 3)
    2.0
    """
    sds = np.asarray(col_sds, dtype=float)
    levels = np.asarray(col_levels, dtype=float)
    if sds.size == 0 or not (np.all(np.isfinite(sds)) and np.all(sds > 0) and math.isfinite(y_sd) and y_sd > 0
                            and np.all(np.isfinite(levels)) and math.isfinite(y_level)):
        return math.nan
    slope = float(spread_factor) * float(y_sd) / float(np.min(sds))
    intercept = abs(float(y_level)) + slope * float(np.linalg.norm(levels))
    return math.hypot(intercept, slope)


def reference_radius(y_sd, y_level, factor=None) -> float:
    """The ball at which the best support's score is released (mapped units): the radius
    :func:`fitted_select_radius` would give to a fit that explains all of the response,
    ``hypot(level(y), factor sd(y))``. Released numbers only (the centring's).

    Examples
    --------
    >>> round(reference_radius(0.25, 0.0), 3)
    1.0
    """
    if not (math.isfinite(y_sd) and y_sd > 0 and math.isfinite(y_level)):
        return math.nan
    factor = FIT_SPREAD_FACTOR if factor is None else factor  # read at call time (studies change it)
    return math.hypot(float(y_level), float(factor) * float(y_sd))


def fitted_sd(y_sd, explained, noise_scale, sds=None) -> float:
    """The spread of the best support's fitted values (mapped units), at an upper confidence
    bound, from the released score difference.

    For least squares with an intercept, 2 c(S) is the mean squared residual of S (the
    ridge's term aside) and 2 c(K) that of the intercept alone, the response's variance; the
    residuals are orthogonal to the fitted values, so var(fitted) = 2 (c(K) - c(S_1)). With
    the released D~ = c(K) - c(S_1) + Laplace(b),

        sd_fit = sqrt(clip(2 (D~ + sds sqrt(2) b), 0, sd(y)^2)).

    Parameters
    ----------
    y_sd : float
        The response's released standard deviation, in mapped units (a cap: the fitted
        values cannot vary more than the response).
    explained : float
        The released D~ (:mod:`dpsubset.selection.explained`).
    noise_scale : float
        Its Laplace scale b (public).
    sds : float, optional
        Noise standard deviations of the upper confidence bound (``FIT_CONFIDENCE_SDS``).

    Returns
    -------
    float
        NaN when an input is not finite (no rule then).

    Examples
    --------
    >>> round(fitted_sd(0.3, 0.005, 0.0), 3)
    0.1
    """
    if not (math.isfinite(y_sd) and y_sd > 0 and math.isfinite(explained) and math.isfinite(noise_scale)):
        return math.nan
    sds = FIT_CONFIDENCE_SDS if sds is None else sds
    var = 2.0 * (float(explained) + sds * math.sqrt(2.0) * float(noise_scale))
    return math.sqrt(min(max(var, 0.0), y_sd * y_sd))


def fitted_select_radius(r_default, fit_sd, y_sd, y_level, n, eps, factor=None) -> float:
    """The selection's radius from the released spread of the best support's fitted values
    (least squares, a centred design).

    The ball only has to hold the best support's coefficients: the intercept carries the
    response's level, and the slopes give the fitted values their spread, so in mapped units
    (columns of spread about 1/3) the coefficients' norm is about
    ``hypot(level(y), factor sd_fit)``, taken at least ``hypot(level(y), sd(y))`` (a fit that
    explains a sixteenth of the response's variance) so that a response without signal still
    gets a ball. A larger ball raises the scores' sensitivity,
    (b_y + r sqrt(B_s))^2 / (2n), for nothing; a smaller one binds and ranks supports by a
    question the user did not ask. So:

    - above the selection's n eps = ``FIT_GROWTH_START`` it grows like (n eps)^(1/3), as the
      default does, so that the release still reaches the least-squares best subset as the
      budget grows when that subset's columns are collinear and need a larger ball;
    - where this radius is below the public default (:func:`default_radius`), it is used;
    - where it is above, the default grows towards it as the selection's n eps goes from
      ``SUPPORT_RADIUS_START`` to ``SUPPORT_RADIUS_FULL`` (:func:`refit_radius_weight`, the
      same ramp as the refit's), with no jump: at small n eps the larger sensitivity costs
      more than the ball's bias.

    Parameters
    ----------
    r_default : float
        The public default radius of the selection.
    fit_sd, y_sd, y_level : float
        The fitted values' released spread (:func:`fitted_sd`), the response's released
        spread and level, in mapped units.
    n, eps : int, float
        The selection's rows and budget (public).
    factor : float, optional
        ``FIT_SPREAD_FACTOR`` by default.

    Returns
    -------
    float
        The radius (``r_default`` where the inputs give no rule).

    Examples
    --------
    >>> round(fitted_select_radius(1.2, 0.1, 0.3, 0.0, 5000, 10.0), 3)
    0.4
    >>> [round(fitted_select_radius(1.2, 0.5, 0.6, 0.0, n, 1.0), 3) for n in (5000, 10**5)]
    [1.2, 2.0]
    """
    if not (math.isfinite(fit_sd) and math.isfinite(y_sd) and math.isfinite(y_level)):
        return float(r_default)
    factor = FIT_SPREAD_FACTOR if factor is None else factor
    r_fit = math.hypot(float(y_level), max(float(factor) * float(fit_sd), float(y_sd)))
    r_fit *= budget_growth(n, eps, FIT_GROWTH_START) ** (1.0 / 3.0)
    if r_fit <= r_default:
        return r_fit
    return float(r_default) + refit_radius_weight(n, eps) * (r_fit - float(r_default))


def refit_radius_weight(n, eps) -> float:
    """How much of the support's radius the refit takes, from its public n eps: 0 up to
    ``SUPPORT_RADIUS_START``, 1 from ``SUPPORT_RADIUS_FULL``, linear between (no jump).

    The refit uses ``r_default + w max(0, min(r_support, SUPPORT_RADIUS_CAP r_default) -
    r_default)``. At small n eps the
    objective perturbation's noise, which grows with the radius, is the larger error, and the
    public default radius is kept; at large n eps that noise is small and a ball that binds
    (a biased release, intervals open on one side) is the larger one.

    >>> [refit_radius_weight(1000, e) for e in (10, 75, 200)]
    [0.0, 0.5, 1.0]
    """
    if n is None or eps is None or not (eps > 0 and math.isfinite(eps)):
        return 0.0
    x = float(n) * float(eps)
    return min(1.0, max(0.0, (x - SUPPORT_RADIUS_START) / (SUPPORT_RADIUS_FULL - SUPPORT_RADIUS_START)))
