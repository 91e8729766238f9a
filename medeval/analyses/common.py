"""Shared pieces: records → long tables, fold averages, a NaN-safe Pearson correlation."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from medeval.scores import FAMILIES, WEIGHTINGS, parse_score, prefix_key

#: Score-name prefix → weighting's short name. "" and "w" are the unweighted score and the
#: true-weight (oracle) score; every other prefix is a label-free estimate of the true-weight score.
WEIGHTING_OF = {w.prefix: w.name for w in WEIGHTINGS}
#: What each prefix means, for legends and report text (``{f}`` = the family, e.g. BA).
PREFIX_LEGEND = {w.prefix: w.legend for w in WEIGHTINGS}


def is_measure(score: str) -> bool:
    """True for a score of a family the analyses know (a name ending in BA, F1 or AUC)."""
    return score.endswith(FAMILIES)


def split_measure(score: str) -> tuple[str, str]:
    """``"pBA"`` → (``"predicted"``, ``"BA"``); an unknown prefix names its own weighting."""
    prefix, family = parse_score(score)
    return WEIGHTING_OF.get(prefix, prefix), family


def legend_label(prefix: str, family: str = "BA") -> str:
    """Legend text explaining a short name, e.g. ``"cBA: label-free, class-conditional ..."``."""
    return PREFIX_LEGEND.get(prefix, f"{prefix}{{f}}: label-free estimator {prefix!r}").format(
        f=family
    )


def names_note(measures: Iterable[str]) -> str:
    """One line explaining the short names present (BA shown; F1 and AUC alike)."""
    prefixes = sorted({parse_score(m)[0] for m in measures}, key=prefix_key)
    return "Names: " + "; ".join(legend_label(p) for p in prefixes) + " (F1, AUC alike)."


def number(x: Any) -> float:
    """A record's value as a float: NaN where it is null (an undefined score)."""
    return math.nan if x is None else float(x)


def subset_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """Long table of every record's subset scores.

    Returns:
        columns ``collection, subconcepts, dataset, method, split, subset, subconcept, score,
        value``; ``subconcepts`` is ``"true"`` or ``"discovered"`` (where the subconcepts behind
        the label-free scores came from; records without the field are ``"true"``).
    """
    fields = ["subset", "subconcept", "score", "value"]
    rows = [
        (
            r.get("collection", r.get("source", "")),
            str(r.get("subconcepts", "true")),
            r["dataset"],
            r["method"],
            r["split"],
            *(s[k] for k in fields),
        )
        for r in records
        for s in r["subsets"]
    ]
    cols = ["collection", "subconcepts", "dataset", "method", "split", *fields]
    frame = pd.DataFrame(rows, columns=cols)
    frame["value"] = frame["value"].astype(float)
    return frame


def dataset_means(frame: pd.DataFrame) -> pd.DataFrame:
    """Average fold scores into one value per data set (docs/method.md,
    "Evaluation subsets and analyses" RQ1); NaN folds are skipped.

    Returns:
        columns ``collection, subconcepts, dataset, method, subset, score, value, n_splits``
        (``subconcepts`` only when the frame has it).
    """
    keys = ["collection", "subconcepts", "dataset", "method", "subset", "score"]
    keys = [k for k in keys if k in frame.columns]
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


def fmt(value: float, digits: int = 3, *, signed: bool = False) -> str:
    if value is None or not math.isfinite(value):
        return "–"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def collection_markdown(table: pd.DataFrame, heading: str, intro: str) -> list[str]:
    """Per collection: ``### {heading} — {collection}``, the ``intro`` line and its rows."""
    out = []
    for collection, part in table.groupby("collection", sort=True):
        out.append(f"### {heading} — {collection}\n")
        out.append(intro + "\n")
        out.append(markdown_table(part.drop(columns="collection")) + "\n")
    return out


def markdown_table(frame: pd.DataFrame) -> str:
    """A plain pipe table (no extra dependency); floats with 3 decimals."""
    cols = list(frame.columns)
    lines = ["| " + " | ".join(map(str, cols)) + " |", "|" + "---|" * len(cols)]
    for row in frame.itertuples(index=False):
        cells = [fmt(v) if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
