"""Decoding images (PIL, pydicom) into tensors, transforms, and a torch ``Dataset``.

Every image becomes a float tensor (3, H, W) in [0, 1]: grayscale is repeated to 3 channels
because the backbones (VGG16) expect ImageNet RGB input.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch
from PIL import Image, UnidentifiedImageError
from torch.utils.data import Dataset
from torchvision import transforms

from medeval.datasets.base import DataError, LabelledData, SkippedFile

__all__ = [
    "IMAGENET_MEAN",
    "IMAGENET_STD",
    "ImageDataset",
    "check_files_exist",
    "default_transform",
    "load_image",
    "read_image_array",
    "to_tensor",
    "verify_files",
]

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
N_LISTED = 5


PIL_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".gif", ".webp")


def _is_dicom(path: Path) -> bool:
    suffix = path.suffix.lower()
    if suffix in (".dcm", ".dicom"):
        return True
    if suffix in PIL_SUFFIXES:
        return False
    with open(path, "rb") as fh:  # DICOM part-10 files carry "DICM" after a 128-byte preamble
        fh.seek(128)
        return fh.read(4) == b"DICM"


def _pil_array(path: Path) -> np.ndarray:
    with Image.open(path) as img:
        img.load()
        if img.mode in ("I;16", "I;16B", "I;16L", "I"):
            # 16-bit grayscale (PNG/TIFF): scale by the 16-bit range, not by the image's max.
            return np.asarray(img, dtype=np.float32) / 65535.0
        if img.mode == "F":
            arr = np.asarray(img, dtype=np.float32)
            lo, hi = float(arr.min()), float(arr.max())
            return (arr - lo) / (hi - lo) if hi > lo else np.zeros_like(arr)
        if img.mode in ("L", "1"):
            return np.asarray(img.convert("L"), dtype=np.float32) / 255.0
        return np.asarray(img.convert("RGB"), dtype=np.float32) / 255.0


def read_image_array(path: str | Path) -> np.ndarray:
    """Decode one image file into float32 (H, W) or (H, W, 3) in [0, 1].

    DICOM files go through :func:`medeval.datasets.dicom.read_dicom_image` (rescale, VOI LUT,
    MONOCHROME1 inversion); everything else through PIL.

    Raises:
        DataError: naming the file when it is missing or cannot be decoded.
    """
    path = Path(path)
    try:
        if _is_dicom(path):
            from medeval.datasets.dicom import read_dicom_image

            return read_dicom_image(path)
        return _pil_array(path)
    except DataError:
        raise
    except FileNotFoundError as exc:
        raise DataError(f"{path}: image file not found") from exc
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise DataError(f"{path}: cannot read image: {exc}") from exc


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


def load_image(path: str | Path) -> torch.Tensor:
    """One image file → float tensor (3, H, W) in [0, 1]."""
    return to_tensor(read_image_array(path))


def default_transform(size: int = 224, *, normalize: bool = True) -> transforms.Compose:
    """Resize to (size, size) and, by default, ImageNet-normalise a (3, H, W) tensor."""
    steps: list = [transforms.Resize((size, size), antialias=True)]
    if normalize:
        steps.append(transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD))
    return transforms.Compose(steps)


def check_files_exist(files: np.ndarray, *, where: str) -> None:
    """Raise ``DataError`` listing the first missing files (with their rows) of ``files``."""
    missing = [i for i, f in enumerate(files) if not os.path.exists(f)]
    if missing:
        listed = ", ".join(f"{files[i]} (row {i})" for i in missing[:N_LISTED])
        raise DataError(
            f"{where}: {len(missing)} of {len(files)} image files are absent "
            f"(metadata-only data?); first missing: {listed}"
        )


def verify_files(
    data: LabelledData, *, skip_unreadable: bool, rows: np.ndarray | None = None
) -> LabelledData:
    """Decode every file of ``data`` once; raise naming file and row, or skip and record.

    ``rows`` (N,) are the rows named in messages (e.g. metadata rows; default 0..N-1).
    """
    rows = np.arange(len(data)) if rows is None else np.asarray(rows)
    bad: list[SkippedFile] = []
    bad_pos: list[int] = []
    for pos, file in enumerate(data.files):
        try:
            read_image_array(file)
        except DataError as exc:
            if not skip_unreadable:
                raise DataError(f"row {rows[pos]}: {exc}") from exc
            bad.append(SkippedFile(str(file), int(rows[pos]), str(exc)))
            bad_pos.append(pos)
    if not bad:
        return data
    keep = np.setdiff1d(np.arange(len(data)), bad_pos)
    out = data.subset(keep)
    out.skipped = [*data.skipped, *bad]
    return out


class ImageDataset(Dataset):
    """Images with binary target and subconcept code, for training code.

    ``__getitem__(i)`` returns ``(image (3, H, W) float32, y int, subconcept int)``.
    Images come from ``files`` (decoded lazily) or from ``images`` (N, H, W[, C]) uint8 in memory.
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
    ) -> None:
        if (files is None) == (images is None):
            raise ValueError("give exactly one of files or images")
        if files is not None:
            check_files_exist(np.asarray(files), where=where)
        self.files, self.images = files, images
        self.y = np.asarray(y, dtype=np.int64)
        self.subconcept = np.asarray(subconcept, dtype=np.int64)
        self.transform = transform

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
        )

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int, int]:
        if self.files is not None:
            try:
                image = load_image(self.files[i])
            except DataError as exc:
                raise DataError(f"row {i}: {exc}") from exc
        else:
            image = to_tensor(np.asarray(self.images[i], dtype=np.float32) / 255.0)
        if self.transform is not None:
            image = self.transform(image)
        return image, int(self.y[i]), int(self.subconcept[i])
