"""The forest protocol with discovered subconcepts: the truth only scores the result."""

import dataclasses

import numpy as np
import pytest

from medeval.options import EvaluationOptions
from medeval.protocol.discovered import DISCOVERED_SCORES as LABEL_FREE
from medeval.protocol.discovered import run_fold_discovered
from medeval.scores import INSTANCE_SCORES, REFERENCE_SCORES


@pytest.fixture(scope="module")
def truth_and_corrupted(vehicle_task, vehicle_splits):
    split = vehicle_splits[1]
    kw = {"seed": 0, "n_estimators": 10, "options": EvaluationOptions(n_bootstrap=50)}
    honest = run_fold_discovered(vehicle_task, split, ["none"], **kw)[0]
    # Corrupt the true subconcepts *after* the split: shuffle them within each class (so they
    # stay consistent with y) and swap the subconcept names' sizes around.
    rng = np.random.default_rng(0)
    sc = vehicle_task.subconcept.copy()
    for c in (0, 1):
        rows = np.flatnonzero(vehicle_task.y == c)
        sc[rows] = rng.permutation(sc[rows])
    corrupted_task = dataclasses.replace(vehicle_task, subconcept=sc)
    corrupted = run_fold_discovered(corrupted_task, split, ["none"], **kw)[0]
    return honest, corrupted


def test_label_free_outputs_do_not_depend_on_the_true_subconcepts(truth_and_corrupted):
    honest, corrupted = truth_and_corrupted
    assert {"cBA", "cF1", "cAUC"} <= set(LABEL_FREE)
    for score in LABEL_FREE:
        assert honest["scores"][score] == corrupted["scores"][score], score
        assert honest["intervals"][score] == corrupted["intervals"][score], score
    # no rectified scores on this path, and the record says why
    assert all(honest["scores"][s] is None for s in REFERENCE_SCORES)
    assert "discovered subconcepts" in honest["reference"]["unavailable"]
    strip = {k: v for k, v in honest["discovery"].items() if k != "quality"}
    assert strip == {k: v for k, v in corrupted["discovery"].items() if k != "quality"}
    assert honest["subconcept_model"] == corrupted["subconcept_model"]


def test_true_weight_scores_and_quality_use_the_truth(truth_and_corrupted):
    honest, corrupted = truth_and_corrupted
    assert honest["scores"]["wBA"] != corrupted["scores"]["wBA"]
    assert honest["discovery"]["quality"] != corrupted["discovery"]["quality"]
    # Shuffled labels: chance-level agreement with the discovered clusters.
    assert all(abs(q["ari"]) < 0.1 for q in corrupted["discovery"]["quality"])


def test_record_layout_matches_the_true_path(truth_and_corrupted, vehicle_task):
    rec = truth_and_corrupted[0]
    assert rec["subconcepts"] == "discovered"
    n_minority = len(vehicle_task.minority)
    subsets = {s["subset"] for s in rec["subsets"]}
    assert subsets == {"full", "largest", "smallest"} | {f"sub_{i + 1}" for i in range(n_minority)}
    scores_per_subset = {s["score"] for s in rec["subsets"] if s["subset"] == "smallest"}
    assert scores_per_subset == set(INSTANCE_SCORES) == set(rec["scores"]) - set(REFERENCE_SCORES)
    full = {s["score"]: s["value"] for s in rec["subsets"] if s["subset"] == "full"}
    assert full == pytest.approx({s: rec["scores"][s] for s in INSTANCE_SCORES}, nan_ok=True)
    assert set(rec["intervals"]) == set(INSTANCE_SCORES)
    for score, (low, high) in rec["intervals"].items():
        assert low <= rec["scores"][score] + 1e-12 and rec["scores"][score] <= high + 1e-12
    quality = rec["discovery"]["quality"]
    assert [q["k_true"] for q in quality] == [len(vehicle_task.majority), n_minority]
    assert [q["k_found"] for q in quality] == [c["k"] for c in rec["discovery"]["classes"]]


def test_no_replicates_give_no_intervals(vehicle_task, vehicle_splits):
    options = EvaluationOptions(n_bootstrap=0)
    (rec,) = run_fold_discovered(
        vehicle_task, vehicle_splits[1], ["none"], seed=0, n_estimators=10, options=options
    )
    assert rec["n_bootstrap"] == 0 and rec["intervals"] == {}
    assert not np.isnan(rec["scores"]["wBA"])
