"""medeval/embeddings/table.py: a data set becomes one embedding table (features, label,
group, id)."""

import numpy as np
import pytest

from medeval.datasets.base import DataError, LabelledData
from medeval.embeddings.table import EmbedSettings, embed_table
from medeval.embeddings.text import tfidf_svd

TEXTS = np.array(
    [
        "red spot on the arm",
        "red spot on the leg",
        "dark mole on the back",
        "dark mole on the arm",
        "pale patch on the leg",
    ]
)


def test_text_is_embedded_with_the_label_group_and_id_columns():
    data = LabelledData(
        labels=np.array(["a", "a", "b", "b", "c"]),
        source="probe",
        name="notes",
        text=TEXTS,
        groups=np.array(["p1", "p1", "p2", "p3", "p3"]),
        ids=np.array(["t1", "t2", "t3", "t4", "t5"]),
    )
    settings = EmbedSettings(text_model="tfidf", svd_components=3, seed=1)
    frame, info = embed_table(data, settings, progress=False)
    assert list(frame.columns) == ["f0000", "f0001", "f0002", "label", "group", "id"]
    assert info == {"text_model": "tfidf"}
    np.testing.assert_array_equal(
        frame[["f0000", "f0001", "f0002"]].to_numpy(), tfidf_svd(TEXTS, n_components=3, seed=1)
    )
    assert frame["label"].tolist() == ["a", "a", "b", "b", "c"]
    assert frame["id"].tolist() == ["t1", "t2", "t3", "t4", "t5"]


def test_without_groups_there_is_no_group_column():
    data = LabelledData(
        labels=np.array(["a", "b"] * 3), source="probe", name="n", text=np.append(TEXTS, "x")
    )
    frame, _ = embed_table(
        data, EmbedSettings(text_model="tfidf", svd_components=2), progress=False
    )
    assert "group" not in frame.columns and len(frame) == 6


def test_tabular_data_is_refused_with_what_to_run_instead():
    data = LabelledData(labels=np.array(["a", "b"]), source="keel", name="iris", X=np.zeros((2, 3)))
    with pytest.raises(
        DataError, match="keel/iris is already tabular: run python -m medeval.benchmark"
    ):
        embed_table(data, EmbedSettings(), progress=False)
