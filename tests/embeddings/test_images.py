"""embed_images over image files: the decoded-image store gives the same features bit for bit."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from medeval.datasets.base import LabelledData
from medeval.embeddings import embed_images

KW = {"model": "vgg11", "pretrained": False, "features": "conv", "size": 32, "progress": False}


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)


@pytest.fixture
def files_data(tmp_path):
    rng = np.random.default_rng(1)
    files = []
    for i, shape in enumerate([(50, 50), (50, 50, 3), (30, 70)]):
        p = tmp_path / f"im{i}.png"
        Image.fromarray(rng.integers(0, 256, shape, dtype=np.uint8)).save(p)
        files.append(str(p))
    return LabelledData(labels=np.array(["a", "b", "c"]), source="t", name="t", files=files)


def test_features_from_the_store_equal_those_decoded_now(files_data, tmp_path):
    store = tmp_path / "images"
    decoded, info_a = embed_images(files_data, **KW)
    cached, info_b = embed_images(files_data, **KW, image_cache=store)
    # Both read the uint8 pixels of prepare_image (the training path), so the features match
    # exactly; the 1/510 quantisation step is in both.
    np.testing.assert_array_equal(cached, decoded)
    assert info_a["computed"] == info_b["computed"] == 3
    (index,) = store.glob("images-32px-*/index.json")
    assert len(json.loads(index.read_text())["files"]) == 3


def test_feature_cache_names_the_pixel_rule_of_files(files_data, tmp_path, monkeypatch):
    import medeval.embeddings.images as images

    kw = {**KW, "cache": tmp_path / "features", "image_cache": tmp_path / "images"}
    _, first = embed_images(files_data, **kw)
    spec = json.loads((Path(first["cache"]) / "key.json").read_text())
    assert spec["pixels"] == f"u8-v{images.DECODE_VERSION}"
    _, again = embed_images(files_data, **kw)
    assert (again["computed"], again["cached"]) == (0, 3)
    monkeypatch.setattr(images, "DECODE_VERSION", images.DECODE_VERSION + 1)
    _, bumped = embed_images(files_data, **kw)  # new pixels: features computed again
    assert bumped["computed"] == 3 and bumped["cache"] != first["cache"]


def test_a_bad_file_is_named_with_its_row(files_data, tmp_path):
    Path(files_data.files[2]).write_bytes(b"not a png")
    with pytest.raises(Exception, match=r"im2\.png"):
        embed_images(files_data, **KW, image_cache=tmp_path / "images")
    with pytest.raises(Exception, match=r"row 2: .*im2\.png"):
        embed_images(files_data, **KW)
