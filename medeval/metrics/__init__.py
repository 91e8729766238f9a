"""Functional, torch-based metric core (no I/O).

Inputs are numpy arrays, lists, pandas objects or torch tensors of shape ``(N,)`` (a ``(N, 1)``
column counts as ``(N,)``; scalars are rejected) or batched ``(..., N)``; labels are any two
classes ({0, 1}, {-1, 1}, or others with ``pos_label=``). Results keep the leading shape:
tensors on the inputs' device (float64, float32 on MPS) when a tensor came in, otherwise a
Python float or a numpy array. Ill-defined values (a class with zero total weight) are NaN with
an :class:`UndefinedMetricWarning`.

Input handling, the same for every metric, numpy and torch alike:

- Empty input (N = 0, also batched ``(..., 0)``) is not an error: no instances means every
  class has zero total weight, so the result is NaN (one per leading index) with an
  :class:`UndefinedMetricWarning`, where scikit-learn raises a ``ValueError``.
- Labels and weights of any integer dtype are accepted, unsigned ones (uint8/16/32/64)
  included; a uint64 weight of 2**63 or more is read as float64.
- Generators and other iterators, sets, dicts (and their views) are rejected with a
  ``TypeError`` naming what was given: an iterator would be used up, and a set or dict has no
  instance order to pair labels with scores.
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
