"""``python -m medeval.train``: train VGG16 (or any timm backbone) with a binary and a subconcept
head, calibrate, and report BA against pBA/wBA.

With no arguments it runs end to end on built-in SYNTHETIC chest-radiograph phantoms with a
randomly initialised VGG16 at a small image size (a few minutes on 2 CPU cores)::

    python -m medeval.train
    python -m medeval.train --config configs/nih.yaml data.path=/data/nih --splits 10
    python -m medeval.train --resume runs/nih-20260101-120000
    torchrun --nproc_per_node 4 -m medeval.train --config configs/nih.yaml
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from medeval.datasets import DataError
from medeval.models import WeightsUnavailableError
from medeval.training.config import SYNTHETIC, ConfigError, load_config

EXIT_BAD_INPUT = 2


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m medeval.train",
        description="Train a two-headed image model on patient-level splits, calibrate its "
        "subconcept posteriors and evaluate BA, wBA, pBA, F1, AUC with intervals.",
    )
    p.add_argument(
        "overrides",
        nargs="*",
        metavar="key=value",
        help="config overrides with dotted keys, e.g. train.epochs=3 model.pretrained=false",
    )
    p.add_argument("--config", type=Path, help="YAML config (default: the built-in synthetic one)")
    p.add_argument("--out", type=Path, help="run folder (default runs/<name>-<timestamp>)")
    p.add_argument(
        "--splits", type=int, metavar="N", help="number of split seeds (10 = full protocol)"
    )
    p.add_argument("--weights", metavar="PATH", help="local backbone weights (.pth/.safetensors)")
    p.add_argument("--device", help="cpu, cuda, cuda:1 (default: auto)")
    p.add_argument(
        "--resume",
        type=Path,
        metavar="RUN_DIR",
        help="continue an interrupted run from its folder (finished splits are skipped)",
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from medeval.training.run import default_run_folder, run_training
    from medeval.training.summary import summary_table

    try:
        if args.resume is not None:
            if args.config or args.overrides:
                raise ConfigError(
                    "--resume uses the run's own config.yaml; drop --config/overrides"
                )
            cfg = load_config(args.resume / "config.yaml")
            out = args.resume
        else:
            overrides = list(args.overrides)
            if args.splits is not None:
                overrides.append(f"splits.n={args.splits}")
            if args.weights is not None:
                overrides += [f"model.weights={args.weights}", "model.pretrained=true"]
            if args.device is not None:
                overrides.append(f"train.device={args.device}")
            cfg = load_config(args.config, overrides, preset=None if args.config else SYNTHETIC)
            out = args.out or (Path(cfg["out"]) if cfg["out"] else default_run_folder(cfg))
        notes = []
        if cfg["data"]["source"] == "synthetic":
            notes.append(
                "NOTE: the data are SYNTHETIC chest-radiograph phantoms (built-in "
                "generator), not real images."
            )
        if not cfg["model"]["pretrained"] and not cfg["model"]["weights"]:
            notes.append(
                f"NOTE: the {cfg['model']['backbone']} backbone is RANDOMLY "
                "INITIALISED (model.pretrained=false)."
            )
        main_rank = os.environ.get("RANK", "0") == "0"
        for n in notes if main_rank else []:
            print(n)
        summary = run_training(cfg, out, resume=args.resume is not None)
    except (
        ConfigError,
        DataError,
        WeightsUnavailableError,
        FileExistsError,
        FileNotFoundError,
    ) as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if summary:
        print()
        print(summary_table(summary))
        for n in notes:
            print(n)
        print(f"report: {out / 'report.html'}")
        print(f"run folder: {out}  (report.html, report.md, summary.csv, split_*/metrics.json)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
