"""One rule for the user's tables, whichever reader (predictions, io, datasets): the same
suffixes, the same missing-value words, the same message for an unknown format."""

import pandas as pd
import pytest

from medeval.errors import InputError
from medeval.io.predictions import read_predictions
from medeval.io.tables import read_frame


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
