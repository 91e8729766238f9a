"""KEEL .dat files: the real header-less copies and a generated file with the KEEL header."""

import numpy as np
import pandas as pd
import pytest

from medeval.datasets.base import DataError
from medeval.datasets.keel import dataset_names, load_keel
from medeval.tasks import make_binary_task

KEEL_SETS = [
    "abalone",
    "letter",
    "optdigits",
    "penbased",
    "satimage",
    "segment",
    "texture",
    "vehicle",
]


def test_every_real_keel_set_loads_and_yields_a_task_or_a_stated_rejection(shared_data):
    names = dataset_names(shared_data / "keel")
    assert names == KEEL_SETS
    for name in names:
        data = load_keel(shared_data / "keel", name=name)
        raw = pd.read_csv(shared_data / "keel" / f"{name}.dat", header=None, skipinitialspace=True)
        assert data.X.shape == (len(raw), raw.shape[1] - 1)
        assert np.isfinite(data.X).all()
        task = make_binary_task(data, seed=0)
        assert isinstance(task.kept, bool) and task.reason
        assert len(task.minority) >= 1


def test_labels_are_stripped_strings(shared_data):
    data = load_keel(shared_data / "keel" / "vehicle.dat")
    assert set(data.labels) == {"bus", "opel", "saab", "van"}
    assert data.name == "vehicle"


HEADERED = """@relation toy
@attribute Sepal real [4.3, 7.9]
@attribute Colour {red, blue}
@attribute Class {A, B, C}
@inputs Sepal, Colour
@outputs Class
@data
5.1, red, A
4.9, blue, B
6.0, ?, C
7.1, red, A
"""


def test_header_and_no_header_give_the_same_data(tmp_path):
    (tmp_path / "with.dat").write_text(HEADERED)
    (tmp_path / "without.dat").write_text(HEADERED.split("@data\n")[1])
    a = load_keel(tmp_path / "with.dat")
    b = load_keel(tmp_path, name="without")
    assert a.feature_names == ["Sepal", "Colour"]
    assert b.feature_names == ["x0", "x1"]
    np.testing.assert_array_equal(a.labels, ["A", "B", "C", "A"])
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_array_equal(a.X, b.X)
    # Nominal inputs become category codes, "?" becomes NaN.
    assert np.isnan(a.X[2, 1]) and a.X[0, 1] != a.X[1, 1] and a.X[0, 1] == a.X[3, 1]
    assert a.meta["header"] and not b.meta["header"]


def test_header_attribute_count_must_match_rows(tmp_path):
    bad = HEADERED.replace("@attribute Colour {red, blue}\n", "")
    (tmp_path / "bad.dat").write_text(bad)
    with pytest.raises(DataError, match=r"bad\.dat: header declares 2 attributes but rows have 3"):
        load_keel(tmp_path / "bad.dat")


def test_missing_file_and_empty_label_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nope\.dat"):
        load_keel(tmp_path, name="nope")
    (tmp_path / "gap.dat").write_text("1,2,A\n3,4,\n5,6,B\n")
    with pytest.raises(
        DataError, match=r"gap\.dat: row 1 \(line 3\): empty value in column 'class'"
    ):
        load_keel(tmp_path / "gap.dat")


def test_quoted_and_brace_attached_attribute_names(tmp_path):
    text = (
        "@relation q\n@attribute 'Sepal length' real\n@ATTRIBUTE \"b c\" integer [0, 9]\n"
        "@attribute Class{x, y}\n@data\n1.0, 2, x\n2.0, 3, y\n"
    )
    (tmp_path / "q.dat").write_text(text)
    data = load_keel(tmp_path / "q.dat")
    assert data.feature_names == ["Sepal length", "b c"]
    np.testing.assert_array_equal(data.labels, ["x", "y"])
