"""Weighted recall, balanced accuracy, F1 and class-standardised accuracy (docs/method.md,
"Weighted scores"): ``format_inputs → confusion sums → *_from_sums``, the formulas the bootstrap
shares. Inputs and results of every metric: :mod:`medeval.metrics`."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import torch

from medeval.errors import UserError

from ._checks import ArrayLike, Inputs, format_inputs, scale_weights, warn_undefined

_KINDS = {"y_true": "label", "y_pred": "label", "sample_weight": "weight"}

Result = torch.Tensor | np.ndarray | float


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
    return torch.where(den > 0, num / den, float("nan"))  # den is a sum of weights: >= 0


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


def _sums(
    metric: str, needs: tuple[int, ...], y_true, y_pred, sample_weight, pos_label
) -> tuple[Inputs, ConfusionSums]:
    """Confusion sums of the formatted inputs; warns where a class of ``needs`` weighs 0."""
    inputs = format_inputs(
        _KINDS, y_true=y_true, y_pred=y_pred, sample_weight=sample_weight, pos_label=pos_label
    )
    yt, yp, w = inputs.tensors
    s = confusion_sums(yt, yp, scale_weights(w))
    for c in needs:
        warn_undefined(metric, f"class {c} has zero total weight", (s.pos if c else s.neg) <= 0)
    return inputs, s


def class_recalls(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    pos_label: Any = None,
) -> Result:
    """Weighted recall of each class (negative class first; inputs: see :mod:`medeval.metrics`).

    Returns:
        ``(..., 2)`` array or tensor: ``[..., c]`` = Σ w [y=c, ŷ=c] / Σ w [y=c]; NaN (and a
        warning) for a class with zero total weight.
    """
    inputs, s = _sums("class_recalls", (0, 1), y_true, y_pred, sample_weight, pos_label)
    return inputs.result(torch.stack(recalls_from_sums(s), dim=-1))


def balanced_accuracy(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    pos_label: Any = None,
) -> Result:
    """Utility-weighted balanced accuracy ½ (Recall_0^(w) + Recall_1^(w)) (docs/method.md,
    "Weighted scores").

    Equals ``sklearn.metrics.balanced_accuracy_score(y_true, y_pred, sample_weight=w)`` when
    both classes have positive total weight; NaN and a warning otherwise.

    Args:
        y_true, y_pred: ``(..., N)`` labels of two classes (see :mod:`medeval.metrics`).
        sample_weight: ``(..., N)`` non-negative weights, broadcastable; ``None`` = all ones.
        pos_label: the positive class when the labels are not {0, 1} or {-1, 1}.

    Returns:
        ``(...)``: a float, numpy array or (for tensor input) tensor on the inputs' device.
    """
    inputs, s = _sums("balanced_accuracy", (0, 1), y_true, y_pred, sample_weight, pos_label)
    return inputs.result(ba_from_sums(s))


def f1(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    pos_label: Any = None,
) -> Result:
    """Weighted F1 of class 1: 2 TP / (2 TP + FP + FN) with weighted counts.

    Equals ``sklearn.metrics.f1_score(y_true, y_pred, sample_weight=w)`` when class 1 has
    positive total weight; NaN and a warning when it has none (its recall is undefined).
    Inputs as in :func:`balanced_accuracy`.

    Returns:
        ``(...)``: a float, numpy array or (for tensor input) tensor on the inputs' device.
    """
    inputs, s = _sums("f1", (1,), y_true, y_pred, sample_weight, pos_label)
    return inputs.result(f1_from_sums(s))


def weighted_accuracy(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    q: float | ArrayLike,
    sample_weight: ArrayLike | None = None,
    pos_label: Any = None,
) -> Result:
    """Accuracy standardised to a positive-class mix q: q·Recall_1 + (1−q)·Recall_0 (docs/method.md,
    "Weighted scores").

    ``q = 0.5`` gives balanced accuracy; ``q`` = the (weighted) prevalence of class 1 gives
    ordinary (weighted) accuracy. A class whose coefficient is 0 is not needed, so its absence
    does not make the result undefined.

    Args:
        q: scalar or array broadcastable to the leading shape ``(...)``, each in [0, 1].
        Other inputs as in :func:`balanced_accuracy`.
    """
    inputs, s = _sums("weighted_accuracy", (), y_true, y_pred, sample_weight, pos_label)
    qt = torch.as_tensor(np.asarray(q) if not isinstance(q, torch.Tensor) else q)
    qt = qt.to(dtype=inputs.dtype, device=inputs.device)
    if bool(torch.isnan(qt).any()) or bool(((qt < 0) | (qt > 1)).any()):
        raise UserError(f"q must lie in [0, 1]; got {qt.tolist()}")
    r0, r1 = recalls_from_sums(s)
    zero = torch.zeros_like(r0)
    term1 = torch.where(qt > 0, qt * r1, zero)
    term0 = torch.where(qt < 1, (1 - qt) * r0, zero)
    need1 = (qt > 0) & (s.pos <= 0)
    need0 = (qt < 1) & (s.neg <= 0)
    warn_undefined("weighted_accuracy", "class 1 has zero total weight", need1)
    warn_undefined("weighted_accuracy", "class 0 has zero total weight", need0)
    return inputs.result(term1 + term0)
