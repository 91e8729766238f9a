"""MedMNIST .npz files, generated at test time."""

import sys
import types

import numpy as np
import pytest

from medeval.datasets import load
from medeval.datasets.base import DataError
from medeval.datasets.medmnist import load_medmnist


def _npz(path, labels_by_part, shape=(4, 4)):
    arrays = {}
    for k, (part, labels) in enumerate(labels_by_part.items()):
        labels = np.asarray(labels)
        arrays[f"{part}_images"] = np.full((len(labels), *shape), k * 50, dtype=np.uint8)
        arrays[f"{part}_labels"] = labels
    np.savez(path, **arrays)
    return path


@pytest.fixture
def fake_medmnist(monkeypatch):
    """A stand-in ``medmnist`` module (the package is optional and must never download here)."""
    calls = []

    class PathMNIST:
        def __init__(self, **kwargs):
            calls.append(kwargs)

    module = types.ModuleType("medmnist")
    module.INFO = {
        "pathmnist": {
            "python_class": "PathMNIST",
            "label": {"0": "adipose", "1": "background", "8": "colorectal adenocarcinoma"},
        }
    }
    module.PathMNIST = PathMNIST
    monkeypatch.setitem(sys.modules, "medmnist", module)
    return calls


def test_medmnist_parts_merged_with_class_names(tmp_path, fake_medmnist):
    path = _npz(
        tmp_path / "pathmnist.npz",
        {"train": [[0], [1], [8]], "val": [[1]], "test": [[0], [0]]},
    )
    data = load_medmnist(path, respect_splits=True)
    assert data.images.shape == (6, 4, 4)
    assert list(data.labels[:3]) == ["adipose", "background", "colorectal adenocarcinoma"]
    np.testing.assert_array_equal(data.presplit, ["train"] * 3 + ["val"] + ["test"] * 2)
    assert data.images[3, 0, 0] == 50  # val images follow train images


def test_medmnist_without_the_package_uses_label_codes(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "medmnist", None)  # import fails as if not installed
    path = _npz(tmp_path / "pathmnist.npz", {"train": [[0], [8]], "val": [[1]], "test": [[0]]})
    np.testing.assert_array_equal(load_medmnist(path).labels, ["0", "8", "1", "0"])


def test_medmnist_multilabel_keeps_single_findings(tmp_path):
    labels = [[0, 1, 0], [0, 0, 0], [1, 1, 0], [0, 0, 1]]
    path = _npz(
        tmp_path / "unknownmnist.npz", {"train": labels, "val": [[1, 0, 0]], "test": labels}
    )
    data = load_medmnist(path, parts=("train", "val"))
    np.testing.assert_array_equal(data.labels, ["1", "normal", "2", "0"])


def test_medmnist_missing_array_named(tmp_path):
    np.savez(tmp_path / "x.npz", train_images=np.zeros((1, 2, 2)))
    with pytest.raises(DataError, match=r"x\.npz: missing array 'train_labels'"):
        load_medmnist(tmp_path / "x.npz")


def test_medmnist_through_the_dispatcher_by_name(tmp_path):
    _npz(tmp_path / "dermamnist.npz", {"train": [[0], [6]], "val": [[5]], "test": [[4]]})
    data = load("medmnist", tmp_path, name="dermamnist")
    assert len(data) == 4 and data.kind == "array_image"


def test_fetch_medmnist_uses_the_package_download(tmp_path, fake_medmnist):
    from medeval.datasets.medmnist import fetch_medmnist

    assert fetch_medmnist("pathmnist", root=tmp_path) == tmp_path / "pathmnist.npz"
    assert fetch_medmnist("pathmnist", root=tmp_path, size=64) == tmp_path / "pathmnist_64.npz"
    assert fake_medmnist == [
        {"split": "train", "root": str(tmp_path), "download": True},
        {"split": "train", "root": str(tmp_path), "download": True, "size": 64},
    ]
