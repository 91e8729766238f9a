"""One reader of feature tables: the embeddings of discover are read by the reader of the own
model's feature tables, with its checks and messages."""

import numpy as np
import pandas as pd
import pytest

from medeval.errors import InputError
from medeval.io.features import read_feature_table


def _table(path, ids):
    frame = pd.DataFrame({"f0000": [0.5, 1.0, 2.0], "f0001": [1, 2, 3], "label": ["a", "b", "a"]})
    frame["id"] = ids
    frame.to_csv(path, index=False)
    return path


def test_embeddings_are_the_feature_tables_reading(tmp_path):
    path = _table(tmp_path / "emb.csv", ["007", "008", "009"])
    emb, feat = read_feature_table(path, option=None), read_feature_table(path)
    np.testing.assert_array_equal(emb.X, feat.X)
    assert emb.features == feat.features == ["f0000", "f0001"]
    pd.testing.assert_frame_equal(emb.rest, feat.rest)
    assert list(emb.column("id")) == ["007", "008", "009"]  # the text the user wrote


def test_embeddings_get_the_feature_tables_checks(tmp_path):
    path = _table(tmp_path / "emb.csv", ["x", "y", "x"])
    with pytest.raises(InputError) as emb:
        read_feature_table(path, option=None)
    with pytest.raises(InputError) as feat:
        read_feature_table(path)
    assert str(emb.value) == str(feat.value)
    assert "column 'id', row 3: id 'x' appears twice (rows 1 and 3)" in str(emb.value)
    bare = tmp_path / "bare.csv"
    pd.DataFrame({"a": [1.0], "label": ["a"]}).to_csv(bare, index=False)
    with pytest.raises(InputError, match=r"medeval.embed format\)$"):  # discover has no option
        read_feature_table(bare, option=None)
    with pytest.raises(InputError, match="with --features"):
        read_feature_table(bare)
