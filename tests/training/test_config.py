"""Config: defaults ← YAML ← key=value overrides; the shipped configs load."""

from pathlib import Path

import pytest
import yaml

from medeval.training.config import (
    DEFAULTS,
    SYNTHETIC,
    Config,
    ConfigError,
    TrainConfig,
    dump,
    load_config,
)

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def test_yaml_then_overrides(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("train: {epochs: 7, lr: 0.01}\nmodel: {backbone: resnet18}\n")
    over = ["train.epochs=3", "data.source=nih", "data.options.images=/x", "splits.seeds=[4, 5]"]
    cfg = load_config(path, over)
    assert cfg.train.epochs == 3
    assert cfg.train.lr == 0.01
    assert cfg.model.backbone == "resnet18"
    assert cfg.data.options == {"images": "/x"}
    assert cfg.splits.seeds == [4, 5]
    assert cfg.train.batch_size == DEFAULTS["train"]["batch_size"]
    assert load_config(None, []).to_dict() == DEFAULTS


def test_unknown_keys_and_bad_overrides(tmp_path):
    with pytest.raises(ConfigError, match="train.epoch"):
        load_config(None, ["train.epoch=3"])
    with pytest.raises(ConfigError, match="key=value"):
        load_config(None, ["train.epochs"])
    bad = tmp_path / "bad.yaml"
    bad.write_text("model: {colour: red}\n")
    with pytest.raises(ConfigError, match="model.colour"):
        load_config(bad)
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "absent.yaml")


@pytest.mark.parametrize("name", ["default", "nih", "ham10000", "folder", "dicom"])
def test_shipped_configs_load(name):
    cfg = load_config(CONFIGS / f"{name}.yaml")
    assert cfg.model.backbone == "vgg16"
    if name != "default":
        assert cfg.data.path.startswith("/data/")
        assert cfg.splits.n == 10


def test_default_yaml_is_the_embedded_default():
    assert load_config(CONFIGS / "default.yaml") == load_config(None, preset=SYNTHETIC)


def test_default_yaml_holds_exactly_the_embedded_preset():
    # configs/default.yaml is the commented copy of SYNTHETIC: same keys, same values, so
    # neither can gain a setting the other lacks.
    assert yaml.safe_load((CONFIGS / "default.yaml").read_text()) == SYNTHETIC


# The run folder's config.yaml of the embedded default, as the dict-based loader wrote it.
SAVED_DEFAULT = """\
name: synthetic
data:
  source: synthetic
  path: null
  dataset: null
  options: {}
  task_seed: 0
  synthetic:
    n_normal: 240
    size: 32
    seed: 0
  cache: true
  cache_dir: .medeval-cache/images
task:
  positive: null
  negative: null
  drop: []
  downsample: false
model:
  backbone: vgg16
  pretrained: false
  weights: null
  features: conv
  dropout: 0.0
  freeze: false
train:
  image_size: 32
  batch_size: 8
  epochs: 8
  lr: 0.0001
  weight_decay: 0.0001
  loss_weights:
    binary: 1.0
    subconcept: 3.0
  class_balanced: true
  grad_clip: 1.0
  patience: 8
  monitor: BA
  workers: 0
  threads: 1
  seed: 0
  device: auto
  keep_checkpoints: 2
  max_steps_per_epoch: 0
splits:
  n: 1
  seeds: null
evaluation:
  n_bootstrap: 1000
  threshold: 0.5
  seed: 0
  confidence: 0.95
  stratify: class
out: null
"""


def test_typed_config_saves_the_same_yaml_as_before(tmp_path):
    cfg = load_config(None, preset=SYNTHETIC)
    assert isinstance(cfg, Config) and isinstance(cfg.train, TrainConfig)
    assert dump(cfg) == SAVED_DEFAULT
    assert dump(cfg) == dump(cfg.to_dict())
    path = tmp_path / "config.yaml"
    path.write_text(dump(cfg))
    assert load_config(path) == cfg  # a resumed run reads back the same typed config


def test_dump_round_trips(tmp_path):
    cfg = load_config(None, ["train.lr=3e-4"], preset=SYNTHETIC)
    path = tmp_path / "config.yaml"
    path.write_text(dump(cfg))
    assert load_config(path) == cfg


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("train.epochs=ten", r"train\.epochs: expected int, got 'ten'"),
        ("train.epochs=2.5", r"train\.epochs: expected int, got 2\.5"),
        ("train.lr=fast", r"train\.lr: expected float"),
        ("train.loss_weights.binary=[1]", r"train\.loss_weights\.binary: expected float"),
        ("model.pretrained=maybe", r"model\.pretrained: expected bool"),
        ("model.features=pixels", r"model\.features: expected one of 'head', 'conv'"),
        ("splits.seeds=[1, x]", r"splits\.seeds\[1\]: expected int"),
        ("train.monitor=3", r"train\.monitor: expected str, got 3"),
        ("train.epochs=0", r"train\.epochs: must be an int >= 1; got 0"),
        ("evaluation.threshold=1.5", r"evaluation\.threshold: must be a number in \[0, 1\]"),
        ("evaluation.confidence=1", r"evaluation\.confidence: must be a number in \(0, 1\)"),
        ("evaluation.stratify=rows", r"evaluation\.stratify: must be one of 'class', "),
        ("evaluation.memory_budget=0", r"unknown config key 'evaluation\.memory_budget'"),
        ("train.seed=9223372036854775808", r"train\.seed: must be an int in \[0, 4294967295\]"),
        ("splits.seeds=[1, 1]", r"splits\.seeds: must be None or a non-empty list of distinct"),
        ("data.source=nope", r"data\.source: unknown source 'nope'"),
        ("data.options.images=/x", r"data\.options\.images: source 'synthetic' takes no option"),
        ("train.loss_weights=3", r"train\.loss_weights: expected a mapping"),
    ],
)
def test_wrong_types_and_values_fail_at_load_time_with_the_dotted_key(override, message):
    with pytest.raises(ConfigError, match=message):
        load_config(None, [override], preset=SYNTHETIC)


def test_a_bad_value_in_a_file_names_the_file_and_the_key(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("train: {epochs: ten}\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml: train\.epochs: expected int"):
        load_config(bad)
    bad.write_text("data: {source: nih, options: {tie: drop}}\n")
    with pytest.raises(ConfigError, match=r"data\.options\.tie: source 'nih' takes no option"):
        load_config(bad)


def test_types_are_normalised_and_monitor_defaults_to_ba():
    cfg = load_config(None, ["train.lr=1e-3", "train.grad_clip=1", "data.source=nih"])
    assert cfg.train.lr == 1e-3 and isinstance(cfg.train.grad_clip, float)
    assert cfg.train.monitor == "BA"
    assert load_config(None, ["train.monitor=pBA"]).train.monitor == "pBA"
    cfg = load_config(None, ["data.source=medmnist", "data.options.respect_splits=true"])
    assert cfg.data.options == {"respect_splits": True}


def test_the_evaluation_section_is_the_evaluations_own_options():
    """``evaluation`` takes every option of the evaluation (medeval.options), with its
    defaults and ranges, so confidence and stratify can be set in a config."""
    from medeval.options import EvaluationOptions

    assert load_config(None).evaluation == EvaluationOptions()
    cfg = load_config(None, ["evaluation.confidence=0.9", "evaluation.stratify=none"])
    assert cfg.evaluation == EvaluationOptions(confidence=0.9, stratify="none")
    assert cfg.evaluation.evaluation_options()["confidence"] == 0.9
