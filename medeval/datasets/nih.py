"""NIH ChestX-ray14: ``Data_Entry_2017*.csv[.gz]`` plus the image folders; single-label rows only,
group ``Patient ID``; metadata-only without images (docs/tasks.md)."""

from __future__ import annotations

from pathlib import Path

from medeval.datasets.base import (
    LabelledData,
    check_known_labels,
    check_labels_present,
    find_file,
    group_ids,
    read_table,
)
from medeval.datasets.files import listed_images

__all__ = ["load_nih"]

COLUMNS = ["Image Index", "Finding Labels", "Patient ID"]
FINDINGS = (
    "Atelectasis", "Cardiomegaly", "Consolidation", "Edema", "Effusion", "Emphysema",
    "Fibrosis", "Hernia", "Infiltration", "Mass", "No Finding", "Nodule",
    "Pleural_Thickening", "Pneumonia", "Pneumothorax",
)  # fmt: skip


def load_nih(path: str | Path, **options) -> LabelledData:
    """Read NIH ChestX-ray14.

    Args:
        path: the metadata file, or the folder holding it (and, as distributed, the
            ``images_001/images/`` … folders or one flat image folder).
        options: ``images`` (the image folder when elsewhere), ``require_images``, ``verify``,
            ``skip_unreadable``: see :func:`~medeval.datasets.files.listed_images`.

    Returns:
        ``LabelledData`` (N single-label images) with ``files`` (N,), ``groups`` = Patient ID
        and ``ids`` = Image Index.
    """
    meta_path = find_file(
        path, ("Data_Entry_2017*.csv", "Data_Entry_2017*.csv.gz"), "Data_Entry_2017*.csv[.gz] file"
    )
    table = read_table(
        meta_path, COLUMNS, ["Finding Labels"], usecols=lambda c: c in COLUMNS, dtype=str
    )
    n_total = len(table)
    # Multi-label images ("A|B") have no single subconcept; the index keeps the file row.
    table = table.loc[~table["Finding Labels"].str.contains("|", regex=False)]
    check_known_labels(table["Finding Labels"].str.strip(), FINDINGS, meta_path, "Finding Labels")
    check_labels_present(table["Image Index"], meta_path, "Image Index")
    meta_rows = table.index.to_numpy()
    return listed_images(
        table["Image Index"].to_numpy(),
        meta_rows,
        meta_path,
        suffixes=(".png",),
        meta={
            "group_column": "Patient ID",
            "n_rows": n_total,
            "n_multi_label_dropped": n_total - len(meta_rows),
        },
        labels=table["Finding Labels"].str.strip().to_numpy(dtype=str),
        source="nih",
        name="nih-chestxray14",
        groups=group_ids(table["Patient ID"]),
        ids=table["Image Index"].to_numpy(dtype=str),
        **options,
    )
