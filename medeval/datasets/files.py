"""Finding image files in the folder layouts in which data sets are distributed."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from medeval.datasets.base import DataError, LabelledData, SkippedFile, first_named, row_text
from medeval.datasets.pixels import IMAGE_SUFFIXES, is_image_name, verify_files
from medeval.names import shown

__all__ = [
    "IMAGE_SUFFIXES",
    "check_one_row_per_image",
    "image_files_below",
    "index_files",
    "is_hidden",
    "listed_images",
]


def is_hidden(name: str) -> bool:
    """A hidden file or folder (its name starts with a dot: ``.ipynb_checkpoints``, ``.git``,
    macOS's ``._x.png`` and ``.DS_Store``): never part of a data set, wherever it lies."""
    return name.startswith(".")


def check_one_row_per_image(
    files: np.ndarray, cells: np.ndarray, rows: np.ndarray, labels: np.ndarray | None, *, where
) -> None:
    """Raise ``DataError`` naming the first two rows (cells ``(N,)`` and ``labels``) whose
    ``files`` ``(N,)`` are one image, compared by device and inode so that every spelling is
    caught: an image listed twice would count twice and could lie on both sides of a split."""
    seen: dict[object, int] = {}
    for i, file in enumerate(files):
        try:
            stat = os.stat(file)
            key: object = (stat.st_dev, stat.st_ino)
        except OSError:
            key = os.path.normcase(os.path.abspath(file))
        j = seen.setdefault(key, i)
        if j != i:
            other = labels is not None and labels[j] != labels[i]
            two = f" with another label ({labels[j]!r} there)" if other else ""
            raise DataError(
                f"{where}: {row_text(rows[i])}: {shown(str(cells[i]))} is listed twice: "
                f"{row_text(rows[j])} ({shown(str(cells[j]))}) names the same image file "
                f"{file}{two}; list each image once"
            )


def image_files_below(folder: str | Path) -> tuple[list[Path], list[Path]]:
    """Every image file below ``folder`` (recursively) and every other file there, each sorted,
    hidden ones skipped; a broken symbolic link counts, to be named as unreadable."""
    images: list[Path] = []
    others: list[Path] = []
    for top, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if not is_hidden(d)]
        for name in names:
            if not is_hidden(name):
                (images if is_image_name(name) else others).append(Path(top) / name)
    return sorted(images), sorted(others)


def index_files(root: str | Path, suffixes: tuple[str, ...] = IMAGE_SUFFIXES) -> dict[str, str]:
    """File name → full path for every non-hidden file under ``root`` with one of ``suffixes``
    (one walk; a name seen twice keeps the first path met)."""
    found: dict[str, str] = {}
    for top, dirs, names in os.walk(root, followlinks=True):  # files first, then each folder
        dirs[:] = sorted(d for d in dirs if not is_hidden(d))
        for name in sorted(names):
            if not is_hidden(name) and name.lower().endswith(suffixes):
                found.setdefault(name, os.path.join(top, name))
    return found


def listed_images(
    names: np.ndarray,
    rows: np.ndarray,
    metadata_path: Path,
    *,
    suffixes: tuple[str, ...],
    meta: dict,
    images: str | Path | None = None,
    require_images: bool = False,
    verify: bool | str = True,
    skip_unreadable: bool = False,
    **fields,
) -> LabelledData:
    """The data of a metadata file that lists its images by file name (NIH, HAM10000).

    ``names`` (N,) are looked for anywhere under ``images`` (default: the metadata's folder);
    ``rows`` (N,) are their metadata rows; ``fields`` the other :class:`LabelledData` fields. With
    no image found and not ``require_images``, the data are metadata only
    (``meta["metadata_only"]``); otherwise files are checked by
    :func:`~medeval.datasets.pixels.verify_files` (``verify``, ``skip_unreadable``)."""
    root = Path(images) if images is not None else metadata_path.parent
    index = index_files(root, suffixes)
    names = np.asarray(names).astype(str)
    found = np.fromiter((n in index for n in names), dtype=bool, count=len(names))
    paths = np.asarray([index.get(n, os.path.join(str(root), n)) for n in names], dtype=object)
    check_one_row_per_image(paths, names, rows, None, where=str(metadata_path))
    metadata_only = not found.any() and not require_images
    meta = {"path": str(metadata_path), "metadata_only": metadata_only, **meta}
    data = LabelledData(files=paths, meta=meta, **fields)
    if metadata_only:
        return data
    missing = np.flatnonzero(~found)
    return verify_files(
        data.subset(np.flatnonzero(found)),
        missing=[SkippedFile(str(paths[i]), int(rows[i]), "file not found") for i in missing],
        missing_text=(
            f"{metadata_path}: {len(missing)} of {len(names)} images listed there are missing "
            f"under {root}; first missing: "
            + first_named(missing, lambda i: f"{names[i]} at {row_text(rows[i])}")
        ),
        verify=verify,
        skip_unreadable=skip_unreadable,
        rows=rows[found],
        where=str(metadata_path),
    )
