"""The subconcept model's within-class balanced accuracy, what the label-free scores rest on, and
the warning for a weak one."""

from __future__ import annotations

import numpy as np

from medeval.metrics.multiclass import within_class_ba
from medeval.weights import Utilities, class_posteriors

__all__ = ["weak_model_warning", "within_class_ba_from_q", "within_class_balanced_accuracy"]


def within_class_balanced_accuracy(
    y_true: np.ndarray, subconcept: np.ndarray, posteriors, utilities: Utilities
) -> dict[str, float]:
    """Balanced accuracy of the subconcept model among each class's subconcepts.

    The prediction is the argmax of the posteriors renormalised within the instance's own class
    (the posteriors the class-conditional weights use); classes with fewer than two subconcepts
    present are left out.

    Args:
        y_true: ``(N,)`` classes in {0, 1}.
        subconcept: ``(N,)`` true subconcept names.
        posteriors: ``(N, S)`` DataFrame with subconcept-named columns, or an array in
            ``utilities.names`` order.

    Returns:
        ``{"class 0": ba, "class 1": ba}`` (classes with one subconcept omitted).
    """
    names, inverse = np.unique(np.asarray(subconcept).astype(str), return_inverse=True)
    codes = np.array([utilities.index(nm) for nm in names], dtype=np.int64)[inverse.reshape(-1)]
    return within_class_ba_from_q(y_true, codes, posteriors, utilities)


def within_class_ba_from_q(
    y_true: np.ndarray, codes: np.ndarray, posteriors, utilities: Utilities
) -> dict[str, float]:
    """:func:`within_class_balanced_accuracy` from subconcept codes ``(N,)`` into
    ``utilities.names`` (e.g. checked :class:`~medeval.io.reference.ReferenceRows`)."""
    q = class_posteriors(posteriors, utilities, y_true).q.cpu().numpy()
    return within_class_ba(y_true, codes, q)


def weak_model_warning(cls: str, ba: float) -> str:
    """The one wording of the warning for a subconcept model weak within class ``cls`` (its
    within-class balanced accuracy ``ba`` below :data:`medeval.scores.WEAK_WITHIN_CLASS_BA`)."""
    return (
        f"the subconcept model is weak within {cls} (balanced accuracy {ba:.2f} over its "
        "subconcepts): label-free weights then shrink toward the class average, so cBA / cF1 / "
        "cAUC move toward BA / F1 / AUC and understate a hidden failure"
    )
