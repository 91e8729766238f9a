"""RQ1 — are full-test scores biased toward the largest minority subconcept? (SPEC §6)

Across the data sets of a collection, per correction method and measure: Pearson r between
M(full) and M(largest), and between M(full) and M(smallest); the *correlation gap*
r_largest − r_smallest (positive: the full score tracks the largest subconcept).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from medeval.analyses.common import FAMILIES, markdown_table, pearson, split_measure
from medeval.evaluation import SCORES

COLUMNS = [
    "collection",
    "method",
    "measure",
    "family",
    "weighting",
    "n_datasets",
    "r_largest",
    "p_largest",
    "r_smallest",
    "p_smallest",
    "gap",
]
BAR_COLORS = {"unweighted": "#555555", "predicted": "#1f77b4", "true": "#2ca02c"}


def rq1_table(means: pd.DataFrame) -> pd.DataFrame:
    """Correlations and gaps.

    Args:
        means: :func:`~medeval.analyses.common.dataset_means` output.

    Returns:
        one row per collection × method × measure (nine measures), columns :data:`COLUMNS`.
    """
    wide = means.pivot_table(
        index=["collection", "method", "score", "dataset"], columns="subset", values="value"
    )
    rows = []
    for (collection, method), part in wide.groupby(level=["collection", "method"]):
        for measure in SCORES:
            if measure not in part.index.get_level_values("score"):
                continue
            sub = part.xs(measure, level="score")
            full = sub.get("full", pd.Series(np.nan, index=sub.index)).to_numpy()
            r_l, p_l, n_l = pearson(full, sub.get("largest", np.nan * full))
            r_s, p_s, n_s = pearson(full, sub.get("smallest", np.nan * full))
            weighting, family = split_measure(measure)
            rows.append(
                [
                    collection,
                    method,
                    measure,
                    family,
                    weighting,
                    min(n_l, n_s),
                    r_l,
                    p_l,
                    r_s,
                    p_s,
                    r_l - r_s,
                ]
            )
    return pd.DataFrame(rows, columns=COLUMNS)


def rq1_markdown(table: pd.DataFrame) -> str:
    """Per collection: the gap per measure × method, then the full r / p table."""
    out = []
    for collection, part in table.groupby("collection", sort=True):
        n = int(part["n_datasets"].max()) if len(part) else 0
        out.append(f"### RQ1 — {collection} ({n} data sets)\n")
        out.append("Correlation gap r(full, largest) − r(full, smallest):\n")
        gap = part.pivot(index="measure", columns="method", values="gap")
        gap = gap.reindex([s for s in SCORES if s in gap.index]).reset_index()
        out.append(markdown_table(gap) + "\n")
        out.append("Pearson r (p) per method and measure:\n")
        detail = part.assign(
            r_largest=[_r_p(r, p) for r, p in zip(part.r_largest, part.p_largest, strict=True)],
            r_smallest=[_r_p(r, p) for r, p in zip(part.r_smallest, part.p_smallest, strict=True)],
        )[["method", "measure", "n_datasets", "r_largest", "r_smallest", "gap"]]
        out.append(markdown_table(detail) + "\n")
    return "\n".join(out)


def _r_p(r: float, p: float) -> str:
    return "–" if not np.isfinite(r) else f"{r:.3f} ({p:.2g})"


def rq1_figure(table: pd.DataFrame, collection: str) -> Figure:
    """Gap bars: panels AUC / BA / F1; per method, bars unweighted / predicted / true."""
    part = table[table.collection == collection]
    methods = list(dict.fromkeys(part["method"]))
    fig = Figure(figsize=(4 + 1.6 * len(methods), 3.6), layout="constrained")
    axes = fig.subplots(1, len(FAMILIES), sharey=True)
    x = np.arange(len(methods))
    width = 0.27
    for ax, family in zip(axes, FAMILIES, strict=True):
        for j, weighting in enumerate(BAR_COLORS):
            sel = part[(part.family == family) & (part.weighting == weighting)]
            values = sel.set_index("method")["gap"].reindex(methods).to_numpy(float)
            ax.bar(x + (j - 1) * width, values, width, color=BAR_COLORS[weighting], label=weighting)
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xticks(x, methods, rotation=30)
        ax.set_title(family)
    axes[0].set_ylabel("r(full, largest) − r(full, smallest)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, title="weights", fontsize=8, ncols=3, loc="outside lower center")
    n = int(part["n_datasets"].max()) if len(part) else 0
    fig.suptitle(f"RQ1 correlation gap — {collection} ({n} data sets)")
    return fig
