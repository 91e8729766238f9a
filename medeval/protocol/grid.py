"""The grid of (data set, split) units, run through joblib (loky) or Dask distributed; a unit
computes its missing methods and its worker writes their records, so a killed run loses only the
units in flight. Each worker process caches one data set."""

from __future__ import annotations

import json
import resource
import sys
import threading
import time
import traceback
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medeval._validation import StrOptions, TypeOf, validate_params
from medeval.datasets import LabelledData, dataset_names, load
from medeval.datasets.base import DataError, data_root, read_table
from medeval.errors import UserError
from medeval.options import (
    BACKENDS,
    COUNT,
    N_SPLITS,
    PROTOCOL_OPTIONS,
    SUBCONCEPT_MODES,
    EvaluationOptions,
)
from medeval.progress import progress as progress_bar
from medeval.protocol.discovered import run_fold_discovered
from medeval.protocol.forest import check_methods, derive_seed, run_fold
from medeval.protocol.saved import has_fold_files
from medeval.protocol.store import ResultsStore
from medeval.splits import Split, cv_5x2
from medeval.tasks import BinaryTask
from medeval.tasks.user import TaskSpec, make_task

__all__ = [
    "SUBCONCEPT_MODES",
    "TABLE_SUFFIXES",
    "Collection",
    "Unit",
    "plan_units",
    "resolve_collection",
    "run_grid",
]

TABLE_SUFFIXES = (".csv", ".csv.gz", ".tsv", ".tsv.gz", ".parquet", ".pq")


@dataclass(frozen=True)
class Collection:
    """Where a collection's data sets live.

    Attributes:
        name: ``keel``, ``pmlb`` or the folder's name.
        source: loader source: ``keel``, ``pmlb`` or ``csv`` (a folder of tables).
        path: the folder.
        files: for a folder of tables, data-set name → file path.
    """

    name: str
    source: str
    path: str
    files: tuple[tuple[str, str], ...] = ()
    options: tuple[tuple[str, Any], ...] = ()  # loader options (medeval.datasets.sources)
    #: The user's task for every data set (JSON of ``TaskSpec.to_dict()``), or ``None``.
    task: str | None = None

    def datasets(self) -> list[str]:
        """Every data set of the collection (sorted)."""
        if self.source == "csv":
            return [name for name, _ in self.files]
        return dataset_names(self.source, self.path)

    def file(self, dataset: str) -> Path:
        """The file that holds one data set."""
        if self.source == "csv":
            return Path(dict(self.files)[dataset])
        if self.source == "pmlb":
            return Path(self.path) / dataset / f"{dataset}.tsv.gz"
        return Path(self.path) / f"{dataset}.dat"

    def task_of(self, dataset: str) -> dict | None:
        """The user's task of ``dataset``: the collection's own (``benchmark --positive``),
        else the one recorded with its embedded table, else ``None`` (the paper's ladder)."""
        if self.task is not None:
            return json.loads(self.task)
        files = dict(self.files)
        if self.source != "csv" or dataset not in files:
            return None
        # the task medeval.embed --positive recorded in <name>.embedding.json
        record = Path(files[dataset]).with_name(f"{dataset}.embedding.json")
        if not record.is_file():
            return None
        try:
            task = json.loads(record.read_text(encoding="utf-8")).get("task")
        except (OSError, ValueError, AttributeError) as exc:
            raise DataError(f"{record}: cannot read the embedding record: {exc}") from exc
        return task if isinstance(task, dict) else None

    def recorded_tasks(self) -> dict[str, dict]:
        """Data set → its user's task (:meth:`task_of`); data sets with the paper's ladder are left
        out."""
        if self.source != "csv" and self.task is None:
            return {}
        found = {name: self.task_of(name) for name in self.datasets()}
        return {name: task for name, task in found.items() if task is not None}

    def file_size(self, dataset: str) -> int:
        """Bytes on disk of one data set (orders the grid: small sets first)."""
        path = self.file(dataset)
        return path.stat().st_size if path.is_file() else 0

    def load(self, dataset: str) -> LabelledData:
        """One data set; a folder table uses column ``label`` and, if present, ``group`` and
        ``id`` (row names, never features)."""
        options = dict(self.options)
        if self.source != "csv":
            return load(self.source, self.path, name=dataset, **options)
        files = dict(self.files)
        if dataset not in files:
            raise DataError(f"{self.path}: no table for data set {dataset!r}")
        path = files[dataset]
        columns = _columns(Path(path))
        if "group_column" not in options:
            options["group_column"] = "group" if "group" in columns else None
        if "id_column" not in options:  # python -m medeval.embed's image names: not a feature
            options["id_column"] = "id" if "id" in columns else None
        return load("csv", path, name=dataset, **{"label_column": "label", **options})


