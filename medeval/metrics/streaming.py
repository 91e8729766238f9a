"""Subconcept-aware scores over batches and processes: a ``torchmetrics.Metric`` giving the point
estimates of :func:`medeval.evaluate_predictions` from confusion sums and concatenated scores
(Lightning use: ``docs/integrations.md``)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torchmetrics import Metric
from torchmetrics.utilities import dim_zero_cat

from medeval._validation import TypeOf, validate_params
from medeval.errors import UserError
from medeval.metrics._checks import UndefinedMetricWarning, format_inputs
from medeval.metrics.classification import ConfusionSums, ba_from_sums, confusion_sums, f1_from_sums
from medeval.metrics.ranking import auc_from_sums, auc_sums
from medeval.options import THRESHOLD
from medeval.scores import (
    FAMILIES,
    INSTANCE_SCORES,
    SCORED_WEIGHTINGS,
    instance_score,
    labels_from_scores,
)
from medeval.weights import (
    Utilities,
    class_conditional_weights,
    predicted_weights,
    utilities_from_train_sizes,
)

__all__ = ["SubconceptScores", "instance_weights"]


def instance_weights(
    keys: Sequence[str],
    utilities: Utilities,
    y_true: torch.Tensor,
    *,
    subconcept: Any = None,
    posteriors: Any = None,
) -> dict[str, torch.Tensor]:
    """Per-instance weights ``{key: (N,)}`` for weighting keys ``"", "w", "p", "c"``.

    Args:
        y_true: ``(N,)`` float64 labels in {0, 1}.
        subconcept: ``(N,)`` integer codes into ``utilities.names`` (needed for ``"w"``).
        posteriors: ``(N, S)`` subconcept posteriors, columns in ``utilities.names`` order (``"p"``,
            ``"c"``).
    """
    n, dev = len(y_true), y_true.device
    out: dict[str, torch.Tensor] = {}
    for key in keys:
        if key == "":
            out[key] = torch.ones(n, dtype=y_true.dtype, device=dev)
        elif key == "w":
            values = torch.tensor(utilities.values, dtype=y_true.dtype, device=dev)
            out[key] = values[_codes(subconcept, utilities, y_true)]
        else:
            if posteriors is None:
                raise UserError(
                    f"{key}BA/{key}F1/{key}AUC need posteriors (N, S) of the subconcept model"
                )
            q = torch.as_tensor(posteriors).to(dev)
            if q.ndim != 2 or q.shape[0] != n:
                raise UserError(f"posteriors must be (N={n}, S); got shape {tuple(q.shape)}")
            a = (
                predicted_weights(q, utilities)
                if key == "p"
                else class_conditional_weights(q, utilities, y_true)
            )
            out[key] = a.to(y_true.dtype)
    return out


def _codes(subconcept: Any, utilities: Utilities, y_true: torch.Tensor) -> torch.Tensor:
    """Validated ``(N,)`` subconcept codes: in range and on the side of each instance's class."""
    if subconcept is None:
        raise UserError("wBA/wF1/wAUC need subconcept: integer codes (N,) into the train sizes")
    codes = torch.as_tensor(subconcept, device=y_true.device)
    if codes.dtype.is_floating_point or codes.dtype == torch.bool or codes.shape != y_true.shape:
        raise UserError(
            f"subconcept must be integer codes of shape {tuple(y_true.shape)}; "
            f"got {codes.dtype} {tuple(codes.shape)}"
        )
    codes = codes.long()
    bad = (codes < 0) | (codes >= len(utilities.names))
    if bool(bad.any()):
        i = int(torch.nonzero(bad)[0])
        raise UserError(
            f"subconcept code {int(codes[i])} at index {i} is out of range: there are "
            f"{len(utilities.names)} subconcepts ({', '.join(utilities.names)})"
        )
    sides = torch.tensor(np.array(utilities.sides), device=y_true.device)[codes]
    wrong = sides != y_true.long()
    if bool(wrong.any()):
        i = int(torch.nonzero(wrong)[0])
        raise UserError(
            f"index {i}: subconcept {utilities.names[int(codes[i])]!r} belongs to class "
            f"{int(sides[i])} but y_true is {int(y_true[i])}"
        )
    return codes


