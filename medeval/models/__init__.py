"""Backbones by name (timm) and the two-headed model (binary + subconcept)."""

from medeval.models.backbone import (
    Backbone,
    UnknownBackboneError,
    WeightsUnavailableError,
    build_backbone,
    check_backbone_name,
)
from medeval.models.heads import FeatureInput, TwoHeadModel, build_model

__all__ = [
    "Backbone",
    "FeatureInput",
    "TwoHeadModel",
    "UnknownBackboneError",
    "WeightsUnavailableError",
    "build_backbone",
    "build_model",
    "check_backbone_name",
]
