"""RQ2: does a better subconcept model give closer predicted weights? μ = mean_C |t̄_C − p̄_C|
per data set against the subconcept model's scores, Pearson r across data sets after dropping
|z| > 4 (docs/method.md, "Evaluation subsets and analyses")."""

from __future__ import annotations

from operator import itemgetter
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from medeval.analyses.common import collection_markdown, pearson

PERFORMANCE = {
    "auc_ovr_macro": "OvR macro ROC AUC",
    "balanced_accuracy": "balanced accuracy",
    "f1_macro": "macro F1",
}
Z_LIMIT = 4.0
_SUMS = itemgetter("subconcept", "n_test", "true_weight_sum", "predicted_weight_sum")


def weight_error_by_dataset(records: list[dict[str, Any]]) -> pd.DataFrame:
    """μ and subconcept-model performance per data set.

    Returns:
        columns ``collection, dataset, n_splits, n_subconcepts, mu`` + :data:`PERFORMANCE` keys.
    """
    # the subconcept forest is shared by all methods of a split: one record per split
    one: dict[tuple, dict] = {}
    for r in records:
        one.setdefault((r.get("collection", ""), r["dataset"], r["split"]), r)
    sc_rows, perf_rows = [], []
    for r in one.values():
        key = (r.get("collection", ""), r["dataset"])
        perf_rows.append((*key, r["split"], *(r["subconcept_model"][k] for k in PERFORMANCE)))
        sc_rows += [(*key, *_SUMS(s)) for s in r["per_subconcept"]]
    sc = pd.DataFrame(sc_rows, columns=["collection", "dataset", "subconcept", "n", "t", "p"])
    pooled = sc.groupby(["collection", "dataset", "subconcept"]).sum(numeric_only=True)
    pooled["gap"] = (pooled["t"] / pooled["n"] - pooled["p"] / pooled["n"]).abs()
    mu = pooled.groupby(["collection", "dataset"])["gap"].agg(mu="mean", n_subconcepts="count")
    perf = pd.DataFrame(perf_rows, columns=["collection", "dataset", "split", *PERFORMANCE])
    perf = perf.astype({k: float for k in PERFORMANCE})
    agg = perf.groupby(["collection", "dataset"]).agg(
        n_splits=("split", "count"), **{k: (k, "mean") for k in PERFORMANCE}
    )
    out = agg.join(mu).reset_index()
    return out[["collection", "dataset", "n_splits", "n_subconcepts", "mu", *PERFORMANCE]]


def _outliers(values: np.ndarray) -> np.ndarray:
    """(N,) bool |z| > 4 (population SD); nothing is an outlier when the SD is 0."""
    sd = np.nanstd(values)
    if not np.isfinite(sd) or sd == 0:
        return np.zeros(len(values), bool)
    return np.abs((values - np.nanmean(values)) / sd) > Z_LIMIT


def weight_error_table(per_dataset: pd.DataFrame) -> pd.DataFrame:
    """Pearson r between μ and each performance measure, per collection, after |z| > 4 removal.

    Returns:
        columns ``collection, performance, n_datasets, n_dropped, dropped, r, p``.
    """
    rows = []
    for collection, part in per_dataset.groupby("collection", sort=True):
        mu = part["mu"].to_numpy(float)
        for key in PERFORMANCE:
            perf = part[key].to_numpy(float)
            drop = _outliers(mu) | _outliers(perf)
            r, p, n = pearson(mu[~drop], perf[~drop])
            dropped = ",".join(part["dataset"][drop])
            rows.append([collection, key, n, int(drop.sum()), dropped, r, p])
    cols = ["collection", "performance", "n_datasets", "n_dropped", "dropped", "r", "p"]
    return pd.DataFrame(rows, columns=cols)


def weight_error_markdown(table: pd.DataFrame) -> str:
    intro = (
        "Pearson r between μ = mean_C |t̄_C − p̄_C| and the subconcept model's "
        "performance (data sets with |z| > 4 dropped):"
    )
    return "\n".join(collection_markdown(table, "RQ2", intro))


def weight_error_figure(per_dataset: pd.DataFrame, table: pd.DataFrame, collection: str) -> Figure:
    """Scatter of μ against each performance measure; dropped outliers drawn as crosses."""
    part = per_dataset[per_dataset.collection == collection]
    fig = Figure(figsize=(12, 3.8), layout="constrained")
    axes = fig.subplots(1, len(PERFORMANCE), sharey=True)
    mu = part["mu"].to_numpy(float)
    for ax, (key, label) in zip(axes, PERFORMANCE.items(), strict=True):
        perf = part[key].to_numpy(float)
        drop = _outliers(mu) | _outliers(perf)
        ax.scatter(perf[~drop], mu[~drop], s=18, color="#1f77b4")
        if drop.any():
            ax.scatter(
                perf[drop], mu[drop], s=30, marker="x", color="#d62728", label="|z| > 4 (dropped)"
            )
            ax.legend(fontsize=8)
        row = table[(table.collection == collection) & (table.performance == key)]
        r = float(row["r"].iloc[0]) if len(row) else float("nan")
        p = float(row["p"].iloc[0]) if len(row) else float("nan")
        ax.set_title(f"{label}: r = {r:.3f} (p = {p:.2g})", fontsize=10)
        ax.set_xlabel(f"subconcept model {label}")
    if len(mu) and np.all(mu[np.isfinite(mu)] > 0):
        axes[0].set_yscale("log")  # μ is in utility units, which span orders of magnitude
    axes[0].set_ylabel("μ = mean |t̄ − p̄| (weight units)")
    fig.suptitle(f"RQ2 — {collection}: predicted vs true weights and subconcept-model quality")
    return fig
