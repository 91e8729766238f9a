"""Real DICOM files as scanners and PACS write them, from pydicom's bundled test data (offline).

Compressed transfer syntaxes need the decoders of the ``dicom`` extra (installed with ``dev``).
"""

import shutil

import numpy as np
import pandas as pd
import pydicom
import pytest
from pydicom.data import get_testdata_file
from pydicom.pixels import apply_color_lut, get_decoder

from medeval.datasets.base import DataError
from medeval.datasets.dicom import load_dicom, read_dicom_image
from medeval.datasets.images import ImageDataset, to_tensor
from medeval.datasets.pixels import FRAME_KEY
from medeval.embeddings.images import row_keys
from medeval.tasks.__main__ import main


def real(name: str) -> str:
    path = get_testdata_file(name, download=False)
    assert path is not None, f"{name} is not among pydicom's bundled test files"
    return path


def dicom_set(tmp_path, names: list[str]):
    """A folder of copies of the named files plus labels.csv (one row each, patient per file)."""
    rows = []
    for i, name in enumerate(names):
        (tmp_path / "dcm").mkdir(exist_ok=True)
        shutil.copy(real(name), tmp_path / "dcm" / name)
        rows.append({"file": f"dcm/{name}", "label": "AB"[i % 2], "patient_id": f"p{i}"})
    pd.DataFrame(rows).to_csv(tmp_path / "labels.csv", index=False)
    return tmp_path


@pytest.mark.parametrize(
    ("compressed", "uncompressed"),
    [
        ("MR_small_jpeg_ls_lossless.dcm", "MR_small.dcm"),  # JPEG-LS lossless, 16 bit
        ("MR_small_RLE.dcm", "MR_small.dcm"),
        ("MR_small_jp2klossless.dcm", "MR_small.dcm"),  # JPEG 2000 lossless
        ("SC_rgb_jpeg_gdcm.dcm", "SC_rgb_rle.dcm"),  # JPEG lossless (process 14), RGB
    ],
)
def test_lossless_compression_decodes_to_the_same_pixels(compressed, uncompressed):
    np.testing.assert_array_equal(
        read_dicom_image(real(compressed)), read_dicom_image(real(uncompressed))
    )


def test_12_bit_jpeg_extended_decodes_with_all_12_bits():
    path = real("JPGExtended.dcm")
    ds = pydicom.dcmread(path)
    assert ds.file_meta.TransferSyntaxUID.name.startswith("JPEG Extended") and ds.BitsStored == 12
    raw = ds.pixel_array.astype(np.float32)
    assert raw.max() > 255  # more than 8 bits survive decoding
    arr = read_dicom_image(path)
    np.testing.assert_allclose(arr, (raw - raw.min()) / (raw.max() - raw.min()), atol=1e-6)


@pytest.mark.parametrize(
    ("name", "shape"),
    [
        ("JPEGLSNearLossless_08.dcm", (45, 10)),
        ("JPEGLSNearLossless_16.dcm", (50, 10)),
        ("SC_rgb_jls_lossy_line.dcm", (100, 100, 3)),
        ("SC_rgb_jls_lossy_sample.dcm", (100, 100, 3)),
    ],
)
def test_jpeg_ls_near_lossless_decodes(name, shape):
    arr = read_dicom_image(real(name))
    assert arr.shape == shape and arr.dtype == np.float32
    assert 0 <= arr.min() < arr.max() <= 1
    if arr.ndim == 3:  # near-lossless: within a few grey levels of the lossless RGB image
        assert np.abs(arr - read_dicom_image(real("SC_rgb_rle.dcm"))).max() < 0.05


def test_palette_color_becomes_rgb_through_its_lookup_table():
    path = real("examples_palette.dcm")
    ds = pydicom.dcmread(path)
    assert ds.PhotometricInterpretation == "PALETTE COLOR"
    arr = read_dicom_image(path)
    assert arr.shape == (*ds.pixel_array.shape, 3)
    np.testing.assert_allclose(arr, apply_color_lut(ds.pixel_array, ds) / 65535.0, atol=1e-6)
    assert np.abs(arr[..., 0] - arr[..., 2]).max() > 0.1  # colours, not grey indices


