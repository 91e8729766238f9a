"""model_input: uint8 pixels become the float32 items' bits on the device; floats only move."""

import numpy as np
import pytest
import torch
from torchvision import transforms

from medeval.datasets.cache import ResizedImageDataset
from medeval.datasets.images import IMAGENET_MEAN, IMAGENET_STD, pixel_table
from medeval.models.inputs import model_input

CPU = torch.device("cpu")


class _Reader(list):
    """A stand-in for a store's reader: ``reader[i]`` → uint8 pixels."""

    size = 16


def _items(images, **kw):
    zeros = np.zeros(len(images), dtype=np.int64)
    ds = ResizedImageDataset(["f"] * len(images), zeros, zeros, size=16, cache=images, **kw)
    return torch.stack([ds[i][0] for i in range(len(images))])


@pytest.mark.parametrize("shape", [(16, 16), (16, 16, 3)], ids=["grey", "rgb"])
def test_uint8_batches_give_the_float_items_bits(shape):
    # Every grey level in every channel: 256 values fill a 16 × 16 plane.
    levels = np.arange(256, dtype=np.uint8).reshape(16, 16)
    rng = np.random.default_rng(0)
    planes = [levels] + [rng.permutation(levels.ravel()).reshape(16, 16) for _ in range(3)]
    if len(shape) == 3:
        planes = [np.stack([p, p.T, np.flipud(p)], axis=-1) for p in planes]
    images = _Reader(planes)
    pixels, floats = _items(images, as_uint8=True), _items(images)
    assert pixels.dtype == torch.uint8 and floats.dtype == torch.float32
    x = model_input(pixels, CPU)
    assert x.dtype == torch.float32 and torch.equal(x, floats)
    # and both are torchvision's scaling and Normalize of the same pixels
    normalize = transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD)
    assert torch.equal(x, torch.stack([normalize(p.float().div(255.0)) for p in pixels]))


def test_float_batches_only_move_and_bad_shapes_are_named():
    x = torch.randn(2, 3, 8, 8)
    assert torch.equal(model_input(x, CPU), x)
    with pytest.raises(ValueError, match=r"\(B, 3, S, S\), not \(2, 1, 8, 8\)"):
        model_input(torch.zeros(2, 1, 8, 8, dtype=torch.uint8), CPU)


def test_pixel_table_is_the_normalised_levels_and_plain_levels_without_normalize():
    table, plain = pixel_table(), pixel_table(normalize=False)
    assert table.shape == plain.shape == (3, 256) and table.dtype == torch.float32
    assert torch.equal(plain[1], torch.arange(256, dtype=torch.float32).div(255.0))
    mean, std = (torch.tensor(v).view(3, 1) for v in (IMAGENET_MEAN, IMAGENET_STD))
    torch.testing.assert_close(table, (plain - mean) / std, rtol=0, atol=1e-6)
