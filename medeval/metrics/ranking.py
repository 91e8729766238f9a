"""Weighted ROC AUC with ties counted ½ (docs/method.md,
"Weighted scores"), batched over leading axes."""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from ._checks import ArrayLike, format_inputs, scale_weights, warn_undefined
from .classification import Result, _ratio

_KINDS = {"y_true": "label", "y_score": "score", "sample_weight": "weight"}


class AucSums(NamedTuple):
    """Sufficient statistics of the weighted AUC, each ``(...)``."""

    num: torch.Tensor  # Σ_{i pos} w_i (Σ_{j neg, s_j < s_i} w_j + ½ Σ_{j neg, s_j = s_i} w_j)
    pos: torch.Tensor  # Σ w [y=1]
    neg: torch.Tensor  # Σ w [y=0]


def auc_sums(
    y_true: torch.Tensor, y_score: torch.Tensor, w: torch.Tensor, *, presorted: bool = False
) -> AucSums:
    """Sufficient statistics from formatted ``(..., N)`` tensors; one sort per row.

    ``presorted=True`` skips the sort when ``y_score`` is already ascending along the last axis
    (callers that evaluate many weightings of the same scores sort once).
    """
    if presorted:
        s_sorted, wp = y_score, w * y_true
        wn = w - wp
    else:
        s_sorted, order = torch.sort(y_score, dim=-1, stable=True)
        wp = (w * y_true).gather(-1, order)
        wn = w.gather(-1, order) - wp
    # Tie groups of equal scores: group id of each sorted position.
    new = torch.ones_like(s_sorted, dtype=torch.bool)
    new[..., 1:] = s_sorted[..., 1:] != s_sorted[..., :-1]
    gid = new.cumsum(-1) - 1
    pos_g = torch.zeros_like(wp).scatter_add_(-1, gid, wp)
    neg_g = torch.zeros_like(wn).scatter_add_(-1, gid, wn)
    neg_below = neg_g.cumsum(-1) - neg_g
    num = (pos_g * (neg_below + 0.5 * neg_g)).sum(-1)
    return AucSums(num, wp.sum(-1), wn.sum(-1))


def auc_from_sums(s: AucSums) -> torch.Tensor:
    """AUC = num / (W_pos · W_neg); NaN where either class has zero weight."""
    return _ratio(s.num, s.pos * s.neg)


def roc_auc(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    pos_label: Any = None,
) -> Result:
    """Weighted area under the ROC curve; tied scores count ½.

    Equals ``sklearn.metrics.roc_auc_score(y_true, y_score, sample_weight=w)`` when both classes
    have positive total weight; NaN and a warning otherwise.

    The weights of each class are rescaled by a power of two (exact) before the sums, so the
    result does not depend on their scale (weights near 1e±160 neither overflow nor lose
    digits).

    Args:
        y_true: ``(..., N)`` labels of two classes ({0, 1}, booleans, {-1, 1}, or any two
            with ``pos_label``); a ``(N, 1)`` column is read as ``(N,)``.
        y_score: ``(..., N)`` scores, larger = more likely the positive class (±inf allowed,
            NaN not).
        sample_weight: ``(..., N)`` non-negative weights, broadcastable; ``None`` = all ones.
        pos_label: the positive class when the labels are not {0, 1} or {-1, 1}.

    Returns:
        ``(...)``: a float, numpy array or (for tensor input) tensor on the inputs' device.
    """
    inputs = format_inputs(
        _KINDS, y_true=y_true, y_score=y_score, sample_weight=sample_weight, pos_label=pos_label
    )
    yt, ys, w = inputs.tensors
    # AUC is a ratio of (positive weight) × (negative weight) sums: scale each class apart.
    positive = yt > 0
    w = scale_weights(scale_weights(w, positive), ~positive)
    s = auc_sums(yt, ys, w)
    for c, total in ((0, s.neg), (1, s.pos)):
        warn_undefined("roc_auc", f"class {c} has zero total weight", total <= 0)
    return inputs.result(auc_from_sums(s))
