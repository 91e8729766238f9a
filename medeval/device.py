"""The one place that turns a device name into a device, checks it and picks autocast (torch
is imported inside the functions, so ``--help`` does not load it)."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Protocol

from medeval.errors import UserError, one_line

if TYPE_CHECKING:
    import torch

__all__ = ["autocast", "check_device", "device_name", "resolve_device"]


class _HasLocalRank(Protocol):
    local_rank: int


def device_name(name: str | None) -> str:
    """``None`` or ``"auto"`` → ``"cuda"`` when CUDA is available, else ``"cpu"``; any other
    name unchanged."""
    if name not in (None, "auto"):
        return name
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def resolve_device(name: str, dist_info: _HasLocalRank | None = None) -> torch.device:
    """:func:`device_name` as a ``torch.device``; a CUDA device without an index is
    ``cuda:<local rank>`` (``cuda:0`` outside distributed runs)."""
    import torch

    device = torch.device(device_name(name))
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", dist_info.local_rank if dist_info else 0)
    return device


def autocast(device: torch.device) -> contextlib.AbstractContextManager:
    """bf16 autocast on CUDA; plain float32 elsewhere."""
    if device.type == "cuda":
        import torch

        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def check_device(name: str | None) -> None:
    """A :class:`~medeval.errors.UserError` (exit code 2 in the tools) for ``--device`` naming
    a device this machine does not have; ``None``, ``auto`` and ``cpu`` always pass."""
    if not name or name in ("auto", "cpu"):
        return
    import torch

    try:
        device = torch.device(name)
    except RuntimeError as err:
        raise UserError(f"--device {name}: not a device name ({one_line(err)})") from None
    if device.type not in ("cpu", "cuda", "mps"):  # meta, xla, ...: no data, or not supported
        raise UserError(f"--device {name}: medeval runs on cpu, cuda or mps, not {device.type}")
    if device.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise UserError(
                f"--device {name}: no CUDA device is available here (torch {torch.__version__}, "
                f"CUDA build {torch.version.cuda or 'none'}); use --device cpu"
            )
        if device.index is not None and device.index >= count:
            raise UserError(f"--device {name}: this machine has {count} CUDA device(s)")
    elif device.type == "mps" and not torch.backends.mps.is_available():
        raise UserError(f"--device {name}: MPS is not available here; use --device cpu")
