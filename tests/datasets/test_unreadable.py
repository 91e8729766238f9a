"""Unreadable image files: all named in one error (up to a cap), or all skipped and recorded;
verified by default; a decode failure in a DataLoader worker is one line naming the file."""

import numpy as np
import pandas as pd
import pytest
from fakes_datasets import write_corrupt, write_png, write_png_header, write_truncated
from torch.utils.data import DataLoader

from medeval.datasets.base import N_NAMED, DataError
from medeval.datasets.folder import load_image_folder
from medeval.datasets.images import ImageDataset
from medeval.datasets.nih import load_nih

BAD = {  # file under the tree → what its reason must say
    "a/truncated.png": "cannot read image: Truncated File Read",
    "a/truncated.jpg": "cannot read image: image file is truncated",
    "b/text.png": "cannot read image: not an image file",
    "b/bomb.png": "cannot read image: refused as a possible decompression bomb",
}


def _tree(root):
    for label in ("a", "b"):
        for i in range(3):
            write_png(root / label / f"ok{i}.png", value=40 * i, size=4)
    write_truncated(root / "a" / "truncated.png")
    write_truncated(root / "a" / "truncated.jpg")
    write_corrupt(root / "b" / "text.png")
    write_png_header(root / "b" / "bomb.png", 100_000, 100_000)  # 1e10 pixels, a few bytes


def test_every_bad_file_of_a_folder_is_named_in_one_error_with_its_reason(tmp_path):
    _tree(tmp_path)
    with pytest.raises(DataError) as err:
        load_image_folder(tmp_path)  # verified by default
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(f"{tmp_path}: 4 of 10 image files cannot be used: ")
    for name, reason in BAD.items():
        assert f"{tmp_path / name}: {reason}" in message
    assert "--skip-unreadable" in message
    assert "ok0.png" not in message


def test_skip_unreadable_leaves_out_and_records_every_bad_file(tmp_path):
    _tree(tmp_path)
    data = load_image_folder(tmp_path, skip_unreadable=True)
    assert len(data) == 6 and all("/ok" in f for f in data.files)
    assert sorted(s.path for s in data.skipped) == sorted(str(tmp_path / n) for n in BAD)
    assert all(s.reason for s in data.skipped)


def test_no_verify_defers_the_failure_to_the_first_read(tmp_path):
    _tree(tmp_path)
    data = load_image_folder(tmp_path, verify=False)
    assert len(data) == 10 and data.skipped == []


def test_the_error_names_twenty_files_then_counts_the_rest(tmp_path):
    write_png(tmp_path / "a" / "ok.png")
    n_bad = N_NAMED + 5
    for i in range(n_bad):
        write_corrupt(tmp_path / "b" / f"bad{i:02d}.png")
    with pytest.raises(DataError) as err:
        load_image_folder(tmp_path)
    message = str(err.value)
    assert f"{n_bad} of {n_bad + 1} image files" in message
    assert message.count(": cannot read image: ") == N_NAMED
    assert "bad19.png" in message and "bad20.png" not in message
    assert "; and 5 more" in message


def test_full_verification_decodes_and_an_unknown_level_is_refused(tmp_path):
    _tree(tmp_path)
    data = load_image_folder(tmp_path, verify="full", skip_unreadable=True)
    assert sorted(s.path for s in data.skipped) == sorted(str(tmp_path / n) for n in BAD)
    with pytest.raises(ValueError, match="'deep'"):
        load_image_folder(tmp_path, verify="deep")


def test_nih_names_missing_and_unreadable_files_in_one_error(tmp_path):
    rows = [(f"0000000{i}_000.png", "No Finding", str(i)) for i in range(1, 6)]
    frame = pd.DataFrame(rows, columns=["Image Index", "Finding Labels", "Patient ID"])
    frame.to_csv(tmp_path / "Data_Entry_2017_v2020.csv", index=False)
    write_png(tmp_path / "images" / "00000001_000.png")
    write_png(tmp_path / "images" / "00000002_000.png")
    write_corrupt(tmp_path / "images" / "00000003_000.png")
    write_truncated(tmp_path / "images" / "00000004_000.png")  # 00000005 is missing
    with pytest.raises(DataError) as err:
        load_nih(tmp_path)
    message = str(err.value)
    assert "1 of 5 images listed there are missing" in message
    assert "00000005_000.png at row 4 (line 6)" in message
    assert "2 of 5 image files cannot be used" in message
    assert "row 2: " in message and "00000003_000.png: cannot read image" in message
    assert "row 3: " in message and "00000004_000.png: cannot read image" in message
    data = load_nih(tmp_path, skip_unreadable=True)
    assert list(data.ids) == ["00000001_000.png", "00000002_000.png"]
    assert sorted(s.row for s in data.skipped) == [2, 3, 4]


