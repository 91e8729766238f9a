"""Loaders: each public data-set layout → one ``LabelledData`` (:mod:`.base`); :func:`load` calls
the loader a source declares (:mod:`.sources`), imported on first use (``--help`` stays light)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from medeval.datasets.sources import SOURCES as _REGISTRY
from medeval.datasets.sources import get_source

if TYPE_CHECKING:
    from medeval.datasets.base import LabelledData

__all__ = ["SOURCES", "DataError", "LabelledData", "SkippedFile", "dataset_names", "load"]


_FROM_BASE = ("DataError", "LabelledData", "SkippedFile", "data_root")


def __getattr__(name: str):
    # ``SOURCES`` is read from the registry on each access, so a source registered after this
    # module was imported is listed too.
    if name == "SOURCES":
        return tuple(_REGISTRY)
    if name in _FROM_BASE:  # imported on first use: medeval.datasets.base needs pandas
        from medeval.datasets import base

        return getattr(base, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def dataset_names(source: str, path: str | Path) -> list[str]:
    """Every data set of ``source`` under ``path`` (what ``--name all`` iterates over)."""
    path = Path(path)
    declared = _REGISTRY.get(source)
    return declared.dataset_names(path) if declared else [path.name.split(".")[0]]


def load(
    source: str, path: str | Path | None = None, *, name: str | None = None, **options
) -> LabelledData:
    """Load a data set by source name.

    Args:
        source: one of :data:`SOURCES`.
        path: file or folder; default ``$MEDEVAL_DATA/<source>`` (e.g. ``…/keel``); unused for
            ``synthetic`` (built-in phantoms).
        name: data-set name inside a folder of several (KEEL, PMLB, MedMNIST).
        **options: passed to the source's loader (e.g. ``label_column``, ``skip_unreadable``).
    """
    from medeval.datasets.base import data_root

    declared = get_source(source)
    if declared.takes_path:
        path = Path(path) if path is not None else data_root(source)
    loader = declared.load_function()
    if declared.takes_name:
        return loader(path, name=name, **options)
    return loader(path, **options)
