"""medeval/examples/vehicle.py: the own-model example of ``python -m medeval.subconcepts
--example``, whose tables the own-model tests read too (tests/own_model_data.py)."""

import hashlib

import numpy as np
import own_model_data
import pandas as pd
import pytest

from medeval.errors import UserError
from medeval.examples.vehicle import EXAMPLE_FILES, vehicle

#: SHA-256 of each table without its y_score (a logistic regression's floats, which may differ
#: in the last digit between machines), as tests/own_model_data.py built them before the
#: generator moved into the package: the tests keep their data.
BEFORE = {
    "train": "bdf03f018eec0837d56477752bbc55f6cda8febc5dcc7c0795117ca0a59f3900",
    "reference": "801ba1cf03a4a41794ff2310072903b877006c6d2b70ee9f79c7aae1ea3b567b",
    "test": "a36cc608f6a02a41023418ce25c2cb094af7066f3243543544c6fe6c8a6c3fa1",
}


def _digest(frame: pd.DataFrame) -> str:
    text = frame.drop(columns="y_score", errors="ignore").to_csv(index=False)
    return hashlib.sha256(text.encode()).hexdigest()


def test_the_tables_are_those_the_tests_had(shared_data):
    data = vehicle(shared_data)
    assert {name: _digest(getattr(data, name)) for name in BEFORE} == BEFORE
    assert own_model_data.vehicle is vehicle  # the tests read the package's example
    assert (len(data.train), len(data.reference), len(data.test)) == (238, 179, 180)


def test_the_files_hold_the_inputs_and_the_hidden_truth(shared_data):
    data = vehicle(shared_data)
    files = data.files()
    assert list(files) == list(EXAMPLE_FILES)
    truth = pd.read_csv(pd.io.common.BytesIO(files["test_truth.csv"]))
    assert list(truth.columns) == ["id", "subconcept"]
    assert truth["id"].tolist() == data.test["id"].tolist()
    np.testing.assert_array_equal(truth["subconcept"], data.test_subconcept)
    test = pd.read_csv(pd.io.common.BytesIO(files["test.csv"]))
    assert "subconcept" not in test.columns and "y_score" in test.columns
    ref = pd.read_csv(pd.io.common.BytesIO(files["validation.csv"]))
    assert {"subconcept", "y_score", "f0000"} <= set(ref.columns)


def test_without_the_keel_file_it_says_where_it_looked(tmp_path):
    with pytest.raises(UserError, match=r"keel/vehicle\.dat, which is absent: give --data"):
        vehicle(tmp_path)
