"""Data sets whose label-free scores rest on a weak subconcept model: the records' mean
within-class balanced accuracy below :data:`medeval.scores.WEAK_WITHIN_CLASS_BA` in a class
whose subconcepts differ in utility (docs/benchmark.md)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from medeval.scores import WEAK_WITHIN_CLASS_BA

__all__ = [
    "QUALITY_COLUMNS",
    "dataset_key",
    "subconcept_model_quality",
    "weak_datasets",
    "weak_markdown",
    "weighted_classes",
]

DATASET_KEYS = ["subconcepts", "collection", "dataset"]
QUALITY_COLUMNS = [*DATASET_KEYS, "class", "within_class_ba", "min_within_class_ba", "n_records"]


def dataset_key(record: dict[str, Any]) -> tuple[str, str, str]:
    """``(subconcepts, collection, dataset)`` of a record (the flag's unit)."""
    return (
        str(record.get("subconcepts", "true")),
        str(record.get("collection", record.get("source", ""))),
        str(record["dataset"]),
    )


def weighted_classes(record: dict[str, Any]) -> list[str]:
    """Classes (``"class 0"``, ``"class 1"``) whose subconcepts differ in utility in the record's
    per-subconcept table; ``["class 1"]`` (the minority class) when the table does not say."""
    rows = record.get("per_subconcept") or []
    utilities: dict[int, set[float]] = {}
    for row in rows:
        if row.get("class") is None or row.get("utility") is None:
            return ["class 1"]
        utilities.setdefault(int(row["class"]), set()).add(float(row["utility"]))
    if not utilities:
        return ["class 1"]
    return [f"class {c}" for c in sorted(utilities) if len(utilities[c]) > 1]


def subconcept_model_quality(records: list[dict[str, Any]]) -> pd.DataFrame:
    """Per data set and weighted class: the subconcept model's within-class balanced accuracy
    averaged over the data set's records (and its minimum), columns :data:`QUALITY_COLUMNS`
    plus ``weak`` (mean below :data:`~medeval.scores.WEAK_WITHIN_CLASS_BA`). Records without
    the stored accuracy are left out."""
    rows = []
    for r in records:
        within = r.get("subconcept_model_within_class") or {}
        for c in weighted_classes(r):
            v = within.get(c)
            if v is not None and math.isfinite(float(v)):
                rows.append((*dataset_key(r), c, float(v)))
    frame = pd.DataFrame(rows, columns=[*DATASET_KEYS, "class", "value"])
    if frame.empty:
        return pd.DataFrame(columns=[*QUALITY_COLUMNS, "weak"]).astype({"weak": bool})
    out = (
        frame.groupby([*DATASET_KEYS, "class"], sort=True)["value"]
        .agg(within_class_ba="mean", min_within_class_ba="min", n_records="count")
        .reset_index()
    )
    out["weak"] = out["within_class_ba"] < WEAK_WITHIN_CLASS_BA
    return out


def weak_datasets(quality: pd.DataFrame) -> set[tuple[str, str, str]]:
    """``(subconcepts, collection, dataset)`` of the flagged data sets."""
    weak = quality[quality["weak"]]
    return set(zip(weak.subconcepts, weak.collection, weak.dataset, strict=True))


def weak_markdown(quality: pd.DataFrame) -> str:
    """The flagged data sets, one line each, or a line saying none is flagged."""
    head = (
        f"Subconcept model within a class whose subconcepts differ in utility, within-class "
        f"balanced accuracy averaged over a data set's records; below {WEAK_WITHIN_CLASS_BA} "
        "it is flagged **weak**: the label-free scores (cM, pM) rest on its posteriors and "
        "carry its error, which their test-set interval cannot see (the rectified rM measures "
        "it on reference rows)."
    )
    weak = quality[quality["weak"]] if len(quality) else quality
    if quality.empty:
        return head + "\n\nNo record stores the subconcept model's within-class accuracy.\n"
    if weak.empty:
        return head + "\n\nNo data set is flagged weak.\n"
    lines = [head, ""]
    for row in weak.itertuples(index=False):
        kind = "" if row.subconcepts == "true" else f" ({row.subconcepts} subconcepts)"
        lines.append(
            f"- **weak subconcept model**: {row.dataset}{kind}, {row[3]}: within-class BA "
            f"{row.within_class_ba:.3f} (lowest fold {row.min_within_class_ba:.3f}, "
            f"{row.n_records} records)"
        )
    return "\n".join(lines) + "\n"
