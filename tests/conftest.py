"""Shared test fixtures. Real data is read from ``$MEDEVAL_DATA`` (default ``../shared/data``)."""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Folder with the real public data sets (KEEL, PMLB, NIH metadata); never copied here."""
    path = Path(os.environ.get("MEDEVAL_DATA", REPO.parent / "shared" / "data"))
    if not (path / "keel").is_dir():
        pytest.fail(
            f"real data not found at {path}: set MEDEVAL_DATA to the shared data folder "
            "(the one holding keel/, pmlb/ and nih/)"
        )
    return path


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
