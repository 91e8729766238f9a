"""Shared pieces: records → long tables, fold averages, a NaN-safe Pearson correlation."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

WEIGHTING_OF = {"": "unweighted", "p": "predicted", "w": "true"}
FAMILIES = ("AUC", "BA", "F1")


def split_measure(score: str) -> tuple[str, str]:
    """``"pBA"`` → (``"predicted"``, ``"BA"``)."""
    prefix = score[0] if score[0] in "pw" else ""
    return WEIGHTING_OF[prefix], score[len(prefix) :]


def subset_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """Long table of every record's subset scores.

    Returns:
        columns ``collection, dataset, method, split, subset, subconcept, score, value``.
    """
    rows = [
        (
            r.get("collection", r.get("source", "")),
            r["dataset"],
            r["method"],
            r["split"],
            s["subset"],
            s["subconcept"],
            s["score"],
            s["value"],
        )
        for r in records
        for s in r["subsets"]
    ]
    cols = ["collection", "dataset", "method", "split", "subset", "subconcept", "score", "value"]
    frame = pd.DataFrame(rows, columns=cols)
    frame["value"] = frame["value"].astype(float)
    return frame


def dataset_means(frame: pd.DataFrame) -> pd.DataFrame:
    """Average fold scores into one value per data set (SPEC §6 RQ1); NaN folds are skipped.

    Returns:
        columns ``collection, dataset, method, subset, score, value, n_splits``.
    """
    keys = ["collection", "dataset", "method", "subset", "score"]
    return frame.groupby(keys, sort=True)["value"].agg(value="mean", n_splits="count").reset_index()


def pearson(x: np.ndarray, y: np.ndarray) -> tuple[float, float, int]:
    """Pearson r, two-sided p and n over pairs where both are finite; NaN if n < 3 or constant."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y)
    n = int(ok.sum())
    if n < 3 or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
        return math.nan, math.nan, n
    res = stats.pearsonr(x[ok], y[ok])  # constant input returned NaN above: no warning
    return float(res.statistic), float(res.pvalue), n


def fmt(value: float, digits: int = 3) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def markdown_table(frame: pd.DataFrame) -> str:
    """A plain pipe table (no extra dependency); floats with 3 decimals."""
    cols = list(frame.columns)
    lines = ["| " + " | ".join(map(str, cols)) + " |", "|" + "---|" * len(cols)]
    for row in frame.itertuples(index=False):
        cells = [fmt(v) if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
