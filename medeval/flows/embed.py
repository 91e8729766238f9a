"""The embed pipeline (``python -m medeval.embed``): a data source → the rows of the task →
embeddings (:mod:`medeval.embeddings.table`) → ``<out>/<name>.parquet`` and its record
(:mod:`medeval.io.embeddings`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medeval.embeddings.table import EmbedSettings
from medeval.errors import OutputPathError

__all__ = ["EmbedSettings", "Embedded", "embed_source"]


@dataclass(frozen=True)
class Embedded:
    """What :func:`embed_source` wrote: the table, its name, rows and feature count, the
    embedding's record, the loader's notes and whether the data were synthetic phantoms."""

    table: Path
    name: str
    n_rows: int
    n_features: int
    info: dict[str, Any]
    notes: list[str]
    synthetic: bool


def embed_source(
    source: str,
    path: str | Path | None,
    out: str | Path,
    *,
    settings: EmbedSettings,
    name: str | None = None,
    options: dict[str, Any] | None = None,
    spec: Any = None,
    device: str = "cpu",
    progress: bool = True,
    force: bool = False,
) -> Embedded:
    """Embed the data set ``name`` of ``source`` and write it into the output folder ``out``
    (marked for ``embed`` only once the embedding is done, so a failure leaves it as it was); a
    table of that name already there is replaced only with ``force``.

    ``spec`` (a :class:`medeval.tasks.user.TaskSpec`) keeps only the rows of the user's task
    and is recorded, so that the benchmark of this table builds that task, not the ladder.
    With ``skip_unreadable`` among ``options`` and an image cache, files that pass the header
    check but cannot be decoded are left out too.
    """
    import numpy as np

    from medeval.datasets import load
    from medeval.datasets.base import load_notes
    from medeval.datasets.cache import skip_undecodable
    from medeval.embeddings.table import embed_table
    from medeval.io.embeddings import write_table
    from medeval.io.features import FEATURE
    from medeval.io.outdir import mark
    from medeval.tasks.user import make_task

    options = dict(options or {})
    data = load(source, path, name=name, **options)
    name = name or data.name
    if (Path(out) / f"{name}.parquet").exists() and not force:
        raise OutputPathError(
            f"--out {out}: already holds {name}.parquet; give --force to replace it, or choose "
            "another --out"
        )
    if spec is not None:  # the task's rows, once it is known to be made (exit 2 before embedding)
        make_task(data, spec, seed=0)
        data = data.subset(np.flatnonzero(~np.isin(data.labels, list(spec.drop))))
    if options.get("skip_unreadable") and settings.image_cache is not None:
        data = skip_undecodable(
            data, size=settings.size, cache_dir=settings.image_cache, workers=settings.workers,
            progress=progress,
        )  # fmt: skip
    if data.kind in ("image", "array_image"):
        from medeval.models import check_backbone_name

        check_backbone_name(settings.model)
    frame, info = embed_table(data, settings, device=device, progress=progress)
    mark(out, "embed")
    skipped = [{"path": str(f.path), "row": f.row, "reason": f.reason} for f in data.skipped]
    record = {"source": source, **info, **({"skipped": skipped} if skipped else {})}
    if spec is not None:
        record["task"] = spec.to_dict()
    table = write_table(out, name, frame, record)
    return Embedded(
        table=table,
        name=name,
        n_rows=len(frame),
        n_features=sum(bool(FEATURE.match(str(c))) for c in frame.columns),
        info=info,
        notes=list(load_notes(data, f"{name}.embedding.json")),
        synthetic=bool(data.meta.get("synthetic")),
    )
