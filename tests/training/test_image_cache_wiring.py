"""The decoded-image cache in training and prediction: the same bits with and without it."""

import json
import shutil

import numpy as np
import pandas as pd
import pytest
import torch
from PIL import Image

from medeval.datasets import DataError
from medeval.datasets.cache import ResizedImageDataset
from medeval.models.inputs import model_input
from medeval.training.config import SYNTHETIC, load_config
from medeval.training.data import build_task, make_loader, part_dataset, task_images
from medeval.training.loop import build_model_for, predict, predict_part

# Tiny: 100 PNGs of 40 × 40 (grey and RGB) trained at 32 px; a run is seconds on one core.
SMALL = [
    "model.backbone=vgg11",
    "model.pretrained=false",
    "train.image_size=32",
    "train.batch_size=16",
    "train.epochs=1",
    "train.max_steps_per_epoch=2",
    "train.workers=0",
    "evaluation.n_bootstrap=20",
]


def _write_folder(root):
    rng = np.random.default_rng(0)
    for cls, n, shape in [
        ("normal", 60, (40, 40)),
        ("nodule", 20, (40, 40, 3)),
        ("effusion", 20, (40, 40)),
    ]:
        (root / cls).mkdir(parents=True)
        for i in range(n):
            Image.fromarray(rng.integers(0, 256, shape, dtype=np.uint8)).save(
                root / cls / f"{i}.png"
            )


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("pngs")
    _write_folder(root)
    return root


def _config(folder, store, *extra):
    overrides = ["data.source=folder", f"data.path={folder}", f"data.cache_dir={store}"]
    return load_config(None, [*overrides, *SMALL, *extra], preset=SYNTHETIC)


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)


def test_cache_settings_default_on_and_switch_off(folder, tmp_path):
    cfg = _config(folder, tmp_path / "store")
    assert cfg.data.cache is True and load_config(None).data.cache_dir == ".medeval-cache/images"
    task = build_task(cfg.data)
    images = task_images(cfg, task, progress=False)
    assert len(images) == len(task) and images.size == 32
    off = _config(folder, tmp_path / "off", "data.cache=false")
    assert task_images(off, task, progress=False) is None
    assert not (tmp_path / "off").exists()
    phantoms = load_config(None, ["data.synthetic.n_normal=144", "data.synthetic.size=32"])
    assert task_images(phantoms, build_task(phantoms.data)) is None  # in memory: no store


def test_training_batches_are_the_same_bits_with_and_without_the_store(folder, tmp_path):
    cfg = _config(folder, tmp_path / "store")
    task = build_task(cfg.data)
    images = task_images(cfg, task, progress=False)
    rows = np.arange(5, len(task), 2)
    cached = part_dataset(task, rows, 32, images=images)
    decoded = part_dataset(task, rows, 32)
    assert isinstance(decoded, ResizedImageDataset) and decoded.cache is None
    assert cached.cache is not None
    batches = [
        list(make_loader(ds, batch_size=8, workers=0, shuffle=True, seed=3, cuda=False))
        for ds in (cached, decoded)
    ]
    assert len(batches[0]) == len(batches[1]) == 6
    for (xa, ya, sa), (xb, yb, sb) in zip(*batches, strict=True):
        assert xa.dtype == torch.uint8 and xa.shape[1:] == (3, 32, 32)  # normalised on device
        assert torch.equal(xa, xb) and torch.equal(ya, yb) and torch.equal(sa, sb)


