"""torchrun with 2 gloo processes on the CPU trains, and its evaluation equals the
single-process evaluation of the same checkpoint."""

import json
import os
import subprocess
import sys

import pytest
import torch

from medeval.splits import patient_splits
from medeval.training.data import build_task
from medeval.training.finish import evaluate_checkpoint
from medeval.training.run import _seeds


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

    task = build_task(tiny_config["data"])
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
