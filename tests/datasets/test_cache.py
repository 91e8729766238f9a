"""The decoded-image cache gives the package's own decode + resize pixels, once per file."""

import os
import threading
from pathlib import Path

import numpy as np
import pytest
import torch
from fakes_datasets import write_corrupt, write_dicom
from PIL import Image
from torch.utils.data import DataLoader
from torchvision import transforms

import medeval.datasets.cache as cache_module
from medeval.datasets.base import DataError, LabelledData
from medeval.datasets.cache import (
    CacheFolderError,
    ImageCache,
    ResizedImageDataset,
    data_images,
    quantize,
)
from medeval.datasets.images import IMAGENET_MEAN, IMAGENET_STD, default_transform, load_image

SIZE = 12


def _noise(shape, seed):
    return np.random.default_rng(seed).integers(0, 256, size=shape, dtype=np.uint8)


def _files(tmp_path):
    """Grey PNG, RGB PNG, grey and RGB JPEG, a windowed 12-bit DICOM; odd, non-square sizes."""
    folder = tmp_path / "images"
    folder.mkdir()
    paths = []
    for name, array in [
        ("grey.png", _noise((37, 29), 1)),
        ("rgb.png", _noise((23, 31, 3), 2)),
        ("grey.jpg", _noise((40, 40), 3)),
        ("rgb.jpg", _noise((33, 27, 3), 4)),
    ]:
        Image.fromarray(array).save(folder / name)
        paths.append(folder / name)
    pixels = np.random.default_rng(5).integers(0, 4096, size=(30, 26)).astype(np.uint16)
    paths.append(write_dicom(folder / "ct.dcm", pixels, window=(2048.0, 3000.0)))
    return [str(p) for p in paths]


def _reference(file, size=SIZE):
    """The package's uncached path: decode, 3-channel tensor, resize; then one quantisation."""
    image = default_transform(size, normalize=False)(load_image(file))
    return torch.from_numpy(quantize(image)).permute(2, 0, 1)


def _dataset(files, reader=None, **kw):
    n = len(files)
    return ResizedImageDataset(
        files, np.zeros(n), np.arange(n), size=SIZE, cache=reader, as_uint8=True, **kw
    )


def test_cached_pixels_are_the_uncached_decode_and_resize_bit_for_bit(tmp_path):
    files = _files(tmp_path)
    reader = ImageCache(tmp_path / "cache", size=SIZE).ensure(files, progress=False)
    cached, uncached = _dataset(files, reader), _dataset(files)
    for i, file in enumerate(files):
        ref = _reference(file)
        assert torch.equal(cached[i][0], ref), file
        assert torch.equal(uncached[i][0], ref), file
    # grey files are stored as one plane, RGB as three
    assert reader.channels.tolist() == [1, 3, 1, 3, 1]
    # normalised float items: the reference's grey levels / 255 through transforms.Normalize
    normalised = ResizedImageDataset(files, np.zeros(5), np.zeros(5), size=SIZE, cache=reader)
    norm = transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD)
    for i, file in enumerate(files):
        expected = norm(_reference(file).to(torch.float32) / 255.0)
        assert normalised[i][0].dtype == torch.float32
        assert torch.equal(normalised[i][0], expected), file
    # the float items stay within half a grey level of the never-quantised float path
    floats = ResizedImageDataset(
        files, np.zeros(5), np.zeros(5), size=SIZE, cache=reader, normalize=False
    )
    for i, file in enumerate(files):
        exact = default_transform(SIZE, normalize=False)(load_image(file))
        assert float((floats[i][0] - exact).abs().max()) <= 0.5 / 255 + 1e-6


def test_the_recipe_names_the_store(tmp_path):
    folders = {
        ImageCache(tmp_path, size=s, frame=f).folder for s, f in [(8, None), (9, None), (8, 0)]
    }
    assert len(folders) == 3
    assert ImageCache(tmp_path, size=8).folder == ImageCache(tmp_path, size=8).folder


def _count_decodes(monkeypatch):
    calls = []
    real = cache_module.prepare_image

    def counting(path, **kw):
        calls.append(str(path))
        return real(path, **kw)

    monkeypatch.setattr(cache_module, "prepare_image", counting)
    return calls


def test_a_changed_file_alone_is_decoded_again(tmp_path, monkeypatch):
    files = _files(tmp_path)
    store = ImageCache(tmp_path / "cache", size=SIZE)
    calls = _count_decodes(monkeypatch)
    store.ensure(files, progress=False)
    assert len(calls) == len(files)
    before = store.read_index()
    index_mtime = os.stat(store.folder / "index.json").st_mtime_ns

    calls.clear()
    reader = store.ensure(files, progress=False)  # nothing changed: nothing decoded or written
    assert calls == []
    assert os.stat(store.folder / "index.json").st_mtime_ns == index_mtime

    changed = files[0]
    stamp = os.stat(changed).st_mtime_ns
    Image.fromarray(_noise((37, 29), 99)).save(changed)
    os.utime(changed, ns=(stamp + 10**9, stamp + 10**9))
    assert not torch.equal(_reference(changed), _dataset(files, reader)[0][0])  # old pixels
    reader = store.ensure(files, progress=False)
    assert calls == [str(changed)]
    after = store.read_index()
    for f in files[1:]:
        key = str(os.path.realpath(f))
        assert after[key] == before[key]
    assert torch.equal(_dataset(files, reader)[0][0], _reference(changed))


