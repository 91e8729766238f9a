"""NIH ChestX-ray14: ``Data_Entry_2017*.csv[.gz]`` plus the image folders as distributed.

Single-label images only (no ``|`` in ``Finding Labels``), 15 finding types incl. "No Finding";
group = ``Patient ID``. Without pixels the loader runs in metadata-only mode (``files`` hold the
expected paths, ``meta["metadata_only"] = True``), which serves describe and split planning.
"""

from __future__ import annotations

from pathlib import Path

from medeval.datasets.base import (
    LabelledData,
    check_known_labels,
    check_labels_present,
    read_table,
    require_columns,
)
from medeval.datasets.files import resolve_files
from medeval.datasets.pixels import verify_files

__all__ = ["find_nih_metadata", "load_nih"]

COLUMNS = ["Image Index", "Finding Labels", "Patient ID"]
FINDINGS = (
    "Atelectasis", "Cardiomegaly", "Consolidation", "Edema", "Effusion", "Emphysema",
    "Fibrosis", "Hernia", "Infiltration", "Mass", "No Finding", "Nodule",
    "Pleural_Thickening", "Pneumonia", "Pneumothorax",
)  # fmt: skip


def find_nih_metadata(path: str | Path) -> Path:
    """The ``Data_Entry_2017*.csv[.gz]`` file itself, or the one inside folder ``path``."""
    path = Path(path)
    if path.is_file():
        return path
    if not path.is_dir():
        raise FileNotFoundError(f"{path}: no such NIH file or folder")
    candidates = sorted(path.glob("Data_Entry_2017*.csv")) + sorted(
        path.glob("Data_Entry_2017*.csv.gz")
    )
    if not candidates:
        raise FileNotFoundError(f"{path}: no Data_Entry_2017*.csv[.gz] metadata file")
    return candidates[0]


def load_nih(
    path: str | Path,
    *,
    images: str | Path | None = None,
    require_images: bool = False,
    verify: bool = False,
    skip_unreadable: bool = False,
) -> LabelledData:
    """Read NIH ChestX-ray14.

    Args:
        path: the metadata file, or the folder holding it (and, as distributed, the
            ``images_001/images/`` … folders or one flat image folder).
        images: folder with the images when elsewhere (default: the metadata's folder).
        require_images: raise, listing the first missing files, when pixels are absent.
        verify: decode every image now (slow on the full set) so that unreadable files fail
            early, naming file and row; without it they fail when first read.
        skip_unreadable: verify, and leave out (and record) missing or unreadable images
            instead of raising.

    Returns:
        ``LabelledData`` (N single-label images) with ``files`` (N,), ``groups`` = Patient ID
        and ``ids`` = Image Index.
    """
    meta_path = find_nih_metadata(path)
    frame = read_table(meta_path, usecols=lambda c: c in COLUMNS, dtype=str)
    require_columns(frame, COLUMNS, meta_path)
    check_labels_present(frame["Finding Labels"], meta_path, "Finding Labels")
    single = ~frame["Finding Labels"].str.contains("|", regex=False)
    n_total = len(frame)
    frame = frame.loc[single]  # the index keeps the metadata row for error messages
    check_known_labels(frame["Finding Labels"].str.strip(), FINDINGS, meta_path, "Finding Labels")
    check_labels_present(frame["Image Index"], meta_path, "Image Index")
    meta_rows = frame.index.to_numpy()  # (N,) data rows of the metadata file, for messages
    frame = frame.reset_index(drop=True)
    root = Path(images) if images is not None else meta_path.parent
    paths, keep, skipped, metadata_only = resolve_files(
        frame["Image Index"].to_numpy(),
        root,
        metadata_path=meta_path,
        require=require_images,
        skip_unreadable=skip_unreadable,
        suffixes=(".png",),
        rows=meta_rows,
    )
    frame = frame.loc[keep]
    data = LabelledData(
        labels=frame["Finding Labels"].str.strip().to_numpy(dtype=str),
        source="nih",
        name="nih-chestxray14",
        files=paths[keep],
        groups=frame["Patient ID"].str.strip().to_numpy(dtype=str),
        ids=frame["Image Index"].to_numpy(dtype=str),
        skipped=skipped,
        meta={
            "path": str(meta_path),
            "metadata_only": metadata_only,
            "n_rows": n_total,
            "n_multi_label_dropped": int(n_total - single.sum()),
        },
    )
    if (verify or skip_unreadable) and not metadata_only:
        data = verify_files(data, skip_unreadable=skip_unreadable, rows=meta_rows[keep])
    return data
