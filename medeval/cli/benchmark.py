"""``python -m medeval.benchmark`` (``medeval-benchmark``): the random-forest protocol's grid on
a collection into a resumable results folder, then its analyses (:mod:`medeval.flows.benchmark`;
docs/method.md, "Protocols")."""

from __future__ import annotations

import argparse
import functools
import signal
import sys
import threading
from collections.abc import Sequence

from medeval.cli.common import (
    add_source_arguments,
    add_task_arguments,
    execute,
    source_options,
    task_spec,
    tool_parser,
)
from medeval.cli.options import EVALUATION_FLAGS, add_evaluation_options, add_options, settings
from medeval.errors import UserError
from medeval.options import CORRECTIONS, N_SPLITS, BenchmarkSettings

PROG = "python -m medeval.benchmark"
ANALYSIS = "--out's analysis folder"
#: The grid's options (:class:`medeval.options.BenchmarkSettings`).
GRID_FLAGS = {
    "--jobs": "parallel workers",
    "--backend": "where the grid runs: joblib's loky processes or a Dask cluster",
    "--n-estimators": "trees per forest",
    "--max-splits": (
        "max_splits",
        f"run only the first K of the {N_SPLITS} splits (smoke runs and tests)",
        "K",
    ),
    "--subconcepts": "true: the data set's labels; discovered: clusters found per class on "
    "each training fold (the true subconcepts then only score the result)",
}

EPILOG = f"""\
collections:
  keel, pmlb   the sets under --data (default $MEDEVAL_DATA): keel/*.dat, pmlb/<name>/<name>.tsv.gz
  <folder>     a folder of tables, one data set per file (.csv, .tsv, .parquet,
               optionally .gz); the data set is named by the file name up to its first dot.
               Column "label" = multiclass label, optional column "group" = patient / lesion id
               (then the 5x2 CV keeps groups together), optional column "id" = row name,
               every other column = a numeric feature.
               This is the contract of `python -m medeval.embed` output.

methods: {", ".join(CORRECTIONS)}
  (none, random over-/under-sampling, SMOTE, class_weight="balanced")

The results folder holds one JSON record per data set x method x split
(records/<set>/<method>-<k>.json).
With --save-predictions each record's fold is also written for python -m medeval.evaluate:
predictions/<set>/<method>-<k>/{{predictions.csv, reference.csv, train_sizes.json, fold.json}}
(fold.json holds the evaluate command that reproduces the record's scores).
Each run writes a new results folder unless --out names one: an existing one is continued
with --resume (finished records are kept) or --force (they are recomputed).

--subconcepts discovered: per training fold each class is clustered (PCA + Gaussian mixture,
k by BIC; medeval.discovery); utilities, the subconcept forest and every label-free score use the
clusters only. The true subconcepts score the result: true-weight scores, the test subsets, and
the discovery quality (ARI / NMI per class, in each record and analysis/discovery.csv).
"""


#: The benchmark's words on the shared evaluation options.
EVALUATION_NOTES = {
    "--bootstrap": "per fold and method, on the full test fold; each seeded from --seed, the "
    "data set, the fold and the method",
    "--threshold": "the forests' predicted label and their reference rows' labels",
}


