"""``python -m medeval.subconcepts`` (``medeval-subconcepts``): evaluate your own classifier
from its training, reference and test rows (:func:`medeval.flows.own_model.fit_and_evaluate`)."""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from medeval.cli.common import DEVICE_HELP, add_paths, execute, output_folder, say, tool_parser
from medeval.cli.options import EVALUATION_FLAGS, add_evaluation_options, add_options, settings
from medeval.errors import UserError

if TYPE_CHECKING:
    from medeval.examples.vehicle import OwnModelData

PROG = "python -m medeval.subconcepts"
#: The subconcept model's options (:class:`medeval.options.SubconceptSettings`).
MODEL_FLAGS = {
    "--subconcept-model": "auto: logistic on an image embedding table of python -m "
    "medeval.embed with pretrained weights (measured better there: docs/own_model.md), else "
    "forest; forest: the random forest; logistic: a multinomial logistic regression, its "
    "strength by cross-validated log loss",
    "--n-estimators": "trees of the subconcept forest",
    "--method": "with --discover: gmm (k by BIC) or kmeans (k by silhouette)",
    "--k-max": "with --discover: largest k per class",
}


def build_parser() -> argparse.ArgumentParser:
    p = tool_parser(
        PROG,
        "Fit a subconcept model on your classifier's training rows, add its posteriors to your "
        "test (and reference) predictions and evaluate them: BA, F1, AUC, their "
        "utility-weighted and label-free forms, rectified (rBA, rF1, rAUC, recommended) when "
        "reference rows are given.",
        named_by="test",
        seed_help="seed of the subconcept forest, the discovery and the bootstrap (default 0)",
        device_help=DEVICE_HELP,
    )
    from medeval.options import SubconceptSettings

    add_paths(
        p,
        {
            "--train": (
                "TRAIN",
                "training rows: feature columns, y_true and subconcept (CSV or Parquet)",
            ),
            "--test": (
                "TEST",
                "test rows: feature columns, y_true, y_score and/or y_pred (+ subconcept when "
                "known), one row per test prediction",
            ),
            "--reference": (
                "REF",
                "held-out labelled rows scored by the same classifier (e.g. the validation set): "
                "feature columns, y_true, y_score and/or y_pred, subconcept; gives the rectified "
                "scores",
            ),
            "--predictions": (
                "the test predictions columns in a file of their own, joined to TEST by 'id' "
                "when both have one, else by a 'path' column that ends with TEST's 'id' (the image "
                "names python -m medeval.embed writes), else row by row"
            ),
            "--train-labels": (
                "TRAIN's y_true and subconcept in a file of their own (e.g. id, y_true, "
                "subconcept), joined to TRAIN like --predictions"
            ),
            "--reference-predictions": "the same for REF",
        },
    )
    example = p.add_argument_group("example")
    example.add_argument(
        "--example",
        action="store_true",
        help="run the vehicle example instead of --train/--test/--reference: KEEL vehicle, a "
        "logistic regression, 238 TRAIN, 179 REF and 180 TEST rows; --out then also holds the "
        "inputs train.csv, test.csv, validation.csv (REF) and test_truth.csv (id, subconcept: "
        "the test rows' true subconcepts, never read by the command, to fill the label sheets of "
        "a trial loop)",
    )
    example.add_argument(
        "--data",
        type=Path,
        metavar="DIR",
        help="with --example: the folder holding keel/vehicle.dat (default $MEDEVAL_DATA, else "
        "../shared/data)",
    )
    p.add_argument(
        "--features",
        nargs="+",
        metavar="COLUMN",
        help="the feature columns (default: every column f0000…, as python -m medeval.embed "
        "writes them)",
    )
    model = p.add_argument_group("subconcept model")
    add_options(model, SubconceptSettings, MODEL_FLAGS)
    model.add_argument(
        "--discover",
        action="store_true",
        help="TRAIN has no subconcept column: discover subconcepts per class as python -m "
        "medeval.discover does (PCA + Gaussian mixture by BIC)",
    )
    add_evaluation_options(p, owner=SubconceptSettings)
    return p


