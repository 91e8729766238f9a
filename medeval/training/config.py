"""Run configuration: built-in defaults ← YAML file ← ``key=value`` overrides (dotted keys).

The resolved configuration is saved as ``config.yaml`` in the run folder, so a run can be
repeated or resumed from its folder alone.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from medeval.errors import UserError

__all__ = [
    "DEFAULTS",
    "SYNTHETIC",
    "ConfigError",
    "apply_overrides",
    "dump",
    "load_config",
    "merge",
]


class ConfigError(UserError):
    """An unknown key or an unreadable config file."""


DEFAULTS: dict[str, Any] = {
    "name": "synthetic",
    "data": {
        "source": "synthetic",  # synthetic, nih, ham10000, folder, dicom, medmnist
        "path": None,
        "dataset": None,  # data-set name inside a folder of several (medmnist, folder, dicom)
        "options": {},  # passed to the loader, e.g. {images: /data/nih/images}
        "task_seed": 0,
        "synthetic": {"n_normal": 240, "size": 48, "seed": 0},
    },
    "model": {
        "backbone": "vgg16",
        "pretrained": True,
        "weights": None,  # local .pth/.safetensors; overrides the hub
        "features": "head",  # head (timm num_classes=0 output) or conv (pooled conv map)
        "dropout": 0.0,
    },
    "train": {
        "image_size": 224,
        "batch_size": 32,
        "epochs": 20,
        "lr": 1e-4,
        "weight_decay": 1e-4,
        "loss_weights": {"binary": 1.0, "subconcept": 1.0},
        "class_balanced": False,
        "grad_clip": 0.0,  # max gradient norm (0 = no clipping)
        "patience": 5,  # epochs without a better validation BA before stopping
        "workers": 2,
        "seed": 0,
        "device": "auto",  # auto, cpu, cuda, cuda:1
        "keep_checkpoints": 0,  # epoch_<k>.pt files kept (0 = all)
        "max_steps_per_epoch": 0,  # 0 = whole training part; >0 caps steps (smoke tests)
    },
    "splits": {"n": 1, "seeds": None},  # seeds default to 0..n-1
    "evaluation": {"n_bootstrap": 1000, "threshold": 0.5, "seed": 0},
    "out": None,  # run folder; default runs/<name>-<timestamp>
}


# The embedded default (``python -m medeval.train`` with no --config; = configs/default.yaml):
# synthetic phantoms, random-init VGG16 on pooled conv features at 32 px, one split.
SYNTHETIC: dict[str, Any] = {
    "name": "synthetic",
    "data": {"source": "synthetic", "synthetic": {"n_normal": 240, "size": 32, "seed": 0}},
    "model": {"backbone": "vgg16", "pretrained": False, "features": "conv"},
    "train": {
        "image_size": 32,
        "batch_size": 8,
        "epochs": 4,
        "lr": 1e-4,
        "class_balanced": True,
        "grad_clip": 1.0,
        "patience": 3,
        "workers": 0,
        "keep_checkpoints": 2,
    },
    "splits": {"n": 1},
    "evaluation": {"n_bootstrap": 1000},
}


def merge(base: dict, update: dict, *, where: str = "") -> dict:
    """Deep-merge ``update`` into a copy of ``base``; unknown keys raise ``ConfigError``."""
    out = copy.deepcopy(base)
    for key, value in update.items():
        if key not in out:
            known = ", ".join(sorted(out))
            raise ConfigError(f"unknown config key {where + key!r} (known: {known})")
        if isinstance(out[key], dict) and isinstance(value, dict) and key != "options":
            out[key] = merge(out[key], value, where=f"{where}{key}.")
        else:
            out[key] = copy.deepcopy(value)
    return out


def apply_overrides(config: dict, overrides: list[str]) -> dict:
    """Apply ``a.b=value`` strings; values are parsed as YAML (``1e-3``, ``true``, ``[1, 2]``)."""
    out = copy.deepcopy(config)
    for item in overrides:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"override {item!r} is not of the form key=value")
        value = yaml.safe_load(text) if text else None
        node = out
        parts = key.split(".")
        for depth, part in enumerate(parts):
            last = depth == len(parts) - 1
            inside_options = depth > 0 and parts[depth - 1] == "options"
            if not isinstance(node, dict) or (part not in node and not inside_options):
                raise ConfigError(f"unknown config key {'.'.join(parts[: depth + 1])!r}")
            if last:
                node[part] = value
            else:
                node = node[part]
    return out


def load_config(
    path: str | Path | None = None,
    overrides: list[str] | None = None,
    *,
    preset: dict | None = None,
) -> dict:
    """Defaults ← ``preset`` ← YAML file ``path`` ← ``overrides``; a plain nested dict."""
    config = merge(DEFAULTS, preset or {})
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"{path}: config file not found")
        try:
            loaded = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
        if not isinstance(loaded, dict):
            raise ConfigError(f"{path}: a config must be a mapping of keys")
        config = merge(config, loaded)
    config = apply_overrides(config, overrides or [])
    if config["model"]["features"] not in ("head", "conv"):
        raise ConfigError("model.features must be 'head' or 'conv'")
    return config


def dump(config: dict) -> str:
    """YAML text of a config (the run folder's ``config.yaml``)."""
    return yaml.safe_dump(config, sort_keys=False)
