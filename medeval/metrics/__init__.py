"""Functional, torch-based metric core (no I/O).

Inputs are numpy arrays or torch tensors of shape ``(N,)`` or batched ``(..., N)``; results are
tensors of the leading shape on the inputs' device, float64 (float32 on MPS). Ill-defined values
(a class with zero total weight) are NaN with an :class:`UndefinedMetricWarning`.
"""

from ._checks import UndefinedMetricWarning
from .classification import balanced_accuracy, class_recalls, f1, weighted_accuracy
from .ranking import roc_auc

__all__ = [
    "UndefinedMetricWarning",
    "balanced_accuracy",
    "class_recalls",
    "f1",
    "roc_auc",
    "weighted_accuracy",
]