def build_parser() -> argparse.ArgumentParser:
    p = tool_parser(
        PROG,
        "Random-forest benchmark (5x2 CV, corrections, subconcept forest) with utility-weighted "
        "scores and their bootstrap intervals on every fold — BA/F1/AUC unweighted, true-weight "
        "wBA… (oracle), label-free cBA…, rBA… (recommended: cBA… rectified with the fold's "
        "reference rows, its training part scored out of bag, cross-fitted under ros and "
        "weight) and the paper's pBA… — then the analyses (RQ1–RQ4).",
        epilog=EPILOG,
        out_help="results folder, new or empty (default: a new one, $MEDEVAL_RUNS/benchmark-"
        "<collection>-<time>, $MEDEVAL_RUNS = runs); an existing one needs --resume or --force",
        force_help="continue the results folder --out, recomputing its records (a folder made "
        "with other settings: them too)",
        seed_help="base seed of the protocol: task down-sampling, 5x2 splits and forests "
        "(default 0)",
    )
    p.add_argument("--collection", required=True, help="keel, pmlb or a folder of tables")
    p.add_argument(
        "--data",
        default=None,
        help="folder holding keel/ and pmlb/ (default $MEDEVAL_DATA or ../shared/data)",
    )
    p.add_argument("--datasets", default=None, help="comma-separated data-set names (default all)")
    p.add_argument("--methods", default=",".join(CORRECTIONS), help="comma-separated corrections")
    add_options(p, BenchmarkSettings, GRID_FLAGS)
    p.add_argument(
        "--scheduler",
        default=None,
        help="Dask scheduler address (with --backend dask; "
        "default: a local cluster of --jobs workers)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue the results folder --out (finished records are kept)",
    )
    p.add_argument(
        "--save-predictions",
        action="store_true",
        help="also write each record's test predictions, subconcept posteriors, reference "
        "rows (out of bag; cross-fitted under ros and weight) and train sizes "
        "(predictions/<set>/<method>-<k>/), in the format of python -m medeval.evaluate; "
        "resumable like the records",
    )
    p.add_argument("--no-analyze", action="store_true", help="skip the analyses at the end")
    add_evaluation_options(p, owner=BenchmarkSettings, notes=EVALUATION_NOTES)
    add_source_arguments(p, sources=("keel", "pmlb", "csv"), with_source=False)
    add_task_arguments(p)  # over a task recorded with an embedded table
    return p


def _names(text: str | None) -> tuple[str, ...] | None:
    return None if text is None else tuple(n.strip() for n in text.split(",") if n.strip())


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    source = args.collection if args.collection in ("keel", "pmlb") else "csv"
    options = source_options(args, source)
    spec = task_spec(args)  # the user's task for every data set; default the paper's ladder
    name = args.collection if source != "csv" else Path(args.collection).name
    from medeval.io.outdir import OutputFolder, check_in_place, default_out

    if args.resume and args.out is None:
        raise UserError("--resume continues the results folder given with --out; give --out")
    out = args.out or default_out(f"benchmark-{name}")
    hint = "continue it with --resume (or --force: recompute its records), or choose a new folder"
    check_in_place(out, tool="benchmark", resume=args.resume or args.force, hint=hint)
    if not args.no_analyze:  # before the work, not after it
        OutputFolder(out / "analysis", "analyze", force=True, what=ANALYSIS).check()
    from medeval.flows.benchmark import run_benchmark

    chosen = settings(
        BenchmarkSettings,
        args,
        GRID_FLAGS,
        EVALUATION_FLAGS,
        collection=args.collection,
        out=out,
        data=args.data,
        datasets=_names(args.datasets),
        methods=_names(args.methods) or (),
        scheduler=args.scheduler,
        force=args.force,
        loader_options=options,
        save_predictions=args.save_predictions,
        task=None if spec is None else spec.to_dict(),
    )
    log = functools.partial(print, file=sys.stderr)
    done = run_benchmark(chosen, progress=not args.quiet, log=log)
    for r in done.errors:
        print(f"error: {r.message}", file=sys.stderr)
    if done.rejected:
        print(
            'rejected (docs/method.md, "Binary tasks from multiclass data", step 4): '
            + ", ".join(done.rejected),
            file=sys.stderr,
        )
    log(f"done in {done.wall_s:.1f} s; records in {out / 'records'}")
    if not args.no_analyze:
        from medeval.flows.analyze import analyze

        line = analyze(out, out / "analysis", what=ANALYSIS, force=True)
        log(f"analyses: {line}")
        if not args.quiet:
            print((out / "analysis" / "scores.md").read_text())
        print(f"report: {out / 'analysis' / 'report.html'}")
    return 1 if done.errors else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    if threading.current_thread() is not threading.main_thread():
        return execute(parser, run, argv)
    # SystemExit unwinds through joblib / Dask, which then stop their workers; finished records
    # are already on disk, the units in flight are lost and rerun next time.
    previous = signal.signal(signal.SIGTERM, lambda signum, _frame: sys.exit(128 + signum))
    try:
        return execute(parser, run, argv)
    finally:
        signal.signal(signal.SIGTERM, previous)
