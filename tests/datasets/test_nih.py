"""NIH ChestX-ray14: the real metadata (metadata-only) and generated image trees."""

import time

import numpy as np
import pandas as pd
import pytest
from fakes_datasets import write_corrupt, write_png
from real_data import shared_path

from medeval.datasets.base import DataError
from medeval.datasets.images import ImageDataset
from medeval.datasets.nih import FINDINGS, load_nih
from medeval.tasks import make_binary_task


@pytest.fixture(scope="module")
def nih_real():
    folder = shared_path("nih")
    start = time.perf_counter()
    data = load_nih(folder)
    return data, time.perf_counter() - start


def test_real_metadata_single_label_rows_with_patient_groups(nih_real):
    data, seconds = nih_real
    raw = pd.read_csv(shared_path("nih", "Data_Entry_2017_v2020.csv.gz"), dtype=str)
    single = raw[~raw["Finding Labels"].str.contains("|", regex=False)]
    assert len(data) == len(single) == 91324
    assert set(data.labels) == set(FINDINGS) and len(FINDINGS) == 15
    np.testing.assert_array_equal(data.ids, single["Image Index"].to_numpy())
    np.testing.assert_array_equal(data.groups, single["Patient ID"].to_numpy())
    assert data.meta["metadata_only"] and data.meta["n_multi_label_dropped"] == 20796
    assert seconds < 10  # vectorised: 112k rows


def test_real_metadata_yields_a_task_with_patient_groups(nih_real):
    task = make_binary_task(nih_real[0], seed=0)
    assert task.kept and task.has_groups
    assert [s.name for s in task.majority] == [
        "No Finding",
        "Infiltration",
        "Atelectasis",
        "Effusion",
    ]
    assert [s.name for s in task.minority] == ["Nodule", "Pneumothorax", "Mass", "Consolidation"]
    assert [s.n for s in task.minority] == [1977, 988, 494, 247]
    assert len(set(task.groups)) > 20000


def test_asking_for_absent_images_lists_the_first_missing_files(nih_real):
    task = make_binary_task(nih_real[0], seed=0)
    with pytest.raises(DataError, match=r"absent \(metadata-only data\?\); first missing: .*00000"):
        ImageDataset.from_task(task)


def _metadata(folder, rows):
    frame = pd.DataFrame(rows, columns=["Image Index", "Finding Labels", "Patient ID"])
    frame["Follow-up #"] = 0
    folder.mkdir(parents=True, exist_ok=True)
    frame.to_csv(folder / "Data_Entry_2017_v2020.csv", index=False)


ROWS = [
    ("00000001_000.png", "Cardiomegaly", "1"),
    ("00000001_001.png", "Cardiomegaly|Emphysema", "1"),
    ("00000002_000.png", "No Finding", "2"),
    ("00000003_000.png", "Hernia", "3"),
]


@pytest.mark.parametrize("layout", ["distributed", "flat"])
def test_images_are_found_in_the_distributed_or_a_flat_layout(tmp_path, layout):
    _metadata(tmp_path, ROWS)
    for k, (name, _, _) in enumerate(ROWS):
        sub = f"images_00{1 + k % 2}/images" if layout == "distributed" else "images"
        write_png(tmp_path / sub / name, value=20 * k)
    data = load_nih(tmp_path)
    assert not data.meta["metadata_only"]
    np.testing.assert_array_equal(data.labels, ["Cardiomegaly", "No Finding", "Hernia"])
    assert [p.split("/")[-1] for p in data.files] == [
        "00000001_000.png",
        "00000002_000.png",
        "00000003_000.png",
    ]
    assert all(p.startswith(str(tmp_path)) for p in data.files)


def test_some_images_missing_is_an_error_or_recorded_with_skip(tmp_path):
    _metadata(tmp_path, ROWS)
    write_png(tmp_path / "images_001" / "images" / "00000001_000.png")
    # rows are those of the metadata file (row 1 is a multi-label image, left out)
    with pytest.raises(
        DataError, match=r"2 of 3 images .*missing.*00000002_000\.png at row 2 \(line 4\)"
    ):
        load_nih(tmp_path)
    data = load_nih(tmp_path, skip_unreadable=True)
    assert len(data) == 1
    assert [(s.row, s.path.split("/")[-1]) for s in data.skipped] == [
        (2, "00000002_000.png"),
        (3, "00000003_000.png"),
    ]


def test_corrupt_image_named_with_its_metadata_row_or_skipped(tmp_path):
    _metadata(tmp_path, ROWS)
    for k, (name, _, _) in enumerate(ROWS):
        write_png(tmp_path / "images" / name, value=k)
    write_corrupt(tmp_path / "images" / "00000003_000.png")
    assert len(load_nih(tmp_path, verify=False)) == 3  # not verified: fails when read
    with pytest.raises(DataError, match=r"row 3: .*00000003_000\.png: cannot read image"):
        load_nih(tmp_path)  # verified by default
    data = load_nih(tmp_path, skip_unreadable=True)
    np.testing.assert_array_equal(data.ids, ["00000001_000.png", "00000002_000.png"])
    assert [s.row for s in data.skipped] == [3]


def test_require_images_fails_in_metadata_only_mode(tmp_path):
    _metadata(tmp_path, ROWS)
    assert load_nih(tmp_path).meta["metadata_only"]
    with pytest.raises(DataError, match=r"first missing: 00000001_000\.png"):
        load_nih(tmp_path, require_images=True)


def test_unknown_finding_and_missing_column_name_file_and_row(tmp_path):
    _metadata(tmp_path, [*ROWS, ("00000004_000.png", "Broken Arm", "4")])
    with pytest.raises(
        DataError, match=r"Data_Entry_2017_v2020\.csv: row 4 \(line 6\): label 'Broken Arm'"
    ):
        load_nih(tmp_path)
    pd.DataFrame({"Image Index": ["a.png"], "Finding Labels": ["Hernia"]}).to_csv(
        tmp_path / "Data_Entry_2017_v2020.csv", index=False
    )
    with pytest.raises(DataError, match="missing column 'Patient ID'"):
        load_nih(tmp_path)