class SubconceptScores(Metric):
    """Unweighted, true-weight, predicted-weight and class-conditional scores over batches.

    Args:
        train_sizes: ``{name: {"class": 0 or 1, "n": count}}`` training subconcept sizes, or
            :class:`~medeval.weights.Utilities`; their order fixes the subconcept codes and the
            posterior columns.
        scores: names from :data:`medeval.scores.INSTANCE_SCORES` (default: all twelve).
            Scores starting with ``w`` need ``subconcept`` in every ``update``; ``p`` and ``c``
            need ``posteriors``.
        threshold: predicted label = ``y_score >= threshold``.
        pos_label: the positive class when ``y_true`` is not {0, 1}, booleans or {-1, 1}
            (as in the functional metrics).
        kwargs: passed to :class:`torchmetrics.Metric` (``sync_on_compute``,
            ``process_group``, …).

    ``compute()`` returns ``{score: scalar float64 tensor}``; a score whose class has zero
    total weight in everything seen (e.g. no positive instance) is NaN with an
    :class:`~medeval.metrics.UndefinedMetricWarning`. "pAUC" is the predicted-weight AUC, not
    a partial AUC.
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False

    @validate_params(
        {
            "train_sizes": [TypeOf(Mapping, Utilities, desc="train sizes or Utilities")],
            "scores": [TypeOf(list, tuple, desc="a list of score names"), None],
            "threshold": [THRESHOLD],
            "pos_label": [TypeOf(object, desc="a label")],
        }
    )
    def __init__(
        self,
        train_sizes: Mapping[str, Mapping[str, int]] | Utilities,
        *,
        scores: Sequence[str] | None = None,
        threshold: float = 0.5,
        pos_label: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        u = train_sizes
        self.utilities = u if isinstance(u, Utilities) else utilities_from_train_sizes(u)
        names = tuple(INSTANCE_SCORES if scores is None else scores)
        if isinstance(scores, str) or not names:
            raise UserError(f"scores must be a non-empty list of names from {INSTANCE_SCORES}")
        parsed = [instance_score(s) for s in names]  # validates every name
        self.scores = names
        self.threshold = float(threshold)
        self.pos_label = pos_label
        prefixes = [w.prefix for w in SCORED_WEIGHTINGS]
        self._conf_keys = [
            k for k in prefixes if any(p == (k, f) for p in parsed for f in FAMILIES[:2])
        ]
        self._auc_keys = [k for k in prefixes if (k, "AUC") in parsed]
        self._keys = [k for k in prefixes if k in self._conf_keys or k in self._auc_keys]
        # sums[k] = (Σ w[y=1], Σ w[y=1, ŷ=1], Σ w[y=0], Σ w[y=0, ŷ=0]) for weighting k
        self.add_state(
            "sums",
            default=torch.zeros(len(self._conf_keys), 4, dtype=torch.float64),
            dist_reduce_fx="sum",
        )
        # AUC rows: (y_true, y_score, one weight column per AUC weighting)
        self.add_state("auc_rows", default=[], dist_reduce_fx="cat")

    def update(
        self,
        y_score: torch.Tensor,
        y_true: torch.Tensor,
        subconcept: torch.Tensor | None = None,
        posteriors: torch.Tensor | None = None,
    ) -> None:
        """Add a batch.

        Args:
            y_score: ``(N,)`` scores for class 1 (probabilities: the threshold applies to them).
            y_true: ``(N,)`` labels: {0, 1}, booleans, {-1, 1}, or two labels with
                ``pos_label`` (the functional metrics' rule).
            subconcept: ``(N,)`` integer codes into the train-sizes order (for w-scores).
            posteriors: ``(N, S)`` subconcept posteriors, rows summing to 1, columns in the
                train-sizes order (for p- and c-scores).
        """
        yt, ys = self._format(y_true, y_score)
        w = instance_weights(
            self._keys, self.utilities, yt, subconcept=subconcept, posteriors=posteriors
        )
        if self._conf_keys:
            yp = labels_from_scores(ys, self.threshold)
            s = confusion_sums(yt, yp, torch.stack([w[k] for k in self._conf_keys]))
            self.sums += torch.stack(tuple(s), dim=-1)
        if self._auc_keys:
            self.auc_rows.append(torch.stack([yt, ys, *(w[k] for k in self._auc_keys)], dim=-1))

    def _format(self, y_true: Any, y_score: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """``(N,)`` float64 labels and scores, formatted as by the functional metrics."""
        # a tensor, or a numpy array for anything else (labels may be strings), as (N,)
        yt, ys = (v if isinstance(v, torch.Tensor) else np.asarray(v) for v in (y_true, y_score))
        yt, ys = yt.reshape(-1), ys.reshape(-1)
        if ys.shape != yt.shape:
            raise UserError(
                f"y_score has {len(ys)} entries but y_true has {len(yt)}; they must match"
            )
        inputs = format_inputs(
            {"y_true": "label", "y_score": "score"}, pos_label=self.pos_label, y_true=yt, y_score=ys
        )
        dev = self.sums.device
        return tuple(t.to(device=dev, dtype=torch.float64) for t in inputs.tensors)

    def compute(self) -> dict[str, torch.Tensor]:
        """``{score: scalar tensor}`` in the order of ``scores``."""
        values: dict[str, torch.Tensor] = {}
        undefined: dict[str, str] = {}
        for i, key in enumerate(self._conf_keys):
            s = ConfusionSums(*self.sums[i].unbind(-1))
            values[f"{key}BA"], values[f"{key}F1"] = ba_from_sums(s), f1_from_sums(s)
            _undefined(undefined, f"{key}BA", {0: s.neg, 1: s.pos})
            _undefined(undefined, f"{key}F1", {1: s.pos})
        if self._auc_keys:
            values.update(self._auc(undefined))
        for name in self.scores:
            if name in undefined:
                warnings.warn(undefined[name], UndefinedMetricWarning, stacklevel=2)
        return {name: values[name] for name in self.scores}

    def _auc(self, undefined: dict[str, str]) -> dict[str, torch.Tensor]:
        rows = self.auc_rows
        if isinstance(rows, list) and not rows:
            rows = torch.zeros(0, 2 + len(self._auc_keys), dtype=torch.float64)
        rows = dim_zero_cat(rows)
        rows = rows[torch.argsort(rows[:, 1], stable=True)]  # one sort for every weighting
        w = rows[:, 2:].T.contiguous()  # (K, N)
        a = auc_sums(rows[:, 0].expand_as(w), rows[:, 1].expand_as(w), w, presorted=True)
        auc = auc_from_sums(a)
        out = {}
        for i, key in enumerate(self._auc_keys):
            out[f"{key}AUC"] = auc[i]
            _undefined(undefined, f"{key}AUC", {0: a.neg[i], 1: a.pos[i]})
        return out


def _undefined(found: dict[str, str], score: str, totals: Mapping[int, torch.Tensor]) -> None:
    """Record why ``score`` is NaN: a needed class with zero total weight."""
    for c, total in totals.items():
        if float(total) <= 0:
            found.setdefault(
                score,
                f"{score} is undefined: class {c} has zero total weight in the data seen "
                "(no instance of that class); reported as NaN",
            )
