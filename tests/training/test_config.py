"""Config: defaults ← YAML ← key=value overrides; the shipped configs load."""

from pathlib import Path

import pytest

from medeval.training.config import DEFAULTS, SYNTHETIC, ConfigError, dump, load_config

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def test_yaml_then_overrides(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("train: {epochs: 7, lr: 0.01}\nmodel: {backbone: resnet18}\n")
    cfg = load_config(path, ["train.epochs=3", "data.options.images=/x", "splits.seeds=[4, 5]"])
    assert cfg["train"]["epochs"] == 3
    assert cfg["train"]["lr"] == 0.01
    assert cfg["model"]["backbone"] == "resnet18"
    assert cfg["data"]["options"] == {"images": "/x"}
    assert cfg["splits"]["seeds"] == [4, 5]
    assert cfg["train"]["batch_size"] == DEFAULTS["train"]["batch_size"]
    assert load_config(None, []) == DEFAULTS


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
    assert cfg["model"]["backbone"] == "vgg16"
    if name != "default":
        assert cfg["data"]["path"].startswith("/data/")
        assert cfg["splits"]["n"] == 10


def test_default_yaml_is_the_embedded_default():
    assert load_config(CONFIGS / "default.yaml") == load_config(None, preset=SYNTHETIC)


def test_dump_round_trips(tmp_path):
    cfg = load_config(None, ["train.lr=3e-4"], preset=SYNTHETIC)
    path = tmp_path / "config.yaml"
    path.write_text(dump(cfg))
    assert load_config(path) == cfg
