"""One reader for user tables (CSV / TSV, optionally gzipped, and Parquet) as pandas frames.

Errors are :class:`~medeval.errors.InputError` naming the file, so every tool reports an
unreadable or unknown file the same way.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from medeval.errors import InputError

__all__ = ["CSV_SUFFIXES", "is_parquet", "read_frame"]

#: Suffixes read as delimited text (tab-separated when the name holds ``.tsv``).
CSV_SUFFIXES = (".csv", ".csv.gz", ".tsv", ".tsv.gz")


def is_parquet(path: str | Path) -> bool:
    """Whether ``path`` names a Parquet file (``.parquet`` or ``.pq``)."""
    return Path(path).name.lower().endswith((".parquet", ".pq"))


def read_frame(
    path: str | Path, *, as_text: bool = False, csv_suffixes: tuple[str, ...] = CSV_SUFFIXES
) -> pd.DataFrame:
    """The table in ``path``; ``as_text`` keeps every CSV cell as the text the user wrote
    (Parquet keeps its stored types either way). ``csv_suffixes``: the names read as text
    tables (a predictions file also accepts ``.txt``).

    Raises:
        InputError: the file is missing, has an unknown suffix or cannot be parsed.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "file not found")
    name = path.name.lower()
    try:
        if is_parquet(path):
            return pd.read_parquet(path)
        if name.endswith(csv_suffixes):
            sep = "\t" if ".tsv" in name else ","
            if as_text:
                return pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False)
            return pd.read_csv(path, sep=sep)
    except Exception as err:  # the parser's own message is the useful part
        raise InputError(path, f"cannot be read: {err}") from err
    raise InputError(path, "unknown format: use .parquet, .csv or .tsv (optionally .gz)")
