"""One image, one row (#38): a table naming one image file twice, in any spelling or with two
labels, is refused naming both rows, by the one rule every image source shares
(:func:`medeval.datasets.files.check_one_row_per_image`); a name that differs from a file's only
by invisible characters or Unicode normalisation is named so; a hidden file named by its path is
read."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image
from test_malformed_inputs import run_tool

from medeval.datasets import load
from medeval.datasets.base import DataError


def _png(path: Path, value: int = 100) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.full((8, 8, 3), value, dtype=np.uint8)).save(path)
    return path


def _table(root: Path, cells: list[str], labels: list[str] | None = None) -> Path:
    """An image table ``root/table.csv`` over ``root/images/{a,b,c}.png`` (and any other file
    the test writes), one row per cell."""
    for i, name in enumerate("abc"):
        _png(root / "images" / f"{name}.png", 40 * i)
    labels = labels or ["x", "y", "x", "y", "x"][: len(cells)]
    path = root / "table.csv"
    pd.DataFrame({"image": cells, "label": labels}).to_csv(path, index=False)
    return path


def _load(table: Path, **options):
    return load("images", table, images=table.parent / "images", **options)


@pytest.mark.parametrize(
    ("cells", "first", "again"),
    [
        (["a", "b", "a.png"], "'a'", "'a.png'"),  # stem and suffix
        (["./a.png", "b", "a.png"], "'./a.png'", "'a.png'"),  # ./
        (["sub/../a.png", "b", "a"], "'sub/../a.png'", "'a'"),  # a path and a bare name
    ],
    ids=["stem-and-suffix", "dot-slash", "path-and-bare-name"],
)
def test_one_file_named_twice_is_refused_naming_both_rows(tmp_path, cells, first, again):
    (tmp_path / "images" / "sub").mkdir(parents=True)
    table = _table(tmp_path, cells)
    with pytest.raises(DataError) as err:
        _load(table, verify=False)
    message = str(err.value)
    assert message.startswith(f"{table}: row 2 (line 4): {again} is listed twice: row 0 (line 2)")
    assert first in message and "list each image once" in message


def test_a_path_below_the_table_and_a_bare_name_are_one_image(tmp_path):
    table = _table(tmp_path, ["images/a.png", "b", "a"])
    with pytest.raises(DataError, match=r"row 2 \(line 4\): 'a' is listed twice: row 0"):
        load("images", table, verify=False)  # the image folder is the table's folder


def test_one_image_with_two_labels_names_both(tmp_path):
    table = _table(tmp_path, ["a", "b", "a.png"], labels=["x", "y", "y"])
    with pytest.raises(DataError, match=r"same image file .*a\.png with another label \('x' th"):
        _load(table, verify=False)


def test_a_case_variant_the_file_system_folds_is_the_same_file(tmp_path):
    """Where the file system folds case, ``A.png`` opens ``a.png``; a link stands in for that
    here: the two names are one file on disk, and the rule compares files, not names."""
    table = _table(tmp_path, ["a.png", "b", "A.png"])
    os.symlink(tmp_path / "images" / "a.png", tmp_path / "images" / "A.png")
    with pytest.raises(DataError, match=r"'A\.png' is listed twice: row 0 \(line 2\) \('a\.png'"):
        _load(table, verify=False)


def test_every_image_source_shares_the_rule(tmp_path):
    from medeval.datasets.ham10000 import load_ham10000

    meta = pd.DataFrame(
        {"lesion_id": ["L1", "L2", "L3"], "image_id": ["I1", "I2", "I1"], "dx": ["nv", "mel", "nv"]}
    )
    meta.to_csv(tmp_path / "HAM10000_metadata.csv", index=False)
    with pytest.raises(DataError, match=r"row 2 \(line 4\): 'I1\.jpg' is listed twice: row 0"):
        load_ham10000(tmp_path, verify=False)  # metadata only: the names are compared


def test_an_invisible_character_in_a_cell_is_named(tmp_path):
    table = _table(tmp_path, ["a", "b\u200b", "c"])
    with pytest.raises(DataError) as err:
        _load(table, verify=False)
    message = str(err.value)
    assert "row 1 (line 3): " in message
    assert "no such image file ('b\\u200b' prints like 'b' but differs from it by invis" in message


def test_a_name_in_another_unicode_normalisation_is_named(tmp_path):
    nfd = unicodedata.normalize("NFD", "Ödem.png")
    table = _table(tmp_path, ["a", "b", "Ödem"])  # NFC in the table
    _png(tmp_path / "images" / nfd)  # NFD on disk (as a macOS archive may unpack it)
    with pytest.raises(DataError, match=r"no such image file .*Unicode normalisation \(NFC vs"):
        _load(table, verify=False)


def test_a_hidden_file_named_by_its_path_is_read(tmp_path):
    table = _table(tmp_path, ["a", ".hidden/b.png", ".c.png"])
    _png(tmp_path / "images" / ".hidden" / "b.png")
    _png(tmp_path / "images" / ".c.png")
    data = _load(table)
    assert [Path(f).name for f in data.files] == ["a.png", "b.png", ".c.png"]


def test_the_tools_refuse_with_one_line_and_exit_2(tmp_path, capsys):
    table = _table(tmp_path, ["a", "b", "c", "a.png"])
    argv = ["describe", "--source", "images", "--path", str(table)]
    argv += ["--images", str(tmp_path / "images"), "--positive", "y"]
    assert run_tool("tasks", argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "row 3 (line 5): 'a.png' is listed twice: row 0 (line 2) ('a')" in err
