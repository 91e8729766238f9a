"""A data set → one embedding table (``f0000…``, ``label``, ``group`` when known, ``id``): a
folder collection of ``python -m medeval.benchmark`` and the input of ``medeval.subconcepts``."""

from __future__ import annotations

from typing import Any

import pandas as pd

from medeval.datasets.base import DataError, LabelledData
from medeval.options import EmbedSettings

__all__ = ["EmbedSettings", "embed_table"]

#: The settings :func:`~medeval.embeddings.images.embed_images` takes, under their own names.
_IMAGE_KEYS = (
    "model pretrained weights features size batch_size workers cache image_cache seed".split()
)


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
            data, device=device, progress=progress, **{k: getattr(s, k) for k in _IMAGE_KEYS}
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
