"""Input validation and formatting shared by every metric (the ``_validate → _format`` step).

Every public metric calls :func:`format_inputs` first: it turns numpy arrays or tensors into
tensors on one device, checks values, and broadcasts them to one shape ``(..., N)``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

ArrayLike = Any  # numpy array, torch tensor or (nested) sequence


class UndefinedMetricWarning(UserWarning):
    """A score is undefined (a class or subconcept has zero total weight) and is NaN."""


def default_dtype(device: torch.device) -> torch.dtype:
    """float64 wherever the device has it (MPS has no float64)."""
    return torch.float32 if device.type == "mps" else torch.float64


def _find_device(arrays: Mapping[str, ArrayLike]) -> torch.device:
    devices = {name: a.device for name, a in arrays.items() if isinstance(a, torch.Tensor)}
    unique = set(devices.values())
    if len(unique) > 1:
        listing = ", ".join(f"{n} on {d}" for n, d in devices.items())
        raise ValueError(f"inputs live on different devices ({listing}); move them to one device")
    return unique.pop() if unique else torch.device("cpu")


def _as_tensor(name: str, value: ArrayLike, device: torch.device, dtype: torch.dtype):
    if isinstance(value, torch.Tensor):
        t = value
    else:
        arr = np.asarray(value)
        if arr.dtype.kind not in "biuf":
            raise ValueError(f"{name} must be numeric, got an array of dtype {arr.dtype}")
        t = torch.from_numpy(np.ascontiguousarray(arr))
    if t.dtype.is_complex or not (t.dtype.is_floating_point or t.dtype in _INT_TYPES):
        raise ValueError(f"{name} must be numeric, got dtype {t.dtype}")
    if t.ndim == 0:
        raise ValueError(f"{name} must have at least one dimension (instances on the last axis)")
    return t.to(device=device, dtype=dtype)


_INT_TYPES = {torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64}


def _first_bad(mask: torch.Tensor) -> str:
    """Position of the first True in ``mask`` as text, e.g. ``index 4`` or ``index (1, 4)``."""
    idx = torch.nonzero(mask)[0].tolist()
    return f"index {idx[0]}" if len(idx) == 1 else f"index {tuple(idx)}"


def check_binary(name: str, t: torch.Tensor) -> None:
    bad = (t != 0) & (t != 1)
    if bool(bad.any()):
        value = t[bad][0].item()
        raise ValueError(f"{name} must contain only 0 and 1; found {value!r} at {_first_bad(bad)}")


def check_scores(name: str, t: torch.Tensor) -> None:
    bad = torch.isnan(t)
    if bool(bad.any()):
        raise ValueError(f"{name} contains NaN at {_first_bad(bad)}")


def check_weights(name: str, t: torch.Tensor) -> None:
    bad = ~torch.isfinite(t)
    if bool(bad.any()):
        value = t[bad][0].item()
        raise ValueError(f"{name} must be finite; found {value!r} at {_first_bad(bad)}")
    bad = t < 0
    if bool(bad.any()):
        value = t[bad][0].item()
        raise ValueError(f"{name} must be non-negative; found {value!r} at {_first_bad(bad)}")


_CHECKS = {"binary": check_binary, "score": check_scores, "weight": check_weights}


def format_inputs(
    kinds: Mapping[str, str], **arrays: ArrayLike | None
) -> tuple[list[torch.Tensor], torch.device, torch.dtype]:
    """Validate and broadcast metric inputs.

    ``kinds`` maps each argument name to ``"binary"`` (labels in {0, 1}), ``"score"`` (no NaN)
    or ``"weight"`` (finite, non-negative; ``None`` means all ones). Arrays are ``(..., N)`` with
    instances on the last axis; leading axes broadcast (e.g. ``y_true (N,)`` with weights
    ``(B, N)``). Returns the tensors in argument order, all of one shape, on one device, in
    float64 (float32 on MPS).
    """
    present = {k: v for k, v in arrays.items() if v is not None}
    device = _find_device(present)
    dtype = default_dtype(device)
    tensors: dict[str, torch.Tensor] = {}
    for name, value in present.items():
        t = _as_tensor(name, value, device, dtype)
        _CHECKS[kinds[name]](name, t)
        tensors[name] = t
    names = list(tensors)
    n = tensors[names[0]].shape[-1]
    for name in names[1:]:
        if tensors[name].shape[-1] != n:
            raise ValueError(
                f"{name} has {tensors[name].shape[-1]} instances on its last axis but "
                f"{names[0]} has {n}; they must match"
            )
    try:
        shape = torch.broadcast_shapes(*(t.shape for t in tensors.values()))
    except RuntimeError as err:
        listing = ", ".join(f"{k} {tuple(t.shape)}" for k, t in tensors.items())
        raise ValueError(f"input shapes do not broadcast: {listing}") from err
    out = []
    for name in arrays:
        if name in tensors:
            out.append(tensors[name].expand(shape))
        else:  # a missing weight is all ones
            out.append(torch.ones(shape, device=device, dtype=dtype))
    return out, device, dtype


def warn_undefined(metric: str, what: str, undefined: torch.Tensor, context: str = "") -> None:
    """Warn that ``metric`` is NaN where ``undefined`` (a bool tensor) is True."""
    n_bad = int(undefined.sum())
    if n_bad == 0:
        return
    where = ""
    if undefined.ndim > 0 and undefined.numel() > 1:
        where = f" in {n_bad} of {undefined.numel()} rows"
    ctx = f" ({context})" if context else ""
    warnings.warn(
        f"{metric}{ctx}: {what}{where}; the score is undefined and returned as NaN",
        UndefinedMetricWarning,
        stacklevel=3,
    )
