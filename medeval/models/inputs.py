"""What the models take: a batch of items, on the model's device.

Image files reach the models as uint8 items (:class:`~medeval.datasets.cache.ResizedImageDataset`
with ``as_uint8``): a quarter of the bytes of float32 through DataLoader workers, pinned memory
and the copy to a GPU. :func:`model_input` converts them there by looking each value up in
:func:`~medeval.datasets.images.pixel_table`, which gives the bits of the float32 items on any
device. In-memory images arrive as float32, already normalised, and only move.
"""

from __future__ import annotations

import torch

from medeval.datasets.images import pixel_table

__all__ = ["model_input"]

_TABLES: dict[str, torch.Tensor] = {}


def _table(device: torch.device) -> torch.Tensor:
    """:func:`pixel_table` on ``device`` (one copy per device and process)."""
    key = str(device)
    if key not in _TABLES:
        _TABLES[key] = pixel_table(normalize=True).to(device)
    return _TABLES[key]


def model_input(x: torch.Tensor, device: torch.device) -> torch.Tensor:
    """A batch ``(B, 3, S, S)`` as the models take it, on ``device``.

    uint8 batches (pixels) are moved as uint8 and ImageNet-normalised there, channel by
    channel, by a look-up; float batches are moved as they are. On CUDA the result is
    channels_last, as the models are (:func:`medeval.training.loop.create_model`).
    """
    x = x.to(device, non_blocking=True)
    if x.dtype == torch.uint8:
        if x.ndim != 4 or x.shape[1] != 3:
            raise ValueError(f"uint8 images must be (B, 3, S, S), not {tuple(x.shape)}")
        table = _table(x.device)
        x = torch.stack([table[c][x[:, c].long()] for c in range(3)], dim=1)
    if device.type == "cuda":
        x = x.contiguous(memory_format=torch.channels_last)
    return x
