"""Generic CSV / TSV / Parquet tables: one row per instance, the label column by option."""

from __future__ import annotations

from pathlib import Path

from medeval.datasets.base import (
    LabelledData,
    as_data_error,
    check_labels_present,
    group_ids,
    label_strings,
    require_columns,
)
from medeval.datasets.keel import numeric_features
from medeval.io.tables import read_frame

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
        ``LabelledData`` with ``X`` (N, F) (:func:`medeval.io.tables.feature_matrix`).

    Raises:
        DataError: an unreadable file, a bad header, a missing column or a refused feature
            column, naming the file, the column and the first bad row.
    """
    path = Path(path)
    with as_data_error():
        frame = read_frame(path)
    extra = [c for c in (group_column, id_column) if c is not None]
    require_columns(frame, [label_column, *extra, *(feature_columns or [])], path)
    check_labels_present(frame[label_column], path, label_column)
    if feature_columns is None:
        feature_columns = [c for c in frame.columns if c not in {label_column, *extra}]
    X, names = numeric_features(path, frame[feature_columns])
    return LabelledData(
        labels=label_strings(frame[label_column]),
        source="csv",
        name=name or path.name.split(".")[0],
        X=X,
        feature_names=names,
        groups=None if group_column is None else group_ids(frame[group_column]),
        ids=None if id_column is None else label_strings(frame[id_column]),
        meta={"path": str(path), "group_column": group_column},
    )
