"""``python -m medeval.subconcepts`` (``medeval-subconcepts``): evaluate your own classifier
from its training, reference and test rows (:func:`medeval.flows.own_model.fit_and_evaluate`)."""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from collections.abc import Sequence

from medeval.cli.common import DEVICE_HELP, add_paths, execute, output_folder, say, tool_parser
from medeval.cli.options import EVALUATION_FLAGS, add_evaluation_options, add_options, settings
from medeval.errors import UserError

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
        required=("--train", "--test"),
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
    target = output_folder(args, "subconcepts", args.test, inputs)
    features = tuple(args.features) if args.features else None
    fixed = {"features": features, "discover": args.discover, "device": args.device or "cpu"}
    chosen = settings(SubconceptSettings, args, MODEL_FLAGS, EVALUATION_FLAGS, **fixed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fit_and_evaluate(
            args.train,
            args.test,
            args.reference,
            predictions=args.predictions,
            reference_predictions=args.reference_predictions,
            train_labels=args.train_labels,
            settings=chosen,
        )
    for w in caught:  # as evaluate: one line each; input warnings are the first notes already
        if not any(str(w.message) in n for n in result.evaluation.notes):
            print(f"warning: {w.message}", file=sys.stderr)
    out = target.write(lambda tmp: write_files(tmp, result.files))
    ev = result.evaluation
    say(
        args,
        *worst_sentences(ev.worst_subconcepts),
        scores_table(ev),
        *_recommended(ev),
        *(f"note: {n}" for n in ev.notes),
    )
    print(f"report: {out / 'report.html'}")
    print(f"results: {out}")
    return 0


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
