"""LabelledData alignment, the dispatcher and table reading errors."""

import numpy as np
import pytest

from medeval.datasets import SOURCES, dataset_names, load
from medeval.datasets.base import DataError, LabelledData, label_strings, read_table


def test_fields_must_align_with_labels():
    with pytest.raises(DataError, match="field 'groups' has 2 rows, labels have 3"):
        LabelledData(labels=["a", "b", "c"], source="s", name="n", groups=["p", "q"])


def test_subset_keeps_every_field_aligned():
    data = LabelledData(
        labels=["a", "b", "c"],
        source="s",
        name="n",
        X=np.arange(6.0).reshape(3, 2),
        groups=[1, 2, 3],
        files=["f0", "f1", "f2"],
    )
    sub = data.subset(np.array([2, 0]))
    np.testing.assert_array_equal(sub.labels, ["c", "a"])
    np.testing.assert_array_equal(sub.X, [[4.0, 5.0], [0.0, 1.0]])
    np.testing.assert_array_equal(sub.groups, ["3", "1"])
    np.testing.assert_array_equal(sub.ids, ["2", "0"])  # default ids: source row numbers
    assert list(sub.files) == ["f2", "f0"] and len(data) == 3


def test_label_strings_drop_float_noise_of_whole_numbers():
    np.testing.assert_array_equal(label_strings(np.array([1.0, 2.0])), ["1", "2"])
    np.testing.assert_array_equal(label_strings(np.array([1.5, 2.0])), ["1.5", "2.0"])
    np.testing.assert_array_equal(label_strings(np.array([" van ", "bus"])), ["van", "bus"])


def test_unreadable_table_is_named(tmp_path):
    path = tmp_path / "broken.parquet"
    path.write_bytes(b"not parquet")
    with pytest.raises(DataError, match=r"broken\.parquet: cannot be read"):
        read_table(path)
    with pytest.raises(DataError, match=r"absent\.csv: file not found"):
        read_table(tmp_path / "absent.csv")


def test_a_data_sets_table_is_read_by_the_one_reader_of_user_tables(tmp_path):
    """read_table is io.tables.read_frame: the same errors (an InputError, worded alike),
    the same header check, the same missing cells; a .tab or suffix-less file is text too."""
    from medeval.errors import InputError
    from medeval.io.tables import read_frame

    dup = tmp_path / "labels.csv"
    dup.write_text("file,label,label\na.png,x,y\n")
    with pytest.raises(InputError) as by_frame:
        read_frame(dup)
    with pytest.raises(DataError) as by_table:
        read_table(dup, dtype=str)  # pandas would have renamed the second label to label.1
    assert str(by_table.value) == str(by_frame.value)
    assert (by_table.value.column, str(by_table.value)) == (
        "label",
        f"{dup}, column 'label': appears 2 times in the header",
    )
    cells = tmp_path / "meta.tab"
    cells.write_text("id\tdx\n1\tnone\n2\tN/A\n3\tnv\n")
    frame = read_table(cells, dtype=str)
    assert frame["dx"].isna().tolist() == [True, False, False]  # MISSING_WORDS, no other
    bare = tmp_path / "HAM10000_metadata"
    bare.write_text("image_id,dx\nISIC_1,nv\n")
    assert read_table(bare, dtype=str)["dx"].tolist() == ["nv"]
    other = tmp_path / "labels.xlsx"
    other.write_text("x")
    with pytest.raises(DataError, match=r"labels\.xlsx: unknown format: use .parquet or .csv"):
        read_table(other)


def test_data_error_is_the_input_error_of_every_table():
    from medeval.errors import InputError

    err = DataError("labels.csv", "empty value", column="dx", row=3)
    assert isinstance(err, InputError)
    assert str(err) == str(InputError("labels.csv", "empty value", column="dx", row=3))
    assert (err.path, err.column, err.row) == ("labels.csv", "dx", 3)
    assert str(DataError("labels.csv: row 0 (line 2): empty value")).startswith("labels.csv")


def test_dispatcher_knows_every_cli_source_and_lists_data_sets(shared_data):
    assert set(SOURCES) >= {
        "keel",
        "pmlb",
        "csv",
        "nih",
        "ham10000",
        "folder",
        "dicom",
        "medmnist",
        "mmhs150k",
    }
    assert dataset_names("keel", shared_data / "keel")[0] == "abalone"
    assert len(dataset_names("pmlb", shared_data / "pmlb")) == 46
    assert load("keel", shared_data / "keel", name="vehicle").name == "vehicle"
    with pytest.raises(ValueError, match="unknown source 'arff'"):
        load("arff", shared_data)
