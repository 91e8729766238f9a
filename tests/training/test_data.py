"""medeval/training/data.py: a config's data to a binary task with images, and the loaders."""

import numpy as np
import pytest
import torch
from torch.utils.data import TensorDataset

from medeval.datasets import DataError
from medeval.datasets.base import LabelledData
from medeval.training.config import DataConfig
from medeval.training.data import build_task, make_loader, part_dataset, task_images


def _order(loader, epoch=0):
    if loader.sampler is not None and hasattr(loader.sampler, "set_epoch"):
        loader.sampler.set_epoch(epoch)
    return torch.cat([batch for (batch,) in loader]).tolist()


def _loader(seed, shuffle=True):
    data = TensorDataset(torch.arange(12))
    return make_loader(data, batch_size=5, workers=0, shuffle=shuffle, seed=seed, cuda=False)


def test_the_order_depends_only_on_the_seed_and_the_epoch():
    first = _order(_loader(3))
    assert sorted(first) == list(range(12)) and first != list(range(12))
    assert _order(_loader(3)) == first  # a new loader, the same seed: the same order
    assert _order(_loader(3), epoch=1) != first
    assert _order(_loader(3), epoch=1) == _order(_loader(3), epoch=1)
    assert _order(_loader(4)) != first


def test_without_shuffling_rows_come_in_order():
    loader = _loader(3, shuffle=False)
    assert _order(loader) == list(range(12))


def test_a_task_needs_images():
    data = LabelledData(labels=np.array(["a", "b"]), source="keel", name="iris", X=np.zeros((2, 3)))
    with pytest.raises(DataError, match=r"keel/iris: no images \(kind 'tabular'\)"):
        build_task(DataConfig(), data)


def test_in_memory_images_have_no_store_and_give_image_items(tiny_config):
    task = build_task(tiny_config.data)
    assert task_images(tiny_config, task, progress=False) is None
    rows = np.array([0, 5])
    part = part_dataset(task, rows, 32)
    assert len(part) == 2
    image, y, _ = part[1]
    assert tuple(image.shape) == (3, 32, 32)
    assert int(y) == int(task.y[5])
