"""A predictions file → its :class:`~medeval.evaluation.Evaluation` (the library side of
``python -m medeval.evaluate``): the files read and checked, then
:func:`medeval.evaluation.evaluate`, the evaluation of every tool. The files a user reads are
rendered by :func:`medeval.report.outputs.output_files`.
"""

from __future__ import annotations

from pathlib import Path

from medeval._validation import TypeOf, validate_params
from medeval.errors import InputError
from medeval.evaluation import EvaluateSettings, Evaluation, evaluate
from medeval.io.predictions import PredictionTable, read_predictions, read_train_sizes
from medeval.io.reference import load_reference
from medeval.metrics.bootstrap import check_replicates, default_memory_budget

__all__ = ["evaluate_file"]


_PATH = TypeOf(str, Path, desc="a path")


@validate_params(
    {
        "predictions": [_PATH],
        "train_sizes": [_PATH, None],
        "reference": [_PATH, None],
        "reference_source": [TypeOf(str, desc="a str"), None],
        "settings": [TypeOf(EvaluateSettings, desc="EvaluateSettings"), None],
    }
)
def evaluate_file(
    predictions: str | Path,
    train_sizes: str | Path | None = None,
    *,
    reference: str | Path | None = None,
    reference_source: str | None = None,
    settings: EvaluateSettings | None = None,
) -> tuple[PredictionTable, Evaluation]:
    """Read a predictions file (and its train sizes and reference rows), then evaluate it
    with :func:`medeval.evaluation.evaluate`.

    ``reference``: a file of reference rows (the predictions columns plus the true
    ``subconcept`` and every ``q_<subconcept>``, checked by
    :func:`medeval.io.reference.load_reference`); ``reference_source`` names where the rows
    come from in the outputs (default: the file's path).

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
    return table, evaluate(table, u, reference=rows, settings=s)
