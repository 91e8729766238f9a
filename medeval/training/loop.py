"""Training one split: epochs with early stopping on the ``train.monitor`` validation score
(synced over ranks), checkpoints, resume; the split folder: docs/imaging.md. Progress goes to
this module's logger on the main process only."""

from __future__ import annotations

import io
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from medeval.datasets.cache import CachedImages
from medeval.device import autocast, resolve_device
from medeval.errors import UserError
from medeval.io import atomic
from medeval.metrics.streaming import SubconceptScores
from medeval.models import FeatureInput, TwoHeadModel, build_backbone, build_model
from medeval.models.backbone import check_input_size
from medeval.models.inputs import model_input
from medeval.progress import progress as progress_bar
from medeval.scores import INSTANCE_SCORES
from medeval.splits import Split
from medeval.tasks.binary import BinaryTask
from medeval.training.checkpoint import load_checkpoint, prune_epochs, save_checkpoint
from medeval.training.config import Config, TrainConfig
from medeval.training.data import make_loader, part_dataset
from medeval.training.distributed import DistInfo, barrier, broadcast_float
from medeval.weights import utilities

logger = logging.getLogger(__name__)

__all__ = [
    "Outputs",
    "autocast",
    "build_model_for",
    "predict",
    "predict_part",
    "resolve_device",
    "train_split",
    "validation_scores",
]


def build_model_for(cfg: Config, n_subconcepts: int, device: torch.device) -> TwoHeadModel:
    """The configured model on ``device`` (channels_last on CUDA), checked to take
    ``train.image_size`` px images; with ``model.freeze``, the two heads on the backbone's
    precomputed features (:func:`~medeval.training.data.task_features`)."""
    m = cfg.model
    if m.freeze:  # the backbone's width only: its features come computed
        width = build_backbone(m.backbone, pretrained=False, features=m.features).num_features
        return TwoHeadModel(FeatureInput(width), n_subconcepts, dropout=m.dropout).to(device)
    model = build_model(
        m.backbone,
        n_subconcepts,
        pretrained=m.pretrained,
        weights=m.weights,
        features=m.features,
        dropout=m.dropout,
    ).to(device)
    if device.type == "cuda":
        model = model.to(memory_format=torch.channels_last)
    check_input_size(model, cfg.train.image_size, what="train.image_size")
    return model


@dataclass
class Outputs:
    """Model outputs on one part: binary logits (N,), subconcept logits (N, S), targets."""

    logit: np.ndarray
    sub_logits: np.ndarray
    y: np.ndarray
    subconcept: np.ndarray


@torch.no_grad()
def predict(model: nn.Module, loader, device: torch.device, *, progress: bool = False) -> Outputs:
    """Run ``model`` in eval mode over ``loader`` (no shuffling); float32 outputs on the CPU."""
    model.eval()
    batches = []
    for x, y, sc in progress_bar(loader, desc="predict", leave=False, disable=not progress):
        with autocast(device):
            logit, sub = model(model_input(x, device))
        batches.append((logit.float().cpu(), sub.float().cpu(), y, sc))
    return Outputs(*(torch.cat(parts).numpy() for parts in zip(*batches, strict=True)))


@torch.no_grad()
def validation_scores(
    model: nn.Module, loader, metric: SubconceptScores, device: torch.device
) -> dict[str, float]:
    """Update ``metric`` with this rank's batches and return the scores synced over all ranks
    (posteriors before temperature scaling)."""
    model.eval()
    metric.reset()
    for x, y, sc in loader:
        with autocast(device):
            logit, sub = model(model_input(x, device))
        metric.update(
            torch.sigmoid(logit.double()),
            y.to(device),
            sc.to(device),
            torch.softmax(sub.double(), dim=-1),
        )
    return {k: float(v) for k, v in metric.compute().items()}


