"""Results store: one JSON file per data set × method × split, each written atomically.

Layout of a results folder::

    run.json                          protocol settings (seed, trees, collection)
    records/<data set>/<method>-<k>.json   one record of :func:`~medeval.protocol.run_fold`
    tasks/<data set>.json             the binary task's description (kept / rejected)

A record file exists only once it is complete (temporary file + ``os.replace``), so killing a
run at any moment loses at most the work in flight; rerunning skips every existing record.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from medeval.atomic import write_json
from medeval.errors import UserError

__all__ = ["ResultsStore", "SettingsMismatch"]

#: Settings that change results; a store refuses to mix records made with different values.
PROTOCOL_KEYS = ("collection", "seed", "n_estimators", "subconcepts")
#: Values of settings added later, for results folders written before them.
DEFAULTS = {"subconcepts": "true"}


class SettingsMismatch(UserError):
    """The results folder holds records made with other protocol settings."""


class ResultsStore:
    """A results folder (see the module docstring)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def record_path(self, dataset: str, method: str, split: int) -> Path:
        return self.root / "records" / dataset / f"{method}-{int(split)}.json"

    def has(self, dataset: str, method: str, split: int) -> bool:
        return self.record_path(dataset, method, split).is_file()

    def missing(self, dataset: str, methods: Iterable[str], split: int) -> list[str]:
        """Methods of (data set, split) without a finished record."""
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

    def records(self) -> list[dict[str, Any]]:
        """Every finished record, sorted by data set, method, split."""
        folder = self.root / "records"
        if not folder.is_dir():
            return []
        out = [_read(p) for p in folder.glob("*/*.json") if not p.name.startswith(".")]
        return sorted(out, key=lambda r: (r["dataset"], r["method"], r["split"]))

    def settings(self) -> dict[str, Any] | None:
        path = self.root / "run.json"
        return _read(path) if path.is_file() else None

    def check_settings(self, settings: dict[str, Any], *, force: bool = False) -> None:
        """Record ``settings`` in ``run.json``; refuse a folder made with other settings.

        With ``force`` the old settings are replaced (every record is then recomputed).

        Raises:
            SettingsMismatch: naming the differing setting and both values.
        """
        old = self.settings()
        if old is not None and not force:
            for key in PROTOCOL_KEYS:
                was, now = old.get(key, DEFAULTS.get(key)), settings.get(key, DEFAULTS.get(key))
                if was != now:
                    raise SettingsMismatch(
                        f"{self.root}: results were made with {key}={was!r}, this run "
                        f"asks for {key}={now!r}; use --force to recompute them "
                        "or choose another --out folder"
                    )
        write_json(self.root / "run.json", {**(old or {}), **settings})


def _read(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: unreadable results record: {exc}") from exc
