"""medeval/flows/embed.py: a data source → its embedding table and record in the output
folder (a text table and TF-IDF, so no model is loaded)."""

import json

import pandas as pd
import pytest

from medeval.errors import OutputPathError
from medeval.flows.embed import EmbedSettings, embed_source

SETTINGS = EmbedSettings(text_model="tfidf", svd_components=3)
OPTIONS = {"label_column": "label", "text_column": "note"}


@pytest.fixture
def notes(tmp_path):
    rows = [("a", f"red spot on the arm {i}") for i in range(6)]
    rows += [("b", f"dark mole on the back {i}") for i in range(6)]
    path = tmp_path / "notes.csv"
    pd.DataFrame(rows, columns=["label", "note"]).to_csv(path, index=False)
    return path


def test_the_table_and_its_record_are_written(notes, tmp_path):
    out = tmp_path / "out"
    done = embed_source("text", notes, out, settings=SETTINGS, options=OPTIONS, progress=False)
    assert (done.name, done.n_rows, done.n_features) == ("notes", 12, 3)
    assert done.table == out / "notes.parquet" and not done.synthetic
    frame = pd.read_parquet(done.table)
    assert list(frame.columns) == ["f0000", "f0001", "f0002", "label", "id"]
    assert frame["label"].tolist() == ["a"] * 6 + ["b"] * 6
    record = json.loads((out / "notes.embedding.json").read_text(encoding="utf-8"))
    assert record["source"] == "text" and record["text_model"] == "tfidf"


def test_an_existing_table_is_replaced_only_with_force(notes, tmp_path):
    out = tmp_path / "out"
    embed_source("text", notes, out, settings=SETTINGS, options=OPTIONS, progress=False)
    with pytest.raises(OutputPathError, match="already holds notes.parquet; give --force"):
        embed_source("text", notes, out, settings=SETTINGS, options=OPTIONS, progress=False)
    done = embed_source(
        "text", notes, out, settings=SETTINGS, options=OPTIONS, progress=False, force=True
    )
    assert done.n_rows == 12
