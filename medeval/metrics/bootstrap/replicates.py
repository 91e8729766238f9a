"""The bootstrap's results: the replicates of each score (:class:`Replicates`) and their
percentile intervals (:func:`percentile_interval`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from ..._validation import TypeOf, validate_params
from ...options import CONFIDENCE


@dataclass
class Replicates:
    """Bootstrap replicates of each score.

    Attributes:
        scores: ``{(weighting, metric): (B, n_subsets)}``, metric in ``"BA", "F1", "AUC"``;
            NaN where the replicate leaves the score undefined.
        subconcept_recall: ``(B, S)`` unweighted recall of each subconcept (or ``None``).
        subsets: names of the subset axis.
        estimated_recall: ``(B, S')`` label-free recall of each subconcept from soft
            memberships (docs/method.md, "Label-free scores"), or ``None``.
    """

    scores: dict[tuple[str, str], torch.Tensor]
    subconcept_recall: torch.Tensor | None
    subsets: tuple[str, ...]
    n: int
    seed: int
    method: str = field(default="multinomial within strata")
    estimated_recall: torch.Tensor | None = None


@validate_params(
    {"replicates": [TypeOf(torch.Tensor, desc="a tensor")], "confidence": [CONFIDENCE]}
)
def percentile_interval(
    replicates: torch.Tensor, confidence: float = 0.95
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Percentile interval over the replicate axis 0, excluding undefined (NaN) replicates.

    Returns ``(low, high, n_undefined)``, each of the trailing shape; NaN bounds where every
    replicate is undefined.
    """
    alpha = (1 - confidence) / 2
    q = torch.tensor([alpha, 1 - alpha], dtype=replicates.dtype, device=replicates.device)
    bounds = torch.nanquantile(replicates, q, dim=0)
    return bounds[0], bounds[1], torch.isnan(replicates).sum(0)
