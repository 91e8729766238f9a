"""DICOM sets written with pydicom at test time: rescale, window, MONOCHROME1, 16 bit, corrupt."""

import numpy as np
import pandas as pd
import pytest
from fakes_datasets import write_corrupt, write_dicom

from medeval.datasets.base import DataError
from medeval.datasets.dicom import load_dicom, read_dicom_image
from medeval.datasets.images import load_image

RAMP = np.array([[0, 1000], [1001, 65535]], dtype=np.uint16)


def test_16_bit_values_map_to_float_without_losing_precision(tmp_path):
    arr = read_dicom_image(write_dicom(tmp_path / "a.dcm", RAMP))
    assert arr.dtype == np.float32
    np.testing.assert_allclose(arr, RAMP / 65535.0, atol=1e-6)
    assert arr[0, 1] < arr[1, 0]


def test_monochrome1_is_inverted(tmp_path):
    m2 = read_dicom_image(write_dicom(tmp_path / "m2.dcm", RAMP))
    m1 = read_dicom_image(write_dicom(tmp_path / "m1.dcm", RAMP, photometric="MONOCHROME1"))
    np.testing.assert_allclose(m1, 1.0 - m2, atol=1e-6)


def test_rescale_is_applied_before_the_window(tmp_path):
    # Raw 924..1124 is -100..100 HU after intercept -1024; window 0 ± 100 spans exactly that.
    raw = np.array([[924, 1024], [1124, 3000]], dtype=np.uint16)
    path = write_dicom(tmp_path / "ct.dcm", raw, intercept=-1024.0, window=(0.0, 200.0))
    arr = read_dicom_image(path)
    np.testing.assert_allclose(arr, [[0.0, 0.5], [1.0, 1.0]], atol=0.01)


def test_voi_lut_sequence_is_applied(tmp_path):
    raw = np.array([[0, 1], [2, 3]], dtype=np.uint16)
    path = write_dicom(tmp_path / "lut.dcm", raw, voi_lut=[0, 100, 200, 65535])
    np.testing.assert_allclose(
        read_dicom_image(path), [[0, 100 / 65535], [200 / 65535, 1.0]], atol=1e-6
    )  # without the LUT the ramp would be 0, 1/3, 2/3, 1


def test_slope_is_applied(tmp_path):
    arr = read_dicom_image(write_dicom(tmp_path / "s.dcm", RAMP, slope=-1.0))
    np.testing.assert_allclose(arr, 1.0 - RAMP / 65535.0, atol=1e-6)  # negative slope flips


def test_dicom_becomes_a_three_channel_tensor(tmp_path):
    img = load_image(write_dicom(tmp_path / "noext", RAMP))  # found by the DICM magic
    assert tuple(img.shape) == (3, 2, 2)


def _set(tmp_path, with_patient_column: bool):
    rows = []
    for i, (label, pid, photometric) in enumerate(
        [
            ("Effusion", "A", "MONOCHROME2"),
            ("No Finding", "A", "MONOCHROME1"),
            ("Pneumothorax", "B", "MONOCHROME2"),
        ]
    ):
        write_dicom(tmp_path / "dcm" / f"{i}.dcm", RAMP, photometric=photometric, patient_id=pid)
        rows.append({"file": f"dcm/{i}.dcm", "label": label, "patient_id": f"csv-{pid}"})
    frame = pd.DataFrame(rows)
    if not with_patient_column:
        frame = frame.drop(columns="patient_id")
    frame.to_csv(tmp_path / "labels.csv", index=False)
    return frame


def test_patient_ids_from_the_csv_else_from_the_patientid_tag(tmp_path):
    _set(tmp_path, with_patient_column=True)
    np.testing.assert_array_equal(load_dicom(tmp_path).groups, ["csv-A", "csv-A", "csv-B"])
    _set(tmp_path, with_patient_column=False)
    data = load_dicom(tmp_path)
    np.testing.assert_array_equal(data.groups, ["A", "A", "B"])
    np.testing.assert_array_equal(data.labels, ["Effusion", "No Finding", "Pneumothorax"])
    assert data.files[0] == str(tmp_path / "dcm" / "0.dcm")


