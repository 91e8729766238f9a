"""medeval.flows.discovery: each class of the training embeddings clustered, the test rows given
posterior columns, the discovered subconcepts evaluated label-free. On four well-separated
blobs (two per class) the clusters are the blobs, and each cluster's label-free recall is the
true recall of its blob."""

import io
import json

import numpy as np
import pandas as pd
import pytest
from PIL import Image
from sklearn.datasets import make_blobs

from medeval.discovery import discover_subconcepts
from medeval.errors import InputError
from medeval.flows.discovery import DiscoverySettings, discover_and_evaluate, typical_examples
from medeval.io.embeddings import class_of_rows
from medeval.io.features import read_feature_table

#: training + test rows of each blob; blobs 0, 1 are class 0, blobs 2, 3 class 1
SIZES = [120, 80, 60, 30]
#: the chance that the classifier gets a row of each blob right: it misses the small blob
RIGHT = [0.9, 0.9, 0.9, 0.2]
#: the discovered subconcept of each blob (within a class, the largest first)
NAMES = ["c0_k1", "c0_k2", "c1_k1", "c1_k2"]
SETTINGS = DiscoverySettings(n_estimators=20, n_bootstrap=20)
FEATURES = [f"f{j:04d}" for j in range(4)]


def _blobs(folder, sizes=SIZES, n_test=120, seed=0) -> dict[str, np.ndarray]:
    """``train.csv``, ``test.csv`` (features, ``id``, ``y``) and ``preds.csv`` in ``folder``;
    returns each test row's blob and whether the classifier got it right."""
    X, blob = make_blobs(sizes, n_features=4, cluster_std=0.5, center_box=(-20, 20), random_state=0)
    y = (blob >= 2).astype(int)
    frame = pd.DataFrame(X, columns=FEATURES)
    frame.insert(0, "id", [f"r{i:03d}" for i in range(len(y))])
    frame["y"] = y
    rng = np.random.default_rng(seed)
    is_test = np.zeros(len(y), bool)
    is_test[rng.permutation(len(y))[:n_test]] = True
    frame[~is_test].to_csv(folder / "train.csv", index=False)
    test = frame[is_test].reset_index(drop=True)
    test.to_csv(folder / "test.csv", index=False)
    right = rng.uniform(size=len(test)) < np.asarray(RIGHT)[blob[is_test]]
    y_test = test["y"].to_numpy()
    score = np.where(right == (y_test == 1), 0.8, 0.2)
    preds = pd.DataFrame({"id": test["id"], "y_true": y_test, "y_score": score, "note": "kept"})
    preds.to_csv(folder / "preds.csv", index=False)
    return {"train": blob[~is_test], "test": blob[is_test], "right": right}


def _discover(folder, settings=SETTINGS):
    return discover_and_evaluate(
        folder / "train.csv", folder / "test.csv", folder / "preds.csv", settings
    )


@pytest.fixture(scope="module")
def blobs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("blobs")
    truth = _blobs(folder)
    files, ev = _discover(folder)
    return folder, truth, files, ev


def test_each_discovered_subconcept_is_one_blob_on_the_train_and_the_test_rows(blobs):
    _folder, truth, files, _ev = blobs
    n_train = np.bincount(truth["train"], minlength=4)
    assert n_train[0] > n_train[1] and n_train[2] > n_train[3]  # so NAMES are the blobs'
    assert json.loads(files["train_sizes.json"]) == {
        nm: {"class": int(b >= 2), "n": int(n_train[b])} for b, nm in enumerate(NAMES)
    }
    described = json.loads(files["discovery.json"])
    assert [c["k"] for c in described["classes"]] == [2, 2]
    assert described["settings"]["n_estimators"] == 20 and described["settings"]["seed"] == 0
    preds = pd.read_csv(io.BytesIO(files["predictions.csv"]))
    q = preds[[f"q_{nm}" for nm in NAMES]].to_numpy()
    np.testing.assert_array_equal(q.argmax(1), truth["test"])


def test_the_predictions_are_the_input_columns_unchanged_plus_the_posteriors(blobs):
    folder, _truth, files, _ev = blobs
    given = pd.read_csv(folder / "preds.csv")
    out = pd.read_csv(io.BytesIO(files["predictions.csv"]))
    assert list(out.columns) == [*given.columns, *(f"q_{nm}" for nm in NAMES)]
    pd.testing.assert_frame_equal(out[given.columns], given)
    q = out.filter(like="q_").to_numpy()
    np.testing.assert_allclose(q.sum(1), 1, atol=1e-9)


def test_the_label_free_recall_of_each_cluster_is_its_blobs_true_recall(blobs):
    _folder, truth, files, ev = blobs
    per = ev.per_subconcept.set_index("subconcept").loc[NAMES]
    for b, nm in enumerate(NAMES):
        rows = truth["test"] == b
        assert per.loc[nm, "est_n_test"] == pytest.approx(rows.sum(), abs=0.5)
        assert per.loc[nm, "est_recall"] == pytest.approx(truth["right"][rows].mean(), abs=0.02)
        assert per.loc[nm, "est_low"] <= per.loc[nm, "est_recall"] <= per.loc[nm, "est_high"]
    assert per.loc["c1_k2", "est_recall"] < 0.5 < per.loc["c1_k1", "est_recall"]
    # no subconcept labels on the test rows: no true recall, no true-weight score
    assert per["recall"].isna().all() and np.isnan(ev.scores["wBA"])
    clusters = pd.read_csv(io.BytesIO(files["clusters.csv"])).set_index("subconcept")
    np.testing.assert_allclose(clusters.loc[NAMES, "est_recall"], per["est_recall"])


