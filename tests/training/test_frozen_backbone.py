"""``model.freeze``: the backbone's features computed once (and cached), only the two heads
trained on them, and the run's predictions those of the heads on the backbone's features."""

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest
import torch

from medeval.flows.train import run_training
from medeval.models import FeatureInput, TwoHeadModel, build_backbone
from medeval.models.inputs import model_input
from medeval.training.checkpoint import load_checkpoint
from medeval.training.config import SYNTHETIC, load_config, task_spec
from medeval.training.data import build_task, load_data, part_dataset, task_features
from medeval.training.loop import build_model_for

FROZEN = [
    "data.synthetic.n_normal=144",
    "data.synthetic.size=32",
    "model.backbone=vgg11",
    "model.pretrained=false",
    "model.freeze=true",
    "train.image_size=32",
    "train.batch_size=16",
    "train.epochs=3",
    "train.patience=5",
    "train.keep_checkpoints=0",
    "evaluation.n_bootstrap=20",
    "splits.n=1",
]


@pytest.fixture
def frozen_cfg(tmp_path):
    torch.set_num_threads(1)
    return load_config(None, [*FROZEN, f"data.cache_dir={tmp_path / 'cache' / 'images'}"],
                       preset=SYNTHETIC)  # fmt: skip


def test_features_are_the_backbones_and_read_back_from_the_cache(frozen_cfg):
    task = build_task(frozen_cfg.data, load_data(frozen_cfg.data), task=task_spec(frozen_cfg))
    cpu = torch.device("cpu")
    first = task_features(frozen_cfg, task, cpu, progress=False)
    again = task_features(frozen_cfg, task, cpu, progress=False)
    assert (first.computed, first.cached) == (len(task), 0)
    assert (again.computed, again.cached) == (0, len(task))
    np.testing.assert_array_equal(first.features, again.features)
    assert first.weights_source == "RANDOMLY INITIALISED"
    # the same numbers as the backbone itself on the task's images (seeded as embed seeds)
    torch.manual_seed(frozen_cfg.train.seed)
    backbone = build_backbone("vgg11", pretrained=False, features=frozen_cfg.model.features).eval()
    items = part_dataset(task, np.arange(8), frozen_cfg.train.image_size)
    x = model_input(torch.stack([items[i][0] for i in range(8)]), cpu)
    with torch.no_grad():
        direct = backbone(x).numpy()
    np.testing.assert_allclose(first.features[:8], direct, rtol=1e-4, atol=1e-5)


def test_a_frozen_run_trains_only_the_heads_and_predicts_with_them(frozen_cfg, tmp_path):
    out = tmp_path / "run"
    with warnings.catch_warnings():  # a tiny run's few reference rows: warned, not the point
        warnings.simplefilter("ignore")
        run_training(frozen_cfg, out)
    best = load_checkpoint(out / "split_0" / "checkpoints" / "best.pt")["model"]
    assert sorted({k.split(".")[0] for k in best}) == ["binary", "subconcept"]  # no backbone
    # the test predictions are the saved heads on the (cached) backbone features
    task = build_task(frozen_cfg.data, load_data(frozen_cfg.data), task=task_spec(frozen_cfg))
    feats = task_features(frozen_cfg, task, torch.device("cpu"), progress=False)
    assert feats.cached == len(task)  # the run cached them
    model = build_model_for(frozen_cfg, len(task.subconcepts), torch.device("cpu"))
    assert isinstance(model, TwoHeadModel) and isinstance(model.backbone, FeatureInput)
    model.load_state_dict(best)
    pred = pd.read_csv(out / "split_0" / "predictions.csv")
    ids = pd.Index(np.asarray(task.ids).astype(str))
    idx = ids.get_indexer(pred["id"].astype(str))
    assert (idx >= 0).all() and len(idx) > 0
    x = part_dataset(task, idx, frozen_cfg.train.image_size, images=feats).tensors[0]
    with torch.no_grad():
        logit, _ = model.eval()(x)
    np.testing.assert_allclose(
        pred["y_score"].to_numpy(), torch.sigmoid(logit).numpy(), rtol=1e-4, atol=1e-5
    )


def test_feature_input_refuses_images():
    with pytest.raises(ValueError, match=r"expected features \(B, 8\)"):
        FeatureInput(8)(torch.zeros(2, 3, 4, 4))


def test_the_frozen_flag_is_recorded_and_said(frozen_cfg):
    from medeval.flows.train import run_notes

    pretrained = dataclasses.replace(
        frozen_cfg, model=dataclasses.replace(frozen_cfg.model, pretrained=True, weights="w.pth")
    )
    (note,) = [n for n in run_notes(pretrained) if "backbone" in n]
    assert "local file" in note and "frozen" in note
    (note,) = [n for n in run_notes(frozen_cfg) if "backbone" in n]
    assert "RANDOMLY INITIALISED" in note
