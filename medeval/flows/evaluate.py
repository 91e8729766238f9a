"""Test predictions → their :class:`~medeval.evaluation.Evaluation`: the one evaluation of every
tool (``evaluate``, ``subconcepts``, ``discover``, ``train`` and ``evaluate --run``).

:func:`evaluate_table` evaluates a table in memory; :func:`evaluate_file` reads and checks the
files, then evaluates them so. The files a user reads are rendered by
:func:`medeval.report.outputs.output_files`.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from medeval._validation import TypeOf, checked, declared
from medeval.errors import InputError
from medeval.evaluation import Evaluation, evaluate_core
from medeval.evaluation.rectified import FewReferenceRowsWarning
from medeval.io.predictions import PredictionTable, input_notes, read_predictions, read_train_sizes
from medeval.io.reference import (
    ReferenceDataError,
    ReferenceRows,
    check_against_test,
    check_ids_once,
    check_reference,
)
from medeval.metrics import UndefinedMetricWarning
from medeval.metrics.bootstrap import check_replicates, default_memory_budget
from medeval.options import EvaluationOptions
from medeval.weights import Utilities

__all__ = [
    "NO_REFERENCE_NOTE",
    "EvaluateSettings",
    "evaluate_file",
    "evaluate_table",
    "load_reference",
    "reference_rows",
]

#: Said when the label-free scores rest on the subconcept model alone (no test subconcepts, no
#: reference rows).
NO_REFERENCE_NOTE = (
    "no test subconcepts and no reference rows: the intervals of cBA / cF1 / cAUC resample the "
    "test rows and treat the subconcept model's posteriors as exact, so they cannot see that "
    "model's error (a model miscalibrated within a class biases cBA, and its interval still "
    "looks narrow). Give reference rows — held-out rows with the true 'subconcept', scored by "
    "the same classifier and subconcept model, from the same population and used to fit "
    "neither (e.g. a labelled validation set) — with --reference FILE (the predictions columns "
    "plus 'subconcept' and every q_<subconcept>): evaluate then reports the rectified rBA / rF1 "
    "/ rAUC, which correct that error, and recommends them."
)


@declared(
    {
        "device": [TypeOf(str, torch.device, desc="a device name or a torch.device")],
        "progress": [TypeOf(bool, np.bool_, desc="a bool")],
    }
)
@dataclass(frozen=True, kw_only=True)
class EvaluateSettings(EvaluationOptions):
    """How to evaluate (see :func:`medeval.evaluation.evaluate_predictions`): the user's
    :class:`~medeval.options.EvaluationOptions` plus where the bootstrap runs and whether it
    shows a progress bar.

    Raises:
        InvalidParameterError: a value outside its declared constraints, naming the field.
    """

    device: Any = "cpu"  # a name ("cpu", "cuda:1") or a torch.device
    progress: bool = False

    def options(self) -> dict[str, Any]:
        """Keyword arguments of :func:`~medeval.evaluation.evaluate_predictions`."""
        return dataclasses.asdict(self)


def reference_rows(
    table: PredictionTable, u: Utilities, *, threshold: float = 0.5, source: str | None = None
) -> ReferenceRows:
    """Check a table of reference rows (read from a file, or built in memory by a tool)
    against the train sizes ``u``.

    Checked: the predictions columns, the true ``subconcept`` (known names, on the side of
    their class), every ``q_<subconcept>`` column, and at least one row of every minority
    subconcept. ``y_pred`` defaults to ``y_score >= threshold`` (the test rows' rule).

    Raises:
        InputError: naming the table's file and the column or subconcept at fault.
    """
    check_reference(table, u)
    try:
        return ReferenceRows.from_table(
            table, u, threshold=float(threshold), source=source or str(table.path)
        )
    except ReferenceDataError as e:
        column = e.column if e.column in ("y_true", "y_pred", "y_score", "subconcept") else None
        raise InputError(table.path, str(e), column=column) from None


def load_reference(
    path: str | Path, u: Utilities, *, threshold: float = 0.5, source: str | None = None
) -> tuple[ReferenceRows, PredictionTable]:
    """Read a reference file and check it (:func:`reference_rows`).

    Raises:
        InputError: naming the file and the column or subconcept at fault.
    """
    table = read_predictions(path, u)
    check_ids_once(path)
    return reference_rows(table, u, threshold=threshold, source=source or str(path)), table


def evaluate_file(
    predictions: str | Path,
    train_sizes: str | Path | None = None,
    *,
    reference: str | Path | None = None,
    reference_source: str | None = None,
    settings: EvaluateSettings | None = None,
) -> tuple[PredictionTable, Evaluation]:
    """Read a predictions file (and its train sizes and reference rows), then evaluate it
    with :func:`evaluate_table`.

    ``reference``: a file of reference rows (the predictions columns plus the true
    ``subconcept`` and every ``q_<subconcept>``, checked by :func:`load_reference`);
    ``reference_source`` names where the rows come from in the outputs (default: the file's
    path).

    The returned table's ``posteriors`` are ``None``: :func:`evaluate_table` takes them.
    """
    s = settings or EvaluateSettings()
    if s.n_bootstrap:  # before the file is read: the replicates' scores must fit the budget
        budget = s.memory_budget or default_memory_budget(s.device)
        check_replicates(s.n_bootstrap, budget)
    u = read_train_sizes(train_sizes) if train_sizes else None
    rows = None
    if reference is not None:
        if u is None:
            raise InputError(reference, "reference data need --train-sizes (the subconcepts)")
        rows, _ = load_reference(reference, u, threshold=s.threshold, source=reference_source)
    table = read_predictions(predictions, u, memory_budget=s.memory_budget)
    return table, evaluate_table(table, u, reference=rows, settings=s)


def evaluate_table(
    table: PredictionTable,
    train_sizes: Utilities | None = None,
    *,
    reference: ReferenceRows | None = None,
    settings: EvaluateSettings | None = None,
) -> Evaluation:
    """The evaluation of every tool (``evaluate``, ``subconcepts``, ``discover``, ``train`` and
    its re-evaluation): a table of test predictions in memory, the train sizes' utilities, the
    checked reference rows and one settings object. :func:`evaluate_file` is reading, then
    this; a tool that makes its table in memory hands the same table here and to its file
    writer, so that evaluating its written files gives the same numbers.

    Undefined scores are reported in ``Evaluation.notes`` (their
    :class:`~medeval.metrics.UndefinedMetricWarning` is recorded, not repeated to the caller,
    and its message kept in ``Evaluation.warned``; every other warning reaches the caller);
    notes about the inputs themselves (see :func:`~medeval.io.predictions.input_notes`) come
    first. With reference rows the evaluation gives the rectified scores rBA / rF1 / rAUC
    (docs/method.md, "Rectified scores"), which are then recommended, and the subconcept
    model's within-class balanced accuracy on them (also its quality when the test set has no
    subconcept labels). Without test subconcepts and without reference rows the notes say why
    the label-free intervals cannot see the subconcept model's error
    (:data:`NO_REFERENCE_NOTE`).

    The table's ``posteriors`` are handed over: ``table.posteriors`` is ``None`` afterwards,
    and the evaluation frees them once it has made its weights, so that they are not held
    twice on millions of rows.

    Raises:
        InputError: probability scores with a threshold outside [0, 1], naming the file;
            reference rows that are the test rows
            (:func:`~medeval.io.reference.check_against_test`).
    """
    s = settings or EvaluateSettings()
    if not isinstance(s, EvaluateSettings):
        raise TypeError(f"settings must be EvaluateSettings, got {type(s).__name__}")
    if reference is not None:
        check_against_test(reference, table, float(s.threshold))
    first = input_notes(table, float(s.threshold))
    has_posteriors = table.posteriors is not None
    handed = {"posteriors": table.posteriors}
    table.posteriors = None  # handed over, not kept (the largest input at millions of rows)
    ev, warned = _evaluate_recorded(table, handed, train_sizes, s, reference)
    notes = [*first, *ev.notes]
    if reference is None and table.subconcept is None and has_posteriors and train_sizes:
        notes.append(NO_REFERENCE_NOTE)
    return dataclasses.replace(ev, notes=notes, warned=warned)


def _evaluate_recorded(
    table: PredictionTable,
    handed: dict[str, Any],
    u: Any,
    s: EvaluateSettings,
    reference: ReferenceRows | None,
) -> tuple[Evaluation, list[str]]:
    """The evaluation core on ``table`` and the ``posteriors`` of ``handed`` (taken out of
    it, so that no frame but the evaluation's holds them), and the reference rows: its
    undefined-score and few-reference-rows warnings are recorded (the evaluation's notes
    state them; their messages are returned), every other warning is passed on to the
    caller."""
    with warnings.catch_warnings(record=True) as caught, checked():
        warnings.simplefilter("always")
        # Every keyword spelled out: a ** dict would hold the posteriors until the evaluation
        # returns. EvaluateSettings checked the options when it was built.
        ev = evaluate_core(
            table.y_true,
            y_score=table.y_score,
            y_pred=table.y_pred,
            subconcept=table.subconcept,
            posteriors=handed.pop("posteriors"),
            train_sizes=u,
            reference=reference,
            threshold=s.threshold,
            n_bootstrap=s.n_bootstrap,
            confidence=s.confidence,
            stratify=s.stratify,
            seed=s.seed,
            device=s.device,
            progress=s.progress,
            memory_budget=s.memory_budget,
        )
    warned = []
    for w in caught:
        if issubclass(w.category, UndefinedMetricWarning | FewReferenceRowsWarning):
            warned.append(str(w.message))  # the evaluation states these in its notes
            continue
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    return ev, warned
