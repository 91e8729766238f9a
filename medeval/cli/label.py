"""``python -m medeval.label`` (``medeval-label``): which test rows to label next
(:func:`medeval.flows.label.label_next`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from medeval.cli.common import add_paths, execute, output_folder, refuse_repeats, say, tool_parser
from medeval.cli.options import add_options, settings
from medeval.errors import UserError
from medeval.options import LabelSettings

PROG = "python -m medeval.label"


#: The options of :class:`medeval.options.LabelSettings` (``--seed`` is a common option).
LABEL_FLAGS = {
    "--budget": "rows to label in this batch",
    "--confidence": "level of the verdicts the design aims at, over every look (--looks)",
    "--threshold": "predicted label = y_score >= T when there is no y_pred",
    "--focus": "one subconcept's question (is it below its class?): the batch aims at it alone "
    "(a uniform share stays); default: every open verdict, by how near it is to being decided "
    "and its utility",
    "--max-labels": "the labelling budget of the whole loop (labels over every batch): the "
    "batch is cut to what is left, and once it is spent label says so and proposes none",
    "--forecast": "worlds simulated for the labels each open verdict still needs (0: none; "
    "default 10 on up to 20,000 test rows, none above)",
    "--looks": "the batches whose verdicts you will read: the error (1 - confidence) is spent "
    "over them, so that every look's verdicts together hold at --confidence (default: "
    "--max-labels / --budget, else 3; fixed by the first batch and written to its sheet)",
}


def build_parser() -> argparse.ArgumentParser:
    p = tool_parser(
        PROG,
        "Choose the test rows to label next, where a label decides most: the subconcepts whose "
        "verdict is not known or that could be the worst of their class, with a share spread "
        "uniformly. Writes to_label.csv (id, inclusion_probability, batch, class, image, "
        "candidates, an empty subconcept to fill: a subconcept, or unsure) and, for images, "
        "to_label.html (thumbnails, blind unless --show-scores). Fill its column 'subconcept' in "
        "place, then give every batch's to_label.csv, filled, to python -m medeval.evaluate "
        "--labels and to the next python -m medeval.label --labels.",
        named_by="predictions",
        seed_help="seed of the draw (default 0; the batch number is mixed in, so each batch "
        "draws anew and the same inputs propose the same rows)",
    )
    add_paths(
        p,
        {
            "--predictions": (
                "test predictions with id, y_true, y_score or y_pred and every "
                "q_<subconcept> posterior (an image column shows the images)"
            ),
            "--train-sizes": "training subconcept sizes (JSON)",
            "--reference": "held-out reference rows, if any (as evaluate --reference)",
            "--run": (
                "RUN",
                "a training run: the test rows of one of its splits (--split), with the split's "
                "train sizes and reference rows; the sheet shows their images",
            ),
        },
    )
    p.add_argument(
        "--labels",
        type=Path,
        nargs="+",
        metavar="FILE",
        help="the labels given so far: every earlier batch's to_label.csv, filled (several "
        "files: --labels runs/label-1/to_label.csv runs/label-2/to_label.csv)",
    )
    p.add_argument(
        "--split",
        default=None,
        metavar="SEED",
        help="with --run: the split (split_<SEED>; default: the run's first)",
    )
    p.add_argument(
        "--show-scores",
        action="store_true",
        help="show the subconcept model's posteriors beside each image of to_label.html "
        "(default: blind, the candidates without scores)",
    )
    add_options(p, LabelSettings, LABEL_FLAGS)
    return refuse_repeats(p)


def _from_run(args: argparse.Namespace) -> None:
    """``--run``: the files of one split of a training run."""
    from medeval.flows.rerun import split_folders

    if args.predictions or args.train_sizes or args.reference:
        raise UserError(
            "--run takes the split's own files: drop --predictions, --train-sizes and --reference"
        )
    folders = [f for f in split_folders(args.run) if (f / "predictions.csv").is_file()]
    if args.split is not None:
        folders = [f for f in folders if f.name == f"split_{args.split}"]
    if not folders:
        raise UserError(
            f"--run {args.run}: no finished split"
            + (f" split_{args.split}" if args.split is not None else "")
        )
    folder = folders[0]
    args.task = Path(args.run) / "task.json"
    args.predictions, args.train_sizes = folder / "predictions.csv", folder / "train_sizes.json"
    args.reference = folder / "reference.csv" if (folder / "reference.csv").is_file() else None


def _task_file(args: argparse.Namespace) -> Path | None:
    """The training run's ``task.json`` (its class names): the run's, or beside the predictions
    (or one folder up from a ``split_*`` folder)."""
    task = getattr(args, "task", None)
    if task is None:
        folder = Path(args.predictions).parent
        near = [folder] + ([folder.parent] if folder.name.startswith("split_") else [])
        task = next((f / "task.json" for f in near if (f / "task.json").is_file()), None)
    return task if task is not None and Path(task).is_file() else None


def run(args: argparse.Namespace) -> int:
    if args.split is not None and args.run is None:
        raise UserError(
            f"--split {args.split}: a split of a training run, used only with --run; give "
            "--run RUN, or drop --split"
        )
    if args.run is not None:
        _from_run(args)
    elif args.predictions is None or args.train_sizes is None:
        raise UserError("give --predictions and --train-sizes, or --run")
    from medeval.flows.label import label_next
    from medeval.io.atomic import write_files

    inputs = (args.predictions, args.train_sizes, *(args.labels or ()), args.reference)
    target = output_folder(args, "label", args.predictions, inputs)
    batch = label_next(
        args.predictions,
        args.train_sizes,
        labels=args.labels,
        reference=args.reference,
        settings=settings(LabelSettings, args, LABEL_FLAGS),
    )
    if batch.design is None:  # the labelling budget is spent: nothing to write
        say(args, *[f"note: {n}" for n in batch.notes], *batch.lines)
        return 0
    from medeval.report.label_sheet import sheet_file, task_class_names

    files = {"to_label.csv": batch.frame.to_csv(index=False).encode()}
    page, sheet_lines = sheet_file(
        batch.frame,
        class_names=task_class_names(_task_file(args)),
        subconcepts=batch.subconcepts,
        show_scores=args.show_scores,
    )
    if page is not None:
        files["to_label.html"] = page.encode()
    out = target.write(lambda tmp: write_files(tmp, files))
    say(args, *[f"note: {n}" for n in batch.notes], *batch.lines, *sheet_lines)
    given = [] if args.labels is None else [str(p) for p in args.labels]
    say(
        args,
        f"fill the column 'subconcept' of {out / 'to_label.csv'} in place ('unsure' where you "
        "cannot tell), then give every batch's to_label.csv, filled, to python -m "
        "medeval.evaluate ... --labels (and to the next python -m medeval.label ... --labels): "
        "--labels " + " ".join([*given, str(out / "to_label.csv")]),
    )
    print(f"results: {out}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return execute(build_parser(), run, argv)
