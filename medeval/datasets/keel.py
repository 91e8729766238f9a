"""KEEL ``.dat`` files, with or without the ``@relation/@attribute/@data`` header; label last."""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pandas as pd

from medeval.datasets.base import (
    DataError,
    LabelledData,
    as_data_error,
    check_labels_present,
    label_strings,
)
from medeval.io.tables import feature_matrix

__all__ = ["dataset_names", "load_keel"]

# "@attribute Name real [0, 1]", "@attribute 'Sepal length' real", "@attribute Class{a, b}"
_ATTRIBUTE = re.compile(r"""@attribute\s+(?:'([^']*)'|"([^"]*)"|([^\s{\[]+))""", re.IGNORECASE)


def dataset_names(path: str | Path) -> list[str]:
    """The data sets at ``path``: the file's, or those of a folder of ``.dat`` files (sorted)."""
    path = Path(path)
    if path.is_file():
        return [path.stem]
    if not path.is_dir():
        raise FileNotFoundError(f"{path}: no such KEEL folder")
    return sorted(p.stem for p in path.glob("*.dat"))


def _resolve(path: str | Path, name: str | None) -> Path:
    path = Path(path)
    if path.is_dir():
        if name is None:
            raise DataError(f"{path}: a folder of KEEL files needs a data-set name")
        path = path / f"{name}.dat"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such KEEL file")
    return path


def _split_header(text: str, path: Path) -> tuple[list[str] | None, str]:
    """Attribute names from the header (``None`` without one) and the data block."""
    lines = text.splitlines()
    if not lines or not lines[0].lstrip().startswith("@"):
        return None, text
    names: list[str] = []
    for i, line in enumerate(lines):
        stripped = line.strip()
        lower = stripped.lower()
        if lower.startswith("@attribute"):
            match = _ATTRIBUTE.match(stripped)
            if match is None:
                raise DataError(f"{path}: line {i + 1}: malformed @attribute line")
            names.append(next(g for g in match.groups() if g is not None))
        elif lower.startswith("@data"):
            return names or None, "\n".join(lines[i + 1 :])
    raise DataError(f"{path}: header has no @data line")


def load_keel(path: str | Path, *, name: str | None = None) -> LabelledData:
    """Read one KEEL data set.

    Args:
        path: a ``.dat`` file, or a folder holding ``<name>.dat``.
        name: data-set name when ``path`` is a folder.

    Returns:
        ``LabelledData`` with ``X`` (N, F) float (columns of text only become category codes,
        ``?`` becomes NaN; see :func:`numeric_features`) and ``labels`` (N,) from the last
        column.
    """
    file = _resolve(path, name)
    text = file.read_text()
    if not text.strip():
        raise DataError(f"{file}: the file is empty (no KEEL header, no rows)")
    names, body = _split_header(text, file)
    if not any(line.strip() and not line.lstrip().startswith("%") for line in body.splitlines()):
        raise DataError(f"{file}: no data rows (nothing after the header's @data line)")
    try:
        frame = pd.read_csv(
            io.StringIO(body),
            header=None,
            skipinitialspace=True,
            na_values=["?"],
            dtype=str,
            comment="%",
        )
    except (ValueError, pd.errors.ParserError) as exc:
        raise DataError(f"{file}: cannot parse KEEL rows: {exc}") from exc
    if frame.shape[1] < 2:
        raise DataError(f"{file}: need at least one feature column and a label column")
    if names is not None and len(names) != frame.shape[1]:
        raise DataError(
            f"{file}: header declares {len(names)} attributes but rows have {frame.shape[1]}"
        )
    columns = names or [f"x{i}" for i in range(frame.shape[1] - 1)] + ["class"]
    frame.columns = columns
    label_col = columns[-1]
    check_labels_present(frame[label_col], file, label_col)
    X, feature_names = numeric_features(file, frame.drop(columns=label_col))
    return LabelledData(
        labels=label_strings(frame[label_col]),
        source="keel",
        name=name or file.stem,
        X=X,
        feature_names=feature_names,
        meta={"path": str(file), "header": names is not None},
    )


def numeric_features(path: str | Path, frame: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    """(N, F) float array of the feature columns (:func:`medeval.io.tables.feature_matrix`):
    numbers, or category codes for a column of text only (F unchanged, for a random forest)."""
    with as_data_error():
        return feature_matrix(path, frame, list(frame.columns)), [str(c) for c in frame.columns]
