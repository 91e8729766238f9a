"""``python -m medeval.tasks describe|split``: binary tasks from data sets, and split manifests.

Examples::

    python -m medeval.tasks describe --source keel --path ../shared/data/keel --name all --json
    python -m medeval.tasks describe --source nih --path ../shared/data/nih
    python -m medeval.tasks split --source nih --path ../shared/data/nih --out nih_splits.csv

Bad input exits with code 2 and one line naming the file, column and row.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from medeval.datasets import SOURCES, DataError, LabelledData, dataset_names, load
from medeval.datasets.base import data_root
from medeval.tasks.binary import BinaryTask, make_binary_task

PROG = "python -m medeval.tasks"
TABULAR = ("keel", "pmlb", "csv")


def _add_source_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--source", required=True, choices=SOURCES)
    p.add_argument("--path", help="file or folder (default: $MEDEVAL_DATA/<source>)")
    p.add_argument("--name", help="data set inside a folder of several; 'all' for every one")
    p.add_argument("--seed", type=int, default=0, help="seed of the minority down-sampling")
    p.add_argument("--label-column", help="label column (csv, text, dicom)")
    p.add_argument("--text-column", help="text column (text)")
    p.add_argument("--group-column", help="patient / group id column (csv, text, dicom)")
    p.add_argument("--file-column", help="file column of the DICOM labels CSV")
    p.add_argument("--images", help="image folder when not next to the metadata (nih, ham10000)")
    p.add_argument("--require-images", action="store_true", help="fail if pixels are absent")
    p.add_argument(
        "--verify",
        action="store_true",
        help="decode every image now; the first unreadable file is an error (file and row)",
    )
    p.add_argument(
        "--skip-unreadable",
        action="store_true",
        help="skip unreadable / missing image files and list them in the record",
    )
    p.add_argument(
        "--splits",
        choices=("merge", "respect"),
        default="merge",
        help="pre-made train/val/test folders (folder, medmnist)",
    )
    p.add_argument("--tie", choices=("drop", "first"), default="drop", help="mmhs150k ties")
    p.add_argument(
        "--frame", type=int, help="frame read from multi-frame DICOM files (dicom; else rejected)"
    )


def _options(args: argparse.Namespace) -> dict:
    """Loader keyword options for ``args.source``, only those that source understands."""
    s, out = args.source, {}
    if args.label_column and s in ("csv", "text", "dicom"):
        out["label_column"] = args.label_column
    if args.text_column and s == "text":
        out["text_column"] = args.text_column
    if args.group_column and s in ("csv", "text"):
        out["group_column"] = args.group_column
    if args.group_column and s == "dicom":
        out["patient_column"] = args.group_column
    if args.file_column and s == "dicom":
        out["file_column"] = args.file_column
    if s in ("nih", "ham10000"):
        out["require_images"] = args.require_images
        if args.images:
            out["images"] = args.images
    if s in ("nih", "ham10000", "folder", "dicom"):
        out["skip_unreadable"] = args.skip_unreadable
    if args.verify and s in ("nih", "ham10000", "folder", "dicom"):
        out["verify"] = True
    if s == "folder":
        out["splits"] = args.splits
    if s == "medmnist":
        out["respect_splits"] = args.splits == "respect"
    if s == "mmhs150k":
        out["tie"] = args.tie
    if args.frame is not None and s == "dicom":
        out["frame"] = args.frame
    return out


def _names(args: argparse.Namespace, path: Path) -> list[str | None]:
    if args.name == "all":
        return list(dataset_names(args.source, path))
    return [args.name]


def _task(args: argparse.Namespace, path: Path, name: str | None) -> BinaryTask:
    data: LabelledData = load(args.source, path, name=name, **_options(args))
    return make_binary_task(data, seed=args.seed)


def _record(task: BinaryTask) -> dict:
    out = task.describe()
    if task.data.skipped:  # never silently dropped: listed wherever the task is reported
        out["skipped"] = [
            {"path": s.path, "row": s.row, "reason": s.reason} for s in task.data.skipped
        ]
    return out


def cmd_describe(args: argparse.Namespace, path: Path) -> int:
    names = _names(args, path)
    tasks = [_task(args, path, name) for name in names]
    if args.json:
        if args.name == "all":
            payload = [{"dataset": t.name, **_record(t)} for t in tasks]
        else:
            payload = _record(tasks[0])
        print(json.dumps(payload, indent=2))
    else:
        print("\n\n".join(t.describe_text() for t in tasks))
    return 0


def cmd_split(args: argparse.Namespace, path: Path) -> int:
    from medeval.splits import (
        check_no_group_leak,
        cv_5x2,
        patient_splits,
        presplit_split,
        write_json,
        write_manifest,
    )

    if args.name == "all":
        raise DataError("split works on one data set at a time; give --name NAME")
    task = _task(args, path, args.name).require_kept()
    scheme = args.scheme
    if scheme == "auto":
        scheme = "cv5x2" if args.source in TABULAR else "patient"
    if scheme == "cv5x2":
        splits = cv_5x2(task, args.split_seed)
        seeds = [args.split_seed]
    elif scheme == "presplit":
        splits, seeds = [presplit_split(task)], []
    else:
        seeds = list(range(args.split_seed, args.split_seed + args.n_seeds))
        splits = patient_splits(task, seeds=seeds)
    for split in splits:
        check_no_group_leak(task, split)
    out = write_manifest(args.out, task, splits)
    record = {
        "dataset": task.name,
        "source": task.source,
        "path": str(path),
        "task_seed": task.seed,
        "scheme": scheme,
        "split_seeds": seeds,
        "n_rows": len(task),
        "manifest": str(out),
        "task": _record(task),
        "loader": {k: v for k, v in task.data.meta.items() if _jsonable(v)},
        "command": [PROG, *args.argv],
    }
    write_json(out.with_name(out.name + ".json"), record)
    print(f"wrote {len(splits)} {scheme} splits of {task.name} ({len(task)} rows) to {out}")
    return 0


def _jsonable(value: object) -> bool:
    return isinstance(value, str | int | float | bool | type(None))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("describe", help="describe the binary task(s) of a data set")
    _add_source_args(d)
    d.add_argument("--json", action="store_true", help="machine-readable output")
    s = sub.add_parser("split", help="write a split manifest (CSV) and its record (.json)")
    _add_source_args(s)
    s.add_argument("--out", required=True, help="manifest CSV path")
    s.add_argument(
        "--scheme",
        choices=("auto", "patient", "cv5x2"),
        default="auto",
        help="auto: cv5x2 for tabular sources, patient-level otherwise",
    )
    s.add_argument("--split-seed", type=int, default=0, help="first split seed")
    s.add_argument("--n-seeds", type=int, default=10, help="patient splits: how many seeds")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    path = Path(args.path) if args.path else data_root(args.source)
    try:
        if args.command == "describe":
            return cmd_describe(args, path)
        return cmd_split(args, path)
    except (DataError, FileNotFoundError) as exc:
        message = " ".join(str(exc).split())  # one line, whatever the loader wrote
        print(f"{PROG}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
