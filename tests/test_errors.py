"""medeval/errors.py: the user-error classes and their one-line messages."""

import pytest

from medeval.errors import InputError, MissingExtraError, OutputPathError, UserError, one_line


def test_input_error_names_the_file_column_and_row():
    err = InputError("preds.csv", "not a number", column="score", row=7)
    assert str(err) == "preds.csv, column 'score', row 7: not a number"
    assert (err.path, err.column, err.row) == ("preds.csv", "score", 7)


def test_input_error_without_column_or_row_names_only_the_file():
    assert str(InputError("sizes.json", "file not found")) == "sizes.json: file not found"


@pytest.mark.parametrize("cls", [InputError, OutputPathError, MissingExtraError])
def test_every_user_error_is_a_value_error(cls):
    assert issubclass(cls, UserError)
    assert issubclass(cls, ValueError)


def test_missing_extra_is_also_an_import_error():
    assert issubclass(MissingExtraError, ImportError)


def test_one_line_joins_lines_and_unquotes_a_key_error():
    assert one_line(ValueError("bad\n  value\there")) == "bad value here"
    assert one_line(KeyError("no column 'x'")) == "no column 'x'"


def test_one_line_of_an_empty_message_is_the_type():
    assert one_line(RuntimeError()) == "RuntimeError"
