"""The decision a user takes from the per-subconcept recalls: the worst subconcept of each
class and its gap below the class's recall, each with an interval from the same bootstrap
replicates (docs/method.md, "Per-subconcept recall"), in words and shaped like fairlearn's
``MetricFrame`` (:class:`SubconceptRecall`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from medeval.evaluation.subconcept_recall import (
    BOUNDS,
    SOURCES,
    WORST_FIELDS,
    percentile_bounds,
    recommended_column,
    source_of,
)

__all__ = [
    "SOURCES",
    "SubconceptRecall",
    "describe_worst",
    "subconcept_recall_frame",
    "worst_sentences",
    "worst_subconcepts",
]


def worst_subconcepts(
    table: pd.DataFrame,
    class_recall: dict[int, float],
    reps: dict[str, np.ndarray | None],
    class_reps: np.ndarray | None,
    *,
    confidence: float,
) -> list[dict[str, Any]]:
    """One entry per class with subconcepts: the subconcept of lowest recommended recall, its
    recall and interval (the table's), and its ``gap`` below the class's recall
    (``class recall − recall``; positive = worse than the class) with a percentile interval
    from the same replicates (``reps``: ``{column: (B, S)}`` in table order of
    ``table.subconcept``; ``class_reps``: ``(B, 2)`` class recalls)."""
    col = recommended_column(table)
    if col is None:
        return []
    lo_col, hi_col = BOUNDS[col]
    values = pd.to_numeric(table[col], errors="coerce").to_numpy(dtype=float)
    out = []
    for c in (0, 1):
        idx = [i for i in np.flatnonzero(table["class"].to_numpy() == c) if np.isfinite(values[i])]
        if not idx:
            continue
        i = min(idx, key=lambda j: (values[j], str(table.subconcept.iloc[j])))
        gap = class_recall[c] - values[i]
        g_lo = g_hi = math.nan
        r = reps.get(col)
        if r is not None and class_reps is not None and len(r):
            g_lo, g_hi = percentile_bounds((class_reps[:, c] - r[:, i])[:, None], confidence)
            g_lo, g_hi = float(g_lo[0]), float(g_hi[0])
        out.append(
            {
                "class": c,
                "subconcept": str(table.subconcept.iloc[i]),
                "recall": float(values[i]),
                "low": _num(table[lo_col].iloc[i]),
                "high": _num(table[hi_col].iloc[i]),
                "gap": float(gap),
                "gap_low": g_lo,
                "gap_high": g_hi,
                "source": source_of(col),
                "class_recall": float(class_recall[c]),
            }
        )
    return out


def _num(x: Any) -> float:
    v = pd.to_numeric(x, errors="coerce")
    return float(v) if pd.notna(v) else math.nan


def describe_worst(entry: dict[str, Any], class_names: dict[int, str] | None = None) -> str:
    """One sentence: ``"dermatofibroma: recall 0.46 [0.33, 0.60], 0.26 below class 0 as a
    whole (true recall)"``."""
    name = (class_names or {}).get(entry["class"], f"class {entry['class']}")
    ci = ""
    if math.isfinite(entry.get("low", math.nan)) and math.isfinite(entry.get("high", math.nan)):
        ci = f" [{entry['low']:.2f}, {entry['high']:.2f}]"
    gap = entry["gap"]
    where = f"{abs(gap):.2f} {'below' if gap >= 0 else 'above'} {name} as a whole"
    if math.isfinite(entry.get("gap_low", math.nan)):
        where += f" (gap [{entry['gap_low']:.2f}, {entry['gap_high']:.2f}])"
    what = {"true": "true recall", "rectified": "rectified", "label-free": "label-free"}
    return (
        f"{entry['subconcept']}: recall {entry['recall']:.2f}{ci}, {where}; "
        f"{what.get(entry['source'], entry['source'])}"
    )


def worst_sentences(
    worst: list[dict[str, Any]], class_names: dict[int, str] | None = None
) -> list[str]:
    """The decision in words, class 1 first: ``"worst subconcept of class 1 — e: recall 0.31
    [0.14, 0.52], 0.51 below class 1 as a whole (gap [0.34, 0.68]); true recall"``, and a
    caveat line where the recall is the label-free one."""
    out = []
    for w in sorted(worst, key=lambda w: -w["class"]):
        name = (class_names or {}).get(w["class"], f"class {w['class']}")
        out.append(f"worst subconcept of {name} — {describe_worst(w, class_names)}")
    if any(w["source"] == "label-free" for w in worst):
        out.append(
            "label-free per-subconcept recall: it shrinks toward the class's recall where the "
            "subconcept model is unsure, and its interval does not see that; reference rows "
            "(--reference) give the rectified recall"
        )
    return out


@dataclass(frozen=True)
class SubconceptRecall:
    """Per-subconcept recall shaped like fairlearn's ``MetricFrame``.

    Attributes:
        overall: ``{class: recall}`` of each class on the test set (a Series indexed 0, 1).
        by_group: one row per subconcept (index), columns ``class, recall, low, high, source``
            — the recommended recall (:func:`recommended_column`) and its interval.
        worst: one row per class: :data:`WORST_FIELDS`.
    """

    overall: pd.Series
    by_group: pd.DataFrame
    worst: pd.DataFrame

    def group_min(self) -> pd.Series:
        """The lowest recommended recall of each class (indexed by class)."""
        return self.worst.set_index("class")["recall"]

    def difference(self) -> pd.Series:
        """Each class's recall minus its worst subconcept's (indexed by class)."""
        return self.worst.set_index("class")["gap"]


def subconcept_recall_frame(
    table: pd.DataFrame, class_recall: dict[int, float], worst: list[dict[str, Any]]
) -> SubconceptRecall:
    """:class:`SubconceptRecall` from an evaluation's per-subconcept table."""
    col = recommended_column(table)
    if col is None:
        by = pd.DataFrame(columns=["class", "recall", "low", "high", "source"])
    else:
        lo, hi = BOUNDS[col]
        by = pd.DataFrame(
            {
                "class": table["class"].to_numpy(),
                "recall": pd.to_numeric(table[col], errors="coerce").to_numpy(dtype=float),
                "low": pd.to_numeric(table[lo], errors="coerce").to_numpy(dtype=float),
                "high": pd.to_numeric(table[hi], errors="coerce").to_numpy(dtype=float),
                "source": source_of(col),
            },
            index=pd.Index(table.subconcept.astype(str), name="subconcept"),
        )
    overall = pd.Series(class_recall, name="recall", dtype=float)
    overall.index.name = "class"
    return SubconceptRecall(
        overall=overall, by_group=by, worst=pd.DataFrame(worst, columns=list(WORST_FIELDS))
    )
