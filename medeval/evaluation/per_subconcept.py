"""An evaluation's per-subconcept results assembled from its bootstrap replicates: the table of
recalls and the worst subconcept of each class."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch

from medeval.evaluation.rectified import FewReferenceRowsWarning
from medeval.evaluation.rectified_recall import (
    LabelledRows,
    ReferenceEvidence,
    interval_method,
)
from medeval.evaluation.subconcept_recall import (
    NO_REFERENCE_ROWS,
    PER_SUBCONCEPT_COLUMNS,
    per_subconcept_rows,
    rectified_columns,
)
from medeval.evaluation.worst_subconcept import worst_subconcepts
from medeval.metrics._checks import UndefinedMetricWarning
from medeval.weights import Utilities

__all__ = ["PerSubconcept", "class_indicators", "per_subconcept"]


@dataclass(frozen=True)
class PerSubconcept:
    """An evaluation's per-subconcept results: the table (:data:`PER_SUBCONCEPT_COLUMNS`), the
    worst subconcept of each class (:func:`worst_subconcepts`) and each class's recall."""

    table: pd.DataFrame
    worst: list[dict[str, Any]]
    class_recall: dict[int, float]


def class_indicators(y: np.ndarray) -> np.ndarray:
    """``(N, 2)`` memberships of class 0 and class 1: as soft columns of the bootstrap they
    give each replicate's class recalls (the gap's other side)."""
    return np.stack([y == 0, y == 1], axis=1).astype(np.float64)


def per_subconcept(
    y: np.ndarray,
    yp: np.ndarray,
    plan: Any,
    u: Utilities | None,
    confidence: float,
    notes: list[str],
    *,
    reps: Any = None,
    reference: ReferenceEvidence | None = None,
    labelled: LabelledRows | None = None,
    seed: int = 0,
) -> PerSubconcept:
    """The per-subconcept table, with the rectified columns where ``reference`` (the reference
    rows, :func:`~medeval.evaluation.subconcept_recall.reference_evidence`) is given, and the
    worst subconcepts (with the rectified recall: which could be worst, from ``reps.n`` joint
    draws seeded by ``seed``).

    ``reps``: the evaluation's bootstrap :class:`~medeval.metrics.bootstrap.Replicates`, run
    with the soft columns ``[q̃ (S) | class indicators (2)]`` (``[class indicators]`` without
    posteriors or with true subconcepts), so that the gap and the recalls share their
    test-side replicates."""
    cols = list(PER_SUBCONCEPT_COLUMNS)
    hit = (yp == y).astype(np.float64)
    class_recall = {c: float(hit[y == c].mean()) if (y == c).any() else math.nan for c in (0, 1)}
    if not plan.sc_names:
        return PerSubconcept(pd.DataFrame(columns=cols), [], class_recall)
    rows = per_subconcept_rows(y, hit, plan, u, confidence, notes)
    k = len(plan.sc_names)
    soft = None if reps is None or reps.estimated_recall is None else reps.estimated_recall
    soft = None if soft is None else soft.to("cpu", torch.float64).numpy()
    est_reps = soft[:, :k] if soft is not None and soft.shape[1] == k + 2 else None
    class_reps = soft[:, -2:] if soft is not None else None
    rep_cols: dict[str, np.ndarray | None] = {"est_recall": est_reps}
    if reps is not None and reps.subconcept_recall is not None:
        rep_cols["recall"] = reps.subconcept_recall.to("cpu", torch.float64).numpy()
    rectified = None
    if (reference is not None or labelled is not None) and plan.q_class is not None:
        sides = np.array([plan.sc_side[nm] for nm in plan.sc_names])
        extra, rectified, msgs = rectified_columns(
            plan.sc_names, sides, plan.q_class, hit, y, reference, class_recall,
            labelled=labelled, confidence=confidence, n_draws=0 if reps is None else reps.n,
            seed=seed,
        )  # fmt: skip
        for i, row in enumerate(rows):
            row |= {c: _item(v[i]) for c, v in extra.items()}
            row["r_interval_method"] = interval_method(reference)
        for msg in msgs:
            notes.append(msg)
            undefined = NO_REFERENCE_ROWS in msg
            warnings.warn(
                msg, UndefinedMetricWarning if undefined else FewReferenceRowsWarning, stacklevel=4
            )
    order = sorted(
        range(len(rows)),
        key=lambda i: (
            rows[i]["class"],
            -(rows[i]["n_train"] if u is not None else rows[i]["n_test"]),
            rows[i]["subconcept"],
        ),
    )
    table = pd.DataFrame([rows[i] for i in order], columns=cols)
    ordered = {c: None if r is None else r[:, order] for c, r in rep_cols.items()}
    worst = worst_subconcepts(
        table, class_recall, ordered, class_reps, confidence=confidence,
        rectified=None if rectified is None else (rectified, np.array(order)),
    )  # fmt: skip
    return PerSubconcept(table, worst, class_recall)


def _item(x: Any) -> Any:
    """A table cell from a NumPy scalar (objects such as ``True`` or ``NaN`` as they are)."""
    return x.item() if hasattr(x, "item") else x
