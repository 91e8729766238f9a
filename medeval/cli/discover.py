"""``python -m medeval.discover`` (``medeval-discover``): evaluate predictions on data without
subconcept labels (:func:`medeval.flows.discovery.discover_and_evaluate`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from medeval.cli.common import add_paths, execute, output_folder, say, tool_parser
from medeval.cli.options import EVALUATION_FLAGS, add_evaluation_options, add_options, settings

PROG = "python -m medeval.discover"
#: How each class is reduced and clustered, and the subconcept forest
#: (:class:`medeval.options.DiscoverySettings`).
DISCOVERY_FLAGS = {
    "--method": "gmm: k by BIC; kmeans: k by silhouette",
    "--reducer": "pca or umap (needs pip install 'medeval[discovery]')",
    "--components": ("n_components", "reduced dimensions"),
    "--k-max": "largest k per class",
    "--min-cluster-size": "smallest training cluster allowed",
    "--n-estimators": "trees of the subconcept forest",
}
EXAMPLE_FLAGS = {"--examples": ("n_examples", "examples per cluster in the sheet")}


def build_parser() -> argparse.ArgumentParser:
    p = tool_parser(
        PROG,
        "Discover subconcepts in training embeddings (per class: PCA + Gaussian mixture by BIC, "
        "or KMeans by silhouette), then evaluate test predictions with label-free "
        "utility-weighted scores and per-cluster recall.",
        named_by="predictions",
        seed_help="seed of the discovery (reduction, clustering, subconcept forest) and of the "
        "bootstrap (default 0)",
    )
    from medeval.options import DiscoverySettings

    add_paths(
        p,
        {
            "--train": (
                "training embeddings (python -m medeval.embed table: f0000… columns and a 'y' "
                "column, or 'label' with --positive)"
            ),
            "--test": "test embeddings, one row per predictions row, same order",
            "--predictions": "test predictions: y_true, y_score and/or y_pred (CSV or Parquet)",
        },
        required=("--train", "--test", "--predictions"),
    )
    p.add_argument(
        "--positive",
        default=None,
        metavar="LABEL",
        help="the 'label' value of class 1 in the training embeddings",
    )
    add_options(p.add_argument_group("discovery"), DiscoverySettings, DISCOVERY_FLAGS)
    add_evaluation_options(p, owner=DiscoverySettings)
    add_options(p, DiscoverySettings, EXAMPLE_FLAGS)
    return p


def run(args: argparse.Namespace) -> int:
    from medeval.flows.discovery import DiscoverySettings, discover_and_evaluate
    from medeval.io.atomic import write_files
    from medeval.report.tables import scores_table

    inputs = (args.train, args.test, args.predictions)
    target = output_folder(args, "discover", args.predictions, inputs)
    flags = (DISCOVERY_FLAGS, EXAMPLE_FLAGS, EVALUATION_FLAGS)
    chosen = settings(DiscoverySettings, args, *flags, positive=args.positive)
    files, ev = discover_and_evaluate(args.train, args.test, args.predictions, chosen)
    out = target.write(lambda tmp: write_files(tmp, files))
    say(args, scores_table(ev), files["clusters.csv"].decode(), *(f"note: {n}" for n in ev.notes))
    print(f"report: {out / 'report.html'}")
    print(f"results: {out}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return execute(build_parser(), run, argv)
