"""Valid inputs for every tool, and the malformed variants the robustness table builds from them.

:func:`make_workspace` writes, under one folder, a valid input of each kind (predictions with
train sizes, embedding tables, a benchmark collection, a benchmark results folder) and an
earlier complete output of each tool that takes ``--out``. A case of
``test_malformed_inputs.py`` then spoils one thing and runs one tool on it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from medeval.io.outdir import MARKER

NAMES = ("normal", "A", "B")
SIZES = {"normal": {"class": 0, "n": 60}, "A": {"class": 1, "n": 30}, "B": {"class": 1, "n": 9}}
#: Tools whose ``--out`` may be an earlier output of their own (checked untouched after a case).
PREVIOUS = ("evaluate", "discover", "analyze", "benchmark", "embed")


def tree_digest(root: Path) -> dict[str, str]:
    """Every entry under ``root``: file bytes hashed, links by target, folders by name."""
    out = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            path = Path(folder) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                out[rel] = "link:" + os.readlink(path)
            elif path.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def predictions(n: int = 90, seed: int = 1) -> pd.DataFrame:
    """Predictions with true subconcepts and their posteriors (every column evaluate reads)."""
    rng = np.random.default_rng(seed)
    sc = rng.choice(3, n, p=[0.6, 0.3, 0.1])
    y = (sc > 0).astype(int)
    df = pd.DataFrame(
        {
            "y_true": y,
            "y_score": np.clip(0.5 * y + rng.normal(0.25, 0.2, n), 0, 1).round(3),
            "subconcept": np.array(NAMES)[sc],
        }
    )
    q = rng.dirichlet(np.ones(3), n).round(4)
    q[:, 0] = 1 - q[:, 1:].sum(axis=1)
    for i, name in enumerate(NAMES):
        df[f"q_{name}"] = q[:, i]
    return df


def embeddings(n: int, seed: int) -> pd.DataFrame:
    """An embedding table as ``python -m medeval.embed`` writes it (features and a class)."""
    rng = np.random.default_rng(seed)
    y = (np.arange(n) % 3 == 0).astype(int)
    df = pd.DataFrame({f"f{i:04d}": rng.normal(size=n) + 2 * y * (i % 2) for i in range(4)})
    df["y"] = y
    return df


def collection_table(n: int = 300, seed: int = 0) -> pd.DataFrame:
    """One benchmark data set: three numeric features and a three-valued label."""
    rng = np.random.default_rng(seed)
    label = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    df = pd.DataFrame(
        {f"x{i}": (rng.normal(size=n) + (label == "b") * i).round(3) for i in range(3)}
    )
    df["label"] = label
    return df


def mark_output(folder: Path, tool: str) -> None:
    """An earlier complete output of ``tool`` (written whole: its marker lists its files)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MARKER).write_text(json.dumps({"tool": tool, "files": ["report.html"]}))
    (folder / "report.html").write_text(f"<html>earlier {tool} run</html>")


def make_workspace(root: Path, results: Path) -> None:
    """Valid inputs under ``root/in`` (``results``: a finished benchmark folder, copied) and an
    earlier output of each tool under ``root/prev/<tool>``."""
    src = root / "in"
    src.mkdir(parents=True)
    predictions().to_csv(src / "preds.csv", index=False)
    predictions().to_parquet(src / "preds.parquet", index=False)
    (src / "sizes.json").write_text(json.dumps(SIZES))
    embeddings(60, 0).to_parquet(src / "train.parquet", index=False)
    test = embeddings(30, 1)
    test.to_parquet(src / "test.parquet", index=False)
    rng = np.random.default_rng(2)
    dpreds = pd.DataFrame({"y_true": test["y"], "y_score": rng.uniform(size=len(test)).round(3)})
    dpreds.to_csv(src / "dpreds.csv", index=False)
    (root / "coll").mkdir()
    collection_table().to_csv(root / "coll" / "t.csv", index=False)
    shutil.copytree(results, root / "results", symlinks=True)
    for tool in PREVIOUS:
        mark_output(root / "prev" / tool, tool)


def build_results(folder: Path, collection: Path) -> None:
    """A finished (tiny) benchmark results folder: one data set, one method, one split."""
    from medeval.cli.benchmark import main

    argv = ["--collection", str(collection), "--out", str(folder), "--max-splits", "1"]
    code = main([*argv, "--n-estimators", "5", "--methods", "none", "--quiet", "--no-analyze"])
    if code != 0:
        raise RuntimeError(f"the results fixture did not build (exit {code})")
