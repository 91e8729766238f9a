"""Decoding one image file (PIL or pydicom: modality LUT, VOI LUT or window, MONOCHROME1) into
floats in [0, 1], and checking a set of files (every bad file named in one error)."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, UnidentifiedImageError

from medeval.datasets.base import DataError, LabelledData, SkippedFile, bad_files_text

__all__ = [
    "DICOM_SUFFIXES",
    "FRAME_KEY",
    "IMAGE_SUFFIXES",
    "PIL_SUFFIXES",
    "VERIFY_LEVELS",
    "check_image",
    "dicom_frame",
    "is_dicom",
    "is_image_name",
    "read_dicom_header",
    "read_dicom_image",
    "read_image_array",
    "unreadable_files",
    "verify_files",
    "verify_level",
    "without_unreadable",
]

PIL_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".gif", ".webp")
DICOM_SUFFIXES = (".dcm", ".dicom")
#: The rule for which files are images, for every source that finds them by name (any case).
IMAGE_SUFFIXES = PIL_SUFFIXES + DICOM_SUFFIXES
FRAME_KEY = "dicom_frame"  # ``LabelledData.meta`` key: the frame picked from multi-frame files
_HEADER_ERRORS = (OSError, ValueError, EOFError, KeyError, AttributeError, TypeError)
#: What a check of the files does: ``"header"`` (PIL ``verify()``, JPEG decoded at 1/8 scale,
#: DICOM header and frame rule) or ``"full"`` (decode every pixel).
VERIFY_LEVELS = ("header", "full")
_PIL_ERRORS = (
    UnidentifiedImageError,
    OSError,
    ValueError,
    SyntaxError,
    EOFError,
    Image.DecompressionBombError,
    Image.DecompressionBombWarning,
)


def is_image_name(name: str | Path) -> bool:
    """Whether a file name has an image suffix (:data:`IMAGE_SUFFIXES`, any letter case)."""
    return Path(name).suffix.lower() in IMAGE_SUFFIXES


def is_dicom(path: Path) -> bool:
    """A ``.dcm`` / ``.dicom`` file, or any non-image file with the DICOM part-10 magic."""
    suffix = path.suffix.lower()
    if suffix in DICOM_SUFFIXES:
        return True
    if suffix in PIL_SUFFIXES:
        return False
    with open(path, "rb") as fh:  # DICOM part-10 files carry "DICM" after a 128-byte preamble
        fh.seek(128)
        return fh.read(4) == b"DICM"


@contextmanager
def _named_errors(path: Path) -> Iterator[None]:
    """Every reason a file cannot be read (a decompression-bomb warning too) as a DataError."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            yield
    except DataError:
        raise
    except FileNotFoundError as exc:
        if path.is_symlink():
            reason = f"broken symbolic link (its target {os.readlink(path)} does not exist)"
            raise DataError(f"{path}: {reason}") from exc
        raise DataError(f"{path}: image file not found") from exc
    except _PIL_ERRORS as exc:
        raise DataError(f"{path}: {_pil_reason(exc)}") from exc


def _pil_reason(exc: BaseException) -> str:
    """Why PIL could not read a file, in words a user can act on."""
    if isinstance(exc, Image.DecompressionBombError | Image.DecompressionBombWarning):
        return (
            f"cannot read image: refused as a possible decompression bomb: {exc} "
            "(PIL.Image.MAX_IMAGE_PIXELS sets the limit)"
        )
    if isinstance(exc, UnidentifiedImageError):
        return "cannot read image: not an image file (PIL cannot identify it)"
    return f"cannot read image: {' '.join(str(exc).split()) or type(exc).__name__}"


def _pil_array(path: Path) -> np.ndarray:
    with Image.open(path) as img:
        img.load()
        if img.mode in ("I;16", "I;16B", "I;16L", "I"):
            # 16-bit grayscale (PNG/TIFF): scale by the 16-bit range, not by the image's max.
            return np.asarray(img, dtype=np.float32) / 65535.0
        if img.mode == "F":
            return _min_max(np.asarray(img, dtype=np.float32))
        if img.mode in ("L", "1"):
            return np.asarray(img.convert("L"), dtype=np.float32) / 255.0
        return np.asarray(img.convert("RGB"), dtype=np.float32) / 255.0