def test_concurrent_builders_make_one_valid_store(tmp_path, monkeypatch):
    calls = _count_decodes(monkeypatch)
    folder = tmp_path / "images"
    files = []
    for k in range(16):
        files.append(str(folder / f"{k}.png"))
        folder.mkdir(exist_ok=True)
        Image.fromarray(_noise((20, 20), k)).save(files[-1])
    start = threading.Barrier(2)
    readers = {}

    def build(name):
        start.wait()
        readers[name] = ImageCache(tmp_path / "cache", size=SIZE).ensure(files, progress=False)

    threads = [threading.Thread(target=build, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(calls) == sorted(files)  # each file decoded once, by one of the two
    store = ImageCache(tmp_path / "cache", size=SIZE)
    assert len(list(store.folder.glob("shard-*.u8"))) == 1  # one builder decoded everything
    assert not list(store.folder.glob(".*.tmp"))
    assert len(store.read_index()) == len(files)
    for reader in readers.values():
        for i, f in enumerate(files):
            assert torch.equal(_dataset(files, reader)[i][0], _reference(f))


def test_an_unreadable_file_is_named_and_the_images_before_it_are_kept(tmp_path):
    files = _files(tmp_path)[:2]
    truncated = tmp_path / "images" / "truncated.png"
    truncated.write_bytes(Path(files[0]).read_bytes()[:80])
    corrupt = write_corrupt(tmp_path / "images" / "corrupt.png")
    store = ImageCache(tmp_path / "cache", size=SIZE)
    with pytest.raises(DataError, match="truncated.png"):
        store.ensure([files[0], str(truncated), files[1]], progress=False)
    assert list(store.read_index()) == [str(os.path.realpath(files[0]))]
    with pytest.raises(DataError, match="corrupt.png"):
        store.ensure([str(corrupt)], workers=0, progress=False)
    with pytest.raises(DataError, match=r"row 1: .*corrupt.png"):
        _dataset([files[0], str(corrupt)])[1]
    with pytest.raises(DataError, match="absent.png"):
        store.ensure([str(tmp_path / "absent.png")], progress=False)


def test_dataloader_workers_read_the_right_pixels_of_a_split(tmp_path):
    files = np.asarray(_files(tmp_path) * 3, dtype=object)
    data = LabelledData(labels=np.zeros(len(files)), source="folder", name="x", files=files)
    reader = data_images(data, size=SIZE, cache_dir=tmp_path / "cache", workers=2, progress=False)
    part = np.asarray([14, 0, 7, 3, 3, 9, 12])  # a split's rows, in its order
    loader = DataLoader(_dataset(files[part], reader.take(part)), batch_size=4, num_workers=2)
    images = torch.cat([batch[0] for batch in loader])
    assert torch.equal(images, torch.stack([_reference(f) for f in files[part]]))
    in_memory = LabelledData(
        labels=np.zeros(2), source="medmnist", name="x", images=np.zeros((2, 4, 4), np.uint8)
    )
    assert data_images(in_memory, size=SIZE, cache_dir=tmp_path / "cache") is None


def test_a_complete_read_only_store_is_used_and_an_unwritable_one_is_named(tmp_path):
    files = _files(tmp_path)
    root = tmp_path / "cache"
    store = ImageCache(root, size=SIZE)
    store.ensure(files, progress=False)
    listing = sorted(p.name for p in store.folder.iterdir())
    index_mtime = os.stat(store.folder / "index.json").st_mtime_ns
    modes = {p: p.stat().st_mode for p in [store.folder, *store.folder.iterdir()]}
    try:
        for p in modes:
            p.chmod(0o555 if p.is_dir() else 0o444)
        reader = ImageCache(root, size=SIZE).ensure(files, progress=False)
        assert torch.equal(_dataset(files, reader)[1][0], _reference(files[1]))
        assert sorted(p.name for p in store.folder.iterdir()) == listing  # nothing written
        assert os.stat(store.folder / "index.json").st_mtime_ns == index_mtime
    finally:
        for p, mode in modes.items():
            p.chmod(mode)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    with pytest.raises(CacheFolderError, match="not-a-folder") as info:
        ImageCache(blocker, size=SIZE).ensure(files, progress=False)
    assert "data.cache" in str(info.value)


def test_a_build_reports_progress_and_a_complete_store_reports_none(tmp_path, capsys):
    files = _files(tmp_path)
    store = ImageCache(tmp_path / "cache", size=SIZE)
    store.ensure(files, desc="decode x once")
    err = capsys.readouterr().err
    assert "decode x once: 100%" in err and f"{len(files)}/{len(files)}" in err
    store.ensure(files, desc="decode x once")
    assert capsys.readouterr().err == ""
