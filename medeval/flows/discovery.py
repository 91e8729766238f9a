"""Evaluation without subconcept labels: embeddings → subconcepts discovered per class →
posteriors → evaluation, with each cluster's recall and typical instances (the library side of
``python -m medeval.discover``; inputs and outputs: docs/discovery.md)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pandas as pd

from medeval.discovery import Discovery, discover_subconcepts
from medeval.errors import InputError
from medeval.evaluation import EvaluateSettings, Evaluation, evaluate
from medeval.io.atomic import json_text
from medeval.io.embeddings import backbone_note, class_of_rows, thumbnail
from medeval.io.features import FeatureTable, read_feature_table
from medeval.io.predictions import (
    POSTERIOR_PREFIX,
    PredictionTable,
    read_predictions,
    read_predictions_frame,
)
from medeval.options import DiscoverySettings
from medeval.weights import utilities_from_train_sizes

__all__ = ["DiscoverySettings", "discover_and_evaluate", "typical_examples"]


def discover_and_evaluate(
    train: str | Path,
    test: str | Path,
    predictions: str | Path,
    settings: DiscoverySettings | None = None,
) -> tuple[dict[str, bytes], Evaluation]:
    """The whole flow, in memory: returns ``({file name: bytes}, Evaluation)``.

    Files: ``predictions.csv`` (the input predictions + ``q_`` columns), ``train_sizes.json``,
    ``discovery.json``, ``clusters.csv``, ``clusters.png``, ``examples.png``, the evaluation
    outputs of ``python -m medeval.evaluate`` (``metrics.json``, ``metrics.csv``,
    ``per_subconcept.csv``) and a ``report.html`` that shows the clusters.

    Raises:
        InputError: a bad input file (named with its column and row where known).
    """
    from medeval.report.discovery import cluster_files, cluster_table, examples_figure
    from medeval.report.figures import figure_png
    from medeval.report.outputs import output_files

    s = settings or DiscoverySettings()
    pred_path = Path(predictions)
    tr, y_tr, te, (checked, raw) = _read_inputs(Path(train), Path(test), pred_path, s.positive)
    disc = discover_subconcepts(tr.X, y_tr, **s.discovery_options(), seed=s.seed)
    q = disc.predict_proba(te.X)
    out_pred = raw.copy()
    for name in disc.names:
        out_pred[f"{POSTERIOR_PREFIX}{name}"] = q[name].to_numpy()
    table = dataclasses.replace(checked, posteriors=q[list(disc.names)].reset_index(drop=True))
    files = {
        "predictions.csv": out_pred.to_csv(index=False).encode(),
        "train_sizes.json": json_text(disc.train_sizes).encode(),
        "discovery.json": json_text(disc.describe()).encode(),
    }
    ev = evaluate(
        table,
        utilities_from_train_sizes(disc.train_sizes),
        settings=EvaluateSettings(**s.evaluation_options()),
    )
    clusters = cluster_table(ev.per_subconcept, table.y_true)
    source = (
        f"train embeddings: {tr.path}\ntest embeddings: {te.path}\npredictions: {pred_path}\n"
        f"discovery: {json.dumps(disc.settings)}\nbootstrap: {s.n_bootstrap} (seed {s.seed})"
    )
    # which backbone made the embeddings (a random one must be seen): the tables' own record
    backbones = [n for n in map(backbone_note, (tr.path, te.path)) if n is not None]
    ev.notes.extend(dict.fromkeys(backbones))
    source += "".join(f"\n{n}" for n in backbones)
    files.update(output_files(ev, title=pred_path.name, source=source))
    files.pop("subconcepts.png", None)  # needs true test subconcepts; clusters.png replaces it
    examples = typical_examples(disc, tr, y_tr, s.n_examples)
    sheet = figure_png(examples_figure(disc, examples, n_examples=s.n_examples, recall=clusters))
    files.update(cluster_files(clusters, ev, sheet, source))
    return files, ev


def _read_inputs(
    train: Path, test: Path, pred_path: Path, positive: str | None
) -> tuple[FeatureTable, np.ndarray, FeatureTable, tuple[PredictionTable, pd.DataFrame]]:
    """Both embedding tables, the training classes and the predictions, checked together."""
    tr, te = (read_feature_table(p, option=None) for p in (train, test))
    if tr.features != te.features:
        raise InputError(
            te.path,
            f"feature columns differ from the training embeddings ({len(te.features)} vs "
            f"{len(tr.features)} columns, first {te.features[0]!r} vs {tr.features[0]!r})",
        )
    y_tr = class_of_rows(tr, positive)
    checked = read_predictions(pred_path)  # validates y_true, y_score / y_pred
    if checked.posteriors is not None or checked.subconcept is not None:
        raise InputError(
            pred_path,
            "already has subconcept labels or q_ posterior columns: this flow discovers "
            "subconcepts for predictions without them (evaluate it with python -m "
            "medeval.evaluate, or drop those columns)",
        )
    raw = read_predictions_frame(pred_path)  # as given: the output keeps its columns
    _check_alignment(te, raw, pred_path)
    _check_classes(te, checked, pred_path, positive)
    for c in (0, 1):
        if (y_tr == c).sum() < 2:
            raise InputError(tr.path, f"class {c} has {(y_tr == c).sum()} rows; discovery needs 2+")
    return tr, y_tr, te, (checked, raw)


def typical_examples(disc: Discovery, table: FeatureTable, y: np.ndarray, n_examples: int):
    """Per discovered subconcept, its ``n_examples`` most typical training instances (highest
    clustering posterior within its class) as :class:`medeval.report.discovery.Example`:
    image thumbnails when the table has a ``path`` column, else the ``text`` / ``id`` (or the
    row number)."""
    from medeval.report.discovery import Example

    q = disc.cluster_proba(table.X, y).to_numpy()
    labels = np.asarray(disc.labels)
    paths, ids, texts = table.column("path"), table.column("id"), table.column("text")
    out: dict[str, list[Example]] = {}
    for j, name in enumerate(disc.names):
        members = np.flatnonzero(labels == name)
        top = members[np.argsort(-q[members, j], kind="stable")][:n_examples]
        out[name] = [
            Example(
                caption=str(ids[i]) if ids is not None else f"row {i + 1}",
                image=thumbnail(table.path.parent, paths[i], 96) if paths is not None else None,
                text=str(texts[i]) if texts is not None else None,
            )
            for i in map(int, top)
        ]
    return out


def _check_alignment(test: FeatureTable, predictions: pd.DataFrame, pred_path: Path) -> None:
    if len(test.X) != len(predictions):
        raise InputError(
            pred_path,
            f"has {len(predictions)} rows but the test embeddings {test.path} have {len(test.X)}; "
            "one predictions row per test embedding, in the same order",
        )
    if "id" in predictions.columns and test.has("id"):
        a, b = predictions["id"].astype(str).to_numpy(), test.ids
        off = np.flatnonzero(a != b)
        if len(off):
            i = int(off[0])
            raise InputError(
                pred_path,
                f"id {a[i]!r} but the test embeddings have id {b[i]!r} in that row",
                column="id",
                row=i + 1,
            )


def _check_classes(
    test: FeatureTable, table: PredictionTable, pred_path: Path, positive: str | None
) -> None:
    """The predictions' ``y_true`` agrees row by row with the test embeddings' classes."""
    frame = test.rest
    if "y" in frame.columns and positive is None:
        y = pd.to_numeric(frame["y"], errors="coerce").to_numpy()
    elif "label" in frame.columns and positive is not None:
        y = (frame["label"].astype(str).str.strip() == positive).to_numpy(dtype=np.float64)
    else:
        return  # the test embeddings do not say
    off = np.flatnonzero(y != table.y_true)
    if len(off):
        i = int(off[0])
        raise InputError(
            pred_path,
            f"y_true is {int(table.y_true[i])} but the test embeddings {test.path} give class "
            f"{y[i]:g} in that row ({len(off)} rows differ): the predictions must be in the test "
            "embeddings' row order",
            column="y_true",
            row=i + 1,
        )
