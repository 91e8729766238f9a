"""Out-of-bag (and cross-fitted) reference rows in the forest protocol: they reach the record,
give finite rectified scores on a KEEL fold, and leave everything else of the record as it
was."""

import math

import numpy as np
import pandas as pd
import pytest
from imblearn.over_sampling import SMOTE
from sklearn.ensemble import RandomForestClassifier

from medeval.evaluation import evaluate_predictions
from medeval.protocol.crossfit import CROSS_FIT
from medeval.protocol.forest import (
    METHODS,
    N_BOOTSTRAP,
    THRESHOLD,
    _fit_binary,
    _shared_fold,
    derive_seed,
    fold_reference,
    run_fold,
)
from medeval.scores import INSTANCE_SCORES, REFERENCE_SCORES
from medeval.weights import train_utilities

SPLIT, TREES = 3, 30


@pytest.fixture(scope="module")
def records(vehicle_task, vehicle_splits):
    return run_fold(vehicle_task, vehicle_splits[SPLIT], METHODS, seed=0, n_estimators=TREES)


def test_out_of_bag_reference_rows_reach_the_record(records, vehicle_task, vehicle_splits):
    n_train = len(vehicle_splits[SPLIT]["train"])
    for r in records:
        ref = r["reference"]
        source = "cross-fitted" if r["method"] in CROSS_FIT else "out-of-bag"
        assert ref["source"] == source and "unavailable" not in ref, r["method"]
        assert ref["n"] + ref["n_dropped"]["total"] == n_train
        assert set(ref["dropped_by_subconcept"]) == set(vehicle_task.subconcept_names)
        assert sum(ref["dropped_by_subconcept"].values()) == ref["n_dropped"]["total"]
        assert r["recommended"] == {"BA": "rBA", "F1": "rF1", "AUC": "rAUC"}
    by = {r["method"]: r["reference"] for r in records}
    # without resampling a row misses all 30 trees with probability ~ e^-30: none dropped
    assert by["none"]["n_dropped"]["binary"] == 0
    # RUS: the rows the undersampler left out are out of bag for every tree, none dropped
    assert by["rus"]["n_dropped"]["binary"] == 0
    # ROS and class weights: cross-fitted, every training row has a binary score
    assert by["ros"]["n_dropped"]["binary"] == by["weight"]["n_dropped"]["binary"] == 0
    # the subconcept forest is the same for every method, so its dropped rows are too
    assert len({ref["n_dropped"]["subconcept"] for ref in by.values()}) == 1


def test_rectified_scores_finite_and_equal_to_cm_minus_its_reference_error(
    records, vehicle_task, vehicle_splits
):
    """rM = cM(test) − (cM(R) − wM(R)), with cM(R) and wM(R) computed here from the same
    out-of-bag rows by the plain evaluation (true subconcepts known on R)."""
    split = vehicle_splits[SPLIT]
    shared = _shared_fold(vehicle_task, split, SPLIT, seed=0, n_estimators=TREES)
    for r in records:
        method = r["method"]
        for name in REFERENCE_SCORES:
            assert math.isfinite(r["scores"][name]), (method, name)
            lo, hi = r["intervals"][name]
            assert lo <= r["scores"][name] <= hi
        _, oob, how = _fit_binary(
            vehicle_task, split["train"], split["test"], method,
            seed=derive_seed(0, vehicle_task.name, SPLIT, method), n_estimators=TREES,
        )  # fmt: skip
        ref, info = fold_reference(vehicle_task, split["train"], shared, oob, method, source=how)
        assert info["n"] == len(ref) == r["reference"]["n"]
        on_ref = evaluate_predictions(
            ref.y_true,
            y_score=ref.y_score,
            threshold=THRESHOLD,
            subconcept=np.asarray(ref.names)[ref.subconcept],
            posteriors=pd.DataFrame(ref.posteriors, columns=list(ref.names)),
            train_sizes=shared["utilities"],
            n_bootstrap=0,
        )
        for family in ("BA", "F1", "AUC"):
            error = on_ref.scores["c" + family] - on_ref.scores["w" + family]
            expected = r["scores"]["c" + family] - error
            assert r["scores"]["r" + family] == pytest.approx(expected, abs=1e-9), method


def _old_record_scores(task, split, method, n_estimators):
    """Scores and intervals of a fold computed as before reference rows existed: the forests'
    predict_proba on the test rows, no reference rows."""
    train, test = split["train"], split["test"]
    X, y = task.data.X, task.y
    seed = derive_seed(0, task.name, SPLIT, "subconcept")
    sub = RandomForestClassifier(n_estimators=n_estimators, random_state=seed, n_jobs=1)
    sub.fit(X[train], task.subconcept[train])
    proba = np.zeros((len(test), len(task.subconcepts)))
    proba[:, sub.classes_] = sub.predict_proba(X[test])
    seed = derive_seed(0, task.name, SPLIT, method)
    Xtr, ytr = X[train], y[train]
    if method == "smote":
        Xtr, ytr = SMOTE(random_state=seed).fit_resample(Xtr, ytr)
    rf = RandomForestClassifier(n_estimators=n_estimators, random_state=seed, n_jobs=1)
    score = rf.fit(Xtr, ytr).predict_proba(X[test])[:, 1]
    names = np.asarray(task.subconcept_names, dtype=object)
    return evaluate_predictions(
        y[test],
        y_score=score,
        threshold=THRESHOLD,
        subconcept=names[task.subconcept[test]],
        posteriors=pd.DataFrame(proba, columns=list(task.subconcept_names)),
        train_sizes=train_utilities(task, train),
        n_bootstrap=N_BOOTSTRAP,
        seed=derive_seed(0, task.name, SPLIT, method, "bootstrap"),
    )


@pytest.mark.parametrize("method", ["none", "smote"])
def test_everything_but_the_new_keys_is_as_without_reference_rows(
    records, vehicle_task, vehicle_splits, method
):
    """The forests, their test predictions and every instance-weighted score, interval and
    subset are bit-identical to the computation without reference rows."""
    old = _old_record_scores(vehicle_task, vehicle_splits[SPLIT], method, TREES)
    r = next(r for r in records if r["method"] == method)
    for name in INSTANCE_SCORES:
        assert r["scores"][name] == old.scores[name], name
        assert tuple(r["intervals"][name]) == old.intervals[name], name
    subsets = old.subsets[["subset", "subconcept", "score", "value"]]
    got = pd.DataFrame(r["subsets"]).set_index(["subset", "score"]).value
    want = subsets.set_index(["subset", "score"]).value
    assert got.loc[want.index].tolist() == want.tolist()


def test_a_minority_subconcept_without_out_of_bag_rows_leaves_the_rectified_scores_out(
    vehicle_task, vehicle_splits
):
    split = vehicle_splits[SPLIT]
    shared = _shared_fold(vehicle_task, split, SPLIT, seed=0, n_estimators=5)
    train = split["train"]
    smallest = vehicle_task.minority[-1].name
    oob = np.full(len(train), 0.5)
    oob[shared["train_names"] == smallest] = np.nan  # e.g. copied into every tree by ROS
    ref, info = fold_reference(vehicle_task, train, shared, oob, "ros")
    assert ref is None and info["n"] == 0
    assert smallest in info["unavailable"] and "no reference row" in info["unavailable"]
    assert info["dropped_by_subconcept"][smallest] == int(np.sum(shared["train_names"] == smallest))