def test_corrupt_dicom_named_with_row_or_skipped_and_listed(tmp_path):
    frame = _set(tmp_path, with_patient_column=False)
    write_corrupt(tmp_path / "dcm" / "bad.dcm")
    frame.loc[3] = {"file": "dcm/bad.dcm", "label": "Effusion"}
    frame.to_csv(tmp_path / "labels.csv", index=False)
    with pytest.raises(
        DataError, match=r"labels\.csv: 1 of 4 .*row 3: .*bad\.dcm: cannot read DICOM"
    ):
        load_dicom(tmp_path)
    data = load_dicom(tmp_path, skip_unreadable=True)
    assert len(data) == 3
    assert [(s.row, s.path) for s in data.skipped] == [(3, str(tmp_path / "dcm" / "bad.dcm"))]


def test_missing_column_and_unknown_label(tmp_path):
    frame = _set(tmp_path, with_patient_column=True)
    with pytest.raises(DataError, match=r"row 2 \(line 4\): label 'Pneumothorax'"):
        load_dicom(tmp_path, classes=["Effusion", "No Finding"])
    frame.rename(columns={"label": "finding"}).to_csv(tmp_path / "labels.csv", index=False)
    with pytest.raises(DataError, match=r"labels\.csv: missing column 'label'"):
        load_dicom(tmp_path)
    assert len(load_dicom(tmp_path, label_column="finding")) == 3


def _pydicom_window(path):
    """pydicom's windowed image of ``path`` (modality LUT, then window), as stored values."""
    import pydicom
    from pydicom.pixels import apply_modality_lut, apply_voi_lut

    ds = pydicom.dcmread(path)
    return apply_voi_lut(apply_modality_lut(ds.pixel_array, ds), ds, index=0)


@pytest.mark.parametrize(
    ("window", "expected"),
    [((1000.0, 200.0), 1.0), ((60000.0, 200.0), 0.0)],
    ids=["every-pixel-above", "every-pixel-below"],
)
def test_a_window_that_saturates_every_pixel_gives_the_image_pydicom_gives(
    tmp_path, window, expected
):
    raw = np.array([[3000, 4000], [5000, 6000]], dtype=np.uint16)
    path = write_dicom(tmp_path / "sat.dcm", raw, window=window)
    pydicom_image = _pydicom_window(path) / 65535.0  # 16-bit unsigned output range: 0..65535
    np.testing.assert_allclose(pydicom_image, expected)
    np.testing.assert_allclose(read_dicom_image(path), pydicom_image, atol=1e-6)
    m1 = read_dicom_image(
        write_dicom(tmp_path / "m1.dcm", raw, window=window, photometric="MONOCHROME1")
    )
    np.testing.assert_allclose(m1, 1.0 - pydicom_image, atol=1e-6)  # low values are white


def test_a_window_is_not_restretched_to_the_image_min_and_max(tmp_path):
    # Every pixel inside a wide window: the grey levels are where pydicom puts them within the
    # window's output range (after a rescale), not stretched to black..white.
    raw = np.array([[1000, 1100], [1200, 1300]], dtype=np.uint16)
    path = write_dicom(tmp_path / "mid.dcm", raw, intercept=-1024.0, window=(100.0, 2000.0))
    y_min, y_max = -1024.0, 65535.0 - 1024.0  # pydicom's output range after the rescale
    expected = (_pydicom_window(path) - y_min) / (y_max - y_min)
    arr = read_dicom_image(path)
    np.testing.assert_allclose(arr, expected, atol=1e-6)
    assert 0.3 < arr.min() < arr.max() < 0.7
