"""Generic CSV / TSV / Parquet tables: one row per instance (features, or a text), the label
column by option."""

from __future__ import annotations

from pathlib import Path

from medeval.datasets.base import LabelledData, group_ids, label_strings, read_table
from medeval.datasets.keel import numeric_features
from medeval.io.tables import CSV_SUFFIXES

__all__ = ["load_table", "load_text_csv"]


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
    extra = [c for c in (group_column, id_column) if c is not None]
    columns = [label_column, *extra, *(feature_columns or [])]
    frame = read_table(path, columns, [label_column], csv_suffixes=CSV_SUFFIXES)
    if feature_columns is None:
        feature_columns = [c for c in frame.columns if c not in {label_column, *extra}]
    X, names = numeric_features(path, frame[feature_columns])
    return _labelled(
        frame, path, "csv", name, label_column, group_column, id_column, X=X, feature_names=names
    )


def load_text_csv(
    path: str | Path,
    *,
    text_column: str = "text",
    label_column: str = "label",
    group_column: str | None = None,
    id_column: str | None = None,
    name: str | None = None,
) -> LabelledData:
    """Read a text table (CSV/TSV/Parquet).

    Returns:
        ``LabelledData`` with ``text`` (N,) and ``labels`` (N,).
    """
    path = Path(path)
    extra = [c for c in (group_column, id_column) if c is not None]
    columns = [text_column, label_column, *extra]
    frame = read_table(
        path, columns, [label_column], dtype=str, keep_default_na=False, na_values=[""]
    )
    text = frame[text_column].fillna("").to_numpy(dtype=object)
    return _labelled(frame, path, "text", name, label_column, group_column, id_column, text=text)


def _labelled(frame, path: Path, source: str, name, label, group, id_column, **fields):
    """The :class:`LabelledData` of a table's rows; ``fields``: the inputs."""
    return LabelledData(
        labels=label_strings(frame[label]),
        source=source,
        name=name or path.name.split(".")[0],
        groups=None if group is None else group_ids(frame[group]),
        ids=None if id_column is None else label_strings(frame[id_column]),
        meta={"path": str(path), "group_column": group},
        **fields,
    )