def run(args: argparse.Namespace) -> int:
    from medeval.evaluation.worst_subconcept import worst_sentences
    from medeval.flows.own_model import SubconceptSettings, fit_and_evaluate
    from medeval.io.atomic import write_files
    from medeval.report.tables import scores_table

    for option, value in (("--method", args.method), ("--k-max", args.k_max)):
        if value is not None and not args.discover:
            raise UserError(f"{option} sets the discovery: it needs --discover")
    inputs = (args.train, args.test, args.reference, args.predictions)
    inputs += (args.reference_predictions, args.train_labels)
    example = _example(args, inputs)
    named_by = Path("example") if example is not None else args.test
    target = output_folder(args, "subconcepts", named_by, (*inputs, args.data))
    features = tuple(args.features) if args.features else None
    fixed = {"features": features, "discover": args.discover, "device": args.device or "cpu"}
    chosen = settings(SubconceptSettings, args, MODEL_FLAGS, EVALUATION_FLAGS, **fixed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fit_and_evaluate(
            args.train if example is None else example.train,
            args.test if example is None else example.test,
            args.reference if example is None else example.reference,
            predictions=args.predictions,
            reference_predictions=args.reference_predictions,
            train_labels=args.train_labels,
            settings=chosen,
        )
    for w in caught:  # as evaluate: one line each; input warnings are the first notes already
        if not any(str(w.message) in n for n in result.evaluation.notes):
            print(f"warning: {w.message}", file=sys.stderr)
    files = result.files if example is None else {**result.files, **example.files()}
    out = target.write(lambda tmp: write_files(tmp, files))
    ev = result.evaluation
    say(
        args,
        *worst_sentences(ev.worst_subconcepts),
        scores_table(ev),
        *_recommended(ev),
        *(f"note: {n}" for n in ev.notes),
    )
    if example is not None:
        say(
            args,
            f"example: KEEL vehicle, a logistic regression; the inputs are in {out} as "
            "train.csv, test.csv and validation.csv (REF), and test_truth.csv holds the test "
            "rows' true subconcepts (fill the label sheets from it to try the label loop)",
        )
    print(f"report: {out / 'report.html'}")
    print(f"results: {out}")
    return 0


def _example(args: argparse.Namespace, inputs: tuple) -> OwnModelData | None:
    """``--example``: the vehicle tables (:mod:`medeval.examples.vehicle`), else ``None``
    after checking that --train and --test are given."""
    if not args.example:
        if args.data is not None:
            raise UserError("--data is the example's data folder: it needs --example")
        if args.train is None or args.test is None:
            raise UserError(
                "give --train TRAIN and --test TEST (and --reference REF), or --example"
            )
        return None
    given = [
        flag
        for flag, value in zip(
            ("--train", "--test", "--reference", "--predictions", "--reference-predictions",
             "--train-labels"),
            inputs,
            strict=True,
        )
        if value is not None
    ]  # fmt: skip
    if args.discover or args.features:
        given.append("--discover" if args.discover else "--features")
    if given:
        raise UserError(
            f"--example brings its own tables: drop {', '.join(given)} (or drop --example)"
        )
    from medeval.examples.vehicle import vehicle

    return vehicle(args.data)


def _recommended(ev) -> list[str]:
    """One line per family: the score to read, its value and interval."""
    lines = []
    for family, name in ev.recommended.items():
        lo, hi = ev.intervals.get(name, (float("nan"), float("nan")))
        why = ev.unavailable.get(name, "")
        interval = "" if math.isnan(lo) else f" [{lo:.3f}, {hi:.3f}]"  # none with --bootstrap 0
        value = f"{ev.scores[name]:.3f}{interval}" if not why else f"— ({why})"
        lines.append(f"recommended for {family}: {name} = {value}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    return execute(build_parser(), run, argv)
