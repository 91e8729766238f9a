"""Predictions files: the checked table (:mod:`medeval.predictions`), the file as given, the
checks of the inputs a reader must know about, and the bundled example.

Format: CSV (optionally gzipped) or Parquet, one row per test instance, columns ``y_true``,
``y_score`` and/or ``y_pred``, optional ``subconcept`` and ``q_<subconcept>`` posteriors; train
sizes are JSON ``{"<subconcept>": {"class": 0 or 1, "n": <training count>}, ...}``.
"""

from __future__ import annotations

import warnings
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from medeval.errors import InputError
from medeval.io.tables import PREDICTION_SUFFIXES, read_frame
from medeval.predictions import (
    POSTERIOR_PREFIX,
    PredictionTable,
    read_predictions,
    read_train_sizes,
)

__all__ = [
    "POSTERIOR_PREFIX",
    "PredictionTable",
    "ScoreRangeWarning",
    "example_paths",
    "input_notes",
    "read_predictions",
    "read_predictions_frame",
    "read_train_sizes",
]


class ScoreRangeWarning(UserWarning):
    """Scores outside [0, 1] compared with a probability threshold."""


def example_paths() -> tuple[Path, Path]:
    """The bundled example predictions and train sizes."""
    base = resources.files("medeval") / "examples"
    return Path(str(base / "predictions.csv")), Path(str(base / "train_sizes.json"))


def read_predictions_frame(path: str | Path) -> pd.DataFrame:
    """A predictions file as given, every CSV cell kept as its text (so that a tool can write
    it back column for column); check it with :func:`read_predictions` first."""
    return read_frame(path, as_text=True, csv_suffixes=PREDICTION_SUFFIXES)


def input_notes(table: PredictionTable, threshold: float) -> list[str]:
    """What a reader must know about the inputs before any score: one class only, scores that
    are not probabilities although the threshold is one (the latter also warns).

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
