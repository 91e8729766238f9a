"""Functional, torch-based metric core (no I/O).

Inputs are numpy arrays, lists, pandas objects or torch tensors of shape ``(N,)`` (a ``(N, 1)``
column counts as ``(N,)``) or batched ``(..., N)``; labels are any two classes ({0, 1}, {-1, 1},
or others with ``pos_label=``). Results keep the leading shape: tensors on the inputs' device
(float64, float32 on MPS) when a tensor came in, otherwise a Python float or a numpy array.
Ill-defined values (a class with zero total weight) are NaN with an
:class:`UndefinedMetricWarning`.
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
