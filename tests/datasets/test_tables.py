"""Generic CSV / Parquet feature tables and text tables."""

import numpy as np
import pandas as pd
import pytest

from medeval.datasets.base import DataError
from medeval.datasets.tables import load_table, load_text_csv


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "f1": [0.5, 1.5, 2.5, 3.5],
            "f2": ["x", "y", "x", "z"],
            "patient": ["p1", "p1", "p2", "p3"],
            "diagnosis": ["flu", "cold", "flu", "covid"],
        }
    )


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".tsv.gz"])
def test_reads_csv_parquet_and_tsv_with_the_label_column_by_option(tmp_path, frame, suffix):
    path = tmp_path / f"table{suffix}"
    if suffix == ".parquet":
        frame.to_parquet(path)
    else:
        frame.to_csv(path, index=False, sep="\t" if ".tsv" in suffix else ",")
    data = load_table(path, label_column="diagnosis", group_column="patient")
    assert data.name == "table"
    assert data.feature_names == ["f1", "f2"]
    np.testing.assert_array_equal(data.labels, ["flu", "cold", "flu", "covid"])
    np.testing.assert_array_equal(data.groups, ["p1", "p1", "p2", "p3"])
    np.testing.assert_allclose(data.X[:, 0], [0.5, 1.5, 2.5, 3.5])
    assert data.X[0, 1] == data.X[2, 1] != data.X[1, 1]


def test_missing_label_column_names_file_and_column(tmp_path, frame):
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(DataError, match=r"t\.csv: missing column 'label'"):
        load_table(path)


def test_numeric_labels_keep_their_original_spelling(tmp_path):
    path = tmp_path / "n.csv"
    pd.DataFrame({"a": [1, 2, 3], "label": [3.0, 10.0, 3.0]}).to_csv(path, index=False)
    np.testing.assert_array_equal(load_table(path).labels, ["3", "10", "3"])


def test_text_csv(tmp_path):
    path = tmp_path / "notes.csv"
    pd.DataFrame(
        {"note": ["chest pain", "", "cough, fever"], "dx": ["a", "b", "a"], "pid": [1, 2, 2]}
    ).to_csv(path, index=False)
    data = load_text_csv(path, text_column="note", label_column="dx", group_column="pid")
    np.testing.assert_array_equal(data.text, ["chest pain", "", "cough, fever"])
    np.testing.assert_array_equal(data.groups, ["1", "2", "2"])
    assert data.kind == "text"
    with pytest.raises(DataError, match="missing column 'text'"):
        load_text_csv(path, label_column="dx")
