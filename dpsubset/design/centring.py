"""The design's private centre and spread: each codebook column recentred, and its box tightened.

One job: release, at a small share of eps, where each column bounded by a codebook interval
(and each dummy) lies inside its interval, and turn that release into the public clip box and
map that every later stage reads (selection, refit, inference, predictions).

Why (issue 36; docs/methods/centring.md). The scores and the refit live in mapped units where
each column's codebook interval is [-1, 1] and the intercept is a column of ones inside the same
ball ||beta|| <= r. On real data two things then go wrong:

- a column whose values sit near one end of its interval is nearly a constant, a second
  intercept: where the level of the response needs more of the ball than it has, such a column
  wins a place in the support with a sign that serves the level, not the slope;
- a column whose values fill a small part of an honest interval needs a large coefficient in
  mapped units, so the ball binds: the best-scoring support is not the least-squares best, and
  the refit is shrunk.

The release
-----------
For every eligible column j (a model-matrix column whose box is public: an interval of the
codebook, one derived from it, or a dummy's coding range; and the response, for the
regression losses) the values clipped to the codebook box [lo, hi] are put on [0, 1],
z = (x - lo) / (hi - lo), and two means are released with Laplace noise:

- m_j = mean(z), sensitivity 1/n under the replacement of one row (z lies in [0, 1]);
- v_j = mean(z (1 - z)), sensitivity 1/(4n) (z (1 - z) lies in [0, 1/4]); not for dummies,
  whose spread follows from their mean.

The response gets half of the stage's eps (its centre and spread set the scale of every score
and of the sensitivity), split between its two releases; the columns share the other half
equally, each column's part split between its releases. By basic composition the stage is
eps_centre-DP, and everything below is post-processing of the released numbers.

From the release (post-processing, no data read):

- the spread, var = m - m^2 - v (so E z^2 = m - v), taken at an upper confidence bound (three
  noise standard deviations above), so a noisy release tightens less, never more;
- the box tightened to m +- k sd (k = ``spreads``, default 3) inside [0, 1], but only where the
  column is not two-point-like: v / (m (1 - m)) = 1 - var / (m (1 - m)) is 0 for a column
  whose values sit at the two ends of its interval (a 0/1 column) and near 1 for a column that
  fills little of it; a box is tightened only where v - k m (1 - m) (k = ``min_interior``,
  default 0.5) is positive at a lower confidence bound of its own noise, so that a rare
  indicator is not cut;
- the centre m (in the user's units lo + m (hi - lo)), clamped into the box, and the half-width
  h = max(hi' - centre, centre - lo'): the column maps to (x - centre) / h, inside [-1, 1], so
  its mapped bound stays 1 and every sensitivity of the later stages holds unchanged (they hold
  for any public box fixed before they read the data, and this one is released);
- never wider than the codebook: where h would exceed the codebook's half-width (an off-centre
  column whose box was not tightened, because the data fill it or the release is too noisy to
  say), centring at the mean would shrink the column's spread in mapped units, which costs more
  than the off-centre level (measured: docs/benchmarks/real-data.md); the column then maps by
  the midpoint of its (released) box instead. Dummies and columns that the release shows to be
  two-point (a 0/1 indicator under an interval bound: an upper confidence bound of the ratio
  above under 1/4) are always centred at their means, so that a 0/1 column is treated the same
  whether it is coded as a factor or as a number.

The estimand is the regression on the columns clipped to the released boxes (winsorised where
a box was tightened); the result lists every released box and centre (``res.centring``).

What is not centred: a model without an intercept (a shift would change the model), columns
with a scalar bound (the paper's setting, clipped to [-b, b] and not rescaled), bounds taken
from the data (not private anyway), and the response of the classification losses (a -1/+1
coding).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._validation import check_positive
from ..privacy.budget import Stage
from .clip import _apply_limits, _interval_map, _limits, _row_blocks
from .formula import _INTERCEPT

__all__ = ["CentreSettings", "CentreRequest", "ColumnCentre", "DEFAULT_CENTRE_SHARE", "check_centre",
           "release_centres", "codebook_has_intervals", "laplace_release", "centring_frame", "mapped_moments"]

#: Share of the call's eps spent on the centre and spread of the columns (taken off the top).
DEFAULT_CENTRE_SHARE = 0.1
#: Half-width of a tightened box, in released standard deviations of the column.
DEFAULT_SPREADS = 3.0
#: Smallest lower confidence bound of v / (m (1 - m)) at which a box is tightened.
DEFAULT_MIN_INTERIOR = 0.5
#: Share of the stage's eps spent on the response (its centre and spread decide the scale of
#: every score and of the sensitivity; the columns share the rest).
DEFAULT_RESPONSE_SHARE = 0.5
#: Share of the call's eps spent, after the design, on the best support's fit (least squares
#: with the response centred: :mod:`dpsubset.selection.explained`), on top of the means and
#: spreads' ``share``. Where no fit is planned (public settings) it is not taken.
DEFAULT_FIT_SHARE = 0.02
#: Noise standard deviations between a released number and the confidence bound that is used.
_CONFIDENCE_SDS = 3.0


@dataclass(frozen=True)
class CentreSettings:
    """The settings of the centring stage (``dp_best_subset(centre=...)``).

    Attributes
    ----------
    share : float
        Share of the call's eps spent here, in (0, 0.5].
    tighten : bool
        Whether boxes may be tightened to the released spread (False: centre only).
    spreads : float
        Half-width of a tightened box in released standard deviations (k above).
    min_interior : float
        A box is tightened only where v - min_interior m (1 - m) is positive at a lower
        confidence bound (0: wherever the release shows values inside the interval at all;
        1: never tighten).
    response : bool
        Whether the response is centred too (False: the columns only; for studies).
    response_share : float
        The response's share of the stage's eps (the columns share the rest).
    widen : bool
        Allow a column's map to be wider than its codebook's (for studies; measured worse:
        docs/benchmarks/real-data.md, "The centring").
    fit_share : float
        The share of the call's eps, on top of ``share``, spent on how much of the response's
        spread the best support explains (least squares with the response centred; it sets the
        selection's radius: docs/methods/centring.md, "The best support's fit"). 0: not
        released, and the selection keeps the default radius. Where the response turns out not
        to be centred, the means and spreads get it.
    response_spreads : float
        The response's tightened box in released standard deviations, where it differs from
        the columns' ``spreads`` (None: the same; for studies: a wider box for the response alone
        was measured worse, docs/benchmarks/real-data.md, "Issue 36, fifth pass").
    """

    share: float = DEFAULT_CENTRE_SHARE
    tighten: bool = True
    spreads: float = DEFAULT_SPREADS
    min_interior: float = DEFAULT_MIN_INTERIOR
    response: bool = True
    response_share: float = DEFAULT_RESPONSE_SHARE
    widen: bool = False
    fit_share: float = DEFAULT_FIT_SHARE
    response_spreads: float | None = None


def check_centre(centre, bounds):
    """The ``centre=`` argument as :class:`CentreSettings`, or None (no centring); no data read.

    Parameters
    ----------
    centre : None, bool or dict
        None (the default): centre when the codebook has an interval (``bounds`` with an
        interval anywhere), not otherwise (scalar bounds are the paper's setting, which is
        not rescaled). True: centre (if there is nothing to centre, nothing is spent).
        False: never. A dict: True with these settings (the fields of
        :class:`CentreSettings`).
    bounds : Bounds or None
        The call's bounds (already normalised by :func:`dpsubset.design.codebook.as_bounds`).
    """
    if centre is None:
        return CentreSettings() if codebook_has_intervals(bounds) else None
    if isinstance(centre, bool):
        return CentreSettings() if centre else None
    if not isinstance(centre, dict):
        raise TypeError(f"centre: expected None, True, False or a dict of settings "
                        f"(share, tighten, spreads, min_interior); got {type(centre).__name__}")
    unknown = set(centre) - {"share", "tighten", "spreads", "min_interior", "response", "response_share",
                             "widen", "fit_share", "response_spreads"}
    if unknown:
        raise ValueError(f"centre: unknown setting(s) {sorted(unknown)}; valid: share, tighten, spreads, "
                         "min_interior, response, response_share, widen, fit_share, response_spreads")
    kw = {}
    if "share" in centre:
        share = check_positive("centre['share']", centre["share"])
        if share > 0.5:
            raise ValueError(f"centre['share'] = {share} would leave less than half of eps to the selection "
                             "and the refit; use a share in (0, 0.5] (default 0.1)")
        kw["share"] = share
    if "tighten" in centre:
        if not isinstance(centre["tighten"], (bool, np.bool_)):
            raise TypeError("centre['tighten']: expected True or False")
        kw["tighten"] = bool(centre["tighten"])
    if "response_share" in centre:
        rs = centre["response_share"]
        if isinstance(rs, bool) or not isinstance(rs, (int, float)) or not 0 < rs < 1:
            raise ValueError(f"centre['response_share']: expected a number in (0, 1); got {rs!r}")
        kw["response_share"] = float(rs)
    if "widen" in centre:
        kw["widen"] = bool(centre["widen"])
    if "fit_share" in centre:
        fs = centre["fit_share"]
        if isinstance(fs, bool) or not isinstance(fs, (int, float)) or not 0 <= fs < 1:
            raise ValueError(f"centre['fit_share']: expected a number in [0, 1) (0: no fit released); got {fs!r}")
        kw["fit_share"] = float(fs)
    if "response" in centre:
        kw["response"] = bool(centre["response"])
    if "spreads" in centre:
        kw["spreads"] = check_positive("centre['spreads']", centre["spreads"])
    if "response_spreads" in centre:
        kw["response_spreads"] = check_positive("centre['response_spreads']", centre["response_spreads"])
    if "min_interior" in centre:
        mi = centre["min_interior"]
        if isinstance(mi, bool) or not isinstance(mi, (int, float)) or not 0 <= mi <= 1:
            raise ValueError(f"centre['min_interior']: expected a number in [0, 1]; got {mi!r}")
        kw["min_interior"] = float(mi)
    out = CentreSettings(**kw)
    if out.share + out.fit_share > 0.5:
        raise ValueError(f"centre: share + fit_share = {out.share + out.fit_share:g} would leave less than half of "
                         "eps to the selection and the refit; keep the two within 0.5 (defaults 0.1 and 0.02)")
    return out


def codebook_has_intervals(bounds):
    """Whether a :class:`Bounds` holds an interval (lo, hi) anywhere (a codebook, not the
    paper's scalar bounds)."""
    if bounds is None:
        return False
    entries = list(bounds.x.values()) if isinstance(bounds.x, dict) else [bounds.x]
    return any(isinstance(b, tuple) for b in entries + [bounds.y, bounds.default])


@dataclass(frozen=True)
class CentreRequest:
    """What the design stage needs to centre: the settings, the stage's eps, the generator
    and the ledger it spends from (the stage ``"centring"``), and the part of eps kept for
    the best support's fit where the response is centred (0: none; the caller releases it)."""

    settings: CentreSettings
    eps: float
    rng: object = field(repr=False)
    ledger: object = field(repr=False)
    fit_eps: float = 0.0


@dataclass(frozen=True)
class ColumnCentre:
    """The public record of one centred column (released values, in the user's units).

    Attributes
    ----------
    name : str
    codebook : (float, float)
        The codebook's box.
    box : (float, float)
        The box the stages use (tightened or the codebook's).
    centre : float
        The released centre.
    tightened : bool
    sd : float
        The released standard deviation of the codebook-clipped column, in the user's units
        (post-processing of the released mean and spread: sqrt(max(m - m^2 - v, 0)) times the
        codebook's width; sqrt(m (1 - m)) times it where only the mean is released, a dummy's).
        NaN in records made before it was kept.
    mean : float
        The released mean of the codebook-clipped column, in the user's units (the centre
        differs where the column maps by its box's midpoint). NaN in older records.
    fitted_sd : float
        The response's row only: the standard deviation of the best support's fitted values,
        in the user's units, at an upper confidence bound, from the released score difference
        c(K) - c(S_1) (:mod:`dpsubset.selection.explained`). NaN for the columns, and where no fit was
        released.
    """

    name: str
    codebook: tuple
    box: tuple
    centre: float
    tightened: bool
    sd: float = math.nan
    mean: float = math.nan
    fitted_sd: float = math.nan


def centring_frame(records):
    """The public record as a table: one row per centred column, in the user's units (the
    codebook's box, the box used, the centre of the map, the released mean and standard
    deviation, whether the box was tightened, and for the response the released spread of the
    best support's fitted values)."""
    import pandas as pd

    recs = tuple(records or ())
    # a record pickled before the mean and sd were kept reads their class defaults, NaN
    return pd.DataFrame([[r.codebook[0], r.codebook[1], r.box[0], r.box[1], r.centre, r.mean, r.sd,
                          bool(r.tightened), r.fitted_sd]
                         for r in recs], index=pd.Index([r.name for r in recs], name="column"),
                        columns=["codebook_lo", "codebook_hi", "box_lo", "box_hi", "centre", "mean", "sd",
                                 "tightened", "fitted_sd"])


def mapped_moments(records, column_maps, names):
    """The released standard deviations and means of ``names`` in mapped units, the intercept
    (a constant: no spread, nothing released) left out.

    Parameters
    ----------
    records : tuple of ColumnCentre
        The release (``DesignSpec.centring``).
    column_maps : dict
        {name: (centre, half-width)}: the maps the stages use.
    names : sequence of str

    Returns
    -------
    sds, levels : ndarray
        sd / half-width and (mean - centre) / half-width of each name but the intercept, in
        order; NaN for a name the release does not cover (post-processing of released
        numbers only).
    """
    by_name = {r.name: r for r in records or ()}
    names = [c for c in names if c != _INTERCEPT]
    sds, levels = np.full(len(names), np.nan), np.full(len(names), np.nan)
    for k, c in enumerate(names):
        rec = by_name.get(c)
        if rec is None or c not in column_maps:
            continue
        centre, half = column_maps[c]
        if half > 0:  # a record pickled before the mean and sd were kept has the defaults, NaN
            sds[k] = rec.sd / half
            levels[k] = (rec.mean - centre) / half
    return sds, levels


def _eligible(names, clip_limits, specs_interval, coded):
    """The columns with a public interval box (a codebook interval or a dummy's coding range)."""
    out = []
    for c in names:
        lo, hi = clip_limits[c]
        if (c in specs_interval or c in coded) and math.isfinite(lo) and math.isfinite(hi) and hi > lo:
            out.append(c)
    return out


def release_centres(source, y_raw, names, response_name, clip_limits, column_maps, interval_columns,
                    coded, request, n):
    """Release the centres and spreads and return the new boxes and maps.

    Parameters
    ----------
    source : dpsubset.design.frames._ColumnSource
        The raw model-matrix columns (read in row blocks).
    y_raw : ndarray or None
        The raw response (None: the response is not centred).
    names : list of str
        The model-matrix columns other than the intercept.
    response_name : str
    clip_limits, column_maps : dict
        The codebook's boxes and maps (not modified).
    interval_columns : set of str
        Columns (and the response) whose bound is a public interval.
    coded : set of str
        Dummy columns (box: their coding's range; centred, never tightened).
    request : CentreRequest
    n : int

    Returns
    -------
    clip_limits, column_maps : dict
        Copies with the centred columns' boxes and maps replaced.
    record : tuple of ColumnCentre
        The public record (empty: nothing was centred and nothing spent).
    """
    cols = _eligible(names, clip_limits, interval_columns, coded)
    with_y = (y_raw is not None and request.settings.response and response_name in interval_columns
              and math.isfinite(clip_limits[response_name][0]))
    if not cols and not with_y:
        return clip_limits, column_maps, ()
    st = request.settings
    tight = [c for c in cols if c not in coded and st.tighten] + ([response_name] if with_y and st.tighten else [])
    all_cols = cols + ([response_name] if with_y else [])
    is_tight = np.array([c in tight for c in all_cols], dtype=bool)
    # with the response centred, the caller releases the best support's fit from the rest
    eps_stage = request.eps - request.fit_eps if with_y else request.eps
    eps_mean, eps_spread = _parts(eps_stage, len(cols), with_y, is_tight, st.response_share)
    sums, interior = _sums(source, cols, clip_limits, column_maps, n)
    if with_y:
        lo, hi = clip_limits[response_name]
        z = (np.clip(y_raw, lo, hi) - lo) / (hi - lo)
        sums = np.append(sums, float(np.sum(z)))
        interior = np.append(interior, float(np.sum(z * (1.0 - z))))
    b_mean = 1.0 / (n * eps_mean)           # Laplace scales: a mean of z in [0, 1]
    b_interior = np.zeros(len(all_cols))    # ... and of z (1 - z) in [0, 1/4] (where released)
    b_interior[is_tight] = 0.25 / (n * eps_spread[is_tight])
    m = laplace_release(sums / n, b_mean, request.rng)
    v = np.full(len(all_cols), np.nan)  # released for the columns that may be tightened only
    v[is_tight] = laplace_release(interior[is_tight] / n, b_interior[is_tight], request.rng)
    request.ledger.spend(Stage.CENTRING, "Laplace: column means" + (" and spreads" if tight else ""),
                         float(np.sum(eps_mean)) + float(np.sum(eps_spread[is_tight])), guarantee="pure")
    clip_limits, column_maps = dict(clip_limits), dict(column_maps)
    record = []
    for j, c in enumerate(all_cols):
        lo, hi = clip_limits[c]
        spreads = st.response_spreads if c == response_name and st.response_spreads else st.spreads
        z_lo, z_hi, z_c, two_point = _released_box(m[j], v[j], b_mean[j], b_interior[j], is_tight[j], st,
                                                   spreads)
        new_lo = lo + z_lo * (hi - lo) if z_lo > 0 else lo
        new_hi = lo + z_hi * (hi - lo) if z_hi < 1 else hi
        new_lo, new_hi = max(lo, min(new_lo, hi)), min(hi, max(new_hi, lo))
        centre = min(max(lo + z_c * (hi - lo), new_lo), new_hi)
        half = max(new_hi - centre, centre - new_lo)
        if not (st.widen or two_point or c in coded) and half > column_maps[c][1]:
            # centring at the mean would map the column onto a wider half-width than its
            # codebook's, shrinking its spread in mapped units: take the released box's
            # midpoint instead (as centred as the box allows, never wider than the codebook)
            centre, half = _interval_map(new_lo, new_hi, True)
        if not half > 0:  # a box that collapsed (cannot happen with the floors below): keep the codebook
            new_lo, new_hi = lo, hi
            centre, half = _interval_map(lo, hi, True)
        clip_limits[c] = (float(new_lo), float(new_hi))
        column_maps[c] = (float(centre), float(half))
        record.append(ColumnCentre(name=c, codebook=(float(lo), float(hi)), box=clip_limits[c],
                                   centre=float(centre), tightened=(new_lo > lo or new_hi < hi),
                                   sd=_released_sd(m[j], v[j], hi - lo),
                                   mean=float(lo + min(max(m[j], 0.0), 1.0) * (hi - lo))))
    return clip_limits, column_maps, tuple(record)


def _released_sd(m, v, width):
    """The standard deviation in the user's units from the released m and v of z on [0, 1]
    (post-processing): sqrt(max(m - m^2 - v, 0)) times the codebook's width; where no v is
    released (dummies), the two-point value sqrt(m (1 - m))."""
    z = min(max(float(m), 0.0), 1.0)
    var = z * (1.0 - z) if not math.isfinite(v) else max(z - z * z - float(v), 0.0)
    return math.sqrt(var) * float(width)


def _parts(eps, k, with_y, is_tight, response_share):
    """The eps of each column's mean and spread (arrays over the columns, then the response).

    The response gets ``response_share`` of ``eps`` (all of it without columns, none without a
    response), split equally between its mean and its spread; each column gets an equal part of
    the rest, split equally between its mean and, where it may be tightened, its spread. The
    parts add up to ``eps`` (basic composition)."""
    y_share = (1.0 if k == 0 else response_share) if with_y else 0.0
    eps_mean, eps_spread = np.zeros(len(is_tight)), np.zeros(len(is_tight))
    if k:
        per_col = (1.0 - y_share) * eps / k
        tight_x = is_tight[:k]
        eps_mean[:k] = np.where(tight_x, per_col / 2, per_col)
        eps_spread[:k] = np.where(tight_x, per_col / 2, 0.0)
    if with_y:
        y_eps = y_share * eps
        eps_mean[k] = y_eps / 2 if is_tight[k] else y_eps
        eps_spread[k] = y_eps / 2 if is_tight[k] else 0.0
    return eps_mean, eps_spread


def laplace_release(values, scales, rng):
    """``values`` plus independent Laplace noise of the given ``scales`` (the only draw here).

    eps-DP for a vector whose entries move by at most ``sens_j`` between neighbours when
    sum_j sens_j / scales_j <= eps (tests/audit/test_centring_audit.py checks this sum on the
    real pipeline through this function). Each entry is released by the package's exact
    sampler (:func:`dpsubset.mechanisms.noise.laplace_release`: a discrete Laplace on a public
    grid, immune to the floating-point attack of Mironov 2012)."""
    from ..mechanisms.noise import laplace_release as exact_release

    values = np.atleast_1d(np.asarray(values, dtype=float))
    scales = np.broadcast_to(np.asarray(scales, dtype=float), values.shape)
    return np.array([float(exact_release(float(v), float(b), rng)) for v, b in zip(values, scales)])


#: Largest upper confidence bound of v / (m (1 - m)) at which a column counts as two-point (its
#: values at the two ends of its interval): it is then centred at its mean, as a dummy is.
_TWO_POINT = 0.25

#: The narrowest tightened box, as a share of the codebook's width (a floor against a box that
#: the noise would make degenerate).
_MIN_BOX = 1e-3


def _released_box(m, v, b_mean, b_interior, may_tighten, st, spreads):
    """(z_lo, z_hi, z_centre, two_point) on [0, 1] from the released m and v (post-processing
    only). ``two_point``: the release shows, with confidence, a column whose values sit at the
    two ends of its interval (a 0/1 indicator under an interval bound), which is centred as a
    dummy is. A tightened box is m +- ``spreads`` released sds (the settings' ``spreads``, or
    ``response_spreads`` for the response)."""
    z_c = min(max(m, 0.0), 1.0)
    if not may_tighten:
        return 0.0, 1.0, z_c, False
    sd_m = math.sqrt(2.0) * b_mean            # standard deviation of the Laplace noise on m
    sd_v = math.sqrt(2.0) * b_interior        # ... and on v
    # two-point-like columns (a 0/1 indicator, or values at both ends) are never cut: the box
    # is tightened only where v - k m (1 - m) (k = min_interior; 0 for a two-point column) is
    # positive at a lower confidence bound of the one combined statistic (its noise sd from
    # both releases, independent). Bounding v below and m (1 - m) above separately, each at
    # three sds, asked for about six sds together and left a skewed response untightened in
    # a third of the releases at n eps ~ 30,000 (docs/benchmarks/real-data.md).
    m_hi = min(max(z_c + _CONFIDENCE_SDS * sd_m, 0.0), 1.0)
    m_lo = min(max(z_c - _CONFIDENCE_SDS * sd_m, 0.0), 1.0)
    excess = v - st.min_interior * z_c * (1.0 - z_c)
    excess_sd = math.hypot(sd_v, st.min_interior * abs(1.0 - 2.0 * z_c) * sd_m)
    if z_c * (1.0 - z_c) <= 0 or excess - _CONFIDENCE_SDS * excess_sd < 0:
        spread_min = min(m_hi * (1 - m_hi), m_lo * (1 - m_lo))
        two_point = spread_min > 0 and v + _CONFIDENCE_SDS * sd_v < _TWO_POINT * spread_min
        return 0.0, 1.0, z_c, bool(two_point)
    # the variance at an upper confidence bound: var = m - m^2 - v, d var / d m = 1 - 2 m
    slope = max(abs(1 - 2 * m_lo), abs(1 - 2 * m_hi))
    var_up = max(z_c - z_c * z_c - v, 0.0) + _CONFIDENCE_SDS * math.hypot(slope * sd_m, sd_v)
    half = max(spreads * math.sqrt(var_up), _MIN_BOX / 2)
    return max(0.0, z_c - half), min(1.0, z_c + half), z_c, False


def _sums(source, cols, clip_limits, column_maps, n):
    """(sum of z, sum of z (1 - z)) of each column, z its codebook-clipped values on [0, 1]."""
    k = len(cols)
    s1, s2 = np.zeros(k), np.zeros(k)
    if not k:
        return s1, s2
    # the codebook's clip; then z = (x - lo) / (hi - lo), mapped from the codebook's map
    lims = np.array([clip_limits[c] for c in cols], dtype=float)
    lo, width = lims[:, 0], lims[:, 1] - lims[:, 0]
    identity = {c: (0.0, 1.0) for c in cols}
    limits = _limits(cols, clip_limits, identity)
    for a, b in _row_blocks(n, k):
        x = _apply_limits(source.block(cols, a, b), limits)
        z = (x - lo) / width
        np.clip(z, 0.0, 1.0, out=z)  # rounding of (x - lo) / width cannot leave [0, 1]
        s1 += z.sum(axis=0)
        s2 += (z * (1.0 - z)).sum(axis=0)
    return s1, s2
