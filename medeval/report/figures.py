"""Per-subconcept figure: where a headline score comes from (SPEC §6, RQ3).

Uses matplotlib's object-oriented API (no pyplot), so it works without a display and without
touching global state.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

CLASS_COLORS = {0: "#7f8fa6", 1: "#e1812c"}
LINE_STYLES = {
    "": ("black", "-", "unweighted"),
    "p": ("#1f77b4", "--", "predicted weights, paper"),
    "c": ("#d62728", "-.", "label-free, class-conditional: recommended"),
    "w": ("#2ca02c", ":", "true weights, oracle"),
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
            ``low, high`` (recall interval) and the label-free ``est_recall, est_low,
            est_high, est_n_test`` (drawn hatched beside the true recall), majority first.
        scores: full-test scores, e.g. ``{"BA": .., "pBA": .., "wBA": ..}``; missing/NaN
            variants are left out.
        metric: which score family to draw as lines (``"BA"``, ``"F1"`` or ``"AUC"``).
    """
    df = per_subconcept.reset_index(drop=True)
    fig = Figure(figsize=(max(6.0, 0.9 * len(df) + 2) + 3.6, 6.2), layout="constrained")
    ax_prev, ax_rec = fig.subplots(2, 1, sharex=True, height_ratios=(1, 1.6))
    x = np.arange(len(df))
    colors = [CLASS_COLORS.get(int(c), "grey") for c in df["class"]]
    _prevalence_bars(ax_prev, df, x, colors)
    has_true, has_est = _recall_bars(ax_rec, df, x, colors)
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
    _legend(ax_rec, has_true=has_true, has_est=has_est)
    fig.suptitle(title or f"Per-subconcept recall and the full-test {metric} variants")
    return fig


def _prevalence_bars(ax: Any, df: pd.DataFrame, x: np.ndarray, colors: list[str]) -> None:
    """Top panel: each subconcept's share of its class (true, else the posteriors' soft share)."""
    prev = df["prevalence"].to_numpy(dtype=float)
    estimated_prev = np.isnan(prev).all() and "est_n_test" in df.columns
    if estimated_prev:  # no true test subconcepts: the soft (posterior) share of its class
        mass = df["est_n_test"].to_numpy(dtype=float)
        totals = df.groupby("class")["est_n_test"].transform("sum").to_numpy(dtype=float)
        prev = mass / np.where(totals > 0, totals, np.nan)
    ax.bar(x, prev, color=colors, hatch="//" if estimated_prev else None)
    ax.set_ylabel(
        "estimated share of its\nclass (posteriors)"
        if estimated_prev
        else "share of its class\nin the test set"
    )
    ax.set_ylim(0, 1)
    for xi, p in zip(x, prev, strict=True):
        if not math.isnan(p):
            ax.text(xi, p + 0.02, f"{p:.0%}", ha="center", va="bottom", fontsize=8)


def _recall_bars(ax: Any, df: pd.DataFrame, x: np.ndarray, colors: list[str]) -> tuple[bool, bool]:
    """Bottom panel's bars: true recall (solid) and label-free recall (hatched), side by side
    when both exist; returns which of the two were drawn."""
    has_true = df["recall"].notna().any()
    has_est = "est_recall" in df.columns and df["est_recall"].notna().any()
    width = 0.4 if has_true and has_est else 0.8
    if has_true:
        xt = x - width / 2 if has_est else x
        ax.bar(
            xt,
            df["recall"].to_numpy(float),
            width,
            color=colors,
            yerr=_err(df, "recall", "low", "high"),
            capsize=3,
            ecolor="#444444",
        )
    if has_est:
        xe = x + width / 2 if has_true else x
        ax.bar(
            xe,
            df["est_recall"].to_numpy(float),
            width,
            color=colors,
            alpha=0.55,
            hatch="//",
            edgecolor="#333333",
            linewidth=0.5,
            yerr=_err(df, "est_recall", "est_low", "est_high"),
            capsize=3,
            ecolor="#444444",
        )
    return bool(has_true), bool(has_est)


def _legend(ax: Any, *, has_true: bool, has_est: bool) -> None:
    """The score lines, the class colours and the two kinds of recall bar, right of the plot."""
    from matplotlib.patches import Patch

    handles, labels = ax.get_legend_handles_labels()
    handles += [Patch(color=CLASS_COLORS[0]), Patch(color=CLASS_COLORS[1])]
    labels += ["majority (class 0) subconcept", "minority (class 1) subconcept"]
    if has_true:
        handles.append(Patch(facecolor="#bbbbbb"))
        labels.append("recall, true test subconcepts")
    if has_est:
        handles.append(Patch(facecolor="#dddddd", hatch="//", edgecolor="#333333"))
        labels.append("recall, label-free estimate (posteriors)")
    ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)


def _err(df: pd.DataFrame, value: str, low: str, high: str) -> np.ndarray | None:
    """(2, S) error-bar lengths from an interval, or None where any bound is missing."""
    if not {low, high} <= set(df.columns) or df[[low, high]].isna().any().any():
        return None
    v = df[value].to_numpy(float)
    return np.clip(np.vstack([v - df[low].to_numpy(float), df[high].to_numpy(float) - v]), 0, None)


def figure_png(fig: Figure, dpi: int = 120) -> bytes:
    """The figure as PNG bytes (for atomic writes and HTML embedding)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()
