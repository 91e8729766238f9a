"""train.monitor: the named validation score drives early stopping and chooses best.pt."""

import json
import math

import pandas as pd
import pytest
import torch

from medeval.flows.train import split_seeds as _seeds
from medeval.splits import patient_splits
from medeval.training.checkpoint import load_checkpoint
from medeval.training.config import SYNTHETIC, load_config
from medeval.training.data import build_task
from medeval.training.loop import train_split


def _train(overrides, folder):
    torch.set_num_threads(1)
    cfg = load_config(None, overrides, preset=SYNTHETIC)
    task = build_task(cfg.data)
    (split,) = patient_splits(task, seeds=_seeds(cfg), fractions=(0.6, 0.15, 0.1, 0.15))
    best = train_split(cfg, task, split, folder, device=torch.device("cpu"))
    return cfg, best


def test_default_monitor_is_ba():
    assert load_config(None, [], preset=SYNTHETIC).train.monitor == "BA"


def test_monitor_chooses_best_checkpoint_and_stops_early(tiny_overrides, tmp_path):
    extra = ["train.epochs=4", "train.patience=1", "train.monitor=cBA", "train.lr=1e-3"]
    _, best_path = _train([*tiny_overrides, *extra], tmp_path)
    log = pd.read_csv(tmp_path / "log.csv")
    # replay the rule: improve = strictly better (NaN counts as -inf); stop after 1 bad epoch
    best_value, best_epoch, stop = -math.inf, 0, 4
    for epoch, value in zip(log["epoch"], log["val_cBA"].fillna(-math.inf), strict=True):
        if value > best_value or best_epoch == 0:
            best_value, best_epoch = value, epoch
        else:
            stop = epoch
            break
    assert list(log["epoch"]) == list(range(1, stop + 1))
    record = json.loads((tmp_path / "best.json").read_text())
    assert record["monitor"] == "cBA" and record["epoch"] == best_epoch
    assert record["value"] == pytest.approx(best_value, rel=1e-12)
    assert set(record["scores"]) >= {"BA", "pBA", "cBA", "wBA", "AUC", "cAUC"}
    trained_on = record["trained_on"]  # the numbers depend on the device: it is recorded
    assert trained_on["device"] == "cpu" and trained_on["device_name"] == "cpu"
    assert trained_on["processes"] == 1 and trained_on["torch"] == torch.__version__
    best = load_checkpoint(best_path)
    chosen = load_checkpoint(tmp_path / "checkpoints" / f"epoch_{best_epoch}.pt")
    assert best["monitor"] == "cBA" and best["epoch"] == best_epoch
    assert all(torch.equal(best["model"][k], chosen["model"][k]) for k in best["model"])


def test_unknown_monitor_is_refused_before_training(tiny_overrides, tmp_path):
    with pytest.raises(ValueError, match="train.monitor: must be a validation score: BA, wBA"):
        _train([*tiny_overrides, "train.monitor=accuracy"], tmp_path)
    assert not (tmp_path / "checkpoints").exists()
