"""PMLB classification sets through ``pmlb.fetch_data`` (reads the local cache, else downloads)."""

from __future__ import annotations

from pathlib import Path

from medeval.datasets.base import DataError, LabelledData, check_labels_present, label_strings
from medeval.datasets.keel import numeric_features

__all__ = ["load_cached", "load_pmlb", "pmlb_cached_names"]

LABEL_COLUMN = "target"


def pmlb_cached_names(cache_dir: str | Path) -> list[str]:
    """Data sets present in a PMLB cache folder (``<name>/<name>.tsv.gz``), sorted."""
    cache_dir = Path(cache_dir)
    if not cache_dir.is_dir():
        raise FileNotFoundError(f"{cache_dir}: no such PMLB cache folder")
    return sorted(p.name for p in cache_dir.iterdir() if (p / f"{p.name}.tsv.gz").is_file())


def load_cached(path: Path, *, name: str | None = None, **options) -> LabelledData:
    """:func:`load_pmlb` of data set ``name`` with the cache folder ``path`` (the registry's
    loader)."""
    if name is None:
        raise DataError(f"{path}: PMLB needs a data-set name")
    return load_pmlb(name, cache_dir=path, **options)


def load_pmlb(name: str, *, cache_dir: str | Path | None) -> LabelledData:
    """One PMLB data set; label column ``target``.

    Args:
        name: PMLB data-set name, e.g. ``"iris"``.
        cache_dir: the local cache (``<name>/<name>.tsv.gz``); a set not there is downloaded
            once into it by ``pmlb`` (needs internet), ``None`` always downloads.

    Returns:
        ``LabelledData`` with ``X`` (N, F) float and ``labels`` (N,).
    """
    from pmlb import fetch_data  # optional dependency (extra "data")

    # dropna=False: pmlb's own dropna(inplace=True) warns under pandas 3; drop rows here instead,
    # as pmlb does by default.
    try:
        frame = fetch_data(
            name, local_cache_dir=None if cache_dir is None else str(cache_dir), dropna=False
        ).dropna()
    except (OSError, ValueError) as exc:  # not cached and no download (offline / unknown name)
        raise DataError(
            f"PMLB data set {name!r}: not in the cache {cache_dir} and could not be fetched: {exc}"
        ) from exc
    where = f"pmlb:{name}" if cache_dir is None else str(Path(cache_dir) / name)
    check_labels_present(frame[LABEL_COLUMN], where, LABEL_COLUMN)
    file = where if cache_dir is None else Path(where) / f"{name}.tsv.gz"
    X, feature_names = numeric_features(file, frame.drop(columns=LABEL_COLUMN))
    return LabelledData(
        labels=label_strings(frame[LABEL_COLUMN]),
        source="pmlb",
        name=name,
        X=X,
        feature_names=feature_names,
        meta={"cache_dir": None if cache_dir is None else str(cache_dir)},
    )
