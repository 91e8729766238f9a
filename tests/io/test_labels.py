"""Labels files (medeval.io.labels): matched by id, every bad row refused naming the file, row
and value, and the sheet to fill."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from medeval.errors import InputError
from medeval.io.labels import SHEET_COLUMNS, last_batch, read_ids, read_labels, sheet
from medeval.weights import utilities_from_train_sizes

U = utilities_from_train_sizes(
    {"n": {"class": 0, "n": 50}, "a": {"class": 1, "n": 20}, "b": {"class": 1, "n": 5}}
)
IDS = np.array(["r0", "r1", "r2", "r3"])
Y = np.array([0, 1, 1, 1])


def _write(tmp_path, rows, columns=("id", "subconcept", "inclusion_probability", "batch")):
    path = tmp_path / "labels.csv"
    pd.DataFrame(rows, columns=list(columns)).to_csv(path, index=False)
    return path


@pytest.fixture
def write(tmp_path):
    return lambda rows, columns=("id", "subconcept", "inclusion_probability", "batch"): _write(
        tmp_path, rows, columns
    )


def test_rows_are_matched_by_id_with_their_inclusion_probability_and_batch(write):
    fields, notes = read_labels(write([["r2", "b", 0.5, 1], ["r0", "n", 0.25, 2]]), IDS, Y, U)
    assert fields["index"].tolist() == [2, 0]
    assert fields["subconcept"].tolist() == [U.names.index("b"), U.names.index("n")]
    assert fields["pi"].tolist() == [0.5, 0.25] and fields["batch"].tolist() == [1, 2]
    assert notes == []


def test_without_inclusion_probabilities_a_simple_random_sample_is_said(write):
    fields, notes = read_labels(write([["r1", "a"], ["r2", "b"]], ("id", "subconcept")), IDS, Y, U)
    assert fields["pi"].tolist() == [0.5, 0.5] and fields["batch"].tolist() == [1, 1]
    assert "taken as a simple random sample of the 4 test rows" in notes[0]


def test_the_same_id_twice_with_one_subconcept_counts_once(write):
    fields, notes = read_labels(write([["r1", "a", 0.5, 1], ["r1", "a", 0.5, 1]]), IDS, Y, U)
    assert fields["index"].tolist() == [1] and "counted once" in notes[0]


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([["r9", "a", 0.5, 1]], r"row 2: id 'r9' is not a row of the test predictions"),
        ([["r1", "zz", 0.5, 1]], r"row 2: subconcept 'zz' has no training size"),
        ([["r0", "a", 0.5, 1]], r"row 2: subconcept 'a' is of class 1, but the test row 'r0'"),
        ([["r1", "a", 0.5, 1], ["r1", "b", 0.5, 1]], r"id 'r1' is labelled 'a' in row 2 and 'b'"),
        ([["r1", "a", 0.0, 1]], r"row 2: inclusion_probability '0.0' is not in \(0, 1\]"),
        ([["r1", "a", 1.5, 1]], r"row 2: inclusion_probability '1.5' is not in \(0, 1\]"),
        ([["r1", "", 0.5, 1]], r"row\(s\) 2: no subconcept given"),
        ([["r1", "a", 0.5, 0]], r"row 2: batch '0' is not a whole number from 1"),
    ],
)
def test_a_bad_row_is_refused_naming_file_row_and_value(write, rows, message):
    with pytest.raises(InputError, match=message) as err:
        read_labels(write(rows), IDS, Y, U)
    assert "labels.csv" in str(err.value)


def _sheet(path, rows):
    pd.DataFrame(rows, columns=["id", "subconcept", "inclusion_probability", "batch"]).to_csv(
        path, index=False
    )
    return path


def test_several_files_are_their_batches_concatenated(tmp_path):
    """--labels a.csv b.csv: the same rows as one file with both batches appended."""
    first = _sheet(tmp_path / "a.csv", [["r2", "b", 0.5, 1], ["r0", "n", 0.25, 1]])
    second = _sheet(tmp_path / "b.csv", [["r1", "a", 0.4, 2]])
    both = _sheet(
        tmp_path / "ab.csv", [["r2", "b", 0.5, 1], ["r0", "n", 0.25, 1], ["r1", "a", 0.4, 2]]
    )
    fields, notes = read_labels([first, second], IDS, Y, U)
    appended, _ = read_labels(both, IDS, Y, U)
    for k, v in appended.items():
        assert fields[k].tolist() == v.tolist(), k
    assert fields["batch"].tolist() == [1, 1, 2] and notes == []


def test_one_row_labelled_two_ways_in_two_files_names_both_files_and_the_id(tmp_path):
    first = _sheet(tmp_path / "a.csv", [["r2", "b", 0.5, 1]])
    second = _sheet(tmp_path / "b.csv", [["r3", "a", 0.4, 2], ["r2", "a", 0.4, 2]])
    with pytest.raises(InputError) as err:
        read_labels([first, second], IDS, Y, U)
    message = str(err.value)
    assert message.startswith(f"{first}, column 'subconcept': id 'r2' is labelled 'b' in row 2")
    assert f"and 'a' in {second} row 3" in message


def test_the_same_label_in_two_files_counts_once_and_a_missing_batch_is_named(tmp_path):
    first = _sheet(tmp_path / "a.csv", [["r2", "b", 0.5, 1]])
    again = _sheet(tmp_path / "b.csv", [["r2", "b", 0.5, 1], ["r1", "a", 0.4, 2]])
    fields, notes = read_labels([first, again], IDS, Y, U)
    assert fields["index"].tolist() == [2, 1]
    assert notes == ["a.csv, b.csv: 1 id(s) labelled twice with the same subconcept, counted once"]
    later = _sheet(tmp_path / "c.csv", [["r1", "a", 0.4, 3]])
    with pytest.raises(
        InputError,
        match=r"c\.csv, column 'batch': row 2: batch 3 is given "
        r"without batch 2 \(in none of a\.csv, c\.csv\)",
    ):
        read_labels([first, later], IDS, Y, U)


def test_ids_and_images_of_a_predictions_file(tmp_path):
    path = tmp_path / "p.csv"
    pd.DataFrame({"id": ["x", "y"], "y_true": [0, 1], "image": ["a.png", "/abs/b.png"]}).to_csv(
        path, index=False
    )
    ids, images = read_ids(path)
    assert ids.tolist() == ["x", "y"]
    assert images.tolist() == [str(tmp_path / "a.png"), "/abs/b.png"]
    pd.DataFrame({"id": ["x", "x"], "y_true": [0, 1]}).to_csv(path, index=False)
    with pytest.raises(InputError, match=r"id 'x' is given twice \(rows 2 and 3\)"):
        read_ids(path)
    pd.DataFrame({"y_true": [0, 1]}).to_csv(path, index=False)
    with pytest.raises(InputError, match="need an 'id' column"):
        read_ids(path)


def test_the_sheet_lists_each_rows_candidates_most_likely_first():
    q = np.array([[1, 0, 0], [0, 0.3, 0.7], [0, 0.9, 0.1], [0, 0.5, 0.5]])
    frame = sheet(np.array([1, 2]), np.array([0.4, 0.6]), 3, IDS, Y, q, U)
    assert list(frame.columns) == [c for c in SHEET_COLUMNS if c != "image"]
    assert frame["candidates"].tolist() == ["a (0.90); b (0.10)", "b (0.70); a (0.30)"]
    assert frame["id"].tolist() == ["r2", "r1"] and (frame["batch"] == 3).all()
    assert (frame["subconcept"] == "").all() and frame["class"].tolist() == [1, 1]
    with_images = sheet(np.array([1]), np.array([0.4]), 1, IDS, Y, q, U, np.array(list("wxyz")))
    assert with_images["image"].tolist() == ["x"]


def test_unsure_rows_count_as_unlabelled_with_a_note(write):
    rows = [["r1", "a", 0.5, 1], ["r2", "Unsure", 0.5, 1], ["r3", "unsure", 0.5, 2]]
    fields, notes = read_labels(write(rows), IDS, Y, U)
    assert fields["index"].tolist() == [1] and fields["batch"].tolist() == [1]
    assert notes == [
        "labels.csv: 2 row(s) marked 'unsure', counted as unlabelled: left out of the estimate "
        "(if they are the hard cases, the estimate does not see them), and a later batch may "
        "propose them again"
    ]
    # the unsure row of an id labelled later counts for nothing; every row unsure: none labelled
    fields, _ = read_labels(write([["r1", "unsure", 0.5, 1], ["r1", "b", 0.4, 2]]), IDS, Y, U)
    assert fields["index"].tolist() == [1] and fields["subconcept"].tolist() == [2]
    fields, _ = read_labels(write([["r1", "unsure", 0.5, 1]]), IDS, Y, U)
    assert len(fields["index"]) == 0
    # an unsure row is still checked as any other
    with pytest.raises(InputError, match=r"row 2: id 'r9' is not a row of the test predictions"):
        read_labels(write([["r9", "unsure", 0.5, 1]]), IDS, Y, U)


def test_a_subconcept_named_unsure_is_a_label(write):
    named = utilities_from_train_sizes(
        {"n": {"class": 0, "n": 50}, "unsure": {"class": 1, "n": 20}, "b": {"class": 1, "n": 5}}
    )
    fields, notes = read_labels(write([["r1", "unsure", 0.5, 1]]), IDS, Y, named)
    assert fields["index"].tolist() == [1] and notes == []


def test_unsure_rows_of_several_files_are_dropped_per_file_before_the_cross_file_checks(tmp_path):
    """Each file's unsure rows are left out (a note naming that file) before an id given twice
    is looked for; a batch whose rows are all unsure still counts as given (no gap), and the
    next batch follows the highest of every file."""
    first = _sheet(tmp_path / "a.csv", [["r1", "unsure", 0.5, 1], ["r2", "unsure", 0.5, 1]])
    second = _sheet(tmp_path / "b.csv", [["r1", "a", 0.4, 2], ["r3", "unsure", 0.4, 2]])
    fields, notes = read_labels([first, second], IDS, Y, U)
    assert fields["index"].tolist() == [1] and fields["batch"].tolist() == [2]
    assert [n.split(":")[0] for n in notes] == ["a.csv", "b.csv"]
    assert "2 row(s) marked 'unsure'" in notes[0] and "1 row(s) marked 'unsure'" in notes[1]
    assert last_batch([first, second]) == 2 and last_batch([second, first]) == 2
    assert last_batch(first) == 1
    # an id labelled two ways across files is still refused naming both, unsure rows aside
    third = _sheet(tmp_path / "c.csv", [["r2", "unsure", 0.3, 3], ["r1", "b", 0.3, 3]])
    with pytest.raises(InputError, match=r"id 'r1' is labelled 'a' in row 2 and 'b' in .*c\.csv"):
        read_labels([first, second, third], IDS, Y, U)


def test_the_looks_planned_are_the_first_batchs_and_a_bad_one_is_refused(tmp_path):
    from medeval.io.labels import planned_looks

    one, two = tmp_path / "1.csv", tmp_path / "2.csv"
    pd.DataFrame({"id": ["r1"], "subconcept": ["a"], "batch": [1], "looks": [3]}).to_csv(one)
    pd.DataFrame({"id": ["r2"], "subconcept": ["a"], "batch": [2], "looks": [5]}).to_csv(two)
    looks, notes = planned_looks([two, one])
    assert looks == 3 and len(notes) == 1 and "first plan is kept" in notes[0]
    assert planned_looks([one]) == (3, [])
    bare = tmp_path / "bare.csv"
    pd.DataFrame({"id": ["r1"], "subconcept": ["a"]}).to_csv(bare)
    assert planned_looks([bare]) == (None, [])
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"id": ["r1", "r2"], "subconcept": ["a", "a"], "looks": [2, 0.5]}).to_csv(bad)
    with pytest.raises(InputError, match=r"bad.csv.*row 3: looks '0.5' is not a whole number"):
        planned_looks([bad])
