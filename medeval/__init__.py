"""medeval: utility-weighted evaluation that shows whether a classifier's headline score hides
failures on small subconcepts (SPEC §1–§3).

Data flow: data set → binary task with subconcepts (:mod:`medeval.tasks`) → splits
(:mod:`medeval.splits`) → model → predictions + subconcept posteriors → utility weights
(:mod:`medeval.weights`) → metrics (:mod:`medeval.metrics`) → analyses → report.
"""

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "evaluate_predictions": "medeval.evaluation",
    "Evaluation": "medeval.evaluation",
    "utilities": "medeval.weights",
    "true_weights": "medeval.weights",
    "predicted_weights": "medeval.weights",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:  # lazy: `import medeval` stays cheap
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'medeval' has no attribute {name!r}")
