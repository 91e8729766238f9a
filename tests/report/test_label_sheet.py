"""to_label.html (medeval.report.label_sheet): one card per row, the images embedded, and the
page as a browser shows it (headless Chromium)."""

from __future__ import annotations

import shutil
import subprocess

import label_data
import numpy as np
import pandas as pd
import pytest
from PIL import Image

from medeval.cli.label import main as label_main
from medeval.report.label_sheet import label_sheet, thumbnail

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def test_a_thumbnail_is_a_jpeg_data_uri_and_an_unreadable_file_is_none(tmp_path):
    Image.new("RGB", (400, 200), (10, 200, 30)).save(tmp_path / "a.png")
    (tmp_path / "b.png").write_bytes(b"not an image")
    assert thumbnail(tmp_path / "a.png").startswith("data:image/jpeg;base64,")
    assert thumbnail(tmp_path / "b.png") is None and thumbnail(tmp_path / "none.png") is None


def test_the_label_tool_writes_a_sheet_of_its_rows(tmp_path):
    files = label_data.write(tmp_path, n=300, seed=2, images=True)
    assert (
        label_main(
            [
                "--predictions",
                str(files["predictions"]),
                "--train-sizes",
                str(files["train_sizes"]),
                "--budget",
                "12",
                "--out",
                str(tmp_path / "o"),
                "--quiet",
            ]
        )
        == 0
    )
    sheet = pd.read_csv(tmp_path / "o" / "to_label.csv", dtype={"id": str})
    page = (tmp_path / "o" / "to_label.html").read_text()
    assert page.count("data:image/jpeg;base64,") == 12 == len(sheet)
    assert all(i in page for i in sheet["id"]) and "Label every row" in page
    assert "cannot read" not in page


@pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (apt-get install chromium)")
def test_the_sheet_renders_in_a_real_browser(tmp_path):
    rows = []
    for i, colour in enumerate([(200, 30, 30), (30, 200, 30), (30, 30, 200)]):
        Image.new("RGB", (64, 64), colour).save(tmp_path / f"x{i}.png")
        rows.append(
            {
                "id": f"x{i}",
                "inclusion_probability": 0.5,
                "batch": 1,
                "class": 1,
                "image": str(tmp_path / f"x{i}.png"),
                "candidates": "a (0.6); b (0.4)",
                "subconcept": "",
            }
        )
    (tmp_path / "s.html").write_text(label_sheet(pd.DataFrame(rows)))
    shot = tmp_path / "shot.png"
    subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=900,700",
            f"--screenshot={shot}",
            f"file://{tmp_path / 's.html'}",
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    pixels = np.asarray(Image.open(shot).convert("RGB")).reshape(-1, 3).astype(int)
    for colour in ([200, 30, 30], [30, 200, 30], [30, 30, 200]):  # each thumbnail is drawn
        assert (np.abs(pixels - colour).max(1) < 40).sum() > 500