def _min_max(arr: np.ndarray) -> np.ndarray:
    lo, hi = float(arr.min()), float(arr.max())
    return (arr - lo) / (hi - lo) if hi > lo else np.zeros_like(arr)


def read_image_array(path: str | Path, *, frame: int | None = None) -> np.ndarray:
    """Decode one image file into float32 (H, W) or (H, W, 3) in [0, 1] (DICOM through
    :func:`read_dicom_image`, with ``frame``; everything else through PIL).

    Raises:
        DataError: naming the file when it is missing or cannot be decoded.
    """
    path = Path(path)
    with _named_errors(path):
        return read_dicom_image(path, frame=frame) if is_dicom(path) else _pil_array(path)


def check_image(path: str | Path, *, level: str = "header", frame: int | None = None) -> None:
    """Check that one file can be read, without keeping its pixels (``level``: see
    :data:`VERIFY_LEVELS`).

    Raises:
        DataError: naming the file and why it cannot be read.
    """
    if level not in VERIFY_LEVELS:
        raise ValueError(f"verify level must be one of {VERIFY_LEVELS}, got {level!r}")
    path = Path(path)
    if level == "full":
        read_image_array(path, frame=frame)
        return
    with _named_errors(path):
        if is_dicom(path):
            dicom_frame(path, read_dicom_header(path)[1], frame)
            return
        with Image.open(path) as img:
            if img.format != "JPEG":
                img.verify()
                return
            # verify() checks nothing in a JPEG; a 1/8-scale decode still reads every coded byte.
            img.draft(img.mode, (max(1, img.width // 8), max(1, img.height // 8)))
            img.load()


def read_dicom_header(path: str | Path) -> tuple[str, int]:
    """Patient id and frame count of one file, without reading its pixels.

    Raises:
        DataError: naming the file when it is missing or not readable DICOM.
    """
    ds, n_frames = _dcmread(
        Path(path), "header", stop_before_pixels=True, specific_tags=["PatientID", "NumberOfFrames"]
    )
    return str(ds.get("PatientID", "")).strip(), n_frames


def _dcmread(path: Path, what: str, **options) -> tuple[Any, int]:
    """The DICOM data set and its frame count; ``what`` is what messages say was not read."""
    import pydicom  # only DICOM users pay for importing pydicom
    from pydicom.errors import InvalidDicomError

    try:
        ds = pydicom.dcmread(path, **options)
    except FileNotFoundError as exc:
        raise DataError(f"{path}: DICOM file not found") from exc
    except (InvalidDicomError, *_HEADER_ERRORS) as exc:
        raise DataError(f"{path}: cannot read DICOM {what}: {exc}") from exc
    try:
        return ds, int(ds.get("NumberOfFrames") or 1)
    except _HEADER_ERRORS as exc:
        raise DataError(f"{path}: cannot read DICOM {what}: bad NumberOfFrames: {exc}") from exc


def dicom_frame(path: str | Path, n_frames: int, frame: int | None) -> int | None:
    """The frame to read from a file of ``n_frames`` (``None`` for a single-frame file);
    ``frame`` may count from the end (``-1`` = last).

    Raises:
        DataError: naming the file when it is multi-frame and ``frame`` is ``None`` or out of
            range.
    """
    if n_frames <= 1:
        return None
    if frame is None:
        raise DataError(
            f"{path}: multi-frame DICOM ({n_frames} frames) where one image per row is "
            "expected; pick one with the loader option frame=<index>"
        )
    if not -n_frames <= frame < n_frames:
        raise DataError(f"{path}: frame {frame} asked for, but the file has {n_frames} frames")
    return frame % n_frames


def read_dicom_image(path: str | Path, *, frame: int | None = None) -> np.ndarray:
    """Decode one DICOM file into float32 (H, W) grey or (H, W, 3) RGB in [0, 1]; ``frame``:
    the frame of a multi-frame file (``-1`` = last).

    Raises:
        DataError: naming the file when it is not readable DICOM, has no pixel data, cannot be
            decoded (e.g. no decoder for its transfer syntax), or is multi-frame without
            ``frame``.
    """
    path = Path(path)
    ds, n_frames = _dcmread(path, "pixels")
    raw = _decode(ds, path, dicom_frame(path, n_frames, frame))
    photometric = str(ds.get("PhotometricInterpretation", "")).strip()
    if photometric == "PALETTE COLOR":
        return _palette_to_rgb(raw, ds, path)
    if raw.ndim == 3:  # RGB, or YBR that pydicom has converted to RGB
        bits = int(ds.get("BitsStored") or raw.dtype.itemsize * 8)
        return (raw.astype(np.float64) / (2.0**bits - 1)).clip(0, 1).astype(np.float32)
    return _grey(raw, ds, monochrome1=photometric == "MONOCHROME1")


def _decode(ds, path: Path, index: int | None) -> np.ndarray:
    """The pixels of frame ``index`` (``None``: the one image); decoder failures as DataError."""
    if "PixelData" not in ds and "FloatPixelData" not in ds and "DoubleFloatPixelData" not in ds:
        raise DataError(f"{path}: cannot read DICOM pixels: the file has no pixel data")
    meta = getattr(ds, "file_meta", None)
    syntax = meta.get("TransferSyntaxUID") if meta is not None else None
    try:
        ds.pixel_array_options(index=index)
        return ds.pixel_array
    # Decoder plugins raise many types: each is a fault of this file.
    except Exception as exc:
        name = getattr(syntax, "name", "unknown transfer syntax")
        hint = ""
        if syntax is not None and _no_decoder(syntax):
            hint = f"; no decoder for {name} is installed: `pip install medeval[dicom]`"
        reason = " ".join(str(exc).split())  # plugin reports span lines; messages are one line
        raise DataError(f"{path}: cannot decode DICOM pixels ({name}): {reason}{hint}") from exc


def _no_decoder(syntax) -> bool:
    """True when the transfer syntax is compressed and no decoder plugin for it is installed."""
    from pydicom.pixels import get_decoder

    try:
        if not syntax.is_compressed:
            return False
        return not get_decoder(syntax).is_available
    except NotImplementedError:  # pydicom knows no decoder for this syntax at all
        return True
    except ValueError:  # not a transfer syntax pydicom knows: no advice to give
        return False


def _palette_to_rgb(raw: np.ndarray, ds, path: Path) -> np.ndarray:
    from pydicom.pixels import apply_color_lut

    try:
        rgb = apply_color_lut(raw, ds)
    except (ValueError, KeyError, AttributeError) as exc:
        raise DataError(f"{path}: cannot apply the PALETTE COLOR lookup table: {exc}") from exc
    # The LUT entries are 8 or 16 bit (LUT descriptor); pydicom returns uint8 or uint16 to match.
    return (rgb.astype(np.float32) / np.iinfo(rgb.dtype).max).astype(np.float32)


def _grey(raw: np.ndarray, ds, *, monochrome1: bool) -> np.ndarray:
    from pydicom.pixels import apply_modality_lut, apply_voi_lut

    arr = apply_modality_lut(raw, ds)
    if "VOILUTSequence" in ds:
        # A VOI LUT table is indexed by integer values; the modality step may return floats.
        arr = apply_voi_lut(np.rint(arr).astype(np.int64), ds, index=0)
        lo, hi = 0.0, 2.0 ** int(ds.VOILUTSequence[0].LUTDescriptor[2]) - 1
    elif "WindowCenter" in ds:
        arr = apply_voi_lut(arr, ds, index=0)
        lo, hi = _window_range(ds)
    else:
        arr = _min_max(np.asarray(arr, dtype=np.float32))
        return 1.0 - arr if monochrome1 else arr  # MONOCHROME1: low values are white
    # Scale by the VOI output range (PS3.3 C.11.2), not min-max: as a viewer shows it.
    arr = ((np.asarray(arr, dtype=np.float64) - lo) / (hi - lo)).clip(0, 1).astype(np.float32)
    return 1.0 - arr if monochrome1 else arr


def _window_range(ds) -> tuple[float, float]:
    """The (y_min, y_max) that ``pydicom.pixels.apply_windowing`` maps onto (its own rule)."""
    if ds.get("ModalityLUTSequence"):
        return 0.0, 2.0 ** int(ds.ModalityLUTSequence[0].LUTDescriptor[2]) - 1
    bits = int(ds.BitsStored)
    if ds.get("PixelRepresentation", 0) == 0:
        lo, hi = 0.0, 2.0**bits - 1
    else:
        lo, hi = -(2.0 ** (bits - 1)), 2.0 ** (bits - 1) - 1
    slope, intercept = ds.get("RescaleSlope"), ds.get("RescaleIntercept")
    if slope is not None and intercept is not None:
        lo, hi = lo * float(slope) + float(intercept), hi * float(slope) + float(intercept)
    return lo, hi


def verify_level(verify: bool | str) -> str | None:
    """The check a loader's ``verify`` asks for: ``True`` → ``"header"``, ``False`` → none."""
    if verify is True:
        return "header"
    if verify is False or verify is None:
        return None
    if verify not in VERIFY_LEVELS:
        raise ValueError(f"verify must be True, False or one of {VERIFY_LEVELS}, got {verify!r}")
    return verify


def unreadable_files(
    files: Sequence[str],
    *,
    rows: np.ndarray | None = None,
    level: str = "header",
    frame: int | None = None,
) -> dict[int, SkippedFile]:
    """Check every file once (:func:`check_image`); position → record for each that fails.

    ``rows`` (N,) are the rows the records carry (e.g. metadata rows; default 0..N-1).
    """
    rows = np.arange(len(files)) if rows is None else np.asarray(rows)
    bad: dict[int, SkippedFile] = {}
    for pos, file in enumerate(files):
        try:
            check_image(file, level=level, frame=frame)
        except DataError as exc:
            bad[pos] = SkippedFile.of(file, rows[pos], exc)
    return bad


def without_unreadable(data: LabelledData, bad: dict[int, SkippedFile]) -> LabelledData:
    """``data`` less the rows in ``bad`` (position → record), recorded in ``skipped``."""
    if not bad:
        return data
    out = data.subset(np.setdiff1d(np.arange(len(data)), np.fromiter(bad, dtype=np.intp)))
    out.skipped = [*data.skipped, *(bad[p] for p in sorted(bad))]
    return out


def verify_files(
    data: LabelledData,
    *,
    skip_unreadable: bool,
    verify: bool | str = True,
    rows: np.ndarray | None = None,
    where: str | None = None,
    missing: Sequence[SkippedFile] = (),
    missing_text: str = "",
) -> LabelledData:
    """Check every file of ``data`` in one pass, with the records of absent files ``missing``
    (``missing_text`` names them).

    ``verify``: check every image now (``True``: a header check, ``"full"``: decode), one error
    naming every missing and unreadable file with its row; ``False``: a file fails when first read.
    ``skip_unreadable``: leave them out and record them instead (headers checked even without
    ``verify``). ``rows`` (N,): the rows named in messages; ``where`` starts the message."""
    where = where or f"{data.source}/{data.name}"
    level = verify_level(verify) or ("header" if skip_unreadable else None)
    bad = unreadable_files(data.files, rows=rows, level=level) if level else {}
    if skip_unreadable or not (missing or bad):
        data.skipped = [*data.skipped, *missing]
        return without_unreadable(data, bad)
    unreadable = bad_files_text([bad[p] for p in sorted(bad)], len(data) + len(missing))
    if not missing:
        text = f"{where}: {unreadable}"
    else:
        text = missing_text + (f"; besides, {unreadable}" if bad else "")
    raise DataError(f"{text} (fix or remove them, or leave them out with --skip-unreadable)")