def test_the_files_are_the_evaluations_and_the_clusters(blobs):
    _folder, _truth, files, ev = blobs
    assert sorted(files) == [
        "clusters.csv",
        "clusters.png",
        "discovery.json",
        "examples.png",
        "metrics.csv",
        "metrics.json",
        "per_subconcept.csv",
        "predictions.csv",
        "report.html",
        "train_sizes.json",
    ]  # subconcepts.png (true test subconcepts) is replaced by clusters.png
    assert all(len(content) > 0 for content in files.values())
    metrics = json.loads(files["metrics.json"])
    assert metrics["scores"]["pBA"] == pytest.approx(ev.scores["pBA"])
    assert metrics["bootstrap"]["n"] == 20 and metrics["n"] == 120


def test_typical_examples_are_each_clusters_most_probable_training_rows(tmp_path):
    _blobs(tmp_path, sizes=[20, 14, 12, 8], n_test=10)
    table = read_feature_table(tmp_path / "train.csv", option=None)
    y = class_of_rows(table, None)
    disc = discover_subconcepts(table.X, y, n_estimators=10, seed=0)
    q = disc.cluster_proba(table.X, y)
    ids = table.column("id")
    examples = typical_examples(disc, table, y, 3)
    assert list(examples) == list(disc.names)
    for name, shown in examples.items():
        members = np.flatnonzero(np.asarray(disc.labels) == name)
        best = members[np.argsort(-q[name].to_numpy()[members], kind="stable")][:3]
        assert [e.caption for e in shown] == [ids[i] for i in best]
        assert all(e.image is None and e.text is None for e in shown)


def test_typical_examples_show_the_image_or_text_or_the_row_number(tmp_path):
    _blobs(tmp_path, sizes=[20, 14, 12, 8], n_test=10)
    train = pd.read_csv(tmp_path / "train.csv").drop(columns=["id"])
    (tmp_path / "img").mkdir()
    for i in range(len(train)):
        Image.fromarray(np.full((8, 8), i, np.uint8)).save(tmp_path / "img" / f"{i}.png")
    train.assign(path=[f"img/{i}.png" for i in range(len(train))]).to_csv(
        tmp_path / "images.csv", index=False
    )
    train.assign(text=[f"report {i}" for i in range(len(train))]).to_csv(
        tmp_path / "texts.csv", index=False
    )
    images, texts = (
        read_feature_table(tmp_path / "images.csv", option=None),
        read_feature_table(tmp_path / "texts.csv", option=None),
    )
    y = train["y"].to_numpy()
    disc = discover_subconcepts(images.X, y, n_estimators=10, seed=0)
    for name, shown in typical_examples(disc, images, y, 2).items():
        for e in shown:
            row = int(e.caption.removeprefix("row ")) - 1  # no id column: the row number
            assert e.caption == f"row {row + 1}" and disc.labels[row] == name
            assert e.image is not None and e.image.size > 0 and e.text is None
    for shown in typical_examples(disc, texts, y, 2).values():
        assert [e.text for e in shown] == [f"report {int(e.caption[4:]) - 1}" for e in shown]
        assert all(e.image is None for e in shown)


def _break(folder, what):
    if what == "other_features":
        test = pd.read_csv(folder / "test.csv")
        test.assign(f0004=0.0).to_csv(folder / "test.csv", index=False)
    elif what == "test_class":
        test = pd.read_csv(folder / "test.csv")
        test.loc[4, "y"] = 1 - test.loc[4, "y"]
        test.to_csv(folder / "test.csv", index=False)
    elif what == "one_positive":
        train = pd.read_csv(folder / "train.csv")
        keep = (train["y"] == 0) | (np.cumsum(train["y"]) == 1)
        train[keep].to_csv(folder / "train.csv", index=False)
    elif what == "subconcepts_given":
        preds = pd.read_csv(folder / "preds.csv")
        preds.assign(subconcept="x").to_csv(folder / "preds.csv", index=False)


@pytest.mark.parametrize(
    ("what", "file", "match"),
    [
        ("other_features", "test.csv", r"feature columns differ .* \(5 vs 4 columns"),
        ("test_class", "preds.csv", r"column 'y_true', row 5: y_true is \d but the test embed"),
        ("one_positive", "train.csv", "class 1 has 1 rows; discovery needs 2+"),
        ("subconcepts_given", "preds.csv", "already has subconcept labels or q_ posterior"),
    ],
)
def test_inputs_that_disagree_are_refused_naming_the_file(tmp_path, what, file, match):
    _blobs(tmp_path, sizes=[20, 14, 12, 8], n_test=10)
    _break(tmp_path, what)
    with pytest.raises(InputError, match=match) as err:
        _discover(tmp_path)
    assert err.value.path == str(tmp_path / file)


def test_the_row_order_is_checked_against_the_test_embeddings_classes(tmp_path):
    _blobs(tmp_path, sizes=[20, 14, 12, 8], n_test=10)
    preds = pd.read_csv(tmp_path / "preds.csv").drop(columns=["id"])  # no id to catch it
    preds.iloc[::-1].to_csv(tmp_path / "preds.csv", index=False)
    with pytest.raises(InputError, match=r"rows differ\): the predictions must be in the test"):
        _discover(tmp_path)
