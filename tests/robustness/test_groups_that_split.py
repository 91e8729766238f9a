"""Groups that split (#38): a row without a patient / lesion id is a group of its own that no
real id can equal (the loaders leave its id empty, ``""``, and every reader of groups takes an
empty id so); the benchmark's collection tables treat an empty group cell the same way (never a
group named ``nan``); a task whose groups cannot fill the parts of its split is refused before
anything is trained, naming the column and the count."""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image
from test_malformed_inputs import _no_work, run_tool

from medeval.datasets import load
from medeval.splits import group_codes_of


def _images(root: Path, n: int, groups: list[str]) -> Path:
    """``root/table.csv``: ``n`` 8×8 images, labels a/b/c in turn, a ``patient`` column."""
    (root / "img").mkdir(parents=True)
    for i in range(n):
        Image.fromarray(np.full((8, 8, 3), i, dtype=np.uint8)).save(root / "img" / f"{i}.png")
    labels = [("a", "b", "c")[i % 3] for i in range(n)]
    frame = pd.DataFrame({"image": [f"{i}.png" for i in range(n)], "label": labels})
    frame["patient"] = groups
    frame.to_csv(root / "table.csv", index=False)
    return root / "table.csv"


def test_an_empty_group_cell_never_equals_a_real_id(tmp_path):
    table = _images(tmp_path, 6, ["row:3", "P1", "P1", "", "row:3", ""])
    data = load("images", table, images=tmp_path / "img", group_column="patient")
    codes = group_codes_of(data.groups)
    assert codes[0] == codes[4] and codes[1] == codes[2]  # the real ids, one group each
    assert len({codes[0], codes[3], codes[5]}) == 3  # rows 3 and 5: two groups of their own


def test_a_collection_tables_empty_group_cell_is_a_group_of_its_own(tmp_path):
    """The benchmark's collection tables (source ``csv``, column ``group``): an empty cell or
    a missing number is no group named 'nan' or '<NA>'."""
    frame = pd.DataFrame({"x": np.arange(6.0), "label": list("aabbcc")})
    for column in (["p1", "", "p1", "p2", None, "p2"], [7, np.nan, 7, 8, np.nan, 8]):
        frame["group"] = column
        frame.to_csv(tmp_path / "t.csv", index=False)
        data = load("csv", tmp_path / "t.csv", group_column="group")
        assert list(data.groups[[1, 4]]) == ["", ""]
        assert list(group_codes_of(data.groups)) == [0, 2, 0, 1, 3, 1]


def test_cross_fitting_folds_keep_unknown_patients_apart():
    from sklearn.ensemble import RandomForestClassifier

    from medeval.protocol.crossfit import cross_fit_scores

    rng = np.random.default_rng(0)
    y = np.r_[np.zeros(40, int), np.ones(40, int)]
    X = rng.normal(size=(80, 3)) + y[:, None]
    groups = np.full(80, "", dtype=object)  # no row has a patient id
    score = cross_fit_scores(
        X, y, y, "none", seed=0, groups=groups,
        make_forest=lambda s: RandomForestClassifier(10, random_state=s),
    )  # fmt: skip
    assert score is not None and np.isfinite(score).all()  # one group could fill no fold


def test_one_group_is_refused_by_tasks_split_naming_the_column_and_count(tmp_path, capsys):
    table = _images(tmp_path, 24, ["P1"] * 24)
    out = tmp_path / "split.csv"
    argv = ["split", "--source", "images", "--path", str(table), "--images", str(tmp_path / "img")]
    argv += ["--group-column", "patient", "--positive", "c", "--out", str(out)]
    assert run_tool("tasks", argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "the 24 rows form 1 group(s) by column 'patient', too few to fill the 4 parts" in err
    assert not out.exists()


def test_too_few_groups_are_refused_by_train_before_training(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(importlib.import_module("medeval.flows.train"), "train_split", _no_work)
    table = _images(tmp_path / "data", 24, ["P1", "P2", "P3"] * 8)  # 3 patients, 4 parts
    argv = ["--source", "images", "--path", str(table), "--images", str(table.parent / "img")]
    argv += ["--group-column", "patient", "--positive", "c", "--out", str(tmp_path / "run")]
    argv += ["model.pretrained=false", "data.cache=false", "train.device=cpu"]
    assert run_tool("train", argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "the 24 rows form 3 group(s) by column 'patient', too few to fill the 4 parts" in err


@pytest.mark.parametrize("scheme", ["cv5x2", "patient"])
def test_the_splitters_refuse_one_group(scheme):
    from medeval.datasets.base import DataError, LabelledData
    from medeval.splits import make_splits
    from medeval.tasks import make_binary_task

    labels = ["a"] * 40 + ["b"] * 20 + ["c"] * 20
    data = LabelledData(labels=labels, source="t", name="t", groups=["p"] * 80)
    task = make_binary_task(data, seed=0, min_minority=0)
    with pytest.raises(DataError, match=r"form 1 group\(s\) by their group ids, too few"):
        make_splits(task, scheme)