def predict_part(
    cfg: Config,
    task: BinaryTask,
    idx: np.ndarray,
    model: nn.Module,
    device: torch.device,
    *,
    images: CachedImages | None = None,
) -> Outputs:
    """``model``'s outputs on the images ``idx`` of ``task`` (in order, no shuffling);
    ``images``: the task's decoded-image reader (:func:`~medeval.training.data.task_images`),
    or ``None`` to decode the files now (the same bits)."""
    t = cfg.train
    loader = make_loader(
        part_dataset(task, idx, t.image_size, images=images),
        batch_size=t.batch_size,
        workers=t.workers,
        shuffle=False,
        seed=0,
        cuda=device.type == "cuda",
    )
    return predict(model, loader, device)


def _loss_fn(
    cfg: Config, task: BinaryTask, train_idx: np.ndarray, device: torch.device
) -> Callable:
    """Weighted sum of binary BCE and subconcept CE; class-balanced weights when configured."""
    t = cfg.train
    wb, ws = t.loss_weights.binary, t.loss_weights.subconcept
    pos_weight, class_weight = None, None
    if t.class_balanced:
        y = task.y[train_idx]
        pos_weight = torch.tensor([(y == 0).sum() / max((y == 1).sum(), 1)], device=device)
        counts = task.train_counts(train_idx).astype(np.float64)
        w = np.where(counts > 0, counts.sum() / (len(counts) * np.maximum(counts, 1)), 0.0)
        class_weight = torch.tensor(w, dtype=torch.float32, device=device)

    def loss(logit, sub, y, sc):
        lb = F.binary_cross_entropy_with_logits(logit.float(), y.float(), pos_weight=pos_weight)
        ls = F.cross_entropy(sub.float(), sc, weight=class_weight)
        return wb * lb + ws * ls, lb.detach(), ls.detach()

    return loss


def _state(model: nn.Module) -> dict:
    return {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}


@dataclass
class _EpochStats:
    """Loss sums (3,) = (total, binary, subconcept) weighted by batch size, and timings."""

    sums: np.ndarray
    n_seen: int
    data_s: float
    seconds: float


def _train_epoch(run: _SplitRun, loader, *, total: int, clip: float, desc: str) -> _EpochStats:
    """One pass of ``total`` steps; clipping acts on the unwrapped ``run.model``."""
    model, train_model, opt, device = run.model, run.train_model, run.opt, run.device
    train_model.train()
    sums = np.zeros(3)
    n_seen, data_s, start = 0, 0.0, time.perf_counter()
    bar = progress_bar(total=total, desc=desc, leave=False, disable=not run.info.is_main)
    it = iter(loader)
    for _ in range(total):
        t0 = time.perf_counter()
        x, y, sc = next(it)
        x, y, sc = model_input(x, device), y.to(device), sc.to(device)
        data_s += time.perf_counter() - t0
        with autocast(device):
            logit, sub = train_model(x)
        loss, lb, ls = run.loss_fn(logit, sub, y, sc)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if clip > 0:
            nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        sums += np.array([loss.item(), lb.item(), ls.item()]) * len(y)
        n_seen += len(y)
        bar.update(1)
        bar.set_postfix(loss=f"{loss.item():.3f}")
    bar.close()
    del it
    return _EpochStats(sums, n_seen, data_s, time.perf_counter() - start)


def _record_epoch(
    state: dict, epoch: int, value: float, val: dict[str, float], stats: _EpochStats, world: int
) -> bool:
    """Update ``state`` (best score, patience, log row) after ``epoch``; True if it improved."""
    score = -math.inf if math.isnan(value) else value
    improved = score > state["best_score"] or state["best_epoch"] == 0
    if improved:
        state.update(best_score=score, best_epoch=epoch, bad_epochs=0)
    else:
        state["bad_epochs"] += 1
    state["epoch"] = epoch
    means = stats.sums / max(stats.n_seen, 1)
    state["log"].append(
        {
            "epoch": epoch,
            "loss": means[0],
            "binary_loss": means[1],
            "subconcept_loss": means[2],
            **{f"val_{k}": v for k, v in val.items()},
            "best": improved,
            "seconds": round(stats.seconds, 3),
            "images_per_s": round(stats.n_seen * world / max(stats.seconds, 1e-9), 2),
            "data_share": round(stats.data_s / max(stats.seconds, 1e-9), 4),
        }
    )
    return improved


