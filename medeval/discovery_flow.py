"""Evaluation without subconcept labels: discover them from embeddings, then score as usual.

Inputs (library side of ``python -m medeval.discover``):

- training embeddings: a table as written by ``python -m medeval.embed`` (CSV or Parquet,
  feature columns ``f0000…``) with the class of every row, either a ``y`` column (0/1) or the
  ``label`` column together with the label value of class 1 (``positive``);
- test embeddings: the same feature columns, one row per test instance;
- the classifier's test predictions: a predictions file of ``python -m medeval.evaluate``
  (``y_true``, ``y_score`` and/or ``y_pred``), rows in the order of the test embeddings.

Optional columns of the embedding tables used for the example figure: ``path`` (an image file,
relative to the table's folder or absolute), ``id`` and ``text``; when both tables and the
predictions have an ``id`` column, the test rows must match the predictions row by row.

The training part's classes are clustered (:func:`medeval.discovery.discover_subconcepts`); the
predictions gain posterior columns ``q_c<class>_k<j>`` and the cluster sizes become
``train_sizes.json``; both are evaluated by the code of ``python -m medeval.evaluate`` (label-free
scores with intervals), and each discovered subconcept gets a label-free recall with an interval
(``clusters.csv``, ``clusters.png``) and a sheet of its most typical training instances
(``examples.png``) so that a clinician can name it.
"""

from __future__ import annotations

import io
import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from medeval.discovery import Discovery, discover_subconcepts
from medeval.predictions import POSTERIOR_PREFIX, InputError, read_predictions
from medeval.report.outputs import evaluate_file, output_files

__all__ = ["EmbeddingTable", "discover_and_evaluate", "examples_figure", "read_embeddings"]

FEATURE = re.compile(r"^f\d+$")


@dataclass
class EmbeddingTable:
    """One embeddings table: ``X (N, F)`` and the optional per-row columns."""

    path: Path
    X: np.ndarray
    features: list[str]
    frame: pd.DataFrame  # every non-feature column (label, group, y, id, path, text, ...)

    def column(self, name: str) -> np.ndarray | None:
        return self.frame[name].to_numpy() if name in self.frame.columns else None


