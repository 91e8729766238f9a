"""One fold of the forest protocol on a real KEEL task."""

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, f1_score, roc_auc_score

from medeval.evaluation import ALL_SCORES
from medeval.protocol.forest import (
    METHODS,
    N_BOOTSTRAP,
    derive_seed,
    run_fold,
    subconcept_model_scores,
)
from medeval.protocol.oob import resample_with_origin


def _strip(records):
    return [{k: v for k, v in r.items() if k != "timing"} for r in records]


def test_derive_seed_is_stable_and_depends_on_every_part():
    assert derive_seed(0, "abalone", 3, "none") == derive_seed(0, "abalone", 3, "none")
    seeds = {derive_seed(s, d, k) for s in (0, 1) for d in ("a", "b") for k in (0, 1)}
    assert len(seeds) == 8
    assert all(0 <= s < 2**31 for s in seeds)


@pytest.fixture(scope="module")
def fold_records(vehicle_task, vehicle_splits):
    return run_fold(vehicle_task, vehicle_splits[3], METHODS, seed=0, n_estimators=10)


def test_one_record_per_method_with_all_scores_and_subsets(fold_records, vehicle_task):
    assert [r["method"] for r in fold_records] == list(METHODS)
    n_minority = len(vehicle_task.minority)
    for r in fold_records:
        assert r["split"] == 3 and r["repeat"] == 1 and r["fold"] == 1
        assert set(r["scores"]) == set(ALL_SCORES)
        assert all(0 <= v <= 1 for v in r["scores"].values())
        assert set(r["intervals"]) == set(ALL_SCORES) and r["n_bootstrap"] == N_BOOTSTRAP
        for k, (lo, hi) in r["intervals"].items():
            assert lo <= r["scores"][k] <= hi, k
        assert r["recommended"]["BA"] == "rBA"  # out-of-bag reference rows rectify cBA
        subsets = {s["subset"] for s in r["subsets"]}
        expected = {"full", "largest", "smallest"} | {f"sub_{i + 1}" for i in range(n_minority)}
        assert subsets == expected
        # every score on every subset, the rectified ones included (docs/method.md,
        # "Evaluation subsets and analyses")
        assert len(r["subsets"]) == len(expected) * len(ALL_SCORES)
        assert {s["score"] for s in r["subsets"]} == set(ALL_SCORES)
        largest = [s for s in r["subsets"] if s["subset"] == "largest"]
        assert {s["subconcept"] for s in largest} == {vehicle_task.minority[0].name}


def test_utilities_and_true_weights_come_from_the_training_fold(
    fold_records, vehicle_task, vehicle_splits
):
    split = vehicle_splits[3]
    train_counts = vehicle_task.train_counts(split["train"])
    test_counts = vehicle_task.train_counts(split["test"])
    biggest_majority = train_counts[vehicle_task.sides == 0].max()
    rows = {s["subconcept"]: s for s in fold_records[0]["per_subconcept"]}
    for code, sc in enumerate(vehicle_task.subconcepts):
        row = rows[sc.name]
        u = biggest_majority / train_counts[code] if sc.side == 1 else 1.0
        assert row["n_train"] == train_counts[code]
        assert row["n_test"] == test_counts[code]
        assert row["utility"] == pytest.approx(u)
        assert row["true_weight_sum"] == pytest.approx(u * test_counts[code])
    # the subconcept forest is shared: identical weight sums and model scores for every method
    for r in fold_records[1:]:
        assert r["per_subconcept"][0]["predicted_weight_sum"] == pytest.approx(
            fold_records[0]["per_subconcept"][0]["predicted_weight_sum"]
        )
        assert r["subconcept_model"] == fold_records[0]["subconcept_model"]


def test_a_method_gives_the_same_record_alone_or_with_others(
    fold_records, vehicle_task, vehicle_splits
):
    alone = run_fold(vehicle_task, vehicle_splits[3], ["smote"], seed=0, n_estimators=10)
    assert _strip(alone) == _strip([r for r in fold_records if r["method"] == "smote"])
    other_seed = run_fold(vehicle_task, vehicle_splits[3], ["smote"], seed=1, n_estimators=10)
    assert other_seed[0]["scores"] != alone[0]["scores"]


def test_methods_differ_and_unknown_method_is_refused(fold_records, vehicle_task, vehicle_splits):
    assert len({r["scores"]["BA"] for r in fold_records}) > 1
    with pytest.raises(ValueError, match="adasyn"):
        run_fold(vehicle_task, vehicle_splits[0], ["none", "adasyn"], seed=0)


@pytest.mark.parametrize("method", ["ros", "rus", "smote"])
def test_samplers_balance_the_training_fold_only(method):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = np.r_[np.zeros(100, int), np.ones(20, int)]
    Xr, yr, _ = resample_with_origin(X, y, method, seed=0)
    assert np.bincount(yr)[0] == np.bincount(yr)[1]
    assert Xr.shape[1] == 3


@pytest.mark.parametrize("k", [2, 3, 6])
def test_subconcept_model_scores_match_sklearn(k):
    rng = np.random.default_rng(k)
    codes = rng.integers(0, k, 200)
    proba = rng.dirichlet(np.ones(k), 200).round(1)  # rounding makes ties
    proba[:, 0] += 1 - proba.sum(1)
    got = subconcept_model_scores(codes, proba)
    pred = proba.argmax(1)
    ref_auc = (
        roc_auc_score(codes, proba, multi_class="ovr", average="macro")
        if k > 2
        else roc_auc_score(codes, proba[:, 1])
    )
    assert got["auc_ovr_macro"] == pytest.approx(ref_auc)
    assert got["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(codes, pred))
    ref_f1 = f1_score(codes, pred, average="macro")  # the subconcepts seen, never a silent 0
    assert got["f1_macro"] == pytest.approx(ref_f1)


def test_subconcept_model_scores_perfect_and_missing_class():
    codes = np.array([0, 0, 1, 1, 2, 2, 2])
    perfect = subconcept_model_scores(codes, np.eye(4)[codes])
    # class 3 is absent from the test fold and never predicted: every score skips it (macro F1
    # counted it as 0 before, 0.75)
    assert perfect == {"auc_ovr_macro": 1.0, "balanced_accuracy": 1.0, "f1_macro": 1.0}
