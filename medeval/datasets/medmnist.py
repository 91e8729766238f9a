"""MedMNIST ``.npz`` files (``train_images``, ``train_labels``, ``val_*``, ``test_*``); class names
from ``medmnist.INFO`` when that package is installed, else the label codes."""

from __future__ import annotations

import zipfile
import zlib
from pathlib import Path

import numpy as np

from medeval.datasets.base import DataError, LabelledData

__all__ = ["dataset_names", "fetch_medmnist", "load_medmnist"]

PARTS = ("train", "val", "test")


def _class_names(path: Path) -> dict[str, str]:
    """Code → class name of the flag ('pathmnist' from 'pathmnist.npz' or 'pathmnist_64.npz')."""
    try:
        from medmnist import INFO  # optional dependency (extra "data")
    except ImportError:
        return {}
    return dict(INFO.get(path.stem.split("_")[0].lower(), {}).get("label", {}))


def _single_labels(labels: np.ndarray, path: Path, part: str) -> tuple[np.ndarray, np.ndarray]:
    """(N,) label codes, keep mask: multi-label rows keep one finding (none: ``"normal"``)."""
    labels = np.asarray(labels)
    if labels.ndim == 1 or labels.shape[1] == 1:
        return labels.reshape(-1).astype(int).astype(str), np.ones(len(labels), dtype=bool)
    n_pos = labels.sum(axis=1)
    codes = np.where(n_pos == 0, "normal", np.argmax(labels, axis=1).astype(str))
    if np.any(n_pos < 0):
        raise DataError(f"{path}: {part}_labels has negative values")
    return codes.astype(str), n_pos <= 1


def load_medmnist(
    path: str | Path,
    *,
    name: str | None = None,
    parts: tuple[str, ...] = PARTS,
    respect_splits: bool = False,
) -> LabelledData:
    """Read one MedMNIST ``.npz`` file.

    Args:
        path: the ``.npz`` file (e.g. ``pathmnist.npz``), or a folder of several.
        name: the data set in a folder of several (``<path>/<name>.npz``).
        parts: which of the distributed parts to read (merged).
        respect_splits: keep the distributed part of each row in ``presplit``.

    Returns:
        ``LabelledData`` with ``images`` (N, H, W[, C]) uint8 and ``labels`` (N,) class names.
    """
    path = Path(path)
    if path.is_dir() and name:
        path = path / f"{name}.npz"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such MedMNIST file")
    # numpy takes a file that is no zip archive for a pickle and advises loading it unsafely;
    # a broken archive raises zipfile's or zlib's own errors, here or when an array is read
    if not zipfile.is_zipfile(path):
        raise DataError(f"{path}: not a MedMNIST .npz file (not a zip archive of arrays)")
    try:
        with np.load(path, allow_pickle=False) as npz:
            images, labels, presplit = _read_parts(npz, path, parts)
    except DataError:  # a ValueError too: named already
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        raise DataError(f"{path}: not a readable MedMNIST .npz file: {exc}") from exc
    names = _class_names(path)
    codes = np.concatenate(labels)
    return LabelledData(
        labels=np.asarray([names.get(c, c) for c in codes]),
        source="medmnist",
        name=path.stem,
        images=np.concatenate(images),
        presplit=np.concatenate(presplit) if respect_splits else None,
        meta={"path": str(path)},
    )


def _read_parts(npz, path: Path, parts) -> tuple[list, list, list]:
    """Images, label codes and part names of each of ``parts`` (one-label rows only)."""
    images, labels, presplit = [], [], []
    for part in parts:
        for key in (f"{part}_images", f"{part}_labels"):
            if key not in npz.files:
                raise DataError(f"{path}: missing array {key!r} (arrays: {npz.files})")
        codes, keep = _single_labels(npz[f"{part}_labels"], path, part)
        images.append(npz[f"{part}_images"][keep])
        labels.append(codes[keep])
        presplit.append(np.full(int(keep.sum()), part))
    return images, labels, presplit


def dataset_names(path: Path) -> list[str]:
    """The ``.npz`` stems of a folder, or the one data set of a file."""
    if path.is_dir():
        return sorted(p.stem for p in path.glob("*.npz"))
    return [path.name.split(".")[0]]


def fetch_medmnist(flag: str, *, root: str | Path, size: int = 28) -> Path:
    """Download ``<flag>.npz`` into ``root`` once with the ``medmnist`` package (needs internet);
    returns the file path for :func:`load_medmnist`.
    """
    import medmnist  # optional dependency (extra "data")

    info = medmnist.INFO[flag]
    cls = getattr(medmnist, info["python_class"])
    kwargs = {} if size == 28 else {"size": size}
    cls(split="train", root=str(root), download=True, **kwargs)
    return Path(root) / (f"{flag}.npz" if size == 28 else f"{flag}_{size}.npz")
