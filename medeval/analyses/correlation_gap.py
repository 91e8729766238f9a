"""RQ1: does M(full) track the largest minority subconcept? Per collection, method and measure,
the correlation gap r(full, largest) − r(full, smallest) across data sets (docs/method.md,
"Evaluation subsets and analyses")."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from medeval.analyses.common import (
    WEIGHTING_OF,
    is_measure,
    legend_label,
    markdown_table,
    names_note,
    pearson,
    split_measure,
)
from medeval.scores import FAMILIES, parse_score, prefix_key, score_key

#: The figure's panels, one per family, in alphabetical order (AUC, BA, F1).
PANELS = tuple(sorted(FAMILIES))

COLUMNS = [
    "collection",
    "subconcepts",
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
BAR_COLORS = {
    "unweighted": "#555555",
    "predicted": "#1f77b4",
    "class-conditional": "#ff7f0e",
    "rectified": "#9467bd",
    "true": "#2ca02c",
}
_OTHER_COLORS = ("#8c564b", "#e377c2", "#17becf", "#bcbd22")


def correlations(sub: pd.DataFrame) -> tuple[float, float, float, float, int]:
    """RQ1 correlations of one measure.

    Args:
        sub: one row per data set (or data set × method), columns ``full``, ``largest``,
            ``smallest`` (missing columns count as NaN).

    Returns:
        ``(r_largest, p_largest, r_smallest, p_smallest, n)``; the gap is r_largest − r_smallest.
    """
    full = sub.get("full", pd.Series(np.nan, index=sub.index)).to_numpy(float)
    r_l, p_l, n_l = pearson(full, sub.get("largest", np.nan * full))
    r_s, p_s, n_s = pearson(full, sub.get("smallest", np.nan * full))
    return r_l, p_l, r_s, p_s, min(n_l, n_s)


#: RQ1 is a correlation across data sets: undefined with fewer than this many.
MIN_DATASETS = 3


def pooled_gap(means: pd.DataFrame, measure: str) -> float:
    """Correlation gap of one measure over every (collection, data set, method) mean, pooled.

    With one correction method this is the RQ1 gap over data-set means; with several, each
    (data set, method) pair is one point of the correlation. Only collections with at least
    :data:`MIN_DATASETS` data sets count (RQ1 is undefined for the others, as in
    :func:`gap_table`): NaN when none has them, never a correlation across the correction
    methods of one or two data sets.

    Args:
        means: :func:`~medeval.analyses.common.dataset_means` output (any subset of its rows).
    """
    part = means[(means.score == measure) & means["value"].notna()]
    n_sets = part.groupby("collection")["dataset"].transform("nunique")
    part = part[n_sets >= MIN_DATASETS]
    if part.empty:
        return np.nan
    wide = part.pivot_table(
        index=["collection", "dataset", "method"], columns="subset", values="value"
    )
    r_l, _, r_s, _, _ = correlations(wide)
    return r_l - r_s


def measures_in(names) -> list[str]:
    """Distinct score names in display order (family, then "", w, p, c, r, others); names of
    other families (not BA, F1, AUC) are left out."""
    return sorted({n for n in names if is_measure(n)}, key=score_key)


def gap_table(means: pd.DataFrame) -> pd.DataFrame:
    """Correlations and gaps.

    Args:
        means: :func:`~medeval.analyses.common.dataset_means` output.

    Returns:
        one row per collection × method × measure (the nine paper measures and every
        label-free estimator present, e.g. cBA), columns :data:`COLUMNS`.
    """
    if "subconcepts" not in means.columns:
        means = means.assign(subconcepts="true")
    wide = means.pivot_table(
        index=["collection", "subconcepts", "method", "score", "dataset"],
        columns="subset",
        values="value",
    )
    rows = []
    for key, part in wide.groupby(level=["collection", "subconcepts", "method"]):
        for measure in measures_in(part.index.get_level_values("score")):
            r_l, p_l, r_s, p_s, n = correlations(part.xs(measure, level="score"))
            weighting, family = split_measure(measure)
            rows.append([*key, measure, family, weighting, n, r_l, p_l, r_s, p_s, r_l - r_s])
    return pd.DataFrame(rows, columns=COLUMNS)


def gap_markdown(table: pd.DataFrame) -> str:
    """Per collection: the gap per measure × method, then the full r / p table."""
    out = []
    for (collection, kind), part in table.groupby(["collection", "subconcepts"], sort=True):
        n = int(part["n_datasets"].max()) if len(part) else 0
        what = collection if kind == "true" else f"{collection}, {kind} subconcepts"
        out.append(f"### RQ1 — {what} ({n} data sets)\n")
        out.append("Correlation gap r(full, largest) − r(full, smallest):\n")
        gap = part.pivot(index="measure", columns="method", values="gap")
        gap = gap.reindex(measures_in(gap.index)).reset_index()
        out.append(markdown_table(gap) + "\n")
        out.append(names_note(part["measure"]) + "\n")
        out.append("Pearson r (p) per method and measure:\n")
        detail = part.assign(
            r_largest=[_r_p(r, p) for r, p in zip(part.r_largest, part.p_largest, strict=True)],
            r_smallest=[_r_p(r, p) for r, p in zip(part.r_smallest, part.p_smallest, strict=True)],
        )[["method", "measure", "n_datasets", "r_largest", "r_smallest", "gap"]]
        out.append(markdown_table(detail) + "\n")
    return "\n".join(out)


def _r_p(r: float, p: float) -> str:
    return "–" if not np.isfinite(r) else f"{r:.3f} ({p:.2g})"


def gap_figure(table: pd.DataFrame, collection: str) -> Figure:
    """Gap bars: panels AUC / BA / F1; per method, one bar per weighting present (unweighted,
    true, predicted, class-conditional, rectified, ...); the legend explains the names."""
    part = table[table.collection == collection]
    if part["subconcepts"].nunique() > 1:  # records of both kinds: one bar group per kind
        part = part.assign(method=part["method"] + " (" + part["subconcepts"] + ")")
    methods = list(dict.fromkeys(part["method"]))
    prefixes = sorted({parse_score(m)[0] for m in part["measure"]}, key=prefix_key)
    fig = Figure(figsize=(4 + 0.55 * len(prefixes) * len(methods), 4.2), layout="constrained")
    axes = fig.subplots(1, len(PANELS), sharey=True)
    x = np.arange(len(methods))
    width = 0.8 / max(len(prefixes), 1)
    extra = iter(_OTHER_COLORS * 4)
    colors = {p: BAR_COLORS.get(WEIGHTING_OF.get(p, ""), None) or next(extra) for p in prefixes}
    for ax, family in zip(axes, PANELS, strict=True):
        for j, prefix in enumerate(prefixes):
            sel = part[part.measure == prefix + family]
            values = sel.set_index("method")["gap"].reindex(methods).to_numpy(float)
            offset = (j - (len(prefixes) - 1) / 2) * width
            ax.bar(x + offset, values, width, color=colors[prefix], label=legend_label(prefix))
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xticks(x, methods, rotation=30)
        ax.set_title(family)
    axes[0].set_ylabel("r(full, largest) − r(full, smallest)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(
        handles,
        labels,
        title="weights (BA shown; F1, AUC alike)",
        fontsize=8,
        ncols=2,
        loc="outside lower center",
    )
    n = int(part["n_datasets"].max()) if len(part) else 0
    kinds = sorted(part["subconcepts"].unique())
    what = collection if kinds == ["true"] else f"{collection}, {' + '.join(kinds)} subconcepts"
    fig.suptitle(f"RQ1 correlation gap — {what} ({n} data sets)")
    return fig
