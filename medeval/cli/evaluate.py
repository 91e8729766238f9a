"""``python -m medeval.evaluate``: the nine scores with intervals from a predictions file.

Example::

    python -m medeval.evaluate --predictions preds.csv --train-sizes train_sizes.json
    python -m medeval.evaluate --example          # the bundled example predictions
    python -m medeval.evaluate --run runs/synthetic-20260101-120000   # re-evaluate a run
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import warnings
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from medeval import atomic
from medeval.evaluation import Evaluation, evaluate_predictions
from medeval.predictions import InputError, PredictionTable, read_predictions, read_train_sizes

EXIT_BAD_INPUT = 2


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m medeval.evaluate",
        description="Balanced accuracy, F1 and ROC AUC — unweighted, with true utility weights "
        "(wBA…) and with predicted utility weights (pBA…) — with bootstrap intervals.",
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "--predictions",
        type=Path,
        metavar="FILE",
        help="CSV or Parquet: y_true, y_score and/or y_pred, optional subconcept "
        "and q_<subconcept> posterior columns",
    )
    src.add_argument(
        "--example",
        action="store_true",
        help="evaluate the bundled example predictions (with their train sizes)",
    )
    src.add_argument(
        "--run",
        type=Path,
        metavar="DIR",
        help="re-evaluate every split of a finished python -m medeval.train run folder from "
        "its saved predictions and rewrite its summary (bootstrap settings from its config "
        "unless --bootstrap/--seed are given)",
    )
    p.add_argument(
        "--train-sizes",
        type=Path,
        metavar="FILE",
        help='JSON {"<subconcept>": {"class": 0|1, "n": <training count>}, ...}',
    )
    p.add_argument(
        "--out",
        type=Path,
        default=Path("medeval-eval"),
        metavar="DIR",
        help="output folder (default: ./medeval-eval)",
    )
    p.add_argument(
        "--threshold",
        type=float,
        default=0.5,
        metavar="T",
        help="predicted label = y_score >= T when there is no y_pred (default 0.5)",
    )
    p.add_argument(
        "--bootstrap",
        type=int,
        default=None,
        metavar="B",
        help="bootstrap replicates for the intervals (0 = none; default 1000)",
    )
    p.add_argument("--confidence", type=float, default=0.95, help="interval level (0.95)")
    p.add_argument(
        "--stratify",
        choices=("class", "subconcept", "none"),
        default="class",
        help="resample within these strata (default: class)",
    )
    p.add_argument("--seed", type=int, default=None, help="bootstrap seed (default 0)")
    p.add_argument("--device", default="cpu", help="device for the bootstrap (cpu, cuda, ...)")
    p.add_argument("--quiet", action="store_true", help="print only the output folder")
    return p


def example_paths() -> tuple[Path, Path]:
    """The bundled example predictions and train sizes."""
    base = resources.files("medeval") / "examples"
    return Path(str(base / "predictions.csv")), Path(str(base / "train_sizes.json"))


def output_files(ev: Evaluation, title: str, source: str = "") -> dict[str, bytes]:
    """Everything the command writes, prepared in memory before anything touches the disk:
    metrics.json, metrics.csv, per_subconcept.csv, subconcepts.png and report.html."""
    from medeval.report.figures import figure_png, subconcept_figure
    from medeval.report.html import Section, evaluation_sections, render

    files = {"metrics.json": (json.dumps(ev.to_dict(), indent=2, allow_nan=False) + "\n").encode()}
    buf = io.StringIO()
    ev.subsets.to_csv(buf, index=False)
    files["metrics.csv"] = buf.getvalue().encode()
    if not ev.per_subconcept.empty:
        buf = io.StringIO()
        ev.per_subconcept.to_csv(buf, index=False)
        files["per_subconcept.csv"] = buf.getvalue().encode()
        fig = subconcept_figure(
            ev.per_subconcept, ev.scores, title=f"{title}: subconcept prevalence and recall"
        )
        files["subconcepts.png"] = figure_png(fig)
    sections = evaluation_sections(ev, figure_png=files.get("subconcepts.png"))
    if source:
        sections.append(Section("Inputs").pre(source))
    files["report.html"] = render(f"medeval evaluation: {title}", sections).encode()
    return files


def run_folder(args: argparse.Namespace) -> int:
    """``--run DIR``: re-evaluate each split of a training run and its summary."""
    from medeval.training.summary import evaluate_run, summary_table

    summary = evaluate_run(args.run, n_bootstrap=args.bootstrap, seed=args.seed, device=args.device)
    if not args.quiet:
        print(summary_table(summary))
        for note in summary["notes"]:
            print(f"note: {note}")
    print(f"results: {args.run}")
    return 0


def evaluate_file(
    predictions: str | Path, train_sizes: str | Path | None = None, **options: Any
) -> tuple[PredictionTable, Evaluation]:
    """Read a predictions file (and its train sizes) and evaluate it.

    ``options`` go to :func:`~medeval.evaluation.evaluate_predictions`. Undefined scores are
    reported in ``Evaluation.notes`` rather than as warnings.
    """
    u = read_train_sizes(train_sizes) if train_sizes else None
    table = read_predictions(predictions, u)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = evaluate_predictions(
            table.y_true,
            y_score=table.y_score,
            y_pred=table.y_pred,
            subconcept=table.subconcept,
            posteriors=table.posteriors,
            train_sizes=u,
            **options,
        )
    return table, ev


def run(args: argparse.Namespace) -> int:
    from medeval.report.tables import scores_table, subconcept_table

    # None = not given: --run takes these from the run's config instead.
    args.bootstrap = 1000 if args.bootstrap is None else args.bootstrap
    args.seed = 0 if args.seed is None else args.seed
    if args.example:
        args.predictions, default_sizes = example_paths()
        args.train_sizes = args.train_sizes or default_sizes
    table, ev = evaluate_file(
        args.predictions,
        args.train_sizes,
        threshold=args.threshold,
        n_bootstrap=args.bootstrap,
        confidence=args.confidence,
        stratify=args.stratify,
        seed=args.seed,
        device=args.device,
        progress=not args.quiet,
    )
    source = f"predictions: {table.path}\ntrain sizes: {args.train_sizes or '(none)'}\n" + (
        f"threshold: {args.threshold}\nbootstrap: {args.bootstrap} (seed {args.seed})"
    )
    files = output_files(ev, title=table.path.name, source=source)
    written = atomic.write_files(args.out, files)
    if not args.quiet:
        print(scores_table(ev))
        print()
        print(subconcept_table(ev))
        for note in ev.notes:
            print(f"note: {note}")
        if ev.per_subconcept.empty:
            print("note: no figure: it needs the true test subconcepts (column 'subconcept')")
        print()
        print("wrote " + ", ".join(str(p) for p in written))
    print(f"report: {args.out / 'report.html'}")
    print(f"results: {args.out}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.run is not None:
            return run_folder(args)
        return run(args)
    except (InputError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ValueError as err:  # inconsistent inputs found while evaluating
        print(f"error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
