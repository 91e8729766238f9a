"""``python -m medeval.benchmark --save-predictions``: every record's fold reopens in
``python -m medeval.evaluate`` and gives the record's very scores and intervals."""

from __future__ import annotations

import json
import math
import shlex
from pathlib import Path

import pandas as pd
import pytest

from medeval.benchmark import main as benchmark_main
from medeval.evaluate import main as evaluate_main
from medeval.protocol.saved import FOLD_FILES, fold_folder, has_fold_files
from medeval.protocol.store import ResultsStore
from medeval.scores import ALL_SCORES, REFERENCE_SCORES

SETS, METHODS = ("vehicle",), ("none", "ros")


def _run(shared_data: Path, out: Path, *extra: str) -> int:
    return benchmark_main(
        [
            "--collection", "keel", "--data", str(shared_data), "--out", str(out),
            "--datasets", ",".join(SETS), "--methods", ",".join(METHODS),
            "--n-estimators", "10", "--max-splits", "1", "--no-analyze", "--quiet",
            *extra,
        ]
    )  # fmt: skip


#: Evaluation options other than the protocol's: the saved command must give them too.
OTHER = ("--threshold", "0.4", "--stratify", "none", "--bootstrap", "20")


@pytest.fixture(scope="module", params=[(), OTHER], ids=["defaults", "other-options"])
def saved(shared_data, tmp_path_factory, request) -> Path:
    out = tmp_path_factory.mktemp("saved") / "bench"
    assert _run(shared_data, out, "--save-predictions", *request.param) == 0
    return out


def _same(a, b) -> bool:
    if a is None or b is None or (isinstance(a, float) and math.isnan(a)):
        return (a is None or math.isnan(a)) and (b is None or math.isnan(b))
    return a == b


def test_every_record_has_its_fold_in_evaluate_format(saved):
    records = ResultsStore(saved).records()
    assert len(records) == len(SETS) * len(METHODS)
    for rec in records:
        folder = fold_folder(saved, rec["dataset"], rec["method"], rec["split"])
        assert {p.name for p in folder.iterdir()} >= {*FOLD_FILES, "reference.csv"}
        test = pd.read_csv(folder / "predictions.csv")
        assert len(test) == rec["n_test"]
        assert {"id", "y_true", "y_score", "subconcept"} <= set(test.columns)
        sizes = json.loads((folder / "train_sizes.json").read_text())
        assert sum(v["n"] for v in sizes.values()) == rec["n_train"]
        assert {f"q_{name}" for name in sizes} <= set(test.columns)
        ref = pd.read_csv(folder / "reference.csv")
        assert len(ref) == rec["reference"]["n"]
        # reference rows are training rows, never test rows
        assert not set(ref["id"]) & set(test["id"])


def test_evaluate_on_a_saved_fold_reproduces_the_record(saved, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(saved)  # fold.json's command runs in the results folder
    for rec in ResultsStore(saved).records():
        folder = fold_folder(saved, rec["dataset"], rec["method"], rec["split"])
        fold = json.loads((folder / "fold.json").read_text())
        assert fold["n_bootstrap"] == rec["n_bootstrap"]
        assert fold["confidence"] == rec["confidence"]
        argv = shlex.split(fold["command"])
        assert argv[:3] == ["python", "-m", "medeval.evaluate"]
        settings = json.loads((saved / "run.json").read_text())
        if "threshold" in settings:  # a run with other evaluation options
            assert fold["n_bootstrap"] == 20 and settings["stratify"] == "none"
            assert " ".join(argv).endswith("--threshold 0.4 --stratify none")
        out = tmp_path / f"{rec['method']}-{rec['split']}"
        assert evaluate_main([*argv[3:], "--out", str(out), "--quiet"]) == 0
        metrics = json.loads((out / "metrics.json").read_text())
        rectified = list(REFERENCE_SCORES)
        others = [s for s in ALL_SCORES if s not in REFERENCE_SCORES]
        for s in others:
            assert _same(metrics["scores"][s], rec["scores"][s]), (rec["method"], s)
            lo, hi = rec["intervals"][s]
            got = metrics["intervals"][s]
            assert _same(got["low"], lo) and _same(got["high"], hi), (rec["method"], s)
        # the rectified scores too: evaluate rectifies with the saved out-of-bag rows
        assert all(rec["scores"][s] is not None for s in rectified)
        for s in rectified:
            assert _same(metrics["scores"][s], rec["scores"][s]), (rec["method"], s)
            lo, hi = rec["intervals"][s]
            got = metrics["intervals"][s]
            assert _same(got["low"], lo) and _same(got["high"], hi), (rec["method"], s)
        families = {k: v for k, v in metrics["recommended"].items() if k != "per_subconcept"}
        assert families == rec["recommended"]
        assert metrics["recommended"]["per_subconcept"] == "recall"  # test subconcepts known


def test_resume_writes_the_folds_of_records_that_lack_them(shared_data, tmp_path):
    out = tmp_path / "bench"
    assert _run(shared_data, out) == 0
    assert not (out / "predictions").exists()
    before = {r["method"]: r["scores"] for r in ResultsStore(out).records()}
    assert _run(shared_data, out, "--save-predictions", "--resume") == 0
    for method in METHODS:
        assert has_fold_files(out, SETS[0], method, 0)
    after = {r["method"]: r["scores"] for r in ResultsStore(out).records()}
    assert json.dumps(after, sort_keys=True) == json.dumps(before, sort_keys=True)
    # an interrupted fold (its last file, fold.json, missing) is rewritten on the next run
    (fold_folder(out, SETS[0], "ros", 0) / "fold.json").unlink()
    assert not has_fold_files(out, SETS[0], "ros", 0)
    assert _run(shared_data, out, "--save-predictions", "--resume") == 0
    assert has_fold_files(out, SETS[0], "ros", 0)


def test_discovered_subconcepts_refuse_saved_predictions(shared_data, tmp_path, capsys):
    code = _run(shared_data, tmp_path / "b", "--save-predictions", "--subconcepts", "discovered")
    assert code == 2
    assert "--save-predictions" in capsys.readouterr().err
