"""A data set → one embedding table for the forest protocol, and writing it to a collection.

The table has columns ``f0000…`` (features), ``label`` (original class) and ``group`` when
known: the contract of a folder collection of ``python -m medeval.benchmark``.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from medeval import atomic
from medeval.datasets.base import DataError, LabelledData

__all__ = ["EmbedSettings", "embed_table", "write_table"]


@dataclass(frozen=True)
class EmbedSettings:
    """How to embed. Images: a frozen timm backbone; text: sentence-transformers or TF-IDF."""

    model: str = "vgg16"
    pretrained: bool = True
    weights: str | None = None
    features: str = "head"
    size: int = 224
    batch_size: int = 32
    workers: int = 0
    cache: str | Path | None = ".medeval-cache/features"
    text_model: str = "all-MiniLM-L6-v2"
    svd_components: int = 256
    seed: int = 0


def embed_table(
    data: LabelledData, settings: EmbedSettings, *, device: str = "cpu", progress: bool = True
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """(N, F + 2) table: features f0000…, ``label``, ``group`` (when known), and a record of
    how it was made.

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
    return frame, info


def write_table(folder: str | Path, name: str, frame: pd.DataFrame, record: dict[str, Any]) -> Path:
    """``<folder>/<name>.parquet`` and ``<name>.embedding.json``, each written atomically."""
    folder = Path(folder)
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False)
    table = atomic.write_bytes(folder / f"{name}.parquet", buf.getvalue())
    atomic.write_json(
        folder / f"{name}.embedding.json", {"name": name, "rows": len(frame), **record}
    )
    return table
