"""to_label.html (medeval.report.label_sheet): one card per row, the images embedded, and the
page as a browser shows it (headless Chromium)."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import label_data
import numpy as np
import pandas as pd
import pytest
from PIL import Image

from medeval.cli.label import main as label_main
from medeval.io.labels import GIVE_LABELS, SHEET_COLUMNS
from medeval.report.label_sheet import label_sheet, sheet_file, thumbnail

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
    assert GIVE_LABELS in html.unescape(page)  # the one instruction of every message
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


def _run_folder(tmp_path, *, images=True, task=True):
    """A training run's layout: task.json and split_0 with its predictions and train sizes."""
    split = tmp_path / "run" / "split_0"
    split.mkdir(parents=True)
    files = label_data.write(split, n=300, seed=2, images=images)
    if task:
        record = {"source": "images", "name": "x", "description": {"task": {"positive": ["s"]}}}
        (tmp_path / "run" / "task.json").write_text(json.dumps(record))
    return tmp_path / "run", files


def _cards(page: str) -> list[str]:
    return re.findall(r'<div class="card">.*?</div></div>', page)


def test_a_run_gets_a_blind_sheet_of_linked_thumbnails_with_class_names(tmp_path, capsys):
    run, _ = _run_folder(tmp_path)
    assert label_main(["--run", str(run), "--budget", "8", "--out", str(tmp_path / "o")]) == 0
    sheet = pd.read_csv(tmp_path / "o" / "to_label.csv", dtype={"id": str})
    page = (tmp_path / "o" / "to_label.html").read_text()
    cards = _cards(page)
    assert len(cards) == 8 == len(sheet)
    for card, (_, row) in zip(cards, sheet.iterrows(), strict=True):
        # the thumbnail opens the image file at full size
        assert f'<a href="{Path(row["image"]).resolve().as_uri()}"' in card
        # the class by its name, not a bare "class 1"
        name = {0: "negative (class 0)", 1: "positive (class 1)"}[int(row["class"])]
        assert f"<div>{name} · batch 1</div>" in card
        # blind: the class's subconcepts in the training order, no posterior beside the image
        cand = re.search(r'<div class="cand">(.*?)</div>', card).group(1)
        assert cand == {0: "c0 · c1", 1: "s · a · b"}[int(row["class"])]
        assert "(0." not in card and "(1." not in card
    assert "no to_label.html" not in capsys.readouterr().out
    # --show-scores: the posteriors of to_label.csv, most likely first
    assert label_main(["--run", str(run), "--budget", "8", "--out", str(tmp_path / "s"),
                       "--show-scores", "--quiet"]) == 0  # fmt: skip
    shown = _cards((tmp_path / "s" / "to_label.html").read_text())
    assert [re.search(r'<div class="cand">(.*?)</div>', c).group(1) for c in shown] == [
        html.escape(c) for c in sheet["candidates"]
    ]


def test_without_a_task_the_classes_are_numbered_and_the_csv_is_unchanged(tmp_path):
    run, _ = _run_folder(tmp_path, task=False)
    assert label_main(["--run", str(run), "--budget", "5", "--out", str(tmp_path / "o"),
                       "--quiet"]) == 0  # fmt: skip
    page = (tmp_path / "o" / "to_label.html").read_text()
    assert "positive" not in page and re.search(r"<div>class [01] · batch 1</div>", page)
    sheet = pd.read_csv(tmp_path / "o" / "to_label.csv")
    assert list(sheet.columns) == list(SHEET_COLUMNS) and set(sheet["class"]) <= {0, 1}


@pytest.mark.parametrize("why", ["no image column", "unreadable images"])
def test_when_no_sheet_can_be_written_one_line_says_why(tmp_path, capsys, why):
    run, files = _run_folder(tmp_path, images=why != "no image column")
    if why == "unreadable images":
        for p in (files["predictions"].parent / "images").iterdir():
            p.write_bytes(b"not an image")
    assert label_main(["--run", str(run), "--budget", "5", "--out", str(tmp_path / "o")]) == 0
    assert not (tmp_path / "o" / "to_label.html").exists()
    said = [ln for ln in capsys.readouterr().out.splitlines() if "to_label.html" in ln]
    expected = {
        "no image column": "no to_label.html: the predictions name no images (no column image",
        "unreadable images": "no to_label.html: none of the 5 images can be read (first: ",
    }[why]
    assert len(said) == 1 and said[0].startswith(expected), said


def test_some_unreadable_images_are_drawn_as_such_and_counted(tmp_path):
    frame = pd.DataFrame(
        {"id": ["a", "b"], "inclusion_probability": 0.5, "batch": 1, "class": 1,
         "image": [str(tmp_path / "a.png"), str(tmp_path / "b.png")],
         "candidates": "x (0.60); y (0.40)", "subconcept": ""}
    )  # fmt: skip
    Image.new("RGB", (30, 30)).save(tmp_path / "a.png")
    page, lines = sheet_file(frame)
    assert page.count("data:image/jpeg;base64,") == 1 and "cannot read" in page
    assert lines == [f"to_label.html: 1 of 2 images cannot be read (first: {tmp_path / 'b.png'})"]
    # blind without the subconcepts given: the candidates' names, sorted, without scores
    assert '<div class="cand">x · y</div>' in page
