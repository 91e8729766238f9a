"""A predictions file → its :class:`~medeval.evaluation.Evaluation` (the library side of
``python -m medeval.evaluate``, also used for every split of a training run and by discovery).

:func:`evaluate_file` reads and checks the inputs and evaluates them; the files a user reads are
rendered by :func:`medeval.report.outputs.output_files`.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medeval.errors import InputError
from medeval.evaluation import Evaluation, evaluate_predictions
from medeval.io.predictions import PredictionTable, input_notes, read_predictions, read_train_sizes
from medeval.metrics import UndefinedMetricWarning
from medeval.reference import reference_quality

__all__ = ["EvaluateSettings", "evaluate_file"]

_STRATA = ("class", "subconcept", "none")


@dataclass(frozen=True)
class EvaluateSettings:
    """How to evaluate (see :func:`medeval.evaluation.evaluate_predictions`).

    Raises:
        ValueError: a value out of range, naming the field.
    """

    threshold: float = 0.5
    n_bootstrap: int = 1000
    confidence: float = 0.95
    stratify: str = "class"
    seed: int = 0
    device: Any = "cpu"  # a name ("cpu", "cuda:1") or a torch.device
    progress: bool = False
    memory_budget: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.n_bootstrap, bool) or not isinstance(self.n_bootstrap, int):
            raise ValueError(f"n_bootstrap must be an int, got {self.n_bootstrap!r}")
        if self.n_bootstrap < 0:
            raise ValueError(f"n_bootstrap must be >= 0, got {self.n_bootstrap}")
        if not 0 < self.confidence < 1:
            raise ValueError(f"confidence must lie in (0, 1), got {self.confidence!r}")
        if self.stratify not in _STRATA:
            raise ValueError(f"stratify must be one of {', '.join(_STRATA)}, got {self.stratify!r}")
        if self.memory_budget is not None and self.memory_budget <= 0:
            raise ValueError(f"memory_budget must be positive, got {self.memory_budget}")

    def options(self) -> dict[str, Any]:
        """Keyword arguments of :func:`~medeval.evaluation.evaluate_predictions`."""
        return dataclasses.asdict(self)


def evaluate_file(
    predictions: str | Path,
    train_sizes: str | Path | None = None,
    *,
    reference: str | Path | None = None,
    settings: EvaluateSettings | None = None,
) -> tuple[PredictionTable, Evaluation]:
    """Read a predictions file (and its train sizes) and evaluate it.

    Undefined scores are reported in ``Evaluation.notes`` (their
    :class:`~medeval.metrics.UndefinedMetricWarning` is recorded, not repeated to the caller;
    every other warning reaches the caller); notes about the inputs themselves (see
    :func:`~medeval.io.predictions.input_notes`) come first.

    ``reference``: a file of reference data (the predictions columns plus the true
    ``subconcept``); the subconcept model's within-class balanced accuracy is measured on it when
    the test set has no subconcept labels (see :mod:`medeval.reference`).
    """
    s = settings or EvaluateSettings()
    u = read_train_sizes(train_sizes) if train_sizes else None
    quality = None
    if reference is not None:
        if u is None:
            raise InputError(reference, "reference data need --train-sizes (the subconcepts)")
        quality = reference_quality(reference, u)
    table = read_predictions(predictions, u, memory_budget=s.memory_budget)
    first = input_notes(table, float(s.threshold))
    ev = _evaluate_recorded(table, u, s)
    notes = [*first, *ev.notes]
    model, source = ev.subconcept_model, ev.subconcept_model_source
    if quality is not None:
        text = (
            ", ".join(f"{c}: {v:.3f}" for c, v in quality.items()) or "no class has two subconcepts"
        )
        notes.append(f"subconcept model on the reference data {reference}: within-class BA {text}")
        if not model:
            model, source = quality, f"reference data ({Path(reference).name})"
    return table, dataclasses.replace(
        ev, notes=notes, subconcept_model=model, subconcept_model_source=source
    )


def _evaluate_recorded(table: PredictionTable, u: Any, s: EvaluateSettings) -> Evaluation:
    """``evaluate_predictions`` on ``table``: its undefined-score warnings are recorded (the
    evaluation's notes state them), every other warning is passed on to the caller."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ev = evaluate_predictions(
            table.y_true,
            y_score=table.y_score,
            y_pred=table.y_pred,
            subconcept=table.subconcept,
            posteriors=table.posteriors,
            train_sizes=u,
            **s.options(),
        )
    for w in caught:
        if issubclass(w.category, UndefinedMetricWarning):
            continue  # the evaluation states every undefined score in its notes
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    return ev
