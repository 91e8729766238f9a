"""Images as float tensors (3, H, W) in [0, 1] (grey repeated to the 3 channels ImageNet
backbones expect), transforms, and a torch ``Dataset``; decoding: :mod:`.pixels`."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import Dataset
from torchvision import transforms

from medeval.datasets.base import DataError, first_named
from medeval.datasets.pixels import FRAME_KEY, read_image_array

__all__ = [
    "IMAGENET_MEAN",
    "IMAGENET_STD",
    "ImageDataset",
    "check_files_exist",
    "default_transform",
    "load_image",
    "pixel_table",
    "to_tensor",
]

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def to_tensor(array: np.ndarray) -> torch.Tensor:
    """(H, W) or (H, W, C) array → float tensor (3, H, W); grayscale repeated to 3 channels."""
    tensor = torch.as_tensor(np.ascontiguousarray(array), dtype=torch.float32)
    if tensor.ndim == 2:
        tensor = tensor.unsqueeze(0)
    else:
        tensor = tensor.permute(2, 0, 1)
    if tensor.shape[0] == 1:
        tensor = tensor.repeat(3, 1, 1)
    elif tensor.shape[0] == 4:
        tensor = tensor[:3]
    return tensor


def pixel_table(normalize: bool = True) -> torch.Tensor:
    """(3, 256) float32: grey level ``v`` of channel ``c`` → ``v / 255``, ImageNet-normalised
    when ``normalize``; a look-up gives the bits of the float32 torch ops on any device."""
    levels = torch.arange(256, dtype=torch.float32).div(255.0).expand(3, 1, 256).clone()
    if normalize:
        levels = transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD)(levels)
    return levels[:, 0, :].contiguous()


def load_image(path: str | Path, *, frame: int | None = None) -> torch.Tensor:
    """One image file → float tensor (3, H, W) in [0, 1]; ``frame``: see :mod:`.pixels`."""
    return to_tensor(read_image_array(path, frame=frame))


def default_transform(size: int = 224, *, normalize: bool = True) -> transforms.Compose:
    """Resize to (size, size) and, by default, ImageNet-normalise a (3, H, W) tensor."""
    steps: list = [transforms.Resize((size, size), antialias=True)]
    if normalize:
        steps.append(transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD))
    return transforms.Compose(steps)


def check_files_exist(files: np.ndarray, *, where: str) -> None:
    """Raise ``DataError`` listing the missing files (with their rows) of ``files``."""
    missing = [i for i, f in enumerate(files) if not os.path.exists(f)]
    if missing:
        listed = first_named(missing, lambda i: f"{files[i]} (row {i})")
        raise DataError(
            f"{where}: {len(missing)} of {len(files)} image files are absent "
            f"(metadata-only data?); first missing: {listed}"
        )


class ImageDataset(Dataset):
    """Images with binary target and subconcept code, for training code.

    ``__getitem__(i)`` returns ``(image (3, H, W) float32, y int, subconcept int)``.
    Images come from ``files`` (decoded lazily; ``frame`` is the frame read from multi-frame
    DICOM files) or from ``images`` (N, H, W[, C]) uint8 in memory.
    """

    def __init__(
        self,
        *,
        y: np.ndarray,
        subconcept: np.ndarray,
        files: np.ndarray | None = None,
        images: np.ndarray | None = None,
        transform=None,
        where: str = "images",
        frame: int | None = None,
    ) -> None:
        if (files is None) == (images is None):
            raise ValueError("give exactly one of files or images")
        if files is not None:
            check_files_exist(np.asarray(files), where=where)
        self.files, self.images = files, images
        self.y = np.asarray(y, dtype=np.int64)
        self.subconcept = np.asarray(subconcept, dtype=np.int64)
        self.transform = transform
        self.frame = frame

    @classmethod
    def from_task(cls, task, idx: np.ndarray | None = None, *, transform=None) -> ImageDataset:
        """Rows ``idx`` (default all) of a ``BinaryTask`` whose data has files or images."""
        sub = task if idx is None else task.subset(idx)
        data = sub.data
        if data.files is None and data.images is None:
            raise DataError(f"{task.source}/{task.name}: the task has no images")
        return cls(
            y=sub.y,
            subconcept=sub.subconcept,
            files=data.files,
            images=data.images,
            transform=transform,
            where=f"{task.source}/{task.name}",
            frame=data.meta.get(FRAME_KEY),
        )

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int, int]:
        if self.files is not None:
            try:
                image = load_image(self.files[i], frame=self.frame)
            except DataError as exc:
                raise DataError(f"row {i}: {exc}") from exc
        else:
            image = to_tensor(np.asarray(self.images[i], dtype=np.float32) / 255.0)
        if self.transform is not None:
            image = self.transform(image)
        return image, int(self.y[i]), int(self.subconcept[i])
