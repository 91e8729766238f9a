"""medeval/io/jsonfile.py: the one rule for reading a user's JSON file."""

import pytest

from medeval.errors import InputError
from medeval.io.jsonfile import read_json


def test_reads_nested_json(tmp_path):
    path = tmp_path / "sizes.json"
    path.write_text('{"van": {"class": 1, "n": 3}, "cat": [1, 2]}', encoding="utf-8")
    assert read_json(path) == {"van": {"class": 1, "n": 3}, "cat": [1, 2]}


def test_a_key_given_twice_is_refused_by_name(tmp_path):
    path = tmp_path / "sizes.json"
    path.write_text('{"a": 1, "b": {"van": 3, "van": 300}}', encoding="utf-8")
    with pytest.raises(InputError, match="key 'van' is given twice") as info:
        read_json(path)
    assert info.value.path == str(path)


def test_a_missing_file_is_refused(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        read_json(tmp_path / "absent.json")


def test_text_that_is_not_utf8_is_refused(tmp_path):
    path = tmp_path / "latin1.json"
    path.write_bytes('{"caf\u00e9": 1}'.encode("latin-1"))
    with pytest.raises(InputError, match="not UTF-8 JSON text"):
        read_json(path)


def test_invalid_json_is_refused(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"a": 1,', encoding="utf-8")
    with pytest.raises(InputError, match="not valid JSON"):
        read_json(path)
