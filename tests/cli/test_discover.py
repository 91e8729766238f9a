"""python -m medeval.discover on embeddings without subconcept labels."""

import json

import numpy as np
import pandas as pd
import pytest
from PIL import Image
from sklearn.datasets import make_blobs

from medeval.discover import main


def _embeddings(tmp_path, *, images=False):
    """Train/test tables in the embed format (f0000…, label) and test predictions."""
    X0, t0 = make_blobs(
        [90, 60], n_features=5, cluster_std=0.5, center_box=(-20, 20), random_state=0
    )
    X1, t1 = make_blobs(
        [40, 20], n_features=5, cluster_std=0.5, center_box=(-20, 20), random_state=1
    )
    X = np.vstack([X0, X1])
    label = np.r_[np.full(len(X0), "normal"), np.full(len(X1), "effusion")]
    frame = pd.DataFrame(X, columns=[f"f{j:04d}" for j in range(5)])
    frame["label"] = label
    frame["id"] = [f"img{i:03d}" for i in range(len(frame))]
    if images:
        (tmp_path / "img").mkdir()
        for i in range(len(frame)):
            shade = int(40 + 40 * (np.r_[t0, t1 + 2][i]))
            Image.fromarray(np.full((8, 8), shade, np.uint8)).save(tmp_path / "img" / f"{i}.png")
        frame["path"] = [f"img/{i}.png" for i in range(len(frame))]
    rng = np.random.default_rng(0)
    test_rows = rng.permutation(len(frame))[:80]
    train = frame.drop(index=test_rows)
    test = frame.loc[test_rows].reset_index(drop=True)
    y = (test["label"] == "effusion").astype(int).to_numpy()
    # The classifier misses the small minority blob: its recall there is low.
    small = np.r_[t0 * 0, t1 == 1][test_rows].astype(bool)
    score = np.where(y == 1, np.where(small, 0.3, 0.8), 0.2) + rng.uniform(-0.1, 0.1, len(y))
    preds = pd.DataFrame({"id": test["id"], "y_true": y, "y_score": score})
    train.to_parquet(tmp_path / "train.parquet", index=False)
    test.to_parquet(tmp_path / "test.parquet", index=False)
    preds.to_csv(tmp_path / "preds.csv", index=False)
    return tmp_path


def _args(d, *extra):
    return [
        "--train",
        str(d / "train.parquet"),
        "--test",
        str(d / "test.parquet"),
        "--predictions",
        str(d / "preds.csv"),
        "--positive",
        "effusion",
        "--out",
        str(d / "out"),
        "--n-estimators",
        "10",
        "--bootstrap",
        "50",
        "--quiet",
        *extra,
    ]


@pytest.mark.parametrize("images", [False, True])
def test_discovered_clusters_are_evaluated_label_free(tmp_path, images):
    d = _embeddings(tmp_path, images=images)
    assert main(_args(d)) == 0
    out = d / "out"
    sizes = json.loads((out / "train_sizes.json").read_text())
    assert {k: v["class"] for k, v in sizes.items()} == {
        "c0_k1": 0,
        "c0_k2": 0,
        "c1_k1": 1,
        "c1_k2": 1,
    }
    preds = pd.read_csv(out / "predictions.csv")
    q = preds[[f"q_{n}" for n in sizes]].to_numpy()
    np.testing.assert_allclose(q.sum(1), 1, atol=1e-9)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["scores"]["pBA"] is not None and metrics["scores"]["wBA"] is None
    clusters = pd.read_csv(out / "clusters.csv").set_index("subconcept")
    # The small minority cluster is the one the classifier misses; label-free recall sees it.
    assert clusters.loc["c1_k2", "est_recall"] < 0.2 < 0.9 < clusters.loc["c1_k1", "est_recall"]
    assert (clusters.est_low <= clusters.est_recall).all()
    for name in ("examples.png", "clusters.png", "report.html", "discovery.json"):
        assert (out / name).stat().st_size > 0


def _write(path, frame):
    frame.to_csv(path, index=False) if path.suffix == ".csv" else frame.to_parquet(path)


@pytest.mark.parametrize(
    ("breaks", "message"),
    [
        ("no_positive", "--positive"),
        ("unknown_positive", "no row has label"),
        ("short_predictions", "rows but the test embeddings"),
        ("nan_feature", "column 'f0002', row 4"),
        ("has_posteriors", "already has subconcept labels"),
        ("id_mismatch", "column 'id', row 2"),
        ("missing_file", "file not found"),
    ],
)
def test_bad_input_exits_2_and_names_the_problem(tmp_path, capsys, breaks, message):
    d = _embeddings(tmp_path)
    args = _args(d)
    preds = pd.read_csv(d / "preds.csv")
    if breaks == "no_positive":
        args.remove("--positive")
        args.remove("effusion")
    elif breaks == "unknown_positive":
        args[args.index("effusion")] = "cardiomegaly"
    elif breaks == "short_predictions":
        _write(d / "preds.csv", preds.iloc[:-3])
    elif breaks == "nan_feature":
        train = pd.read_parquet(d / "train.parquet")
        train.loc[train.index[3], "f0002"] = np.nan
        _write(d / "train.parquet", train)
    elif breaks == "has_posteriors":
        _write(d / "preds.csv", preds.assign(q_a=0.5, q_b=0.5))
    elif breaks == "id_mismatch":
        preds.loc[1, "id"] = "other"
        _write(d / "preds.csv", preds)
    elif breaks == "missing_file":
        (d / "test.parquet").unlink()
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "error: " in err and message in err
    assert not (d / "out").exists()


@pytest.mark.parametrize(
    "source", ["ImageNet (efficientnet-lite0 package)", "RANDOMLY INITIALISED", None]
)
def test_the_embeddings_backbone_and_weights_are_said_from_their_record(tmp_path, capsys, source):
    """discover reads embeddings: which backbone made them, and with which weights, is what
    their <name>.embedding.json says; it is printed and in the report (a random one must be
    seen)."""
    d = _embeddings(tmp_path)
    if source is not None:
        for name in ("train", "test"):
            record = {"name": name, "model": "efficientnet_lite0", "weights_source": source}
            (d / f"{name}.embedding.json").write_text(json.dumps(record))
    assert main([a for a in _args(d) if a != "--quiet"]) == 0
    out = capsys.readouterr().out
    report = (d / "out" / "report.html").read_text()
    line = f"train.parquet: backbone efficientnet_lite0, weights {source}"
    if source is None:
        assert "backbone efficientnet_lite0" not in out + report
    else:
        assert line in out and line in report
