"""Inputs whose files contradict each other, or repeat themselves, that were taken silently:
predictions in another row order than the test embeddings, reference rows that are TRAIN's
rows, a DICOM file listed twice, a train-sizes key given twice (each now refused with exit code
2 and one line naming it); and inputs whose information was dropped: TEST's own subconcepts
next to a predictions file, empty group cells (one group 'nan')."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_blobs
from test_malformed_inputs import run_tool

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from compare_outputs import blobs


def _one_line_naming(capsys, *parts: str) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    for p in parts:
        assert p in err, (p, err)
    return err


def _own(folder: Path, *, ids: bool = True) -> tuple[Path, Path, Path]:
    """TRAIN, TEST (no subconcept) and REF with features f0000…, four subconcepts."""
    X, t = make_blobs([80, 60, 50, 30], n_features=4, cluster_std=2.0, random_state=0)
    names = np.array(["bus", "saab", "opel", "van"])[t]
    y = (t >= 2).astype(int)
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(X, columns=[f"f{j:04d}" for j in range(4)])
    if ids:
        frame.insert(0, "id", [f"r{i:03d}" for i in range(len(y))])
    frame["y_true"], frame["subconcept"] = y, names
    frame["y_score"] = np.clip(0.35 * y + 0.3 + rng.normal(0, 0.2, len(y)), 0, 1)
    part = rng.permutation(len(y)) % 3
    paths = folder / "train.csv", folder / "test.csv", folder / "ref.csv"
    frame[part == 0].drop(columns=["y_score"]).to_csv(paths[0], index=False)
    frame[part == 1].to_csv(paths[1], index=False)
    frame[part == 2].to_csv(paths[2], index=False)
    return paths


# --- discover: predictions in another row order ---------------------------------------------
def test_discover_refuses_predictions_whose_classes_contradict_the_test_rows(tmp_path, capsys):
    blobs(tmp_path / "in")
    test = pd.read_parquet(tmp_path / "in" / "test.parquet").drop(columns=["id"])
    test.to_parquet(tmp_path / "in" / "test.parquet", index=False)
    preds = pd.read_csv(tmp_path / "in" / "preds.csv").drop(columns=["id"])
    preds.iloc[::-1].to_csv(tmp_path / "in" / "preds.csv", index=False)  # another row order
    argv = ["--train", str(tmp_path / "in" / "train.parquet")]
    argv += ["--test", str(tmp_path / "in" / "test.parquet")]
    argv += ["--predictions", str(tmp_path / "in" / "preds.csv"), "--positive", "effusion"]
    argv += ["--out", str(tmp_path / "out"), "--bootstrap", "0", "--n-estimators", "5"]
    assert run_tool("discover", argv) == 2
    _one_line_naming(capsys, "preds.csv", "test.parquet", "'y_true'", "row ")
    assert not (tmp_path / "out").exists()


# --- subconcepts: reference rows that are TRAIN's rows, without ids ---------------------------
def test_subconcepts_refuses_reference_rows_that_are_train_rows_without_ids(tmp_path, capsys):
    train, test, _ref = _own(tmp_path, ids=False)
    copy = tmp_path / "copy_of_train.csv"
    t = pd.read_csv(train)
    t.assign(y_score=0.5).to_csv(copy, index=False)
    argv = ["--train", str(train), "--test", str(test), "--reference", str(copy)]
    argv += ["--out", str(tmp_path / "out"), "--bootstrap", "0", "--n-estimators", "5"]
    assert run_tool("subconcepts", argv) == 2
    _one_line_naming(capsys, "copy_of_train.csv", "train.csv", "TRAIN row")
    assert not (tmp_path / "out").exists()


# --- subconcepts --predictions: TEST's own subconcept column ---------------------------------
def test_subconcepts_uses_tests_own_subconcepts_next_to_a_predictions_file(tmp_path):
    from medeval.flows.own_model import SubconceptSettings, fit_and_evaluate

    train, test, ref = _own(tmp_path)
    t = pd.read_csv(test)
    pred = tmp_path / "pred.csv"
    t[["id", "y_true", "y_score"]].iloc[::-1].to_csv(pred, index=False)
    features = tmp_path / "features.csv"
    t.drop(columns=["y_score"]).to_csv(features, index=False)  # features, y_true, subconcept
    s = SubconceptSettings(n_estimators=10, n_bootstrap=0)
    ev = fit_and_evaluate(train, features, ref, predictions=pred, settings=s).evaluation
    one_file = fit_and_evaluate(train, test, ref, settings=s).evaluation
    assert np.isfinite(ev.scores["wBA"]) and ev.subconcept_model_source == "test set"
    assert ev.scores == one_file.scores  # as if TEST held the predictions itself


# --- DICOM: a file listed twice -------------------------------------------------------------
def test_dicom_labels_listing_a_file_twice_are_refused(tmp_path):
    from medeval.datasets.base import DataError
    from medeval.datasets.dicom import load_dicom

    (tmp_path / "a.dcm").write_bytes(b"")
    (tmp_path / "b.dcm").write_bytes(b"")
    labels = pd.DataFrame({"file": ["a.dcm", "b.dcm", "./a.dcm"], "label": ["x", "y", "x"]})
    labels.to_csv(tmp_path / "labels.csv", index=False)
    with pytest.raises(DataError, match=r"labels.csv: row 2 .*'./a.dcm'.* listed twice"):
        load_dicom(tmp_path, verify=False)


# --- train sizes: a key given twice ---------------------------------------------------------
def test_a_train_sizes_key_given_twice_is_refused(tmp_path, capsys):
    from medeval.io.predictions import example_paths

    pred, _ = example_paths()
    sizes = json.loads(example_paths()[1].read_text())
    name = next(iter(sizes))
    text = json.dumps(sizes)[:-1] + f', "{name}": {{"class": {sizes[name]["class"]}, "n": 1}}}}'
    (tmp_path / "sizes.json").write_text(text)
    argv = ["--predictions", str(pred), "--train-sizes", str(tmp_path / "sizes.json")]
    assert run_tool("evaluate", [*argv, "--out", str(tmp_path / "out"), "--bootstrap", "0"]) == 2
    _one_line_naming(capsys, "sizes.json", repr(name), "twice")
    assert not (tmp_path / "out").exists()


# --- groups: an empty cell is a group of its own --------------------------------------------
def test_empty_group_cells_are_groups_of_their_own():
    from medeval.evaluation import evaluate_predictions

    rng = np.random.default_rng(0)
    y = np.r_[np.zeros(60, int), np.ones(40, int)]
    s = np.clip(0.3 * y + rng.uniform(0, 0.7, 100), 0, 1)
    groups = np.array([f"p{i // 2}" for i in range(100)], dtype=object)
    groups[::3] = ""  # unknown patients
    own = groups.copy()
    own[::3] = [f"zz unknown {i:03d}" for i in range(len(own[::3]))]  # codes after p…
    a = evaluate_predictions(y, y_score=s, groups=groups, n_bootstrap=50, seed=1)
    b = evaluate_predictions(y, y_score=s, groups=own, n_bootstrap=50, seed=1)
    assert a.intervals == b.intervals


def test_empty_group_cells_are_patients_of_their_own_in_the_splits():
    """Rows without a patient id are split one by one (they were one patient '' or, as NaN,
    code -1, the last patient), and two of them in different parts are no leak."""
    from medeval.datasets.base import LabelledData
    from medeval.splits import Split, check_no_group_leak, group_codes_of
    from medeval.tasks import make_binary_task

    groups = ["p1", "p1", "", "", None, "p2", float("nan")]  # the task holds "None", "nan"
    assert list(group_codes_of(groups)) == [0, 0, 2, 3, 4, 1, 5]
    data = LabelledData(labels=["a"] * 4 + ["b"] * 2 + ["c"], source="t", name="t", groups=groups)
    task = make_binary_task(data, seed=0, min_minority=0)
    split = Split("patient", 0, {"train": np.array([0, 1, 2]), "test": np.array([3, 4, 5, 6])})
    check_no_group_leak(task, split)  # rows 2 and 3: two unknown patients, not one
