"""Results store: one JSON file per data set × method × split, written atomically; a file that
is not a record of its own (data set, method, split) is recomputed, with a
:class:`CorruptRecordWarning` (docs/benchmark.md, "Results store, resume, ``--force``")."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from medeval.errors import UserError
from medeval.io.atomic import write_json
from medeval.io.outdir import check_in_place, mark, read_marker
from medeval.options import PROTOCOL_OPTIONS

__all__ = ["CorruptRecordWarning", "ResultsStore", "SettingsMismatch", "record_problem"]

#: The evaluation's options that change a record's numbers (the memory budget changes only
#: speed and memory); run.json holds them only where a run set other values than the
#: protocol's (:data:`medeval.options.PROTOCOL_OPTIONS`).
EVALUATION_KEYS = ("threshold", "n_bootstrap", "confidence", "stratify")
#: Settings that change results; a store refuses to mix records made with different values.
PROTOCOL_KEYS = ("collection", "seed", "n_estimators", "subconcepts", "tasks", *EVALUATION_KEYS)
#: Values of settings added later, for results folders written before them (``tasks``: the
#: user's tasks of embedded tables, data set → definition; none = the paper's ladder everywhere).
DEFAULTS = {
    "subconcepts": "true",
    "tasks": None,
    **{k: getattr(PROTOCOL_OPTIONS, k) for k in EVALUATION_KEYS},
}


class SettingsMismatch(UserError):
    """The results folder holds records made with other protocol settings."""


class CorruptRecordWarning(UserWarning):
    """A record file of the results folder is unreadable or not a record; it is recomputed."""


def record_problem(path: Path, dataset: str, method: str, split: int) -> str | None:
    """Why ``path`` is not a finished record of (``dataset``, ``method``, ``split``) (a JSON
    object naming them with a ``scores`` object of numbers or ``null``), or ``None``."""
    if path.is_dir():
        return "a folder, not a record file"
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return f"not readable as JSON ({exc})"
    if not isinstance(rec, dict):
        return f"not a record (a JSON {type(rec).__name__}, not an object)"
    want = {"dataset": dataset, "method": method, "split": int(split)}
    for key, value in want.items():
        if key not in rec:
            return f"not a record (no {key!r})"
        if rec[key] != value or type(rec[key]) is not type(value):
            return f"not the record of its file ({key}={rec[key]!r}, expected {value!r})"
    scores = rec.get("scores")
    if not isinstance(scores, dict):
        return "not a record (no 'scores' object)"
    for name, value in scores.items():  # NaN is written as null
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            return f"not a record (score {name!r} is {value!r}, not a number)"
    return None


class ResultsStore:
    """A results folder (see the module docstring)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def finished(self) -> bool:
        """Whether the benchmark that wrote this folder last has ended (it may have had
        errors); ``False`` while one runs and after one stopped before its end."""
        return (read_marker(self.root) or {}).get("finished") is not False

    def finish(self) -> None:
        """Mark the run ended (see :meth:`finished`)."""
        mark(self.root, "benchmark", finished=True)

    def record_path(self, dataset: str, method: str, split: int) -> Path:
        return self.root / "records" / dataset / f"{method}-{int(split)}.json"

    def has(self, dataset: str, method: str, split: int) -> bool:
        """Whether (data set, method, split) has a finished record (see the module docstring);
        a file that is not one is reported with a :class:`CorruptRecordWarning`."""
        path = self.record_path(dataset, method, split)
        if path.is_dir():  # the record could not be written there: say so before the work
            raise UserError(
                f"{path}: the record path is a folder, not a record file; move it away and run "
                "again (the record is written there)"
            )
        if not path.is_file():
            return False
        problem = record_problem(path, dataset, method, split)
        if problem is not None:
            warnings.warn(
                f"{path}: {problem}; it is recomputed", CorruptRecordWarning, stacklevel=2
            )
        return problem is None

    def missing(self, dataset: str, methods: Iterable[str], split: int) -> list[str]:
        """Methods of (data set, split) without a finished record (corrupt ones included)."""
        return [m for m in methods if not self.has(dataset, m, split)]

    def write(self, record: dict[str, Any]) -> Path:
        """Write one record atomically (overwrites: ``--force`` recomputes)."""
        path = self.record_path(record["dataset"], record["method"], record["split"])
        return write_json(path, record)

    def write_task(self, dataset: str, info: dict[str, Any]) -> Path:
        return write_json(self.root / "tasks" / f"{dataset}.json", info)

    def tasks(self) -> dict[str, dict[str, Any]]:
        """Task descriptions by data-set name."""
        folder = self.root / "tasks"
        return {p.stem: _read(p) for p in sorted(folder.glob("*.json"))} if folder.is_dir() else {}

    def _record_files(self) -> list[tuple[Path, tuple[str, str, int] | None]]:
        """Every record file with (data set, method, split) from its name, else ``None``."""
        out = []
        for path in sorted((self.root / "records").glob("*/*.json")):
            method, _, split = path.stem.rpartition("-")
            if not path.name.startswith("."):
                unit = (path.parent.name, method, int(split)) if split.isdigit() else None
                out.append((path, unit))
        return out

    def records(self) -> list[dict[str, Any]]:
        """Every finished record, sorted by data set, method, split."""
        out = []
        for path, unit in self._record_files():
            problem = (
                record_problem(path, *unit)
                if unit is not None
                else "not a record file (its name is not <method>-<split>.json)"
            )
            if problem is not None:
                raise UserError(f"{path}: unreadable results record: {problem}")
            out.append(_read(path))
        return sorted(out, key=lambda r: (r["dataset"], r["method"], r["split"]))

    def settings(self) -> dict[str, Any] | None:
        path = self.root / "run.json"
        return _read(path) if path.is_file() else None

    def check_settings(
        self,
        settings: dict[str, Any],
        *,
        force: bool = False,
        selection: set[tuple[str, str, int]] | None = None,
        record: bool = True,
    ) -> None:
        """Record ``settings`` in ``run.json`` (unless not ``record``: checked only); refuse a
        folder made with other settings.

        With ``force`` the old settings are replaced and the records of ``selection`` (data
        set, method, split; default all) recomputed; a record outside it, made with other
        protocol settings, would stay and mix them, so that is refused.

        Raises:
            SettingsMismatch: naming the differing setting and both values.
            OutputPathError: the folder holds files that are not results of a benchmark.
        """
        check_in_place(self.root, tool="benchmark", resume=True, what="results folder")
        old = self.settings()
        for key in PROTOCOL_KEYS if old is not None else ():
            was, now = old.get(key, DEFAULTS.get(key)), settings.get(key, DEFAULTS.get(key))
            if was == now:
                continue
            if not force:
                raise SettingsMismatch(
                    f"{self.root}: results were made with {key}={was!r}, this run "
                    f"asks for {key}={now!r}; use --force to recompute them "
                    "or choose another --out folder"
                )
            kept = [
                p
                for p, unit in self._record_files()
                if unit is not None and selection is not None and unit not in selection
            ]
            if kept:
                raise SettingsMismatch(
                    f"{self.root}: --force with {key}={now!r} recomputes only the records this "
                    f"run selects; {len(kept)} other record(s) (e.g. {kept[0]}) were made with "
                    f"{key}={was!r} and would stay beside them: select them too (every data set, "
                    "method and split of the folder) or choose another --out folder"
                )
        if not record:
            return
        # only now, accepted: a refused run writes nothing (not even the marker)
        mark(self.root, "benchmark", finished=False)
        write_json(self.root / "run.json", {**(old or {}), **settings})


def _read(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: unreadable results record: {exc}") from exc
