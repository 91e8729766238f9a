"""Out-of-bag reference rows of the forest protocol, checked against scikit-learn's own OOB."""

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sklearn.ensemble._forest as sk_forest
from imblearn.over_sampling import SMOTE, RandomOverSampler
from imblearn.under_sampling import RandomUnderSampler
from sklearn.ensemble import RandomForestClassifier
from sklearn.neighbors import NearestNeighbors

from medeval.io.reference import load_reference
from medeval.protocol.oob import (
    class_score,
    forest_oob,
    full_posteriors,
    reference_rows,
    resample_with_origin,
    seen_by_tree,
)
from medeval.scores import labels_from_scores
from medeval.weights import utilities


def _smote_with_parents(X, y, seed):
    """The linked SMOTE variant, kept for comparison in ``benchmarks/oob_reference.py``."""
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "oob_reference.py"
    spec = importlib.util.spec_from_file_location("oob_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.smote_with_parents(X, y, seed)


def _data(n=240, n_minority=50, seed=0):
    """(n, 4) continuous features (every row distinct), labels with ``n_minority`` ones."""
    rng = np.random.default_rng(seed)
    y = np.zeros(n, dtype=np.int64)
    y[rng.choice(n, n_minority, replace=False)] = 1
    X = rng.normal(size=(n, 4)) + 0.8 * y[:, None]
    return X, y


def _forest(n_trees=30, seed=0, **kwargs):
    return RandomForestClassifier(n_estimators=n_trees, random_state=seed, n_jobs=1, **kwargs)


def _sklearn_seen(forest, origin, n_rows):
    """(T, n_rows) seen-by-tree from scikit-learn's own draw function, independent of ours."""
    n_fit = len(origin)
    seen = np.zeros((len(forest.estimators_), n_rows), dtype=bool)
    for t, tree in enumerate(forest.estimators_):
        drawn = sk_forest._generate_sample_indices(tree.random_state, n_fit, n_fit, None)
        rows = np.asarray(origin)[drawn].ravel()
        seen[t, rows[rows >= 0]] = True
    return seen


@pytest.fixture(scope="module")
def vehicle_train(vehicle_task, vehicle_splits):
    train = vehicle_splits[0]["train"]
    return vehicle_task.data.X[train], vehicle_task.y[train], vehicle_task.subconcept[train]


@pytest.mark.parametrize("target", ["binary", "subconcept"])
@pytest.mark.parametrize("class_weight", [None, "balanced"])
def test_no_resampling_equals_sklearn_oob_decision_function(vehicle_train, target, class_weight):
    X, y, sc = vehicle_train
    labels = y if target == "binary" else sc
    # Enough trees that every row has one out of bag (else scikit-learn warns): balanced
    # weights draw the smallest subconcept's rows about 3 times per tree.
    rf = _forest(150, 3, oob_score=True, class_weight=class_weight).fit(X, labels)
    got = forest_oob(rf, X).proba
    assert got.shape == rf.oob_decision_function_.shape
    np.testing.assert_allclose(got, rf.oob_decision_function_, rtol=0, atol=1e-12)


@pytest.mark.parametrize("class_weight", [None, "balanced"])
def test_in_bag_draws_are_scikit_learns(class_weight):
    X, y = _data()
    rf = _forest(15, 4, class_weight=class_weight).fit(X, y)
    expected = np.zeros((15, len(X)), dtype=bool)
    for t, drawn in enumerate(rf.estimators_samples_):
        expected[t, drawn] = True
    np.testing.assert_array_equal(seen_by_tree(rf, len(X)), expected)


def test_test_rows_in_the_same_pass_equal_predict_proba(vehicle_task, vehicle_splits):
    split = vehicle_splits[1]
    X, y = vehicle_task.data.X, vehicle_task.y
    rf = _forest(25, 1).fit(X[split["train"]], y[split["train"]])
    out = forest_oob(rf, X[split["train"]], X_test=X[split["test"]])
    np.testing.assert_array_equal(out.test_proba, rf.predict_proba(X[split["test"]]))
    np.testing.assert_array_equal(out.proba, forest_oob(rf, X[split["train"]]).proba)


@pytest.mark.parametrize("method", ["none", "weight", "ros", "rus", "smote"])
def test_resampling_is_the_samplers_own(method):
    X, y = _data()
    X_res, y_res, origin = resample_with_origin(X, y, method, 7)
    sampler = {
        "ros": RandomOverSampler(random_state=7),
        "rus": RandomUnderSampler(random_state=7),
        "smote": SMOTE(random_state=7),
    }.get(method)
    X_ref, y_ref = (X, y) if sampler is None else sampler.fit_resample(X, y)
    np.testing.assert_array_equal(X_res, X_ref)
    np.testing.assert_array_equal(y_res, y_ref)
    if method != "smote":
        np.testing.assert_array_equal(X_res, X[origin])  # each row is its origin's copy


def test_ros_no_tree_that_drew_a_copy_scores_the_row():
    X, y = _data()
    X_res, y_res, origin = resample_with_origin(X, y, "ros", 5)
    assert len(X_res) > len(X) and np.bincount(origin).max() > 2  # some rows copied often
    rf = _forest(40, 2).fit(X_res, y_res)
    key = {row.tobytes(): i for i, row in enumerate(X.astype(np.float32))}
    scored = [set() for _ in rf.estimators_]
    for t, tree in enumerate(rf.estimators_):  # instrument: record the rows each tree scores
        original = tree.predict_proba

        def recording(Xq, check_input=True, _t=t, _f=original):
            scored[_t].update(key[row.tobytes()] for row in np.asarray(Xq, dtype=np.float32))
            return _f(Xq, check_input=check_input)

        tree.predict_proba = recording
    out = forest_oob(rf, X, origin)
    seen = _sklearn_seen(rf, origin, len(X))
    for t in range(len(rf.estimators_)):
        assert scored[t] == set(np.flatnonzero(~seen[t]))  # every unseen row, no seen one
    np.testing.assert_array_equal(out.n_trees, (~seen).sum(0))
    # Copies are what matters: treating copies as new rows would let trees see their rows.
    naive = _sklearn_seen(rf, np.where(np.arange(len(origin)) < len(X), origin, -1), len(X))
    assert (naive < seen).any()


def test_rus_dropped_rows_get_the_whole_forest():
    X, y = _data()
    X_res, y_res, origin = resample_with_origin(X, y, "rus", 4)
    dropped = np.setdiff1d(np.arange(len(X)), origin)
    assert len(dropped) == (y == 0).sum() - (y == 1).sum()
    rf = _forest(30, 1).fit(X_res, y_res)
    out = forest_oob(rf, X, origin)
    np.testing.assert_array_equal(out.n_trees[dropped], 30)
    np.testing.assert_allclose(out.proba[dropped], rf.predict_proba(X[dropped]), rtol=0, atol=1e-12)
    kept = origin  # RUS keeps each row at most once: OOB as without resampling
    np.testing.assert_array_equal(
        seen_by_tree(rf, len(X), origin)[:, kept], seen_by_tree(rf, len(kept))
    )


def test_smote_parents_are_the_rows_each_point_was_interpolated_from():
    X, y = _data()
    X_res, y_res, origin = _smote_with_parents(X, y, 3)
    X_ref, y_ref = SMOTE(random_state=3).fit_resample(X, y)  # recording changes no point
    np.testing.assert_array_equal(X_res, X_ref)
    np.testing.assert_array_equal(y_res, y_ref)
    n = len(X)
    np.testing.assert_array_equal(origin[:n], np.column_stack([np.arange(n), np.full(n, -1)]))
    base, nb = origin[n:, 0], origin[n:, 1]
    assert (y[base] == 1).all() and (y[nb] == 1).all() and (base != nb).all()
    # The neighbour is one of the base's 5 nearest minority rows (SMOTE's default k) ...
    minority = np.flatnonzero(y == 1)
    knn = NearestNeighbors(n_neighbors=6).fit(X[minority]).kneighbors(X[minority])[1][:, 1:]
    pos = {r: i for i, r in enumerate(minority)}
    assert all(pos[b] != pos[m] and pos[m] in knn[pos[b]] for b, m in zip(base, nb, strict=True))
    # ... and the point lies on the segment between them.
    d = X[nb] - X[base]
    t = np.sum((X_res[n:] - X[base]) * d, axis=1) / np.sum(d * d, axis=1)
    assert ((t >= 0) & (t <= 1)).all()
    np.testing.assert_allclose(X[base] + t[:, None] * d, X_res[n:], atol=1e-9)
    rf = _forest(30, 0).fit(X_res, y_res)
    np.testing.assert_array_equal(seen_by_tree(rf, n, origin), _sklearn_seen(rf, origin, n))


def test_smote_without_links_counts_only_the_row_itself():
    X, y = _data()
    _, _, linked = _smote_with_parents(X, y, 3)
    X_res, y_res, unlinked = resample_with_origin(X, y, "smote", 3)  # the default
    n = len(X)
    np.testing.assert_array_equal(unlinked[:n], np.arange(n))
    assert (unlinked[n:] == -1).all()
    rf = _forest(30, 0).fit(X_res, y_res)
    loose, strict = forest_oob(rf, X, unlinked), forest_oob(rf, X, linked)
    assert (strict.n_trees <= loose.n_trees).all()
    assert (strict.n_trees[y == 1] < loose.n_trees[y == 1]).mean() > 0.9  # nearly every row


def test_rows_with_no_oob_tree_are_nan():
    X, y = _data(n=120, n_minority=30)
    rf = _forest(2, 0).fit(X, y)
    seen = seen_by_tree(rf, len(X))
    out = forest_oob(rf, X)  # warnings are errors: no 0/0 warning either
    none = seen.all(axis=0)
    assert none.any() and (~none).any()
    assert np.isnan(out.proba[none]).all() and np.isfinite(out.proba[~none]).all()
    assert out.n_missing == none.sum()
    np.testing.assert_array_equal(out.n_trees, (~seen).sum(0))


def test_same_seed_same_rows_other_seed_other_rows():
    X, y = _data()

    def run(seed):
        X_res, y_res, origin = resample_with_origin(X, y, "smote", seed)
        rf = _forest(20, seed).fit(X_res, y_res)
        return forest_oob(rf, X, origin).proba

    np.testing.assert_array_equal(run(1), run(1))
    assert not np.array_equal(run(1), run(2), equal_nan=True)


def test_a_scikit_learn_that_draws_differently_is_followed(monkeypatch):
    X, y = _data()
    rf = _forest(10, 0).fit(X, y)
    original = sk_forest._generate_sample_indices

    def shifted(random_state, n_samples, n_samples_bootstrap, sample_weight):
        return (
            original(random_state, n_samples, n_samples_bootstrap, sample_weight) + 1
        ) % n_samples

    monkeypatch.setattr(sk_forest, "_generate_sample_indices", shifted)
    expected = np.zeros((10, len(X)), dtype=bool)
    for t, drawn in enumerate(rf.estimators_samples_):
        expected[t, drawn] = True
    np.testing.assert_array_equal(seen_by_tree(rf, len(X)), expected)


def test_origin_must_match_the_fitted_rows():
    X, y = _data()
    rf = _forest(5, 0).fit(X, y)
    with pytest.raises(ValueError, match="fitted on 240"):
        forest_oob(rf, X, np.arange(100))
    with pytest.raises(ValueError, match="refers to row"):
        forest_oob(rf, X[:10], np.arange(240))
    with pytest.raises(ValueError, match="bootstrap"):
        forest_oob(_forest(5, 0, bootstrap=False).fit(X, y), X)


def test_class_columns_and_posteriors_keep_nan_rows():
    proba = np.array([[0.2, 0.8], [np.nan, np.nan]])
    np.testing.assert_array_equal(class_score(proba, np.array([0, 1])), [0.8, np.nan])
    np.testing.assert_array_equal(class_score(proba[:, :1], np.array([0])), [0.0, np.nan])
    full = full_posteriors(proba, np.array([0, 2]), 3)
    np.testing.assert_array_equal(full, [[0.2, 0.0, 0.8], [np.nan] * 3])


def test_reference_table_reads_back_as_an_evaluate_reference_file(tmp_path):
    names = ["maj", "min_a", "min_b"]
    u = utilities(np.array([60, 20, 10]), np.array([0, 1, 1]), names)
    y = np.array([0, 1, 1, 0, 1])
    score = np.array([0.1, 0.5, np.nan, 0.7, 0.3])
    sub = np.array(["maj", "min_a", "min_b", "maj", "min_b"], dtype=object)
    q = np.array([[0.8, 0.1, 0.1], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8], [np.nan] * 3, [0, 0.4, 0.6]])
    ref = reference_rows(y, score, sub, q, names, threshold=0.5)
    assert ref.n_dropped == {"binary": 1, "subconcept": 1, "total": 2}
    assert ref.dropped_by_subconcept == {"maj": 1, "min_a": 0, "min_b": 1}
    np.testing.assert_array_equal(ref.rows, [0, 1, 4])
    t = ref.table
    assert list(t.columns) == [
        "y_true",
        "y_score",
        "y_pred",
        "subconcept",
        "q_maj",
        "q_min_a",
        "q_min_b",
    ]
    np.testing.assert_array_equal(t["y_pred"], labels_from_scores(score[[0, 1, 4]], 0.5))
    assert t["y_pred"].tolist() == [0, 1, 0]  # a score at the threshold is class 1
    path = tmp_path / "reference.csv"
    t.to_csv(path, index=False)
    _, back = load_reference(path, u)
    np.testing.assert_array_equal(back.y_true, y[[0, 1, 4]])
    assert list(back.subconcept) == ["maj", "min_a", "min_b"]
    pd.testing.assert_frame_equal(
        back.posteriors.reset_index(drop=True),
        pd.DataFrame(q[[0, 1, 4]], columns=names),
        check_dtype=False,
    )
