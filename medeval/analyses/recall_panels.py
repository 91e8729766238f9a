"""RQ3: per data set, :func:`medeval.report.figures.subconcept_figure` of the split averages,
tiled on contact sheets (docs/method.md, "Evaluation subsets and analyses")."""

from __future__ import annotations

import io
import math
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.image import imread

from medeval.report.figures import figure_png, subconcept_figure


def recall_panel_data(
    records: list[dict[str, Any]], dataset: str, method: str
) -> tuple[pd.DataFrame, dict[str, float]]:
    """Split-averaged per-subconcept table and full-test scores of one data set and method.

    Returns:
        (per-subconcept rows ``subconcept, class, n_train, prevalence, recall`` and, in records
        that have it, the label-free ``est_recall``, in the records' order — majority then
        minority, largest first —, ``{score: mean over splits}``).
    """
    recs = [r for r in records if r["dataset"] == dataset and r["method"] == method]
    if not recs:
        raise ValueError(f"no records for data set {dataset!r} and method {method!r}")
    rows = pd.DataFrame([s for r in recs for s in r["per_subconcept"]])
    order = list(dict.fromkeys(s["subconcept"] for s in recs[0]["per_subconcept"]))
    label_free = ["est_recall"] if "est_recall" in rows.columns else []
    means = ["n_train", "prevalence", "recall", *label_free]
    table = (
        rows.astype(dict.fromkeys(means, float))
        .groupby("subconcept", sort=False)
        .agg(**{"class": ("class", "first")}, **{c: (c, "mean") for c in means})
        .reindex(order)
        .reset_index()
    )
    scores = {}
    for k in recs[0]["scores"]:
        values = np.array([np.nan if r["scores"][k] is None else r["scores"][k] for r in recs])
        # A score null in every split (e.g. a rectified score without reference rows) is NaN.
        scores[k] = (
            float(np.mean(values[np.isfinite(values)])) if np.isfinite(values).any() else np.nan
        )
    return table, scores


def contact_sheet(pngs: list[bytes], *, columns: int = 2, title: str = "") -> Figure:
    """Tile PNG panels (row-major) into one figure."""
    images = [imread(io.BytesIO(b), format="png") for b in pngs]
    rows = math.ceil(len(images) / columns)
    h, w = max(i.shape[0] for i in images), max(i.shape[1] for i in images)
    scale = 7.0 / w
    fig = Figure(figsize=(7.0 * columns, h * scale * rows + 0.4), layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows, columns, squeeze=False)).ravel()
    for ax in axes:
        ax.axis("off")
    for ax, img in zip(axes, images, strict=False):
        ax.imshow(img)
    if title:
        fig.suptitle(title)
    return fig


def recall_sheets(
    records: list[dict[str, Any]],
    *,
    method: str = "none",
    metric: str = "BA",
    per_sheet: int = 8,
) -> tuple[dict[str, bytes], list[bytes]]:
    """Per-data-set panel PNGs and contact-sheet PNGs (``per_sheet`` panels each).

    ``method`` falls back to the first method present when a data set lacks it.
    """
    panels: dict[str, bytes] = {}
    for dataset in sorted({r["dataset"] for r in records}):
        methods = sorted({r["method"] for r in records if r["dataset"] == dataset})
        use = method if method in methods else methods[0]
        table, scores = recall_panel_data(records, dataset, use)
        n = len({r["split"] for r in records if r["dataset"] == dataset and r["method"] == use})
        title = f"{dataset} — method {use}, {metric}, mean of {n} splits"
        fig = subconcept_figure(table, scores, metric=metric, title=title)
        panels[dataset] = figure_png(fig, dpi=80)
    names = list(panels)
    sheets = []
    for start in range(0, len(names), per_sheet):
        chunk = names[start : start + per_sheet]
        title = f"RQ3 — per-subconcept {metric} ({method})"
        fig = contact_sheet([panels[n] for n in chunk], title=title)
        sheets.append(figure_png(fig, dpi=100))
    return panels, sheets
