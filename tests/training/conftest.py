"""A tiny synthetic run configuration shared by the training tests (seconds on one core)."""

import pytest
import torch

from medeval.training.config import SYNTHETIC, load_config

TINY = [
    "data.synthetic.n_normal=144",
    "data.synthetic.size=32",
    "model.backbone=vgg11",
    "train.image_size=32",
    "train.batch_size=16",
    "train.epochs=2",
    "train.patience=5",
    "train.max_steps_per_epoch=2",
    "train.keep_checkpoints=0",
    "evaluation.n_bootstrap=20",
]


@pytest.fixture(scope="session")
def tiny_overrides() -> list[str]:
    return list(TINY)


@pytest.fixture
def tiny_config():
    torch.set_num_threads(1)
    return load_config(None, TINY, preset=SYNTHETIC)
