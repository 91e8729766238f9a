"""Do the label-free per-subconcept recalls hold the true test recall? (docs/method.md,
"Per-subconcept recall"; columns: docs/benchmark.md, "Per-subconcept recall".)"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from medeval.analyses.common import markdown_table
from medeval.analyses.quality import DATASET_KEYS, dataset_key
from medeval.evaluation.subconcept_recall import BOUNDS

__all__ = [
    "AGREEMENT_COLUMNS",
    "ESTIMATORS",
    "subconcept_agreement",
    "subconcept_agreement_markdown",
    "subconcept_rows",
]

#: Estimator → (point, low, high) columns of a record's per-subconcept rows.
ESTIMATORS = {k: (k, *BOUNDS[k]) for k in ("est_recall", "r_recall")}
GROUPS = ("all", "minority", "smallest minority")
AGREEMENT_COLUMNS = [
    "method",
    "estimator",
    "group",
    "n",
    "coverage_pct",
    "bias",
    "mae",
    "mean_width",
    "worst_named_pct",
]


def _f(x: Any) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def subconcept_rows(records: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per record × subconcept with a true test recall: the record's keys
    (:data:`~medeval.analyses.quality.DATASET_KEYS`, method, split), the subconcept, its class,
    whether it is the record's smallest minority subconcept (by training size), the true recall
    and each estimator's point and bounds."""
    out = []
    for rec in records:
        rows = [r for r in rec.get("per_subconcept") or [] if math.isfinite(_f(r.get("recall")))]
        minority = [r for r in rows if int(r["class"]) == 1]
        smallest = (
            min(minority, key=lambda r: (_f(r.get("n_train")), str(r["subconcept"])))["subconcept"]
            if minority
            else None
        )
        keys = dict(zip(DATASET_KEYS, dataset_key(rec), strict=True))
        keys |= {"method": rec.get("method", ""), "split": rec.get("split")}
        for r in rows:
            row = keys | {
                "subconcept": r["subconcept"],
                "class": int(r["class"]),
                "smallest": r["subconcept"] == smallest,
                "recall": _f(r["recall"]),
            }
            for cols in ESTIMATORS.values():
                row |= {c: _f(r.get(c)) for c in cols}
            out.append(row)
    return pd.DataFrame(out)


def _worst_named(frame: pd.DataFrame, point: str) -> float:
    """% of minority classes (≥ 2 subconcepts) whose lowest ``point`` is the truly worst one."""
    hits = []
    keys = [*DATASET_KEYS, "method", "split"]
    for _, g in frame[frame["class"] == 1].groupby(keys, dropna=False):
        g = g[np.isfinite(g[point])]
        if len(g) < 2:
            continue
        truth = g["recall"].to_numpy()
        picked = int(np.argmin(g[point].to_numpy()))
        hits.append(truth[picked] <= truth.min() + 1e-12)
    return 100.0 * float(np.mean(hits)) if hits else math.nan


def _stats(g: pd.DataFrame, estimator: str, whole: pd.DataFrame) -> dict[str, float]:
    point, lo, hi = ESTIMATORS[estimator]
    g = g[np.isfinite(g[point])]
    err = g[point] - g["recall"]
    ok = np.isfinite(g[lo]) & np.isfinite(g[hi])
    covered = (g[lo] <= g["recall"] + 1e-12) & (g["recall"] <= g[hi] + 1e-12)
    return {
        "n": len(g),
        "coverage_pct": 100.0 * float(covered[ok].mean()) if ok.any() else math.nan,
        "bias": float(err.mean()) if len(g) else math.nan,
        "mae": float(err.abs().mean()) if len(g) else math.nan,
        "mean_width": float((g[hi] - g[lo])[ok].mean()) if ok.any() else math.nan,
        "worst_named_pct": _worst_named(whole, point),
    }


def subconcept_agreement(
    records: list[dict[str, Any]], *, by_dataset: bool = False
) -> pd.DataFrame:
    """The agreement table (:data:`AGREEMENT_COLUMNS`; with ``by_dataset`` the data set's keys
    first), one row per correction method × estimator × group; estimators without any value in
    the records (no reference rows: no ``r_recall``) are left out."""
    rows = subconcept_rows(records)
    cols = ([*DATASET_KEYS] if by_dataset else []) + AGREEMENT_COLUMNS
    if rows.empty:
        return pd.DataFrame(columns=cols)
    keys = [*DATASET_KEYS, "method"] if by_dataset else ["method"]
    out = []
    for key, whole in rows.groupby(keys, sort=True):
        for estimator, (point, _, _) in ESTIMATORS.items():
            if not np.isfinite(whole[point]).any():
                continue
            parts = [whole, whole[whole["class"] == 1], whole[whole["smallest"]]]
            for group, g in zip(GROUPS, parts, strict=True):
                head = dict(zip(keys, key, strict=True))
                out.append(
                    head | {"estimator": estimator, "group": group} | _stats(g, estimator, whole)
                )
    return pd.DataFrame(out, columns=cols)


def subconcept_agreement_markdown(table: pd.DataFrame) -> str:
    """The summary's section: the reading and the table."""
    if table.empty:
        return ""
    return "\n".join(
        [
            "### Per-subconcept recall: do the label-free recalls hold the true test recall?\n",
            "est_recall weights each test row by the subconcept model's class-renormalised "
            "posterior; r_recall corrects it by its error on the reference rows. coverage: % "
            "of intervals holding the true test recall; worst_named_pct: % of folds whose "
            "lowest minority-class recall by the estimator is the truly lowest subconcept.",
            "",
            markdown_table(table),
            "",
        ]
    )
