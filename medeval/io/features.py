"""Feature tables (``f0000…`` or named feature columns, other columns kept as their cell text,
an ``id`` that must not repeat): the input of ``python -m medeval.subconcepts``."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from medeval.errors import InputError
from medeval.io.tables import finite_matrix, given_frame, read_frame

__all__ = ["FEATURE", "FeatureTable", "binary_column", "check_ids_once", "read_feature_table"]

#: The feature columns of a feature or embedding table: ``f0000…``.
FEATURE = re.compile(r"^f\d+$")


@dataclass
class FeatureTable:
    """One table: ``X (N, F)`` of the ``features`` columns and ``rest``, every other column."""

    path: Path
    X: np.ndarray
    features: list[str]
    rest: pd.DataFrame

    def __len__(self) -> int:
        return len(self.X)

    def has(self, column: str) -> bool:
        return column in self.rest.columns

    @property
    def ids(self) -> np.ndarray | None:
        return self.rest["id"].astype(str).to_numpy() if self.has("id") else None

    def column(self, name: str) -> np.ndarray | None:
        return self.rest[name].to_numpy() if self.has(name) else None


def read_feature_table(
    path: str | Path | pd.DataFrame,
    features: Sequence[str] | None = None,
    *,
    name: str = "",
    option: str | None = "--features",
) -> FeatureTable:
    """Read a CSV / Parquet table (or a DataFrame, read as a Parquet file would be) and check
    its features and ids: the one reader of feature tables.

    Args:
        features: the feature columns; default every column named ``f<digits>``.
        name: what messages call a DataFrame (default ``"DataFrame"``).
        option: the tool's option that names other feature columns (``None``: it has none).

    Raises:
        InputError: unreadable file, no rows, a feature column missing, a feature value that is
            not a finite number, a repeated ``id`` (naming the column and row).
    """
    if isinstance(path, pd.DataFrame):
        frame, path = path, Path(name or "DataFrame")
        frame = given_frame(frame, path)
    else:
        path = Path(path)
        frame = read_frame(path, as_text=True)
    frame.columns = [str(c).strip() for c in frame.columns]
    if features is None:
        cols = [c for c in frame.columns if FEATURE.match(c)]
        if not cols:
            named = f"; name the feature columns with {option}" if option else ""
            raise InputError(
                path, f"no feature columns f0000… (the python -m medeval.embed format){named}"
            )
    else:
        cols = list(features)
        missing = [c for c in cols if c not in frame.columns]
        if missing:
            raise InputError(
                path,
                f"missing feature column {missing[0]!r} ({len(missing)} missing)",
                column=missing[0],
            )
    if len(frame) == 0:
        raise InputError(path, "has no rows")
    X = finite_matrix(frame, cols, path, hint=" (features must be numeric)")
    rest = frame[[c for c in frame.columns if c not in set(cols)]].reset_index(drop=True)
    table = FeatureTable(path, X, cols, rest)
    check_ids_once(table.ids, path)
    return table


def first_repeat(values) -> tuple[int, int] | None:
    """Positions ``(first, second)`` of the first value of ``values`` ``(N,)`` seen twice."""
    values = np.asarray(values)
    dup = pd.Series(values).duplicated().to_numpy()
    if not dup.any():
        return None
    i = int(np.argmax(dup))
    return int(np.argmax(values == values[i])), i


def check_ids_once(ids: np.ndarray | None, path: Path) -> None:
    """Raise ``InputError`` naming the first id of ``ids`` ``(N,)`` (a table's ``id`` column,
    or ``None``) given twice and both its rows: a row given twice would count twice."""
    repeat = first_repeat(ids) if ids is not None else None
    if repeat is not None:
        first, i = repeat
        raise InputError(
            path,
            f"id {ids[i]!r} appears twice (rows {first + 1} and {i + 1}); ids must be unique",
            column="id",
            row=i + 1,
        )


def binary_column(table: FeatureTable, column: str) -> np.ndarray:
    """``(N,)`` int64 0/1 values of ``column``.

    Raises:
        InputError: the column is missing or holds a value other than 0 / 1.
    """
    if not table.has(column):
        raise InputError(table.path, f"missing column {column!r}", column=column)
    raw = table.rest[column]
    y = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isin(y, (0, 1))
    if bad.any():
        i = int(np.argmax(bad))
        cell = raw.iloc[i]
        cell = cell.item() if isinstance(cell, np.generic) else cell  # 3, not np.int64(3)
        raise InputError(table.path, f"{cell!r} is not 0 or 1", column=column, row=i + 1)
    return y.astype(np.int64)
