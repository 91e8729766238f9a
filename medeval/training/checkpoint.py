"""Checkpoints written atomically: ``epoch_<k>.pt`` every epoch, ``last.pt``, ``best.pt``."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import torch

from medeval.io import atomic

__all__ = ["load_checkpoint", "prune_epochs", "save_checkpoint"]


def save_checkpoint(path: str | Path, state: dict[str, Any]) -> Path:
    """``torch.save`` into memory, then an atomic write (an interrupted save leaves no stub)."""
    buf = io.BytesIO()
    torch.save(state, buf)
    return atomic.write_bytes(path, buf.getvalue())


def load_checkpoint(path: str | Path, *, map_location: str | torch.device = "cpu") -> dict:
    """Read a checkpoint written by :func:`save_checkpoint` (our own files: full unpickling)."""
    return torch.load(path, map_location=map_location, weights_only=False)


def prune_epochs(folder: str | Path, keep: int) -> None:
    """Delete all but the newest ``keep`` ``epoch_<k>.pt`` files (``keep <= 0`` keeps all)."""
    if keep <= 0:
        return
    files = sorted(Path(folder).glob("epoch_*.pt"), key=lambda p: int(p.stem.split("_")[1]))
    for old in files[:-keep]:
        old.unlink(missing_ok=True)
