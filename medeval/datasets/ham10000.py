"""HAM10000: ``HAM10000_metadata[.csv]`` plus ``HAM10000_images_part_1/2`` or one folder.

Label ``dx`` (7 diagnoses); group = ``lesion_id`` (several images show the same lesion).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from medeval.datasets.base import (
    LabelledData,
    check_known_labels,
    check_labels_present,
    group_ids,
    read_table,
    require_columns,
)
from medeval.datasets.files import check_listed_files, missing_files_text, resolve_files

__all__ = ["find_ham_metadata", "load_ham10000"]

COLUMNS = ["lesion_id", "image_id", "dx"]
DIAGNOSES = ("akiec", "bcc", "bkl", "df", "mel", "nv", "vasc")


def find_ham_metadata(path: str | Path) -> Path:
    """The metadata file itself, or ``HAM10000_metadata[.csv|.tab]`` inside folder ``path``."""
    path = Path(path)
    if path.is_file():
        return path
    for name in ("HAM10000_metadata.csv", "HAM10000_metadata", "HAM10000_metadata.tab"):
        if (path / name).is_file():
            return path / name
    raise FileNotFoundError(f"{path}: no HAM10000_metadata[.csv] file")


def load_ham10000(
    path: str | Path,
    *,
    images: str | Path | None = None,
    require_images: bool = False,
    verify: bool | str = True,
    skip_unreadable: bool = False,
) -> LabelledData:
    """Read HAM10000.

    Args:
        path: the metadata file or the folder holding it and the image folders.
        images: image folder when elsewhere (searched recursively for ``<image_id>.jpg``).
        require_images: raise, listing the missing files, when pixels are absent.
        verify: check every present image now (``True``: a header check, see
            :data:`~medeval.datasets.pixels.VERIFY_LEVELS`; ``"full"``: decode); one error
            then names every missing and every unreadable file with its row. ``False``:
            unreadable files fail when first read, naming the file.
        skip_unreadable: leave out (and record) missing or unreadable images instead of
            raising (checks the headers even with ``verify=False``).

    Returns:
        ``LabelledData`` with ``files`` (N,), ``labels`` = dx, ``groups`` = lesion_id,
        ``ids`` = image_id.
    """
    meta_path = find_ham_metadata(path)
    frame = read_table(meta_path, dtype=str)
    require_columns(frame, COLUMNS, meta_path)
    check_labels_present(frame["dx"], meta_path, "dx")
    check_labels_present(frame["image_id"], meta_path, "image_id")
    frame["dx"] = frame["dx"].str.strip()
    check_known_labels(frame["dx"], DIAGNOSES, meta_path, "dx")
    names = (frame["image_id"].str.strip() + ".jpg").to_numpy()
    root = Path(images) if images is not None else meta_path.parent
    meta_rows = frame.index.to_numpy()
    paths, keep, missing, metadata_only = resolve_files(
        names,
        root,
        metadata_path=meta_path,
        require=require_images,
        skip_unreadable=True,  # missing files are collected, then named with unreadable ones
        suffixes=(".jpg", ".jpeg"),
        rows=meta_rows,
    )
    frame = frame.loc[keep]
    data = LabelledData(
        labels=frame["dx"].str.strip().to_numpy(dtype=str),
        source="ham10000",
        name="ham10000",
        files=np.asarray(paths[keep]),
        groups=group_ids(frame["lesion_id"]),  # no lesion id: a group of its own
        ids=frame["image_id"].str.strip().to_numpy(dtype=str),
        meta={"path": str(meta_path), "metadata_only": metadata_only, "group_column": "lesion_id"},
    )
    if metadata_only:
        return data
    return check_listed_files(
        data,
        missing=missing,
        missing_text=missing_files_text(names, meta_rows, np.flatnonzero(~keep), root, meta_path),
        verify=verify,
        skip_unreadable=skip_unreadable,
        rows=meta_rows[keep],
        where=str(meta_path),
    )
