"""``python -m medeval.discover``: evaluate predictions on data without subconcept labels.

Discovers subconcepts per class in the training embeddings, adds their posteriors to the test
predictions and evaluates them like ``python -m medeval.evaluate`` (label-free scores,
per-cluster recall, a sheet of example instances per cluster). Example::

    python -m medeval.embed --source nih --path /data/nih --out emb --no-benchmark
    python -m medeval.discover --train emb/train.parquet --test emb/test.parquet \\
        --predictions preds.csv --positive Effusion --out discovered

The logic lives in :mod:`medeval.discovery_flow`; this module only parses and writes.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

EXIT_BAD_INPUT = 2


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m medeval.discover",
        description="Discover subconcepts in training embeddings (per class: PCA + Gaussian "
        "mixture by BIC, or KMeans by silhouette), then evaluate test predictions with "
        "label-free utility-weighted scores and per-cluster recall.",
    )
    p.add_argument(
        "--train",
        type=Path,
        required=True,
        metavar="FILE",
        help="training embeddings (python -m medeval.embed table: f0000… columns and "
        "a 'y' column, or 'label' with --positive)",
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
    p.add_argument(
        "--out",
        type=Path,
        default=Path("medeval-discover"),
        metavar="DIR",
        help="output folder (default ./medeval-discover)",
    )
    g = p.add_argument_group("discovery")
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
    g.add_argument("--components", type=int, default=8, help="reduced dimensions (default 8)")
    g.add_argument("--k-max", type=int, default=8, help="largest k per class (default 8)")
    g.add_argument(
        "--min-cluster-size",
        type=int,
        default=5,
        help="smallest training cluster allowed (default 5)",
    )
    g.add_argument(
        "--n-estimators", type=int, default=100, help="trees of the subconcept forest (default 100)"
    )
    p.add_argument(
        "--bootstrap",
        type=int,
        default=1000,
        metavar="B",
        help="bootstrap replicates for the intervals (0 = none; default 1000)",
    )
    p.add_argument(
        "--threshold",
        type=float,
        default=0.5,
        help="predicted label = y_score >= T when there is no y_pred (default 0.5)",
    )
    p.add_argument("--examples", type=int, default=6, help="examples per cluster in the sheet")
    p.add_argument("--seed", type=int, default=0, help="seed of discovery and bootstrap")
    p.add_argument("--quiet", action="store_true", help="print only the output folder")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from medeval import atomic
    from medeval.discovery_flow import discover_and_evaluate
    from medeval.predictions import InputError

    for name in ("components", "k_max", "min_cluster_size", "n_estimators", "examples"):
        if getattr(args, name) < 1:
            print(f"error: --{name.replace('_', '-')} must be >= 1", file=sys.stderr)
            return EXIT_BAD_INPUT
    try:
        files, ev = discover_and_evaluate(
            args.train,
            args.test,
            args.predictions,
            positive=args.positive,
            method=args.method,
            reducer=args.reducer,
            n_components=args.components,
            k_max=args.k_max,
            min_cluster_size=args.min_cluster_size,
            n_estimators=args.n_estimators,
            n_bootstrap=args.bootstrap,
            threshold=args.threshold,
            n_examples=args.examples,
            seed=args.seed,
        )
    except (InputError, ValueError, ImportError) as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    atomic.write_files(args.out, files)
    if not args.quiet:
        from medeval.report.tables import scores_table

        print(scores_table(ev))
        print((args.out / "clusters.csv").read_text())
        for note in ev.notes:
            print(f"note: {note}")
    print(f"report: {args.out / 'report.html'}")
    print(f"results: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
