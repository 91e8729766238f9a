"""Decoding to (3, H, W) tensors, transforms, and the torch Dataset over a task."""

import numpy as np
import pytest
import torch
from fakes_datasets import write_corrupt, write_png
from PIL import Image

from medeval.datasets.base import DataError, LabelledData
from medeval.datasets.images import ImageDataset, default_transform, load_image
from medeval.datasets.pixels import read_image_array, verify_files
from medeval.tasks import make_binary_task


def test_grayscale_is_repeated_to_three_channels(tmp_path):
    img = load_image(write_png(tmp_path / "g.png", value=51))
    assert img.shape == (3, 8, 8) and img.dtype == torch.float32
    assert torch.allclose(img, torch.full((3, 8, 8), 51 / 255))


def test_rgb_jpeg_keeps_channels(tmp_path):
    path = tmp_path / "c.jpg"
    Image.new("RGB", (6, 4), (250, 0, 5)).save(path, quality=100)
    img = load_image(path)
    assert img.shape == (3, 4, 6)
    assert img[0].mean() > 0.9 and img[1].mean() < 0.1


def test_16_bit_png_keeps_16_bit_precision(tmp_path):
    pixels = np.array([[0, 1000], [1001, 65535]], dtype=np.uint16)
    path = tmp_path / "deep.png"
    Image.fromarray(pixels).save(path)
    arr = read_image_array(path)
    np.testing.assert_allclose(arr, pixels / 65535.0, atol=1e-7)
    assert arr[0, 1] != arr[1, 0]  # 8-bit decoding would merge these


def test_unreadable_image_error_names_the_file(tmp_path):
    bad = write_corrupt(tmp_path / "bad.png")
    with pytest.raises(DataError, match=r"bad\.png: cannot read image"):
        load_image(bad)


def test_transform_resizes_and_normalises(tmp_path):
    img = load_image(write_png(tmp_path / "g.png", value=255, size=10))
    out = default_transform(4)(img)
    assert out.shape == (3, 4, 4)
    np.testing.assert_allclose(
        out[:, 0, 0].numpy(),
        (1 - np.array([0.485, 0.456, 0.406])) / np.array([0.229, 0.224, 0.225]),
        rtol=1e-5,
    )


def _image_data(tmp_path, n_per_class, corrupt_row=None):
    files, labels = [], []
    for k, (label, n) in enumerate(n_per_class.items()):
        for i in range(n):
            files.append(str(write_png(tmp_path / label / f"{i}.png", value=10 * k)))
            labels.append(label)
    if corrupt_row is not None:
        write_corrupt(tmp_path / "x.png")
        files[corrupt_row] = str(tmp_path / "x.png")
    return LabelledData(labels=labels, source="folder", name="t", files=np.asarray(files, object))


def test_dataset_over_task_yields_image_target_and_subconcept(tmp_path):
    data = _image_data(tmp_path, {"a": 40, "b": 20, "c": 10})
    task = make_binary_task(data, seed=0, min_minority=0)
    ds = ImageDataset.from_task(task, np.arange(len(task)), transform=default_transform(4))
    assert len(ds) == len(task)
    for i in (0, len(ds) - 1):
        image, y, code = ds[i]
        assert image.shape == (3, 4, 4)
        assert y == task.y[i] and code == task.subconcept[i]


def test_dataset_names_file_and_row_of_an_unreadable_image(tmp_path):
    data = _image_data(tmp_path, {"a": 4, "b": 3, "c": 2}, corrupt_row=1)
    ds = ImageDataset(y=np.zeros(len(data)), subconcept=np.zeros(len(data)), files=data.files)
    with pytest.raises(DataError, match=r"row 1: .*x\.png: cannot read image"):
        ds[1]


def test_dataset_lists_missing_files(tmp_path):
    files = np.asarray([str(tmp_path / f"gone{i}.png") for i in range(8)], dtype=object)
    with pytest.raises(DataError, match=r"8 of 8 image files are absent.*gone0\.png \(row 0\)"):
        ImageDataset(y=np.zeros(8), subconcept=np.zeros(8), files=files)


def test_verify_skips_and_records_or_raises(tmp_path):
    data = _image_data(tmp_path, {"a": 4, "b": 3, "c": 2}, corrupt_row=5)
    with pytest.raises(DataError, match=r"row 5: .*x\.png"):
        verify_files(data, skip_unreadable=False)
    kept = verify_files(data, skip_unreadable=True)
    assert len(kept) == len(data) - 1
    assert [(s.row, s.path) for s in kept.skipped] == [(5, str(tmp_path / "x.png"))]
    assert str(tmp_path / "x.png") not in set(kept.files)
