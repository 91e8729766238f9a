"""The one object every loader returns, and the error every loader raises on bad input."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from medeval.errors import InputError
from medeval.io.tables import MISSING_WORDS

__all__ = [
    "N_NAMED",
    "DataError",
    "LabelledData",
    "SkippedFile",
    "as_data_error",
    "bad_files_error",
    "bad_files_text",
    "data_root",
    "first_named",
    "load_notes",
    "read_table",
]

#: How many bad files one error names before it counts the rest.
N_NAMED = 20
_WORKER = " in DataLoader worker process "


class DataError(InputError):
    """Bad input data: ``DataError(path, problem, column=..., row=...)`` as every
    :class:`~medeval.errors.InputError`, or ``DataError(message)`` naming its file itself.

    Re-raised from a DataLoader worker's traceback, the message is cut back to its one line and
    the traceback kept as a note.
    """

    def __init__(self, *args: object, column: str | None = None, row: int | None = None) -> None:
        if len(args) == 2 and all(isinstance(a, str | Path) for a in args):  # path, problem
            super().__init__(str(args[0]), str(args[1]), column=column, row=row)
            return
        self.path, self.column, self.row = None, column, row
        if len(args) == 1 and isinstance(args[0], str) and _WORKER in args[0]:
            marker = f"{__name__}.DataError: "  # the last such line of the worker's traceback
            lines = [line for line in args[0].splitlines() if line.startswith(marker)]
            if lines:
                ValueError.__init__(self, f"{lines[-1][len(marker) :]} (in a data-loader worker)")
                self.add_note(args[0])
                return
        ValueError.__init__(self, *args)  # the message as given (it names its file)


@dataclass(frozen=True)
class SkippedFile:
    """A file left out because it could not be read (only with ``skip_unreadable=True``)."""

    path: str
    row: int | None
    reason: str

    @classmethod
    def of(cls, file: object, row: int, error: object) -> SkippedFile:
        """The record of ``file``: the reason ``error`` gives, less the file it starts with."""
        return cls(str(file), int(row), str(error).removeprefix(f"{file}: "))


def first_named(items: Sequence, text: Callable = str, sep: str = ", ", most: int = N_NAMED) -> str:
    """The first ``most`` of ``items`` as ``text`` words them, then 'and k more', so that a
    whole export is fixed in one pass."""
    named = [text(item) for item in items[:most]]
    more = [f"and {len(items) - most} more"] if len(items) > most else []
    return sep.join(named + more)


def bad_files_text(bad: list[SkippedFile], n_files: int | None = None) -> str:
    """'k of n image files cannot be used: row r: path: why; ...' (without ``n_files``: 'k
    image files …')."""
    named = first_named(
        bad, lambda s: f"{'' if s.row is None else f'row {s.row}: '}{s.path}: {s.reason}", "; "
    )
    if n_files is None:
        return f"{len(bad)} image file{'s' * (len(bad) != 1)} cannot be used: {named}"
    return f"{len(bad)} of {n_files} image files cannot be used: {named}"


#: ``LabelledData.meta`` key: class folders that hold no image (not classes of the data set).
EMPTY_CLASS_FOLDERS = "empty_class_folders"


def load_notes(data: LabelledData, listed_in: str) -> list[str]:
    """Notes on files left out with ``skip_unreadable`` (listed in ``listed_in``) and class
    folders holding no image."""
    notes = []
    if data.skipped:
        notes.append(f"left out ({listed_in} lists them): {bad_files_text(data.skipped)}")
    empty = data.meta.get(EMPTY_CLASS_FOLDERS)
    if empty:
        notes.append(
            f"class folder(s) without any image, so not classes here: {first_named(empty)}"
        )
    return notes


def bad_files_error(where: str, bad: list[SkippedFile], n_files: int) -> DataError:
    """One error naming every bad file of ``where`` (see :func:`bad_files_text`)."""
    return DataError(
        f"{where}: {bad_files_text(bad, n_files)} "
        "(fix or remove them, or leave them out with --skip-unreadable)"
    )


@dataclass
class LabelledData:
    """A multiclass data set as read from disk, before it becomes a binary task.

    Exactly one of ``X``, ``files``, ``images`` or ``text`` usually carries the inputs.

    Attributes:
        labels: (N,) original class labels as strings (they become subconcept names).
        source: loader name, e.g. ``"keel"``.
        name: data-set name, e.g. ``"abalone"``.
        X: (N, F) float features (tabular sources).
        feature_names: F column names for ``X``.
        files: (N,) image / DICOM file paths (image sources; may not exist in metadata-only mode).
        images: (N, H, W) or (N, H, W, C) uint8 pixels held in memory (MedMNIST).
        text: (N,) strings (text sources).
        groups: (N,) group id as string (patient or lesion), ``None`` when unknown.
        ids: (N,) a stable identifier per row (file name, tweet id, or the row number).
        presplit: (N,) the distributor's split (``train``/``val``/``test``) when respected.
        skipped: files left out with ``skip_unreadable=True``, never silently.
        meta: small free-form facts about loading (e.g. ``metadata_only``, ties dropped).
    """

    labels: np.ndarray
    source: str
    name: str
    X: np.ndarray | None = None
    feature_names: list[str] | None = None
    files: np.ndarray | None = None
    images: np.ndarray | None = None
    text: np.ndarray | None = None
    groups: np.ndarray | None = None
    ids: np.ndarray | None = None
    presplit: np.ndarray | None = None
    skipped: list[SkippedFile] = field(default_factory=list)
    meta: dict = field(default_factory=dict)

    _ROW_FIELDS = ("labels", "X", "files", "images", "text", "groups", "ids", "presplit")

    def __post_init__(self) -> None:
        self.labels = np.asarray(self.labels).astype(str)
        n = len(self.labels)
        if self.ids is None:
            self.ids = np.arange(n).astype(str)
        for name in ("groups", "ids", "presplit"):
            if getattr(self, name) is not None:
                setattr(self, name, np.asarray(getattr(self, name)).astype(str))
        for name in self._ROW_FIELDS:
            value = getattr(self, name)
            if value is not None and not isinstance(value, np.ndarray):
                value = np.asarray(value, dtype=object if name in ("files", "text") else None)
                setattr(self, name, value)
            if value is not None and len(value) != n:
                raise DataError(
                    f"{self.source}/{self.name}: field {name!r} has {len(value)} rows, "
                    f"labels have {n}"
                )

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def kind(self) -> str:
        """Which input the rows carry: ``tabular``, ``image``, ``array_image`` or ``text``."""
        inputs = {
            "tabular": self.X,
            "array_image": self.images,
            "image": self.files,
            "text": self.text,
        }
        return next((kind for kind, value in inputs.items() if value is not None), "labels_only")

    def subset(self, idx: np.ndarray) -> LabelledData:
        """Rows ``idx`` (integer positions), keeping every per-row field aligned."""
        idx = np.asarray(idx, dtype=np.intp)
        changes = {
            name: getattr(self, name)[idx]
            for name in self._ROW_FIELDS
            if getattr(self, name) is not None
        }
        return dataclasses.replace(
            self, **changes, skipped=list(self.skipped), meta=dict(self.meta)
        )


def data_root(subfolder: str = "") -> Path:
    """``$MEDEVAL_DATA/subfolder`` (default ``../shared/data`` next to the working folder)."""
    root = Path(os.environ.get("MEDEVAL_DATA", Path.cwd().parent / "shared" / "data"))
    return root / subfolder if subfolder else root


def find_file(path: str | Path, patterns: Sequence[str], what: str) -> Path:
    """``path`` itself when it is a file, else the first file of folder ``path`` that matches
    ``patterns`` (tried in order, each match sorted).

    Raises:
        FileNotFoundError: naming ``path`` and ``what``.
    """
    path = Path(path)
    if path.is_file():
        return path
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder")
    for pattern in patterns:
        found = sorted(p for p in path.glob(pattern) if p.is_file())
        if found:
            return found[0]
    raise FileNotFoundError(f"{path}: no {what}")


def read_table(
    path: str | Path,
    columns: Sequence[str] = (),
    filled: Sequence[str] = (),
    known: Sequence[str] | None = None,
    **csv_options,
) -> pd.DataFrame:
    """A data set's table read by :func:`medeval.io.tables.read_frame`
    (:data:`~medeval.io.tables.DATASET_SUFFIXES` or no suffix, unless ``csv_suffixes`` is given),
    errors as :class:`DataError`; ``csv_options``: :func:`read_frame` options of the loader.

    Checked in this order: it has ``columns``, no cell of ``filled`` is empty, and every label of
    ``filled[0]`` is one of ``known``."""
    from medeval.io.tables import DATASET_SUFFIXES, read_frame

    with as_data_error():
        table = read_frame(path, **{"csv_suffixes": (*DATASET_SUFFIXES, ""), **csv_options})
    require_columns(table, list(columns), path)
    for column in filled:
        check_labels_present(table[column], path, column)
    if known is not None:
        check_known_labels(table[filled[0]].str.strip(), known, path, filled[0])
    return table


@contextmanager
def as_data_error() -> Iterator[None]:
    """An :class:`~medeval.errors.InputError` raised as the loaders' error type, with the same
    message."""
    try:
        yield
    except DataError:
        raise
    except InputError as err:
        raise DataError(str(err), column=err.column, row=err.row) from None


def require_columns(frame: pd.DataFrame, columns: list[str], path: str | Path) -> None:
    """Raise ``DataError`` naming the file and the first missing column."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise DataError(
            f"{path}: missing column {missing[0]!r} (columns present: {list(frame.columns)})"
        )


def label_strings(values: pd.Series | np.ndarray) -> np.ndarray:
    """Labels as stripped strings; numbers that are whole print without ``.0``."""
    series = pd.Series(values)
    if pd.api.types.is_float_dtype(series) and np.all(np.mod(series.dropna(), 1) == 0):
        series = series.astype("Int64")
    return series.astype(str).str.strip().to_numpy(dtype=object).astype(str)


def group_ids(values: pd.Series) -> np.ndarray:
    """(N,) patient / lesion ids as stripped strings, ``""`` for a missing cell (a group of its
    own wherever groups are read, :func:`medeval.splits.group_codes_of`)."""
    ids = label_strings(values)
    ids[pd.isna(values).to_numpy() | np.isin(np.char.lower(ids), ("", *MISSING_WORDS))] = ""
    return ids


def check_labels_present(labels: pd.Series, path: str | Path, column: str) -> None:
    """Raise ``DataError`` naming the first row whose label is missing or empty."""
    bad = labels.isna() | (labels.astype(str).str.strip() == "")
    if bad.any():
        pos = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataError(f"{path}: {row_text(labels.index[pos])}: empty value in column {column!r}")


def check_known_labels(
    labels: pd.Series, known: list[str] | set[str], path: str | Path, column: str
) -> None:
    """Raise ``DataError`` naming the first row whose label is not one of ``known``."""
    bad = ~labels.astype(str).isin(set(known))
    if bad.any():
        pos = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataError(
            f"{path}: {row_text(labels.index[pos])}: label {labels.iloc[pos]!r} in column "
            f"{column!r} is not one of the known labels {sorted(known)}"
        )


def row_text(row: int) -> str:
    """'row 3 (line 5)': 0-based data row and the 1-based file line after one header line."""
    return f"row {int(row)} (line {int(row) + 2})"
