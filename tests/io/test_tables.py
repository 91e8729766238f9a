"""medeval.io.tables: one rule for the user's tables, whichever reader (predictions, io,
datasets): the same suffixes, the same missing-value words, the same message for an unknown
format; a bad header, file or cell named with its column and row."""

import numpy as np
import pandas as pd
import pytest

from medeval.errors import InputError
from medeval.io.predictions import read_predictions
from medeval.io.tables import (
    DATASET_SUFFIXES,
    feature_matrix,
    finite_matrix,
    given_frame,
    is_missing,
    not_a_number,
    numeric_column,
    read_frame,
    table_kind,
)

COMMA = "is a number written with a decimal comma or a thousands separator"


def _predictions() -> pd.DataFrame:
    return pd.DataFrame({"y_true": [0, 1, 0, 1], "y_score": [0.1, 0.9, 0.4, 0.7]})


def test_a_tsv_predictions_file_is_read_like_any_table(tmp_path):
    path = tmp_path / "p.tsv"
    _predictions().to_csv(path, sep="\t", index=False)
    t = read_predictions(path)
    assert list(t.y_true) == [0, 1, 0, 1] and list(t.y_score) == [0.1, 0.9, 0.4, 0.7]
    assert list(read_frame(path).columns) == ["y_true", "y_score"]


@pytest.mark.parametrize("word", ["none", "NULL", "na", "NaN", ""])
def test_every_missing_word_is_a_missing_value(tmp_path, word):
    path = tmp_path / "p.csv"
    path.write_text(f"y_true,y_score\n0,0.1\n1,{word}\n")
    with pytest.raises(InputError, match=r"column 'y_score', row 2.*missing value"):
        read_predictions(path)
    assert read_frame(path)["y_score"].isna().tolist() == [False, True]


def test_an_unknown_format_is_named_alike(tmp_path):
    path = tmp_path / "p.xlsx"
    path.write_bytes(b"PK")
    with pytest.raises(InputError) as a:
        read_predictions(path)
    with pytest.raises(InputError) as b:
        read_frame(path)
    for err in (a, b):
        assert "unknown format: use .parquet or .csv, .tsv" in str(err.value)


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("a.csv", "csv"),
        ("a.CSV.GZ", "csv"),
        ("a.txt.tsv", "tsv"),
        ("a.tsv.gz", "tsv"),
        ("a.parquet", "parquet"),
        ("a.PQ", "parquet"),
    ],
)
def test_table_kind_follows_the_suffix_in_any_case(name, kind):
    assert table_kind(name) == kind


def test_table_kind_takes_the_callers_suffixes_and_names_them_when_refusing():
    with pytest.raises(InputError, match=r"a\.tab: unknown format: use \.parquet or \.csv, \.tsv "):
        table_kind("a.tab")
    assert table_kind("a.tab", DATASET_SUFFIXES) == "tsv"
    with pytest.raises(InputError, match=r"use \.parquet or \.csv, \.tsv, \.tab \(optionally"):
        table_kind("a.xlsx", DATASET_SUFFIXES)
    with pytest.raises(InputError, match="unknown format"):
        table_kind("metadata")  # no suffix: only where the caller allows it
    assert table_kind("metadata", (*DATASET_SUFFIXES, "")) == "csv"


@pytest.mark.parametrize(
    ("cell", "missing"),
    [
        ("", True),
        (" NA ", True),
        ("'null'", True),
        ("None", True),
        ("nan", True),
        ("n/a", False),
        ("0", False),
        ("-", False),
    ],
)
def test_only_the_missing_words_are_missing(cell, missing):
    assert is_missing(cell) is missing


@pytest.mark.parametrize("name", ["t.csv.gz", "t.tsv", "t.parquet"])
def test_read_frame_reads_back_what_was_written(tmp_path, name):
    frame = pd.DataFrame({"id": ["a", "b"], "x": [0.5, np.nan], "n": [1, 2]})
    path = tmp_path / name
    if name.endswith(".parquet"):
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, sep="\t" if ".tsv" in name else ",", index=False)
    pd.testing.assert_frame_equal(read_frame(path), frame)


