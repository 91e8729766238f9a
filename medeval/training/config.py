"""Run configuration: built-in defaults ← YAML file ← ``key=value`` overrides (dotted keys;
docs/imaging.md), validated at load time into the typed :class:`Config`; errors name the dotted
key. ``configs/default.yaml`` is the commented copy of :data:`SYNTHETIC`.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import math
import re
import types
import typing
import warnings
from dataclasses import dataclass, field
from numbers import Integral, Real
from pathlib import Path
from typing import Any, Literal

import yaml

from medeval._validation import Constraint, Interval, StrOptions, TypeOf, declared, refusal
from medeval.datasets.sources import PHANTOM_NORMALS, PHANTOM_SIZE
from medeval.errors import UserError
from medeval.options import COUNT, FEATURES, SEED, EvaluationOptions
from medeval.scores import INSTANCE_SCORES

__all__ = [
    "DEFAULTS",
    "SYNTHETIC",
    "Config",
    "ConfigError",
    "apply_overrides",
    "dump",
    "load_config",
    "load_yaml",
    "merge",
    "task_spec",
    "validate",
]


class ConfigError(UserError):
    """An unknown key, a value of the wrong type or range, or an unreadable config file."""


#: A seed: the one rule of every seed a user gives (:data:`medeval.options.SEED`).
_SEED = [SEED]
_AT_LEAST_1 = [COUNT]
_AT_LEAST_0 = [Interval(Integral, 0, None)]
_NON_NEGATIVE = [Interval(Real, 0, None)]
_TEXT = TypeOf(str, desc="a str")
_BOOL = TypeOf(bool, desc="a bool")


@declared({"n_normal": [PHANTOM_NORMALS], "size": [PHANTOM_SIZE], "seed": _SEED})
@dataclass
class SyntheticConfig:
    n_normal: int = 240
    size: int = 48
    seed: int = 0


@declared(
    {
        "source": [_TEXT],
        "path": [_TEXT, None],
        "dataset": [_TEXT, None],
        "options": [TypeOf(dict, desc="a mapping of loader options")],
        "task_seed": _SEED,
        "synthetic": [TypeOf(SyntheticConfig, desc="a synthetic section")],
        "cache": [_BOOL],
        "cache_dir": [_TEXT],
    }
)
@dataclass
class DataConfig:
    source: str = "synthetic"  # a source of medeval.datasets.sources: synthetic, nih, ham10000, ...
    path: str | None = None
    dataset: str | None = None  # data-set name inside a folder of several
    options: dict[str, Any] = field(default_factory=dict)  # loader options, e.g. {images: ...}
    task_seed: int = 0
    synthetic: SyntheticConfig = field(default_factory=SyntheticConfig)
    # Decoded, resized images stored once under cache_dir (medeval.datasets.cache).
    cache: bool = True
    cache_dir: str = ".medeval-cache/images"


@dataclass
class TaskConfig:
    """The user's own binary task (docs/method.md, "The user's own task";
    :class:`medeval.tasks.user.TaskSpec`); without ``positive`` the paper's ladder
    (docs/method.md, "Binary tasks from multiclass data")."""

    positive: list[str | int] | None = None  # labels of class 1, e.g. [MEL, BCC, SCC, AK]
    negative: list[str | int] | None = None  # labels of class 0 (default: every other label)
    drop: list[str | int] = field(default_factory=list)  # labels whose rows are left out
    downsample: bool = False  # class 1 down-sampled along the paper's ladder (default: all rows)


@declared(
    {
        "backbone": [_TEXT],
        "pretrained": [_BOOL],
        "weights": [_TEXT, None],
        "features": [StrOptions(FEATURES)],
        "dropout": [Interval(Real, 0, 1, closed="left")],
        "freeze": [_BOOL],
    }
)
@dataclass
class ModelConfig:
    backbone: str = "vgg16"  # a timm name, or efficientnet_lite0|1|2 (medeval.models.packaged)
    pretrained: bool = True
    weights: str | None = None  # local .pth/.safetensors; overrides the hub
    features: Literal["head", "conv"] = "head"  # timm num_classes=0 output / pooled conv map
    dropout: float = 0.0
    # true: the backbone stays as loaded; its features are computed once per image (cached
    # beside the decoded images) and only the two heads train on them
    freeze: bool = False


@declared({"binary": _NON_NEGATIVE, "subconcept": _NON_NEGATIVE})
@dataclass
class LossWeights:
    binary: float = 1.0
    subconcept: float = 1.0


@declared(
    {
        "image_size": _AT_LEAST_1,
        "batch_size": _AT_LEAST_1,
        "epochs": _AT_LEAST_1,
        "lr": [Interval(Real, 0, None, closed="neither")],
        "loss_weights": [TypeOf(LossWeights, desc="a loss_weights section")],
        "class_balanced": [_BOOL],
        "device": [_TEXT],
        "weight_decay": _NON_NEGATIVE,
        "grad_clip": _NON_NEGATIVE,
        "patience": _AT_LEAST_1,
        "monitor": [
            StrOptions(INSTANCE_SCORES, desc="a validation score: " + ", ".join(INSTANCE_SCORES))
        ],
        "workers": _AT_LEAST_0,
        "threads": _AT_LEAST_0,
        "seed": _SEED,
        "keep_checkpoints": _AT_LEAST_0,
        "max_steps_per_epoch": _AT_LEAST_0,
    }
)
@dataclass
class TrainConfig:
    image_size: int = 224
    batch_size: int = 32
    epochs: int = 20
    lr: float = 1e-4
    weight_decay: float = 1e-4
    loss_weights: LossWeights = field(default_factory=LossWeights)
    class_balanced: bool = False
    grad_clip: float = 0.0  # max gradient norm (0 = no clipping)
    patience: int = 5  # epochs without a better validation score before stopping
    monitor: str = "BA"  # the validation score that chooses early stopping and the best epoch
    workers: int = 2
    # torch's CPU threads (0 = one per core); fixed, for the same sums on any machine
    # (docs/imaging.md, "Reproducibility").
    threads: int = 1
    seed: int = 0  # weight initialisation, batch order, dropout
    device: str = "auto"  # auto, cpu, cuda, cuda:1
    keep_checkpoints: int = 0  # epoch_<k>.pt files kept (0 = all)
    max_steps_per_epoch: int = 0  # 0 = whole training part; >0 caps steps (smoke tests)


class _SplitSeeds(Constraint):
    """A non-empty list of distinct seeds >= 0."""

    def accepts(self, value: Any) -> bool:
        return (
            isinstance(value, list)
            and len(value) > 0
            and all(_SEED[0].accepts(v) for v in value)
            and len(set(value)) == len(value)
        )

    def __str__(self) -> str:
        return f"a non-empty list of distinct seeds, each {SEED}"


@declared({"n": _AT_LEAST_1, "seeds": [None, _SplitSeeds()]})
@dataclass
class SplitsConfig:
    n: int = 1
    seeds: list[int] | None = None  # default 0..n-1


@dataclass
class Config:
    """The whole run configuration (see the module docstring)."""

    name: str = "synthetic"
    data: DataConfig = field(default_factory=DataConfig)
    task: TaskConfig = field(default_factory=TaskConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    splits: SplitsConfig = field(default_factory=SplitsConfig)
    # the evaluation's own options (medeval.options): every field, default and range
    evaluation: EvaluationOptions = field(default_factory=EvaluationOptions)
    out: str | None = None  # run folder; default runs/<name>-<timestamp>

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


DEFAULTS: dict[str, Any] = Config().to_dict()

# The embedded default (``python -m medeval.train`` with no --config; = configs/default.yaml):
# synthetic phantoms, random-init VGG16 on pooled conv features at 32 px, one split.
SYNTHETIC: dict[str, Any] = {
    "name": "synthetic",
    "data": {"source": "synthetic", "synthetic": {"n_normal": 240, "size": 32, "seed": 0}},
    "model": {"backbone": "vgg16", "pretrained": False, "features": "conv"},
    "train": {
        "image_size": 32,
        "batch_size": 8,
        "epochs": 8,
        "lr": 1e-4,
        # The subconcept head must tell the minority subtypes apart for the label-free scores
        # to see the hidden failure; weighting its loss lets it learn within 8 epochs.
        "loss_weights": {"binary": 1.0, "subconcept": 3.0},
        "class_balanced": True,
        "grad_clip": 1.0,
        "patience": 8,
        "workers": 0,
        "keep_checkpoints": 2,
    },
    "splits": {"n": 1},
    "evaluation": {"n_bootstrap": 1000},
}

# Plain YAML 1.1 reads "1e-4" (no dot) as a string; a float key accepts it as the number.
_FLOAT_TEXT = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def _type_name(tp: Any) -> str:
    if typing.get_origin(tp) is Literal:
        return "one of " + ", ".join(map(repr, typing.get_args(tp)))
    if isinstance(tp, types.UnionType) or typing.get_origin(tp) is typing.Union:
        return " or ".join(_type_name(a) for a in typing.get_args(tp))
    if typing.get_origin(tp) is not None:
        return str(tp).replace("typing.", "")
    return "null" if tp is type(None) else getattr(tp, "__name__", str(tp))


def _coerce(value: Any, tp: Any, key: str) -> Any:
    """``value`` as type ``tp``, or ``ConfigError`` naming ``key``."""
    origin = typing.get_origin(tp)
    if isinstance(tp, types.UnionType) or origin is typing.Union:
        options = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None and len(options) < len(typing.get_args(tp)):
            return None
        if len(options) == 1:  # "X | None" with a value: X's own message is the precise one
            return _coerce(value, options[0], key)
        for arg in options:
            try:
                return _coerce(value, arg, key)
            except ConfigError:
                continue
    elif origin is Literal:
        if value in typing.get_args(tp):
            return value
    elif tp in (type(None), bool, int, str):  # a bool is no int here
        if isinstance(value, tp) and (tp is bool or not isinstance(value, bool)):
            return value
    elif tp is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str) and _FLOAT_TEXT.match(value.strip()):
            return float(value)
    elif origin is list:
        if isinstance(value, list):
            (item,) = typing.get_args(tp)
            return [_coerce(v, item, f"{key}[{i}]") for i, v in enumerate(value)]
    elif origin is dict:
        if isinstance(value, dict):
            return dict(value)
    raise ConfigError(f"{key}: expected {_type_name(tp)}, got {value!r}")


def _build(cls: type, values: Any, where: str) -> Any:
    """A ``cls`` dataclass from a mapping, every key, type and declared range checked."""
    if not isinstance(values, dict):
        raise ConfigError(f"{where.rstrip('.') or 'config'}: expected a mapping, got {values!r}")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    unknown = [k for k in values if k not in names]
    if unknown:
        raise _unknown_key(where + str(unknown[0]), names)
    ranges = dict(getattr(cls, "constraints", {}))
    if cls is EvaluationOptions:  # scores are probabilities: refused before training
        ranges["threshold"] = [Interval(Real, 0, 1)]
    kwargs = {}
    for name, value in values.items():
        tp = hints[name]
        if dataclasses.is_dataclass(tp):
            kwargs[name] = _build(tp, value, f"{where}{name}.")
            continue
        kwargs[name] = _coerce(value, tp, where + name)
        message = refusal(ranges[name], kwargs[name]) if name in ranges else None
        if message:
            raise ConfigError(f"{where}{name}: {message}")
    return cls(**kwargs)


def _check_finite(node: Any, key: str) -> None:
    """Refuse a NaN or infinite number anywhere in the config."""
    if isinstance(node, dict):
        for name, value in node.items():
            _check_finite(value, f"{key}.{name}" if key else str(name))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            _check_finite(value, f"{key}[{i}]")
    elif isinstance(node, float) and not math.isfinite(node):
        raise ConfigError(f"{key}: must be a finite number, got {node!r}")


def validate(config: dict) -> Config:
    """The typed :class:`Config` of a nested dict.

    Raises:
        ConfigError: an unknown key, a wrong type, a value out of range, an unknown
            ``data.source`` or a loader option that source does not take; the message starts
            with the dotted key.
    """
    from medeval.datasets.sources import SOURCES, check_options

    cfg = _build(Config, config, "")
    _check_finite(dataclasses.asdict(cfg), "")
    source = cfg.data.source
    if source not in SOURCES:
        raise ConfigError(
            f"data.source: unknown source {source!r}; choose from {', '.join(SOURCES)}"
        )
    try:
        check_options(source, cfg.data.options, where="data.options")
    except UserError as exc:
        raise ConfigError(str(exc)) from None
    task_spec(cfg)  # a definition that makes no task fails here, naming task.<key>
    return cfg


def task_spec(cfg: Config):
    """The user's task of ``cfg.task`` (a ``TaskSpec``), or ``None`` for the paper's ladder.

    Raises:
        ConfigError: a label in two lists, an empty list, task keys without ``task.positive``.
    """
    from medeval.tasks.user import TaskSpec, TaskSpecError

    t = cfg.task
    try:
        return TaskSpec.build(t.positive, t.negative, t.drop, downsample=t.downsample)
    except TaskSpecError as exc:
        raise ConfigError(str(exc)) from None


def merge(base: dict, update: dict, *, where: str = "") -> dict:
    """Deep-merge ``update`` into a copy of ``base``; unknown keys raise ``ConfigError``."""
    out = copy.deepcopy(base)
    for key, value in update.items():
        if key not in out:
            raise _unknown_key(where + str(key), out)
        if isinstance(out[key], dict) and isinstance(value, dict) and key != "options":
            out[key] = merge(out[key], value, where=f"{where}{key}.")
        else:
            out[key] = copy.deepcopy(value)
    return out


def _unknown_key(key: str, known: Any) -> ConfigError:
    """'unknown config key 'train.epoch': did you mean 'train.epochs'? (known: ...)'."""
    known = sorted(map(str, known)) if isinstance(known, dict | list) else []
    head, _, last = key.rpartition(".")
    near = difflib.get_close_matches(last, known, n=1)
    hint = f": did you mean {head + '.' * bool(head) + near[0]!r}?" if near else ""
    return ConfigError(f"unknown config key {key!r}{hint} (known: {', '.join(known) or 'none'})")


def apply_overrides(config: dict, overrides: list[str]) -> dict:
    """Apply ``a.b=value`` strings; values are parsed as YAML (``1e-3``, ``true``, ``[1, 2]``)."""
    out = copy.deepcopy(config)
    for item in overrides:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"override {item!r} is not of the form key=value")
        try:
            value = yaml.safe_load(text) if text else None
        except yaml.YAMLError as exc:
            raise ConfigError(f"override {item!r}: not a YAML value: {exc}") from None
        node = out
        parts = key.split(".")
        for depth, part in enumerate(parts):
            last = depth == len(parts) - 1
            inside_options = depth > 0 and parts[depth - 1] == "options"
            if not isinstance(node, dict) or (part not in node and not inside_options):
                raise _unknown_key(".".join(parts[: depth + 1]), node)
            if last:
                node[part] = value
            else:
                node = node[part]
    return out


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader refusing a key given twice in one mapping."""

    where: str = "config"

    def construct_mapping(self, node, deep=False):
        first: dict[object, int] = {}
        for key_node, _value in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # "<<: *base" may be overridden
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if isinstance(key, typing.Hashable) and key in first:
                raise ConfigError(
                    f"{self.where}: line {line}: key {key!r} is given twice in one mapping "
                    f"(first on line {first[key]}); keep one"
                )
            first[key] = line
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str, where: str | Path = "config") -> Any:
    """``yaml.safe_load`` of a config text, refusing duplicated keys (:class:`ConfigError`
    naming ``where``, the key and its line)."""
    loader = _UniqueKeyLoader(text)
    loader.where = str(where)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def load_config(
    path: str | Path | None = None,
    overrides: list[str] | None = None,
    *,
    preset: dict | None = None,
) -> Config:
    """Defaults ← ``preset`` ← YAML file ``path`` ← ``overrides``, validated (:func:`validate`)
    into the typed :class:`Config`."""
    config = merge(DEFAULTS, preset or {})
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"{path}: config file not found")
        try:
            loaded = load_yaml(path.read_text(encoding="utf-8"), path)
        except UnicodeDecodeError as exc:
            raise ConfigError(
                f"{path}: not a YAML text file ({exc.reason} at byte {exc.start})"
            ) from exc
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
        if loaded is None:
            raise ConfigError(
                f"{path}: the config file is empty (no key): give keys, or no --config"
            )
        if not isinstance(loaded, dict):
            raise ConfigError(f"{path}: a config must be a mapping of keys")
        _drop_retired(loaded, path)
        try:
            config = merge(config, loaded)
            validate(config)
        except ConfigError as exc:
            raise ConfigError(f"{path}: {exc}") from None
    config = apply_overrides(config, overrides or [])
    return validate(config)


#: Keys earlier versions wrote into a run's ``config.yaml`` and no longer read.
RETIRED = {
    ("evaluation", "memory_budget"): "the bootstrap sizes its work from the free memory by itself"
}


def _drop_retired(loaded: dict, path: Path) -> None:
    """Drop the RETIRED keys (old run folders still resume); warn where one is set."""
    for (section, key), why in RETIRED.items():
        part = loaded.get(section)
        if isinstance(part, dict) and key in part and part.pop(key) is not None:
            warnings.warn(
                f"{path}: {section}.{key} is no longer read ({why}); drop it", stacklevel=3
            )


def dump(config: Config | dict) -> str:
    """YAML text of a config (the run folder's ``config.yaml``): every key, in declaration
    order."""
    plain = config.to_dict() if isinstance(config, Config) else config
    return yaml.safe_dump(plain, sort_keys=False)
