"""A data set → one embedding table for the forest protocol.

Columns ``f0000…`` (features), ``label``, ``group`` when known and ``id`` (the loader's name of
each row, never a feature): the contract of a folder collection of ``python -m
medeval.benchmark`` and the input of ``python -m medeval.subconcepts``.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from medeval.datasets.base import DataError, LabelledData
from medeval.options import EmbedSettings

__all__ = ["EmbedSettings", "embed_table"]


def embed_table(
    data: LabelledData, settings: EmbedSettings, *, device: str = "cpu", progress: bool = True
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """(N, F + 2 or 3) table: features f0000…, ``label``, ``group`` (when known), ``id``, and
    a record of how it was made.

    Raises:
        DataError: tabular data (nothing to embed) or data without images or text.
    """
    s = settings
    if data.kind in ("image", "array_image"):
        from medeval.embeddings.images import embed_images

        X, info = embed_images(
            data,
            model=s.model,
            pretrained=s.pretrained,
            weights=s.weights,
            features=s.features,
            size=s.size,
            batch_size=s.batch_size,
            workers=s.workers,
            device=device,
            cache=s.cache,
            image_cache=s.image_cache,
            seed=s.seed,
            progress=progress,
        )
    elif data.kind == "text":
        from medeval.embeddings.text import embed_text

        X, used = embed_text(
            data.text,
            model=s.text_model,
            n_components=s.svd_components,
            seed=s.seed,
            device=device,
            progress=progress,
        )
        info = {"text_model": used}
    elif data.kind == "tabular":
        raise DataError(
            f"{data.source}/{data.name} is already tabular: run python -m "
            "medeval.benchmark on it directly"
        )
    else:
        raise DataError(f"{data.source}/{data.name}: nothing to embed (no images or text)")
    width = max(4, len(str(X.shape[1] - 1)))
    frame = pd.DataFrame(X, columns=[f"f{j:0{width}d}" for j in range(X.shape[1])])
    frame["label"] = data.labels
    if data.groups is not None:
        frame["group"] = data.groups
    frame["id"] = data.ids  # names each image, to join a user's predictions (not a feature)
    return frame, info
