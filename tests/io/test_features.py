"""medeval/io/features.py: reading a feature table and checking its features, ids and 0/1
columns."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from medeval.errors import InputError
from medeval.io.features import binary_column, check_ids_once, read_feature_table


def _csv(path, **columns):
    pd.DataFrame(columns).to_csv(path, index=False)
    return path


def test_f_columns_are_the_features_and_the_rest_is_kept_as_text(tmp_path):
    path = _csv(tmp_path / "t.csv", f0000=[0.5, 1.5], f0001=[1, 2], id=["007", "008"], y=[0, 1])
    table = read_feature_table(path)
    assert table.features == ["f0000", "f0001"]
    np.testing.assert_array_equal(table.X, [[0.5, 1.0], [1.5, 2.0]])
    assert list(table.rest.columns) == ["id", "y"]
    assert list(table.ids) == ["007", "008"] and len(table) == 2
    assert table.has("y") and not table.has("f0000") and table.column("z") is None


def test_named_features_and_a_dataframe(tmp_path):
    frame = pd.DataFrame({"age": [30.0, 40.0], "bmi": [20.0, 25.0], "note": ["a", "b"]})
    table = read_feature_table(frame, ["bmi", "age"], name="cohort")
    assert table.path == Path("cohort") and table.features == ["bmi", "age"]
    np.testing.assert_array_equal(table.X, [[20.0, 30.0], [25.0, 40.0]])
    assert table.ids is None


def test_a_missing_named_feature_is_named(tmp_path):
    path = _csv(tmp_path / "t.csv", age=[1.0])
    with pytest.raises(InputError, match=r"missing feature column 'bmi' \(2 missing\)") as info:
        read_feature_table(path, ["age", "bmi", "sex"])
    assert info.value.column == "bmi"


def test_no_feature_columns_names_the_option(tmp_path):
    path = _csv(tmp_path / "t.csv", age=[1.0])
    with pytest.raises(InputError, match="name the feature columns with --cols"):
        read_feature_table(path, option="--cols")


def test_a_table_without_rows_is_refused(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("f0000,id\n", encoding="utf-8")
    with pytest.raises(InputError, match="has no rows"):
        read_feature_table(path)


def test_a_feature_that_is_not_a_finite_number_is_refused(tmp_path):
    path = _csv(tmp_path / "t.csv", f0000=["1.0", "abc"])
    with pytest.raises(InputError, match="features must be numeric"):
        read_feature_table(path)


def test_an_id_given_twice_names_both_rows():
    # object dtype, as FeatureTable.ids gives them
    with pytest.raises(InputError, match=r"id 'b' appears twice \(rows 2 and 4\)") as info:
        check_ids_once(np.array(["a", "b", "c", "b"], dtype=object), Path("t.csv"))
    assert (info.value.column, info.value.row) == ("id", 4)
    check_ids_once(np.array(["a", "b"]), Path("t.csv"))  # unique: no error
    check_ids_once(None, Path("t.csv"))


def test_binary_column_reads_zeros_and_ones_and_names_a_bad_cell(tmp_path):
    path = _csv(tmp_path / "t.csv", f0000=[1.0, 2.0, 3.0], y=[1, 0, 1], bad=[0, 3, 1])
    table = read_feature_table(path)
    y = binary_column(table, "y")
    assert y.dtype == np.int64 and y.tolist() == [1, 0, 1]
    with pytest.raises(InputError, match="'3' is not 0 or 1") as info:
        binary_column(table, "bad")
    assert (info.value.column, info.value.row) == ("bad", 2)
    with pytest.raises(InputError, match="missing column 'label'"):
        binary_column(table, "label")
