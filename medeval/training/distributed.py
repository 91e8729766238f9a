"""DistributedDataParallel set-up from the ``torchrun`` environment (gloo on CPU, nccl on CUDA)."""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist

__all__ = ["DistInfo", "barrier", "broadcast_float", "cleanup", "init_distributed"]


@dataclass(frozen=True)
class DistInfo:
    """Where this process stands: ``rank`` of ``world_size``; ``local_rank`` picks its GPU."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

    @property
    def enabled(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def init_distributed(*, cuda: bool) -> DistInfo:
    """Join the process group when started by ``torchrun`` (``WORLD_SIZE`` > 1), else single."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return DistInfo()
    rank, local = int(os.environ["RANK"]), int(os.environ.get("LOCAL_RANK", "0"))
    if not dist.is_initialized():
        if cuda:
            torch.cuda.set_device(local)
        dist.init_process_group(backend="nccl" if cuda else "gloo")
    return DistInfo(rank, world, local)


def barrier(info: DistInfo) -> None:
    if info.enabled:
        dist.barrier()


def broadcast_float(value: float, info: DistInfo, device: torch.device) -> float:
    """Rank 0's ``value`` on every rank (e.g. the validation BA that decides early stopping)."""
    if not info.enabled:
        return value
    t = torch.tensor([value], dtype=torch.float64, device=device)
    dist.broadcast(t, src=0)
    return float(t.item())


def cleanup(info: DistInfo) -> None:
    if info.enabled and dist.is_initialized():
        dist.destroy_process_group()
