"""The image-table source: a CSV / Parquet table of image files with label and group columns."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
from fakes_datasets import write_corrupt, write_png

from medeval.datasets import load
from medeval.datasets.base import DataError
from medeval.datasets.imagetable import load_image_table
from medeval.splits import group_codes_of


def _set(root, n=6):
    """n PNGs in root/img (two in a subfolder) and a table naming them in three ways."""
    names = []
    for i in range(n):
        sub = "part2/" if i >= n - 2 else ""
        write_png(root / "img" / f"{sub}p{i}.png", value=20 * i)
        names.append(f"{sub}p{i}.png" if i % 3 == 0 else (f"p{i}" if i % 3 == 1 else f"p{i}.png"))
    frame = pd.DataFrame(
        {
            "file": names,
            "dx": ["a", "b", "a", "c", "b", "a"][:n],
            "patient": ["P1", "", "P1", None, "P2", "P2"][:n],
        }
    )
    return frame


def test_names_with_or_without_suffix_and_relative_paths(tmp_path):
    frame = _set(tmp_path)
    frame.to_csv(tmp_path / "table.csv", index=False)
    data = load_image_table(
        tmp_path / "table.csv",
        images=tmp_path / "img",
        image_column="file",
        label_column="dx",
        group_column="patient",
    )
    assert [os.path.basename(f) for f in data.files] == [f"p{i}.png" for i in range(6)]
    assert list(data.labels) == ["a", "b", "a", "c", "b", "a"]
    # empty groups are each their own group, never one group named 'nan'
    assert list(data.groups) == ["P1", "", "P1", "", "P2", "P2"]
    assert list(group_codes_of(data.groups)) == [0, 2, 0, 3, 1, 1]
    assert data.source == "images" and data.name == "table"


def test_parquet_with_numeric_groups_and_folder_path(tmp_path):
    frame = _set(tmp_path)
    frame["patient"] = [7, np.nan, 7, np.nan, 8, 8]
    frame.to_parquet(tmp_path / "metadata.parquet", index=False)
    data = load(
        "images",
        tmp_path,  # the folder holding one table; images searched below it
        image_column="file",
        label_column="dx",
        group_column="patient",
    )
    assert list(data.groups) == ["7", "", "7", "", "8", "8"]
    assert data.name == tmp_path.name


def test_missing_ambiguous_and_unreadable_named_in_one_pass(tmp_path):
    frame = _set(tmp_path)
    write_corrupt(tmp_path / "img" / "p2.png")
    write_png(tmp_path / "img" / "p0.jpg")  # "p0" now fits two files
    frame.loc[1, "file"] = "p0"
    frame.loc[4, "file"] = "gone.png"
    frame.to_csv(tmp_path / "t.csv", index=False)
    kw = dict(images=tmp_path / "img", image_column="file", label_column="dx")
    with pytest.raises(DataError) as err:
        load_image_table(tmp_path / "t.csv", **kw)
    text = str(err.value)
    assert "2 of 6 images listed there cannot be found" in text
    assert "row 1 (line 3)" in text and "ambiguous: 2 image files fit it" in text
    assert "row 4 (line 6)" in text and "gone.png: no such image file" in text
    assert "p2.png: cannot read image" in text and "--skip-unreadable" in text
    data = load_image_table(tmp_path / "t.csv", skip_unreadable=True, **kw)
    assert len(data) == 3
    assert sorted(s.row for s in data.skipped) == [1, 2, 4]


def test_bad_columns_and_empty_cells_are_named(tmp_path):
    frame = _set(tmp_path)
    frame.to_csv(tmp_path / "t.csv", index=False)
    with pytest.raises(DataError, match=r"missing column 'image'"):
        load_image_table(tmp_path / "t.csv", images=tmp_path / "img", label_column="dx")
    frame.loc[2, "dx"] = ""
    frame.to_csv(tmp_path / "t.csv", index=False)
    with pytest.raises(DataError, match=r"row 2 \(line 4\): empty value in column 'dx'"):
        load_image_table(tmp_path / "t.csv", images=tmp_path / "img", image_column="file",
                         label_column="dx")  # fmt: skip


@pytest.mark.parametrize("tool", ["embed", "train"])
def test_an_output_inside_the_tables_folder_is_refused(tmp_path, capsys, tool):
    import importlib

    frame = _set(tmp_path)
    frame.to_csv(tmp_path / "t.csv", index=False)
    out = tmp_path / "img" / "run"  # images are looked for below the table's folder
    argv = ["--source", "images", "--path", str(tmp_path / "t.csv"), "--image-column", "file",
            "--label-column", "dx", "--out", str(out)]  # fmt: skip
    if tool == "embed":
        argv += ["--random-init", "--no-benchmark"]
    assert importlib.import_module(f"medeval.{tool}").main(argv) == 2
    assert "is inside the data folder" in capsys.readouterr().err
    assert not out.exists()
