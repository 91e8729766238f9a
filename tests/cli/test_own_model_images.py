"""The images recipe of docs/own_model.md, end to end: a folder-per-class PNG set → three
``python -m medeval.embed`` tables → ``python -m medeval.subconcepts`` with the user's label
and predictions files joined by image path."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from PIL import Image

from medeval.embed import main as embed_main
from medeval.subconcepts import main as subconcepts_main

REPO = Path(__file__).resolve().parents[2]
#: (subconcept, class, mean grey level): two subtypes per class, told apart by brightness.
SUBCONCEPTS = (("clear", 0, 60), ("scarred", 0, 110), ("nodule", 1, 160), ("mass", 1, 210))
PARTS = {"train": 10, "val": 6, "test": 6}  # images per subconcept


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)


def _images(root: Path) -> dict[str, pd.DataFrame]:
    """images/<part>/<subconcept>/<name>.png (32 px) and, per part, the user's table of
    path, y_true, subconcept and a classifier's y_score (a noisy function of the class)."""
    rng = np.random.default_rng(0)
    rows: dict[str, list[dict]] = {p: [] for p in PARTS}
    for part, n in PARTS.items():
        for name, cls, grey in SUBCONCEPTS:
            folder = root / "images" / part / name
            folder.mkdir(parents=True)
            for i in range(n):
                pixels = np.clip(rng.normal(grey, 20, (32, 32)), 0, 255).astype(np.uint8)
                path = folder / f"{part}-{name}-{i:02d}.png"  # unique names, as in real sets
                Image.fromarray(pixels).save(path)
                score = float(np.clip(0.3 + 0.4 * cls + rng.normal(0, 0.2), 0, 1))
                rows[part].append(
                    {"path": str(path), "y_true": cls, "subconcept": name, "y_score": score}
                )
    return {p: pd.DataFrame(r) for p, r in rows.items()}


def _doc_commands() -> list[list[str]]:
    """The recipe's commands as docs/own_model.md writes them (the "check" block)."""
    text = (REPO / "docs" / "own_model.md").read_text()
    block = re.search(r"<!-- recipe-check -->\n```bash\n(.*?)```", text, re.S)
    assert block, "docs/own_model.md lost its recipe-check block"
    commands = block.group(1).replace("\\\n", " ").strip().splitlines()
    return [shlex.split(c) for c in commands if c.strip() and not c.startswith("#")]


def test_images_recipe_runs_as_documented(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # the recipe's relative paths
    tables = _images(tmp_path)
    tables["train"][["path", "y_true", "subconcept"]].to_csv("train_labels.csv", index=False)
    tables["val"].to_csv("validation_predictions.csv", index=False)
    # the test set's subconcepts are unknown to the user: path, y_true, y_score only
    tables["test"][["path", "y_true", "y_score"]].to_csv("test_predictions.csv", index=False)
    commands = _doc_commands()
    assert [c[:3] for c in commands] == [["python", "-m", "medeval.embed"]] * 3 + [
        ["python", "-m", "medeval.subconcepts"]
    ]
    for argv in commands[:3]:
        assert embed_main(argv[3:]) == 0
    for part, name in (("train", "train"), ("val", "validation"), ("test", "test")):
        emb = pd.read_parquet(Path("embeddings") / f"{name}.parquet")
        assert len(emb) == len(tables[part]) and emb["id"].is_unique
        assert set(emb["label"]) == {s for s, _, _ in SUBCONCEPTS}
    assert subconcepts_main(commands[3][3:]) == 0
    out = Path("runs/my-model")
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["n"] == len(tables["test"])
    # the validation images are the reference rows of the rectified scores
    assert metrics["reference"]["n"] == len(tables["val"])
    assert metrics["recommended"]["BA"] == "rBA" and metrics["scores"]["rBA"] is not None
    # the predictions were joined by path: each test row kept its own score
    written = pd.read_csv(out / "predictions.csv")
    mine = tables["test"].set_index("path")["y_score"]
    np.testing.assert_allclose(written["y_score"], mine.loc[written["path"]].to_numpy())
    q = written[[f"q_{s}" for s, _, _ in SUBCONCEPTS]].to_numpy()
    np.testing.assert_allclose(q.sum(axis=1), 1.0)
    # brightness tells the subtypes apart: the subconcept forest gets most test images right
    truth = [n for n, _, _ in SUBCONCEPTS]
    predicted = np.asarray(truth)[q.argmax(axis=1)]
    expected = [Path(p).parent.name for p in written["path"]]
    assert np.mean(predicted == np.asarray(expected)) > 0.8
    sizes = json.loads((out / "train_sizes.json").read_text())
    assert sizes == {s: {"class": c, "n": PARTS["train"]} for s, c, _ in SUBCONCEPTS}
