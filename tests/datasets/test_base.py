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
    with pytest.raises(DataError, match=r"broken\.parquet: cannot read table"):
        read_table(path)
    with pytest.raises(FileNotFoundError, match="no such file"):
        read_table(tmp_path / "absent.csv")


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
