"""medeval.scorers: the meta-estimator, scorers inside GridSearchCV / cross_validate with
metadata routing, clear errors without it, and pooled out-of-fold scores."""

import numpy as np
import pytest
import sklearn
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import balanced_accuracy_score, f1_score, roc_auc_score
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_validate
from sklearn.tree import DecisionTreeClassifier

from medeval.scorers import SubconceptAware, make_subconcept_scorer, pooled_cross_val_scores
from medeval.weights import class_conditional_weights, predicted_weights, utilities

# subconcept → (class, size, centre): two majority, two minority subconcepts (one small)
SUBCONCEPTS = {
    "n1": (0, 70, (0, 0)),
    "n2": (0, 40, (3, 0)),
    "a": (1, 24, (0, 3)),
    "b": (1, 10, (3, 3)),
}


def make_data(seed=0):
    rng = np.random.default_rng(seed)
    X, y, sc = [], [], []
    for name, (side, n, centre) in SUBCONCEPTS.items():
        X.append(rng.normal(centre, 1.2, size=(n, 2)))
        y += [side] * n
        sc += [name] * n
    return np.vstack(X), np.array(y), np.array(sc)


def model(depth=None):
    return SubconceptAware(
        DecisionTreeClassifier(max_depth=depth, random_state=0),
        RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0),
    )


def folds(sc):
    return list(StratifiedKFold(3, shuffle=True, random_state=0).split(np.zeros(len(sc)), sc))


def fold_reference(depth, X, y, sc, train, test):
    """The scores of one fold, computed independently with scikit-learn's metrics."""
    m = model(depth).fit(X[train], y[train], subconcept=sc[train])
    names = list(m.subconcept_model_.classes_)
    counts = [int((sc[train] == n).sum()) for n in names]
    u = utilities(counts, [SUBCONCEPTS[n][0] for n in names], names)
    s = m.predict_proba(X[test])[:, 1]
    yp = (s >= 0.5).astype(int)
    q = m.subconcept_model_.predict_proba(X[test])
    w = {
        "w": u.values[[names.index(n) for n in sc[test]]],
        "p": predicted_weights(q, u).numpy(),
        "c": class_conditional_weights(q, u, y[test]).numpy(),
    }
    out = {"BA": balanced_accuracy_score(y[test], yp), "AUC": roc_auc_score(y[test], s)}
    for k, wk in w.items():
        out[f"{k}BA"] = balanced_accuracy_score(y[test], yp, sample_weight=wk)
        out[f"{k}F1"] = f1_score(y[test], yp, sample_weight=wk)
        out[f"{k}AUC"] = roc_auc_score(y[test], s, sample_weight=wk)
    return out, (y[test], s, yp, w)


NAMES = ["BA", "pBA", "cBA", "wBA", "cF1", "wAUC"]


def test_grid_search_with_routing_scores_each_fold_and_refits_on_cba():
    X, y, sc = make_data()
    cv = folds(sc)
    scoring = {n: make_subconcept_scorer(n) for n in NAMES}
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(
            model(), {"classifier__max_depth": [1, 2, 6]}, scoring=scoring, refit="cBA", cv=cv
        )
        search.fit(X, y, subconcept=sc)
    for i, depth in enumerate([1, 2, 6]):
        ref = [fold_reference(depth, X, y, sc, tr, te)[0] for tr, te in cv]
        for n in NAMES:
            for f in range(3):
                got = search.cv_results_[f"split{f}_test_{n}"][i]
                assert got == pytest.approx(ref[f][n], abs=1e-9), (depth, n, f)
    assert search.best_index_ == int(np.argmax(search.cv_results_["mean_test_cBA"]))
    assert search.best_estimator_.utilities_.names == ("a", "b", "n1", "n2")
    # utilities of the refitted model come from all rows' counts: u_b = 70 / 10
    assert search.best_estimator_.utilities_.values.tolist() == [70 / 24, 7.0, 1.0, 1.0]


def test_cross_validate_routes_subconcept_to_fit_and_scorer():
    X, y, sc = make_data(1)
    cv = folds(sc)
    with sklearn.config_context(enable_metadata_routing=True):
        res = cross_validate(
            model(3),
            X,
            y,
            cv=cv,
            scoring={n: make_subconcept_scorer(n) for n in ("pBA", "wBA")},
            params={"subconcept": sc},
        )
    for f, (tr, te) in enumerate(cv):
        ref = fold_reference(3, X, y, sc, tr, te)[0]
        assert res["test_pBA"][f] == pytest.approx(ref["pBA"], abs=1e-9)
        assert res["test_wBA"][f] == pytest.approx(ref["wBA"], abs=1e-9)


def test_routing_off_is_a_clear_error():
    X, y, sc = make_data()
    with sklearn.config_context(enable_metadata_routing=False):
        fitted = model().fit(X, y, subconcept=sc)  # fitting alone needs no routing
        with pytest.raises(RuntimeError, match="metadata routing, which is off.*set_config"):
            make_subconcept_scorer("cBA")(fitted, X, y)
        search = GridSearchCV(
            model(),
            {"classifier__max_depth": [1]},
            scoring=make_subconcept_scorer("pBA"),
            cv=folds(sc),
            error_score="raise",
        )
        with pytest.raises(RuntimeError, match="enable_metadata_routing=True"):
            search.fit(X, y, subconcept=sc)


def test_missing_subconcept_is_a_clear_error():
    X, y, sc = make_data()
    with pytest.raises(ValueError, match="SubconceptAware.fit needs subconcept"):
        model().fit(X, y)
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(
            model(),
            {"classifier__max_depth": [1]},
            scoring=make_subconcept_scorer("cBA"),
            cv=folds(sc),
            error_score="raise",
        )
        with pytest.raises(ValueError, match="fit needs subconcept"):
            search.fit(X, y)
        fitted = model().fit(X, y, subconcept=sc)
        with pytest.raises(ValueError, match="wBA needs the test subconcept labels"):
            make_subconcept_scorer("wBA")(fitted, X, y)
        with pytest.raises(ValueError, match="row 0: subconcept 'zz' was not in the training"):
            make_subconcept_scorer("wBA")(fitted, X[:1], y[:1], subconcept=["zz"])
    with pytest.raises(ValueError, match="unknown score 'BAx'"):
        make_subconcept_scorer("BAx")


def test_pooled_scores_pool_out_of_fold_predictions():
    X, y, sc = make_data(2)
    cv = StratifiedKFold(4, shuffle=True, random_state=3)
    names = ["BA", "pBA", "cBA", "wBA", "cAUC", "pF1"]
    got = pooled_cross_val_scores(model(2), X, y, subconcept=sc, scores=names, cv=cv)
    parts = [fold_reference(2, X, y, sc, tr, te)[1] for tr, te in cv.split(X, y)]
    yy, s, yp = (np.concatenate([p[i] for p in parts]) for i in range(3))
    w = {k: np.concatenate([p[3][k] for p in parts]) for k in "wpc"}
    want = {
        "BA": balanced_accuracy_score(yy, yp),
        "pBA": balanced_accuracy_score(yy, yp, sample_weight=w["p"]),
        "cBA": balanced_accuracy_score(yy, yp, sample_weight=w["c"]),
        "wBA": balanced_accuracy_score(yy, yp, sample_weight=w["w"]),
        "cAUC": roc_auc_score(yy, s, sample_weight=w["c"]),
        "pF1": f1_score(yy, yp, sample_weight=w["p"]),
    }
    assert list(got) == names
    assert got == pytest.approx(want, abs=1e-9)
