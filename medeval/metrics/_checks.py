"""Input validation and formatting shared by every metric: :func:`format_inputs` turns arrays or
tensors into checked tensors of one shape ``(..., N)`` on one device."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import torch

from medeval.errors import UserError

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
        raise UserError(f"inputs live on different devices ({listing}); move them to one device")
    return unique.pop() if unique else torch.device("cpu")


_INT_TYPES = {torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64}


_NOUNS = {"label": "labels", "score": "scores", "weight": "weights"}


def _check_array_like(name: str, kind: str, value: object) -> None:
    """Reject sets, dicts and iterators: no instance order, or used up by reading."""
    if isinstance(value, torch.Tensor | np.ndarray | Sequence) or any(
        hasattr(value, a) for a in ("__array__", "__array_interface__", "__array_struct__")
    ):
        return
    if isinstance(value, Iterable):
        what = "a generator" if type(value).__name__ == "generator" else f"a {type(value).__name__}"
        hint = "; materialise it first, e.g. list(values)" if isinstance(value, Iterator) else ""
        raise TypeError(
            f"{name} must be an array-like of {_NOUNS[kind]} (a list, numpy array, tensor or "
            f"pandas object); got {what}{hint}"
        )


def _widen_unsigned(arr: torch.Tensor | np.ndarray) -> torch.Tensor | np.ndarray:
    """uint16/32/64 as int64 (float64 from 2**63): torch has few operations for them."""
    if isinstance(arr, np.ndarray):
        if arr.dtype.kind != "u" or arr.dtype.itemsize == 1:
            return arr
        big = arr.dtype.itemsize == 8 and arr.size > 0 and int(arr.max()) >= 2**63
        return arr.astype(np.float64 if big else np.int64)
    if arr.dtype not in (torch.uint16, torch.uint32, torch.uint64):
        return arr
    # Viewed as int64, a uint64 of 2**63 or more is negative (comparisons on uint64 are missing).
    big = arr.dtype == torch.uint64 and bool((arr.view(torch.int64) < 0).any())
    return arr.to(torch.float64 if big else torch.int64)


def _as_array(name: str, value: ArrayLike) -> torch.Tensor | np.ndarray:
    """A tensor, or a numpy array for anything else; ``(N, 1)`` is N instances ``(N,)``."""
    arr = value if isinstance(value, torch.Tensor) else np.asarray(value)
    if arr.ndim == 0:
        raise UserError(
            f"{name} must be an array of instances, got a scalar ({value!r}); "
            "pass (N,) or batched (..., N)"
        )
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr.reshape(-1)
    return arr


def _numeric(name: str, arr: torch.Tensor | np.ndarray) -> torch.Tensor:
    """A numeric tensor (on the CPU for numpy input); object arrays of numbers are accepted."""
    arr = _widen_unsigned(arr)
    if isinstance(arr, np.ndarray):
        if arr.dtype.kind == "O" and all(_is_number(v) for v in arr.flat):
            arr = arr.astype(np.float64)
        if arr.dtype.kind not in "biuf":
            raise UserError(f"{name} must be numeric, got an array of dtype {arr.dtype}")
        if not arr.flags.writeable:  # e.g. pandas copy-on-write views; torch wants writable memory
            arr = arr.copy()
        arr = torch.from_numpy(np.ascontiguousarray(arr))
    if arr.dtype.is_complex or not (arr.dtype.is_floating_point or arr.dtype in _INT_TYPES):
        raise UserError(f"{name} must be numeric, got dtype {arr.dtype}")
    return arr


def _is_number(v: object) -> bool:
    return isinstance(v, bool | int | float | np.bool_ | np.number) and not isinstance(v, str)


def _first_bad(mask: torch.Tensor | np.ndarray) -> str:
    """Position of the first True in ``mask`` as text, e.g. ``index 4`` or ``index (1, 4)``."""
    idx = np.argwhere(np.asarray(mask))[0].tolist()
    return f"index {idx[0]}" if len(idx) == 1 else f"index {tuple(idx)}"


def _missing(arr: np.ndarray) -> np.ndarray:
    """True where an object/string label is None or NaN."""
    if arr.dtype.kind != "O":
        return np.zeros(arr.shape, dtype=bool)
    return np.frompyfunc(lambda v: v is None or (isinstance(v, float) and v != v), 1, 1)(
        arr
    ).astype(bool)


def _distinct(name: str, arr: torch.Tensor | np.ndarray) -> list:
    """The distinct labels of one argument, as Python values."""
    if isinstance(arr, torch.Tensor):
        values = torch.unique(arr)
        if values.dtype.is_floating_point and bool(torch.isnan(values).any()):
            raise UserError(f"{name} has a missing label (NaN) at {_first_bad(torch.isnan(arr))}")
        return values.tolist()
    missing = _missing(arr) | (np.isnan(arr) if arr.dtype.kind == "f" else False)
    if bool(np.any(missing)):
        raise UserError(f"{name} has a missing label at {_first_bad(missing)}")
    try:
        return np.unique(arr).tolist()
    except TypeError as err:
        raise UserError(f"{name} mixes label types (e.g. numbers and strings)") from err


def _binary_default(labels: dict[str, torch.Tensor | np.ndarray]) -> dict[str, torch.Tensor]:
    """Labels without ``pos_label``: {0, 1} (or booleans) as they are, {-1, 1} with 1 positive."""
    tensors = {}
    for name, arr in labels.items():
        if isinstance(arr, np.ndarray) and arr.dtype.kind not in "biuf":
            if arr.dtype.kind != "O" or not all(_is_number(v) for v in arr.flat):
                shown = _distinct(name, arr)  # objects of numbers: made numeric by _numeric
                raise UserError(
                    f"{name} holds the labels {shown[:5]}; pass pos_label= to say which one "
                    "is the positive class"
                )
        tensors[name] = _numeric(name, arr)
    zero_one = {n: (t != 0) & (t != 1) for n, t in tensors.items()}
    if not any(bool(bad.any()) for bad in zero_one.values()):
        return tensors
    plus_minus = {n: (t != -1) & (t != 1) for n, t in tensors.items()}
    if not any(bool(bad.any()) for bad in plus_minus.values()):
        return {n: t == 1 for n, t in tensors.items()}
    name = next(n for n, bad in zero_one.items() if bool(bad.any()))
    bad = zero_one[name]
    value = tensors[name][bad][0].item()
    together = " (together with the other labels)" if len(labels) > 1 else ""
    raise UserError(
        f"{name} must contain only 0 and 1, or only -1 and 1{together}; found {value!r} at "
        f"{_first_bad(bad)}; for other labels pass pos_label="
    )


def binary_labels(
    labels: Mapping[str, torch.Tensor | np.ndarray], pos_label: Any = None
) -> dict[str, torch.Tensor]:
    """Label arguments formatted together, by the one rule of every metric: {0, 1} or booleans
    as they are, {-1, 1} with 1 positive, or any two labels with ``pos_label`` → 1 (a tensor
    of 0/1 values, or bool, per argument)."""
    if pos_label is None:
        return _binary_default(dict(labels))
    present: list = []  # at most two distinct labels in all
    for name, arr in labels.items():
        present += [v for v in _distinct(name, arr) if v not in present]
    names = " and ".join(labels)
    if len(present) > 2:
        raise UserError(f"{names} hold {len(present)} labels {present[:5]}; at most two allowed")
    if len(present) == 2 and pos_label not in present:
        raise UserError(f"pos_label={pos_label!r} is not one of the labels {present} in {names}")
    out = {}
    for name, arr in labels.items():
        if pos_label not in present:  # one class only, and it is the negative one
            out[name] = torch.zeros(arr.shape, dtype=torch.bool)
        elif isinstance(arr, torch.Tensor):
            out[name] = arr == pos_label
        else:
            out[name] = torch.from_numpy(np.asarray(arr == pos_label, dtype=bool))
    return out


#: The value rules of each kind of argument (labels: :func:`binary_labels`): where a tensor
#: breaks one, and what is said.
_RULES = {
    "label": [],
    "score": [(torch.isnan, "contains NaN")],
    "weight": [
        (lambda t: ~torch.isfinite(t), "must be finite; found {!r}"),
        (lambda t: t < 0, "must be non-negative; found {!r}"),
    ],
}


class Inputs(NamedTuple):
    """Formatted metric inputs: tensors of one shape ``(..., N)`` on one device, one dtype."""

    tensors: list[torch.Tensor]
    device: torch.device
    dtype: torch.dtype
    torch_in: bool  # a tensor came in: results stay tensors

    def result(self, t: torch.Tensor) -> torch.Tensor | np.ndarray | float:
        """``t`` as the caller expects it: a tensor for tensor input, otherwise a Python float
        (0-d) or a numpy array (batched)."""
        if self.torch_in:
            return t
        out = t.detach().cpu().numpy()
        return float(out) if out.ndim == 0 else out


def format_inputs(
    kinds: Mapping[str, str], *, pos_label: Any = None, **arrays: ArrayLike | None
) -> Inputs:
    """Validate and broadcast metric inputs.

    ``kinds`` maps each argument name to ``"label"`` (two classes: {0, 1}, booleans, {-1, 1}
    with 1 positive, or any two labels with ``pos_label`` naming the positive one; all label
    arguments together hold at most two), ``"score"`` (no NaN) or ``"weight"`` (finite,
    non-negative; ``None`` means all ones). Arrays are numpy arrays, tensors, lists or pandas
    objects of shape ``(..., N)`` with instances on the last axis (a ``(N, 1)`` column is
    ``(N,)``); leading axes broadcast (e.g. ``y_true (N,)`` with weights ``(B, N)``). Returns
    the tensors in argument order, all of one shape, on one device, in float64 (float32 on
    MPS).
    """
    for k, v in arrays.items():
        _check_array_like(k, kinds[k], v)
    present = {k: _as_array(k, v) for k, v in arrays.items() if v is not None}
    device = _find_device(present)
    dtype = default_dtype(device)
    binary = binary_labels({k: v for k, v in present.items() if kinds[k] == "label"}, pos_label)
    tensors: dict[str, torch.Tensor] = {}
    for name, value in present.items():
        t = binary[name] if name in binary else _numeric(name, value)
        t = t.to(device=device, dtype=dtype)
        for broken, what in _RULES[kinds[name]]:
            bad = broken(t)
            if bool(bad.any()):
                found = what.format(t[bad][0].item())
                raise UserError(f"{name} {found} at {_first_bad(bad.cpu())}")
        tensors[name] = t
    names = list(tensors)
    n = tensors[names[0]].shape[-1]
    for name in names[1:]:
        if tensors[name].shape[-1] != n:
            raise UserError(
                f"{name} has {tensors[name].shape[-1]} instances on its last axis but "
                f"{names[0]} has {n}; they must match"
            )
    try:
        shape = torch.broadcast_shapes(*(t.shape for t in tensors.values()))
    except RuntimeError as err:
        listing = ", ".join(f"{k} {tuple(t.shape)}" for k, t in tensors.items())
        raise UserError(f"input shapes do not broadcast: {listing}") from err
    out = []
    for name in arrays:
        if name in tensors:
            out.append(tensors[name].expand(shape))
        else:  # a missing weight is all ones
            out.append(torch.ones(shape, device=device, dtype=dtype))
    torch_in = any(isinstance(v, torch.Tensor) for v in present.values())
    return Inputs(out, device, dtype, torch_in)


def scale_weights(w: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """``w`` times a power of two per row so that the largest weight lies in [0.5, 1).

    Power-of-two scaling is exact in floating point, so ratios of weight sums are unchanged
    bit for bit, while sums and products of weights near 1e±160 no longer overflow or lose
    digits. With ``mask`` (bool, like ``w``) only the masked weights set and take the scale.
    """
    if w.shape[-1] == 0:  # no instances: nothing to scale (amax has no identity)
        return w
    sel = w if mask is None else torch.where(mask, w, torch.zeros_like(w))
    _, exponent = torch.frexp(sel.amax(dim=-1, keepdim=True))  # 0 for an all-zero row
    # 2**±1000 is a normal number (2**1063 for a subnormal maximum would not be): clamp.
    scaled = torch.ldexp(w, -exponent.clamp(-1000, 1000).to(w.dtype))
    return scaled if mask is None else torch.where(mask, scaled, w)


def warn_undefined(metric: str, what: str, undefined: torch.Tensor) -> None:
    """Warn that ``metric`` is NaN where ``undefined`` (a bool tensor) is True."""
    n_bad = int(undefined.sum())
    if n_bad == 0:
        return
    where = ""
    if undefined.ndim > 0 and undefined.numel() > 1:
        where = f" in {n_bad} of {undefined.numel()} rows"
    warnings.warn(
        f"{metric}: {what}{where}; the score is undefined and returned as NaN",
        UndefinedMetricWarning,
        stacklevel=3,
    )
