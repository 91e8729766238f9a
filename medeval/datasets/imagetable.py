"""The user's own image table (CSV, TSV or Parquet): image, label and optional group columns; a
cell names one file below the image folder, by name (suffix optional) or path (docs/tasks.md); a
hidden file or folder, skipped by the search by name, is read where a cell gives its path from the
image folder (suffix optional too)."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import numpy as np
import pandas as pd

from medeval.datasets.base import (
    DataError,
    LabelledData,
    SkippedFile,
    check_labels_present,
    first_named,
    group_ids,
    label_strings,
    read_table,
    row_text,
)
from medeval.datasets.files import check_one_row_per_image, image_files_below, is_hidden
from medeval.datasets.pixels import IMAGE_SUFFIXES, is_image_name, verify_files
from medeval.names import lookalike, visible_key

__all__ = ["find_table", "load_image_table"]

TABLE_SUFFIXES = (".csv", ".tsv", ".parquet", ".pq", ".csv.gz", ".tsv.gz")
#: Preferred table names when ``path`` is a folder holding several tables.
TABLE_NAMES = ("metadata", "labels")


def find_table(path: str | Path) -> Path:
    """The table itself, or the one table inside folder ``path`` (``metadata.*`` or
    ``labels.*`` first when there are several)."""
    path = Path(path)
    if path.is_file():
        return path
    if not path.is_dir():
        raise FileNotFoundError(f"{path}: no such image table or folder")
    tables = sorted(
        p for p in path.iterdir() if p.is_file() and p.name.lower().endswith(TABLE_SUFFIXES)
    )
    preferred = [p for p in tables if p.name.split(".")[0].lower() in TABLE_NAMES]
    if len(preferred) == 1 or len(tables) == 1:
        return (preferred or tables)[0]
    names = ", ".join(p.name for p in tables) or "none"
    raise DataError(
        f"{path}: expected one table ({', '.join(TABLE_SUFFIXES)}) in the folder, found "
        f"{len(tables)} ({names}); give the table itself as --path"
    )


class _Index:
    """Every image file below a folder by relative path and by name, each also without suffix."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._visible: dict[str, str] | None = None
        self.by_path: dict[str, list[str]] = {}
        self.by_name: dict[str, list[str]] = {}
        for path in image_files_below(root)[0]:
            rel, full = path.relative_to(root).as_posix(), str(path)
            for key, table in ((rel, self.by_path), (path.name, self.by_name)):
                table.setdefault(key, []).append(full)
                table.setdefault(_stem(key), []).append(full)

    def _hidden(self, rel: str) -> list[str]:
        """The image files ``rel`` names without its suffix, where the walk did not look: a
        hidden file, or a file in a hidden folder (named by its path from the image folder)."""
        path = self.root / rel
        if not path.parent.is_dir():
            return []
        return sorted(
            str(f)
            for f in path.parent.iterdir()
            if is_image_name(f.name) and _stem(f.name) == path.name and f.is_file()
        )

    def find(self, value: str) -> tuple[str | None, str]:
        """The file of one image cell and, when none or several fit, why."""
        rel = PurePosixPath(value.replace("\\", "/")).as_posix()
        if Path(value).is_absolute():
            return value, ""
        hits = self.by_path.get(rel) or ([] if "/" in rel else self.by_name.get(rel, []))
        hits = sorted(set(hits))
        if len(hits) == 1:
            return hits[0], ""
        if hits:
            named = ", ".join(str(Path(h).relative_to(self.root)) for h in hits[:4])
            return None, f"ambiguous: {len(hits)} image files fit it ({named})"
        if (self.root / rel).is_file():  # a path the walk skipped: hidden, or another case
            if is_image_name(rel):
                return str(self.root / rel), ""
            return None, f"not an image by its suffix ({', '.join(IMAGE_SUFFIXES)})"
        if any(map(_hidden_part, PurePosixPath(rel).parts)):  # one rule with or without suffix
            hits = self._hidden(rel)
            if len(hits) == 1:
                return hits[0], ""
            if hits:
                named = ", ".join(Path(h).name for h in hits[:4])
                return None, f"ambiguous: {len(hits)} image files fit it ({named})"
        if self._visible is None:  # names that print alike, for the message only
            self._visible = {visible_key(k): k for k in (*self.by_path, *self.by_name)}
        near = self._visible.get(visible_key(rel))
        return None, "no such image file" + (lookalike(rel, [near]) if near else "")