def read_embeddings(path: str | Path) -> EmbeddingTable:
    """Read an embeddings table (``.parquet`` or ``.csv[.gz]``) and check its features.

    Raises:
        InputError: unreadable file, no feature columns ``f0000…``, a missing or non-finite
            feature value (naming column and row).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "file not found")
    try:
        if path.name.lower().endswith((".parquet", ".pq")):
            frame = pd.read_parquet(path)
        elif path.name.lower().endswith((".csv", ".csv.gz", ".tsv", ".tsv.gz")):
            sep = "\t" if ".tsv" in path.name.lower() else ","
            frame = pd.read_csv(path, sep=sep)
        else:
            raise InputError(path, "unknown format: use .parquet, .csv or .tsv (optionally .gz)")
    except InputError:
        raise
    except Exception as err:
        raise InputError(path, f"cannot be read: {err}") from err
    frame.columns = [str(c) for c in frame.columns]
    features = [c for c in frame.columns if FEATURE.match(c)]
    if not features:
        raise InputError(path, "no feature columns f0000… (the python -m medeval.embed format)")
    if len(frame) == 0:
        raise InputError(path, "has no rows")
    X = np.empty((len(frame), len(features)))
    for j, c in enumerate(features):
        values = pd.to_numeric(frame[c], errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(values)
        if bad.any():
            i = int(np.argmax(bad))
            raise InputError(
                path, f"{frame[c].iloc[i]!r} is not a finite number", column=c, row=i + 1
            )
        X[:, j] = values
    rest = frame[[c for c in frame.columns if c not in features]].reset_index(drop=True)
    return EmbeddingTable(path, X, features, rest)


def class_of_rows(table: EmbeddingTable, positive: str | None) -> np.ndarray:
    """``(N,)`` classes: the ``y`` column (0/1), or ``label == positive``.

    Raises:
        InputError: neither usable; a ``y`` value that is not 0/1; ``positive`` not a label.
    """
    if "y" in table.frame.columns and positive is None:
        raw = table.frame["y"]
        y = pd.to_numeric(raw, errors="coerce").to_numpy()
        bad = ~np.isin(y, (0, 1))
        if bad.any():
            i = int(np.argmax(bad))
            raise InputError(table.path, f"{raw.iloc[i]!r} is not 0 or 1", column="y", row=i + 1)
        return y.astype(np.int64)
    if "label" not in table.frame.columns:
        raise InputError(table.path, "needs the class of every row: a 'y' column (0/1) or 'label'")
    if positive is None:
        raise InputError(
            table.path,
            "has a 'label' column but no 'y' column: say which label is class 1 (--positive)",
            column="label",
        )
    labels = table.frame["label"].astype(str).to_numpy()
    if positive not in set(labels):
        known = ", ".join(sorted(set(labels))[:20])
        raise InputError(
            table.path, f"no row has label {positive!r}; labels: {known}", column="label"
        )
    return (labels == positive).astype(np.int64)


def _check_alignment(test: EmbeddingTable, predictions: pd.DataFrame, pred_path: Path) -> None:
    if len(test.X) != len(predictions):
        raise InputError(
            pred_path,
            f"has {len(predictions)} rows but the test embeddings {test.path} have {len(test.X)}; "
            "one predictions row per test embedding, in the same order",
        )
    if "id" in predictions.columns and "id" in test.frame.columns:
        a, b = predictions["id"].astype(str).to_numpy(), test.frame["id"].astype(str).to_numpy()
        off = np.flatnonzero(a != b)
        if len(off):
            i = int(off[0])
            raise InputError(
                pred_path,
                f"id {a[i]!r} but the test embeddings have id {b[i]!r} in that row",
                column="id",
                row=i + 1,
            )


def _read_raw_predictions(path: Path) -> pd.DataFrame:
    """The predictions file as given (kept column for column in the output predictions)."""
    table = read_predictions(path)  # validates y_true, y_score / y_pred
    if table.posteriors is not None or table.subconcept is not None:
        raise InputError(
            path,
            "already has subconcept labels or q_ posterior columns: this flow discovers "
            "subconcepts for predictions without them (evaluate it with python -m "
            "medeval.evaluate, or drop those columns)",
        )
    if path.name.lower().endswith((".parquet", ".pq")):
        return pd.read_parquet(path)
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def examples_figure(
    disc: Discovery,
    table: EmbeddingTable,
    y: np.ndarray,
    *,
    n_examples: int = 6,
    recall: pd.DataFrame | None = None,
    thumb: int = 96,
) -> Figure:
    """The ``n_examples`` most typical training instances of every discovered subconcept.

    Typical = highest clustering posterior within its class. Image thumbnails when the table
    has a ``path`` column; otherwise the instance's ``id`` / ``text`` (or its row number).
    One row per subconcept, labelled with its name, training size and label-free recall.
    """
    q = disc.cluster_proba(table.X, y).to_numpy()
    labels = np.asarray(disc.labels)
    paths, ids, texts = table.column("path"), table.column("id"), table.column("text")
    fig = Figure(
        figsize=(1.6 * n_examples + 2.2, 1.5 * len(disc.names) + 0.6), layout="constrained"
    )
    axes = fig.subplots(len(disc.names), n_examples, squeeze=False)
    est = {} if recall is None else dict(zip(recall.subconcept, recall.est_recall, strict=True))
    for r, name in enumerate(disc.names):
        j = disc.names.index(name)
        members = np.flatnonzero(labels == name)
        top = members[np.argsort(-q[members, j], kind="stable")][:n_examples]
        for c, ax in enumerate(axes[r]):
            ax.set_xticks([])
            ax.set_yticks([])
            for spine in ax.spines.values():
                spine.set_visible(False)
            if c >= len(top):
                continue
            i = int(top[c])
            caption = str(ids[i]) if ids is not None else f"row {i + 1}"
            image = _thumbnail(table.path.parent, paths[i], thumb) if paths is not None else None
            if image is not None:
                # Fixed grey range: a flat image must not be stretched to black.
                grey = {"cmap": "gray", "vmin": 0, "vmax": 255} if image.ndim == 2 else {}
                ax.imshow(image, **grey)
                ax.set_xlabel(caption, fontsize=6)
            else:
                body = str(texts[i]) if texts is not None else caption
                ax.text(0.5, 0.5, _wrap(body), ha="center", va="center", fontsize=6, wrap=True)
        side = int(disc.sides[j])
        rec = est.get(name, float("nan"))
        axes[r][0].set_ylabel(
            f"{name}\nclass {side}, n={int(disc.counts[j])}\nrecall≈{rec:.2f}", fontsize=8
        )
    fig.suptitle("Discovered subconcepts: most typical training instances (name them)")
    return fig


def _wrap(text: str, width: int = 22, lines: int = 6) -> str:
    words, out, line = text.split(), [], ""
    for w in words:
        if len(line) + len(w) + 1 > width and line:
            out.append(line)
            line = w
        else:
            line = f"{line} {w}".strip()
    out.append(line)
    return "\n".join(out[:lines]) + ("…" if len(out) > lines else "")


def _thumbnail(base: Path, path: Any, size: int) -> np.ndarray | None:
    """A small greyscale/RGB array of an image file, or None when it cannot be read."""
    from PIL import Image

    p = Path(str(path))
    p = p if p.is_absolute() else base / p
    try:
        with Image.open(p) as im:
            im = im.convert("L" if im.mode in ("L", "I", "I;16", "F") else "RGB")
            im.thumbnail((size, size))
            return np.asarray(im)
    except (OSError, ValueError):
        return None


def discover_and_evaluate(
    train: str | Path,
    test: str | Path,
    predictions: str | Path,
    *,
    positive: str | None = None,
    method: str = "gmm",
    reducer: str = "pca",
    n_components: int = 8,
    k_max: int = 8,
    min_cluster_size: int = 5,
    n_estimators: int = 100,
    n_bootstrap: int = 1000,
    threshold: float = 0.5,
    n_examples: int = 6,
    seed: int = 0,
) -> tuple[dict[str, bytes], Any]:
    """The whole flow, in memory: returns ``({file name: bytes}, Evaluation)``.

    Files: ``predictions.csv`` (the input predictions + ``q_`` columns), ``train_sizes.json``,
    ``discovery.json``, ``clusters.csv``, ``clusters.png``, ``examples.png``, the evaluation
    outputs of ``python -m medeval.evaluate`` (``metrics.json``, ``metrics.csv``,
    ``per_subconcept.csv``) and a ``report.html`` that shows the clusters.

    Raises:
        InputError: a bad input file (named with its column and row where known).
    """
    tr, te = read_embeddings(train), read_embeddings(test)
    if tr.features != te.features:
        raise InputError(
            te.path,
            f"feature columns differ from the training embeddings ({len(te.features)} vs "
            f"{len(tr.features)} columns, first {te.features[0]!r} vs {tr.features[0]!r})",
        )
    y_tr = class_of_rows(tr, positive)
    pred_path = Path(predictions)
    raw = _read_raw_predictions(pred_path)
    _check_alignment(te, raw, pred_path)
    for c in (0, 1):
        if (y_tr == c).sum() < 2:
            raise InputError(tr.path, f"class {c} has {(y_tr == c).sum()} rows; discovery needs 2+")
    disc = discover_subconcepts(
        tr.X,
        y_tr,
        method=method,
        reducer=reducer,
        n_components=n_components,
        k_max=k_max,
        min_cluster_size=min_cluster_size,
        n_estimators=n_estimators,
        seed=seed,
    )
    q = disc.predict_proba(te.X)
    out_pred = raw.copy()
    for name in disc.names:
        out_pred[f"{POSTERIOR_PREFIX}{name}"] = q[name].to_numpy()
    files: dict[str, bytes] = {
        "predictions.csv": out_pred.to_csv(index=False).encode(),
        "train_sizes.json": (json.dumps(disc.train_sizes, indent=2) + "\n").encode(),
        "discovery.json": (json.dumps(disc.describe(), indent=2) + "\n").encode(),
    }
    with tempfile.TemporaryDirectory() as tmp:  # evaluated from the files a user gets
        for name in ("predictions.csv", "train_sizes.json"):
            (Path(tmp) / name).write_bytes(files[name])
        table, ev = evaluate_file(
            Path(tmp) / "predictions.csv",
            Path(tmp) / "train_sizes.json",
            threshold=threshold,
            n_bootstrap=n_bootstrap,
            seed=seed,
        )
    clusters = _cluster_table(ev.per_subconcept, table.y_true)
    source = (
        f"train embeddings: {tr.path}\ntest embeddings: {te.path}\npredictions: {pred_path}\n"
        f"discovery: {json.dumps(disc.settings)}\nbootstrap: {n_bootstrap} (seed {seed})"
    )
    files.update(output_files(ev, title=pred_path.name, source=source))
    files.pop("subconcepts.png", None)  # needs true test subconcepts; clusters.png replaces it
    files.update(_cluster_outputs(clusters, ev, disc, tr, y_tr, n_examples, source))
    return files, ev


def _cluster_table(per_subconcept: pd.DataFrame, y: np.ndarray) -> pd.DataFrame:
    """Per discovered subconcept: training size, utility, soft test count and share of its
    class, label-free recall with its interval (from the evaluation's per-subconcept rows)."""
    t = per_subconcept[
        [
            "subconcept",
            "class",
            "n_train",
            "utility",
            "est_n_test",
            "est_recall",
            "est_low",
            "est_high",
        ]
    ].copy()
    n_class = np.array([(y == c).sum() for c in t["class"]], dtype=np.float64)
    t.insert(
        5,
        "prevalence",
        np.divide(t.est_n_test, n_class, out=np.full(len(t), np.nan), where=n_class > 0),
    )
    return t.reset_index(drop=True)


def _cluster_outputs(clusters, ev, disc, tr, y_tr, n_examples, source) -> dict[str, bytes]:
    """clusters.csv, clusters.png, examples.png, and a report.html that shows them (the
    evaluation's own per-subconcept figure needs true test subconcepts, so it is left out)."""
    from medeval.report.figures import figure_png, subconcept_figure
    from medeval.report.html import Section, evaluation_sections, render

    buf = io.StringIO()
    clusters.to_csv(buf, index=False)
    drawn = clusters.rename(columns={"est_recall": "recall", "est_low": "low", "est_high": "high"})
    fig = subconcept_figure(
        drawn, ev.scores, title="Discovered subconcepts: soft prevalence and label-free recall"
    )
    sheet = figure_png(examples_figure(disc, tr, y_tr, n_examples=n_examples, recall=clusters))
    bars = figure_png(fig)
    sections = evaluation_sections(ev, figure_png=bars)
    sections.append(
        Section("Discovered subconcepts")
        .text(
            "Clusters found per class in the training embeddings (names c<class>_k<rank>, "
            "largest first). Recall is the label-free estimate with its bootstrap interval. "
            "Below: the most typical training instances of each cluster, to name them."
        )
        .table(clusters)
        .image(sheet, caption="examples per discovered subconcept")
    )
    sections.append(Section("Inputs").pre(source))
    return {
        "clusters.csv": buf.getvalue().encode(),
        "clusters.png": bars,
        "examples.png": sheet,
        "report.html": render("medeval evaluation with discovered subconcepts", sections).encode(),
    }
