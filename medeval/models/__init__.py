"""Backbones by name (timm) and the two-headed model (binary + subconcept)."""

from medeval.models.backbone import Backbone, WeightsUnavailableError, create_backbone
from medeval.models.heads import TwoHeadModel, build_model

__all__ = ["Backbone", "TwoHeadModel", "WeightsUnavailableError", "build_model", "create_backbone"]
