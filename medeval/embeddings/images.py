"""Pooled features of a frozen backbone for every image (the training path's pixels), cached as
``<cache>/<model>-<size>px-<key>/<h[:2]>/<h>.npy``: ``key`` hashes the model, weights, feature
kind, size and pixel rule, ``h`` the image (:func:`row_keys`)."""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, Subset

from medeval.datasets.base import LabelledData
from medeval.datasets.cache import DECODE_VERSION, ImageCache, ResizedImageDataset
from medeval.datasets.images import ImageDataset, default_transform
from medeval.datasets.pixels import FRAME_KEY
from medeval.device import autocast
from medeval.io import atomic
from medeval.models import build_backbone
from medeval.models.backbone import check_input_size, weights_id
from medeval.models.inputs import model_input
from medeval.models.packaged import weights_source
from medeval.progress import progress as progress_bar

__all__ = ["FeatureCache", "embed_images", "row_keys"]


def _sha(text: str | bytes) -> str:
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


class FeatureCache:
    """One folder of per-image feature vectors for one (model, weights, features, size)."""

    def __init__(
        self,
        root: str | Path,
        *,
        model: str,
        weights: str,
        features: str,
        size: int,
        pixels: str | None = None,
    ):
        spec = {"model": model, "weights": weights, "features": features, "size": size}
        if pixels is not None:
            spec["pixels"] = pixels
        key = _sha(json.dumps(spec, sort_keys=True))[:16]
        self.folder = Path(root) / f"{model}-{size}px-{key}"
        self.folder.mkdir(parents=True, exist_ok=True)
        if not (self.folder / "key.json").is_file():
            atomic.write_json(self.folder / "key.json", spec)

    def path(self, row_key: str) -> Path:
        return self.folder / row_key[:2] / f"{row_key}.npy"

    def get(self, row_key: str) -> np.ndarray | None:
        p = self.path(row_key)
        return np.load(p) if p.is_file() else None

    def put(self, row_key: str, vector: np.ndarray) -> None:
        buf = io.BytesIO()
        np.save(buf, np.asarray(vector, dtype=np.float32))
        atomic.write_bytes(self.path(row_key), buf.getvalue())


def row_keys(data: LabelledData) -> list[str]:
    """(N,) cache keys: file path + size + mtime (+ the DICOM frame picked, if any), or a hash
    of the in-memory pixels."""
    if data.files is not None:
        frame = data.meta.get(FRAME_KEY)
        picked = "" if frame is None else f"|frame={frame}"
        keys = []
        for f in data.files:
            st = os.stat(f)
            keys.append(_sha(f"{Path(f).resolve()}|{st.st_size}|{st.st_mtime_ns}{picked}"))
        return keys
    if data.images is not None:
        return [
            _sha(np.ascontiguousarray(im).tobytes() + str(im.shape).encode()) for im in data.images
        ]
    raise ValueError(f"{data.source}/{data.name}: no images to embed")


def _rows(
    data: LabelledData,
    rows: np.ndarray,
    size: int,
    *,
    image_cache: str | Path | None,
    workers: int,
    progress: bool,
) -> Dataset:
    """Rows of ``data`` as ``(image (3, S, S), 0, 0)``: uint8 of files, normalised floats else."""
    if data.files is None:
        zeros = np.zeros(len(data), dtype=np.int64)
        items = ImageDataset(
            y=zeros, subconcept=zeros, images=data.images, transform=default_transform(size)
        )
        return Subset(items, rows)
    files = np.asarray(data.files, dtype=object)[rows]
    frame = data.meta.get(FRAME_KEY)
    reader = None
    if image_cache is not None:
        reader = ImageCache(image_cache, size=size, frame=frame).ensure(
            files, workers=workers, progress=progress, desc=f"decode {data.name} once"
        )
    zeros = np.zeros(len(rows), dtype=np.int64)
    return ResizedImageDataset(  # names the row and file on failure, also from a worker
        files, zeros, zeros, size=size, cache=reader, frame=frame, rows=rows, as_uint8=True
    )


@torch.no_grad()
def _run_backbone(
    net: torch.nn.Module, loader: DataLoader, device: torch.device, *, desc: str, progress: bool
):
    """Yield the (B, F) float32 features of each batch of ``loader``, in order."""
    if device.type == "cuda":  # faster convolutions on GPUs
        net = net.to(memory_format=torch.channels_last)
    for x, _, _ in progress_bar(loader, desc=desc, disable=not progress):
        with autocast(device):
            yield net(model_input(x, device)).float().cpu().numpy()


def embed_images(
    data: LabelledData,
    *,
    model: str = "vgg16",
    pretrained: bool = True,
    weights: str | Path | None = None,
    features: str = "head",
    size: int = 224,
    batch_size: int = 32,
    workers: int = 0,
    device: str | torch.device = "cpu",
    cache: str | Path | None = None,
    seed: int = 0,
    progress: bool = True,
    image_cache: str | Path | None = None,
) -> tuple[np.ndarray, dict]:
    """Features (N, F) float32 of every image in ``data`` from the frozen backbone.

    Images already in the feature cache ``cache`` are read from it; the others' files are
    decoded once into the store under ``image_cache`` (:mod:`medeval.datasets.cache`), or now.

    Returns:
        The features and facts about the run (``computed``, ``cached``, ``weights``, cache folder).
    """
    device = torch.device(device)
    wid = weights_id(pretrained=pretrained, weights=weights, seed=seed)
    keys = row_keys(data)
    store, found = None, {}
    if cache is not None:
        pixels = None if data.files is None else f"u8-v{DECODE_VERSION}"
        store = FeatureCache(
            cache, model=model, weights=wid, features=features, size=size, pixels=pixels
        )
        found = {i: v for i, k in enumerate(keys) if (v := store.get(k)) is not None}
    todo = np.asarray([i for i in range(len(keys)) if i not in found], dtype=np.intp)
    if len(todo):
        torch.manual_seed(seed)  # random init is an explicit, seeded choice
        net = build_backbone(model, pretrained=pretrained, weights=weights, features=features)
        check_input_size(net, size, what="size")
        loader = DataLoader(
            _rows(data, todo, size, image_cache=image_cache, workers=workers, progress=progress),
            batch_size=batch_size,
            num_workers=workers,
            pin_memory=device.type == "cuda",
        )
        batches = _run_backbone(
            net.to(device).eval(), loader, device, desc=f"embed {model}", progress=progress
        )
        for row, vector in zip(todo.tolist(), (v for b in batches for v in b), strict=True):
            found[row] = vector
            if store is not None:
                store.put(keys[row], vector)
    out = np.stack([found[i] for i in range(len(keys))]).astype(np.float32)
    info = {
        "model": model,
        "weights": wid,
        "weights_source": weights_source(model, pretrained=pretrained, weights=weights),
        "features": features,
        "size": size,
        "computed": len(todo),
        "cached": len(keys) - len(todo),
        "cache": None if store is None else str(store.folder),
    }
    return out, info
