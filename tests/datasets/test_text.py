"""Text tables."""

import numpy as np
import pandas as pd
import pytest

from medeval.datasets.base import DataError
from medeval.datasets.text import load_text_csv


def test_text_csv(tmp_path):
    path = tmp_path / "notes.csv"
    pd.DataFrame(
        {"note": ["chest pain", "", "cough, fever"], "dx": ["a", "b", "a"], "pid": [1, 2, 2]}
    ).to_csv(path, index=False)
    data = load_text_csv(path, text_column="note", label_column="dx", group_column="pid")
    np.testing.assert_array_equal(data.text, ["chest pain", "", "cough, fever"])
    np.testing.assert_array_equal(data.groups, ["1", "2", "2"])
    assert data.kind == "text"
    with pytest.raises(DataError, match="missing column 'text'"):
        load_text_csv(path, label_column="dx")
