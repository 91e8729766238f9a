"""Reading a predictions file and a train-sizes file, with errors that name file, column, row.

Predictions: CSV (optionally gzipped) or Parquet, one row per test instance, columns ``y_true``
(0/1), ``y_score`` (probability of class 1) and/or ``y_pred`` (0/1), optional ``subconcept``
(true subconcept name), optional posterior columns ``q_<subconcept name>``.

Train sizes: JSON ``{"<subconcept name>": {"class": 0 or 1, "n": <training count>}, ...}``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import UserError
from .weights import Utilities, utilities_from_train_sizes

POSTERIOR_PREFIX = "q_"


class InputError(UserError):
    """A bad input file; the message names the file, and the column and row where known."""

    def __init__(
        self, path: str | Path, problem: str, *, column: str | None = None, row: int | None = None
    ) -> None:
        where = [str(path)]
        if column is not None:
            where.append(f"column {column!r}")
        if row is not None:
            where.append(f"row {row}")
        super().__init__(f"{': '.join([', '.join(where), problem])}")
        self.path, self.column, self.row = str(path), column, row


@dataclass
class PredictionTable:
    """Test predictions read from a file; arrays are ``(N,)``, posteriors ``(N, S)``."""

    path: Path
    y_true: np.ndarray
    y_score: np.ndarray | None
    y_pred: np.ndarray | None
    subconcept: np.ndarray | None
    posteriors: pd.DataFrame | None  # columns = subconcept names

    def __len__(self) -> int:
        return len(self.y_true)


def labels_from_scores(y_score: np.ndarray, threshold: float) -> np.ndarray:
    """Predicted labels ``(N,)`` int64: 1 where ``y_score >= threshold`` (the one rule used
    everywhere: evaluation, the forest protocol, validation during training)."""
    return (np.asarray(y_score) >= threshold).astype(np.int64)


def _read_frame(path: Path) -> pd.DataFrame:
    if not path.is_file():
        raise InputError(path, "file not found")
    name = path.name.lower()
    try:
        if name.endswith((".parquet", ".pq")):
            return pd.read_parquet(path)
        if name.endswith((".csv", ".csv.gz", ".txt")):
            return pd.read_csv(path, dtype=str, keep_default_na=False)
    except Exception as err:  # the parser's own message is the useful part
        raise InputError(path, f"cannot be read: {err}") from err
    raise InputError(path, "unknown format: use .csv, .csv.gz or .parquet")


def _numeric(path: Path, df: pd.DataFrame, column: str) -> np.ndarray:
    """Column as float64; names the first row (1-based, after the header) that is not a number."""
    raw = df[column]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64)
    bad = np.isnan(values)
    if bad.any():
        i = int(np.argmax(bad))
        text = raw.iloc[i]
        problem = (
            "missing value"
            if str(text).strip() in ("", "nan", "None")
            else (f"{text!r} is not a number")
        )
        raise InputError(path, problem, column=column, row=i + 1)
    return values


def _binary(path: Path, df: pd.DataFrame, column: str) -> np.ndarray:
    v = _numeric(path, df, column)
    bad = (v != 0) & (v != 1)
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(path, f"{df[column].iloc[i]!r} is not 0 or 1", column=column, row=i + 1)
    return v.astype(np.int64)


def read_predictions(path: str | Path, utilities: Utilities | None = None) -> PredictionTable:
    """Read and validate a predictions file (see the module docstring for the columns).

    With ``utilities`` (from the train sizes), subconcept names and posterior columns are
    checked against the known subconcepts and their classes.

    Raises:
        InputError: a missing column, a non-numeric or out-of-range value, an unknown
            subconcept or a posterior row that is not a distribution; the message names the
            file, column and first bad row (rows count from 1 after the header).
    """
    path = Path(path)
    df = _read_frame(path)
    df.columns = [str(c).strip() for c in df.columns]
    if "y_true" not in df.columns:
        raise InputError(
            path, f"missing column 'y_true' (columns: {', '.join(df.columns)})", column="y_true"
        )
    if "y_score" not in df.columns and "y_pred" not in df.columns:
        raise InputError(path, "needs a 'y_score' or a 'y_pred' column", column="y_score")
    if len(df) == 0:
        raise InputError(path, "has no rows")
    y_true = _binary(path, df, "y_true")
    y_score = _numeric(path, df, "y_score") if "y_score" in df.columns else None
    y_pred = _binary(path, df, "y_pred") if "y_pred" in df.columns else None
    subconcept = None
    if "subconcept" in df.columns:
        subconcept = df["subconcept"].astype(str).str.strip().to_numpy(dtype=object)
        empty = np.flatnonzero(subconcept == "")
        if len(empty):
            raise InputError(path, "missing value", column="subconcept", row=int(empty[0]) + 1)
        if utilities is not None:
            _check_subconcepts(path, subconcept, y_true, utilities)
    q_cols = [c for c in df.columns if c.startswith(POSTERIOR_PREFIX)]
    posteriors = None
    if q_cols:
        names = [c[len(POSTERIOR_PREFIX) :] for c in q_cols]
        q = np.stack([_numeric(path, df, c) for c in q_cols], axis=1)
        _check_posteriors(path, q, q_cols, names, utilities)
        posteriors = pd.DataFrame(q, columns=names)
    return PredictionTable(path, y_true, y_score, y_pred, subconcept, posteriors)


def _check_subconcepts(path: Path, sc: np.ndarray, y: np.ndarray, u: Utilities) -> None:
    side = {n: int(c) for n, c in zip(u.names, u.sides, strict=True)}
    for i, (name, label) in enumerate(zip(sc, y, strict=True)):
        if name not in side:
            raise InputError(
                path,
                f"unknown subconcept {name!r}: the train sizes know {', '.join(u.names)}",
                column="subconcept",
                row=i + 1,
            )
        if side[name] != label:
            raise InputError(
                path,
                f"subconcept {name!r} belongs to class {side[name]} but y_true is {label}",
                column="subconcept",
                row=i + 1,
            )


def _check_posteriors(path, q, q_cols, names, u: Utilities | None, atol: float = 1e-4) -> None:
    # Column names first: a missing q_<name> column also makes the rows sum to less than 1,
    # and the missing column is the problem to report.
    if u is not None:
        missing = [n for n in u.names if n not in names]
        extra = [n for n in names if n not in u.names]
        if missing or extra:
            raise InputError(
                path,
                "posterior columns must be exactly q_<name> for every subconcept in the train "
                f"sizes; missing {[POSTERIOR_PREFIX + m for m in missing]}, unknown "
                f"{[POSTERIOR_PREFIX + e for e in extra]}",
                column=(POSTERIOR_PREFIX + (missing or extra)[0]),
            )
    bad = q < 0
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise InputError(path, f"negative posterior {q[r, c]!r}", column=q_cols[c], row=int(r) + 1)
    sums = q.sum(axis=1)
    off = np.abs(sums - 1) > atol
    if off.any():
        r = int(np.argmax(off))
        raise InputError(
            path,
            f"posteriors {', '.join(q_cols)} sum to {sums[r]:.6g}, not 1",
            column=q_cols[0],
            row=r + 1,
        )


def read_train_sizes(path: str | Path) -> Utilities:
    """Read ``{"<name>": {"class": 0 or 1, "n": <count>}, ...}`` and compute utilities."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "file not found")
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise InputError(path, f"not valid JSON: {err}") from err
    if not isinstance(data, dict) or not data:
        raise InputError(path, 'must be an object {"<subconcept>": {"class": 0|1, "n": count}}')
    for name, entry in data.items():
        if not isinstance(entry, dict) or set(entry) < {"class", "n"}:
            raise InputError(path, f'subconcept {name!r}: expected {{"class": 0|1, "n": count}}')
        if entry["class"] not in (0, 1):
            raise InputError(
                path, f"subconcept {name!r}: class must be 0 or 1, got {entry['class']!r}"
            )
        n = entry["n"]
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise InputError(path, f"subconcept {name!r}: n must be a count, got {n!r}")
    try:
        return utilities_from_train_sizes(data)
    except ValueError as err:
        raise InputError(path, str(err)) from err
