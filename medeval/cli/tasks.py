"""``python -m medeval.tasks describe|split`` (``medeval-tasks``): binary tasks from data sets,
and split manifests; bad input exits with code 2 and one line naming the file, column and row."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from medeval.cli.common import (
    add_source_arguments,
    add_task_arguments,
    common_options,
    execute,
    source_options,
    task_spec,
)
from medeval.cli.options import add_options, given_options

PROG = "python -m medeval.tasks"
#: How a task is split (:func:`medeval.flows.tasks.write_split_manifest`).
SPLIT_FLAGS = {
    "--scheme": "auto: cv5x2 for tabular sources, patient-level otherwise; presplit: the "
    "source's own train/val/test parts",
    "--split-seed": "first split seed",
    "--n-seeds": "patient splits: how many seeds",
}
SEED_HELP = (
    "task seed: the minority down-sampling of the paper's ladder (docs/method.md; default 0; "
    "your own task: only with --downsample)"
)


def _tasks(args: argparse.Namespace) -> tuple[list, Path]:
    from medeval.flows.tasks import build_tasks

    spec = task_spec(args)  # checked before any data are read
    options = source_options(args, args.source)
    seed = 0 if args.seed is None else args.seed
    return build_tasks(
        args.source, args.path, name=args.name, options=options, spec=spec, seed=seed
    )


def cmd_describe(args: argparse.Namespace) -> int:
    tasks, _path = _tasks(args)
    if args.json:
        if args.name == "all":
            payload = [{"dataset": t.name, **t.record()} for t in tasks]
        else:
            payload = tasks[0].record()
        print(json.dumps(payload, indent=2))
    else:
        print("\n\n".join(t.describe_text() for t in tasks))
    return 0


def cmd_split(args: argparse.Namespace) -> int:
    from medeval.datasets import DataError
    from medeval.flows.tasks import check_manifest_out, write_split_manifest

    if args.name == "all":
        raise DataError("split works on one data set at a time; give --name NAME")
    out, record_path = args.out, Path(str(args.out) + ".json")
    check_manifest_out(out, record_path, prog=PROG, data=args.path, force=args.force)
    tasks, path = _tasks(args)
    task = tasks[0].require_kept()
    scheme, splits = write_split_manifest(
        task, out, record_path, path=path, command=[PROG, *args.argv],
        **given_options(args, SPLIT_FLAGS),
    )  # fmt: skip
    wrote = f"wrote {len(splits)} {scheme} splits of {task.name} ({len(task)} rows) to {out}"
    print(out if args.quiet else wrote)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Binary tasks with subconcepts from data sets (describe) and split "
        "manifests (split).",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    describe_out = {"out_help": "(not used by describe)"}
    split_out = {
        "out_help": "manifest CSV path (its record goes beside it as <out>.json), new",
        "force_help": "replace --out if it is a manifest this command wrote (never another file)",
        "out_required": True,
        "out_metavar": "FILE",
    }
    for name, run, about, common in (
        ("describe", cmd_describe, "describe the binary task(s) of a data set", describe_out),
        ("split", cmd_split, "write a split manifest (CSV) and its record (.json)", split_out),
    ):
        parents = [common_options(seed_help=SEED_HELP, **common)]
        cmd = sub.add_parser(name, parents=parents, help=about)
        add_source_arguments(cmd)
        add_task_arguments(cmd)
        cmd.set_defaults(run=run)
    sub.choices["describe"].add_argument(
        "--json", action="store_true", help="machine-readable output"
    )
    from medeval.flows.tasks import write_split_manifest

    add_options(sub.choices["split"], write_split_manifest, SPLIT_FLAGS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return execute(build_parser(), lambda args: args.run(args), argv)
