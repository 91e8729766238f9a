"""Generic CSV / TSV / Parquet tables: one row per instance, the label column by option."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from medeval.datasets.base import (
    DataError,
    LabelledData,
    check_labels_present,
    label_strings,
    require_columns,
)
from medeval.errors import InputError
from medeval.io.tables import numeric_column, read_frame

__all__ = ["load_table"]


def load_table(
    path: str | Path,
    *,
    label_column: str = "label",
    feature_columns: list[str] | None = None,
    group_column: str | None = None,
    id_column: str | None = None,
    name: str | None = None,
) -> LabelledData:
    """Read a feature table.

    Args:
        path: ``.csv``, ``.tsv`` (optionally ``.gz``) or ``.parquet`` file.
        label_column: column with the multiclass label.
        feature_columns: columns used as features; default every other column except
            ``group_column`` and ``id_column``.
        group_column: optional patient / lesion id column.
        id_column: optional row identifier column.

    Returns:
        ``LabelledData`` with ``X`` (N, F): numeric columns as numbers, text-only columns as
        category codes.

    Raises:
        DataError: an unreadable file, a duplicated or padded column name, a missing column,
            a cell that is not a number in a column of numbers, or a timestamp column; the
            message names the file, the column and the first bad row.
    """
    path = Path(path)
    try:
        frame = read_frame(path)
    except InputError as err:  # the loaders' own error type, the same one-line message
        raise DataError(str(err)) from err
    extra = [c for c in (group_column, id_column) if c is not None]
    require_columns(frame, [label_column, *extra, *(feature_columns or [])], path)
    check_labels_present(frame[label_column], path, label_column)
    if feature_columns is None:
        feature_columns = [c for c in frame.columns if c not in {label_column, *extra}]
    X, names = _numeric_features(path, frame, feature_columns)
    return LabelledData(
        labels=label_strings(frame[label_column]),
        source="csv",
        name=name or path.name.split(".")[0],
        X=X,
        feature_names=names,
        groups=None if group_column is None else label_strings(frame[group_column]),
        ids=None if id_column is None else label_strings(frame[id_column]),
        meta={"path": str(path)},
    )


def _numeric_features(path: Path, frame, columns: list[str]) -> tuple[np.ndarray, list[str]]:
    """The feature columns as numbers. A column of numbers with a cell that is not one is an
    error naming the file, column and row (never category codes: one stray cell would turn
    every number of the column into a code); a column of text only is categorical and becomes
    integer codes; a timestamp column is refused by its type. Empty cells stay NaN."""
    X = np.empty((len(frame), len(columns)), dtype=np.float64)
    for j, column in enumerate(columns):
        values = frame[column]
        if pd.api.types.is_bool_dtype(values.dtype):
            X[:, j] = values.to_numpy(dtype=np.float64)
            continue
        if pd.api.types.is_numeric_dtype(values.dtype) or not _is_text(values):
            X[:, j] = _numbers(path, frame, column)
            continue
        text = values.astype("string").str.strip()
        parsed = pd.to_numeric(text, errors="coerce")
        given = (text.notna() & (text != "")).to_numpy()
        numbers = parsed.notna().to_numpy()
        if (given & numbers).any() and (given & ~numbers).any():
            row = int(np.argmax(given & ~numbers))
            problem = f"{values.iloc[row]!r} is not a number (the column's other cells are)"
            raise DataError(str(InputError(path, problem, column=str(column), row=row + 1)))
        if (given & numbers).any():
            X[:, j] = parsed.to_numpy(dtype=np.float64, na_value=np.nan)
        else:
            codes = pd.Categorical(text.where(pd.Series(given, index=text.index))).codes
            X[:, j] = np.where(codes < 0, np.nan, codes)
    return X, [str(c) for c in columns]


def _is_text(values: pd.Series) -> bool:
    return pd.api.types.is_object_dtype(values.dtype) or pd.api.types.is_string_dtype(values.dtype)


def _numbers(path: Path, frame, column: str) -> np.ndarray:
    try:
        return numeric_column(path, frame, column, missing_ok=True)
    except InputError as err:
        raise DataError(str(err)) from err
