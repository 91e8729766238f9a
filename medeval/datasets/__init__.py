"""Loaders: each public data-set layout → one ``LabelledData`` (see :mod:`.base`).

:func:`load` dispatches on the source name used by the CLI (``python -m medeval.tasks``).
"""

from __future__ import annotations

from pathlib import Path

from medeval.datasets.base import DataError, LabelledData, SkippedFile, data_root
from medeval.sources import SOURCES as _REGISTRY

__all__ = ["SOURCES", "DataError", "LabelledData", "SkippedFile", "dataset_names", "load"]

#: Source names, in the order of the registry (:mod:`medeval.sources`, which also declares
#: each loader's options).
SOURCES = tuple(_REGISTRY)


def dataset_names(source: str, path: str | Path) -> list[str]:
    """Every data set of ``source`` under ``path`` (what ``--name all`` iterates over)."""
    path = Path(path)
    if source == "keel":
        from medeval.datasets.keel import keel_names

        return [path.stem] if path.is_file() else keel_names(path)
    if source == "pmlb":
        from medeval.datasets.pmlb import pmlb_cached_names

        return pmlb_cached_names(path)
    if source == "medmnist" and path.is_dir():
        return sorted(p.stem for p in path.glob("*.npz"))
    return [path.name.split(".")[0]]


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
    if source not in SOURCES:
        raise ValueError(f"unknown source {source!r}; choose from {', '.join(SOURCES)}")
    if source == "synthetic":
        from medeval.synthetic import make_phantoms

        return make_phantoms(
            int(options.get("n_normal", 240)),
            size=int(options.get("size", 48)),
            seed=int(options.get("seed", 0)),
        )
    path = Path(path) if path is not None else data_root(source)
    if source == "keel":
        from medeval.datasets.keel import load_keel

        return load_keel(path, name=name, **options)
    if source == "pmlb":
        from medeval.datasets.pmlb import load_pmlb

        if name is None:
            raise DataError(f"{path}: PMLB needs a data-set name")
        return load_pmlb(name, cache_dir=path, **options)
    if source == "csv":
        from medeval.datasets.tables import load_table

        return load_table(path, name=name, **options)
    if source == "nih":
        from medeval.datasets.nih import load_nih

        return load_nih(path, **options)
    if source == "ham10000":
        from medeval.datasets.ham10000 import load_ham10000

        return load_ham10000(path, **options)
    if source == "folder":
        from medeval.datasets.folder import load_image_folder

        return load_image_folder(path, name=name, **options)
    if source == "dicom":
        from medeval.datasets.dicom import load_dicom

        return load_dicom(path, name=name, **options)
    if source == "medmnist":
        from medeval.datasets.medmnist import load_medmnist

        file = path / f"{name}.npz" if path.is_dir() and name else path
        return load_medmnist(file, **options)
    if source == "mmhs150k":
        from medeval.datasets.mmhs150k import load_mmhs150k

        return load_mmhs150k(path, **options)
    from medeval.datasets.text import load_text_csv

    return load_text_csv(path, name=name, **options)
