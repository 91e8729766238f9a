"""The pixel rule of image files: a possible decompression bomb refused, every bad row of a
labelled set named."""

import numpy as np
import pytest
from fakes_datasets import write_corrupt, write_png, write_truncated
from PIL import Image

from medeval.datasets.base import DataError, LabelledData
from medeval.datasets.folder import load_image_folder
from medeval.datasets.pixels import check_image, read_image_array, verify_files


def test_a_picture_over_the_pixel_limit_is_refused_not_warned_about(tmp_path, monkeypatch):
    # Between MAX_IMAGE_PIXELS and twice that, PIL only warns (DecompressionBombWarning);
    # medeval refuses the file, naming it, in the check and when reading alike.
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 30)
    small = write_png(tmp_path / "a" / "small.png", size=4)  # 16 pixels
    warned = write_png(tmp_path / "a" / "warned.png", size=6)  # 36: PIL's warning band
    refused = write_png(tmp_path / "b" / "refused.png", size=8)  # 64: PIL's error band
    for path in (warned, refused):
        for level in ("header", "full"):
            with pytest.raises(DataError, match=rf"{path.name}: .*decompression bomb"):
                check_image(path, level=level)
        with pytest.raises(DataError, match=rf"{path.name}: .*decompression bomb"):
            read_image_array(path)
    data = load_image_folder(tmp_path, skip_unreadable=True)
    assert list(data.files) == [str(small)]
    assert [s.path for s in data.skipped] == [str(warned), str(refused)]


def test_verify_files_names_every_bad_row_of_a_labelled_set(tmp_path):
    files = [str(write_png(tmp_path / f"{i}.png", size=4)) for i in range(4)]
    files[1] = str(write_corrupt(tmp_path / "x.png"))
    files[3] = str(write_truncated(tmp_path / "y.png"))
    data = LabelledData(labels=list("abab"), source="s", name="n", files=files)
    with pytest.raises(DataError, match=r"^s/n: 2 of 4 .*row 1: .*x\.png: .*; row 3: .*y\.png"):
        verify_files(data, skip_unreadable=False, rows=np.arange(4))
