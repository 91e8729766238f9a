"""A batch on the model's device: uint8 pixels normalised there by a look-up in
:func:`~medeval.datasets.images.pixel_table` (the bits of the float32 items)."""

from __future__ import annotations

import functools

import torch

from medeval.datasets.images import pixel_table

__all__ = ["model_input"]


@functools.cache
def _table(device: torch.device) -> torch.Tensor:
    """:func:`pixel_table` on ``device`` (one copy per device and process)."""
    return pixel_table(normalize=True).to(device)


def model_input(x: torch.Tensor, device: torch.device) -> torch.Tensor:
    """A batch ``(B, 3, S, S)`` on ``device``: uint8 pixels ImageNet-normalised there, floats
    (and a frozen backbone's features ``(B, F)``) moved as they are; images channels_last on
    CUDA, as the models are."""
    x = x.to(device, non_blocking=True)
    if x.dtype == torch.uint8:
        if x.ndim != 4 or x.shape[1] != 3:
            raise ValueError(f"uint8 images must be (B, 3, S, S), not {tuple(x.shape)}")
        table = _table(x.device)
        x = torch.stack([table[c][x[:, c].long()] for c in range(3)], dim=1)
    if device.type == "cuda" and x.ndim == 4:  # images; precomputed features (B, F) as they are
        x = x.contiguous(memory_format=torch.channels_last)
    return x
