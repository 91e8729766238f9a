"""The subconcept model's quality from one confusion matrix: balanced accuracy and macro F1 over
the subconcepts, and balanced accuracy within each class (NaN and a warning where undefined)."""

from __future__ import annotations

import math
import warnings

import numpy as np

from ._checks import UndefinedMetricWarning

__all__ = ["confusion", "macro_balanced_accuracy", "macro_f1", "within_class_ba"]


def confusion(codes: np.ndarray, pred: np.ndarray, k: int) -> np.ndarray:
    """``(K, K)`` counts, row = true code, column = predicted code (both ``(N,)`` in 0..K-1)."""
    codes, pred = np.asarray(codes, dtype=np.int64), np.asarray(pred, dtype=np.int64)
    return np.bincount(codes * k + pred, minlength=k * k).reshape(k, k).astype(np.float64)


def _undefined(what: str) -> float:
    warnings.warn(f"{what} is undefined; reported as NaN", UndefinedMetricWarning, stacklevel=3)
    return math.nan


def macro_balanced_accuracy(cm: np.ndarray, what: str = "balanced accuracy") -> float:
    """Mean recall over the codes with true rows; NaN (warned) when there are none."""
    n_true = cm.sum(1)
    present = n_true > 0
    if not present.any():
        return _undefined(f"{what} (no true rows)")
    return float(np.mean(np.diag(cm)[present] / n_true[present]))


def macro_f1(cm: np.ndarray, what: str = "macro F1") -> float:
    """Mean F1 over the codes that are true or predicted somewhere; NaN (warned) when none."""
    tp, denom = np.diag(cm), cm.sum(1) + cm.sum(0)
    seen = denom > 0
    if not seen.any():
        return _undefined(f"{what} (no rows)")
    return float(np.mean(2 * tp[seen] / denom[seen]))


def within_class_ba(y: np.ndarray, codes: np.ndarray, q_class: np.ndarray) -> dict[str, float]:
    """``{"class c": ba}``: the balanced accuracy of the argmax of the class-renormalised
    posteriors ``q_class`` ``(N, S)`` against the true codes ``(N,)``, among the rows of each
    class ``y`` ``(N,)``; a class with fewer than two subconcepts present is left out (nothing
    to tell apart)."""
    y, codes = np.asarray(y), np.asarray(codes, dtype=np.int64)
    k = q_class.shape[1]
    pred = q_class.argmax(axis=1)
    out = {}
    for c in (0, 1):
        rows = y == c
        if len(np.unique(codes[rows])) < 2:
            continue
        cm = confusion(codes[rows], pred[rows], k)
        out[f"class {c}"] = macro_balanced_accuracy(cm, f"within-class BA of class {c}")
    return out
