"""Which files of an image folder are images (#31): one suffix rule shared by the folder source
and the image-table source, hidden folders are never classes, a broken symbolic link is an
unreadable file (named in the one-pass check, or left out and listed with skip_unreadable)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from medeval.datasets.base import DataError
from medeval.datasets.folder import load_image_folder
from medeval.datasets.pixels import IMAGE_SUFFIXES, is_image_name


def _image(path: Path, value: int = 100, fmt: str | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.full((8, 8, 3), value, dtype=np.uint8)).save(path, format=fmt)
    return path


def _classes(root: Path) -> None:
    for label, n in (("A", 3), ("B", 2)):
        for i in range(n):
            _image(root / label / f"{i}.png", 10 * i)


def test_hidden_folders_are_neither_classes_nor_images(tmp_path):
    _classes(tmp_path)
    _image(tmp_path / ".ipynb_checkpoints" / "0-checkpoint.png")
    _image(tmp_path / "A" / ".ipynb_checkpoints" / "0-checkpoint.png")
    _image(tmp_path / "A" / "._0.png")  # macOS resource fork beside a real file
    (tmp_path / "B" / ".DS_Store").write_bytes(b"\0\0\0\1Bud1")
    data = load_image_folder(tmp_path)  # no warning: hidden files are not "other files"
    assert sorted(data.labels) == ["A", "A", "A", "B", "B"]
    assert all("/." not in f for f in data.files)


def test_hidden_split_folder_is_ignored(tmp_path):
    _classes(tmp_path / "train")
    _classes(tmp_path / "test")
    _image(tmp_path / ".cache" / "A" / "x.png")
    data = load_image_folder(tmp_path, splits="respect")
    assert sorted(set(data.presplit)) == ["test", "train"] and len(data) == 10


def test_a_class_of_broken_links_is_named_not_vanished(tmp_path):
    _classes(tmp_path)
    (tmp_path / "C").mkdir()
    for i in range(2):  # the class's every file is a link whose target was deleted
        os.symlink(tmp_path / "gone" / f"{i}.png", tmp_path / "C" / f"{i}.png")
    broken = r"2 of 7 image files cannot be used: .*C/0\.png: broken symbolic link"
    with pytest.raises(DataError, match=broken + r".*--skip-unreadable"):
        load_image_folder(tmp_path)
    data = load_image_folder(tmp_path, skip_unreadable=True)
    assert "C" not in set(data.labels)
    assert sorted(Path(s.path).name for s in data.skipped) == ["0.png", "1.png"]
    assert all("broken symbolic link" in s.reason for s in data.skipped)


def test_one_broken_link_is_treated_like_a_zero_byte_image(tmp_path):
    _classes(tmp_path)
    os.symlink(tmp_path / "nowhere.png", tmp_path / "A" / "link.png")
    (tmp_path / "B" / "empty.png").write_bytes(b"")
    with pytest.raises(DataError, match=r"2 of 7 image files cannot be used") as err:
        load_image_folder(tmp_path)
    assert "A/link.png: broken symbolic link" in str(err.value)
    assert "B/empty.png: cannot read image" in str(err.value)
    skipped = load_image_folder(tmp_path, skip_unreadable=True).skipped
    assert sorted(Path(s.path).name for s in skipped) == ["empty.png", "link.png"]


def test_gif_and_webp_are_images_and_other_suffixes_are_named(tmp_path):
    _classes(tmp_path)
    _image(tmp_path / "B" / "anim.gif", fmt="GIF")
    _image(tmp_path / "B" / "photo.WEBP", fmt="WEBP")
    (tmp_path / "A" / "scan.jp2x").write_bytes(b"??")
    (tmp_path / "A" / "readme.txt").write_text("notes")
    with pytest.warns(UserWarning, match=r"2 file\(s\) are not read: not an image suffix") as rec:
        data = load_image_folder(tmp_path)
    assert "readme.txt" in str(rec[0].message) and "scan.jp2x" in str(rec[0].message)
    assert sorted(Path(f).name for f in data.files if "B" in Path(f).parent.name) == [
        "0.png",
        "1.png",
        "anim.gif",
        "photo.WEBP",
    ]


def test_one_suffix_rule():
    assert {".gif", ".webp", ".png", ".jpg", ".dcm"} <= set(IMAGE_SUFFIXES)
    assert is_image_name("X.JPG") and is_image_name("a/b.Webp") and not is_image_name("n.txt")
