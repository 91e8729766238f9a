"""python -m medeval.embed: cached image features, text embeddings, then the forest protocol."""

import json

import numpy as np
import pandas as pd
import pytest
import torch

from medeval.datasets.synthetic import make_phantoms
from medeval.embed import main
from medeval.embeddings import embed_images, embed_text

SMALL = [
    "--source",
    "synthetic",
    "--n-normal",
    "144",
    "--phantom-size",
    "32",
    "--model",
    "vgg11",
    "--features",
    "conv",
    "--size",
    "32",
    "--random-init",
]


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)


def test_image_features_are_cached_by_model_weights_size(tmp_path):
    data = make_phantoms(144, size=32, seed=0).subset(np.arange(20))
    kw = {
        "model": "vgg11",
        "pretrained": False,
        "features": "conv",
        "size": 32,
        "cache": tmp_path,
        "progress": False,
    }
    x1, info1 = embed_images(data, **kw)
    x2, info2 = embed_images(data, **kw)
    assert x1.shape == (20, 512)
    assert (info1["computed"], info2["computed"], info2["cached"]) == (20, 0, 20)
    np.testing.assert_array_equal(x1, x2)
    _, info3 = embed_images(data, **{**kw, "size": 40})  # another size: another cache folder
    assert info3["computed"] == 20 and info3["cache"] != info1["cache"]
    _, info4 = embed_images(data, **{**kw, "seed": 1})  # another random init: other weights
    assert info4["computed"] == 20


def test_file_images_are_keyed_by_file(tmp_path):
    from PIL import Image

    from medeval.datasets.base import LabelledData

    files = []
    for i in range(3):
        p = tmp_path / f"im{i}.png"
        Image.fromarray(np.full((20, 20), 40 * i, dtype=np.uint8)).save(p)
        files.append(str(p))
    data = LabelledData(labels=np.array(["a", "b", "c"]), source="t", name="t", files=files)
    kw = {
        "model": "vgg11",
        "pretrained": False,
        "features": "conv",
        "size": 32,
        "cache": tmp_path / "c",
        "progress": False,
    }
    x1, _ = embed_images(data, **kw)
    Image.fromarray(np.full((20, 20), 255, dtype=np.uint8)).save(files[0])  # file changes
    x2, info = embed_images(data, **kw)
    assert info["computed"] == 1
    assert not np.array_equal(x1[0], x2[0]) and np.array_equal(x1[1:], x2[1:])


def test_cli_writes_the_collection_table_and_runs_the_benchmark(tmp_path, capsys):
    out = tmp_path / "collection"
    args = [
        *SMALL,
        "--out",
        str(out),
        "--cache",
        str(tmp_path / "cache"),
        "--quiet",
        "--benchmark-args",
        f"--max-splits 1 --methods none --n-estimators 10 "
        f"--no-analyze --quiet --out {tmp_path / 'bench'}",
    ]
    assert main(args) == 0
    table = pd.read_parquet(out / "synthetic-cxr.parquet")
    assert {"label", "group", "id"} <= set(table.columns)
    assert table.shape[1] == 512 + 3
    assert set(table["label"]) == {
        "normal",
        "calcified granuloma",
        "large opacity",
        "small nodule",
        "faint diffuse",
    }
    meta = json.loads((out / "synthetic-cxr.embedding.json").read_text())
    assert meta["weights"] == "random:0"
    assert any((tmp_path / "bench").rglob("*.json"))


def test_cli_rejects_random_init_with_weights(tmp_path, capsys):
    assert main([*SMALL, "--weights", "x.pth", "--out", str(tmp_path)]) == 2
    assert "exclude" in capsys.readouterr().err


def test_text_tfidf_and_sentence_model():
    texts = [f"word{i % 7} common text number {i} and more {i % 3}" for i in range(30)]
    x, used = embed_text(texts, model="tfidf", n_components=8)
    assert x.shape == (30, 8) and used == "tfidf"
    x2, _ = embed_text(texts, model="tfidf", n_components=8)
    np.testing.assert_array_equal(x, x2)
    y, used = embed_text(texts[:4], model="all-MiniLM-L6-v2")
    assert y.shape == (4, 384) and used == "all-MiniLM-L6-v2"
    z, used = embed_text(texts, model="/no/such/model", n_components=8)
    assert z.shape == (30, 8) and used.startswith("tfidf (sentence-transformers model")


def test_cli_says_which_files_it_left_out_and_counts_only_feature_columns(
    tmp_path, capsys, monkeypatch
):
    from PIL import Image

    monkeypatch.chdir(tmp_path)  # the image store (.medeval-cache) lands here
    rng = np.random.default_rng(0)
    for cls, n in (("normal", 12), ("benign", 8), ("effusion", 6), ("nodule", 5)):
        (tmp_path / "data" / cls).mkdir(parents=True)
        for i in range(n):
            Image.fromarray(rng.integers(0, 256, (16, 16), dtype=np.uint8)).save(
                tmp_path / "data" / cls / f"{i}.png"
            )
    (tmp_path / "data" / "nodule" / "2.png").write_text("not a png")
    (tmp_path / "data" / "pneumonia").mkdir()  # an empty class folder: said, not a class
    out = tmp_path / "emb"
    argv = ["--source", "folder", "--path", str(tmp_path / "data"), "--skip-unreadable"]
    argv += ["--model", "vgg11", "--random-init", "--size", "32", "--no-cache"]
    assert main([*argv, "--no-benchmark", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "left out (data.embedding.json lists them): 1 image file cannot be used" in text, text
    assert "nodule/2.png" in text
    assert "class folder(s) without any image, so not classes here: " in text
    assert str(tmp_path / "data" / "pneumonia") in text
    record = json.loads((out / "data.embedding.json").read_text())
    assert [s["path"].endswith("nodule/2.png") for s in record["skipped"]] == [True]
    table = pd.read_parquet(out / "data.parquet")
    n_features = sum(c.startswith("f") and c[1:].isdigit() for c in table.columns)
    assert f"data: 30 rows x {n_features} features" in text and "id" in table.columns


def test_an_image_size_the_backbone_cannot_take_is_one_line_not_a_traceback(tmp_path, capsys):
    argv = [*SMALL[:-3], "--size", "16", "--random-init", "--no-benchmark"]  # vgg11 needs 32
    assert main([*argv, "--out", str(tmp_path / "e")]) == 2
    err = capsys.readouterr().err
    assert "size=16: the model cannot take 16 px images" in err and "Traceback" not in err, err
