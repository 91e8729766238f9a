"""Binary and subconcept heads on one backbone, trained jointly."""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from medeval.models.backbone import Backbone, build_backbone

__all__ = ["FeatureInput", "TwoHeadModel", "build_model"]


class FeatureInput(nn.Module):
    """Stands in for the backbone when its features were computed once (a frozen backbone):
    ``forward(features (B, F)) -> features``."""

    def __init__(self, num_features: int) -> None:
        super().__init__()
        self.num_features = int(num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.ndim != 2 or x.shape[1] != self.num_features:
            raise ValueError(f"expected features (B, {self.num_features}), got {tuple(x.shape)}")
        return x


class TwoHeadModel(nn.Module):
    """Backbone → features (B, F) → binary logit (B,) and subconcept logits (B, S)."""

    def __init__(
        self, backbone: Backbone | FeatureInput, n_subconcepts: int, *, dropout: float = 0.0
    ) -> None:
        super().__init__()
        if n_subconcepts < 2:
            raise ValueError(f"need at least 2 subconcepts, got {n_subconcepts}")
        self.backbone = backbone
        self.dropout = nn.Dropout(dropout)
        self.binary = nn.Linear(backbone.num_features, 1)
        self.subconcept = nn.Linear(backbone.num_features, n_subconcepts)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x (B, 3, H, W) → (binary logit (B,), subconcept logits (B, S))."""
        f = self.dropout(self.backbone(x))
        return self.binary(f).squeeze(-1), self.subconcept(f)


def build_model(
    name: str,
    n_subconcepts: int,
    *,
    pretrained: bool = False,
    weights: str | Path | None = None,
    features: str = "head",
    dropout: float = 0.0,
) -> TwoHeadModel:
    """:func:`build_backbone` + the two heads (see there for the weight options)."""
    backbone = build_backbone(name, pretrained=pretrained, weights=weights, features=features)
    return TwoHeadModel(backbone, n_subconcepts, dropout=dropout)
