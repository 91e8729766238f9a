"""``python -m medeval.evaluate`` (``medeval-evaluate``): the scores with intervals of a predictions
file (:func:`medeval.flows.evaluate.evaluate_file`, rendered by
:func:`medeval.report.outputs.output_files`), or of a run folder (:mod:`medeval.flows.rerun`)."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

from medeval.cli.common import (
    DEVICE_HELP,
    add_paths,
    execute,
    output_folder,
    refuse_repeats,
    say,
    tool_parser,
)
from medeval.cli.options import EVALUATION_FLAGS, add_evaluation_options, settings
from medeval.errors import UserError

PROG = "python -m medeval.evaluate"


def build_parser() -> argparse.ArgumentParser:
    p = tool_parser(
        PROG,
        "Balanced accuracy, F1 and ROC AUC — unweighted (BA, F1, AUC), with true "
        "utility weights (wBA…, an oracle: needs test subconcept labels), label-free with "
        "class-conditional predicted weights (cBA, cF1, cAUC: estimates of wBA…, recommended "
        "without reference rows, from q_<subconcept> posteriors and the known test classes) "
        "and with the paper's predicted weights (pBA…, biased upward, kept for reproduction) — "
        "with bootstrap intervals and per-subconcept recall (true and label-free). With "
        "--reference: the rectified rBA, rF1, rAUC, recommended then (rM = cM(test) − "
        "(cM(R) − wM(R)): the class-conditional score minus its error measured on the "
        "reference rows R).",
        named_by="predictions",
        seed_help="bootstrap seed (default 0; with --run: the run's evaluation.seed)",
        device_help=DEVICE_HELP,
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "--predictions",
        type=Path,
        metavar="FILE",
        help="CSV or Parquet: y_true, y_score and/or y_pred, optional subconcept and "
        "q_<subconcept> posterior columns",
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
        help="re-evaluate every split of a finished python -m medeval.train run folder from its "
        "saved predictions and rewrite its summary (bootstrap settings from its config unless "
        "--bootstrap/--seed are given)",
    )
    add_paths(
        p,
        {
            "--train-sizes": 'JSON {"<subconcept>": {"class": 0|1, "n": <training count>}, ...}',
            "--reference": (
                "reference rows R (CSV/Parquet): the predictions columns plus the true "
                "'subconcept' and every q_<subconcept> column, e.g. a labelled validation set. "
                "They rectify the label-free scores: rM = cM(test) − (cM(R) − wM(R)) for M = BA, "
                "F1, AUC, with a joint bootstrap of test and reference rows, recommended over "
                "cM. R must come from the same classifier and subconcept model and the same "
                "population as the test rows, and must not have been used to fit either. "
                "Checked: columns, classes, subconcept names (else exit 2); a subconcept without "
                "reference rows is accepted with a note (its rectified recall then rests on "
                "--labels alone, or is not known). Also measure the subconcept model within each "
                "class when the test set has no subconcept labels. Needs --train-sizes"
            ),
        },
    )
    p.add_argument(
        "--labels",
        type=Path,
        nargs="+",
        metavar="FILE",
        help="test rows whose subconcept a person gave: every batch's to_label.csv, filled, of "
        "python -m medeval.label (id, subconcept, inclusion_probability, batch), one file or "
        "several (--labels runs/label-1/to_label.csv runs/label-2/to_label.csv; their batches "
        "are concatenated). They count for the test rows themselves, weighted by the inverse of "
        "the probability each was chosen with: the rectified recall of every subconcept, its "
        "verdict and rBA. A file of id and subconcept alone is taken as a simple random sample "
        "of the test rows. Needs --train-sizes and an id column in --predictions",
    )
    add_evaluation_options(p, notes={"--threshold": "with --run: the run's evaluation.threshold"})
    return refuse_repeats(p)


def run_folder(args: argparse.Namespace) -> int:
    """``--run DIR``: re-evaluate each split of a training run and its summary."""
    from medeval.flows.rerun import RerunSettings, evaluate_run
    from medeval.report.summary import interval_lines, summary_table

    device = args.device or "cpu"
    settings = RerunSettings(n_bootstrap=args.bootstrap, seed=args.seed, device=device)
    summary = evaluate_run(args.run, settings, labels=args.labels)
    notes = (f"note: {note}" for note in summary["notes"])
    say(args, summary_table(summary), "", *interval_lines(summary), *notes)
    print(f"results: {args.run}")
    return 0


#: Options ``--run`` does not take: each split is evaluated with its own files and the run's
#: ``evaluation`` config (only ``--bootstrap``, ``--seed`` and ``--device`` change it).
NOT_WITH_RUN = {
    "--out": "--run rewrites the run folder itself",
    "--force": "--run rewrites the run folder itself",
    "--train-sizes": "each split is evaluated with its own train_sizes.json",
    "--reference": "each split is evaluated with its own reference.csv",
    "--threshold": "each split is evaluated with the run's evaluation.threshold",
    "--confidence": "each split is evaluated with the run's evaluation.confidence",
    "--stratify": "each split is evaluated with the run's evaluation.stratify",
}


def run(args: argparse.Namespace) -> int:
    """Evaluate one predictions file into ``--out`` (checked first, replaced as a whole)."""
    if args.run is not None:
        for option, why in NOT_WITH_RUN.items():
            if getattr(args, option[2:].replace("-", "_")) not in (None, False):
                raise UserError(f"{option} is not used with --run ({why}); drop it")
        return run_folder(args)
    if args.example:
        from medeval.io.predictions import example_paths

        args.predictions, default_sizes = example_paths()
        args.train_sizes = args.train_sizes or default_sizes
    inputs = (args.predictions, args.train_sizes, args.reference, *(args.labels or ()))
    target = output_folder(args, "evaluate", args.predictions, inputs)
    from medeval._memory import frozen_imports, return_large_blocks

    # torch, pandas and scipy imported without the collector's passes, and kept out of them;
    # matplotlib is imported only after the bootstrap, where the run's memory peaks
    with frozen_imports():
        from medeval.evaluation import NO_REFERENCE_NOTE, EvaluateSettings
        from medeval.evaluation.verdict_history import REOPENED
        from medeval.evaluation.worst_subconcept import worst_sentences
        from medeval.flows.evaluate import evaluate_file
        from medeval.io.atomic import write_files
        from medeval.metrics.bootstrap import ReplicateBudgetError, format_bytes
        from medeval.report.outputs import output_files
        from medeval.report.tables import scores_table, subconcept_table

    return_large_blocks()  # freed column-sized arrays go back to the system between stages
    fixed = {"device": args.device or "cpu", "progress": not args.quiet}
    chosen = settings(EvaluateSettings, args, EVALUATION_FLAGS, **fixed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            table, ev = evaluate_file(
                args.predictions, args.train_sizes, reference=args.reference, labels=args.labels,
                settings=chosen,
            )  # fmt: skip
        except ReplicateBudgetError as err:  # more replicates than the memory holds
            raise UserError(
                f"--bootstrap {err.n}: the replicates' scores need {err.needs()}, more than the "
                f"bootstrap may take ({format_bytes(err.budget)}, from the free memory); use "
                f"{err.advice('fewer replicates', '--bootstrap {} or fewer')}"
            ) from None
    source = (
        f"predictions: {table.path}\ntrain sizes: {args.train_sizes or '(none)'}\n"
        + (f"reference: {args.reference}\n" if args.reference else "")
        + f"threshold: {chosen.threshold}\nbootstrap: {chosen.n_bootstrap} (seed {chosen.seed})"
    )
    if args.threshold is not None and table.y_pred is not None:
        print(
            f"warning: --threshold {args.threshold:g} is not used: {table.path} has a y_pred "
            "column, whose labels are taken as they are (drop y_pred to threshold y_score)",
            file=sys.stderr,
        )
    for w in caught:  # input warnings are already the first notes
        if str(w.message) not in ev.notes:
            print(f"warning: {w.message}", file=sys.stderr)
    with frozen_imports():  # ... and out of the collector's passes while the figure is drawn
        from medeval.report import figures  # noqa: F401  (matplotlib, past the memory peak)
    files = output_files(ev, title=table.path.name, source=source)
    out = target.write(lambda tmp: write_files(tmp, files))
    # the paragraph on missing reference rows closes the output, after the tables it explains
    notes = [n for n in ev.notes if n != NO_REFERENCE_NOTE]
    reopen = [n for n in notes if n.startswith(REOPENED)]  # beside the verdicts they explain
    notes = [n for n in notes if n not in reopen]
    lines = [f"note: {note}" for note in notes[:1]]
    lines += [*worst_sentences(ev.worst_subconcepts), *reopen, "", scores_table(ev)]
    lines += ["", subconcept_table(ev)]
    lines += [f"note: {note}" for note in notes[1:]]
    if NO_REFERENCE_NOTE in ev.notes:
        lines += ["", f"note: {NO_REFERENCE_NOTE}"]
    if ev.per_subconcept.empty:
        lines.append("note: no figure: it needs the true test subconcepts (column 'subconcept')")
    lines += ["", "wrote " + ", ".join(str(out / name) for name in files)]
    say(args, *lines)
    print(f"report: {out / 'report.html'}")
    print(f"results: {out}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return execute(build_parser(), run, argv)
