"""Reference rows (docs/method.md, "Rectified scores"): read (:func:`load_reference`) and
checked once against the training sizes (:class:`ReferenceRows`)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from medeval.errors import InputError, UserError
from medeval.io.features import check_ids_once
from medeval.io.predictions import POSTERIOR_PREFIX, PredictionTable, read_predictions
from medeval.io.tables import read_frame
from medeval.scores import labels_from_scores
from medeval.weights import (
    Utilities,
    align_posteriors,
    expected_class_utility,
    renormalise_within_class,
)

__all__ = [
    "ReferenceDataError",
    "ReferenceRows",
    "absent_minority",
    "check_against_test",
    "load_reference",
    "missing_note",
    "reference_rows",
]


class ReferenceDataError(UserError):
    """Reference rows that cannot be used (the user's data: a
    :class:`~medeval.errors.UserError`); ``column`` / ``subconcept`` name the problem."""

    def __init__(
        self, message: str, *, column: str | None = None, subconcept: str | None = None
    ) -> None:
        super().__init__(message)
        self.column, self.subconcept = column, subconcept


def _binary(name: str, values: Any, n: int | None) -> np.ndarray:
    a = np.asarray(values)
    if a.ndim != 1 or (n is not None and len(a) != n):
        raise ReferenceDataError(
            f"reference column {name!r} must have one value per row ({n}); got shape {a.shape}",
            column=name,
        )
    if a.dtype.kind not in "biuf" or not np.isin(a, (0, 1)).all():
        raise ReferenceDataError(f"reference column {name!r} must be 0/1", column=name)
    return a.astype(np.int64)


@dataclass(frozen=True)
class ReferenceRows:
    """Validated reference rows, ``R`` of them, subconcepts in ``names`` order; built by
    :meth:`from_arrays` or :meth:`from_table`, which check them.

    Attributes:
        y_true: ``(R,)`` classes in {0, 1}.
        subconcept: ``(R,)`` codes into ``names`` (the utilities' subconcepts).
        posteriors: ``(R, S)`` subconcept model posteriors, columns in ``names`` order.
        names: ``(S,)`` subconcept names.
        y_pred: ``(R,)`` predicted labels, or ``None`` (no rBA / rF1).
        y_score: ``(R,)`` scores for class 1, or ``None`` (no rAUC).
        source: where the rows come from (e.g. ``"out-of-bag"``, a file name).
        row_weight: ``(R,)`` each row's weight in the correction (``None``: 1 each), e.g. the
            inverse inclusion probabilities of labelled test rows.
        group: ``(R,)`` cluster codes (a ``group`` column: patient or lesion ids, an empty id
            a cluster of its own; ``None``: every row its own). The per-subconcept recall's
            interval counts a cluster's rows as one cluster's evidence.
    """

    y_true: np.ndarray
    subconcept: np.ndarray
    posteriors: np.ndarray
    names: tuple[str, ...]
    y_pred: np.ndarray | None = None
    y_score: np.ndarray | None = None
    _: KW_ONLY  # the data may be positional, the options not
    source: str = "reference"
    row_weight: np.ndarray | None = None
    group: np.ndarray | None = None
    _weights: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.y_true)

    def class_weights(self, utilities: Utilities) -> tuple[np.ndarray, int]:
        """Class-conditional weights ``(R,)`` under ``utilities``
        (docs/method.md, "Label-free scores") and how many rows fell back to their class's mean
        utility; cached per utilities."""
        key = (tuple(utilities.names), utilities.values.tobytes(), utilities.sides.tobytes())
        if key not in self._weights:
            cp = renormalise_within_class(torch.from_numpy(self.posteriors), utilities, self.y_true)
            c = expected_class_utility(cp, utilities, self.y_true).cpu().numpy()
            self._weights[key] = (c, int(cp.fallback.sum()))
        return self._weights[key]

    def counts(self) -> dict[str, int]:
        """``{subconcept: reference rows}`` for every subconcept (0 where absent)."""
        c = np.bincount(self.subconcept, minlength=len(self.names))
        return {nm: int(k) for nm, k in zip(self.names, c, strict=True)}

    @classmethod
    def from_arrays(
        cls,
        utilities: Utilities,
        *,
        y_true: Any,
        subconcept: Sequence[str] | None,
        posteriors: Any,
        y_pred: Any = None,
        y_score: Any = None,
        posterior_columns: Sequence[str] | None = None,
        threshold: float = 0.5,
        source: str = "reference",
    ) -> ReferenceRows:
        """Check reference rows against the ``utilities`` (of the training sizes).

        ``y_pred`` defaults to ``y_score >= threshold``; ``posteriors`` is a DataFrame with
        subconcept-named columns or an array with ``posterior_columns`` (or in ``u.names`` order).

        Raises:
            ReferenceDataError: a missing or malformed column, an unknown subconcept, or a row
                whose class contradicts its subconcept's training class. A subconcept without
                any reference row is accepted (:func:`missing_note` says what it leaves
                unmeasured).
        """
        if y_true is None:
            raise ReferenceDataError("reference rows need the true class 'y_true'", column="y_true")
        y = _binary("y_true", y_true, None)
        n = len(y)
        yp, s = _predictions(y_pred, y_score, n, threshold)
        codes = _subconcept_codes(subconcept, y, utilities)
        q = _posteriors(posteriors, posterior_columns, utilities, n)
        return cls(y, codes, q, utilities.names, yp, s, source=source)

    @classmethod
    def from_table(
        cls, table: Any, utilities: Utilities, *, threshold: float = 0.5, source: str | None = None
    ) -> ReferenceRows:
        """From a :class:`~medeval.io.predictions.PredictionTable` (:func:`reference_rows`)."""
        columns = ("y_true", "subconcept", "posteriors", "y_pred", "y_score")
        return cls.from_arrays(
            utilities,
            **{c: getattr(table, c) for c in columns},
            threshold=threshold,
            source=source or str(getattr(table, "path", "reference")),
        )


def _predictions(
    y_pred: Any, y_score: Any, n: int, threshold: float
) -> tuple[np.ndarray | None, np.ndarray | None]:
    if y_pred is None and y_score is None:
        raise ReferenceDataError(
            "reference rows need the classifier's 'y_pred' or 'y_score'", column="y_pred"
        )
    s = None
    if y_score is not None:
        s = np.array(y_score, dtype=np.float64)  # a private, writable copy
        if s.shape != (n,) or not np.isfinite(s).all():
            raise ReferenceDataError(
                f"reference column 'y_score' must hold {n} finite numbers", column="y_score"
            )
    yp = _binary("y_pred", y_pred, n) if y_pred is not None else labels_from_scores(s, threshold)
    return yp, s


def _subconcept_codes(subconcept: Any, y: np.ndarray, utilities: Utilities) -> np.ndarray:
    """Codes ``(R,)`` into ``u.names``, checked against the names and classes."""
    if subconcept is None:
        raise ReferenceDataError(
            "reference rows need the true 'subconcept' of each row", column="subconcept"
        )
    names = np.asarray(subconcept).astype(str)
    if names.shape != y.shape:
        raise ReferenceDataError(
            f"reference column 'subconcept' must have {len(y)} values; got {names.shape}",
            column="subconcept",
        )
    uniq, inverse = np.unique(names, return_inverse=True)
    for nm in map(str, uniq):
        if nm not in utilities.names:
            raise ReferenceDataError(
                f"reference subconcept {nm!r} has no training size; known: "
                f"{', '.join(utilities.names)}",
                column="subconcept",
                subconcept=nm,
            )
    codes = np.array([utilities.names.index(nm) for nm in uniq], dtype=np.int64)[inverse]
    wrong = np.flatnonzero(utilities.sides[codes] != y)
    if len(wrong):
        i, nm = int(wrong[0]), utilities.names[codes[wrong[0]]]
        raise ReferenceDataError(
            f"reference row {i}: subconcept {nm!r} belongs to class "
            f"{utilities.sides[codes[i]]} in the training sizes but y_true is {y[i]}",
            column="y_true",
            subconcept=nm,
        )
    return codes


def absent_minority(reference: ReferenceRows, utilities: Utilities) -> str:
    """Why the rectified scores cannot be computed from ``reference`` (``""``: they can): a
    minority subconcept without any reference row leaves its part of the correction unmeasured
    (docs/method.md, "Rectified scores": at least one row of every minority subconcept). The
    reference rows still serve the other subconcepts' rectified recalls."""
    counts = reference.counts()
    absent = [nm for nm in utilities.minority if counts.get(nm, 0) == 0]
    if not absent:
        return ""
    listed = ", ".join(map(repr, absent))
    return (
        f"minority subconcept {listed} has no reference row: its part of the correction cannot "
        "be measured (add reference rows of it, or label test rows of it with --labels)"
    )


def missing_note(reference: ReferenceRows) -> str | None:
    """The note on the subconcepts of which the reference rows hold no row (``None``: none)."""
    absent = [nm for nm, n in reference.counts().items() if n == 0]
    if not absent:
        return None
    listed = ", ".join(map(repr, absent))
    return (
        f"the reference rows ({reference.source}) hold no row of {listed}: accepted, but the "
        f"rectified scores' correction is measured without {listed} there, and the rect. "
        f"recall of {listed} rests on labelled test rows alone (--labels), or is not known "
        "without them; add reference rows of it, or label test rows of it"
    )


def _posteriors(
    posteriors: Any, columns: Sequence[str] | None, utilities: Utilities, n: int
) -> np.ndarray:
    if posteriors is None:
        raise ReferenceDataError(
            "reference rows need the subconcept model's posteriors "
            f"({', '.join(POSTERIOR_PREFIX + nm for nm in utilities.names)})",
            column=POSTERIOR_PREFIX + utilities.names[0],
        )
    if columns is None and hasattr(posteriors, "columns"):  # q_<name> columns of a file
        cols = [str(c) for c in posteriors.columns]
        columns = [
            c.removeprefix(POSTERIOR_PREFIX) if c not in utilities.names else c for c in cols
        ]
    try:
        q = align_posteriors(posteriors, utilities, columns=columns)
    except ValueError as e:
        raise ReferenceDataError(f"reference posteriors: {e}", column="posteriors") from None
    if q.shape != (n, len(utilities.names)):
        raise ReferenceDataError(
            f"reference posteriors must be ({n}, {len(utilities.names)}); got {tuple(q.shape)}",
            column="posteriors",
        )
    return q.cpu().numpy()


def check_against_test(reference: ReferenceRows, test: PredictionTable, threshold: float) -> None:
    """Reference rows must be other rows than the test rows (``InputError`` for the test rows in
    any order), and a reference ``y_pred`` that ``threshold`` does not give is warned about."""
    s = reference.y_score
    off = 0 if s is None else int((reference.y_pred != labels_from_scores(s, threshold)).sum())
    if test.y_pred is None and off:
        warnings.warn(
            f"{reference.source}: y_pred differs from y_score >= {threshold:g} in {off} of "
            f"{len(reference)} reference rows, while the test rows are labelled by that "
            "threshold: made at another threshold? (give the threshold it was made at, or leave "
            "y_pred out of the reference rows)",
            UserWarning,
            stacklevel=3,
        )
    if len(reference) != len(test) or test.posteriors is None:
        return
    if not set(reference.names) <= set(test.posteriors.columns):
        return
    both = reference.y_score is not None and test.y_score is not None
    mine = [reference.y_true, *([reference.y_score] * both), *reference.posteriors.T]
    q = test.posteriors[list(reference.names)].to_numpy()
    theirs = [test.y_true, *([test.y_score] * both), *q.T]
    rows = [np.column_stack(c).astype(np.float64) for c in (mine, theirs)]
    if np.array_equal(*(m[np.lexsort(m.T[::-1])] for m in rows)):  # equal as multisets
        raise InputError(
            reference.source,
            f"its {len(reference)} reference rows are the test rows of {test.path} (the same "
            "y_true, y_score and posteriors, row for row): the correction would be measured on "
            "the rows it corrects (rBA = wBA by construction); give held-out rows, e.g. a "
            "validation set",
        )


def reference_rows(
    table: PredictionTable,
    utilities: Utilities,
    *,
    threshold: float = 0.5,
    source: str | None = None,
) -> ReferenceRows:
    """Check a table of reference rows against the train sizes' ``utilities`` (see
    :meth:`ReferenceRows.from_arrays`); ``y_pred`` defaults to ``y_score >= threshold``.

    Raises:
        InputError: naming the table's file and the column or subconcept at fault.
    """
    try:
        rows = ReferenceRows.from_table(
            table, utilities, threshold=float(threshold), source=source or str(table.path)
        )
    except ReferenceDataError as e:  # named by its column where it is one of the table's
        column = None if e.column == "posteriors" else e.column
        raise InputError(table.path, str(e), column=column) from None
    group = _group_column(table.path, len(rows))
    return rows if group is None else replace(rows, group=group)


def _group_column(path: Any, n: int) -> np.ndarray | None:
    """Cluster codes ``(n,)`` from the file's optional ``group`` column (an empty id is a
    cluster of its own, as in the splits); ``None`` without the column or the file."""
    from medeval.splits import group_codes_of

    if path is None or not Path(str(path)).is_file():
        return None
    frame = read_frame(path, as_text=True, usecols=lambda c: str(c).strip() == "group")
    if not frame.shape[1] or len(frame) != n:
        return None
    return group_codes_of(frame.iloc[:, 0].to_numpy(dtype=object))


def load_reference(
    path: str | Path, utilities: Utilities, *, threshold: float = 0.5, source: str | None = None
) -> tuple[ReferenceRows, PredictionTable]:
    """Read a reference file (predictions columns, true ``subconcept``, ``q_<name>`` for every
    subconcept) and check it (:func:`reference_rows`).

    Raises:
        InputError: naming the file and the column or subconcept at fault.
    """
    table = read_predictions(path, utilities)
    # rows given twice (by id) would count twice and narrow every interval
    ids = read_frame(path, as_text=True, usecols=lambda c: str(c).strip() == "id")
    if ids.shape[1]:
        check_ids_once(ids.iloc[:, 0].astype(str).to_numpy(), Path(path))
    return reference_rows(table, utilities, threshold=threshold, source=source or str(path)), table