@dataclass
class _SplitRun:
    """What every epoch of one split's training uses."""

    folder: Path
    model: nn.Module
    train_model: nn.Module  # DDP around ``model`` when distributed
    opt: torch.optim.Optimizer
    loss_fn: Callable
    metric: SubconceptScores
    train: TrainConfig
    device: torch.device
    info: DistInfo
    split_seed: int


def _start(
    cfg: Config,
    task: BinaryTask,
    split: Split,
    folder: Path,
    device: torch.device,
    info: DistInfo,
    *,
    seed: int,
    resume: bool,
) -> tuple[_SplitRun, dict]:
    """The split's model, optimizer, loss and metric, and its state (resumed if asked)."""
    t = cfg.train
    torch.manual_seed(seed)  # same initial weights on every rank
    model = build_model_for(cfg, len(task.subconcepts), device)
    opt = torch.optim.AdamW(model.parameters(), lr=t.lr, weight_decay=t.weight_decay)
    # the training state before the first epoch (what last.pt stores under "state")
    state = {
        "epoch": 0,
        "monitor": t.monitor,
        "best_score": -math.inf,
        "best_epoch": 0,
        "bad_epochs": 0,
        "log": [],
    }
    last = folder / "checkpoints" / "last.pt"
    if resume and last.is_file():
        ck = load_checkpoint(last)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["optimizer"])
        state = ck["state"]
        state.setdefault("best_score", state.pop("best_ba", -math.inf))  # older checkpoints
        if state.get("monitor", "BA") != t.monitor:
            raise UserError(
                f"{last} was trained with train.monitor={state.get('monitor', 'BA')}; "
                f"resume with the same monitor, not {t.monitor}"
            )
        if info.is_main:
            logger.info("split %s: resuming after epoch %s", split.seed, state["epoch"])
    train_model: nn.Module = model
    if info.enabled:
        train_model = DistributedDataParallel(
            model, device_ids=[device.index] if device.type == "cuda" else None
        )
    u = utilities(task.train_counts(split["train"]), task.sides, task.subconcept_names)
    metric = SubconceptScores(u, scores=INSTANCE_SCORES, threshold=cfg.evaluation.threshold)
    loss_fn = _loss_fn(cfg, task, split["train"], device)
    parts = (model, train_model, opt, loss_fn, metric.to(device), t, device, info, split.seed)
    return _SplitRun(folder, *parts), state


