"""Labels a person gave to test rows, and the sheet of rows to label next
(docs/own_model.md, "Label next", describes ``to_label.csv`` and the ``--labels`` file).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from medeval.errors import InputError
from medeval.io.features import first_repeat
from medeval.io.tables import read_frame
from medeval.names import lookalike, shown
from medeval.weights import Utilities

#: The sheet's columns, in order (``image`` only where the predictions name images).
SHEET_COLUMNS = (
    "id",
    "inclusion_probability",
    "batch",
    "looks",
    "class",
    "image",
    "candidates",
    "subconcept",
)
#: Columns of the predictions that name a row's image, the first found is used.
IMAGE_COLUMNS = ("image", "path", "image_path", "file")
#: The value of a filled sheet's ``subconcept`` for a row the labeller could not tell (any
#: case): the row counts as unlabelled, unless a subconcept of the train sizes has this name.
UNSURE = "unsure"


def read_ids(path: str | Path) -> tuple[np.ndarray, np.ndarray | None]:
    """The ``id`` ``(N,)`` of each row of a predictions file, as written, and its image path
    ``(N,)`` where a column names one (relative paths from the file's folder).

    Raises:
        InputError: no ``id`` column, or an id given twice.
    """
    path = Path(path)
    frame = read_frame(path, as_text=True)
    if "id" not in frame.columns:
        raise InputError(
            path, "labels are matched by id: the predictions need an 'id' column", column="id"
        )
    ids = frame["id"].astype(str).str.strip().to_numpy()
    repeat = first_repeat(ids)
    if repeat is not None:
        first, i = repeat
        raise InputError(
            path, f"id {ids[i]!r} is given twice (rows {first + 2} and {i + 2})", column="id"
        )
    column = next((c for c in IMAGE_COLUMNS if c in frame.columns), None)
    images = None
    if column is not None:
        images = np.array(
            [
                str(p) if Path(p).is_absolute() else str(path.parent / p)
                for p in frame[column].astype(str)
            ]
        )
    return ids, images


#: The one name of the file ``--labels`` takes, in every message, help text and doc.
FILLED_SHEET = "to_label.csv, filled"
#: What to do with the filled sheets, said the same way everywhere.
GIVE_LABELS = (
    f"give every batch's {FILLED_SHEET}, to --labels (several files: --labels "
    "runs/label-1/to_label.csv runs/label-2/to_label.csv)"
)


def label_files(labels: str | Path | Sequence[str | Path]) -> list[Path]:
    """``labels`` as a list of files (one path or several)."""
    return [Path(labels)] if isinstance(labels, str | Path) else [Path(p) for p in labels]


def labels_note(fields: dict[str, np.ndarray], files: Sequence[Path], n_test: int) -> str:
    """The note counting the labelled test rows: how many, of how many, from which files."""
    n, batches = len(fields["index"]), len(np.unique(fields["batch"]))
    names = ", ".join(p.name if len(files) == 1 else str(p) for p in files)
    return f"labels: {n} of {n_test} test rows labelled ({names}, {batches} batch(es))"


def read_labels(
    paths: str | Path | Sequence[str | Path],
    ids: np.ndarray,
    y: np.ndarray,
    utilities: Utilities,
) -> tuple[dict[str, np.ndarray], list[str]]:
    """The labelled test rows of one labels file or several (``id``, ``subconcept``, optional
    ``inclusion_probability`` and ``batch``: each a to_label.csv, filled; their batches
    concatenated) matched to the test rows ``ids`` ``(N,)`` of classes ``y`` ``(N,)``: the
    :class:`~medeval.evaluation.rectified_recall.LabelledRows` fields
    ``{"index", "subconcept", "pi", "batch"}`` ``(L,)``, and its notes. A row whose subconcept
    is :data:`UNSURE` counts as unlabelled (left out, with a note naming its file and saying how
    many), its id and batch checked as any other's and its batch counted as given; ``L`` is 0
    where every row is unsure.

    Raises:
        InputError: naming the file, row and value: an id not among the test rows, a subconcept
            not in the train sizes or of the other class, one id with two subconcepts (in one
            file or in two, naming both), an inclusion probability outside (0, 1], a row left
            unlabelled, a batch given without the earlier ones.
    """
    files = label_files(paths)
    notes: list[str] = []
    parts = [_read_one(path, ids, y, utilities, notes) for path in files]
    frame = pd.concat([f for f, _ in parts], ignore_index=True)
    fields = {k: np.concatenate([f[k] for _, f in parts]) for k in parts[0][1]}
    # every batch given counts, one all unsure included; rows marked unsure are then dropped
    # before an id given twice is looked for (unsure in one batch, labelled in a later one)
    _no_gaps(frame, fields["batch"], files)
    labelled = frame.pop("_labelled").to_numpy(dtype=bool)
    frame = frame[labelled].reset_index(drop=True)
    fields = {k: v[labelled] for k, v in fields.items()}
    keep = _once(frame, fields["subconcept"], notes)
    return {k: v[keep] for k, v in fields.items()}, notes


def _read_one(
    path: Path, ids: np.ndarray, y: np.ndarray, utilities: Utilities, notes: list[str]
) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """One labels file, checked: its frame (``id``, ``subconcept``, ``_file``, ``_row``: the
    row's number in the file, ``_labelled``: not :data:`UNSURE`) and its fields
    (:func:`read_labels`), rows marked unsure included."""
    frame = read_frame(path, as_text=True)
    for column in ("id", "subconcept"):
        if column not in frame.columns:
            raise InputError(path, f"a labels file needs the column {column!r}", column=column)
    if frame.empty:
        raise InputError(
            path,
            f"no labelled rows: the file has a header and no rows; {GIVE_LABELS}, or leave "
            "--labels out",
        )
    frame = frame.assign(
        id=frame["id"].astype(str).str.strip(),
        subconcept=frame["subconcept"].fillna("").astype(str).str.strip(),
    )
    empty = frame["subconcept"] == ""
    if empty.any():
        rows = ", ".join(str(i + 2) for i in np.flatnonzero(empty)[:5])
        raise InputError(
            path,
            f"row(s) {rows}: no subconcept given. Label every row of a batch "
            "(rows chosen but left unlabelled would bias the estimate), or leave "
            "the batch out of --labels",
            column="subconcept",
        )
    where = pd.Series(np.arange(len(ids)), index=ids)
    _refuse_first(
        path, frame, "id", ~frame["id"].isin(where.index), "is not a row of the test predictions"
    )
    known = {nm: i for i, nm in enumerate(utilities.names)}
    unsure = (frame["subconcept"].str.casefold() == UNSURE).to_numpy() & (UNSURE not in known)
    unknown = np.flatnonzero(~frame["subconcept"].isin(known) & ~unsure)
    if len(unknown):
        i = int(unknown[0])
        cell = frame["subconcept"].iloc[i]
        raise InputError(
            path,
            f"row {i + 2}: subconcept {shown(cell)} has no training size"
            f"{lookalike(cell, known)}; known: {', '.join(_plain(n) for n in known)}",
            column="subconcept",
        )
    codes = frame["subconcept"].map(known).fillna(-1).to_numpy(dtype=np.int64)
    index = where[frame["id"]].to_numpy()
    if len(wrong := np.flatnonzero((utilities.sides[codes] != y[index]) & ~unsure)):
        i = int(wrong[0])
        raise InputError(
            path,
            f"row {i + 2}: subconcept {frame['subconcept'].iloc[i]!r} is of "
            f"class {int(utilities.sides[codes[i]])}, but the test row "
            f"{frame['id'].iloc[i]!r} is of class {int(y[index[i]])}",
            column="subconcept",
        )
    pi, batch = _design(path, frame, len(ids), notes)
    if unsure.any():
        notes.append(
            f"{path.name}: {int(unsure.sum())} row(s) marked {UNSURE!r}, counted as unlabelled: "
            "left out of the estimate (if they are the hard cases, the estimate does not see "
            "them), and a later batch may propose them again"
        )
    rows = frame[["id", "subconcept"]].assign(
        _file=str(path), _row=np.arange(len(frame)) + 2, _labelled=~unsure
    )
    return rows, {"index": index, "subconcept": codes, "pi": pi, "batch": batch}


def last_batch(paths: str | Path | Sequence[str | Path]) -> int:
    """The highest batch of the labels files that :func:`read_labels` accepted (over every
    file), its rows marked :data:`UNSURE` included (1 without a ``batch`` column): the next batch
    is the one after."""
    last = 1
    for path in label_files(paths):
        frame = read_frame(path, as_text=True)
        if "batch" in frame.columns and not frame.empty:
            last = max(last, int(pd.to_numeric(frame["batch"], errors="coerce").max()))
    return last


def planned_looks(paths: str | Path | Sequence[str | Path]) -> tuple[int | None, list[str]]:
    """The looks planned when the labels files' first batch was proposed (their ``looks``
    column; ``None`` where no file has one) and a note where a later batch planned others (the
    first plan is kept: a plan changed after looking would not keep the error).

    Raises:
        InputError: a ``looks`` value that is not a whole number from 1, naming file and row.
    """
    plans: list[tuple[int, int, Path]] = []  # (batch, looks, file)
    for path in label_files(paths):
        frame = read_frame(path, as_text=True)
        if "looks" not in frame.columns or frame.empty:
            continue
        raw = frame["looks"].fillna("").astype(str).str.strip()
        given = (raw != "").to_numpy()
        looks = pd.to_numeric(raw.where(given, "1"), errors="coerce").to_numpy(dtype=float)
        whole = np.isfinite(looks) & (looks == np.round(looks)) & (looks >= 1)
        _refuse_first(path, frame, "looks", given & ~whole, "is not a whole number from 1")
        batch = pd.to_numeric(frame.get("batch", 1), errors="coerce")
        batch = np.broadcast_to(np.nan_to_num(np.asarray(batch, dtype=float), nan=1), len(frame))
        plans += [(int(b), int(k), path) for b, k, g in zip(batch, looks, given, strict=True) if g]
    if not plans:
        return None, []
    plans.sort(key=lambda p: p[0])
    first = plans[0][1]
    other = next((p for p in plans if p[1] != first), None)
    if other is None:
        return first, []
    return first, [
        f"{other[2].name}: batch {other[0]} planned {other[1]} looks, batch {plans[0][0]} "
        f"{first}: the first plan is kept (a plan changed after looking would not keep the "
        "error over the looks)"
    ]


def _refuse_first(path: Path, frame: pd.DataFrame, column: str, bad: Any, problem: str) -> None:
    """InputError ``row <i + 2>: <column> <cell> <problem>`` at the first ``bad`` row ``i``."""
    found = np.flatnonzero(bad)
    if len(found):
        i = int(found[0])
        cell = frame[column].iloc[i]
        text = shown(cell) if isinstance(cell, str) else repr(cell)
        raise InputError(path, f"row {i + 2}: {column} {text} {problem}", column=column)


def _plain(name: str) -> str:
    """A known name as written, escaped only where printing would hide how it is written."""
    return name if shown(name) == repr(name) else shown(name)


def _design(path: Path, frame: pd.DataFrame, n_test: int, notes: list[str]):
    """Inclusion probabilities and batches ``(L,)``; without them a simple random sample."""
    if "inclusion_probability" not in frame.columns:
        n = frame["id"].nunique()
        notes.append(
            f"{path.name}: no inclusion_probability column: its {n} labelled rows are "
            f"taken as a simple random sample of the {n_test} test rows"
        )
        return np.full(len(frame), n / n_test), np.ones(len(frame), dtype=np.int64)
    pi = pd.to_numeric(frame["inclusion_probability"], errors="coerce").to_numpy(dtype=float)
    _refuse_first(path, frame, "inclusion_probability", ~((pi > 0) & (pi <= 1)), "is not in (0, 1]")
    if "batch" not in frame.columns:
        return pi, np.ones(len(frame), dtype=np.int64)
    batch = pd.to_numeric(frame["batch"], errors="coerce").to_numpy(dtype=float)
    whole = np.isfinite(batch) & (batch == np.round(batch)) & (batch >= 1)
    _refuse_first(path, frame, "batch", ~whole, "is not a whole number from 1")
    batch = batch.astype(np.int64)
    return pi, batch


def _no_gaps(frame: pd.DataFrame, batch: np.ndarray, files: list[Path]) -> None:
    """Refuse a batch given without an earlier one: a batch's probabilities were drawn with every
    earlier batch labelled, and the estimate counts those rows."""
    gaps = sorted(set(range(1, int(batch.max()) + 1)) - set(batch.tolist()))
    if not gaps:
        return
    i = int(np.argmax(batch > gaps[0]))
    missing = ", ".join(map(str, gaps[:5])) + (", …" if len(gaps) > 5 else "")
    among = "" if len(files) == 1 else f" (in none of {', '.join(p.name for p in files)})"
    raise InputError(
        frame["_file"].iloc[i],
        f"row {frame['_row'].iloc[i]}: batch {int(batch[i])} is given without batch "
        f"{missing}{among}: its inclusion probabilities were drawn with the rows of every "
        f"earlier batch labelled, and the estimate counts those rows; {GIVE_LABELS}",
        column="batch",
    )


def _once(frame: pd.DataFrame, codes: np.ndarray, notes: list[str]) -> np.ndarray:
    """Rows to keep ``(L,)``: an id given twice (in one file or in two) counts once, or is
    refused with two subconcepts, naming the file and row of each."""
    twice = frame["id"].duplicated(keep=False)
    if twice.any():
        for _, rows in frame[twice].groupby("id", sort=False):
            if codes[rows.index].min() != codes[rows.index].max():
                i = rows.index[0]
                j = rows.index[np.argmax(codes[rows.index] != codes[i])]
                a, b = frame.loc[i], frame.loc[j]
                where_b = f"row {b['_row']}"
                if a["_file"] != b["_file"]:
                    where_b = f"{b['_file']} {where_b}"
                raise InputError(
                    a["_file"],
                    f"id {a['id']!r} is labelled {a['subconcept']!r} in row {a['_row']} and "
                    f"{b['subconcept']!r} in {where_b}",
                    column="subconcept",
                )
        n = int(frame["id"][twice].nunique())
        files = ", ".join(dict.fromkeys(Path(f).name for f in frame["_file"][twice]))
        notes.append(f"{files}: {n} id(s) labelled twice with the same subconcept, counted once")
    return ~frame["id"].duplicated(keep="first").to_numpy()


def sheet(
    rows: np.ndarray,
    inclusion: np.ndarray,
    batch: int,
    ids: np.ndarray,
    y: np.ndarray,
    q: np.ndarray,
    utilities: Utilities,
    images: np.ndarray | None = None,
    looks: int | None = None,
) -> pd.DataFrame:
    """The rows to label (positions ``rows`` ``(n,)``, their ``inclusion`` probabilities) as
    ``to_label.csv``'s frame, ordered by the most likely subconcept and id: ``q`` ``(N, S)``
    within-class posteriors; ``looks`` the looks planned (:mod:`medeval.evaluation.looks`)."""
    names = np.asarray(utilities.names)
    out = []
    for r, p in zip(rows, inclusion, strict=True):
        own = np.flatnonzero(utilities.sides == y[r])
        order = own[np.argsort(-q[r, own], kind="stable")]
        out.append(
            {
                "id": ids[r],
                "inclusion_probability": float(p),
                "batch": int(batch),
                "looks": looks,
                "class": int(y[r]),
                "image": None if images is None else images[r],
                "candidates": "; ".join(f"{names[j]} ({q[r, j]:.2f})" for j in order),
                "subconcept": "",
                "_first": names[order[0]],
            }
        )
    frame = pd.DataFrame(out, columns=[*SHEET_COLUMNS, "_first"])
    frame = frame.sort_values(["_first", "id"], kind="stable").drop(columns="_first")
    return frame if images is not None else frame.drop(columns="image")
