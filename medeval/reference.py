"""Reference data: held-out instances with known subconcept, the classifier's prediction and the
subconcept model's posteriors (docs/method.md, "Label-free scores") — out-of-bag forest predictions,
the calibration part of an imaging split, or a file a user supplies (``python -m medeval.evaluate
--reference FILE``).

Reference data check what the label-free scores rest on: how well the subconcept model tells the
subconcepts of each class apart. A model that is weak within a class gives class-conditional
weights close to the class average, so cBA / cF1 / cAUC move toward BA / F1 / AUC and understate
a hidden failure. The rectified scores (:mod:`medeval.rectified`) use the same reference rows to
measure and remove that error.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .metrics.multiclass import within_class_ba
from .predictions import POSTERIOR_PREFIX, InputError, PredictionTable, read_predictions
from .weights import Utilities, class_posteriors


def within_class_balanced_accuracy(
    y_true: np.ndarray, subconcept: np.ndarray, posteriors, u: Utilities
) -> dict[str, float]:
    """Balanced accuracy of the subconcept model among each class's subconcepts.

    The prediction is the argmax of the posteriors renormalised within the instance's own class
    (the posteriors the class-conditional weights use); classes with fewer than two subconcepts
    present are left out.

    Args:
        y_true: ``(N,)`` classes in {0, 1}.
        subconcept: ``(N,)`` true subconcept names.
        posteriors: ``(N, S)`` DataFrame with subconcept-named columns, or an array in
            ``u.names`` order.

    Returns:
        ``{"class 0": ba, "class 1": ba}`` (classes with one subconcept omitted).
    """
    names, inverse = np.unique(np.asarray(subconcept).astype(str), return_inverse=True)
    codes = np.array([u.index(nm) for nm in names], dtype=np.int64)[inverse.reshape(-1)]
    return within_class_ba_from_q(y_true, codes, posteriors, u)


def within_class_ba_from_q(
    y_true: np.ndarray, codes: np.ndarray, posteriors, u: Utilities
) -> dict[str, float]:
    """:func:`within_class_balanced_accuracy` from subconcept codes ``(N,)`` into ``u.names``
    (e.g. checked :class:`~medeval.rectified.ReferenceRows`)."""
    q = class_posteriors(posteriors, u, y_true).q.cpu().numpy()
    return within_class_ba_from_codes(y_true, codes, q)


def within_class_ba_from_codes(
    y_true: np.ndarray, codes: np.ndarray, q_class: np.ndarray
) -> dict[str, float]:
    """:func:`within_class_balanced_accuracy` from subconcept codes ``(N,)`` and the
    class-renormalised posteriors ``q_class`` ``(N, S)`` (columns = codes):
    :func:`medeval.metrics.multiclass.within_class_ba`."""
    return within_class_ba(y_true, codes, q_class)


def read_reference(path: str | Path, u: Utilities) -> PredictionTable:
    """Read a reference file: the predictions columns plus the true ``subconcept`` and a
    ``q_<name>`` posterior column for every subconcept of the train sizes.

    Raises:
        InputError: naming the file and the missing or bad column (and row).
    """
    table = read_predictions(path, u)
    check_reference(table, u)
    return table


def check_reference(table: PredictionTable, u: Utilities) -> None:
    """Reference rows need the true subconcept and the posteriors of every subconcept.

    Raises:
        InputError: naming the table's file and the missing column.
    """
    if table.subconcept is None:
        raise InputError(
            table.path, "reference data need the true subconcept of each row", column="subconcept"
        )
    if table.posteriors is None:
        raise InputError(
            table.path,
            "reference data need the subconcept model's posteriors "
            f"({', '.join(POSTERIOR_PREFIX + n for n in u.names)})",
            column=POSTERIOR_PREFIX + u.names[0],
        )


def reference_quality(path: str | Path, u: Utilities) -> dict[str, float]:
    """Within-class balanced accuracy of the subconcept model on a reference file."""
    table = read_reference(path, u)
    return within_class_balanced_accuracy(table.y_true, table.subconcept, table.posteriors, u)