def test_multi_frame_files_are_rejected_at_load_time_naming_the_file(tmp_path):
    dicom_set(tmp_path, ["MR_small.dcm", "examples_ybr_color.dcm"])
    # without verify, too: the frame count comes from the header, before any epoch
    with pytest.raises(
        DataError, match=r"row 1: .*examples_ybr_color\.dcm: multi-frame .*30 frames"
    ):
        load_dicom(tmp_path, verify=False)
    data = load_dicom(tmp_path, skip_unreadable=True)
    assert len(data) == 1 and [s.row for s in data.skipped] == [1]
    with pytest.raises(DataError, match=r"frame 30 asked for, but the file has 30 frames"):
        load_dicom(tmp_path, frame=30)


def test_a_picked_frame_is_what_training_reads(tmp_path):
    dicom_set(tmp_path, ["MR_small.dcm", "SC_rgb_rle_2frame.dcm"])
    data = load_dicom(tmp_path, frame=1)
    assert len(data) == 2 and data.meta[FRAME_KEY] == 1
    ds = pydicom.dcmread(real("SC_rgb_rle_2frame.dcm"))
    second = ds.pixel_array[1] / 255.0
    np.testing.assert_allclose(read_dicom_image(data.files[1], frame=1), second, atol=1e-6)
    items = ImageDataset(y=[0, 1], subconcept=[0, 1], files=data.files, frame=data.meta[FRAME_KEY])
    np.testing.assert_allclose(items[1][0], to_tensor(second), atol=1e-6)
    # single-frame files ignore the frame
    np.testing.assert_array_equal(items[0][0], to_tensor(read_dicom_image(real("MR_small.dcm"))))


def test_decode_failures_are_data_errors_naming_file_and_row_or_skipped(tmp_path):
    names = ["MR_small.dcm", "JPEG-lossy.dcm", "MR_truncated.dcm", "CT_small.dcm"]
    dicom_set(tmp_path, names)
    with pytest.raises(
        DataError, match=r"labels\.csv: 2 of 4 .*row 1: .*JPEG-lossy\.dcm: cannot decode"
    ) as err:
        load_dicom(tmp_path)
    assert "row 2: " in str(err.value) and "MR_truncated.dcm: cannot decode" in str(err.value)
    data = load_dicom(tmp_path, skip_unreadable=True)
    assert list(data.ids) == ["dcm/MR_small.dcm", "dcm/CT_small.dcm"]
    assert [(s.row, s.path.endswith(names[s.row])) for s in data.skipped] == [(1, True), (2, True)]
    assert "JPEG Extended" in data.skipped[0].reason  # the transfer syntax is named


def test_a_missing_decoder_says_how_to_install_one(tmp_path, monkeypatch):
    path = real("MR_small_jpeg_ls_lossless.dcm")
    decoder = get_decoder(pydicom.dcmread(path).file_meta.TransferSyntaxUID)
    monkeypatch.setattr(decoder, "_available", {})  # as on a machine without the extra
    with pytest.raises(DataError, match=r"jpeg_ls_lossless\.dcm: cannot decode .*medeval\[dicom\]"):
        read_dicom_image(path)
    dicom_set(tmp_path, ["MR_small.dcm", "MR_small_jpeg_ls_lossless.dcm"])
    assert [s.row for s in load_dicom(tmp_path, skip_unreadable=True).skipped] == [1]


def test_tasks_cli_takes_the_frame_and_names_a_multi_frame_file(tmp_path, capsys):
    dicom_set(tmp_path, ["MR_small.dcm", "SC_rgb_rle_2frame.dcm", "CT_small.dcm", "rtdose.dcm"])
    argv = ["describe", "--source", "dicom", "--path", str(tmp_path), "--json"]
    assert main(argv) == 2
    assert "SC_rgb_rle_2frame.dcm: multi-frame DICOM (2 frames)" in capsys.readouterr().err
    assert main([*argv, "--frame", "-1"]) == 0


def test_the_feature_cache_tells_frames_apart(tmp_path):
    dicom_set(tmp_path, ["SC_rgb_rle_2frame.dcm"])
    first, second = (row_keys(load_dicom(tmp_path, frame=f)) for f in (0, 1))
    assert first != second and row_keys(load_dicom(tmp_path, frame=0)) == first
