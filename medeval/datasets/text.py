"""Generic text CSV: one row per document, text and label columns by option."""

from __future__ import annotations

from pathlib import Path

from medeval.datasets.base import (
    LabelledData,
    group_ids,
    label_strings,
    read_table,
)

__all__ = ["load_text_csv"]


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
    return LabelledData(
        labels=label_strings(frame[label_column]),
        source="text",
        name=name or path.name.split(".")[0],
        text=frame[text_column].fillna("").to_numpy(dtype=object),
        groups=None if group_column is None else group_ids(frame[group_column]),
        ids=None if id_column is None else label_strings(frame[id_column]),
        meta={"path": str(path), "group_column": group_column},
    )
