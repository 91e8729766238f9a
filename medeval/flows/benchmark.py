"""A whole benchmark run: collection → planned units → the grid → records, with a run log
(library side of ``python -m medeval.benchmark``)."""

from __future__ import annotations

import json
import logging
import os
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from medeval._validation import TypeOf, validate_params
from medeval.datasets.base import DataError
from medeval.errors import UserError
from medeval.io.atomic import write_json
from medeval.options import PROTOCOL_OPTIONS, BenchmarkSettings, EvaluationOptions
from medeval.protocol.forest import check_methods
from medeval.protocol.grid import (
    Collection,
    UnitResult,
    plan_units,
    resolve_collection,
    run_grid,
)
from medeval.protocol.store import EVALUATION_KEYS, ResultsStore
from medeval.tasks.user import SmallSubconceptWarning, TaskSpec, make_task

logger = logging.getLogger(__name__)

__all__ = ["BenchmarkRun", "BenchmarkSettings", "run_benchmark", "select_datasets"]


@dataclass
class BenchmarkRun:
    """What a run did: the unit results (records are on disk) and its wall time."""

    out: Path
    collection: str
    results: list[UnitResult]
    wall_s: float

    @property
    def errors(self) -> list[UnitResult]:
        return [r for r in self.results if r.status == "error"]

    @property
    def rejected(self) -> list[str]:
        return sorted({r.dataset for r in self.results if r.status == "rejected"})


def select_datasets(names: tuple[str, ...] | None, available: list[str], where: str) -> list[str]:
    """``names`` checked against the collection (all of it when ``None``)."""
    if names is None:
        return available
    if not names:
        raise DataError(
            f"no data set named; choose from {', '.join(available)} (or leave out --datasets)"
        )
    unknown = [n for n in names if n not in available]
    if unknown:
        raise DataError(f"data set(s) {unknown} not in {where}; available: {', '.join(available)}")
    return list(dict.fromkeys(names))  # each once, in the order given


@validate_params(
    {
        "s": [TypeOf(BenchmarkSettings, desc="BenchmarkSettings")],
        "progress": [TypeOf(bool, desc="a bool")],
        "log": [TypeOf(Callable, desc="a callable"), None],
    }
)
def run_benchmark(
    s: BenchmarkSettings, *, progress: bool = True, log: Callable[[str], None] | None = None
) -> BenchmarkRun:
    """Plan and run the grid into ``s.out`` (resumable: finished records are skipped).

    ``log`` receives the plan's one-line summary (default: this module's logger, at INFO).

    Raises:
        InvalidParameterError: ``s`` not a :class:`~medeval.options.BenchmarkSettings`.
        DataError, FileNotFoundError, SettingsMismatch: bad collection, data-set names or
            methods, or a results folder made with other protocol settings (the evaluation's
            options included).
    """
    log = log or logger.info
    methods, collection, datasets = _checked_inputs(s)
    store = ResultsStore(s.out)
    options = s.evaluation()
    settings = _protocol_settings(s, collection, store, options)
    selection = {(d, m, k) for d in datasets for m in methods for k in range(s.max_splits)}
    # Checked, planned and every data set to run read before anything is written: a refused
    # run, a bad table or an empty KEEL file leaves the folder as it was.
    store.check_settings(settings, force=s.force, selection=selection, record=False)
    units = plan_units(
        store,
        collection,
        datasets,
        methods,
        seed=s.seed,
        n_estimators=s.n_estimators,
        splits=range(s.max_splits),
        force=s.force,
        subconcepts=s.subconcepts,
        save_predictions=s.save_predictions,
        options=options,
    )
    check_tables(collection, sorted({u.dataset for u in units}))
    store.check_settings(settings, force=s.force, selection=selection)
    log(
        f"{collection.name}: {len(datasets)} data sets x {len(methods)} methods x "
        f"{s.max_splits} splits; {len(units)} of {len(datasets) * s.max_splits} (data set, split) "
        f"units to run -> {s.out}"
    )
    started = datetime.now(UTC)
    t0 = time.perf_counter()
    results = run_grid(
        units, jobs=s.jobs, backend=s.backend, scheduler=s.scheduler, progress=progress
    )
    run = BenchmarkRun(Path(s.out), collection.name, results, time.perf_counter() - t0)
    log_run(store, s, started, run, methods, datasets)
    store.finish()
    return run


