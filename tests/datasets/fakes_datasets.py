"""Tiny image, DICOM and metadata files written at test time (nothing is downloaded)."""

from pathlib import Path

import numpy as np
from PIL import Image


def write_png(path: Path, value: int = 128, size: int = 8, mode: str = "L") -> Path:
    """A small image; ``value`` sets every pixel so that tests can tell files apart."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode == "RGB":
        img = Image.new("RGB", (size, size), (value, 0, 255 - value))
    else:
        img = Image.fromarray(np.full((size, size), value, dtype=np.uint8))
    img.save(path)
    return path


def write_corrupt(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"this is not an image at all")
    return path


def write_broken_pixels(path: Path, side: int = 48) -> Path:
    """A PNG whose header and chunk checksums are valid but whose compressed pixel data are
    scrambled: it passes the loaders' header check and fails only when decoded."""
    import struct
    import zlib

    rng = np.random.default_rng(0)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(rng.integers(0, 256, (side, side), dtype=np.uint8)).save(path)
    raw = path.read_bytes()
    out, i = bytearray(raw[:8]), 8
    while i < len(raw):
        (n,) = struct.unpack(">I", raw[i : i + 4])
        kind, data = raw[i + 4 : i + 8], bytearray(raw[i + 8 : i + 8 + n])
        if kind == b"IDAT":
            for k in range(10, len(data) - 10):
                data[k] ^= 0x5A
        out += struct.pack(">I", n) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        i += 12 + n
    path.write_bytes(bytes(out))
    return path


def write_dicom(
    path: Path,
    pixels: np.ndarray,
    *,
    photometric: str = "MONOCHROME2",
    slope: float = 1.0,
    intercept: float = 0.0,
    window: tuple[float, float] | None = None,
    voi_lut: list[int] | None = None,
    patient_id: str | None = "P1",
) -> Path:
    """A 16-bit single-frame DICOM file written with pydicom."""
    from pydicom.dataset import Dataset, FileMetaDataset
    from pydicom.uid import ExplicitVRLittleEndian, SecondaryCaptureImageStorage, generate_uid

    meta = FileMetaDataset()
    meta.MediaStorageSOPClassUID = SecondaryCaptureImageStorage
    meta.MediaStorageSOPInstanceUID = generate_uid()
    meta.TransferSyntaxUID = ExplicitVRLittleEndian
    ds = Dataset()
    ds.file_meta = meta
    ds.SOPClassUID = meta.MediaStorageSOPClassUID
    ds.SOPInstanceUID = meta.MediaStorageSOPInstanceUID
    ds.Modality = "CR"
    if patient_id is not None:
        ds.PatientID = patient_id
    ds.Rows, ds.Columns = pixels.shape
    ds.SamplesPerPixel = 1
    ds.PhotometricInterpretation = photometric
    ds.BitsAllocated = 16
    ds.BitsStored = 16
    ds.HighBit = 15
    ds.PixelRepresentation = 0
    ds.RescaleSlope = slope
    ds.RescaleIntercept = intercept
    if window is not None:
        ds.WindowCenter, ds.WindowWidth = window
    if voi_lut is not None:  # a VOI LUT mapping stored value v (from 0) to voi_lut[v]
        item = Dataset()
        item.add_new(0x00283002, "US", [len(voi_lut), 0, 16])  # LUTDescriptor
        item.add_new(0x00283006, "US", voi_lut)  # LUTData
        ds.VOILUTSequence = [item]
    ds.PixelData = np.ascontiguousarray(pixels, dtype="<u2").tobytes()
    path.parent.mkdir(parents=True, exist_ok=True)
    ds.save_as(path, enforce_file_format=True)
    return path


def write_truncated(path: Path, size: int = 32) -> Path:
    """A PNG or JPEG (by suffix) of noise cut in half: the header reads, the pixels do not."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pixels = np.random.default_rng(0).integers(0, 256, (size, size), dtype=np.uint8)
    Image.fromarray(pixels).save(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


def write_png_header(path: Path, width: int, height: int) -> Path:
    """A PNG whose IHDR claims ``width`` x ``height`` pixels over a few bytes of pixel data:
    a decompression bomb as PIL sees it, written without allocating the picture."""
    import struct
    import zlib

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    path.parent.mkdir(parents=True, exist_ok=True)
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)  # 8-bit grey
    data = chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b"")
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + data)
    return path
