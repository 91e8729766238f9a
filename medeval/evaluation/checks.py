"""The input checks of the evaluation and of the rectification, defined once: labels, scores,
bootstrap strata and clusters, and how a bootstrap is described (``bootstrap`` of
``metrics.json``); the posteriors are checked by :func:`medeval.weights.align_posteriors`."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from medeval.errors import InputError, UserError
from medeval.io.tables import MISSING_WORDS
from medeval.metrics._checks import binary_labels
from medeval.scores import labels_from_scores

#: ``bootstrap.stratify`` of strata given as per-row codes.
CUSTOM_STRATA = "custom strata"


def _one_d(name: str, values: Any) -> np.ndarray:
    """``values`` as a private, writable 1-D array (pandas hands out read-only views)."""
    a = np.array(values)
    if a.ndim != 1:
        raise UserError(f"{name} must be 1-D (one value per test instance); got {a.shape}")
    return a


def labels(
    y_true: Any, y_score: Any, y_pred: Any, threshold: float, pos_label: Any = None
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """Checked ``y_true`` ``(N,)`` in {0, 1} (int64), scores ``(N,)`` or None, and predicted
    labels ``(N,)`` (given, encoded like ``y_true``, or ``y_score >= threshold``).

    Raises:
        ValueError: shapes that differ, NaN scores, neither scores nor labels, or labels the
            metrics' rule refuses, naming the argument.
    """
    given = {"y_true": _one_d("y_true", y_true)}
    n = len(given["y_true"])
    s = None if y_score is None else np.array(y_score, dtype=np.float64)
    if s is not None and s.shape != (n,):
        raise UserError(f"y_score must have shape ({n},) like y_true; got {s.shape}")
    if s is not None and not np.isfinite(s).all():
        bad = int(np.argmax(~np.isfinite(s)))
        what = "NaN" if np.isnan(s[bad]) else "an infinite value"
        raise UserError(f"y_score contains {what} at index {bad}")
    if y_pred is not None:
        given["y_pred"] = _one_d("y_pred", y_pred)
        if given["y_pred"].shape != (n,):
            raise UserError(
                f"y_pred must have shape {(n,)} like y_true; got {given['y_pred'].shape}"
            )
    elif s is None:
        raise UserError("need y_score or y_pred")
    binary = {k: t.numpy().astype(np.int64) for k, t in binary_labels(given, pos_label).items()}
    yp = binary["y_pred"] if y_pred is not None else labels_from_scores(s, threshold)
    return binary["y_true"], s, yp


def missing_ids(values: Any) -> np.ndarray:
    """``(N,)`` True where an id (a group, a patient) is empty or missing: ``None``, NaN, or a
    cell of the one missing-value vocabulary (:data:`medeval.io.tables.MISSING_WORDS`: empty,
    ``nan``, ``na``, ``null``, ``none``, any case; an empty cell read as text becomes
    ``"nan"``). Such a row is a group of its own wherever groups are read."""
    a = np.asarray(values)
    text = np.char.lower(np.char.strip(a.astype(str)))
    return np.asarray(pd.isna(a), dtype=bool) | np.isin(text, ("", *MISSING_WORDS))


def own_groups(group_codes: np.ndarray, missing: np.ndarray) -> np.ndarray:
    """``group_codes`` ``(N,)`` with each row of ``missing`` moved to a group of its own
    (numbered after the others, in row order), renumbered without gaps."""
    if not missing.any():
        return group_codes
    out = np.asarray(group_codes, dtype=np.int64).copy()
    out[missing] = -1
    keep = ~missing
    out[keep] = np.unique(out[keep], return_inverse=True)[1].reshape(-1)
    first = int(out[keep].max()) + 1 if keep.any() else 0
    out[missing] = np.arange(first, first + int(missing.sum()))
    return out


def codes(values: Any, n: int, name: str) -> np.ndarray:
    """Per-row ids (clusters such as patients, or strata) as codes ``(N,)``. An empty or
    missing id (``""``, ``None``, NaN) is a group of its own, one per row: rows whose id is
    unknown are never taken as one patient.

    Raises:
        ValueError: not one entry per row, naming ``name``.
    """
    a = np.asarray(values)
    if a.shape != (n,):
        raise UserError(f"{name} must have one entry per instance ({n}); got {a.shape}")
    return own_groups(np.unique(a.astype(str), return_inverse=True)[1].reshape(-1), missing_ids(a))


def strata(
    stratify: str | np.ndarray, y: np.ndarray, subconcept: np.ndarray | None = None
) -> np.ndarray:
    """Bootstrap strata ``(N,)``: ``"class"`` (``y``), ``"none"``, ``"subconcept"`` (the
    test subconcept codes ``subconcept``) or per-row codes.

    Raises:
        ValueError: ``"subconcept"`` without test subconcepts, or codes of another length.
    """
    if isinstance(stratify, str):
        if stratify == "class":
            return np.asarray(y)
        if stratify == "none":
            return np.zeros(len(y), dtype=np.int64)
        if stratify == "subconcept":
            if subconcept is None:
                raise UserError("stratify='subconcept' needs the true test subconcepts")
            return np.asarray(subconcept)
        raise UserError(
            f"stratify must be 'class', 'subconcept', 'none' or codes; got {stratify!r}"
        )
    return codes(stratify, len(y), "stratify")


def bootstrap_info(
    n: int,
    seed: int,
    stratify: Any,
    *,
    reference_stratify: str | None = None,
    reference_seed: int | None = None,
) -> dict[str, Any]:
    """How the intervals were made (``Evaluation.bootstrap``; with ``reference_stratify``,
    the joint bootstrap of the rectified scores, ``RectifiedResult.bootstrap``)."""
    name = stratify if isinstance(stratify, str) else CUSTOM_STRATA
    info: dict[str, Any] = {"n": int(n), "seed": int(seed)}
    if reference_stratify is None:
        method = "percentile; multinomial resampling within strata" if n else "none"
        return info | {"stratify": name, "method": method}
    return info | {
        "reference_seed": reference_seed,
        "stratify": name,
        "reference_stratify": reference_stratify,
        "method": f"percentile; joint: test rows within {name}, reference rows within "
        f"{reference_stratify}, drawn independently",
    }


class ScoreRangeWarning(UserWarning):
    """Scores outside [0, 1] compared with a probability threshold."""


def input_notes(table: Any, threshold: float) -> list[str]:
    """What a reader must know about the inputs of ``table`` (a
    :class:`~medeval.io.predictions.PredictionTable`) before any score: one class only, scores
    that are not probabilities although the threshold is one (the latter also warns).

    Raises:
        InputError: probability scores with a threshold outside [0, 1].
    """
    notes = []
    classes = np.unique(table.y_true)
    if len(classes) < 2:
        notes.append(
            f"y_true holds only class {int(classes[0])} ({len(table)} rows): every score that "
            "needs both classes (BA, F1, AUC and their weighted forms) is undefined"
        )
    s = table.y_score
    if table.y_pred is None and s is not None:
        lo, hi = float(np.min(s)), float(np.max(s))
        probabilities = lo >= 0 and hi <= 1
        if probabilities and not 0 <= threshold <= 1:
            raise InputError(
                table.path,
                f"every y_score is a probability in [0, 1] but the threshold {threshold:g} is "
                f"outside [0, 1] (option --threshold; evaluation.threshold in a training "
                f"config): every prediction would be class {int(threshold < 0)}",
                column="y_score",
            )
        if not probabilities and 0 <= threshold <= 1:
            msg = (
                f"y_score lies in [{lo:.4g}, {hi:.4g}], not [0, 1], but the threshold "
                f"{threshold:g} is a probability: predicted labels may be meaningless "
                "(give probabilities, or a threshold on the score's own scale)"
            )
            warnings.warn(msg, ScoreRangeWarning, stacklevel=3)
            notes.append(msg)
    return notes
