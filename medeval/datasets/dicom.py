"""DICOM image sets: a folder plus a labels CSV (file, label, optional patient id); decoding lives
in :mod:`medeval.datasets.pixels`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from medeval.datasets.base import (
    DataError,
    LabelledData,
    SkippedFile,
    bad_files_error,
    group_ids,
    read_table,
)
from medeval.datasets.files import check_one_row_per_image
from medeval.datasets.pixels import (
    FRAME_KEY,
    dicom_frame,
    read_dicom_header,
    read_dicom_image,
    unreadable_files,
    verify_level,
    without_unreadable,
)

__all__ = ["load_dicom", "read_dicom_image"]


def _find_csv(folder: Path) -> Path:
    for name in ("labels.csv", "metadata.csv"):
        if (folder / name).is_file():
            return folder / name
    candidates = sorted(folder.glob("*.csv"))
    if len(candidates) != 1:
        raise FileNotFoundError(f"{folder}: expected one labels CSV, found {len(candidates)}")
    return candidates[0]


def _check_headers(files: np.ndarray, frame: int | None, bad: dict[int, SkippedFile]) -> np.ndarray:
    """(N,) PatientID tags; bad headers and unresolved multi-frame files go into ``bad``."""
    ids = np.full(len(files), "", dtype=object)
    for row, file in enumerate(files):
        try:
            patient, n_frames = read_dicom_header(file)
            dicom_frame(file, n_frames, frame)
        except DataError as exc:
            bad[row] = SkippedFile.of(file, row, exc)
            continue
        ids[row] = patient
    return ids


def load_dicom(
    path: str | Path,
    *,
    csv: str | Path | None = None,
    file_column: str = "file",
    label_column: str = "label",
    patient_column: str | None = "patient_id",
    verify: bool | str = True,
    skip_unreadable: bool = False,
    classes: list[str] | None = None,
    name: str | None = None,
    frame: int | None = None,
) -> LabelledData:
    """Read a DICOM set.

    Args:
        path: folder with the DICOM files (``file_column`` is relative to it).
        csv: the labels table (default ``labels.csv`` / ``metadata.csv`` / the only CSV there).
        patient_column: patient id column; when absent from the CSV the ``PatientID`` tag of
            each file is used.
        verify, skip_unreadable: see :func:`~medeval.datasets.pixels.verify_files` (``True``
            decodes every image: decoding is where DICOM files fail).
        classes: the allowed labels; another label raises ``DataError`` naming file and row.
        frame: the frame read from multi-frame files (``-1`` = last; kept in
            ``meta["dicom_frame"]``); without it a multi-frame file is named at load time.

    Returns:
        ``LabelledData`` with ``files`` (N,), ``labels`` (N,), ``groups`` = patient ids (a file
        without one is its own group).
    """
    folder = Path(path)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such DICOM folder")
    csv_path = Path(csv) if csv is not None else _find_csv(folder)
    table = read_table(csv_path, [file_column, label_column], [label_column], classes, dtype=str)
    files = np.asarray([str(folder / f.strip()) for f in table[file_column]], dtype=object)
    labels = table[label_column].str.strip().to_numpy(dtype=str)
    check_one_row_per_image(
        files, table[file_column].to_numpy(), table.index, labels, where=str(csv_path)
    )
    bad: dict[int, SkippedFile] = {}
    need_tags = patient_column is None or patient_column not in table.columns
    # Decoding is where DICOM files fail (compressed syntaxes), so True means a full decode.
    level = "full" if verify is True else verify_level(verify)
    if level is None and skip_unreadable:
        level = "full"
    # headers are cheap: the frame rule holds without verify (their tags: groups where needed)
    tags = _check_headers(files, frame, bad) if need_tags or level != "full" else None
    if level == "full":
        ok = np.setdiff1d(np.arange(len(files)), np.fromiter(bad, dtype=np.intp))
        bad |= {
            int(ok[p]): s
            for p, s in unreadable_files(files[ok], rows=ok, level="full", frame=frame).items()
        }
    if bad and not skip_unreadable:
        raise bad_files_error(str(csv_path), [bad[r] for r in sorted(bad)], len(files))
    by = "PatientID" if need_tags else patient_column
    data = LabelledData(
        labels=labels,
        source="dicom",
        name=name or folder.name,
        files=files,
        groups=group_ids(pd.Series(tags, dtype=object) if need_tags else table[by]),
        ids=table[file_column].str.strip().to_numpy(dtype=str),
        meta={"path": str(folder), "csv": str(csv_path), FRAME_KEY: frame, "group_column": by},
    )
    return without_unreadable(data, bad)
