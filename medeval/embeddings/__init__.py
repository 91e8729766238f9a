"""Frozen-backbone image features (cached on disk) and text embeddings for the forest protocol."""

from medeval.embeddings.images import FeatureCache, embed_images
from medeval.embeddings.text import embed_text

__all__ = ["FeatureCache", "embed_images", "embed_text"]
