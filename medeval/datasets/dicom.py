"""DICOM image sets: a folder plus a CSV (file, label, optional patient id).

Pixels: modality LUT (rescale slope / intercept), then the VOI LUT or window centre / width,
MONOCHROME1 inverted so that bright is always dense, and 16-bit values mapped to float [0, 1].
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from medeval.datasets.base import (
    DataError,
    LabelledData,
    SkippedFile,
    check_known_labels,
    check_labels_present,
    read_table,
    require_columns,
)

__all__ = ["load_dicom", "read_dicom_image"]


def read_dicom_image(path: str | Path) -> np.ndarray:
    """Decode one DICOM file into float32 (H, W) in [0, 1] (first frame of multi-frame files).

    Raises:
        DataError: naming the file when it is not readable DICOM or has no pixel data.
    """
    import pydicom
    from pydicom.errors import InvalidDicomError
    from pydicom.pixels import apply_modality_lut, apply_voi_lut

    path = Path(path)
    try:
        ds = pydicom.dcmread(path)
        raw = ds.pixel_array
    except FileNotFoundError as exc:
        raise DataError(f"{path}: DICOM file not found") from exc
    except (InvalidDicomError, AttributeError, ValueError, KeyError, OSError, EOFError) as exc:
        raise DataError(f"{path}: cannot read DICOM pixels: {exc}") from exc
    if raw.ndim == 3 and getattr(ds, "SamplesPerPixel", 1) == 1:
        raw = raw[0]
    arr = apply_modality_lut(raw, ds)
    if "VOILUTSequence" in ds:
        # A VOI LUT table is indexed by integer values; the modality step may return floats.
        arr = apply_voi_lut(np.rint(arr).astype(np.int64), ds, index=0)
    elif "WindowCenter" in ds:
        arr = apply_voi_lut(arr, ds, index=0)
    arr = np.asarray(arr, dtype=np.float32)
    lo, hi = float(arr.min()), float(arr.max())
    arr = (arr - lo) / (hi - lo) if hi > lo else np.zeros_like(arr)
    if getattr(ds, "PhotometricInterpretation", "") == "MONOCHROME1":
        arr = 1.0 - arr  # MONOCHROME1: low values are white
    return arr


def _patient_ids(files: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, list[SkippedFile]]:
    import pydicom
    from pydicom.errors import InvalidDicomError

    out, bad = [], []
    for file, row in zip(files, rows, strict=True):
        try:
            ds = pydicom.dcmread(file, stop_before_pixels=True, specific_tags=["PatientID"])
            out.append(str(ds.get("PatientID", "")).strip())
        except (InvalidDicomError, OSError, ValueError, EOFError) as exc:
            out.append("")
            bad.append(SkippedFile(str(file), int(row), f"cannot read DICOM header: {exc}"))
    return np.asarray(out), bad


def _find_csv(folder: Path) -> Path:
    for name in ("labels.csv", "metadata.csv"):
        if (folder / name).is_file():
            return folder / name
    candidates = sorted(folder.glob("*.csv"))
    if len(candidates) != 1:
        raise FileNotFoundError(f"{folder}: expected one labels CSV, found {len(candidates)}")
    return candidates[0]


def load_dicom(
    path: str | Path,
    *,
    csv: str | Path | None = None,
    file_column: str = "file",
    label_column: str = "label",
    patient_column: str | None = "patient_id",
    verify: bool = True,
    skip_unreadable: bool = False,
    classes: list[str] | None = None,
    name: str | None = None,
) -> LabelledData:
    """Read a DICOM set.

    Args:
        path: folder with the DICOM files (``file_column`` is relative to it).
        csv: the labels table (default ``labels.csv`` / ``metadata.csv`` / the only CSV there).
        patient_column: patient id column; when absent from the CSV the ``PatientID`` tag of
            each file is used.
        verify: decode every image now so that unreadable files fail early (file and row named).
        skip_unreadable: leave out (and record) unreadable files instead of raising.
        classes: the allowed labels; another label raises ``DataError`` naming file and row.

    Returns:
        ``LabelledData`` with ``files`` (N,), ``labels`` (N,), ``groups`` = patient ids (a file
        without one is its own group).
    """
    folder = Path(path)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such DICOM folder")
    csv_path = Path(csv) if csv is not None else _find_csv(folder)
    frame = read_table(csv_path, dtype=str)
    require_columns(frame, [file_column, label_column], csv_path)
    check_labels_present(frame[label_column], csv_path, label_column)
    if classes is not None:
        check_known_labels(frame[label_column].str.strip(), classes, csv_path, label_column)
    files = np.asarray([str(folder / f.strip()) for f in frame[file_column]], dtype=object)
    rows = np.arange(len(frame))
    bad: list[SkippedFile] = []
    if verify or skip_unreadable:
        from medeval.datasets.images import read_image_array

        for row, file in zip(rows, files, strict=True):
            try:
                read_image_array(file)
            except DataError as exc:
                bad.append(SkippedFile(str(file), int(row), str(exc)))
    if patient_column is not None and patient_column in frame.columns:
        groups = frame[patient_column].fillna("").str.strip().to_numpy(dtype=str)
    else:
        ok = np.setdiff1d(rows, [b.row for b in bad])
        groups = np.full(len(frame), "", dtype=object)
        groups[ok], header_bad = _patient_ids(files[ok], ok)
        bad += header_bad
    if bad and not skip_unreadable:
        first = min(bad, key=lambda b: b.row)
        raise DataError(f"{csv_path}: row {first.row}: {first.reason}")
    keep = np.setdiff1d(rows, [b.row for b in bad])
    groups = np.asarray(groups, dtype=object)
    unknown = groups == ""
    # A file without patient id is its own group: never merge unknown patients into one.
    groups[unknown] = np.char.add("file:", files[unknown].astype(str))
    return LabelledData(
        labels=frame[label_column].str.strip().to_numpy(dtype=str)[keep],
        source="dicom",
        name=name or folder.name,
        files=files[keep],
        groups=groups.astype(str)[keep],
        ids=frame[file_column].str.strip().to_numpy(dtype=str)[keep],
        skipped=sorted(bad, key=lambda b: b.row),
        meta={"path": str(folder), "csv": str(csv_path)},
    )