def train_split(
    cfg: Config,
    task: BinaryTask,
    split: Split,
    folder: Path,
    *,
    device: torch.device,
    dist_info: DistInfo | None = None,
    resume: bool = False,
    images: CachedImages | None = None,
) -> Path:
    """Train on ``split["train"]``, early-stop on the ``train.monitor`` score of
    ``split["validation"]``. ``images``: the task's decoded-image reader
    (:func:`~medeval.training.data.task_images`), or ``None`` to decode every epoch.

    Returns:
        Path of ``checkpoints/best.pt`` (model weights of the best epoch).
    """
    info = dist_info or DistInfo()
    t = cfg.train  # t.monitor: a validation score, the config refuses any other name
    folder = Path(folder)
    base_seed = t.seed * 1_000_003 + int(split.seed)
    run, state = _start(cfg, task, split, folder, device, info, seed=base_seed, resume=resume)
    common = {"batch_size": t.batch_size, "workers": t.workers, "seed": base_seed}
    common["cuda"] = device.type == "cuda"
    train = part_dataset(task, split["train"], t.image_size, images=images)
    train_loader = make_loader(train, shuffle=True, dist_info=info, **common)
    # Each rank scores its own share of the validation part (no padding, no duplicates); the
    # metric's compute() syncs the shares, so every rank gets the scores of the whole part.
    shard = split["validation"][info.rank :: info.world_size]
    validation = part_dataset(task, shard, t.image_size, images=images)
    val_loader = make_loader(validation, shuffle=False, **common)
    max_steps = t.max_steps_per_epoch
    total = len(train_loader) if max_steps <= 0 else min(max_steps, len(train_loader))
    while state["epoch"] < t.epochs and state["bad_epochs"] < t.patience:
        epoch = state["epoch"] + 1
        torch.manual_seed(base_seed + epoch)  # dropout etc.: same in a resumed run
        train_loader.sampler.set_epoch(epoch)
        _run_epoch(run, state, epoch, train_loader, val_loader, total=total)
    if state["bad_epochs"] >= t.patience and info.is_main:
        logger.info(
            "split %s: early stop after epoch %s (best epoch %s, val %s %.3f)",
            split.seed,
            state["epoch"],
            state["best_epoch"],
            t.monitor,
            state["best_score"],
        )
    return folder / "checkpoints" / "best.pt"


def _run_epoch(
    run: _SplitRun, state: dict, epoch: int, train_loader, val_loader, *, total: int
) -> None:
    """Train one epoch, score validation, record it in ``state``, write files (main rank)."""
    info, monitor = run.info, run.train.monitor
    desc = f"split {run.split_seed} epoch {epoch}"
    stats = _train_epoch(run, train_loader, total=total, clip=run.train.grad_clip, desc=desc)
    val = validation_scores(run.model, val_loader, run.metric, run.device)
    # Every rank holds the same synced scores; rank 0's value makes the stop decision
    # identical bit for bit on all ranks.
    value = broadcast_float(val[monitor], info, run.device)
    improved = _record_epoch(state, epoch, value, val, stats, info.world_size)
    if info.is_main:
        result = {"monitor": monitor, "epoch": epoch, "value": value, "scores": val}
        # where it was trained (device, kernels, threads: the numbers depend on them)
        cuda = run.device.type == "cuda"
        result["trained_on"] = {
            "device": str(run.device),
            "device_name": torch.cuda.get_device_name(run.device) if cuda else "cpu",
            "processes": int(info.world_size),
            "torch": torch.__version__,
            "cuda": torch.version.cuda if cuda else None,
            "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "threads": torch.get_num_threads(),
        }
        ckpt_dir, weights = run.folder / "checkpoints", _state(run.model)  # one copy to the CPU
        if improved:
            # best.pt: the weights and the choice; best.json: the choice (NaN as null)
            save_checkpoint(ckpt_dir / "best.pt", {"model": weights, **result})
            atomic.write_json(run.folder / "best.json", result)
        # the full state as epoch_<k>.pt and last.pt, old epochs pruned, log.csv rewritten
        full = {"model": weights, "optimizer": run.opt.state_dict(), "state": state}
        buf = io.BytesIO()
        torch.save(full, buf)
        atomic.write_bytes(ckpt_dir / f"epoch_{epoch}.pt", buf.getvalue())
        atomic.write_bytes(ckpt_dir / "last.pt", buf.getvalue())
        prune_epochs(ckpt_dir, run.train.keep_checkpoints)
        atomic.write_text(run.folder / "log.csv", pd.DataFrame(state["log"]).to_csv(index=False))
        row = state["log"][-1]
        logger.info(
            "split %s epoch %s: loss %.4f, val %s %.3f%s, %.1f img/s, data %.0f%%",
            run.split_seed,
            epoch,
            row["loss"],
            monitor,
            value,
            " (best)" if improved else "",
            row["images_per_s"],
            100 * row["data_share"],
        )
    barrier(info)
