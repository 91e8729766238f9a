"""A benchmark record's fold as files ``python -m medeval.evaluate`` reads, with the record's very
numbers (shortest round-trip floats), written atomically before the record (docs/benchmark.md,
"Reopening a fold")."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from medeval.io.atomic import json_text, write_files
from medeval.io.predictions import POSTERIOR_PREFIX
from medeval.options import EvaluationOptions
from medeval.protocol.oob import ReferenceRows as OobRows

__all__ = ["FOLD_FILES", "fold_folder", "has_fold_files", "save_fold"]

#: The files of a saved fold that every fold has (``reference.csv`` only where usable).
FOLD_FILES = ("predictions.csv", "train_sizes.json", "fold.json")


def fold_folder(root: str | Path, dataset: str, method: str, split: int) -> Path:
    """``<root>/predictions/<dataset>/<method>-<split>``."""
    return Path(root) / "predictions" / dataset / f"{method}-{int(split)}"


def has_fold_files(root: str | Path, dataset: str, method: str, split: int) -> bool:
    """Whether the saved fold of (data set, method, split) is complete."""
    folder = fold_folder(root, dataset, method, split)
    return all((folder / name).is_file() for name in FOLD_FILES)


def save_fold(
    root: str | Path,
    task: Any,
    split: Any,
    k: int,
    method: str,
    shared: dict[str, Any],
    score: np.ndarray,
    *,
    reference: OobRows | None,
    settings: EvaluationOptions,
) -> Path:
    """Write one method's fold of :func:`medeval.protocol.forest.run_fold` under ``root``,
    ``fold.json`` last (a folder with it is complete); a stale ``reference.csv`` is removed.

    Args:
        shared: the fold's shared part (:func:`medeval.protocol.forest.run_fold`).
        score: ``(N_test,)`` the binary forest's class-1 scores on the test rows.
        reference: the fold's reference rows (:func:`medeval.protocol.forest.oob_rows`)
            where the record could use them, else ``None`` (no ``reference.csv``).
        settings: the record's evaluation options, its bootstrap seed included.
    """
    train, test = split["train"], split["test"]
    table = pd.DataFrame(
        {
            "id": np.asarray(test, dtype=np.int64),
            "y_true": np.asarray(task.y[test], dtype=np.int64),
            "y_score": np.asarray(score, dtype=np.float64),
            "subconcept": np.asarray(shared["test_names"], dtype=object),
        }
    )
    q = shared["posteriors"].rename(columns=lambda c: f"{POSTERIOR_PREFIX}{c}")
    u = shared["utilities"]
    sizes = {
        n: {"class": int(c), "n": int(count)}
        for n, c, count in zip(u.names, u.sides, u.counts, strict=True)
    }
    files = {
        "predictions.csv": pd.concat([table, q.reset_index(drop=True)], axis=1).to_csv(index=False),
        "train_sizes.json": json_text(sizes),
    }
    folder = fold_folder(root, task.name, method, k)
    if reference is None:
        (folder / "reference.csv").unlink(missing_ok=True)
    else:
        rows = reference.table.copy()
        rows.insert(0, "id", np.asarray(train)[reference.rows].astype(np.int64))
        files["reference.csv"] = rows.to_csv(index=False)
    write_files(folder, {name: text.encode() for name, text in files.items()})
    # the python -m medeval.evaluate command, run in the results folder
    rel = f"predictions/{task.name}/{method}-{int(k)}"
    args = ["python", "-m", "medeval.evaluate", "--predictions", f"{rel}/predictions.csv"]
    args += ["--train-sizes", f"{rel}/train_sizes.json"]
    if reference is not None:
        args += ["--reference", f"{rel}/reference.csv"]
    args += ["--bootstrap", str(int(settings.n_bootstrap)), "--seed", str(settings.seed)]
    if float(settings.confidence) != 0.95:
        args += ["--confidence", repr(float(settings.confidence))]
    # given where the run set other values than evaluate's defaults (the protocol's)
    if float(settings.threshold) != 0.5:
        args += ["--threshold", repr(float(settings.threshold))]
    if settings.stratify != "class":
        args += ["--stratify", str(settings.stratify)]
    fold = {
        "dataset": task.name,
        "method": method,
        "split": int(k),
        "record": f"records/{task.name}/{method}-{int(k)}.json",
        "n_bootstrap": int(settings.n_bootstrap),
        "seed": int(settings.seed),
        "confidence": float(settings.confidence),
        "reference": reference is not None,
        "command": shlex.join(args),
    }
    write_files(folder, {"fold.json": json_text(fold).encode()})
    return folder
