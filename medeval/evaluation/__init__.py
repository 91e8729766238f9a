"""One-call evaluation: the nine scores, their subsets, per-subconcept recall and bootstrap
intervals (docs/method.md, "Weighted scores", "Utility weights", "Evaluation subsets and analyses").

``evaluate_predictions`` takes a model's test predictions (plus, optionally, the true test
subconcepts, a subconcept model's posteriors and the training subconcept sizes) and returns an
:class:`Evaluation`. Point estimates use the exact metric formulas; intervals come from one
batched bootstrap computation (:mod:`medeval.metrics.bootstrap`).

Modules: :mod:`.core` (:func:`evaluate_predictions`, :func:`evaluate_core`: point estimates,
intervals, tables), :mod:`.result` (:class:`Evaluation` and the names of what it holds),
:mod:`.plan` (what the inputs allow: weightings, subsets, subconcepts), :mod:`.rectification`
(the rectified scores rBA, rF1, rAUC, docs/method.md, "Rectified scores").
"""

from medeval.evaluation.core import evaluate_core, evaluate_predictions
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
    "NO_SCORES",
    "PAPER_SCORES",
    "RECOMMENDED",
    "RECOMMENDED_RECTIFIED",
    "SCORE_DESCRIPTIONS",
    "Evaluation",
    "SubconceptRecall",
    "evaluate_core",
    "evaluate_predictions",
]
