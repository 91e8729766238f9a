"""HAM10000: ``HAM10000_metadata[.csv]`` plus the image folders; label ``dx`` (7 diagnoses),
group ``lesion_id`` (docs/tasks.md)."""

from __future__ import annotations

from pathlib import Path

from medeval.datasets.base import (
    LabelledData,
    find_file,
    group_ids,
    read_table,
)
from medeval.datasets.files import listed_images

__all__ = ["load_ham10000"]

COLUMNS = ["lesion_id", "image_id", "dx"]
METADATA = ("HAM10000_metadata.csv", "HAM10000_metadata", "HAM10000_metadata.tab")
DIAGNOSES = ("akiec", "bcc", "bkl", "df", "mel", "nv", "vasc")


def load_ham10000(path: str | Path, **options) -> LabelledData:
    """Read HAM10000.

    Args:
        path: the metadata file or the folder holding it and the image folders.
        options: ``images`` (the image folder when elsewhere, searched recursively for
            ``<image_id>.jpg``), ``require_images``, ``verify``, ``skip_unreadable``: see
            :func:`~medeval.datasets.files.listed_images`.

    Returns:
        ``LabelledData`` with ``files`` (N,), ``labels`` = dx, ``groups`` = lesion_id,
        ``ids`` = image_id.
    """
    meta_path = find_file(path, METADATA, "HAM10000_metadata[.csv] file")
    frame = read_table(meta_path, COLUMNS, ["dx", "image_id"], DIAGNOSES, dtype=str)
    return listed_images(
        (frame["image_id"].str.strip() + ".jpg").to_numpy(),
        frame.index.to_numpy(),
        meta_path,
        suffixes=(".jpg", ".jpeg"),
        meta={"group_column": "lesion_id"},
        labels=frame["dx"].str.strip().to_numpy(dtype=str),
        source="ham10000",
        name="ham10000",
        groups=group_ids(frame["lesion_id"]),  # no lesion id: a group of its own
        ids=frame["image_id"].str.strip().to_numpy(dtype=str),
        **options,
    )
