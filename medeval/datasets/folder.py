"""Folder-per-class image sets, ``root/<class>/*`` or ``root/{train,val,test}/<class>/*`` (parts
merged or respected); hidden files ignored, non-image files named in one warning
(docs/tasks.md)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from medeval.datasets.base import EMPTY_CLASS_FOLDERS, DataError, LabelledData, first_named
from medeval.datasets.files import image_files_below, is_hidden
from medeval.datasets.pixels import IMAGE_SUFFIXES, verify_files

__all__ = ["NotImageFilesWarning", "load_image_folder"]


class NotImageFilesWarning(UserWarning):
    """Files where images are looked for whose suffix is not an image suffix: not read."""


SPLIT_NAMES = {"train": "train", "val": "val", "valid": "val", "validation": "val", "test": "test"}


def _subfolders(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.is_dir() and not is_hidden(p.name)]


def load_image_folder(
    path: str | Path,
    *,
    splits: str = "merge",
    verify: bool | str = True,
    skip_unreadable: bool = False,
    name: str | None = None,
) -> LabelledData:
    """Read a folder-per-class image set.

    Args:
        path: root folder.
        splits: ``"merge"`` or ``"respect"`` pre-made ``train/val/test`` subfolders.
        verify, skip_unreadable: see :func:`~medeval.datasets.pixels.verify_files`.

    Returns:
        ``LabelledData`` with ``files`` (N,), ``labels`` = class folder names, ``ids`` = paths
        relative to ``path``; ``presplit`` (N,) with ``splits="respect"``.
    """
    root = Path(path)
    if root.is_file():
        raise DataError(f"{root}: is a file; the folder source reads a folder of class folders")
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no such image folder")
    if splits not in ("merge", "respect"):
        raise ValueError(f"splits must be 'merge' or 'respect', got {splits!r}")
    sub = {p.name.lower(): p for p in _subfolders(root)}
    split_dirs = {SPLIT_NAMES[k]: p for k, p in sub.items() if k in SPLIT_NAMES}
    if splits == "respect" and not split_dirs:
        raise DataError(f"{root}: splits='respect' but no train/val/test subfolders")
    folders = [(p, split_dirs[p]) for p in ("train", "val", "test") if p in split_dirs]
    walked = [  # (part, class folder, its image files, its other files)
        (part, class_dir, *image_files_below(class_dir))
        for part, folder in folders or [("", root)]
        for class_dir in sorted(_subfolders(folder))
    ]
    rows = [(class_dir.name, str(f), part) for part, class_dir, images, _ in walked for f in images]
    others = [f for *_, not_images in walked for f in not_images]
    if others:  # named, so that an unsupported format is never dropped unseen
        warnings.warn(
            f"{root}: {len(others)} file(s) are not read: not an image suffix "
            f"({', '.join(IMAGE_SUFFIXES)}): {first_named(others)}",
            NotImageFilesWarning,
            stacklevel=2,
        )
    found = {lab for lab, _, _ in rows}  # a class folder is empty when empty in every part
    empty = [str(d) for _, d, images, _ in walked if not images and d.name not in found]
    if not rows:
        raise DataError(f"{root}: no images found in class subfolders")
    labels, files, parts = (np.asarray(col) for col in zip(*rows, strict=True))
    data = LabelledData(
        labels=labels,
        source="folder",
        name=name or root.name,
        files=files.astype(object),
        ids=np.asarray([str(Path(f).relative_to(root)) for f in files]),
        presplit=parts if splits == "respect" else None,
        meta={
            "path": str(root),
            "had_split_folders": bool(split_dirs),
            **({EMPTY_CLASS_FOLDERS: sorted(set(empty))} if empty else {}),
        },
    )
    return verify_files(data, verify=verify, skip_unreadable=skip_unreadable, where=str(root))
