"""Shared test fixtures. Real data is read from ``$MEDEVAL_DATA`` (default ``../shared/data``;
see ``real_data.py``)."""

from pathlib import Path

import pytest
from real_data import shared_path


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Folder with the real public data sets (KEEL, PMLB, NIH metadata); never copied here.
    A test using it is skipped, naming the folder, when the data are absent; a test that
    needs a sub-folder other than keel/ asks for it with :func:`real_data.shared_path`."""
    return shared_path("keel").parent


# A tiny synthetic run configuration shared by the training and flow tests (seconds on one core).
TINY_RUN = [
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
    return list(TINY_RUN)


@pytest.fixture
def tiny_config():
    # Imported here: the conftest of every test session should not pay for torch.
    import torch

    from medeval.training.config import SYNTHETIC, load_config

    torch.set_num_threads(1)
    return load_config(None, TINY_RUN, preset=SYNTHETIC)