def _dataset(tmp_path):
    good = write_png(tmp_path / "good.png", size=4)
    bad = write_truncated(tmp_path / "bad.jpg")
    files = np.asarray([str(good), str(bad)], dtype=object)
    return ImageDataset(y=np.zeros(2), subconcept=np.zeros(2), files=files), bad


@pytest.mark.parametrize("workers", [0, 1])
def test_a_decode_failure_in_a_loader_worker_is_one_line_naming_the_file(tmp_path, workers):
    dataset, bad = _dataset(tmp_path)
    loader = DataLoader(dataset, batch_size=1, num_workers=workers)
    with pytest.raises(DataError) as err:
        list(loader)
    message = str(err.value)
    assert "\n" not in message and "Traceback" not in message
    assert message.startswith(f"row 1: {bad}: cannot read image: image file is truncated")
    if workers:  # the worker's traceback is kept for -v, outside the message
        assert message.endswith("(in a data-loader worker)")
        assert any("Traceback" in note for note in err.value.__notes__)


def test_a_data_error_raised_directly_keeps_its_message():
    assert str(DataError("a.png: cannot read image")) == "a.png: cannot read image"
    assert DataError("x", 1).args == ("x", 1)


def _classes_with_broken_pixels(root):
    """Four class folders of small PNGs, one of which decodes to nothing."""
    from fakes_datasets import write_broken_pixels

    rng = np.random.default_rng(0)
    for cls, n in (("normal", 60), ("benign", 50), ("effusion", 30), ("nodule", 25)):
        for i in range(n):
            write_png(root / cls / f"{i}.png", value=int(rng.integers(0, 256)), size=20)
    return write_broken_pixels(root / "nodule" / "7.png", side=20)


def test_skip_undecodable_leaves_out_what_passes_the_header_check_but_cannot_be_decoded(
    tmp_path,
):
    from medeval.datasets.cache import ImageCache, skip_undecodable

    broken = _classes_with_broken_pixels(tmp_path / "data")
    data = load_image_folder(tmp_path / "data", skip_unreadable=True)  # the header check
    assert str(broken) in set(data.files) and not data.skipped
    kept = skip_undecodable(data, size=16, cache_dir=tmp_path / "store", progress=False)
    assert len(kept) == len(data) - 1 and str(broken) not in set(kept.files)
    (skipped,) = kept.skipped
    assert skipped.path == str(broken) and "cannot read image" in skipped.reason
    assert str(broken) not in skipped.reason  # the reason alone; the record names the file
    # every other file is in the store now: the reader of the rest decodes nothing
    reader = ImageCache(tmp_path / "store", size=16).ensure(kept.files, progress=False)
    assert len(reader) == len(kept)


@pytest.mark.filterwarnings("ignore::medeval.evaluation.rectified.FewReferenceRowsWarning")
def test_train_and_embed_leave_an_undecodable_file_out_with_skip_unreadable(
    tmp_path, capsys, monkeypatch
):
    import json

    monkeypatch.chdir(tmp_path)  # embed's image store (.medeval-cache) lands here

    from medeval.embed import main as embed
    from medeval.train import main as train

    broken = _classes_with_broken_pixels(tmp_path / "data")
    tiny = ["model.backbone=vgg11", "model.pretrained=false", "train.image_size=32",
            "train.epochs=1", "train.max_steps_per_epoch=1", "train.workers=0",
            "evaluation.n_bootstrap=10", f"data.cache_dir={tmp_path / 'store'}"]  # fmt: skip
    argv = ["--source", "folder", "--path", str(tmp_path / "data"), *tiny]
    assert train([*argv, "--out", str(tmp_path / "stops")]) == 2  # without: named, one error
    err = capsys.readouterr().err
    assert str(broken) in err and "cannot read image" in err, err
    assert train([*argv, "--skip-unreadable", "--out", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    assert "left out (task.json lists them): 1 image file cannot be used: row" in out, out
    task = json.loads((tmp_path / "run" / "task.json").read_text())
    assert [s["path"] for s in task["skipped"]] == [str(broken)]
    emb = ["--source", "folder", "--path", str(tmp_path / "data"), "--skip-unreadable"]
    emb += ["--model", "vgg11", "--random-init", "--size", "32", "--no-cache", "--no-benchmark"]
    assert embed([*emb, "--out", str(tmp_path / "emb")]) == 0
    record = json.loads((tmp_path / "emb" / "data.embedding.json").read_text())
    assert [s["path"] for s in record["skipped"]] == [str(broken)]
    assert record["rows"] == 164
