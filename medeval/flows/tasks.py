"""The tasks pipelines (``python -m medeval.tasks describe|split``): data sets → binary tasks
with subconcepts, and a task → a split manifest with its record (never one without the other).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from medeval._validation import StrOptions, TypeOf, validate_params
from medeval.errors import OutputPathError, UserError
from medeval.options import COUNT, SCHEMES, SEED

__all__ = ["build_tasks", "check_manifest_out", "write_split_manifest"]


def build_tasks(
    source: str,
    path: str | Path | None,
    *,
    name: str,
    options: dict[str, Any],
    spec: Any = None,
    seed: int = 0,
) -> tuple[list, Path]:
    """The binary task of data set ``name`` of ``source`` (every data set for ``"all"``), the
    user's task when ``spec`` is given, and the folder they were read from."""
    from medeval.datasets import dataset_names, load
    from medeval.datasets.base import data_root
    from medeval.tasks.user import make_task

    path = path if path is not None else data_root(source)
    names = list(dataset_names(source, path)) if name == "all" else [name]
    return [make_task(load(source, path, name=n, **options), spec, seed=seed) for n in names], path


@validate_params(
    {
        "task": [TypeOf(object, desc="a BinaryTask")],
        "out": [TypeOf(str, Path, desc="a path")],
        "record_path": [TypeOf(str, Path, desc="a path")],
        "path": [TypeOf(str, Path, desc="a path")],
        "scheme": [StrOptions(SCHEMES)],
        "split_seed": [SEED],
        "n_seeds": [COUNT],
        "command": [TypeOf(list, tuple, desc="a list of words")],
    }
)
def write_split_manifest(
    task: Any,
    out: Path,
    record_path: Path,
    *,
    path: Path,
    scheme: str = "auto",
    split_seed: int = 0,
    n_seeds: int = 10,
    command: Sequence[str] = (),
) -> tuple[str, list]:
    """Split ``task`` by ``scheme`` (:func:`medeval.splits.make_splits`: ``"auto"``,
    ``"patient"`` with ``n_seeds`` seeds from ``split_seed``, ``"cv5x2"`` seeded
    ``split_seed``, or ``"presplit"``) and write the manifest ``out`` and its record
    ``record_path`` (the data set, source, seeds, the task and the command); returns the
    scheme used and the splits."""
    from medeval.io.atomic import json_text, write_text
    from medeval.splits import make_splits, write_manifest

    scheme, splits, seeds = make_splits(task, scheme, split_seed=split_seed, n_seeds=n_seeds)
    record = {
        "dataset": task.name,
        "source": task.source,
        "path": str(path),
        "task_seed": task.seed,
        "scheme": scheme,
        "split_seeds": seeds,
        "n_rows": len(task),
        "manifest": str(out),
        "task": task.record(),
        "loader": {k: v for k, v in task.data.meta.items() if _jsonable(v)},
        "command": list(command),
    }
    text = json_text(record)  # the record is complete before the manifest is written
    write_manifest(out, task, splits)
    try:
        write_text(record_path, text)
    except BaseException:  # never a manifest without its record
        out.unlink(missing_ok=True)
        raise
    return scheme, splits


def check_manifest_out(out: Path, record: Path, *, prog: str, data: Any, force: bool) -> None:
    """``out`` is a new file, or with ``force`` a manifest ``prog`` wrote (its record beside it
    names it): never a folder, the data or another file of the user's (a :class:`UserError`)."""
    from medeval.io.outdir import check_writable

    for path in (out, record):
        if path.is_dir():
            raise OutputPathError(f"--out {out}: {path} is a folder, not a file")
    check_writable(out.parent, what="--out")
    if data is not None and os.path.realpath(data) == os.path.realpath(out):
        raise OutputPathError(f"--out {out}: is the input {data}; choose another --out")
    which = out if out.exists() else record
    if not which.exists():
        return
    if not force:
        raise UserError(
            f"--out {out}: {which} exists; give --force to replace a manifest {prog} wrote"
        )
    try:  # the record names the manifest as the command wrote it: compared by file name
        rec = json.loads(record.read_text())
        ours = rec["command"][0] == prog and Path(str(rec["manifest"])).name == out.name
    except (OSError, ValueError, TypeError, KeyError, IndexError):
        ours = False
    if not ours:
        raise UserError(
            f"--out {out}: {which} is not a split manifest written by {prog} (no record of it "
            "beside it); choose a new file"
        )


def _jsonable(value: object) -> bool:
    return isinstance(value, str | int | float | bool | type(None))