def _checked_inputs(s: BenchmarkSettings) -> tuple[list[str], Collection, list[str]]:
    """The methods, the collection (with the user's task) and the data sets, checked."""
    try:
        methods = check_methods(list(s.methods))
    except ValueError as exc:
        raise DataError(str(exc)) from None
    if s.save_predictions and s.subconcepts != "true":
        raise DataError("--save-predictions works with --subconcepts true only")
    collection = resolve_collection(s.collection, s.data, options=s.loader_options)
    if s.task is not None:  # one task for every data set, over any recorded with a table
        spec = TaskSpec.from_dict(s.task)  # a definition that makes no task: refused here
        collection = replace(collection, task=json.dumps(spec.to_dict(), sort_keys=True))
    datasets = select_datasets(s.datasets, collection.datasets(), collection.path)
    if s.backend == "dask" and s.scheduler:
        check_scheduler(s.scheduler)
    return methods, collection, datasets


def _protocol_settings(
    s: BenchmarkSettings, collection: Collection, store: ResultsStore, options: EvaluationOptions
) -> dict[str, object]:
    """The settings the records are made with (``run.json``): a resume with others is refused."""
    settings = {
        "collection": collection.name,
        "collection_path": collection.path,
        "seed": s.seed,
        "n_estimators": s.n_estimators,
        "subconcepts": s.subconcepts,
    }
    # The user's tasks recorded with embedded tables: records made for another task (an
    # embed rerun with other --positive labels) must not be resumed as if they were these.
    tasks = collection.recorded_tasks()
    try:
        old = store.settings() or {}
    except (OSError, ValueError, UserError):  # check_settings names any problem
        old = {}
    if tasks or "tasks" in old:
        settings["tasks"] = tasks or None
    # The evaluation's options, recorded where they are not the protocol's (the run.json of
    # a default run stays as it was); a folder made with others is refused, naming the option.
    for key in EVALUATION_KEYS:
        if getattr(options, key) != getattr(PROTOCOL_OPTIONS, key):
            settings[key] = getattr(options, key)
    return settings


#: Bad tables named in one error before the rest are counted.
MAX_NAMED = 5


def check_tables(collection, datasets: list[str]) -> None:
    """Read every data set the run will use before the results folder is touched: bad tables
    are one error naming each file, column and row, not one failed unit per split."""
    problems = []
    for name in datasets:
        try:
            data = collection.load(name)
            if len(data) == 0:
                problems.append(f"{collection.file(name)}: no rows")
            elif (spec := TaskSpec.from_dict(collection.task_of(name))) is not None:
                with warnings.catch_warnings():  # said by the units that build the task
                    warnings.simplefilter("ignore", SmallSubconceptWarning)
                    make_task(data, spec, seed=0)
        except (DataError, FileNotFoundError) as exc:
            problems.append(" ".join(str(exc).split()))
    if problems:
        more = len(problems) - MAX_NAMED
        text = "; ".join(problems[:MAX_NAMED]) + (
            f"; and {more} more bad tables" if more > 0 else ""
        )
        raise DataError(text)


def check_scheduler(address: str, timeout: float = 5.0) -> None:
    """A :class:`DataError` naming ``address`` when no Dask scheduler listens there (Dask itself
    retries for 30 s, then fails with a traceback)."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    try:
        host, port = parts.hostname, parts.port or 8786
    except ValueError as exc:
        raise DataError(f"--scheduler {address}: not an address ({exc})") from None
    if parts.scheme not in ("tcp", "tls") or not host:
        raise DataError(f"--scheduler {address}: expected tcp://host:port")
    if parts.scheme == "tls":  # a TLS handshake needs the certificates: left to Dask
        return
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as exc:
        raise DataError(f"--scheduler {address}: no Dask scheduler reachable ({exc})") from None


def log_run(
    store: ResultsStore, s: BenchmarkSettings, started, run: BenchmarkRun, methods, datasets
) -> None:
    """Append this invocation's wall time and load to ``runs.json`` (figures for the notes)."""
    path = store.root / "runs.json"
    runs = json.loads(path.read_text()) if path.is_file() else []
    results = run.results
    runs.append(
        {
            "started_utc": started.isoformat(timespec="seconds"),
            "wall_s": round(run.wall_s, 3),
            "units_run": len(results),
            "units_error": sum(r.status == "error" for r in results),
            "metrics_s": round(sum(r.metrics_s for r in results), 3),
            "unit_wall_sum_s": round(sum(r.wall_s for r in results), 3),
            "peak_rss_mb": max((r.peak_rss_mb for r in results), default=None),
            "jobs": s.jobs,
            "backend": s.backend,
            "methods": methods,
            "datasets": datasets,
            "max_splits": s.max_splits,
            "load_avg_1_5_15_at_end": list(os.getloadavg()),
            "cpu_count": os.cpu_count(),
        }
    )
    write_json(path, runs)
