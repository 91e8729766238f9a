"""torchrun with 2 gloo processes on the CPU trains, its evaluation equals the
single-process evaluation of the same checkpoint, and its validation scores (each rank scores
its share, the metric syncs) equal one process scoring the whole validation part."""

import json
import math
import os
import subprocess
import sys

import pandas as pd
import pytest
import torch

from medeval.flows.train import build_model_from, evaluate_checkpoint
from medeval.flows.train import split_seeds as _seeds
from medeval.metrics.streaming import SubconceptScores
from medeval.scores import INSTANCE_SCORES
from medeval.splits import patient_splits
from medeval.training.data import build_task, make_loader, part_dataset
from medeval.training.loop import validation_scores
from medeval.weights import utilities


@pytest.mark.filterwarnings("ignore::medeval.evaluation.rectified.FewReferenceRowsWarning")
@pytest.mark.slow
def test_ddp_two_processes_match_single_process(tiny_config, tiny_overrides, tmp_path):
    out = tmp_path / "ddp"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node",
        "2",
        "--standalone",
        "-m",
        "medeval.train",
        "--out",
        str(out),
        "--device",
        "cpu",
        *tiny_overrides,
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "2 processes (DDP)" in proc.stdout
    ddp = json.loads((out / "split_0" / "metrics.json").read_text())

    task = build_task(tiny_config.data)
    (split,) = patient_splits(task, seeds=_seeds(tiny_config))
    single = tmp_path / "single"
    torch.set_num_threads(1)
    evaluate_checkpoint(
        tiny_config,
        task,
        split,
        out / "split_0" / "checkpoints" / "best.pt",
        single,
        device=torch.device("cpu"),
    )
    one = json.loads((single / "metrics.json").read_text())
    assert one["scores"] == ddp["scores"]
    assert one["intervals"] == ddp["intervals"]

    # validation at epoch 1: two shares synced by the metric == the whole part in one process
    log = pd.read_csv(out / "split_0" / "log.csv")
    cpu = torch.device("cpu")
    model = build_model_from(tiny_config, task, out / "split_0" / "checkpoints" / "epoch_1.pt", cpu)
    t = tiny_config.train
    loader = make_loader(
        part_dataset(task, split["validation"], int(t.image_size)),
        batch_size=int(t.batch_size),
        workers=0,
        shuffle=False,
        seed=0,
        cuda=False,
    )
    u = utilities(task.train_counts(split["train"]), task.sides, task.subconcept_names)
    whole = validation_scores(model, loader, SubconceptScores(u, scores=INSTANCE_SCORES), cpu)
    for k in INSTANCE_SCORES:
        logged = float(log.loc[0, f"val_{k}"])
        assert (math.isnan(logged) and math.isnan(whole[k])) or logged == pytest.approx(
            whole[k], abs=1e-6
        ), k
