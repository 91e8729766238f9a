"""Embedding tables (``f0000…`` feature columns, ``label``, ``group``; other columns kept):
reading one (the ``python -m medeval.embed`` format) and writing one (docs/cli.md)."""

from __future__ import annotations

import io
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from medeval.errors import InputError
from medeval.io import atomic
from medeval.io.features import FeatureTable, binary_column

__all__ = [
    "backbone_note",
    "class_of_rows",
    "table_record",
    "thumbnail",
    "write_table",
]


def class_of_rows(table: FeatureTable, positive: str | None) -> np.ndarray:
    """``(N,)`` classes: the ``y`` column (0/1), or ``label == positive``.

    Raises:
        InputError: neither usable; a ``y`` value that is not 0/1; ``positive`` not a label.
    """
    if table.has("y") and positive is None:
        return binary_column(table, "y")
    if not table.has("label"):
        raise InputError(table.path, "needs the class of every row: a 'y' column (0/1) or 'label'")
    if positive is None:
        raise InputError(
            table.path,
            "has a 'label' column but no 'y' column: say which label is class 1 (--positive)",
            column="label",
        )
    labels = table.rest["label"].astype(str).to_numpy()
    if positive not in set(labels):
        known = ", ".join(sorted(set(labels))[:20])
        raise InputError(
            table.path, f"no row has label {positive!r}; labels: {known}", column="label"
        )
    return (labels == positive).astype(np.int64)


def write_table(folder: str | Path, name: str, frame: pd.DataFrame, record: dict[str, Any]) -> Path:
    """``<folder>/<name>.parquet`` and ``<name>.embedding.json``, each written atomically."""
    folder = Path(folder)
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False)
    table = atomic.write_bytes(folder / f"{name}.parquet", buf.getvalue())
    atomic.write_json(
        folder / f"{name}.embedding.json", {"name": name, "rows": len(frame), **record}
    )
    return table


def table_record(table: str | Path) -> dict[str, Any] | None:
    """The ``<name>.embedding.json`` that :func:`write_table` wrote beside ``table``
    (``<name>.parquet``), or None when there is none or it cannot be read."""
    import json

    path = Path(table).with_name(f"{Path(table).stem}.embedding.json")
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def backbone_note(table: str | Path) -> str | None:
    """Which backbone made an image embedding table and where its weights came from, as its
    record says ("RANDOMLY INITIALISED" in capitals), or None when the record does not say."""
    record = table_record(table)
    if not record or "model" not in record or "weights_source" not in record:
        return None
    return f"{Path(table).name}: backbone {record['model']}, weights {record['weights_source']}"


def thumbnail(base: Path, path: Any, size: int) -> np.ndarray | None:
    """A small greyscale/RGB array of an image file (``path`` relative to ``base`` unless
    absolute), or None when it cannot be read."""
    from PIL import Image

    p = Path(str(path))
    p = p if p.is_absolute() else base / p
    bomb = (Image.DecompressionBombError, Image.DecompressionBombWarning)
    try:
        with warnings.catch_warnings():  # a possible decompression bomb is no thumbnail
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(p) as im:
                im = im.convert("L" if im.mode in ("L", "I", "I;16", "F") else "RGB")
                im.thumbnail((size, size))
                return np.asarray(im)
    except (OSError, ValueError, *bomb):
        return None
