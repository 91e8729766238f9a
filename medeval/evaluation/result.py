"""The result of an evaluation, :class:`Evaluation` (its scores, intervals, tables and
notes, and their JSON form), and the names of what it holds."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from medeval.evaluation.rectified import RectifiedResult
from medeval.evaluation.subconcept_recall import recommended_column
from medeval.evaluation.worst_subconcept import SubconceptRecall, subconcept_recall_frame
from medeval.scores import (
    ALL_SCORES,
    RECOMMENDED,
    RECOMMENDED_RECTIFIED,
    SCORE_DESCRIPTIONS,
    WEAK_WITHIN_CLASS_BA,
)

#: Why the AUC family is unavailable without scores.
NO_SCORES = "no y_score (scores are needed for ROC AUC)"


#: Why the rectified scores are missing when no reference rows were given.
NO_REFERENCE = (
    "no reference rows (held-out rows with known subconcepts, scored by the same classifier and "
    "subconcept model); pass reference= (evaluate: --reference)"
)


@dataclass
class Evaluation:
    """Result of :func:`~medeval.evaluation.evaluate`.

    Attributes:
        scores: the nine scores of the paper, the label-free ``cBA``, ``cF1``, ``cAUC`` and the
            rectified ``rBA``, ``rF1``, ``rAUC`` (:data:`ALL_SCORES`) on the full test
            set; NaN where undefined or unavailable (the rectified ones without reference rows).
        intervals: ``{score: (low, high)}`` percentile intervals (full test set; for the
            rectified scores those of the joint bootstrap of test and reference rows).
        unavailable: ``{score: reason}`` for scores that could not be computed at all.
        subsets: long table, one row per subset × score: ``subset, subconcept, score, value,
            low, high, n_undefined`` (``largest`` and ``smallest`` repeat ``sub_1`` and
            ``sub_k``). With reference rows the rectified scores follow the others, on
            ``sub_i`` from the reference rows of ``sub_i`` too; their joint bootstrap runs on
            the full set only, so their ``low`` / ``high`` are NaN on ``sub_i``.
        per_subconcept: one row per subconcept: class, training size, utility, test size,
            prevalence within its class, recall (with interval), true and predicted weight
            sums over its test instances, and the label-free recall estimate ``est_recall``
            (with interval ``est_low``, ``est_high``) and soft test size ``est_n_test``; the
            intervals' method (``interval_method``: Clopper–Pearson, see ``_recall_intervals``) and
            the subconcept's reference rows (``n_reference``, NaN without reference rows).
        subconcept_model: within-class balanced accuracy of the subconcept model
            (``{"class 0": ..., "class 1": ...}``) on the test set when it has true
            subconcepts, else on reference data if given (``subconcept_model_source``).
        notes: undefined scores and other things a reader must know.
        rectified: the rectified scores' full result (correction terms, replicates, reference
            counts) when reference rows gave them, else ``None``.
        reference: the reference rows given: ``{"source", "n", "per_subconcept": {name:
            rows}, "few_rows": [minority subconcepts under FEW_REFERENCE_ROWS]}``, else
            ``None``.
    """

    scores: dict[str, float]
    intervals: dict[str, tuple[float, float]]
    unavailable: dict[str, str]
    subsets: pd.DataFrame
    per_subconcept: pd.DataFrame
    confidence: float
    bootstrap: dict[str, Any]
    n: int
    n_positive: int
    threshold: float | None
    notes: list[str] = field(default_factory=list)
    subconcept_model: dict[str, float] = field(default_factory=dict)
    subconcept_model_source: str = "test set"
    weighted_classes: list[str] = field(default_factory=lambda: ["class 1"])
    rectified: RectifiedResult | None = None
    reference: dict[str, Any] | None = None
    worst_subconcepts: list[dict[str, Any]] = field(default_factory=list)
    class_recall: dict[int, float] = field(default_factory=dict)

    @property
    def recommended_per_subconcept(self) -> str | None:
        """The per-subconcept column to read: ``"recall"`` (true test subconcepts known), else
        ``"r_recall"`` (rectified by reference rows), else ``"est_recall"`` (label-free: it
        shrinks toward the class's recall where the subconcept model is unsure)."""
        return recommended_column(self.per_subconcept)

    def by_subconcept(self) -> SubconceptRecall:
        """The recommended per-subconcept recall shaped like fairlearn's ``MetricFrame``:
        ``overall`` (each class's recall), ``by_group`` (per subconcept, with interval and
        source), ``worst`` (per class: the worst subconcept and its gap with intervals),
        ``group_min()`` and ``difference()``."""
        return subconcept_recall_frame(
            self.per_subconcept, self.class_recall, self.worst_subconcepts
        )

    @property
    def recommended(self) -> dict[str, str]:
        """The label-free score to read per family: the rectified one (``rBA``…) where
        reference rows gave it (defined: reference rows of one class give none), else the
        class-conditional one (``cBA``…)."""
        if self.rectified is None:
            return dict(RECOMMENDED)
        return {
            m: r if r not in self.unavailable and not math.isnan(self.scores[r]) else RECOMMENDED[m]
            for m, r in RECOMMENDED_RECTIFIED.items()
        }

    def weak_classes(self) -> list[str]:
        """Classes whose label-free weights rest on the subconcept model (their subconcepts
        differ in utility: in practice the minority class) and in which its within-class
        balanced accuracy is below :data:`WEAK_WITHIN_CLASS_BA`."""
        return [
            c
            for c, v in self.subconcept_model.items()
            if c in self.weighted_classes and not math.isnan(v) and v < WEAK_WITHIN_CLASS_BA
        ]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: top-level ``"scores"`` maps the nine names of the paper, the label-free
        ``cBA``, ``cF1``, ``cAUC`` and the rectified ``rBA``, ``rF1``, ``rAUC`` to a number or
        None; ``"recommended"`` names the label-free score to read per family; ``"reference"``
        and ``"rectification"`` (None without reference rows) describe the reference rows and
        the size of the correction."""
        return {
            "scores": {k: _num(self.scores[k]) for k in ALL_SCORES},
            "recommended": {**self.recommended, "per_subconcept": self.recommended_per_subconcept},
            "intervals": {
                k: {"low": _num(lo), "high": _num(hi), "n_undefined": self._n_undef(k)}
                for k, (lo, hi) in self.intervals.items()
            },
            "confidence": self.confidence,
            "unavailable": dict(self.unavailable),
            "descriptions": SCORE_DESCRIPTIONS,
            "subsets": _records(self.subsets.to_dict(orient="records")),
            "per_subconcept": _records(self.per_subconcept.to_dict(orient="records")),
            "bootstrap": self.bootstrap,
            "n": self.n,
            "n_positive": self.n_positive,
            "threshold": self.threshold,
            "subconcept_model": {k: _num(v) for k, v in self.subconcept_model.items()},
            "subconcept_model_source": self.subconcept_model_source,
            "weighted_classes": list(self.weighted_classes),
            "notes": list(self.notes),
            "reference": self.reference,
            "rectification": _rectification_block(self.rectified),
            "worst_subconcepts": _records(self.worst_subconcepts),
        }

    def _n_undef(self, score: str) -> int | None:
        if self.rectified is not None and score in self.rectified.n_undefined:
            return self.rectified.n_undefined[score]
        row = self.subsets[(self.subsets.subset == "full") & (self.subsets.score == score)]
        return (
            None if row.empty or pd.isna(row.n_undefined.iloc[0]) else int(row.n_undefined.iloc[0])
        )

    def table(self) -> pd.DataFrame:
        """The full-test scores with their intervals (a readable summary)."""
        no_interval = (math.nan, math.nan)
        rows = [
            (k, self.scores[k], *self.intervals.get(k, no_interval), self.unavailable.get(k, ""))
            for k in ALL_SCORES
        ]
        return pd.DataFrame(rows, columns=["score", "value", "low", "high", "note"])


def _num(x: Any) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _rectification_block(res: RectifiedResult | None) -> dict[str, Any] | None:
    """Per family cM(test), cM(R), wM(R), the correction, and the joint bootstrap."""
    if res is None:
        return None
    return {
        "families": {
            m: {
                "class_conditional_test": _num(res.class_conditional[m]),
                "class_conditional_reference": _num(res.reference_scores[m]["c"]),
                "true_weight_reference": _num(res.reference_scores[m]["w"]),
                "correction": _num(res.correction[m]),
            }
            for m in res.correction
        },
        "bootstrap": dict(res.bootstrap),
    }


def _records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: _num(v) if isinstance(v, float) else v for k, v in r.items()} for r in records]
