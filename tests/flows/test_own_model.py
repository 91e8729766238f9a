"""The own-model flow: SubconceptModel (any scikit-learn classifier) and evaluate_own_model."""

import numpy as np
import own_model_data
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import make_blobs
from sklearn.linear_model import LogisticRegression

from medeval.evaluation import evaluate_predictions
from medeval.flows.own_model import SubconceptSettings, evaluate_own_model, fit_and_evaluate
from medeval.subconcept_model import SubconceptModel, train_sizes
from medeval.weights import class_posteriors


def _blobs(seed=0):
    X, t = make_blobs([60, 50, 40, 30], n_features=4, cluster_std=1.0, random_state=seed)
    names = np.array(["bus", "saab", "opel", "van"])[t]
    y = (t >= 2).astype(int)
    return X, names, y


def test_columns_are_stable_whatever_the_row_order():
    X, names, y = _blobs()
    a = SubconceptModel().fit(X, names, y)
    perm = np.random.default_rng(1).permutation(len(y))
    b = SubconceptModel().fit(X[perm], names[perm], y[perm])
    # class 0 first, then class 1, each by name
    assert list(a.classes_) == list(b.classes_) == ["bus", "saab", "opel", "van"]
    assert list(a.class_of_) == [0, 0, 1, 1]
    assert a.train_sizes_ == {
        "bus": {"class": 0, "n": 60},
        "saab": {"class": 0, "n": 50},
        "opel": {"class": 1, "n": 40},
        "van": {"class": 1, "n": 30},
    }
    q = a.predict_proba(X)
    np.testing.assert_allclose(q.sum(axis=1), 1.0)
    assert list(a.posteriors(X).columns) == ["bus", "saab", "opel", "van"]
    # the sizes known before any fit (what the flow checks TEST and REF against) are the fit's,
    # in the same order
    assert list(train_sizes(names[perm], y[perm]).items()) == list(a.train_sizes_.items())


def test_any_sklearn_classifier_matches_it_fitted_alone():
    X, names, y = _blobs()
    est = LogisticRegression(C=0.5)
    model = SubconceptModel(est).fit(X, names, y)
    assert model.get_params()["estimator"] is est and not hasattr(est, "coef_")  # cloned
    assert clone(model).get_params()["estimator"].C == 0.5
    alone = LogisticRegression(C=0.5).fit(X, names)  # sklearn orders the names alphabetically
    order = [list(alone.classes_).index(n) for n in model.classes_]
    np.testing.assert_allclose(model.predict_proba(X), alone.predict_proba(X)[:, order])
    # the within-class posteriors medeval's weights use
    cp = class_posteriors(model.predict_proba(X), model.utilities_, y, columns=model.classes_)
    q = cp.q.numpy()
    assert np.all(q[y == 1][:, :2] == 0) and np.all(q[y == 0][:, 2:] == 0)
    assert (model.classes_[model.predict_proba(X).argmax(axis=1)] == names).mean() > 0.8


def test_default_forest_is_the_protocols():
    X, names, y = _blobs()
    model = SubconceptModel(random_state=3).fit(X, names, y)
    rf = model.estimator_
    assert (rf.n_estimators, rf.random_state, rf.n_jobs) == (100, 3, 1)


def test_a_subconcept_in_both_classes_is_refused():
    X, names, y = _blobs()
    y = y.copy()
    y[np.flatnonzero(names == "opel")[0]] = 0
    with pytest.raises(ValueError, match="'opel' has rows of both classes"):
        SubconceptModel().fit(X, names, y)
    with pytest.raises(ValueError, match="one of each per row"):
        SubconceptModel().fit(X, names[:-1], y)


def test_settings_name_the_bad_field():
    with pytest.raises(ValueError, match="n_estimators"):
        SubconceptSettings(n_estimators=0)
    with pytest.raises(ValueError, match="method"):
        SubconceptSettings(method="dbscan")


@pytest.fixture(scope="module")
def vehicle(shared_data):
    return own_model_data.vehicle(shared_data)


def test_rectified_ba_is_recommended_and_covers_the_true_wba(vehicle):
    """Logistic regression on KEEL vehicle: REF gives rBA, whose interval holds the wBA
    computed with the test rows' true subconcepts."""
    s = SubconceptSettings(n_bootstrap=200)
    ev = evaluate_own_model(vehicle.train, vehicle.test, vehicle.reference, settings=s)
    assert ev.recommended["BA"] == "rBA"
    sizes = vehicle.train.groupby("subconcept")["y_true"].agg(["first", "size"]).to_dict("index")
    truth = evaluate_predictions(
        vehicle.test["y_true"],
        y_score=vehicle.test["y_score"],
        subconcept=vehicle.test_subconcept,
        train_sizes={k: {"class": int(v["first"]), "n": int(v["size"])} for k, v in sizes.items()},
        n_bootstrap=0,
    )
    lo, hi = ev.intervals["rBA"]
    assert lo <= truth.scores["wBA"] <= hi
    assert abs(truth.scores["wBA"] - truth.scores["BA"]) > 0.02  # the weighting matters here
    assert ev.reference["n"] == len(vehicle.reference)


