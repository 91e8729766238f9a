"""Weighted recall, balanced accuracy, F1 and class-standardised accuracy (SPEC §2).

Each metric is ``format_inputs → confusion sums (sufficient statistics) → *_from_sums``; the
bootstrap engine computes the same sums for many replicates at once and reuses the
``*_from_sums`` formulas, so point estimates and intervals share one definition.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from ._checks import ArrayLike, format_inputs, warn_undefined

_KINDS = {"y_true": "binary", "y_pred": "binary", "sample_weight": "weight"}


class ConfusionSums(NamedTuple):
    """Weighted confusion sums, each ``(...)``: class totals and correctly classified mass."""

    pos: torch.Tensor  # Σ w [y=1]
    tp: torch.Tensor  # Σ w [y=1, ŷ=1]
    neg: torch.Tensor  # Σ w [y=0]
    tn: torch.Tensor  # Σ w [y=0, ŷ=0]


def confusion_sums(y_true: torch.Tensor, y_pred: torch.Tensor, w: torch.Tensor) -> ConfusionSums:
    """Sufficient statistics from formatted ``(..., N)`` tensors."""
    wp = w * y_true
    wn = w - wp
    return ConfusionSums(wp.sum(-1), (wp * y_pred).sum(-1), wn.sum(-1), (wn * (1 - y_pred)).sum(-1))


def _ratio(num: torch.Tensor, den: torch.Tensor) -> torch.Tensor:
    """num / den, NaN where den == 0 (never a silent 0 or 1)."""
    nan = torch.full_like(num, float("nan"))
    return torch.where(den > 0, num / torch.where(den > 0, den, 1), nan)


def recalls_from_sums(s: ConfusionSums) -> tuple[torch.Tensor, torch.Tensor]:
    """(recall of class 0, recall of class 1); NaN where the class has zero weight."""
    return _ratio(s.tn, s.neg), _ratio(s.tp, s.pos)


def ba_from_sums(s: ConfusionSums) -> torch.Tensor:
    r0, r1 = recalls_from_sums(s)
    return 0.5 * (r0 + r1)


def f1_from_sums(s: ConfusionSums) -> torch.Tensor:
    """2 TP / (2 TP + FP + FN); NaN where class 1 has zero weight (its recall is undefined)."""
    fp = s.neg - s.tn
    f = _ratio(2 * s.tp, s.tp + s.pos + fp)
    return torch.where(s.pos > 0, f, torch.full_like(f, float("nan")))


def _warn_classes(metric: str, s: ConfusionSums, classes: tuple[int, ...], context: str) -> None:
    for c in classes:
        total = s.neg if c == 0 else s.pos
        warn_undefined(metric, f"class {c} has zero total weight", total <= 0, context)


def class_recalls(
    y_true: ArrayLike, y_pred: ArrayLike, *, sample_weight: ArrayLike | None = None
) -> torch.Tensor:
    """Weighted recall of each class.

    Args:
        y_true, y_pred: ``(..., N)`` labels in {0, 1}.
        sample_weight: ``(..., N)`` non-negative weights, broadcastable; ``None`` = all ones.

    Returns:
        ``(..., 2)``: ``[..., c]`` = Σ w [y=c, ŷ=c] / Σ w [y=c]; NaN (and a warning) for a class
        with zero total weight.
    """
    (yt, yp, w), _, _ = format_inputs(
        _KINDS, y_true=y_true, y_pred=y_pred, sample_weight=sample_weight
    )
    s = confusion_sums(yt, yp, w)
    _warn_classes("class_recalls", s, (0, 1), "")
    return torch.stack(recalls_from_sums(s), dim=-1)


def balanced_accuracy(
    y_true: ArrayLike, y_pred: ArrayLike, *, sample_weight: ArrayLike | None = None
) -> torch.Tensor:
    """Utility-weighted balanced accuracy ½ (Recall_0^(w) + Recall_1^(w)) (SPEC §2).

    Equals ``sklearn.metrics.balanced_accuracy_score(y_true, y_pred, sample_weight=w)`` when
    both classes have positive total weight; NaN and a warning otherwise.

    Args:
        y_true, y_pred: ``(..., N)`` labels in {0, 1}.
        sample_weight: ``(..., N)`` non-negative weights, broadcastable; ``None`` = all ones.

    Returns:
        ``(...)`` tensor on the inputs' device.
    """
    (yt, yp, w), _, _ = format_inputs(
        _KINDS, y_true=y_true, y_pred=y_pred, sample_weight=sample_weight
    )
    s = confusion_sums(yt, yp, w)
    _warn_classes("balanced_accuracy", s, (0, 1), "")
    return ba_from_sums(s)


def f1(
    y_true: ArrayLike, y_pred: ArrayLike, *, sample_weight: ArrayLike | None = None
) -> torch.Tensor:
    """Weighted F1 of class 1: 2 TP / (2 TP + FP + FN) with weighted counts.

    Equals ``sklearn.metrics.f1_score(y_true, y_pred, sample_weight=w)`` when class 1 has
    positive total weight; NaN and a warning when it has none (its recall is undefined).

    Returns:
        ``(...)`` tensor on the inputs' device.
    """
    (yt, yp, w), _, _ = format_inputs(
        _KINDS, y_true=y_true, y_pred=y_pred, sample_weight=sample_weight
    )
    s = confusion_sums(yt, yp, w)
    _warn_classes("f1", s, (1,), "")
    return f1_from_sums(s)


def weighted_accuracy(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    q: float | ArrayLike,
    sample_weight: ArrayLike | None = None,
) -> torch.Tensor:
    """Accuracy standardised to a positive-class mix q: q·Recall_1 + (1−q)·Recall_0 (SPEC §2).

    ``q = 0.5`` gives balanced accuracy; ``q`` = the (weighted) prevalence of class 1 gives
    ordinary (weighted) accuracy. A class whose coefficient is 0 is not needed, so its absence
    does not make the result undefined.

    Args:
        q: scalar or tensor broadcastable to the leading shape ``(...)``, each in [0, 1].
    """
    (yt, yp, w), device, dtype = format_inputs(
        _KINDS, y_true=y_true, y_pred=y_pred, sample_weight=sample_weight
    )
    qt = torch.as_tensor(q, dtype=dtype, device=device)
    if bool(torch.isnan(qt).any()) or bool(((qt < 0) | (qt > 1)).any()):
        raise ValueError(f"q must lie in [0, 1]; got {qt.tolist()}")
    s = confusion_sums(yt, yp, w)
    r0, r1 = recalls_from_sums(s)
    zero = torch.zeros_like(r0)
    term1 = torch.where(qt > 0, qt * r1, zero)
    term0 = torch.where(qt < 1, (1 - qt) * r0, zero)
    need1 = (qt > 0) & (s.pos <= 0)
    need0 = (qt < 1) & (s.neg <= 0)
    warn_undefined("weighted_accuracy", "class 1 has zero total weight", need1)
    warn_undefined("weighted_accuracy", "class 0 has zero total weight", need0)
    return term1 + term0
