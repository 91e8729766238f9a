"""A predictions file → its :class:`~medeval.evaluation.Evaluation` (the library side of
``python -m medeval.evaluate``): the files read and checked, then
:func:`medeval.evaluation.evaluate`, the evaluation of every tool."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from medeval._validation import TypeOf, validate_params
from medeval.errors import InputError
from medeval.evaluation import EvaluateSettings, Evaluation, evaluate
from medeval.evaluation.looks import looks_note
from medeval.evaluation.rectified_recall import LabelledRows
from medeval.io.labels import (
    UNSURE,
    label_files,
    labels_note,
    planned_looks,
    read_ids,
    read_labels,
)
from medeval.io.predictions import PredictionTable, read_predictions, read_train_sizes
from medeval.io.reference import load_reference
from medeval.metrics.bootstrap import check_replicates, default_memory_budget
from medeval.weights import Utilities

__all__ = ["evaluate_file", "read_labelled"]


_PATH = TypeOf(str, Path, desc="a path")


@validate_params(
    {
        "predictions": [_PATH],
        "train_sizes": [_PATH, None],
        "reference": [_PATH, None],
        "reference_source": [TypeOf(str, desc="a str"), None],
        "labels": [_PATH, TypeOf(list, tuple, desc="a list of paths"), None],
        "settings": [TypeOf(EvaluateSettings, desc="EvaluateSettings"), None],
    }
)
def evaluate_file(
    predictions: str | Path,
    train_sizes: str | Path | None = None,
    *,
    reference: str | Path | None = None,
    reference_source: str | None = None,
    labels: str | Path | Sequence[str | Path] | None = None,
    settings: EvaluateSettings | None = None,
) -> tuple[PredictionTable, Evaluation]:
    """Read a predictions file (and its train sizes and reference rows), then evaluate it
    with :func:`medeval.evaluation.evaluate`.

    ``reference``: a file of reference rows (the predictions columns plus the true
    ``subconcept`` and every ``q_<subconcept>``, checked by
    :func:`medeval.io.reference.load_reference`); ``reference_source`` names where the rows
    come from in the outputs (default: the file's path). ``labels``: a file of test rows whose
    subconcept a person gave, or several (``id``, ``subconcept`` and, from
    ``python -m medeval.label``, the ``inclusion_probability`` and ``batch`` they were chosen
    with: each batch's to_label.csv, filled; :func:`read_labelled`).

    The returned table's ``posteriors`` are ``None``: the evaluation takes them.
    """
    s = settings or EvaluateSettings()
    if s.n_bootstrap:  # before the file is read: the replicates' scores must fit in memory
        check_replicates(s.n_bootstrap, default_memory_budget(s.device))
    u = read_train_sizes(train_sizes) if train_sizes else None
    rows = None
    if reference is not None:
        if u is None:
            raise InputError(reference, "reference data need --train-sizes (the subconcepts)")
        rows, _ = load_reference(reference, u, threshold=s.threshold, source=reference_source)
    table = read_predictions(predictions, u)
    labelled, notes = (
        (None, [])
        if labels is None
        else read_labelled(labels, predictions, table, u, confidence=s.confidence)
    )
    ev = evaluate(table, u, reference=rows, labels=labelled, settings=s)
    ev.notes = [*notes, *ev.notes]
    return table, ev


def read_labelled(
    labels: str | Path | Sequence[str | Path],
    predictions: str | Path,
    table: PredictionTable,
    u: Utilities | None,
    *,
    confidence: float = 0.95,
) -> tuple[LabelledRows, list[str]]:
    """The labelled test rows of ``labels`` (one file or several, their batches concatenated)
    matched by ``id`` to the rows of ``predictions`` (read as ``table``), and the notes reading
    them raised, the looks planned (``looks`` column) among them: where the intervals of
    this look are read at ``confidence``'s share (:mod:`medeval.evaluation.looks`).

    Raises:
        InputError: labels without train sizes, or a bad labels file (naming file, row, value).
    """
    files = label_files(labels)
    if u is None:
        raise InputError(files[0], "labels need --train-sizes (the subconcepts)")
    ids, _ = read_ids(predictions)
    fields, notes = read_labels(files, ids, np.asarray(table.y_true, dtype=np.int64), u)
    if not len(fields["index"]):
        raise InputError(
            files[0] if len(files) == 1 else ", ".join(map(str, files)),
            f"no labelled rows: every row is marked {UNSURE!r}; label some, or leave --labels out",
        )
    notes.append(labels_note(fields, files, len(ids)))
    looks, said = planned_looks(files)
    notes += [*said, looks_note(confidence, int(fields["batch"].max()), looks)]
    return LabelledRows(**fields, looks=looks), notes
