"""One-call evaluation: the nine scores, their subsets, per-subconcept recall and bootstrap
intervals (docs/method.md, "Weighted scores", "Utility weights", "Evaluation subsets and analyses").

``evaluate`` takes a table of test predictions (plus, optionally, the true test subconcepts and a
subconcept model's posteriors), the utilities of the training subconcept sizes, reference rows and
one :class:`EvaluateSettings`, and returns an :class:`Evaluation`; ``evaluate_predictions`` does
the same for arrays. Point estimates use the exact metric formulas; intervals come from one
batched bootstrap computation (:mod:`medeval.metrics.bootstrap`).

Modules: docs/layout.md.
"""

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
