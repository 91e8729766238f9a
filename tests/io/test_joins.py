"""A user's file joined to a feature table's rows: by id, by a path ending with the id, or row
by row (``medeval.io.joins.joined_rows``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from medeval.errors import InputError
from medeval.io.features import FeatureTable
from medeval.io.joins import joined_rows


def _table(ids: list[str] | None) -> FeatureTable:
    rest = pd.DataFrame({"label": ["a"] * 3} if ids is None else {"id": ids})
    return FeatureTable(Path("test.parquet"), np.zeros((3, 2)), ["f0000", "f0001"], rest)


IDS = ["nodule/x1.png", "mass/x1.png", "clear/x2.png"]


def test_paths_join_the_ids_they_end_with():
    pred = pd.DataFrame(
        {
            "path": ["/data/test/clear/x2.png", "/data/test/nodule/x1.png", "C:\\d\\mass\\x1.png"],
            "y_score": ["0.3", "0.1", "0.2"],
        }
    )
    out = joined_rows(_table(IDS), pred, Path("p.csv"))
    assert list(out["y_score"]) == ["0.1", "0.2", "0.3"]  # in the table's row order


def test_an_id_column_wins_and_a_file_name_without_suffix_joins_an_image_id():
    pred = pd.DataFrame({"id": ["b", "c", "a"], "path": ["z", "z2", "z3"], "v": ["2", "3", "1"]})
    assert list(joined_rows(_table(["a", "b", "c"]), pred, Path("p.csv"))["v"]) == ["1", "2", "3"]
    ham = pd.DataFrame({"path": ["/h/ISIC_2.jpg", "/h/ISIC_1.jpg", "/h/ISIC_3.jpg"]})
    out = joined_rows(_table(["ISIC_1", "ISIC_2", "ISIC_3"]), ham, Path("p.csv"))
    assert list(out["path"]) == ["/h/ISIC_1.jpg", "/h/ISIC_2.jpg", "/h/ISIC_3.jpg"]


def test_without_keys_rows_join_in_order():
    pred = pd.DataFrame({"v": ["1", "2", "3"]})
    assert list(joined_rows(_table(None), pred, Path("p.csv"))["v"]) == ["1", "2", "3"]


@pytest.mark.parametrize(
    ("paths", "message"),
    [
        (["/a/nodule/x1.png", "/a/mass/x1.png", "/a/other/x2.png"], "no predictions row for id"),
        (["/a/nodule/x1.png", "/b/nodule/x1.png", "/a/clear/x2.png"], "both name the image"),
        (["/a/nodule/x1.png", "/a/nodule/x1.png", "/a/clear/x2.png"], "appears twice"),
        (["/a/nodule/x1.png", "/a/mass/x1.png"], "has 2 rows"),
    ],
)
def test_bad_joins_name_the_file_and_the_problem(paths, message):
    with pytest.raises(InputError, match=message) as err:
        joined_rows(_table(IDS), pd.DataFrame({"path": paths}), Path("preds.csv"))
    assert "preds.csv" in str(err.value)
