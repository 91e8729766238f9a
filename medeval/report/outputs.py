"""A predictions file → its evaluation → the files a user reads (library side of
``python -m medeval.evaluate``, also used for every split of a training run).

:func:`evaluate_file` reads and checks the inputs and evaluates them; :func:`output_files`
prepares metrics.json, metrics.csv, per_subconcept.csv, subconcepts.png and report.html in
memory, so that nothing touches the disk before everything is ready.
"""

from __future__ import annotations

import io
import warnings
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from medeval.atomic import json_text
from medeval.evaluation import Evaluation, evaluate_predictions
from medeval.metrics import UndefinedMetricWarning
from medeval.predictions import InputError, PredictionTable, read_predictions, read_train_sizes
from medeval.reference import reference_quality

__all__ = ["ScoreRangeWarning", "evaluate_file", "example_paths", "input_notes", "output_files"]


class ScoreRangeWarning(UserWarning):
    """Scores outside [0, 1] compared with a probability threshold."""


def example_paths() -> tuple[Path, Path]:
    """The bundled example predictions and train sizes."""
    base = resources.files("medeval") / "examples"
    return Path(str(base / "predictions.csv")), Path(str(base / "train_sizes.json"))


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
                f"outside [0, 1]: every prediction would be class {int(threshold < 0)}",
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


def evaluate_file(
    predictions: str | Path,
    train_sizes: str | Path | None = None,
    *,
    reference: str | Path | None = None,
    **options: Any,
) -> tuple[PredictionTable, Evaluation]:
    """Read a predictions file (and its train sizes) and evaluate it.

    ``options`` go to :func:`~medeval.evaluation.evaluate_predictions`. Undefined scores are
    reported in ``Evaluation.notes`` rather than as warnings (only
    :class:`~medeval.metrics.UndefinedMetricWarning` is silenced); notes about the inputs
    themselves (see :func:`input_notes`) come first.

    ``reference``: a file of reference data (the predictions columns plus the true
    ``subconcept``); the subconcept model's within-class balanced accuracy is measured on it when
    the test set has no subconcept labels (see :mod:`medeval.reference`).
    """
    u = read_train_sizes(train_sizes) if train_sizes else None
    quality = None
    if reference is not None:
        if u is None:
            raise InputError(reference, "reference data need --train-sizes (the subconcepts)")
        quality = reference_quality(reference, u)
    table = read_predictions(predictions, u)
    first = input_notes(table, float(options.get("threshold", 0.5)))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=UndefinedMetricWarning)
        ev = evaluate_predictions(
            table.y_true,
            y_score=table.y_score,
            y_pred=table.y_pred,
            subconcept=table.subconcept,
            posteriors=table.posteriors,
            train_sizes=u,
            **options,
        )
    ev.notes[:0] = first
    if quality is not None:
        text = (
            ", ".join(f"{c}: {v:.3f}" for c, v in quality.items()) or "no class has two subconcepts"
        )
        ev.notes.append(
            f"subconcept model on the reference data {reference}: within-class BA {text}"
        )
        if not ev.subconcept_model:
            ev.subconcept_model = quality
            ev.subconcept_model_source = f"reference data ({Path(reference).name})"
    return table, ev


def output_files(ev: Evaluation, title: str, source: str = "") -> dict[str, bytes]:
    """Everything the command writes, prepared in memory before anything touches the disk:
    metrics.json, metrics.csv, per_subconcept.csv, subconcepts.png and report.html."""
    from medeval.report.figures import figure_png, subconcept_figure
    from medeval.report.html import Section, evaluation_sections, render

    files = {"metrics.json": json_text(ev.to_dict()).encode()}
    buf = io.StringIO()
    ev.subsets.to_csv(buf, index=False)
    files["metrics.csv"] = buf.getvalue().encode()
    if not ev.per_subconcept.empty:
        buf = io.StringIO()
        ev.per_subconcept.to_csv(buf, index=False)
        files["per_subconcept.csv"] = buf.getvalue().encode()
        fig = subconcept_figure(
            ev.per_subconcept, ev.scores, title=f"{title}: subconcept prevalence and recall"
        )
        files["subconcepts.png"] = figure_png(fig)
    sections = evaluation_sections(ev, figure_png=files.get("subconcepts.png"))
    if source:
        sections.append(Section("Inputs").pre(source))
    files["report.html"] = render(f"medeval evaluation: {title}", sections).encode()
    return files
