"""``python -m medeval.benchmark``: the random-forest protocol on a collection (SPEC §5).

Runs the grid of (data set, method, split) records into a results folder, resumable, then the
RQ1–RQ3 analyses (``python -m medeval.analyze``) on that folder.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from medeval.atomic import write_json
from medeval.protocol.forest import METHODS, check_methods
from medeval.protocol.grid import (
    N_SPLITS,
    SUBCONCEPT_MODES,
    plan_units,
    resolve_collection,
    run_grid,
)
from medeval.protocol.store import ResultsStore, SettingsMismatch

EPILOG = f"""\
collections:
  keel, pmlb   the sets under --data (default $MEDEVAL_DATA): keel/*.dat, pmlb/<name>/<name>.tsv.gz
  <folder>     a folder of tables, one data set per file ({", ".join((".csv", ".tsv", ".parquet"))},
               optionally .gz); the data set is named by the file name up to its first dot.
               Column "label" = multiclass label, optional column "group" = patient / lesion id
               (then the 5x2 CV keeps groups together), every other column = a numeric feature.
               This is the contract of `python -m medeval.embed` output.

methods: {", ".join(METHODS)} (none, random over-/under-sampling, SMOTE, class_weight="balanced")

--subconcepts discovered: per training fold each class is clustered (PCA + Gaussian mixture,
k by BIC; medeval.discovery); utilities, the subconcept forest and every label-free score use the
clusters only. The true subconcepts score the result: true-weight scores, the test subsets, and
the discovery quality (ARI / NMI per class, in each record and analysis/discovery.csv).

The results folder holds one JSON record per data set x method x split
(records/<set>/<method>-<k>.json).
Rerunning the same command skips finished records; --force recomputes them.
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m medeval.benchmark",
        description="Random-forest benchmark (5x2 CV, corrections, subconcept forest) with "
        "utility-weighted scores, then the RQ1-RQ3 analyses.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--collection", required=True, help="keel, pmlb or a folder of tables")
    p.add_argument(
        "--data",
        default=None,
        help="folder holding keel/ and pmlb/ (default $MEDEVAL_DATA or ../shared/data)",
    )
    p.add_argument("--datasets", default=None, help="comma-separated data-set names (default all)")
    p.add_argument("--methods", default=",".join(METHODS), help="comma-separated corrections")
    p.add_argument(
        "--out", default=None, help="results folder (default benchmark-results/<collection>)"
    )
    p.add_argument("--jobs", type=int, default=1, help="parallel workers (default 1)")
    p.add_argument("--seed", type=int, default=0, help="base seed (task, splits, forests)")
    p.add_argument("--backend", choices=("loky", "dask"), default="loky")
    p.add_argument(
        "--scheduler",
        default=None,
        help="Dask scheduler address (with --backend dask; "
        "default: a local cluster of --jobs workers)",
    )
    p.add_argument("--n-estimators", type=int, default=100, help="trees per forest (default 100)")
    p.add_argument(
        "--max-splits",
        type=int,
        default=N_SPLITS,
        help="run only the first K of the 10 splits (smoke runs and tests)",
    )
    p.add_argument(
        "--subconcepts",
        choices=SUBCONCEPT_MODES,
        default="true",
        help="true: the data set's labels; discovered: clusters found per class on each "
        "training fold (the true subconcepts then only score the result). Default: true",
    )
    p.add_argument("--force", action="store_true", help="recompute existing records")
    p.add_argument("--no-analyze", action="store_true", help="skip the analyses at the end")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def _datasets(arg: str | None, available: list[str], where: str) -> list[str]:
    if arg is None:
        return available
    names = [n.strip() for n in arg.split(",") if n.strip()]
    unknown = [n for n in names if n not in available]
    if unknown:
        raise SystemExit(
            f"error: data set(s) {unknown} not in {where}; available: {', '.join(available)}"
        )
    return names


def _exit_on_sigterm(signum, frame) -> None:
    # SystemExit unwinds through joblib / Dask, which then stop their workers; finished records
    # are already on disk, the units in flight are lost and rerun next time.
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if threading.current_thread() is not threading.main_thread():
        return _main(args)
    previous = signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        return _main(args)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _main(args: argparse.Namespace) -> int:
    if args.jobs < 1 or args.n_estimators < 1 or not 1 <= args.max_splits <= N_SPLITS:
        raise SystemExit("error: --jobs and --n-estimators must be >= 1, --max-splits in 1..10")
    try:
        methods = check_methods([m.strip() for m in args.methods.split(",") if m.strip()])
        collection = resolve_collection(args.collection, args.data)
    except (ValueError, FileNotFoundError) as exc:
        raise SystemExit(f"error: {exc}") from exc
    datasets = _datasets(args.datasets, collection.datasets(), collection.path)
    out = Path(args.out or Path("benchmark-results") / collection.name)
    store = ResultsStore(out)
    settings = {
        "collection": collection.name,
        "collection_path": collection.path,
        "seed": args.seed,
        "n_estimators": args.n_estimators,
        "subconcepts": args.subconcepts,
    }
    try:
        store.check_settings(settings, force=args.force)
    except SettingsMismatch as exc:
        raise SystemExit(f"error: {exc}") from exc
    units = plan_units(
        store,
        collection,
        datasets,
        methods,
        seed=args.seed,
        n_estimators=args.n_estimators,
        splits=range(args.max_splits),
        force=args.force,
        subconcepts=args.subconcepts,
    )
    n_total = len(datasets) * args.max_splits
    print(
        f"{collection.name}: {len(datasets)} data sets x {len(methods)} methods x "
        f"{args.max_splits} splits; {len(units)} of {n_total} (data set, split) units to run "
        f"-> {out}",
        file=sys.stderr,
    )
    started = datetime.now(UTC)
    t0 = time.perf_counter()
    results = run_grid(
        units,
        jobs=args.jobs,
        backend=args.backend,
        scheduler=args.scheduler,
        progress=not args.quiet,
    )
    wall = time.perf_counter() - t0
    _log_run(store, args, started, wall, results, methods, datasets)
    errors = [r for r in results if r.status == "error"]
    for r in errors:
        print(f"error: {r.message}", file=sys.stderr)
    rejected = sorted({r.dataset for r in results if r.status == "rejected"})
    if rejected:
        print(f"rejected (SPEC §4.5): {', '.join(rejected)}", file=sys.stderr)
    print(f"done in {wall:.1f} s; records in {out / 'records'}", file=sys.stderr)
    if not args.no_analyze:
        from medeval.analyze import analyze

        summary = analyze(out, out / "analysis")
        print(f"analyses: {summary}", file=sys.stderr)
        print(f"report: {out / 'analysis' / 'report.html'}")
    return 1 if errors else 0


def _log_run(store, args, started, wall, results, methods, datasets) -> None:
    """Append this invocation's wall time and load to ``runs.json`` (figures for the note)."""
    path = store.root / "runs.json"
    import json

    runs = json.loads(path.read_text()) if path.is_file() else []
    runs.append(
        {
            "started_utc": started.isoformat(timespec="seconds"),
            "wall_s": round(wall, 3),
            "units_run": len(results),
            "units_error": sum(r.status == "error" for r in results),
            "metrics_s": round(sum(r.metrics_s for r in results), 3),
            "unit_wall_sum_s": round(sum(r.wall_s for r in results), 3),
            "peak_rss_mb": max((r.peak_rss_mb for r in results), default=None),
            "jobs": args.jobs,
            "backend": args.backend,
            "methods": methods,
            "datasets": datasets,
            "max_splits": args.max_splits,
            "load_avg_1_5_15_at_end": list(os.getloadavg()),
            "cpu_count": os.cpu_count(),
        }
    )
    write_json(path, runs)


if __name__ == "__main__":
    sys.exit(main())
