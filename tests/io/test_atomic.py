"""medeval.io.atomic: one JSON cleaner, files written whole."""

import json
import math

import numpy as np

from medeval.io.atomic import json_ready, write_json


def test_json_ready_makes_strict_json_of_nan_and_numpy():
    value = {
        1: np.float64("nan"),
        "b": [np.int64(3), (math.inf, -math.inf)],
        "c": np.array([1.5, np.nan]),
        "d": np.bool_(True),
    }
    out = json_ready(value)
    assert out == {"1": None, "b": [3, [None, None]], "c": [1.5, None], "d": True}
    assert type(out["b"][0]) is int
    json.dumps(out, allow_nan=False)


def test_write_json_writes_null_for_nan(tmp_path):
    path = write_json(tmp_path / "x.json", {"v": float("nan")})
    assert json.loads(path.read_text()) == {"v": None}
