"""Per-subconcept figure: where a headline score comes from (SPEC §6, RQ3).

Uses matplotlib's object-oriented API (no pyplot), so it works without a display and without
touching global state.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

CLASS_COLORS = {0: "#7f8fa6", 1: "#e1812c"}
LINE_STYLES = {
    "": ("black", "-", "unweighted"),
    "p": ("#1f77b4", "--", "predicted weights"),
    "w": ("#2ca02c", ":", "true weights"),
}


def subconcept_figure(
    per_subconcept: pd.DataFrame,
    scores: Mapping[str, float],
    *,
    metric: str = "BA",
    title: str | None = None,
) -> Figure:
    """Bars of subconcept prevalence and per-subconcept recall; lines for the full-test scores.

    Args:
        per_subconcept: rows with ``subconcept, class, prevalence, recall`` and optionally
            ``low, high`` (recall interval), majority first.
        scores: full-test scores, e.g. ``{"BA": .., "pBA": .., "wBA": ..}``; missing/NaN
            variants are left out.
        metric: which score family to draw as lines (``"BA"``, ``"F1"`` or ``"AUC"``).
    """
    df = per_subconcept.reset_index(drop=True)
    fig = Figure(figsize=(max(6.0, 0.8 * len(df) + 2) + 3.2, 6.2), layout="constrained")
    ax_prev, ax_rec = fig.subplots(2, 1, sharex=True, height_ratios=(1, 1.6))
    x = np.arange(len(df))
    colors = [CLASS_COLORS.get(int(c), "grey") for c in df["class"]]
    ax_prev.bar(x, df["prevalence"], color=colors)
    ax_prev.set_ylabel("share of its class\nin the test set")
    ax_prev.set_ylim(0, 1)
    for xi, p in zip(x, df["prevalence"], strict=True):
        if not math.isnan(p):
            ax_prev.text(xi, p + 0.02, f"{p:.0%}", ha="center", va="bottom", fontsize=8)
    rec = df["recall"].to_numpy(dtype=float)
    err = None
    if {"low", "high"} <= set(df.columns) and df[["low", "high"]].notna().all().all():
        err = np.vstack([rec - df["low"].to_numpy(float), df["high"].to_numpy(float) - rec])
        err = np.clip(err, 0, None)
    ax_rec.bar(x, rec, color=colors, yerr=err, capsize=3, ecolor="#444444")
    for key, (color, style, label) in LINE_STYLES.items():
        value = scores.get(f"{key}{metric}")
        if value is not None and not math.isnan(value):
            ax_rec.axhline(
                value,
                color=color,
                linestyle=style,
                linewidth=1.8,
                label=f"{key}{metric} ({label}) = {value:.3f}",
            )
    ax_rec.set_ylim(0, 1.05)
    ax_rec.set_ylabel("recall of the subconcept")
    ax_rec.set_xticks(x, [str(s) for s in df["subconcept"]], rotation=30, ha="right")
    handles, labels = ax_rec.get_legend_handles_labels()
    from matplotlib.patches import Patch

    handles += [Patch(color=CLASS_COLORS[0]), Patch(color=CLASS_COLORS[1])]
    labels += ["majority (class 0) subconcept", "minority (class 1) subconcept"]
    ax_rec.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    fig.suptitle(title or f"Per-subconcept recall and the full-test {metric} variants")
    return fig


def figure_png(fig: Figure, dpi: int = 120) -> bytes:
    """The figure as PNG bytes (for atomic writes and HTML embedding)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()
