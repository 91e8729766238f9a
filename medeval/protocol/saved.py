"""A benchmark record's fold as files ``python -m medeval.evaluate`` reads
(``python -m medeval.benchmark --save-predictions``).

Next to ``records/<set>/<method>-<k>.json`` the run then writes
``predictions/<set>/<method>-<k>/``:

- ``predictions.csv``: the test fold — ``id`` (the row of the task), ``y_true``, ``y_score`` (the
  binary forest's class-1 score; the predicted label is ``y_score >= 0.5``), ``subconcept`` (the
  true test subconcept) and ``q_<subconcept>`` (the subconcept forest's posteriors);
- ``reference.csv``: the fold's reference rows, out of bag or cross-fitted (absent when the record's
  ``"reference"`` says they are unavailable);
- ``train_sizes.json``: the training fold's subconcept counts and classes;
- ``fold.json``: the record it belongs to and the bootstrap that made its intervals (replicates,
  seed, level), with the ``python -m medeval.evaluate`` command that reproduces its scores.

Floats are written with Python's shortest round-trip text, so the files evaluate to the record's
very numbers. Each file is written atomically, the folder before its record, so a record that
exists after an interruption has its files too.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from medeval.io.atomic import json_text, write_files
from medeval.io.predictions import POSTERIOR_PREFIX
from medeval.protocol.oob import ReferenceRows as OobRows
from medeval.weights import Utilities

__all__ = [
    "FOLD_FILES",
    "fold_files",
    "fold_folder",
    "has_fold_files",
    "save_fold",
    "write_fold_files",
]

#: The files of a saved fold that every fold has (``reference.csv`` only where usable).
FOLD_FILES = ("predictions.csv", "train_sizes.json", "fold.json")


def fold_folder(root: str | Path, dataset: str, method: str, split: int) -> Path:
    """``<root>/predictions/<dataset>/<method>-<split>``."""
    return Path(root) / "predictions" / dataset / f"{method}-{int(split)}"


def has_fold_files(root: str | Path, dataset: str, method: str, split: int) -> bool:
    """Whether the saved fold of (data set, method, split) is complete."""
    folder = fold_folder(root, dataset, method, split)
    return all((folder / name).is_file() for name in FOLD_FILES)


def fold_files(
    *,
    dataset: str,
    method: str,
    split: int,
    test_rows: np.ndarray,
    y_true: np.ndarray,
    y_score: np.ndarray,
    subconcept: np.ndarray,
    posteriors: pd.DataFrame,
    utilities: Utilities,
    reference: pd.DataFrame | None,
    bootstrap: dict[str, Any],
) -> dict[str, bytes]:
    """The files of one saved fold (name → bytes; see the module docstring).

    Args:
        test_rows: ``(N,)`` row positions of the test fold in the task (the ``id`` column).
        y_true, y_score, subconcept: ``(N,)`` the test fold's classes, class-1 scores and true
            subconcept names.
        posteriors: ``(N, S)`` subconcept posteriors, columns named by subconcept.
        reference: the reference rows table (out of bag or cross-fitted), or ``None`` when
            unusable.
        bootstrap: ``{"n_bootstrap", "seed", "confidence"}`` of the record's intervals
            (optionally the ``"threshold"`` and ``"stratify"`` of its evaluation).
    """
    test = pd.DataFrame(
        {
            "id": np.asarray(test_rows, dtype=np.int64),
            "y_true": np.asarray(y_true, dtype=np.int64),
            "y_score": np.asarray(y_score, dtype=np.float64),
            "subconcept": np.asarray(subconcept, dtype=object),
        }
    )
    q = posteriors.rename(columns=lambda c: f"{POSTERIOR_PREFIX}{c}").reset_index(drop=True)
    test = pd.concat([test, q], axis=1)
    sizes = {
        n: {"class": int(c), "n": int(k)}
        for n, c, k in zip(utilities.names, utilities.sides, utilities.counts, strict=True)
    }
    files = {
        "predictions.csv": test.to_csv(index=False).encode(),
        "train_sizes.json": json_text(sizes).encode(),
    }
    if reference is not None:
        files["reference.csv"] = reference.to_csv(index=False).encode()
    record = f"records/{dataset}/{method}-{int(split)}.json"
    files["fold.json"] = json_text(
        {
            "dataset": dataset,
            "method": method,
            "split": int(split),
            "record": record,
            "n_bootstrap": int(bootstrap["n_bootstrap"]),
            "seed": int(bootstrap["seed"]),
            "confidence": float(bootstrap["confidence"]),
            "reference": reference is not None,
            "command": _command(dataset, method, split, bootstrap, reference is not None),
        }
    ).encode()
    return files


def _command(
    dataset: str, method: str, split: int, bootstrap: dict[str, Any], with_reference: bool
) -> str:
    """The ``python -m medeval.evaluate`` command, run in the results folder."""
    folder = f"predictions/{dataset}/{method}-{int(split)}"
    args = [
        "python",
        "-m",
        "medeval.evaluate",
        "--predictions",
        f"{folder}/predictions.csv",
        "--train-sizes",
        f"{folder}/train_sizes.json",
    ]
    if with_reference:
        args += ["--reference", f"{folder}/reference.csv"]
    args += ["--bootstrap", str(int(bootstrap["n_bootstrap"])), "--seed", str(bootstrap["seed"])]
    if float(bootstrap["confidence"]) != 0.95:
        args += ["--confidence", repr(float(bootstrap["confidence"]))]
    # given where the run set other values than evaluate's defaults (the protocol's)
    if float(bootstrap.get("threshold", 0.5)) != 0.5:
        args += ["--threshold", repr(float(bootstrap["threshold"]))]
    if bootstrap.get("stratify", "class") != "class":
        args += ["--stratify", str(bootstrap["stratify"])]
    return " ".join(shlex.quote(a) for a in args)


def write_fold_files(
    root: str | Path, dataset: str, method: str, split: int, files: dict[str, bytes]
) -> Path:
    """Write one saved fold atomically, file by file (``fold.json`` last, so a folder with it is
    complete); a stale ``reference.csv`` of an earlier run is removed when this fold has none."""
    folder = fold_folder(root, dataset, method, split)
    if "reference.csv" not in files:
        (folder / "reference.csv").unlink(missing_ok=True)
    ordered = {k: v for k, v in files.items() if k != "fold.json"}
    write_files(folder, ordered)
    write_files(folder, {"fold.json": files["fold.json"]})
    return folder


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
    bootstrap: dict[str, Any],
) -> Path:
    """Write one method's fold of :func:`medeval.protocol.forest.run_fold` under ``root``.

    Args:
        shared: the fold's shared part (utilities, test and out-of-bag posteriors, names).
        score: ``(N_test,)`` the binary forest's class-1 scores on the test rows.
        reference: the fold's reference rows (:func:`medeval.protocol.forest.oob_rows`)
            where the record could use them, else ``None`` (no ``reference.csv``).
    """

    train, test = split["train"], split["test"]
    table = None
    if reference is not None:
        table = reference.table.copy()
        table.insert(0, "id", np.asarray(train)[reference.rows].astype(np.int64))
    files = fold_files(
        dataset=task.name,
        method=method,
        split=k,
        test_rows=test,
        y_true=task.y[test],
        y_score=score,
        subconcept=shared["test_names"],
        posteriors=shared["posteriors"],
        utilities=shared["utilities"],
        reference=table,
        bootstrap=bootstrap,
    )
    return write_fold_files(root, task.name, method, k, files)