def test_uint8_items_reach_the_model_as_the_float_items_bits(folder, tmp_path):
    # What training and prediction feed the model (uint8 items through model_input) against
    # the float32 ImageNet-normalised items of the same files (grey and RGB PNGs).
    cfg = _config(folder, tmp_path / "store")
    task = build_task(cfg.data)
    images = task_images(cfg, task, progress=False)
    rows = np.arange(len(task))
    pixels = part_dataset(task, rows, 32, images=images)
    floats = ResizedImageDataset(
        np.asarray(task.data.files, dtype=object), task.y, task.subconcept, size=32,
        cache=images, rows=rows,
    )  # fmt: skip
    assert {pixels.image(i).ndim for i in rows} == {2, 3}  # grey and RGB files
    for a, b in zip(
        make_loader(pixels, batch_size=32, workers=0, shuffle=False, seed=0, cuda=False),
        make_loader(floats, batch_size=32, workers=0, shuffle=False, seed=0, cuda=False),
        strict=True,
    ):
        x = model_input(a[0], torch.device("cpu"))
        assert x.dtype == torch.float32 and torch.equal(x, b[0])
    # the float path's bits are what training read before the uint8 items: a model's outputs
    # over a loader of float items equal predict_part's
    torch.manual_seed(0)
    model = build_model_for(cfg, len(task.subconcepts), torch.device("cpu")).eval()
    loader = make_loader(floats, batch_size=16, workers=0, shuffle=False, seed=0, cuda=False)
    before = predict(model, loader, torch.device("cpu"))
    now = predict_part(cfg, task, rows, model, torch.device("cpu"), images=images)
    np.testing.assert_array_equal(now.logit, before.logit)
    np.testing.assert_array_equal(now.sub_logits, before.sub_logits)


def test_predictions_read_the_store_and_match_decoding(folder, tmp_path):
    # A private copy of the files, deleted once the store holds them: predictions that still
    # succeed prove that predict_part read the store, not the files.
    copy = tmp_path / "pngs"
    shutil.copytree(folder, copy)
    cfg = _config(copy, tmp_path / "store")
    task = build_task(cfg.data)
    images = task_images(cfg, task, progress=False)
    torch.manual_seed(0)
    model = build_model_for(cfg, len(task.subconcepts), torch.device("cpu")).eval()
    rows = np.arange(0, len(task), 3)
    decoded = predict_part(cfg, task, rows, model, torch.device("cpu"))
    shutil.rmtree(copy)
    cached = predict_part(cfg, task, rows, model, torch.device("cpu"), images=images)
    np.testing.assert_array_equal(cached.logit, decoded.logit)
    np.testing.assert_array_equal(cached.sub_logits, decoded.sub_logits)
    np.testing.assert_array_equal(cached.y, task.y[rows])
    with pytest.raises(DataError, match=r"30 of 30 image files are absent"):
        predict_part(cfg, task, rows, model, torch.device("cpu"))  # the files are gone


def test_in_memory_images_take_no_store(tiny_config, tmp_path, folder):
    task = build_task(tiny_config.data)
    files_task = build_task(_config(folder, tmp_path).data)
    images = task_images(_config(folder, tmp_path), files_task, progress=False)
    with pytest.raises(ValueError, match="images in memory take no image cache"):
        part_dataset(task, np.arange(4), 32, images=images)
    with pytest.raises(ValueError, match="holds 90 rows"):
        part_dataset(files_task.subset(np.arange(10)), np.arange(4), 32, images=images)


def _store_state(store):
    (recipe,) = store.glob("images-32px-*")
    index = recipe / "index.json"
    return index.stat().st_mtime_ns, sorted(p.name for p in recipe.glob("shard-*.u8")), index


@pytest.mark.filterwarnings("ignore::medeval.evaluation.rectified.FewReferenceRowsWarning")
def test_train_cli_builds_the_store_once_and_predicts_the_same(folder, tmp_path):
    from medeval.train import main

    store = tmp_path / "store"

    def run(out, cache):
        overrides = [*SMALL, f"data.cache_dir={store}", f"data.cache={cache}"]
        return main([*overrides, "--source", "folder", "--path", str(folder), "--out", str(out)])

    assert run(tmp_path / "a", "true") == 0
    mtime, shards, index = _store_state(store)
    assert len(json.loads(index.read_text())["files"]) == 90 and len(shards) == 1
    assert run(tmp_path / "b", "true") == 0
    assert _store_state(store)[:2] == (mtime, shards)  # nothing decoded again
    assert run(tmp_path / "c", "false") == 0
    runs = [pd.read_csv(tmp_path / r / "split_0" / "predictions.csv") for r in "abc"]
    pd.testing.assert_frame_equal(runs[0], runs[1])
    pd.testing.assert_frame_equal(runs[0], runs[2])
