"""A whole run: task → patient-level splits → train/calibrate/evaluate each split → summary.

Run folder: ``config.yaml`` (resolved), ``splits.csv`` (manifest), ``split_<seed>/`` (see
:mod:`.loop` and :mod:`.finish`), ``summary.json``/``summary.csv``/``report.md``. A split whose
``metrics.json`` exists is finished; ``resume=True`` skips it and continues an unfinished one
from ``checkpoints/last.pt``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import torch

from medeval import atomic
from medeval.atomic import check_out
from medeval.errors import OutputPathError
from medeval.report.tables import subconcept_table
from medeval.splits import patient_splits, read_manifest, write_manifest
from medeval.training.config import dump
from medeval.training.data import build_task
from medeval.training.distributed import DistInfo, barrier, cleanup, init_distributed
from medeval.training.finish import evaluate_checkpoint
from medeval.training.loop import resolve_device, train_split
from medeval.training.summary import summarize_run

__all__ = ["check_run_folder", "default_run_folder", "run_notes", "run_training"]


def default_run_folder(cfg: dict) -> Path:
    """``$MEDEVAL_RUNS/<name>-<timestamp>`` (``runs/`` by default; ``/runs`` in the images)."""
    root = Path(os.environ.get("MEDEVAL_RUNS", "runs"))
    return root / f"{cfg['name']}-{time.strftime('%Y%m%d-%H%M%S')}"


def run_notes(cfg: dict) -> list[str]:
    """What a reader of the results must know first: synthetic data, an untrained backbone."""
    notes = []
    if cfg["data"]["source"] == "synthetic":
        notes.append(
            "NOTE: the data are SYNTHETIC chest-radiograph phantoms (built-in generator), "
            "not real images."
        )
    if not cfg["model"]["pretrained"] and not cfg["model"]["weights"]:
        notes.append(
            f"NOTE: the {cfg['model']['backbone']} backbone is RANDOMLY INITIALISED "
            "(model.pretrained=false)."
        )
    return notes


def check_run_folder(out: str | Path, *, resume: bool) -> Path:
    """Before any computation: ``out`` can hold a run, and a fresh run does not land in the
    folder of another one (a run folder is resumable, so it is written in place).

    Raises:
        OutputPathError: a file, a path under a file, an unwritable folder, a folder that
            already holds a run (fresh run) or one that holds none (``resume``).
    """
    out = check_out(out, tool="train", resumable=True)
    holds_run = (out / "config.yaml").is_file()
    if resume and not holds_run:
        raise OutputPathError(f"--resume {out}: no run here (no config.yaml)")
    if not resume and out.is_dir() and any(out.iterdir()):
        what = "holds a run" if holds_run else "is not empty"
        raise OutputPathError(f"--out {out}: {what}; use --resume {out} or another --out")
    return out


def _task_record(task) -> dict:
    """What the report shows about the data: the task description and any skipped files."""
    return {
        "source": task.source,
        "name": task.name,
        "description": task.describe(),
        "text": task.describe_text(),
        "skipped": [
            {"path": str(s.path), "row": s.row, "reason": s.reason} for s in task.data.skipped
        ],
    }


def _seeds(cfg: dict) -> list[int]:
    s = cfg["splits"]
    return [int(x) for x in s["seeds"]] if s.get("seeds") is not None else list(range(int(s["n"])))


def run_training(
    cfg: dict, out: str | Path, *, resume: bool = False, log: Callable[[str], None] = print
) -> dict:
    """Train, calibrate and evaluate every split of ``cfg`` into run folder ``out``.

    Under ``torchrun`` every rank trains (DDP) and rank 0 writes the files.

    Returns:
        The run summary (see :func:`medeval.training.summary.summarize_run`); ``{}`` on ranks > 0.
    """
    out = Path(out)
    want = cfg["train"]["device"]
    cuda = (want == "auto" and torch.cuda.is_available()) or str(want).startswith("cuda")
    info: DistInfo = init_distributed(cuda=cuda)
    say = log if info.is_main else (lambda _msg: None)
    try:
        device = resolve_device(want, info)
        torch.manual_seed(int(cfg["train"]["seed"]))
        task = build_task(cfg["data"])
        manifest = out / "splits.csv"
        if resume and manifest.is_file():
            splits = read_manifest(manifest, task)
        else:
            splits = patient_splits(task, seeds=_seeds(cfg), fractions=(0.6, 0.15, 0.1, 0.15))
            if info.is_main:
                atomic.claim_folder(out, tool="train")
                atomic.write_text(out / "config.yaml", dump(cfg))
                write_manifest(manifest, task, splits)
                atomic.write_json(out / "task.json", _task_record(task))
        say(
            f"{task.source}/{task.name}: {len(task)} images, {len(task.subconcepts)} subconcepts, "
            f"{len(splits)} split(s); device {device}"
            f"{f', {info.world_size} processes (DDP)' if info.enabled else ''}; run folder {out}"
        )
        for split in splits:
            folder = out / f"split_{split.seed}"
            if (folder / "metrics.json").is_file():
                if not resume:
                    raise FileExistsError(f"{folder} is finished; use --resume or another --out")
                say(f"split {split.seed}: finished earlier, skipped")
                continue
            best = train_split(
                cfg, task, split, folder, device=device, dist_info=info, resume=resume, log=say
            )
            if info.is_main:
                ev, calib = evaluate_checkpoint(cfg, task, split, best, folder, device=device)
                sc = ev.scores
                say(
                    f"split {split.seed}: test BA {sc['BA']:.3f}, cBA {sc['cBA']:.3f} "
                    f"(label-free), wBA {sc['wBA']:.3f} (oracle), pBA {sc['pBA']:.3f}; "
                    f"subconcept ECE {calib['ece_test_before']:.3f} -> "
                    f"{calib['ece_test_after']:.3f} (T = {calib['temperature']:.2f})"
                )
                say(subconcept_table(ev))
            barrier(info)
        return summarize_run(out) if info.is_main else {}
    finally:
        cleanup(info)
