"""Joins of a feature table with its labels or predictions file (by ``id``, by a ``path``
ending with the ``id``, or row by row), and the rows two tables must not share."""

from __future__ import annotations

import warnings
from pathlib import Path, PurePosixPath

import numpy as np
import pandas as pd

from medeval.errors import InputError
from medeval.io.features import FeatureTable, first_repeat

__all__ = ["agreeing", "joined_rows", "no_shared_rows"]


def joined_rows(
    table: FeatureTable, pred: pd.DataFrame, source: Path, what: str = "predictions"
) -> pd.DataFrame:
    """The rows of ``pred`` (read from ``source``) in the feature table's row order: by ``id``
    when both have one; else by a ``path`` column ending with the table's ``id`` (whole path
    components, or the file name without suffix); else row by row.

    Raises:
        InputError: row counts that differ, a repeated key, a table row without a match, or a
            path matching two ids.
    """
    if len(pred) != len(table):
        raise InputError(
            source,
            f"has {len(pred)} rows but {table.path} has {len(table)}; one {what} row per "
            "feature row",
        )
    ids = table.ids
    if ids is None or not ({"id", "path"} & set(pred.columns)):
        return pred
    column = "id" if "id" in pred.columns else "path"
    keys = pred[column].astype(str).to_numpy()
    repeat = first_repeat(keys)
    if repeat is not None:
        i = repeat[1]
        raise InputError(source, f"{column} {keys[i]!r} appears twice", column=column, row=i + 1)
    pos = {v: i for i, v in enumerate(keys)} if column == "id" else _path_keys(keys, ids, source)
    missing = [i for i, v in enumerate(ids) if v not in pos]
    if missing:
        i = missing[0]
        raise InputError(
            source,
            f"no {what} row for id {ids[i]!r} (row {i + 1} of {table.path})",
            column=column,
        )
    return pred.iloc[[pos[v] for v in ids]]


def _path_keys(paths: np.ndarray, ids: np.ndarray, source: Path) -> dict[str, int]:
    """``{id: row of paths}`` for the ids a path ends with (whole components, or the stem)."""
    wanted = {tuple(PurePosixPath(str(v).replace("\\", "/")).parts): str(v) for v in ids}
    longest = max(len(k) for k in wanted)
    out: dict[str, int] = {}
    for row, text in enumerate(paths):
        parts = PurePosixPath(text.replace("\\", "/")).parts
        found = [wanted[parts[-n:]] for n in range(1, longest + 1) if parts[-n:] in wanted]
        if not found and parts:
            stem = (PurePosixPath(parts[-1]).stem,)
            found = [wanted[stem]] if stem in wanted else []
        for key in found:
            if key in out:
                raise InputError(
                    source,
                    f"paths {paths[out[key]]!r} and {text!r} both name the image {key!r}",
                    column="path",
                    row=row + 1,
                )
            out[key] = row
    return out


def agreeing(rest: pd.DataFrame, given: pd.DataFrame, table: Path, source: Path) -> pd.DataFrame:
    """``given`` (a feature table's labels or predictions file, in the table's row order),
    checked against the table's own non-feature columns ``rest``: a column in both must agree.

    Raises:
        InputError: a column in both whose values differ, naming the column, the first such
            row and both files.
    """
    for col in (c for c in given.columns if c in rest.columns and c not in ("id", "path")):
        a, b = rest[col].astype(str).str.strip(), given[col].astype(str).str.strip()
        differ = np.flatnonzero(a.to_numpy() != b.to_numpy())
        if len(differ):
            i = int(differ[0])
            raise InputError(
                source,
                f"column {col!r} is also in {table} and the two differ in {len(differ)} rows "
                f"(row {i + 1} of {table}: {a.iloc[i]!r} there, {b.iloc[i]!r} here); keep the "
                "column in one of the files",
                column=col,
            )
    return given


#: What the rows of a table must be, beside the rows of TRAIN or of TEST.
_HELD_OUT = {
    "TRAIN": "held out from the subconcept model's training data",
    "TEST": "other rows than the test rows",
}
_MEASURED = "the rectification measures the subconcept model's error on rows it does not evaluate"


def no_shared_rows(
    held: FeatureTable, table: FeatureTable, role: str, other: str = "TRAIN"
) -> None:
    """A row of TRAIN must not be a test or reference row: the subconcept model has seen it;
    nor a test row a reference row (``other="TEST"``): the joint bootstrap takes the two as
    independent samples. ``held``: the table whose rows ``table`` must not repeat."""
    if held.ids is None or table.ids is None:
        _no_shared_features(held, table, role, other)
        return
    shared = np.flatnonzero(np.isin(table.ids, held.ids))
    if len(shared):
        i = int(shared[0])
        why = "" if other == "TRAIN" else f" ({_MEASURED})"
        raise InputError(
            table.path,
            f"id {table.ids[i]!r} is also a {other} row ({len(shared)} shared ids): {role} rows "
            f"must be {_HELD_OUT[other]}{why}",
            column="id",
            row=i + 1,
        )


def _no_shared_features(held: FeatureTable, table: FeatureTable, role: str, other: str) -> None:
    """Rows compared by features: half or more repeated is an InputError, a few a warning."""
    seen = {row.tobytes(): i for i, row in enumerate(np.ascontiguousarray(held.X, np.float64))}
    rows = np.ascontiguousarray(table.X, np.float64)
    shared = [(i, seen[r.tobytes()]) for i, r in enumerate(rows) if r.tobytes() in seen]
    if not shared:
        return
    (i, j), k = shared[0], len(shared)
    what = (
        f"{k} of its {len(table)} rows have the features of a {other} row of {held.path} "
        f"(first: row {i + 1}, {other} row {j + 1})"
    )
    if 2 * k >= len(table):
        raise InputError(table.path, f"{what}: {role} rows must be {_HELD_OUT[other]}", row=i + 1)
    warnings.warn(f"{table.path}: {what}; are they the same images?", UserWarning, stacklevel=3)
