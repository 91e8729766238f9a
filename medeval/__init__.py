"""medeval: utility-weighted evaluation that shows whether a classifier's headline score hides
failures on small subconcepts (docs/method.md, "Why subconcepts", "Weighted scores",
"Utility weights").

Data flow: data set → binary task with subconcepts (:mod:`medeval.tasks`) → splits
(:mod:`medeval.splits`) → model → predictions + subconcept posteriors → utility weights
(:mod:`medeval.weights`) → metrics (:mod:`medeval.metrics`) → analyses → report.
"""

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

# What a user passes or receives, each from the module that defines it (imported on first use:
# a command imports only what it uses, and `import medeval` pulls in neither torch nor pandas).
_LAZY = {
    # evaluation entry points and their result
    "evaluate_predictions": "medeval.evaluation",
    "Evaluation": "medeval.evaluation",
    "SubconceptRecall": "medeval.evaluation",  # what Evaluation.by_subconcept() returns
    "EvaluateSettings": "medeval.evaluation",
    "evaluate_file": "medeval.flows.evaluate",
    # inputs
    "read_predictions": "medeval.io.predictions",
    "read_train_sizes": "medeval.io.predictions",
    "PredictionTable": "medeval.io.predictions",
    "ReferenceRows": "medeval.io.reference",
    # weights
    "Utilities": "medeval.weights",
    "utilities": "medeval.weights",
    "true_weights": "medeval.weights",
    "predicted_weights": "medeval.weights",
    "class_conditional_weights": "medeval.weights",
    # during training: the scores as a torchmetrics metric
    "SubconceptScores": "medeval.metrics.streaming",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:  # lazy: `import medeval` stays cheap
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'medeval' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
