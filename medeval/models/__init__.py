"""Backbones by name (timm) and the two-headed model (binary + subconcept)."""

from medeval.models.backbone import (
    Backbone,
    UnknownBackboneError,
    WeightsUnavailableError,
    check_backbone_name,
    create_backbone,
)
from medeval.models.heads import TwoHeadModel, build_model

__all__ = [
    "Backbone",
    "TwoHeadModel",
    "UnknownBackboneError",
    "WeightsUnavailableError",
    "build_model",
    "check_backbone_name",
    "create_backbone",
]