def _columns(path: Path) -> list[str]:
    if path.suffix in (".parquet", ".pq"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            return list(pq.read_schema(path).names)
        except (pa.ArrowException, OSError) as exc:  # junk or truncated: the file is named
            raise DataError(f"{path}: cannot read table: {' '.join(str(exc).split())}") from exc
    return list(read_table(path, nrows=0).columns)


def resolve_collection(
    collection: str, data: str | Path | None = None, *, options: dict | None = None
) -> Collection:
    """``keel`` / ``pmlb`` (under ``data`` or ``$MEDEVAL_DATA``) or a folder of tables.

    A folder of tables holds one data set per file (``.csv``, ``.tsv``, optionally ``.gz``,
    or ``.parquet``); the file name up to its first dot names the data set. ``options`` are
    loader options of the collection's source (``keel``, ``pmlb`` or ``csv``).
    """
    opts = tuple(sorted((options or {}).items()))
    if collection in ("keel", "pmlb"):
        root = Path(data) / collection if data is not None else data_root(collection)
        if not root.is_dir():
            raise FileNotFoundError(
                f"{root}: no {collection} folder; pass --data or set MEDEVAL_DATA"
            )
        return Collection(collection, collection, str(root), options=opts)
    folder = Path(collection)
    if not folder.is_dir():
        raise FileNotFoundError(
            f"--collection {collection!r}: not 'keel', 'pmlb' or an existing folder of tables"
        )
    files = sorted(
        (p.name.split(".")[0], str(p))
        for p in folder.iterdir()
        if p.is_file() and not p.name.startswith(".") and p.name.lower().endswith(TABLE_SUFFIXES)
    )
    if not files:
        raise FileNotFoundError(
            f"{folder}: no tables ({', '.join(TABLE_SUFFIXES)}) in this collection folder"
        )
    names = [n for n, _ in files]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise DataError(f"{folder}: several files name the data set(s) {dup}")
    return Collection(folder.name, "csv", str(folder), tuple(files), opts)


@dataclass(frozen=True)
class Unit:
    """One grid task: (data set, split) with the methods still to compute."""

    collection: Collection
    dataset: str
    split: int
    methods: tuple[str, ...]
    seed: int
    n_estimators: int
    out: str
    cost: int = 1  # relative cost for the progress bar's ETA (the data set's bytes on disk)
    subconcepts: str = "true"  # "true" or "discovered" (SUBCONCEPT_MODES)
    save_predictions: bool = False  # write each fold's files (medeval.protocol.saved)
    options: EvaluationOptions = PROTOCOL_OPTIONS  # every fold's evaluation (not its seed)


@dataclass
class UnitResult:
    """What a worker reports back (records are already on disk)."""

    dataset: str
    split: int
    status: str  # "done", "rejected" or "error"
    methods: tuple[str, ...] = ()
    wall_s: float = 0.0
    metrics_s: float = 0.0
    peak_rss_mb: float = 0.0
    message: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def plan_units(
    store: ResultsStore,
    collection: Collection,
    datasets: list[str],
    methods: list[str],
    *,
    seed: int,
    n_estimators: int,
    splits: Iterable[int] = range(N_SPLITS),
    force: bool = False,
    subconcepts: str = "true",
    save_predictions: bool = False,
    options: EvaluationOptions = PROTOCOL_OPTIONS,
) -> list[Unit]:
    """Units with at least one missing record (all units with ``force``), small sets first.

    Data sets whose task was already found rejected are skipped. ``subconcepts="discovered"``
    runs :mod:`medeval.protocol.discovered`. With ``save_predictions`` a record whose saved fold
    is missing counts as missing too. ``options``: every fold's evaluation options.
    """
    if subconcepts not in SUBCONCEPT_MODES:
        raise UserError(f"subconcepts must be one of {SUBCONCEPT_MODES}; got {subconcepts!r}")
    methods = check_methods(methods)
    if save_predictions and subconcepts != "true":
        raise UserError("saved predictions are written for the true subconcepts only")
    known = store.tasks()
    out = store.root
    order = sorted(datasets, key=lambda d: (collection.file_size(d), d))
    common = dict(seed=seed, n_estimators=n_estimators, out=str(out), subconcepts=subconcepts)
    common |= dict(save_predictions=save_predictions, options=options)
    units = []
    for name in order:
        if not force and known.get(name, {}).get("kept") is False:
            continue
        cost = max(collection.file_size(name), 1)
        for k in splits:
            todo = methods if force else store.missing(name, methods, k)
            if save_predictions and not force:
                todo = [m for m in methods if m in todo or not has_fold_files(out, name, m, k)]
            if todo:
                unit = Unit(collection, name, int(k), tuple(todo), cost=cost * len(todo), **common)
                units.append(unit)
    return units


# One data set per worker process: (key, task, splits).
_CACHE: dict[str, Any] = {}
_CACHE_LOCK = threading.Lock()


def _task_and_splits(unit: Unit) -> tuple[BinaryTask, list[Split]]:
    # The recorded task is part of the key: a table embedded again with other --positive
    # labels is another task, even in the same process.
    recorded = json.dumps(unit.collection.task_of(unit.dataset), sort_keys=True)
    key = (unit.collection, unit.dataset, unit.seed, recorded)
    with _CACHE_LOCK:
        if _CACHE.get("key") == key:
            return _CACHE["task"], _CACHE["splits"]
        _CACHE.clear()  # drop the previous data set before loading the next one
    spec = TaskSpec.from_dict(unit.collection.task_of(unit.dataset))
    task = make_task(unit.collection.load(unit.dataset), spec, seed=unit.seed)
    splits = cv_5x2(task, derive_seed(unit.seed, unit.dataset, "split")) if task.kept else []
    with _CACHE_LOCK:
        _CACHE.update(key=key, task=task, splits=splits)
    return task, splits


@contextmanager
def _single_thread() -> Iterator[None]:
    """One thread (torch, BLAS, OpenMP): other sums would change SMOTE's neighbours' bits."""
    import torch
    from threadpoolctl import threadpool_limits

    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(limits=1):
            yield
    finally:
        torch.set_num_threads(old)


@_single_thread()
def run_unit(unit: Unit) -> UnitResult:
    """Compute and store the records of one unit; never raises (errors are reported)."""
    t0 = time.perf_counter()
    store = ResultsStore(unit.out)
    try:
        task, splits = _task_and_splits(unit)
        if not task.kept:
            store.write_task(unit.dataset, {"dataset": unit.dataset, **task.describe()})
            return UnitResult(unit.dataset, unit.split, "rejected", message=task.reason)
        info = {"dataset": task.name, "source": task.source, "n": len(task), **task.describe()}
        info["subconcepts"] = [
            {"name": s.name, "class": s.side, "n_original": s.n_original, "n": s.n}
            for s in task.subconcepts
        ]
        path = store.root / "tasks" / f"{unit.dataset}.json"
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            stored = None
        if stored != json.loads(json.dumps(info)):
            store.write_task(unit.dataset, info)  # absent, or of another task (--force)
        fold = run_fold_discovered if unit.subconcepts == "discovered" else run_fold
        extra = {"save_predictions": unit.out} if unit.save_predictions else {}
        records = fold(
            task,
            splits[unit.split],
            unit.methods,
            seed=unit.seed,
            n_estimators=unit.n_estimators,
            split_index=unit.split,
            options=unit.options,
            **extra,
        )
    except Exception as exc:  # reported per unit so one bad data set does not stop the grid
        detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return UnitResult(
            unit.dataset,
            unit.split,
            "error",
            message=f"{unit.dataset} split {unit.split}: {detail}",
            wall_s=time.perf_counter() - t0,
        )
    wall = time.perf_counter() - t0
    scale = 1024 * 1024 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB on Linux
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / scale
    for rec in records:
        rec["collection"] = unit.collection.name
        rec["subconcepts"] = unit.subconcepts
        rec["timing"].update(unit_s=wall / len(records), worker_peak_rss_mb=rss)
        store.write(rec)
    return UnitResult(
        unit.dataset,
        unit.split,
        "done",
        tuple(unit.methods),
        wall,
        sum(r["timing"]["metrics_s"] for r in records),
        rss,
    )


@validate_params(
    {
        "units": [TypeOf(list, desc="a list of units")],
        "jobs": [COUNT],
        "backend": [StrOptions(BACKENDS)],
        "scheduler": [str, None],
        "progress": [TypeOf(bool, desc="a bool")],
    }
)
def run_grid(
    units: list[Unit],
    *,
    jobs: int = 1,
    backend: str = "loky",
    scheduler: str | None = None,
    progress: bool = True,
) -> list[UnitResult]:
    """Run the units; results arrive in completion order behind a progress bar that advances
    by each unit's ``cost`` (small sets run first, so a count-based ETA would mislead).

    Args:
        jobs: worker processes (loky) or local Dask workers when no ``scheduler`` is given.
        backend: ``"loky"`` (joblib) or ``"dask"`` (Dask distributed).
        scheduler: address of a running Dask scheduler (``tcp://host:8786``).
    """
    if not units:
        return []
    runner = _run_dask if backend == "dask" else _run_loky
    cost = {(u.dataset, u.split): u.cost for u in units}
    results = []
    fmt = "{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}{postfix}]"
    with progress_bar(
        total=sum(cost.values()), desc="benchmark", bar_format=fmt, disable=not progress
    ) as bar:
        for res in runner(units, jobs, scheduler):
            results.append(res)
            bar.set_postfix_str(
                f"{len(results)}/{len(units)} folds; last {res.dataset} split {res.split} "
                f"{res.status}",
                refresh=False,
            )
            bar.update(cost[(res.dataset, res.split)])
    return results


def _run_loky(units: list[Unit], jobs: int, scheduler: str | None) -> Iterator[UnitResult]:
    if jobs == 1:
        yield from map(run_unit, units)
        return
    from joblib import Parallel, delayed

    par = Parallel(n_jobs=jobs, backend="loky", batch_size=1, return_as="generator_unordered")
    yield from par(delayed(run_unit)(u) for u in units)


def _run_dask(units: list[Unit], jobs: int, scheduler: str | None) -> Iterator[UnitResult]:
    from distributed import Client, LocalCluster, as_completed

    cluster = None
    if scheduler is None:
        cluster = LocalCluster(
            n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None
        )
    client = Client(cluster if cluster is not None else scheduler)
    try:
        futures = client.map(run_unit, units, pure=False)
        for fut in as_completed(futures):
            yield fut.result()
            fut.release()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
