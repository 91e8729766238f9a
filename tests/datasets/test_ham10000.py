"""HAM10000 metadata plus image folders (generated)."""

import numpy as np
import pandas as pd
import pytest
from fakes_datasets import write_corrupt, write_png

from medeval.datasets.base import DataError
from medeval.datasets.ham10000 import load_ham10000

META = pd.DataFrame(
    {
        "lesion_id": ["HAM_1", "HAM_1", "HAM_2", "HAM_3"],
        "image_id": ["ISIC_1", "ISIC_2", "ISIC_3", "ISIC_4"],
        "dx": ["bkl", "bkl", "mel", "nv"],
        "dx_type": ["histo"] * 4,
    }
)


@pytest.mark.parametrize("meta_name", ["HAM10000_metadata", "HAM10000_metadata.csv"])
def test_two_part_folders_and_lesion_groups(tmp_path, meta_name):
    META.to_csv(tmp_path / meta_name, index=False)
    for k, image_id in enumerate(META["image_id"]):
        part = "HAM10000_images_part_1" if k < 2 else "HAM10000_images_part_2"
        write_png(tmp_path / part / f"{image_id}.jpg", value=k * 30, mode="RGB")
    data = load_ham10000(tmp_path)
    np.testing.assert_array_equal(data.labels, ["bkl", "bkl", "mel", "nv"])
    np.testing.assert_array_equal(data.groups, ["HAM_1", "HAM_1", "HAM_2", "HAM_3"])
    assert data.files[2].endswith("HAM10000_images_part_2/ISIC_3.jpg")
    assert not data.meta["metadata_only"]


def test_one_image_folder_elsewhere(tmp_path):
    META.to_csv(tmp_path / "HAM10000_metadata.csv", index=False)
    for image_id in META["image_id"]:
        write_png(tmp_path / "all" / f"{image_id}.jpg", mode="RGB")
    data = load_ham10000(tmp_path / "HAM10000_metadata.csv", images=tmp_path / "all")
    assert all("/all/" in f for f in data.files)


def test_unknown_dx_and_missing_column(tmp_path):
    bad = META.copy()
    bad.loc[2, "dx"] = "melanoma"
    bad.to_csv(tmp_path / "HAM10000_metadata.csv", index=False)
    with pytest.raises(DataError, match=r"row 2 \(line 4\): label 'melanoma' in column 'dx'"):
        load_ham10000(tmp_path)
    META.drop(columns="lesion_id").to_csv(tmp_path / "HAM10000_metadata.csv", index=False)
    with pytest.raises(DataError, match=r"HAM10000_metadata\.csv: missing column 'lesion_id'"):
        load_ham10000(tmp_path)


def test_missing_lesion_id_is_its_own_group_and_corrupt_image_is_named(tmp_path):
    meta = META.copy()
    meta.loc[3, "lesion_id"] = None
    meta.to_csv(tmp_path / "HAM10000_metadata.csv", index=False)
    for image_id in meta["image_id"][:3]:
        write_png(tmp_path / "HAM10000_images_part_1" / f"{image_id}.jpg", mode="RGB")
    write_corrupt(tmp_path / "HAM10000_images_part_1" / "ISIC_4.jpg")
    assert load_ham10000(tmp_path, verify=False).groups[3] == ""  # a group of its own
    with pytest.raises(DataError, match=r"row 3: .*ISIC_4\.jpg: cannot read image"):
        load_ham10000(tmp_path)  # verified by default
    data = load_ham10000(tmp_path, skip_unreadable=True)
    assert len(data) == 3 and [s.row for s in data.skipped] == [3]
