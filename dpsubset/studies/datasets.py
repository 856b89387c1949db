"""Small real datasets bundled with the package, with public domain knowledge.

Differential privacy needs bounds on the data that do not depend on the data:
a bound computed from the sample (its maximum, say) leaks information about
the sample.  Next to each dataset we therefore ship *public* interval bounds
and category levels, each one justified by facts known independently of the
data set (the length of a baseball season, all-time records, salary history).

Datasets
--------
:func:`load_hitters`
    ISLR's ``Hitters``: Major League Baseball batting statistics for 1986 and
    careers up to 1986, with 1987 opening-day salaries (322 players).
:func:`load_pima`
    MASS's ``Pima.tr`` and ``Pima.te``: diabetes status of 532 women of Pima
    heritage (a small binary classification problem); public bounds in
    :func:`pima_bounds`.

See ``dpsubset/data/SOURCES.md`` for provenance, licences and column
definitions.  The CSV files are read through :mod:`importlib.resources`, so
they are found inside an installed wheel as well as in a source checkout.
"""

from __future__ import annotations

from importlib import resources

import pandas as pd

__all__ = [
    "load_hitters",
    "hitters_bounds",
    "hitters_levels",
    "load_pima",
    "pima_bounds",
]

HITTERS_NUMERIC = [
    "AtBat", "Hits", "HmRun", "Runs", "RBI", "Walks", "Years",
    "CAtBat", "CHits", "CHmRun", "CRuns", "CRBI", "CWalks",
    "PutOuts", "Assists", "Errors", "Salary",
]
HITTERS_CATEGORICAL = ["League", "Division", "NewLeague"]
HITTERS_COLUMNS = [
    "Player", "AtBat", "Hits", "HmRun", "Runs", "RBI", "Walks", "Years",
    "CAtBat", "CHits", "CHmRun", "CRuns", "CRBI", "CWalks", "League",
    "Division", "PutOuts", "Assists", "Errors", "Salary", "NewLeague",
]


def _read_csv(name, **kwargs):
    source = resources.files("dpsubset").joinpath("data", name)
    with resources.as_file(source) as path:
        return pd.read_csv(path, **kwargs)


def hitters_levels():
    """Public category levels of the Hitters factors.

    Returns
    -------
    dict of str to list of str
        ``League`` and ``NewLeague``: ``["A", "N"]`` (American and National
        League, the two major leagues); ``Division``: ``["E", "W"]`` (each
        league had an East and a West division from 1969 to 1993).  These are
        facts about the organisation of MLB in 1986-87, not read off the data.
    """
    return {
        "League": ["A", "N"],
        "Division": ["E", "W"],
        "NewLeague": ["A", "N"],
    }


def hitters_bounds():
    """Public interval bounds for the numeric Hitters columns.

    Every bound follows from public knowledge about Major League Baseball up
    to 1987 (season length, all-time records, salary history), never from the
    Hitters sample itself, so it can be used to clip data and to calibrate
    the sensitivity of a differentially private method without spending
    privacy budget.  The upper bounds are set a little above the relevant
    all-time record (including records set after 1987, so that they stay valid
    for any MLB player), which makes them generous but defensible.

    Returns
    -------
    dict of str to tuple of (float, float)
        ``{column: (lower, upper)}`` for the 16 numeric predictors and the
        response ``Salary`` (1987 opening-day salary in thousands of dollars).
        Counts are bounded below by 0.
    """
    return {
        # --- 1986 season counts (a season has 162 scheduled games) ---
        # AB season record: 705 (W. Wilson 1980) as of 1986, 716 (J. Rollins 2007) ever.
        "AtBat": (0.0, 800.0),
        # hits season record: 257 (G. Sisler 1920) as of 1986, 262 (I. Suzuki 2004) ever.
        "Hits": (0.0, 300.0),
        # home-run season record: 61 (R. Maris 1961) as of 1986, 73 (B. Bonds 2001) ever.
        "HmRun": (0.0, 80.0),
        # runs season record: 192 (B. Hamilton 1894); no one has scored 200 in a season.
        "Runs": (0.0, 200.0),
        # RBI season record: 191 (H. Wilson 1930); no one has driven in 200 in a season.
        "RBI": (0.0, 200.0),
        # walks season record: 170 (B. Ruth 1923) as of 1986, 232 (B. Bonds 2004) ever.
        "Walks": (0.0, 250.0),
        # longest MLB careers are 27 seasons (C. Anson, N. Ryan); 30 is a safe cap.
        "Years": (0.0, 30.0),
        # --- career totals up to 1986 (bounded by all-time career records) ---
        # career AB record: 14,053 (P. Rose, 1963-86), still the record.
        "CAtBat": (0.0, 15000.0),
        # career hits record: 4,256 (P. Rose), still the record.
        "CHits": (0.0, 4500.0),
        # career HR record: 755 (H. Aaron) as of 1986, 762 (B. Bonds) ever.
        "CHmRun": (0.0, 800.0),
        # career runs record: 2,245 (T. Cobb) as of 1986, 2,295 (R. Henderson) ever.
        "CRuns": (0.0, 2500.0),
        # career RBI record: 2,297 (H. Aaron), still the record.
        "CRBI": (0.0, 2500.0),
        # career walks record: 2,062 (B. Ruth) as of 1986, 2,558 (B. Bonds) ever.
        "CWalks": (0.0, 2600.0),
        # --- 1986 fielding counts ---
        # putout season record: 1,846 (J. Donahue, 1B, 1907); a team makes ~162*27 = 4,374 outs.
        "PutOuts": (0.0, 2000.0),
        # assist season record: 641 (F. Frisch, 2B, 1927).
        "Assists": (0.0, 700.0),
        # error season record: 122 (H. Long 1889, B. Shindle 1890); none above 98 since 1893.
        "Errors": (0.0, 150.0),
        # --- response ---
        # no MLB player earned $3M a year before K. Puckett's Nov 1989 contract ($ thousands).
        "Salary": (0.0, 3000.0),
    }


