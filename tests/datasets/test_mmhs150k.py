"""MMHS150K json, generated at test time."""

import json

import numpy as np
import pytest

from medeval.datasets.base import DataError
from medeval.datasets.mmhs150k import LABEL_NAMES, load_mmhs150k, majority_vote


def test_majority_vote_and_tie_rule():
    votes = np.array([[0, 0, 1], [2, 1, 1], [3, 4, 3], [0, 1, 2]])
    winner, has = majority_vote(votes)
    np.testing.assert_array_equal(winner, [0, 1, 3, -1])
    np.testing.assert_array_equal(has, [True, True, True, False])
    np.testing.assert_array_equal(majority_vote(votes, tie="first")[0], [0, 1, 3, 0])


def _gt(tmp_path, records):
    path = tmp_path / "MMHS150K_GT.json"
    path.write_text(json.dumps(records))
    return path


def test_mmhs150k_json(tmp_path):
    records = {
        "1114679353714016256": {"labels": [4, 1, 3], "tweet_text": "a", "labels_str": []},
        "1063020048816660480": {"labels": [5, 5, 0], "tweet_text": "b"},
        "1108927368075374593": {"labels": [0, 0, 0], "tweet_text": "c"},
        "1114558534635618305": {"labels": [1, 2, 1], "tweet_text": "d"},
    }
    _gt(tmp_path, records)
    data = load_mmhs150k(tmp_path)
    np.testing.assert_array_equal(data.labels, ["OtherHate", "NotHate", "Racist"])
    np.testing.assert_array_equal(data.text, ["b", "c", "d"])
    assert data.ids[0] == "1063020048816660480"
    assert data.meta["ties_dropped"] == 1
    assert load_mmhs150k(tmp_path, tie="first").labels[0] == LABEL_NAMES[4]


def test_mmhs150k_bad_record_named(tmp_path):
    _gt(
        tmp_path,
        {
            "1": {"labels": [0, 0, 0], "tweet_text": "x"},
            "2": {"labels": [0, 9, 0], "tweet_text": "y"},
        },
    )
    with pytest.raises(DataError, match=r"tweet 2 \(row 1\): labels \[0, 9, 0\]"):
        load_mmhs150k(tmp_path)
