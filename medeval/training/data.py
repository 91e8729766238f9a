"""From the ``data`` section of a config to a binary task with images, and its data loaders."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, TensorDataset
from torch.utils.data.distributed import DistributedSampler

from medeval.datasets import DataError, load
from medeval.datasets.base import LabelledData
from medeval.datasets.cache import CachedImages, ResizedImageDataset, data_images
from medeval.datasets.images import ImageDataset, check_files_exist, default_transform
from medeval.datasets.pixels import FRAME_KEY
from medeval.datasets.sources import get_source
from medeval.tasks.binary import BinaryTask
from medeval.tasks.user import TaskSpec, make_task
from medeval.training.config import Config, DataConfig
from medeval.training.distributed import DistInfo

__all__ = [
    "FrozenFeatures",
    "build_task",
    "load_data",
    "make_loader",
    "part_dataset",
    "task_features",
    "task_images",
]


def load_data(data_cfg: DataConfig) -> LabelledData:
    """The data set named by ``data_cfg``, as its loader reads it."""
    source = data_cfg.source
    options = get_source(source).config_options(dataclasses.asdict(data_cfg))
    return load(source, data_cfg.path, name=data_cfg.dataset, **options)


def build_task(
    data_cfg: DataConfig, data: LabelledData | None = None, *, task: TaskSpec | None = None
) -> BinaryTask:
    """Make the binary task of ``data`` (default: the data set named by ``data_cfg``): the
    user's ``task``, else the paper's ladder.

    Raises:
        DataError: the task is rejected (the filter of step 4) or makes no task (a label it names is
            not in the data...), or the data carry no images.
    """
    data = load_data(data_cfg) if data is None else data
    if data.kind not in ("image", "array_image"):
        raise DataError(
            f"{data.source}/{data.name}: no images (kind {data.kind!r}); "
            "use python -m medeval.embed for text or tables"
        )
    return make_task(data, task, seed=data_cfg.task_seed).require_kept()


def task_images(cfg: Config, task: BinaryTask, *, progress: bool = True) -> CachedImages | None:
    """The decoded-image store's reader of every row of ``task`` (built where it lacks them),
    or ``None`` (``data.cache`` off or images in memory). Call it once per run on every process.
    """
    if not cfg.data.cache or task.data.files is None:
        return None
    return data_images(
        task.data,
        size=cfg.train.image_size,
        cache_dir=cfg.data.cache_dir,
        workers=cfg.train.workers,
        progress=progress,
    )


@dataclasses.dataclass(frozen=True)
class FrozenFeatures:
    """The frozen backbone's features of every row of a task, ``(N, F)`` float32, computed once
    (``model.freeze``), and where its weights came from."""

    features: np.ndarray
    weights_source: str
    computed: int = 0  # rows put through the backbone now
    cached: int = 0  # rows read back from the feature cache

    def __len__(self) -> int:
        return len(self.features)


def task_features(
    cfg: Config, task: BinaryTask, device: torch.device, *, progress: bool = True
) -> FrozenFeatures:
    """Every row of ``task`` through the configured backbone once, as
    :func:`medeval.embeddings.images.embed_images` does for ``python -m medeval.embed``: image
    files decoded into the store under ``data.cache_dir`` and the features cached beside it
    (``<cache_dir>/../features``) when ``data.cache`` is on, so that a second run, or another
    split count, reads them back."""
    from medeval.embeddings.images import embed_images

    m, cache_dir = cfg.model, Path(cfg.data.cache_dir)
    features, info = embed_images(
        task.data,
        model=m.backbone,
        pretrained=m.pretrained,
        weights=m.weights,
        features=m.features,
        size=cfg.train.image_size,
        batch_size=cfg.train.batch_size,
        workers=cfg.train.workers,
        device=device,
        cache=cache_dir.parent / "features" if cfg.data.cache else None,
        seed=cfg.train.seed,
        progress=progress,
        image_cache=cache_dir if cfg.data.cache and task.data.files is not None else None,
    )
    return FrozenFeatures(
        features, info["weights_source"], int(info["computed"]), int(info["cached"])
    )


def part_dataset(
    task: BinaryTask,
    idx: np.ndarray,
    image_size: int,
    *,
    images: CachedImages | FrozenFeatures | None = None,
) -> Dataset:
    """Rows ``idx`` as ``(image (3, S, S), y, subconcept)`` items: image files as uint8 pixels
    (from ``images``, :func:`task_images`, or decoded now: the same bits), normalised on the
    device by :func:`~medeval.models.inputs.model_input`; in-memory images as normalised floats;
    with :class:`FrozenFeatures` (:func:`task_features`), ``(features (F,), y, subconcept)``.
    """
    idx = np.asarray(idx, dtype=np.intp)
    if isinstance(images, FrozenFeatures):
        if len(images) != len(task):
            raise ValueError(f"the features hold {len(images)} rows, the task {len(task)}")
        return TensorDataset(
            torch.from_numpy(images.features[idx]),
            torch.as_tensor(task.y[idx], dtype=torch.long),
            torch.as_tensor(task.subconcept[idx], dtype=torch.long),
        )
    if task.data.files is None:
        if images is not None:
            raise ValueError(f"{task.source}/{task.name}: images in memory take no image cache")
        return ImageDataset.from_task(task, idx, transform=default_transform(image_size))
    if images is not None and len(images) != len(task):
        raise ValueError(f"the image reader holds {len(images)} rows, the task {len(task)}")
    files = np.asarray(task.data.files, dtype=object)[idx]
    if images is None:  # the store checked every file when it was opened
        check_files_exist(files, where=f"{task.source}/{task.name}")
    return ResizedImageDataset(
        files,
        task.y[idx],
        task.subconcept[idx],
        size=image_size,
        cache=None if images is None else images.take(idx),
        frame=task.data.meta.get(FRAME_KEY),
        rows=idx,
        as_uint8=True,
    )


def _seed_worker(worker_id: int) -> None:
    seed = torch.initial_seed() % 2**32
    np.random.seed(seed)  # noqa: NPY002 - third-party transforms may use the global state


def make_loader(
    dataset: Dataset,
    *,
    batch_size: int,
    workers: int,
    shuffle: bool,
    seed: int,
    cuda: bool,
    dist_info: DistInfo | None = None,
) -> DataLoader:
    """A loader whose order depends only on ``seed`` and the sampler's epoch."""
    sampler = None
    if shuffle:
        # One sampler for one or many processes: call ``loader.sampler.set_epoch(k)`` so that
        # epoch k has the same order in an uninterrupted and a resumed run.
        info = dist_info or DistInfo()
        sampler = DistributedSampler(
            dataset, num_replicas=info.world_size, rank=info.rank, shuffle=True, seed=seed
        )
    return DataLoader(
        dataset,
        batch_size=batch_size,
        sampler=sampler,
        num_workers=workers,
        pin_memory=cuda,
        persistent_workers=workers > 0,
        worker_init_fn=_seed_worker if workers > 0 else None,
        generator=torch.Generator().manual_seed(seed),
        drop_last=False,
    )
