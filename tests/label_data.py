"""Test rows with known subconcepts for the label tool's tests: a predictions file (ids, classes,
scores, posteriors, optionally tiny images) and the train sizes, the truth kept apart."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image
from scipy import special

NAMES = ("c0", "c1", "s", "a", "b")
SIDES = np.array([0, 0, 1, 1, 1])
SHARES = np.array([0.42, 0.28, 0.03, 0.162, 0.108])
RECALL = np.array([0.95, 0.9, 0.4, 0.85, 0.75])


def write(folder: Path, n: int = 600, seed: int = 0, images: bool = False) -> dict[str, Path]:
    """``predictions.csv`` (no ``subconcept``), ``train_sizes.json`` and ``truth.csv``."""
    rng = np.random.default_rng(seed)
    sub = rng.choice(5, n, p=SHARES)
    y = SIDES[sub]
    hit = rng.random(n) < RECALL[sub]
    score = np.where(hit == (y == 1), 0.75, 0.25) + rng.uniform(-0.2, 0.2, n)
    z = rng.normal(2.5 * np.eye(5)[sub], 1.0)
    q = special.softmax(np.log(SHARES) + 2.5 * z, axis=1)
    ids = [f"img{i:04d}" for i in range(n)]
    frame = pd.DataFrame({"id": ids, "y_true": y, "y_score": score.round(4)})
    for j, nm in enumerate(NAMES):
        frame[f"q_{nm}"] = q[:, j].round(6)
    if images:
        (folder / "images").mkdir(parents=True, exist_ok=True)
        frame["image"] = [f"images/{i}.png" for i in ids]
        for i, s in zip(ids, sub, strict=True):
            Image.new("RGB", (24, 24), (40 * s, 200 - 30 * s, 90)).save(
                folder / "images" / f"{i}.png"
            )
    paths = {
        "predictions": folder / "predictions.csv",
        "train_sizes": folder / "train_sizes.json",
        "truth": folder / "truth.csv",
    }
    frame.to_csv(paths["predictions"], index=False)
    sizes = {
        nm: {"class": int(c), "n": int(k)}
        for nm, c, k in zip(NAMES, SIDES, [400, 300, 15, 90, 60], strict=True)
    }
    paths["train_sizes"].write_text(json.dumps(sizes))
    pd.DataFrame({"id": ids, "subconcept": np.asarray(NAMES)[sub]}).to_csv(
        paths["truth"], index=False
    )
    return paths


def fill(sheet: Path, truth: Path, into: Path) -> Path:
    """``sheet``'s rows with their true subconcepts, appended to ``into``."""
    t = pd.read_csv(truth, dtype=str).set_index("id")["subconcept"]
    s = pd.read_csv(sheet, dtype={"id": str})
    s["subconcept"] = t.loc[s["id"]].to_numpy()
    if into.exists():
        s = pd.concat([pd.read_csv(into, dtype={"id": str}), s])
    s.to_csv(into, index=False)
    return into
