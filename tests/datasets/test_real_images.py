"""Real dermoscopy JPEGs (``../shared/data/isic_skin``, read in place, never copied) through the
image-table source, a one-epoch tiny training and ``embed``: a change that breaks real files
fails here. Sixty-four images, 32 px, one training step per epoch: seconds, not minutes."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from real_data import SHARED_DATA, missing

from medeval.datasets import load
from medeval.datasets.pixels import read_image_array

REPO = Path(__file__).resolve().parents[2]
ISIC = SHARED_DATA / "isic_skin"
pytestmark = pytest.mark.skipif(
    missing("isic_skin", "metadata.csv") is not None,
    reason=missing("isic_skin", "metadata.csv") or "",
)
# 8 per diagnosis: no subconcept under the warning threshold (docs/method.md, "The user's own task")
PER_DX = 8
MALIGNANT, BENIGN = "MEL,BCC,SCC,AK", "NV,BKL,DF,VASC"


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> Path:
    """A table of 64 real images (8 per diagnosis; some without a lesion id), in a temporary
    folder; the images stay where they are."""
    meta = pd.read_csv(ISIC / "metadata.csv", dtype=str).sort_values("image_id")
    picked = meta.groupby("dx").head(PER_DX)
    path = tmp_path_factory.mktemp("isic") / "picked.csv"
    picked[["image_id", "lesion_id", "dx"]].to_csv(path, index=False)
    return path


def _source_args(table: Path) -> list[str]:
    return [
        "--source", "images", "--path", str(table), "--images", str(ISIC / "images"),
        "--image-column", "image_id", "--label-column", "dx", "--group-column", "lesion_id",
        "--positive", MALIGNANT, "--negative", BENIGN,
    ]  # fmt: skip


def test_real_jpegs_load_and_decode(table):
    data = load(
        "images", table, images=ISIC / "images", image_column="image_id", label_column="dx",
        group_column="lesion_id", verify="full",
    )  # fmt: skip
    assert len(data) == 8 * PER_DX and not data.skipped
    assert all(Path(f).is_relative_to(ISIC / "images") for f in data.files)
    assert sum(g == "" for g in data.groups) >= 1  # no lesion id: a group of its own
    assert read_image_array(data.files[0]).shape == (180, 180, 3)


@pytest.mark.filterwarnings("ignore::medeval.evaluation.rectified.FewReferenceRowsWarning")
def test_one_epoch_tiny_training_on_real_images(table, tmp_path, capsys, monkeypatch):
    import huggingface_hub.constants
    import torch

    from medeval.train import main

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    torch.set_num_threads(1)
    out = tmp_path / "run"
    argv = [
        *_source_args(table), "--out", str(out), "model.backbone=vgg11", "model.pretrained=false",
        "model.features=conv", "train.image_size=32", "train.batch_size=16", "train.epochs=1",
        "train.max_steps_per_epoch=1", "train.workers=0", "evaluation.n_bootstrap=20",
        f"data.cache_dir={tmp_path / 'store'}",
    ]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    task = json.loads((out / "task.json").read_text())
    assert task["description"]["task"]["positive"] == MALIGNANT.split(",")
    assert sum(s["n"] for s in task["description"]["minority"]) == 4 * PER_DX  # every row kept
    predictions = pd.read_csv(next(out.glob("split_*/predictions.csv")))
    assert len(predictions) > 0 and predictions["subconcept"].isin(["MEL", "NV", "BKL", "BCC",
           "SCC", "AK", "DF", "VASC"]).all()  # fmt: skip


def test_embed_real_images_with_the_users_task(table, tmp_path, capsys, monkeypatch):
    import torch

    from medeval.embed import main

    monkeypatch.chdir(tmp_path)  # the decoded-image store (.medeval-cache) lands here
    torch.set_num_threads(1)
    out = tmp_path / "emb"
    argv = [
        *_source_args(table), "--out", str(out), "--model", "vgg11", "--random-init",
        "--features", "conv", "--size", "32", "--cache", str(tmp_path / "features"),
        "--no-benchmark",
    ]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    frame = pd.read_parquet(out / "picked.parquet")
    assert len(frame) == 8 * PER_DX and sorted(set(frame["label"])) == sorted(
        (MALIGNANT + "," + BENIGN).split(",")
    )
    assert frame.filter(regex=r"^f\d+$").shape[1] == 512
    record = json.loads((out / "picked.embedding.json").read_text())
    assert record["task"]["negative"] == BENIGN.split(",")