def test_without_reference_the_class_conditional_ba_is_recommended(vehicle, tmp_path):
    train, _, test = vehicle.write(tmp_path)
    out = fit_and_evaluate(train, test, settings=SubconceptSettings(n_bootstrap=0))
    assert out.evaluation.recommended["BA"] == "cBA"
    assert "reference.csv" not in out.files
    notes = out.evaluation.notes  # how to give reference rows, for this command's REF
    assert any("--reference REF" in n and "the features" in n for n in notes), notes
    assert not any("q_<subconcept>" in n for n in notes)
    pred = pd.read_csv(pd.io.common.BytesIO(out.files["predictions.csv"]))
    q = [c for c in pred.columns if c.startswith("q_")]
    assert q == ["q_bus", "q_saab", "q_opel", "q_van"]
    assert not any(c.startswith("f0") for c in pred.columns)  # features are left out
    assert pred["id"].tolist() == vehicle.test["id"].tolist()
    np.testing.assert_allclose(
        pred[q].to_numpy(), out.model.predict_proba(vehicle.test.filter(like="f0").to_numpy())
    )


def _tables(tmp_path, record: str | None):
    """TRAIN and TEST embedding tables of the blobs (TEST with predictions), and, with
    ``record`` (its weights source), TRAIN's <name>.embedding.json as embed writes it."""
    import json

    X, names, y = _blobs()
    frame = pd.DataFrame(X, columns=[f"f{j:04d}" for j in range(X.shape[1])])
    frame["id"] = [f"r{i}" for i in range(len(frame))]
    frame["y_true"], frame["subconcept"] = y, names
    test = frame.sample(frac=0.4, random_state=0)
    train = frame.drop(index=test.index)
    rng = np.random.default_rng(0)
    test = test.drop(columns="subconcept").assign(
        y_score=np.clip(test["y_true"] * 0.6 + rng.uniform(0, 0.4, len(test)), 0, 1)
    )
    train.to_parquet(tmp_path / "train.parquet", index=False)
    test.to_parquet(tmp_path / "test.parquet", index=False)
    if record:
        (tmp_path / "train.embedding.json").write_text(
            json.dumps({"name": "train", "model": "efficientnet_lite0",
                        "weights_source": record})
        )  # fmt: skip
    return tmp_path / "train.parquet", tmp_path / "test.parquet", train


@pytest.mark.parametrize(
    ("kind", "record", "chosen"),
    [("auto", "ImageNet (efficientnet-lite0 package)", "logistic"), ("auto", None, "forest"),
     ("auto", "RANDOMLY INITIALISED", "forest"), ("forest", "ImageNet (timm)", "forest"),
     ("logistic", None, "logistic")],
)  # fmt: skip
def test_the_subconcept_model_is_chosen_and_recorded(tmp_path, kind, record, chosen):
    """auto: the logistic regression on an image embedding table (measured better there), the
    forest on any other table; its posteriors are those of the estimator fitted alone."""
    import json

    from medeval.subconcept_model import subconcept_estimator

    train, test, frame = _tables(tmp_path, record)
    s = SubconceptSettings(subconcept_model=kind, n_bootstrap=20)
    own = fit_and_evaluate(train, test, settings=s)
    described = json.loads(own.files["subconcept_model.json"])
    assert described["subconcept_model"] == chosen
    assert described["default_forest"] == (chosen == "forest")
    feats = [c for c in frame.columns if c.startswith("f0")]
    alone = SubconceptModel(subconcept_estimator(chosen, min_count=30)).fit(
        frame[feats].to_numpy(), frame["subconcept"].to_numpy(), frame["y_true"].to_numpy()
    )
    X_test = pd.read_parquet(test)[feats].to_numpy()
    np.testing.assert_allclose(own.model.predict_proba(X_test), alone.predict_proba(X_test))


def test_a_logistic_subconcept_model_fits_a_subconcept_of_two_rows():
    """Cross-validation folds shrink to the rarest subconcept's count (and C is fixed below 2)."""
    X, names, y = _blobs()
    keep = np.r_[np.flatnonzero(names != "van"), np.flatnonzero(names == "van")[:2]]
    from medeval.subconcept_model import subconcept_estimator

    model = SubconceptModel(subconcept_estimator("logistic", min_count=2))
    q = model.fit(X[keep], names[keep], y[keep]).predict_proba(X)
    np.testing.assert_allclose(q.sum(1), 1.0)
    assert q.shape == (len(X), 4)
