"""Predictions files (``y_true``, ``y_score`` and/or ``y_pred``, ``subconcept``, ``q_<name>``;
docs/cli.md) and train sizes, read into checked tables; errors name file, column, row."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from medeval._validation import TypeOf, validate_params
from medeval.errors import InputError
from medeval.io.tables import (
    MISSING_CELLS,
    PREDICTION_SUFFIXES,
    check_header,
    given_frame,
    is_missing,
    is_parquet,
    not_utf8,
    read_frame,
    table_kind,
)
from medeval.names import lookalike, shown
from medeval.weights import Utilities, utilities_from_train_sizes

__all__ = [
    "POSTERIOR_PREFIX",
    "PredictionTable",
    "example_paths",
    "read_predictions",
    "read_predictions_frame",
    "read_train_sizes",
]


POSTERIOR_PREFIX = "q_"


@dataclass
class PredictionTable:
    """Test predictions read from a file (``path``: what messages name); arrays ``(N,)`` (labels
    ``int8``, ``subconcept`` categorical), posteriors ``(N, S)``. ``groups`` (clusters resampled
    whole) and ``strata`` are set only by :func:`medeval.evaluation.evaluate_predictions`.
    """

    path: Path
    y_true: np.ndarray
    y_score: np.ndarray | None
    y_pred: np.ndarray | None
    subconcept: pd.Categorical | None
    posteriors: pd.DataFrame | None  # columns = subconcept names
    groups: np.ndarray | None = None
    strata: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.y_true)


def _is_csv(path: Path) -> bool:
    """Delimited text (the one rule of user tables, :func:`medeval.io.tables.table_kind`)."""
    return not is_parquet(path) and path.name.lower().endswith(PREDICTION_SUFFIXES)


def _parse(path: Path):
    """pyarrow's parse options: tab-separated for ``.tsv``, else commas."""
    import pyarrow.csv as pcsv

    return pcsv.ParseOptions(
        delimiter="\t" if table_kind(path, PREDICTION_SUFFIXES) == "tsv" else ","
    )


