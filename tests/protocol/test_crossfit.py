"""Cross-fitted reference rows (ROS and class weights): every training row is scored by a
forest that never saw it, and the records say where their reference rows come from."""

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier

from medeval.protocol.crossfit import CROSS_FIT, cross_fit_scores
from medeval.protocol.forest import METHODS, run_fold


def _memoriser(seed: int) -> RandomForestClassifier:
    """One unpruned tree on every row and feature: it reproduces each training label exactly."""
    return RandomForestClassifier(
        n_estimators=1, bootstrap=False, max_features=None, random_state=seed
    )


def _noise(n: int, seed: int):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = rng.integers(0, 2, n)
    strata = y * 2 + rng.integers(0, 2, n)  # two "subconcepts" per class
    return X, y, strata


@pytest.mark.parametrize("seed", range(5))
def test_no_row_is_scored_by_a_forest_that_saw_it(seed):
    """Labels are noise: a forest that saw a row reproduces its label (agreement 1), a forest
    that did not agrees by chance (about ½)."""
    X, y, strata = _noise(400, seed)
    in_sample = _memoriser(0).fit(X, y).predict(X)
    assert np.mean(in_sample == y) == 1.0  # the memoriser would expose any leak
    s = cross_fit_scores(X, y, strata, "none", seed=seed, make_forest=_memoriser)
    assert s is not None and np.isfinite(s).all()
    assert 0.35 < np.mean((s >= 0.5) == y) < 0.65


def test_groups_stay_in_one_fold():
    """Rows duplicated within a group: split across folds, the copy in the fitting fold gives
    the held-out row its own label; kept together, the agreement stays at chance."""
    X, y, strata = _noise(300, 1)
    X2, y2, s2 = np.repeat(X, 2, axis=0), np.repeat(y, 2), np.repeat(strata, 2)
    groups = np.repeat(np.arange(len(y)), 2)
    kept = cross_fit_scores(X2, y2, s2, "none", seed=3, make_forest=_memoriser, groups=groups)
    leaky = cross_fit_scores(X2, y2, s2, "none", seed=3, make_forest=_memoriser)
    assert 0.35 < np.mean((kept >= 0.5) == y2) < 0.65
    assert np.mean((leaky >= 0.5) == y2) > 0.7


def test_same_seed_same_scores_and_every_row_scored_under_ros():
    X, y, strata = _noise(200, 2)
    y[:150] = 0  # imbalanced, as ROS is for
    strata = np.where(y == 1, 2, strata % 2)

    def make(s):
        return RandomForestClassifier(n_estimators=10, random_state=s)

    a = cross_fit_scores(X, y, strata, "ros", seed=7, make_forest=make)
    b = cross_fit_scores(X, y, strata, "ros", seed=7, make_forest=make)
    c = cross_fit_scores(X, y, strata, "ros", seed=8, make_forest=make)
    assert np.isfinite(a).all() and np.array_equal(a, b) and not np.array_equal(a, c)


def test_a_fold_without_a_class_gives_none():
    X, y, strata = _noise(50, 3)
    y[:] = 0
    y[0] = 1  # one minority row: one fold's fitting rows have no class 1
    strata = y.copy()
    assert cross_fit_scores(X, y, strata, "ros", seed=0, make_forest=_memoriser) is None


def test_records_name_their_reference_rows(vehicle_task, vehicle_splits):
    split = vehicle_splits[2]
    records = run_fold(vehicle_task, split, METHODS, seed=0, n_estimators=10)
    for r in records:
        ref = r["reference"]
        if r["method"] in CROSS_FIT:
            assert ref["source"] == "cross-fitted", r["method"]
            assert "cross-fitting" in ref["out_of_bag"]
            # every training row has a cross-fitted score: only the subconcept forest drops
            assert ref["n_dropped"]["binary"] == 0
        else:
            assert ref["source"] == "out-of-bag", r["method"]
        assert np.isfinite(r["scores"]["rBA"]), r["method"]


def test_cross_fitted_forests_fit_as_many_trees_together_as_the_forest():
    from medeval.protocol.crossfit import trees_per_fold

    assert [trees_per_fold(n) for n in (100, 30, 7, 1)] == [50, 15, 3, 1]
    assert trees_per_fold(100, folds=4) == 25


def test_a_subconcept_rarer_than_the_folds_is_pooled_within_its_class_without_a_warning():
    import warnings

    X, y, strata = _noise(120, 4)
    strata = strata.copy()
    strata[np.flatnonzero(y == 1)[0]] = 9  # one row of its own subconcept
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # scikit-learn's "least populated class" would raise
        s = cross_fit_scores(X, y, strata, "none", seed=1, make_forest=_memoriser)
    assert s is not None and np.isfinite(s).all()
