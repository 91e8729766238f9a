"""Folder-per-class image sets, with and without train/val/test subfolders."""

import numpy as np
import pytest
from fakes_datasets import write_corrupt, write_png

from medeval.datasets.base import DataError
from medeval.datasets.folder import load_image_folder


def _tree(root, parts=("",)):
    for part in parts:
        for label, n in (("COVID19", 2), ("NORMAL", 3), ("PNEUMONIA", 1)):
            for i in range(n):
                suffix = ".jpg" if label == "NORMAL" else ".png"
                write_png(root / part / label / f"{part or 'x'}{i}{suffix}", mode="RGB")


def test_flat_class_folders(tmp_path):
    _tree(tmp_path)
    (tmp_path / "NORMAL" / "notes.txt").write_text("not an image")
    with pytest.warns(UserWarning, match=r"1 file\(s\) are not read: not an image .*notes\.txt"):
        data = load_image_folder(tmp_path)
    assert sorted(data.labels) == ["COVID19"] * 2 + ["NORMAL"] * 3 + ["PNEUMONIA"]
    assert data.presplit is None
    assert all(not f.endswith(".txt") for f in data.files)
    assert data.ids[0] == "COVID19/x0.png"


def test_split_folders_merged_or_respected(tmp_path):
    _tree(tmp_path, parts=("train", "val", "test"))
    merged = load_image_folder(tmp_path)
    assert len(merged) == 18 and merged.presplit is None
    respected = load_image_folder(tmp_path, splits="respect")
    assert len(respected) == 18
    assert dict(zip(*np.unique(respected.presplit, return_counts=True), strict=True)) == {
        "test": 6,
        "train": 6,
        "val": 6,
    }
    assert all(f"/{p}/" in f for p, f in zip(respected.presplit, respected.files, strict=True))


def test_respect_without_split_folders_is_an_error(tmp_path):
    _tree(tmp_path)
    with pytest.raises(DataError, match="no train/val/test subfolders"):
        load_image_folder(tmp_path, splits="respect")


def test_unreadable_file_named_or_skipped_and_listed(tmp_path):
    _tree(tmp_path)
    write_corrupt(tmp_path / "NORMAL" / "broken.png")
    assert len(load_image_folder(tmp_path, verify=False)) == 7  # not verified: fails when read
    with pytest.raises(DataError, match=r"row 2: .*NORMAL/broken\.png: cannot read image"):
        load_image_folder(tmp_path)  # verified by default
    data = load_image_folder(tmp_path, skip_unreadable=True)
    assert len(data) == 6
    assert [s.path for s in data.skipped] == [str(tmp_path / "NORMAL" / "broken.png")]


def test_empty_class_folders_are_recorded_and_a_file_path_is_named(tmp_path):
    from medeval.datasets.base import EMPTY_CLASS_FOLDERS, load_notes

    _tree(tmp_path / "flat")
    (tmp_path / "flat" / "EMPTY").mkdir()
    data = load_image_folder(tmp_path / "flat")
    assert data.meta[EMPTY_CLASS_FOLDERS] == [str(tmp_path / "flat" / "EMPTY")]
    assert "EMPTY" not in set(data.labels)
    assert load_notes(data, "x.json") == [
        f"class folder(s) without any image, so not classes here: {tmp_path / 'flat' / 'EMPTY'}"
    ]
    # split folders: a class empty in one part but not in another is a class, not empty
    _tree(tmp_path / "parts", parts=("train", "test"))
    (tmp_path / "parts" / "test" / "COVID19").rename(tmp_path / "gone")
    (tmp_path / "parts" / "test" / "COVID19").mkdir()
    assert EMPTY_CLASS_FOLDERS not in load_image_folder(tmp_path / "parts").meta
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(DataError, match="is a file; the folder source reads a folder"):
        load_image_folder(tmp_path / "file.txt")
