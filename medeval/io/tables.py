"""One reader for user tables (CSV / TSV, optionally gzipped, and Parquet) and typed reading of
their numeric columns; errors name the file, column and first bad row."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from medeval.errors import InputError

__all__ = [
    "CSV_SUFFIXES",
    "DATASET_SUFFIXES",
    "MISSING_CELLS",
    "MISSING_WORDS",
    "PARQUET_SUFFIXES",
    "PREDICTION_SUFFIXES",
    "check_header",
    "feature_matrix",
    "given_frame",
    "is_missing",
    "is_parquet",
    "not_a_number",
    "not_utf8",
    "numeric_column",
    "read_frame",
    "table_kind",
]

#: Suffixes read as delimited text (tab-separated when the name holds ``.tsv``).
CSV_SUFFIXES = (".csv", ".csv.gz", ".tsv", ".tsv.gz")
#: A data set's table (labels, metadata) may also be ``.tab`` (tab-separated) or have no suffix
#: (comma-separated, as the HAM10000 metadata file is distributed).
DATASET_SUFFIXES = (*CSV_SUFFIXES, ".tab", ".tab.gz")
#: Suffixes read as Parquet.
PARQUET_SUFFIXES = (".parquet", ".pq")
#: A predictions or reference file may also be ``.txt`` (comma-separated).
PREDICTION_SUFFIXES = (*CSV_SUFFIXES, ".txt")
#: Besides an empty cell, the words a user's table may write for a missing value (any case,
#: spaces around ignored): every reader takes these, and only these, as missing.
MISSING_WORDS = ("nan", "na", "null", "none")
#: The cells a parser is told are missing: the empty cell and :data:`MISSING_WORDS` as written
#: in lower, upper or title case (``NaN`` too).
MISSING_CELLS = (
    "",
    "NaN",
    *(f(w) for w in MISSING_WORDS for f in (str.lower, str.upper, str.title)),
)


def is_parquet(path: str | Path) -> bool:
    """Whether ``path`` names a Parquet file (``.parquet`` or ``.pq``)."""
    return Path(path).name.lower().endswith(PARQUET_SUFFIXES)


def table_kind(path: str | Path, csv_suffixes: tuple[str, ...] = CSV_SUFFIXES) -> str:
    """``"parquet"``, ``"tsv"`` or ``"csv"``: how every reader of user tables reads ``path``.

    Raises:
        InputError: a suffix that is neither.
    """
    name = Path(path).name.lower()
    if is_parquet(path):
        return "parquet"
    if name.endswith(tuple(s for s in csv_suffixes if s)):
        return "tsv" if name.endswith((".tsv", ".tsv.gz", ".tab", ".tab.gz")) else "csv"
    if "" in csv_suffixes and not Path(name).suffix:
        return "csv"  # a name without a suffix, where the caller allows it
    shown = ", ".join(s for s in csv_suffixes if s and not s.endswith(".gz"))
    raise InputError(path, f"unknown format: use .parquet or {shown} (optionally .gz)")


def is_missing(text: object) -> bool:
    """Whether a cell's text means a missing value: empty, or one of :data:`MISSING_WORDS`."""
    word = str(text).strip().strip("'\"").strip().lower()
    return word == "" or word in MISSING_WORDS


