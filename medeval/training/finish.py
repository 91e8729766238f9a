"""After training: temperature on the calibration part, test predictions, the nine scores.

Writes into the split folder: ``predictions.csv`` (y_true, y_score, subconcept, q_<name>: the
format ``python -m medeval.evaluate --predictions`` reads), ``train_sizes.json``,
``calibration.json`` (temperature, ECE before/after) and the files of
:func:`medeval.report.outputs.output_files` (metrics.json, metrics.csv, per_subconcept.csv,
subconcepts.png). The same function serves one process and rank 0 of a DDP run, so both give
the same evaluation of the same checkpoint.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from medeval import atomic
from medeval.evaluation import Evaluation
from medeval.splits import Split
from medeval.tasks.binary import BinaryTask
from medeval.training.calibration import expected_calibration_error, fit_temperature
from medeval.training.checkpoint import load_checkpoint
from medeval.training.data import make_loader, part_dataset
from medeval.training.loop import create_model, predict
from medeval.training.summary import evaluate_split_folder
from medeval.weights import utilities

__all__ = ["evaluate_checkpoint", "softmax"]


def softmax(z: np.ndarray) -> np.ndarray:
    """Row softmax of (N, S) logits in float64."""
    z = np.asarray(z, dtype=np.float64)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def evaluate_checkpoint(
    cfg: dict,
    task: BinaryTask,
    split: Split,
    checkpoint: str | Path,
    folder: str | Path,
    *,
    device: torch.device,
) -> tuple[Evaluation, dict]:
    """Calibrate, predict the test part and evaluate the model weights in ``checkpoint``.

    Returns:
        The evaluation and the calibration record (temperature, ECE before/after on the
        calibration and the test part).
    """
    folder = Path(folder)
    t, e = cfg["train"], cfg["evaluation"]
    model = create_model_from(cfg, task, checkpoint, device)
    outs = {}
    for part in ("calibration", "test"):
        loader = make_loader(
            part_dataset(task, split[part], int(t["image_size"])),
            batch_size=int(t["batch_size"]),
            workers=int(t["workers"]),
            shuffle=False,
            seed=0,
            cuda=device.type == "cuda",
        )
        outs[part] = predict(model, loader, device)
    cal, test = outs["calibration"], outs["test"]
    temperature = fit_temperature(cal.sub_logits, cal.subconcept)
    calib = {"temperature": temperature}
    for name, o in (("calibration", cal), ("test", test)):
        calib[f"ece_{name}_before"] = expected_calibration_error(
            softmax(o.sub_logits), o.subconcept
        )
        calib[f"ece_{name}_after"] = expected_calibration_error(
            softmax(o.sub_logits / temperature), o.subconcept
        )
    names = task.subconcept_names
    q = softmax(test.sub_logits / temperature)
    idx = split["test"]
    frame = pd.DataFrame(
        {
            "id": np.asarray(task.ids)[idx],
            "group": np.asarray(task.groups)[idx],
            "y_true": test.y,
            "y_score": 1.0 / (1.0 + np.exp(-test.logit.astype(np.float64))),
            "subconcept": np.asarray(names, dtype=object)[test.subconcept],
        }
    )
    for j, name in enumerate(names):
        frame[f"q_{name}"] = q[:, j]
    u = utilities(task.train_counts(split["train"]), task.sides, names)
    buf = io.StringIO()
    frame.to_csv(buf, index=False, float_format="%.10g")
    files = {
        "predictions.csv": buf.getvalue().encode(),
        "train_sizes.json": _json(u.as_dict()),
        "calibration.json": _json(calib),
    }
    atomic.write_files(folder, files)
    ev = evaluate_split_folder(
        folder,
        n_bootstrap=int(e["n_bootstrap"]),
        threshold=float(e["threshold"]),
        seed=int(e["seed"]),
        device=device,
        title=f"{task.source}/{task.name}, split {split.seed}",
    )
    return ev, calib


def _json(obj) -> bytes:
    return (json.dumps(obj, indent=2, allow_nan=True) + "\n").encode()


def create_model_from(cfg: dict, task: BinaryTask, checkpoint: str | Path, device: torch.device):
    """The configured architecture (random init, no download) with the checkpoint's weights."""
    arch = {**cfg, "model": {**cfg["model"], "pretrained": False, "weights": None}}
    model = create_model(arch, len(task.subconcepts), device)
    model.load_state_dict(load_checkpoint(checkpoint, map_location=device)["model"])
    return model