def load_hitters():
    """Load the ISLR ``Hitters`` baseball data (1986-87 Major League Baseball).

    Returns
    -------
    pandas.DataFrame, shape (322, 21)
        One row per player, columns::

            Player, AtBat, Hits, HmRun, Runs, RBI, Walks, Years,
            CAtBat, CHits, CHmRun, CRuns, CRBI, CWalks, League, Division,
            PutOuts, Assists, Errors, Salary, NewLeague

        ``Player`` holds the names, which are the row names of the R data
        (without the leading ``-`` of the original file).  The 16 count
        columns are ``int64``; ``Salary`` (1987 opening-day salary in
        thousands of dollars) is ``float64``; ``League``, ``Division`` and
        ``NewLeague`` are :class:`pandas.Categorical` with the public levels
        of :func:`hitters_levels`.

    Notes
    -----
    ``Salary`` is missing for 59 of the 322 players.  The loader keeps these
    rows, so that the data are exactly the published ones; to fit a model of
    ``Salary`` drop them first, e.g. ``load_hitters().dropna(subset=["Salary"])``
    (263 rows).  Whether the missing pattern itself is sensitive is for the
    user to judge.

    The column meanings and units are documented in ``dpsubset/data/SOURCES.md``;
    public bounds for the numeric columns are in :func:`hitters_bounds`.

    Examples
    --------
    >>> df = load_hitters()
    >>> df.shape, int(df["Salary"].isna().sum())
    ((322, 21), 59)
    """
    levels = hitters_levels()
    dtypes = {c: "int64" for c in HITTERS_NUMERIC if c != "Salary"}
    dtypes["Salary"] = "float64"
    df = _read_csv("hitters.csv", dtype=dtypes)
    for col, cats in levels.items():
        df[col] = pd.Categorical(df[col], categories=cats)
    return df[HITTERS_COLUMNS]


def pima_bounds():
    """Public interval bounds for the seven Pima predictors.

    Set from medical knowledge and the design of the study, not from the data.
    Values outside an interval are clipped to it, which is harmless for
    classification when the interval covers every clinically meaningful value.

    Returns
    -------
    dict of str to tuple of (float, float)
        ``{column: (lower, upper)}`` for ``npreg``, ``glu``, ``bp``, ``skin``,
        ``bmi``, ``ped`` and ``age``. The response ``type`` is a two-class
        factor with the public levels ``["No", "Yes"]`` (fixed by the study
        design), so it takes no interval; for the two-class losses its bound is 1.
    """
    return {
        # number of pregnancies: more than 20 is very rare
        "npreg": (0.0, 20.0),
        # plasma glucose 2 h into an oral glucose tolerance test (mg/dL): 200 already
        # means diabetes by the WHO criteria that define the response
        "glu": (40.0, 300.0),
        # diastolic blood pressure (mm Hg): 120 is already a hypertensive emergency
        "bp": (30.0, 130.0),
        # triceps skin-fold thickness (mm): about the jaw opening of a standard caliper
        "skin": (0.0, 80.0),
        # body-mass index (kg/m^2): from severe thinness to extreme obesity
        "bmi": (15.0, 70.0),
        # diabetes pedigree function: a cap fixed in advance; larger scores are clipped
        "ped": (0.0, 2.5),
        # age (years): 21, the study's minimum age, to 90
        "age": (21.0, 90.0),
    }


def load_pima():
    """Load the Pima Indians diabetes data of R's MASS (``Pima.tr`` + ``Pima.te``).

    Returns
    -------
    pandas.DataFrame, shape (532, 9)
        Columns ``npreg`` (number of pregnancies), ``glu`` (plasma glucose
        concentration two hours into an oral glucose tolerance test, mg/dL),
        ``bp`` (diastolic blood pressure, mm Hg), ``skin`` (triceps skin-fold
        thickness, mm), ``bmi`` (body-mass index, kg/m^2), ``ped`` (diabetes
        pedigree function), ``age`` (years), ``type`` (diabetic by WHO
        criteria, categorical ``["No", "Yes"]``) and ``split`` (``"train"``
        for the 200 rows of ``Pima.tr``, ``"test"`` for the 332 of
        ``Pima.te``, in that order).

    Notes
    -----
    These are the 532 complete records of the original 768 (rows with missing
    values, mostly serum insulin, were dropped by MASS).  There are no
    missing values.  For a ``{-1, +1}`` label use
    ``np.where(df["type"] == "Yes", 1, -1)``.

    Examples
    --------
    >>> df = load_pima()
    >>> df.shape, df["type"].value_counts()["Yes"].item()
    ((532, 9), 177)
    """
    df = _read_csv(
        "pima.csv",
        dtype={"npreg": "int64", "glu": "int64", "bp": "int64", "skin": "int64",
               "bmi": "float64", "ped": "float64", "age": "int64"},
    )
    df["type"] = pd.Categorical(df["type"], categories=["No", "Yes"])
    return df
