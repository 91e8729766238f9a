"""``python -m medeval.discover`` (``medeval-discover``): evaluate predictions on data without
subconcept labels.

Discovers subconcepts per class in the training embeddings, adds their posteriors to the test
predictions and evaluates them like ``python -m medeval.evaluate`` (label-free scores,
per-cluster recall, a sheet of example instances per cluster). Example::

    python -m medeval.embed --source nih --path /data/nih --out emb --no-benchmark
    python -m medeval.discover --train emb/train.parquet --test emb/test.parquet \\
        --predictions preds.csv --positive Effusion --out discovered

The library side is :func:`medeval.flows.discovery.discover_and_evaluate`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from medeval.cli.common import (
    add_evaluation_options,
    common_options,
    evaluation_options,
    execute,
    positive_int,
    run_command,
    say,
)

PROG = "python -m medeval.discover"


def build_parser() -> argparse.ArgumentParser:
    common = common_options(
        out_help="output folder, new or empty (default: a new one, $MEDEVAL_RUNS/discover-"
        "<predictions file name>-<time>, $MEDEVAL_RUNS = runs)",
        force_help="replace --out if it holds an earlier output of medeval (whole, once the "
        "run is complete); never a folder holding other files",
        seed_help="seed of the discovery (reduction, clustering, subconcept forest) and of the "
        "bootstrap (default 0)",
    )
    p = argparse.ArgumentParser(
        prog=PROG,
        parents=[common],
        description="Discover subconcepts in training embeddings (per class: PCA + Gaussian "
        "mixture by BIC, or KMeans by silhouette), then evaluate test predictions with "
        "label-free utility-weighted scores and per-cluster recall.",
    )
    _input_arguments(p)
    _discovery_arguments(p.add_argument_group("discovery"))
    add_evaluation_options(p)
    _example_arguments(p)
    return p


def _input_arguments(p: argparse.ArgumentParser) -> None:
    """The two embedding tables, the predictions and the label of class 1."""
    p.add_argument(
        "--train",
        type=Path,
        required=True,
        metavar="FILE",
        help="training embeddings (python -m medeval.embed table: f0000… columns and a 'y' "
        "column, or 'label' with --positive)",
    )
    p.add_argument(
        "--test",
        type=Path,
        required=True,
        metavar="FILE",
        help="test embeddings, one row per predictions row, same order",
    )
    p.add_argument(
        "--predictions",
        type=Path,
        required=True,
        metavar="FILE",
        help="test predictions: y_true, y_score and/or y_pred (CSV or Parquet)",
    )
    p.add_argument(
        "--positive",
        default=None,
        metavar="LABEL",
        help="the 'label' value of class 1 in the training embeddings",
    )


def _discovery_arguments(g: argparse._ArgumentGroup) -> None:
    """How each class is reduced and clustered, and the subconcept forest."""
    g.add_argument(
        "--method",
        choices=("gmm", "kmeans"),
        default="gmm",
        help="gmm: k by BIC (default); kmeans: k by silhouette",
    )
    g.add_argument(
        "--reducer",
        choices=("pca", "umap"),
        default="pca",
        help="pca (default) or umap (needs pip install 'medeval[discovery]')",
    )
    g.add_argument(
        "--components", type=positive_int, default=8, help="reduced dimensions (default 8)"
    )
    g.add_argument("--k-max", type=positive_int, default=8, help="largest k per class (default 8)")
    g.add_argument(
        "--min-cluster-size",
        type=positive_int,
        default=5,
        help="smallest training cluster allowed (default 5)",
    )
    g.add_argument(
        "--n-estimators",
        type=positive_int,
        default=100,
        help="trees of the subconcept forest (default 100)",
    )


def _example_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--examples", type=positive_int, default=6, help="examples per cluster in the sheet"
    )


def run(args: argparse.Namespace) -> int:
    from medeval.flows.discovery import DiscoverySettings, discover_and_evaluate
    from medeval.io.atomic import write_files
    from medeval.io.outdir import OutputFolder, default_out

    name = args.predictions.name.split(".")[0]
    target = OutputFolder(
        args.out or default_out(f"discover-{name}"), "discover", force=args.force,
        inputs=(args.train, args.test, args.predictions), fresh=args.out is None,
    ).check()  # fmt: skip
    seed = 0 if args.seed is None else args.seed
    settings = DiscoverySettings(
        positive=args.positive,
        method=args.method,
        reducer=args.reducer,
        n_components=args.components,
        k_max=args.k_max,
        min_cluster_size=args.min_cluster_size,
        n_estimators=args.n_estimators,
        n_examples=args.examples,
        **evaluation_options(args),
        seed=seed,
    )
    files, ev = discover_and_evaluate(args.train, args.test, args.predictions, settings)
    out = target.write(lambda tmp: write_files(tmp, files))
    if not args.quiet:
        from medeval.report.tables import scores_table

        say(args, scores_table(ev), files["clusters.csv"].decode())
        say(args, *(f"note: {n}" for n in ev.notes))
    print(f"report: {out / 'report.html'}")
    print(f"results: {out}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return execute(build_parser(), run, argv)


if __name__ == "__main__":
    run_command(main)