def _read_table(path: Path, columns: list[str] | None = None, as_text: bool = False):
    """The file as a :class:`pyarrow.Table` (types inferred, or every column as text)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    if not path.is_file():
        raise InputError(path, "file not found")
    table_kind(path, PREDICTION_SUFFIXES)  # an unknown suffix is named as every reader names it
    try:
        if is_parquet(path):
            import pyarrow.parquet as pq  # only here: 15-20 ms a CSV reading does not need

            return pq.read_table(path, columns=columns)
        convert = pcsv.ConvertOptions(include_columns=columns or [])  # text: table_kind said so
        if as_text:  # raw cell text, for error messages; empty cells stay ""
            convert.column_types = dict.fromkeys(columns or [], pa.string())
            convert.strings_can_be_null = False
            convert.null_values = []
        else:  # the one vocabulary of missing cells of every reader
            convert.null_values = list(MISSING_CELLS)
        table = pcsv.read_csv(path, parse_options=_parse(path), convert_options=convert)
        table.column_names  # noqa: B018 - names that are not UTF-8 fail here, not later
        return table
    except UnicodeDecodeError as err:
        raise not_utf8(path, err) from err
    except Exception as err:  # the parser's own message is the useful part
        if "invalid UTF8" in str(err):  # pyarrow's, of a text cell
            raise not_utf8(path, err) from err
        raise InputError(path, f"cannot be read: {err}") from err


def _cell_text(path: Path, table, raw: str, row: int) -> str:
    """The bad cell as the user wrote it (CSV: the raw text; Parquet: the stored value) in the
    column named ``raw`` in the file."""
    if _is_csv(path):
        return repr(str(_read_table(path, [raw], as_text=True).column(0)[row].as_py()))
    return repr(table.column(raw)[row].as_py())


def _numeric(path: Path, table, raw: str, column: str) -> np.ndarray:
    """Column as float64; names the first row (1-based, after the header) that is not a number
    (labels: not 0 or 1), or by name a timestamp, a boolean score or a (Parquet) text column."""
    import pyarrow as pa

    col = table.column(raw)  # its name in the file; ``column`` is the name in messages
    if pa.types.is_temporal(col.type):
        raise InputError(path, f"holds {col.type} timestamps, not numbers", column=column)
    if pa.types.is_boolean(col.type) and column not in _LABELS:
        raise InputError(path, "holds booleans (true/false), not scores", column=column)
    text = pa.types.is_string(col.type) or pa.types.is_large_string(col.type)
    if not _is_csv(path) and (text or pa.types.is_binary(col.type) or pa.types.is_nested(col.type)):
        raise InputError(path, f"is stored as {col.type}, not as numbers", column=column)
    if _is_number(col.type, labels=True) or pa.types.is_null(col.type):
        values = col.cast(pa.float64(), safe=False).to_numpy(zero_copy_only=False)
    else:  # text: some cell is not a plain number (or is padded); let pandas decide per cell
        values = pd.to_numeric(
            pd.Series(col.to_numpy(zero_copy_only=False)), errors="coerce"
        ).to_numpy(dtype=np.float64)
    bad = np.isnan(values)
    if bad.any():
        i = int(np.argmax(bad))
        text = _cell_text(path, table, raw, i)
        missing = is_missing(text)
        problem = "missing value" if missing else f"{text} is not a number"
        raise InputError(path, problem, column=column, row=i + 1)
    infinite = np.isinf(values)
    if infinite.any():  # an overflowed score or posterior, never a usable value
        i = int(np.argmax(infinite))
        raise InputError(path, f"{values[i]} is not a finite number", column=column, row=i + 1)
    if column in _LABELS:
        bad = (values != 0) & (values != 1)
        if bad.any():
            i = int(np.argmax(bad))
            text = _cell_text(path, table, raw, i)
            raise InputError(path, f"{text} is not 0 or 1", column=column, row=i + 1)
    return values


def _is_number(dtype, *, labels: bool) -> bool:
    """Integers, floats, or booleans where ``labels``: read as float64 by a cast."""
    import pyarrow as pa

    bools = labels and pa.types.is_boolean(dtype)
    return pa.types.is_integer(dtype) or pa.types.is_floating(dtype) or bools


@validate_params(
    {
        "path": [TypeOf(str, Path, pd.DataFrame, desc="a path or a DataFrame")],
        "utilities": [TypeOf(Utilities, desc="Utilities"), None],
        "name": [TypeOf(str, desc="a str")],
    }
)
def read_predictions(
    path: str | Path | pd.DataFrame,
    utilities: Utilities | None = None,
    *,
    name: str = "",
) -> PredictionTable:
    """Read and validate a predictions file (see the module docstring for the columns), or a
    DataFrame with those columns, checked as the same table in a Parquet file would be and
    named ``name`` in messages (default ``"DataFrame"``).

    Files are read in typed chunks (:data:`READ_BUDGET` bounds one chunk); a file that reading
    cannot take is read again whole, to name the bad cell. With ``utilities``, subconcept names
    and posterior columns are checked against the train sizes.

    Raises:
        InputError: a missing column, a non-numeric or out-of-range value, an unknown
            subconcept or a posterior row that is not a distribution; the message names the
            file, column and first bad row (rows count from 1 after the header).
    """
    if isinstance(path, pd.DataFrame):  # Parquet's stored types: what to_parquet would keep
        frame, path = path, Path(name or "DataFrame")
        cols = _read_whole(path, _arrow(given_frame(frame, path), path))
    else:
        path = Path(path)
        cols = _read_typed(path, READ_BUDGET)
    if cols is None:  # the whole-table reading quotes the bad cell (or takes what typing can't)
        cols = _read_whole(path)
    y_true = cols["y_true"]
    subconcept = cols.get("subconcept")
    if subconcept is not None and utilities is not None:
        _check_subconcepts(path, subconcept, y_true, utilities)
    q_cols, q = cols["q_cols"], cols["q"]
    posteriors = None
    if q_cols:
        names = [c[len(POSTERIOR_PREFIX) :] for c in q_cols]
        _check_posteriors(path, q, q_cols, names, utilities)
        posteriors = pd.DataFrame(q, columns=names, copy=False)
    return PredictionTable(
        path, y_true, cols.get("y_score"), cols.get("y_pred"), subconcept, posteriors
    )


def _arrow(frame: pd.DataFrame, path: Path):
    """A DataFrame as the :class:`pyarrow.Table` its Parquet file would hold."""
    import pyarrow as pa

    try:
        return pa.Table.from_pandas(frame, preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as err:  # e.g. a column of mixed objects
        raise InputError(path, f"cannot be read: {err}") from err


def _read_whole(path: Path, table=None) -> dict:
    """Every column of the file (or of its ``table``), types inferred; errors name the bad cell."""
    table = _read_table(path) if table is None else table
    wanted = _columns(path, table.column_names)
    if table.num_rows == 0:
        raise InputError(path, "has no rows")
    return _gather(path, wanted, [table.select(list(wanted))], strict=True)


#: Default bytes of one chunk's buffers while a predictions file is read.
READ_BUDGET = 64 * 2**20

_NUMERIC = ("y_true", "y_score", "y_pred")
_LABELS = ("y_true", "y_pred")


def _columns(path: Path, names: list[str]) -> dict[str, str]:
    """``{name in the file: stripped name}`` of the predictions columns; InputError if lacking."""
    columns = [str(c).strip() for c in names]
    check_header(path, columns)  # a name twice, a file separated by ';'
    if "y_true" not in columns:
        raise InputError(
            path, f"missing column 'y_true' (columns: {', '.join(columns)})", column="y_true"
        )
    if "y_score" not in columns and "y_pred" not in columns:
        raise InputError(path, "needs a 'y_score' or a 'y_pred' column", column="y_score")
    wanted = (*_NUMERIC, "subconcept")
    pairs = zip(names, columns, strict=True)
    return {r: c for r, c in pairs if c in wanted or c.startswith(POSTERIOR_PREFIX)}


def _read_typed(path: Path, budget: int) -> dict | None:
    """The columns, read in typed chunks (``budget`` bytes); None where typing cannot read the
    file or at a cell the whole-table reading must name."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    wanted = None
    try:  # a missing file fails to open (OSError): named by the whole reading
        if is_parquet(path):
            import pyarrow.parquet as pq  # only here: 15-20 ms a CSV reading does not need

            pf = pq.ParquetFile(path)
            wanted = _columns(path, pf.schema_arrow.names)
            if pf.metadata.num_rows == 0:
                return None
            rows = max(64, budget // (16 * len(wanted)))  # the batch and its numpy copies
            batches = pf.iter_batches(rows, columns=list(wanted))
            del pf  # freed with the last batch, before the arrow pool is released
            return _gather(path, wanted, batches, strict=False)
        if not _is_csv(path):
            return None
        first = pcsv.ReadOptions(block_size=1 << 16)  # the header's reader, not kept
        header = pcsv.open_csv(path, read_options=first, parse_options=_parse(path)).schema
        wanted = _columns(path, header.names)
        types = {r: pa.string() if c == "subconcept" else pa.float64() for r, c in wanted.items()}
        # Blocks of text (a few bytes a cell become 8 bytes of float64, plus the copies) of at
        # most 1 MiB, pyarrow's default, parsed by several threads at once (docs/performance.md)
        block = min(max(budget // 4, 1 << 10), 1 << 20)
        reader = pcsv.open_csv(
            path,
            read_options=pcsv.ReadOptions(block_size=block),
            parse_options=_parse(path),
            convert_options=pcsv.ConvertOptions(
                include_columns=list(wanted), column_types=types, null_values=list(MISSING_CELLS)
            ),
        )
        return _gather(path, wanted, reader, strict=False)
    except (
        pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OSError,
        UnicodeDecodeError,  # a header that is not UTF-8 text
        InputError,  # a bad cell: named by the whole reading
    ) as err:  # fmt: skip
        if isinstance(err, InputError) and wanted is None:  # the header: no rows to read for it
            raise
        return None  # the whole-table reading names the file and the parser's complaint
    finally:
        pa.default_memory_pool().release_unused()


def _gather(path: Path, wanted: dict[str, str], batches, *, strict: bool) -> dict | None:
    """The ``wanted`` columns (``{name in the batches: name}``) of ``batches``, y_true, y_score,
    y_pred and subconcept checked first; at a bad cell None, or where ``strict`` (one batch: the
    whole table) the error rules' reading or an InputError naming the cell."""
    import pyarrow as pa

    first = (*_NUMERIC, "subconcept")
    order = sorted(wanted.items(), key=lambda rc: first.index(rc[1]) if rc[1] in first else 4)
    numeric = [(r, c) for r, c in order if c != "subconcept"]
    blocks: list[np.ndarray] = []
    codes: list[np.ndarray] = []
    names: dict[str, int] = {}  # subconcept name → code, in order of first appearance
    for batch in batches:
        block = np.empty((batch.num_rows, len(numeric)))
        for raw, c in order:
            col = batch.column(raw)
            if c == "subconcept":
                try:
                    part = _name_codes(col, names)
                except pa.ArrowInvalid as err:  # a CSV saved as latin-1 / cp1252, not UTF-8
                    raise not_utf8(path, err) from err
                if (part < 0).any():
                    raise InputError(
                        path, "missing value", column=c, row=int(np.argmax(part < 0)) + 1
                    )
                codes.append(part)
                continue
            j = numeric.index((raw, c))
            if not _chunk(col, c, block[:, j]):
                if not strict:
                    return None
                block[:, j] = _numeric(path, batch, raw, c)
        blocks.append(block)
        del batch, col  # this chunk's buffers, before the next is read
    pa.default_memory_pool().release_unused()  # the chunks' buffers, before the final arrays
    n = sum(len(b) for b in blocks)
    if n == 0:
        return None
    return _assemble(blocks, [c for _, c in numeric], codes, list(names), n)


def _assemble(blocks: list[np.ndarray], columns: list[str], codes, names, n: int) -> dict:
    """Final arrays from the chunks' blocks (labels ``int8``, posteriors ``"q"`` ``(N, S)``)."""
    q_cols = [c for c in columns if c.startswith(POSTERIOR_PREFIX)]
    kinds = {c: np.int8 if c in _LABELS else np.float64 for c in columns if c not in q_cols}
    out: dict = {c: np.empty(n, kind) for c, kind in kinds.items()}
    q = np.empty((n, len(q_cols))) if q_cols else None  # the blocks' last columns
    start = 0
    while blocks:
        block = blocks.pop(0)  # freed as soon as its rows are copied
        stop = start + len(block)
        for j, c in enumerate(columns):
            if c in out:
                out[c][start:stop] = block[:, j]
        if q is not None:
            q[start:stop] = block[:, len(out) :]
        start = stop
        del block
    if codes:
        out["subconcept"] = pd.Categorical.from_codes(np.concatenate(codes), categories=names)
    out["q_cols"], out["q"] = q_cols, q
    return out


def _chunk(col, name: str, into: np.ndarray) -> bool:
    """Write a chunk of a numeric column into ``into``; False where the whole reading decides."""
    import pyarrow as pa

    if col.null_count or not _is_number(col.type, labels=name in _LABELS):
        return False  # boolean scores, text, timestamps: refused by the whole-table reading
    into[:] = col.cast(pa.float64(), safe=False).to_numpy(zero_copy_only=False)
    if not np.isfinite(into).all():
        return False
    return name not in _LABELS or not ((into != 0) & (into != 1)).any()


def _name_codes(col, names: dict[str, int]) -> np.ndarray:
    """Codes of stripped names (-1: missing or empty); new names appended to ``names``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(col, pa.ChunkedArray):  # a whole table's column: one dictionary
        col = col.combine_chunks()
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        col = col.cast(pa.string())  # Parquet: numbers as names
    col = pc.utf8_trim_whitespace(col)
    enc = pc.if_else(pc.equal(col, ""), None, col).dictionary_encode()
    local = [names.setdefault(nm, len(names)) for nm in enc.dictionary.to_pylist()]
    return np.array([*local, -1], np.int32)[enc.indices.fill_null(len(local)).to_numpy()]


def _check_subconcepts(path: Path, sc: pd.Categorical, y: np.ndarray, utilities: Utilities) -> None:
    """Every name known and on its class's side; checked per category, reported per row."""
    side = {n: int(c) for n, c in zip(utilities.names, utilities.sides, strict=True)}
    cats, codes = list(sc.categories), np.asarray(sc.codes)
    expected = np.array([side.get(c, -1) for c in cats], dtype=np.int64)[codes]
    unknown = np.flatnonzero(expected < 0)
    wrong = unknown if len(unknown) else np.flatnonzero(expected != y)
    if len(wrong):
        i = int(wrong[0])
        name = cats[codes[i]]
        if len(unknown):
            known = ", ".join(utilities.names)
            problem = f"unknown subconcept {shown(name)}: the train sizes know {known}"
            problem += lookalike(name, utilities.names)
        else:
            problem = (
                f"subconcept {name!r} belongs to class {side[name]} in the train sizes but y_true "
                f"is {y[i]} here (one of the two files has the wrong class)"
            )
        raise InputError(path, problem, column="subconcept", row=i + 1)


def _check_posteriors(path, q, q_cols, names, utilities: Utilities | None) -> None:
    # Column names first: a missing q_<name> column also makes the rows sum to less than 1,
    # and the missing column is the problem to report.
    if utilities is not None:
        missing = [n for n in utilities.names if n not in names]
        extra = [n for n in names if n not in utilities.names]
        if missing or extra:
            alike = next((c for c in (lookalike(e, missing) for e in extra) if c), "")
            raise InputError(
                path,
                "posterior columns must be exactly q_<name> for every subconcept in the train "
                f"sizes; missing {[POSTERIOR_PREFIX + m for m in missing]}, unknown "
                f"{[POSTERIOR_PREFIX + e for e in extra]}{alike}",
                column=(POSTERIOR_PREFIX + (missing or extra)[0]),
            )
    bad = q < 0
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise InputError(
            path, f"negative posterior {float(q[r, c])!r}", column=q_cols[c], row=int(r) + 1
        )
    sums = q.sum(axis=1)
    off = np.abs(sums - 1) > 1e-4  # the tolerance of medeval.weights.align_posteriors
    if off.any():
        r = int(np.argmax(off))
        raise InputError(
            path,
            f"posteriors {', '.join(q_cols)} sum to {sums[r]:.6g}, not 1",
            column=q_cols[0],
            row=r + 1,
        )


def read_train_sizes(path: str | Path) -> Utilities:
    """Read ``{"<name>": {"class": 0 or 1, "n": <count>}, ...}`` and compute utilities."""
    # the one JSON rule: a subconcept given twice is refused
    from medeval.io.jsonfile import read_json

    path = Path(path)
    data = read_json(path)
    if not isinstance(data, dict) or not data:
        raise InputError(path, 'must be an object {"<subconcept>": {"class": 0|1, "n": count}}')
    for name, entry in data.items():
        if name != name.strip() or not name:  # never matched by the stripped names of a table
            raise InputError(path, f"subconcept {name!r}: a name with spaces around it or empty")
        if not isinstance(entry, dict) or not {"class", "n"} <= set(entry):
            raise InputError(path, f'subconcept {name!r}: expected {{"class": 0|1, "n": count}}')
        if entry["class"] not in (0, 1) or isinstance(entry["class"], bool):
            raise InputError(
                path, f"subconcept {name!r}: class must be 0 or 1, got {entry['class']!r}"
            )
        n = entry["n"]
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise InputError(path, f"subconcept {name!r}: n must be a count, got {n!r}")
    names = list(data)
    for i, name in enumerate(names):  # two subconcepts that print as one
        alike = lookalike(name, names[:i])
        if alike:
            raise InputError(path, f"subconcept {shown(name)} is given twice{alike}")
    try:
        return utilities_from_train_sizes(data)
    except ValueError as err:
        raise InputError(path, str(err)) from err


def example_paths() -> tuple[Path, Path]:
    """The bundled example predictions and train sizes."""
    base = resources.files("medeval") / "examples"
    return Path(str(base / "predictions.csv")), Path(str(base / "train_sizes.json"))


def read_predictions_frame(path: str | Path) -> pd.DataFrame:
    """A predictions file as given, every CSV cell kept as its text (so that a tool can write
    it back column for column); check it with :func:`read_predictions` first."""
    return read_frame(path, as_text=True, csv_suffixes=PREDICTION_SUFFIXES)