def read_frame(
    path: str | Path,
    *,
    as_text: bool = False,
    csv_suffixes: tuple[str, ...] = CSV_SUFFIXES,
    **csv_options,
) -> pd.DataFrame:
    """The table in ``path``; ``as_text`` keeps every CSV cell as written (Parquet keeps its
    types). ``csv_suffixes``: names read as text tables (``""``: no suffix, comma-separated);
    ``csv_options``: for :func:`pandas.read_csv` (missing cells default to :data:`MISSING_CELLS`).

    Raises:
        InputError: the file is missing, has an unknown suffix or cannot be parsed.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "file not found")
    kind = table_kind(path, csv_suffixes)
    try:
        if kind == "parquet":
            frame = pd.read_parquet(path)
            check_header(path, frame.columns)
            return frame
        if kind in ("csv", "tsv"):
            sep = "\t" if kind == "tsv" else ","
            header = pd.read_csv(path, sep=sep, header=None, nrows=1, dtype=str)
            check_header(path, header.iloc[0].fillna("") if len(header) else [])
            if as_text:
                return pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, **csv_options)
            missing = {"na_values": list(MISSING_CELLS), "keep_default_na": False}
            return pd.read_csv(path, sep=sep, **{**missing, **csv_options})
    except InputError:
        raise
    except UnicodeDecodeError as err:
        raise not_utf8(path, err) from err
    except pd.errors.EmptyDataError as err:
        raise InputError(path, "empty file: no header and no rows") from err
    except Exception as err:  # the parser's own message is the useful part
        raise InputError(path, f"cannot be read: {' '.join(str(err).split())}") from err


def not_utf8(path: str | Path, err: Exception) -> InputError:
    """The error of a text table that is not UTF-8: the row (``None``: the header), the column
    and the cell of its first bad byte, shown with that byte escaped (``'caf\\xe9'``)."""
    import csv
    import gzip

    path = Path(path)
    try:
        opener = gzip.open if path.name.lower().endswith(".gz") else open
        with opener(path, "rb") as f:
            raw = f.read()
        raw.decode("utf-8")
    except UnicodeDecodeError as found:
        at, reason = found.start, found.reason
    except OSError:
        at = None
    else:
        at = None
    if at is None:  # the parser's word is all there is
        said = f"{err.reason} at byte {err.start}" if isinstance(err, UnicodeDecodeError) else err
        return InputError(path, f"not UTF-8 text ({said}); save it as UTF-8")
    start = raw.rfind(b"\n", 0, at) + 1
    end = raw.find(b"\n", at)
    line = raw[start : len(raw) if end < 0 else end].rstrip(b"\r")
    text = line.decode("utf-8", "surrogateescape")
    sep = "\t" if table_kind(path, DATASET_SUFFIXES) == "tsv" else ","
    cells = next(csv.reader([text], delimiter=sep), [text])
    j = next((k for k, c in enumerate(cells) if any(map(_undecoded, c))), -1)
    cell = cells[j] if j >= 0 else text
    first = next(k for k, ch in enumerate(cell) if _undecoded(ch)) if j >= 0 else 0
    if len(cell) > 40:  # a long cell (or a binary file's "line"): around the byte
        cell = cell[max(first - 15, 0) : first + 15]
    row = raw.count(b"\n", 0, at)
    head = raw.split(b"\n", 1)[0].rstrip(b"\r").decode("utf-8", "replace")
    names = next(csv.reader([head], delimiter=sep), [])
    where = " in the header"
    if row:
        where = f" in column {names[j]!r}" if 0 <= j < len(names) else ""
    # repr escapes what does not print; an undecoded byte 0xe9 is shown as \xe9
    value = re.sub(r"\\udc([89a-f][0-9a-f])", r"\\x\1", repr(cell))
    return InputError(
        path,
        f"not UTF-8 text (line {row + 1}{where}: {value}, {reason} 0x{raw[at]:02x}); save it "
        "as UTF-8",
        row=row or None,
    )


def _undecoded(ch: str) -> bool:
    """A byte that was not UTF-8, kept by ``surrogateescape``."""
    return "\udc80" <= ch <= "\udcff"


def given_frame(frame: pd.DataFrame, name: str | Path) -> pd.DataFrame:
    """A table handed over in memory, as :func:`read_frame` gives a Parquet file's (index
    dropped, header checked), named ``name`` in messages.

    Raises:
        InputError: a column name that is not text, repeated or padded with spaces.
    """
    for c in frame.columns:
        if not isinstance(c, str):
            raise InputError(name, "column names must be text", column=repr(c))
    check_header(name, frame.columns)
    return frame.reset_index(drop=True)


def check_header(path: str | Path, names: Iterable[object]) -> None:
    """Raise :class:`InputError` for a duplicated or padded column name (pandas would rename
    the second ``x`` to ``x.1``, and ``" label"`` is not ``label``) or a header of one column
    that holds semicolons (a file separated by ``;``)."""
    names = [str(n) for n in names]
    if len(names) == 1 and ";" in names[0]:  # a spreadsheet's CSV where decimals take commas
        raise InputError(
            path, f"the header is one column, {names[0]!r}: save the file with commas, not ';'"
        )
    counts = Counter(names)
    for name in names:
        if counts[name] > 1:
            raise InputError(path, f"appears {counts[name]} times in the header", column=name)
        if name != name.strip():
            raise InputError(
                path, f"the name has spaces around it (did you mean {name.strip()!r}?)", column=name
            )


def numeric_column(path: str | Path, frame: pd.DataFrame, column: str) -> np.ndarray:
    """``frame[column]`` as float64 (empty cells NaN), or an :class:`InputError` naming the
    file, column and first bad row with the cell as written (a cell that is not a number, an
    infinite one); timestamp, boolean and Parquet text columns are refused by type."""
    values = frame[column]
    if isinstance(values, pd.DataFrame):
        raise InputError(path, "appears several times in the header", column=column)
    dtype = values.dtype
    if pd.api.types.is_bool_dtype(dtype):
        raise InputError(path, "holds booleans (true/false), not numbers", column=column)
    if pd.api.types.is_datetime64_any_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype):
        raise InputError(path, f"holds {dtype} timestamps, not numbers", column=column)
    if is_parquet(path) and not pd.api.types.is_numeric_dtype(dtype):
        raise InputError(path, f"is stored as {dtype} (text), not as numbers", column=column)
    if pd.api.types.is_numeric_dtype(dtype):
        out = values.to_numpy(dtype=np.float64, na_value=np.nan)
        bad_text = np.zeros(len(out), dtype=bool)
    else:
        text = values.astype("string").str.strip()
        out = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        bad_text = np.isnan(out) & ~(text.isna() | (text == "")).to_numpy()
        bad_text &= ~text.str.lower().isin(MISSING_WORDS).to_numpy()
    problems = [(bad_text, "is not a number"), (np.isinf(out), "is not a finite number")]
    found = [(int(np.argmax(mask)), problem) for mask, problem in problems if mask.any()]
    if found:
        row, problem = min(found)
        if problem == "is not a number":
            shown = not_a_number(values.iloc[row])
        else:
            shown = f"{str(values.iloc[row])!r} {problem}"
        raise InputError(path, shown, column=column, row=row + 1)
    return out


#: A number written with a decimal comma (``0,714``, ``1.234,5``) or thousands separators
#: (``1,234``, ``12,345.6``): read as text, it is no number to pandas.
_COMMA_NUMBER = re.compile(r"[+-]?(\d{1,3}(,\d{3})+(\.\d*)?|\d*,\d+|\d{1,3}(\.\d{3})+,\d*)")


def not_a_number(cell: object) -> str:
    """What is wrong with a cell that is not a number, for an :class:`InputError`: a number
    written with a decimal comma or thousands separators is named as such."""
    text = str(cell).strip()
    if _COMMA_NUMBER.fullmatch(text):
        return (
            f"{text!r} is a number written with a decimal comma or a thousands separator: "
            "write numbers with a decimal point and no separators (e.g. 0.714, 1234)"
        )
    return f"{str(cell)!r} is not a number"


def feature_matrix(path: str | Path, frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """The feature columns of a data-set table as ``(N, F)`` float, the rule of every tabular
    loader: numbers (empty cells NaN, booleans 0 / 1), or category codes for a column of text
    only. An :class:`InputError` names a stray non-number in a column of numbers, a number with
    a decimal comma or thousands separator, a timestamp column or an infinite number."""
    X = np.empty((len(frame), len(columns)), dtype=np.float64)
    for j, column in enumerate(columns):
        values = frame[column]
        dtype = values.dtype
        if pd.api.types.is_bool_dtype(dtype):
            X[:, j] = values.to_numpy(dtype=np.float64)
        elif pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
            X[:, j] = _text_feature(path, values, str(column))
        else:
            X[:, j] = numeric_column(path, frame, column)
    return X


def _text_feature(path: str | Path, values: pd.Series, column: str) -> np.ndarray:
    """A column read as text: its numbers, or the category codes of a column of text only."""
    text = values.astype("string").str.strip()
    given = (text.notna() & (text != "")).to_numpy()
    parsed = pd.to_numeric(text, errors="coerce")
    numbers = parsed.notna().to_numpy()
    comma = given & text.fillna("").str.fullmatch(_COMMA_NUMBER.pattern).to_numpy(dtype=bool)
    if comma.any():
        bad = comma
    elif (given & numbers).any():
        bad = given & ~numbers
    else:  # text only: categories
        codes = pd.Categorical(text.where(pd.Series(given, index=text.index))).codes
        return np.where(codes < 0, np.nan, codes).astype(np.float64)
    if bad.any():
        row = int(np.argmax(bad))
        problem = not_a_number(values.iloc[row])
        if not comma.any():
            problem += " (the column's other cells are)"
        raise InputError(path, problem, column=column, row=row + 1)
    return parsed.to_numpy(dtype=np.float64, na_value=np.nan)


def finite_matrix(
    frame: pd.DataFrame, columns: list[str], path: str | Path, *, hint: str = ""
) -> np.ndarray:
    """``(N, len(columns))`` float64 values of ``columns``; :class:`InputError` naming the
    column and row (1-based) of the first cell that is not a finite number (``hint`` follows
    the message, e.g. ``" (features must be numeric)"``)."""
    X = np.empty((len(frame), len(columns)))
    for j, c in enumerate(columns):
        values = pd.to_numeric(frame[c], errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(values)
        if bad.any():
            i = int(np.argmax(bad))
            cell = frame[c].iloc[i]
            comma = _COMMA_NUMBER.fullmatch(str(cell).strip()) is not None
            msg = not_a_number(cell) if comma else f"{cell!r} is not a finite number{hint}"
            raise InputError(path, msg, column=c, row=i + 1)
        X[:, j] = values
    return X