def test_read_frame_as_text_keeps_every_cell_as_written(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("code,x\n007,NA\n1.50,x\n")
    assert read_frame(path, as_text=True).to_dict("list") == {
        "code": ["007", "1.50"],
        "x": ["NA", "x"],
    }
    assert read_frame(path)["code"].tolist() == [7.0, 1.5]


@pytest.mark.parametrize(
    ("content", "match", "column"),
    [
        (b"a,b,a\n1,2,3\n", "appears 2 times in the header", "a"),
        (b"a, b\n1,2\n", r"the name has spaces around it \(did you mean 'b'\?\)", " b"),
        (b"", "empty file: no header and no rows", None),
        ("a,b\n1,caf\xe9\n".encode("latin-1"), r"not UTF-8 text \(.*\); save it as UTF-8", None),
        (b'a,b\n1,"2\n', "cannot be read: Error tokenizing data", None),
        # a spreadsheet's CSV where the decimal mark is a comma: separated by semicolons
        (b"id;subconcept\n3;saab\n", "the header is one column, 'id;subconcept': save the", None),
        (
            b"y_true;y_score\n0;0,25\n",
            "one column, 'y_true;y_score': .* with commas, not ';'",
            None,
        ),
    ],
)
def test_a_bad_file_is_named_with_its_column(tmp_path, content, match, column):
    path = tmp_path / "t.csv"
    path.write_bytes(content)
    with pytest.raises(InputError, match=match) as err:
        read_frame(path)
    assert err.value.path == str(path) and err.value.column == column


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(InputError, match=r"gone\.csv: file not found"):
        read_frame(tmp_path / "gone.csv")


def test_a_frame_given_in_memory_is_checked_like_a_file():
    frame = given_frame(pd.DataFrame({"a": [1, 2]}, index=[5, 6]), "mine")
    assert frame.index.tolist() == [0, 1]
    with pytest.raises(InputError, match="mine, column '0': column names must be text"):
        given_frame(pd.DataFrame({0: [1]}), "mine")
    with pytest.raises(InputError, match="mine, column 'a ': the name has spaces around it"):
        given_frame(pd.DataFrame({"a ": [1]}), "mine")


def test_numeric_column_reads_numbers_and_the_missing_words_as_nan():
    frame = pd.DataFrame({"n": [1, 2, 3], "s": [" 1.5", "NA", ""]})
    np.testing.assert_array_equal(numeric_column("f.csv", frame, "n"), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(numeric_column("f.csv", frame, "s"), [1.5, np.nan, np.nan])


@pytest.mark.parametrize(
    ("path", "values", "match", "row"),
    [
        ("f.csv", [True, False], r"holds booleans \(true/false\), not numbers", None),
        ("f.csv", pd.to_datetime(["2020-01-01"]), "timestamps, not numbers", None),
        ("f.parquet", ["1", "2"], r"is stored as .* \(text\), not as numbers", None),
        ("f.csv", ["1", "x"], "'x' is not a number", 2),
        ("f.csv", ["0,714", "1"], f"'0,714' {COMMA}", 1),
        ("f.csv", [1.0, 2.0, np.inf], "'inf' is not a finite number", 3),
    ],
)
def test_numeric_column_names_the_first_bad_cell(path, values, match, row):
    with pytest.raises(InputError, match=match) as err:
        numeric_column(path, pd.DataFrame({"v": values}), "v")
    assert (err.value.column, err.value.row) == ("v", row)


def test_a_repeated_column_is_named_not_read():
    with pytest.raises(InputError, match="column 'a': appears several times in the header"):
        numeric_column("f.csv", pd.DataFrame([[1, 2]], columns=["a", "a"]), "a")


@pytest.mark.parametrize(
    ("cell", "comma"),
    [
        ("1,234", True),
        ("1.234,5", True),
        ("0,714", True),
        ("12,345.6", True),
        ("abc", False),
        ("1,2,3", False),
        ("1.5", False),
    ],
)
def test_not_a_number_names_a_decimal_comma_or_thousands_separator(cell, comma):
    text = not_a_number(cell)
    assert text.startswith(repr(cell)) and (COMMA in text) is comma


def test_feature_matrix_reads_numbers_booleans_and_text_categories():
    frame = pd.DataFrame(
        {"b": [True, False, True], "cat": ["y", "x", None], "num": ["1", "2", ""], "f": [0.5, 1, 2]}
    )
    X = feature_matrix("g.csv", frame, ["b", "cat", "num", "f"])
    expected = [[1, 1, 1, 0.5], [0, 0, 2, 1], [1, np.nan, np.nan, 2]]
    np.testing.assert_array_equal(X, np.array(expected, dtype=np.float64))


@pytest.mark.parametrize(
    ("values", "match", "row"),
    [
        (["1", "oops", "3"], r"'oops' is not a number \(the column's other cells are\)", 2),
        (["1", "0,5", "2"], f"'0,5' {COMMA}", 2),
    ],
)
def test_feature_matrix_names_a_stray_cell_in_a_column_of_numbers(values, match, row):
    with pytest.raises(InputError, match=match) as err:
        feature_matrix("g.csv", pd.DataFrame({"v": values}), ["v"])
    assert (err.value.column, err.value.row) == ("v", row)


def test_finite_matrix_reads_numbers_and_names_the_first_other_cell():
    frame = pd.DataFrame({"a": [1, 2], "b": ["3", "4"]})
    np.testing.assert_array_equal(finite_matrix(frame, ["a", "b"], "h.csv"), [[1, 3], [2, 4]])
    bad = frame.assign(b=["3", "x"])
    with pytest.raises(InputError, match=r"row 2: 'x' is not a finite number \(features must"):
        finite_matrix(bad, ["a", "b"], "h.csv", hint=" (features must be numeric)")
    with pytest.raises(InputError, match=f"column 'a', row 1: '1,5' {COMMA}"):
        finite_matrix(pd.DataFrame({"a": ["1,5"]}), ["a"], "h.csv")
