"""Labelled test rows as reference rows of the rectified scores, weighted by the inverse of their
inclusion probabilities (docs/method.md, "Labels chosen where they decide")."""

from __future__ import annotations

import numpy as np
import pandas as pd

from medeval.evaluation.rectified_recall import LabelledRows
from medeval.io.reference import ReferenceRows
from medeval.weights import Utilities


def labelled_reference(
    labels: LabelledRows,
    y: np.ndarray,
    y_pred: np.ndarray,
    y_score: np.ndarray | None,
    posteriors: pd.DataFrame,
    utilities: Utilities,
) -> ReferenceRows:
    """The labelled test rows as weighted reference rows: weights ``1/π`` scaled to sum to the
    number of rows (a row that stood for many unlabelled ones counts for them)."""
    i = labels.index
    w = 1.0 / labels.pi
    q = posteriors[list(utilities.names)].to_numpy(dtype=np.float64)[i]
    return ReferenceRows(
        y[i], labels.subconcept, q, tuple(utilities.names), y_pred[i],
        None if y_score is None else y_score[i], source="labelled test rows",
        row_weight=w * len(i) / w.sum(),
    )  # fmt: skip


def pooled(reference: ReferenceRows | None, labelled: ReferenceRows | None) -> ReferenceRows | None:
    """Held-out reference rows and labelled test rows as one set of reference rows (each source
    weighted by its number of rows); either alone as it is."""
    if reference is None or labelled is None:
        return reference if labelled is None else labelled
    weight = np.concatenate([
        np.ones(len(reference)) if reference.row_weight is None else reference.row_weight,
        labelled.row_weight,
    ])  # fmt: skip
    score = None
    if reference.y_score is not None and labelled.y_score is not None:
        score = np.concatenate([reference.y_score, labelled.y_score])
    return ReferenceRows(
        np.concatenate([reference.y_true, labelled.y_true]),
        np.concatenate([reference.subconcept, labelled.subconcept]),
        np.concatenate([reference.posteriors, labelled.posteriors]),
        reference.names,
        np.concatenate([reference.y_pred, labelled.y_pred]),
        score,
        source=f"{reference.source} and {labelled.source}",
        row_weight=weight,
    )