def _hidden_part(part: str) -> bool:
    """A hidden file or folder in a cell's path (``..`` leads out of the folder: not one)."""
    return is_hidden(part) and part not in (".", "..")


def _stem(name: str) -> str:
    """``name`` without an image suffix (unchanged when it has none)."""
    return name[: -len(Path(name).suffix)] if is_image_name(name) else name


def _cells(frame: pd.DataFrame, column: str, path: Path) -> pd.Series:
    """A column as stripped strings; an empty cell is an error naming its row."""
    check_labels_present(frame[column], path, column)
    return pd.Series(label_strings(frame[column]), index=frame.index)


def load_image_table(
    path: str | Path,
    *,
    images: str | Path | None = None,
    image_column: str = "image",
    label_column: str = "label",
    group_column: str | None = None,
    verify: bool | str = True,
    skip_unreadable: bool = False,
    name: str | None = None,
) -> LabelledData:
    """Read an image table.

    Args:
        path: the table (``.csv``, ``.tsv``, optionally ``.gz``, ``.parquet``) or the folder
            holding it (its one table, ``metadata.*`` / ``labels.*`` first).
        images: the image folder (default: the table's folder); see the module docstring for
            how a cell names a file.
        image_column, label_column: the columns with the image and the multiclass label.
        group_column: patient / lesion id column (rows of a group stay in one split part; an
            empty cell is a group of its own); default none, every image its own group.
        verify, skip_unreadable: see :func:`~medeval.datasets.pixels.verify_files` (a
            cell that names no single image file counts as missing).
        name: the data set's name (default: the folder's name, or the table's without suffix).

    Returns:
        ``LabelledData`` with ``files`` (N,), ``labels``, ``groups`` (when a column is given),
        ``ids`` = the image cells.
    """
    table_path = find_table(path)
    columns = [image_column, label_column, *([group_column] if group_column else [])]
    frame = read_table(table_path, columns, dtype=str)  # (Parquet keeps its own column types)
    frame = frame.reset_index(drop=True)
    cells = _cells(frame, image_column, table_path)
    labels = _cells(frame, label_column, table_path)
    root = Path(images) if images is not None else table_path.parent
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no such image folder (--images)")
    files, missing = _resolve(cells, _Index(root), root)
    where = str(table_path)
    check_one_row_per_image(files, cells.to_numpy(), frame.index, labels.to_numpy(), where=where)
    data = LabelledData(
        labels=labels.to_numpy(dtype=str),
        source="images",
        name=name or (Path(path).name if Path(path).is_dir() else table_path.name.split(".")[0]),
        files=np.asarray(files, dtype=object),
        groups=None if group_column is None else group_ids(frame[group_column]),
        ids=cells.to_numpy(dtype=str),
        meta={"path": str(table_path), "images": str(root), "group_column": group_column},
    )
    kept = np.setdiff1d(np.arange(len(frame)), [m.row for m in missing])
    return verify_files(
        data.subset(kept),
        missing=missing,
        missing_text=(
            f"{table_path}: {len(missing)} of {len(frame)} images listed there cannot be found "
            f"under {root}: "
            + first_named(missing, lambda m: f"{row_text(m.row)}: {m.path}: {m.reason}", "; ")
        ),
        verify=verify,
        skip_unreadable=skip_unreadable,
        rows=kept,
        where=where,
    )


def _resolve(cells: pd.Series, index: _Index, root: Path) -> tuple[list[str], list[SkippedFile]]:
    """(N,) file paths and a record per cell that names no single image file."""
    files, missing = [], []
    for row, value in enumerate(cells):
        found, why = index.find(value)
        files.append(found or str(root / value))
        if found is None or (why == "" and not os.path.lexists(found)):
            missing.append(SkippedFile(str(root / value), row, why or "no such image file"))
    return files, missing
