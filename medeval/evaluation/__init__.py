"""One-call evaluation: the scores, their subsets, per-subconcept recall and bootstrap intervals
(:func:`evaluate` for a table, :func:`evaluate_predictions` for arrays; docs/method.md; modules:
docs/layout.md)."""

from medeval.evaluation.core import (
    NO_REFERENCE_NOTE,
    EvaluateSettings,
    evaluate,
    evaluate_predictions,
)
from medeval.evaluation.result import (
    NO_REFERENCE,
    NO_SCORES,
    Evaluation,
)
from medeval.evaluation.worst_subconcept import (
    SubconceptRecall,  # what Evaluation.by_subconcept() returns
)
from medeval.scores import (
    ALL_SCORES,
    LABEL_FREE_RECTIFIED,
    PAPER_SCORES,
    RECOMMENDED,
    RECOMMENDED_RECTIFIED,
    SCORE_DESCRIPTIONS,
)

__all__ = [
    "ALL_SCORES",
    "LABEL_FREE_RECTIFIED",
    "NO_REFERENCE",
    "NO_REFERENCE_NOTE",
    "NO_SCORES",
    "PAPER_SCORES",
    "RECOMMENDED",
    "RECOMMENDED_RECTIFIED",
    "SCORE_DESCRIPTIONS",
    "EvaluateSettings",
    "Evaluation",
    "SubconceptRecall",
    "evaluate",
    "evaluate_predictions",
]
